// --set errors name the --set, not the config file, and are usage errors;
// "did you mean" hints know abbreviations.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>

#include "bagel/config.h"
#include "bagel/error.h"
#include "bagel/json_reader.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

class ConfigFile {
 public:
  ConfigFile() {
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("bagel-overrides-" + std::to_string(rd()) + ".json");
    std::ofstream(path_) << R"({"train": {"features": "a.svm"}, "optimizer": {"epochs": 2}})";
  }
  ~ConfigFile() { fs::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

// The UsageError loading with `overrides` throws ("" if another or none).
std::string usage_error(const ConfigFile& file, const std::vector<std::string>& overrides) {
  try {
    load_train_config(file.path(), overrides);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected a UsageError, got: " << e.what();
  }
  return "";
}

TEST(Overrides, AnUnknownKeyNamesTheSetAndTheNearestKeyOfItsSection) {
  const ConfigFile file;
  EXPECT_EQ(usage_error(file, {"optimizer.lr=0.01"}),
            "--set optimizer.lr=0.01: unknown key 'lr'; did you mean 'learning_rate'?");
}

TEST(Overrides, ABadValueNamesTheSetThatGaveIt) {
  const ConfigFile file;
  const std::string msg = usage_error(file, {"optimizer.epochs=3", "optimizer.epochs=abc"});
  EXPECT_EQ(msg.rfind("--set optimizer.epochs=abc: expected an integer", 0), 0u) << msg;
  EXPECT_EQ(msg.find(file.path()), std::string::npos) << msg;
}

TEST(Overrides, AMalformedSetIsAUsageError) {
  const ConfigFile file;
  EXPECT_EQ(usage_error(file, {"optimizer"}).rfind("--set optimizer: expected KEY.PATH=VALUE", 0), 0u);
  EXPECT_NE(usage_error(file, {"optimizer.epochs.x=1"}).find("--set optimizer.epochs.x=1"),
            std::string::npos);
}

TEST(Overrides, AnErrorInTheFileItselfStillNamesTheFile) {
  ConfigFile file;
  std::ofstream(file.path()) << R"({"train": {"features": "a.svm"}, "optimizer": {"epoch": 2}})";
  try {
    load_train_config(file.path(), {"optimizer.learning_rate=0.5"});
    FAIL() << "expected an error";
  } catch (const UsageError& e) {
    FAIL() << "not a usage error: " << e.what();
  } catch (const FileError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file.path() + ": optimizer.epoch: unknown key 'epoch'", 0), 0u) << msg;
  }
}

TEST(NearestKey, AbbreviationsBeforeEditDistance) {
  const std::set<std::string> keys = {"epochs", "learning_rate", "l1", "l2", "batch_size",
                                      "min_delta"};
  EXPECT_EQ(nearest_key("lr", keys), "learning_rate");  // not l1, one edit away
  EXPECT_EQ(nearest_key("bs", keys), "batch_size");
  EXPECT_EQ(nearest_key("epoch", keys), "epochs");
  EXPECT_EQ(nearest_key("learning", keys), "learning_rate");
  EXPECT_EQ(nearest_key("l3", keys), "l1");
  EXPECT_EQ(nearest_key("momentum", keys), "");
}

}  // namespace
}  // namespace bagel
