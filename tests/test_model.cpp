// The model directory: a bit-exact round trip, written atomically without
// ever removing a file bagel did not write, and load errors that name the
// file at fault.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <thread>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "bagel/error.h"
#include "bagel/labels.h"
#include "bagel/model.h"
#include "bagel/model_dir.h"
#include "bagel/model_dir_claim.h"
#include "bagel/npy.h"
#include "temp_dir.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

Model random_model(std::vector<std::string> classes, Index features, unsigned seed) {
  Model m = Model::zeros(std::move(classes), false, features);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& w : m.weight) w = normal(rng);
  for (float& b : m.bias) b = normal(rng);
  // Values whose decimal printing would not round-trip in a text format.
  m.weight[0] = 0.1f;
  m.weight[1] = 1.0f / 3.0f;
  m.weight[2] = -0.0f;
  m.weight[3] = std::numeric_limits<float>::denorm_min();
  m.config = {{"optimizer", {{"epochs", 3}, {"learning_rate", 0.1}}}};
  m.training = {{"epochs_run", 3}, {"best_epoch", 3}};
  return m;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void expect_same_model(const Model& a, const Model& b) {
  EXPECT_EQ(a.classes, b.classes);
  EXPECT_EQ(a.numeric_classes, b.numeric_classes);
  EXPECT_EQ(a.num_features, b.num_features);
  EXPECT_EQ(a.num_outputs, b.num_outputs);
  ASSERT_EQ(a.weight.size(), b.weight.size());
  ASSERT_EQ(a.bias.size(), b.bias.size());
  EXPECT_EQ(0, std::memcmp(a.weight.data(), b.weight.data(), a.weight.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.bias.data(), b.bias.data(), a.bias.size() * sizeof(float)));
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.training, b.training);
}

// Runs `f`, expects a FileError, returns its message.
template <class F>
std::string file_error_of(F&& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected bagel::FileError, got: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected bagel::FileError, nothing was thrown";
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ModelZeros, SizesFollowTheClassCount) {
  const Model binary = Model::zeros({"neg", "pos"}, false, 7);
  EXPECT_EQ(binary.num_outputs, 1);
  EXPECT_EQ(binary.output_kind(), "sigmoid");
  EXPECT_EQ(binary.weight.size(), 7u);
  EXPECT_EQ(binary.bias.size(), 1u);
  const Model multi = Model::zeros({"a", "b", "c", "d", "e"}, false, 7);
  EXPECT_EQ(multi.num_outputs, 5);
  EXPECT_EQ(multi.output_kind(), "softmax");
  EXPECT_EQ(multi.weight.size(), 35u);
  for (float w : multi.weight) EXPECT_EQ(w, 0.0f);
}

TEST(ModelSaveLoad, RoundTripKeepsClassesAndBitExactWeights) {
  TempDir tmp;
  for (const auto& classes : std::vector<std::vector<std::string>>{
           {"neg", "pos"}, {"a", "b b", "c,\"d\"", "\xC3\xA9t\xC3\xA9"}}) {
    const Model m = random_model(classes, 13, 1);
    const std::string dir = (tmp.path() / ("m" + std::to_string(classes.size()))).string();
    save_model(m, dir);
    EXPECT_EQ(entries(dir), (std::vector<std::string>{"bias.npy", "model.json", "weight.npy"}));
    expect_same_model(m, load_model(dir));
  }
  // Numeric classes keep that flag.
  Model n = random_model({"-1", "1"}, 4, 2);
  n.numeric_classes = true;
  save_model(n, (tmp.path() / "numeric").string());
  expect_same_model(n, load_model((tmp.path() / "numeric").string()));
}

TEST(ModelSaveLoad, WeightFileIsFloat32InEmbeddingLayout) {
  TempDir tmp;
  const Model m = random_model({"a", "b", "c"}, 6, 3);
  save_model(m, (tmp.path() / "m").string());
  const NpyArray w = read_npy((tmp.path() / "m" / "weight.npy").string());
  EXPECT_EQ(w.header.descr, "<f4");
  EXPECT_FALSE(w.header.fortran_order);
  EXPECT_EQ(w.header.shape, (std::vector<std::int64_t>{6, 3}));
  ASSERT_EQ(w.payload().size(), m.weight.size() * sizeof(float));
  EXPECT_EQ(0, std::memcmp(w.payload().data(), m.weight.data(), w.payload().size()));
  const NpyArray b = read_npy((tmp.path() / "m" / "bias.npy").string());
  EXPECT_EQ(b.header.shape, (std::vector<std::int64_t>{3}));

  std::ifstream in(tmp.path() / "m" / "model.json");
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("format"), "bagel-model");
  EXPECT_EQ(j.at("version"), kModelVersion);
  EXPECT_EQ(j.at("output"), "softmax");
  EXPECT_EQ(j.at("num_features"), 6);
  EXPECT_EQ(j.at("num_outputs"), 3);
}

TEST(ModelSaveLoad, LeavesNoTemporaryFolderBehind) {
  TempDir tmp;
  save_model(random_model({"x", "y"}, 5, 4), (tmp.path() / "model").string());
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"model"});
}

TEST(ModelSaveLoad, CreatesMissingParentFolders) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "runs" / "deep" / "model";
  const Model m = random_model({"x", "y"}, 5, 4);
  save_model(m, dir.string());
  expect_same_model(m, load_model(dir.string()));
  EXPECT_EQ(entries(dir.parent_path()), std::vector<std::string>{"model"});
}

TEST(ModelSaveLoad, ReplacingAModelKeepsEveryOtherFileInItsFolder) {
  TempDir tmp;
  const std::string dir = (tmp.path() / "model").string();
  save_model(random_model({"x", "y"}, 5, 4), dir);
  // The user's notes and data beside the model: bagel did not write them,
  // so retraining into the folder replaces the model files only.
  std::ofstream(fs::path(dir) / "notes.md") << "what this run was for";
  fs::create_directory(fs::path(dir) / "data");
  std::ofstream(fs::path(dir) / "data" / "train.svm") << "1 1:1\n";
  const Model newer = random_model({"p", "q", "r"}, 9, 5);
  save_model(newer, dir);
  expect_same_model(newer, load_model(dir));
  EXPECT_EQ(entries(dir),
            (std::vector<std::string>{"bias.npy", "data", "model.json", "notes.md", "weight.npy"}));
  std::ifstream notes(fs::path(dir) / "notes.md");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(notes), {}), "what this run was for");
  EXPECT_TRUE(fs::exists(fs::path(dir) / "data" / "train.svm"));
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"model"});  // no .old-* or .tmp-*
}

TEST(ModelSaveLoad, AFolderOfOtherFilesIsRefusedAndLeftAsItWas) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "project";
  fs::create_directory(dir);
  std::ofstream(dir / "notes.md") << "mine";
  std::ofstream(dir / "train.npz") << "data";
  const std::string msg =
      file_error_of([&] { save_model(random_model({"x", "y"}, 5, 4), dir.string()); });
  EXPECT_TRUE(contains(msg, dir.string() + ": holds files but no bagel model")) << msg;
  EXPECT_TRUE(contains(msg, "--force")) << msg;
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"notes.md", "train.npz"}));
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"project"});
  EXPECT_THROW(check_model_dir(dir, false, ModelSource::kFeatures), FileError);  // what train checks before loading data
}

TEST(ModelSaveLoad, ForceWritesTheModelBesideOtherFiles) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "project";
  fs::create_directory(dir);
  std::ofstream(dir / "notes.md") << "mine";
  const Model m = random_model({"x", "y"}, 5, 4);
  save_model(m, dir.string(), /*force=*/true);
  expect_same_model(m, load_model(dir.string()));
  EXPECT_EQ(entries(dir),
            (std::vector<std::string>{"bias.npy", "model.json", "notes.md", "weight.npy"}));
  // From now on it holds a bagel model: no --force needed to replace it.
  save_model(random_model({"x", "y"}, 5, 5), dir.string());
  EXPECT_TRUE(fs::exists(dir / "notes.md"));
}

TEST(ModelSaveLoad, ForceNeverOverwritesAModelFileBagelDidNotWrite) {
  TempDir tmp;
  for (const char* name : {"weight.npy", "bias.npy", "model.json"}) {
    const fs::path dir = tmp.path() / name;
    fs::create_directory(dir);
    std::ofstream(dir / name) << "{\"the user's\": true}";
    const std::string msg = file_error_of(
        [&] { save_model(random_model({"x", "y"}, 5, 4), dir.string(), /*force=*/true); });
    EXPECT_TRUE(contains(msg, (dir / name).string() + ": exists and was not written by bagel"))
        << msg;
    EXPECT_EQ(entries(dir), std::vector<std::string>{name});
  }
}

TEST(ModelSaveLoad, AnEmptyFolderIsUsedAndAFileIsRefused) {
  TempDir tmp;
  const fs::path empty = tmp.path() / "empty";
  fs::create_directory(empty);
  save_model(random_model({"x", "y"}, 5, 4), empty.string());
  EXPECT_EQ(entries(empty), (std::vector<std::string>{"bias.npy", "model.json", "weight.npy"}));
  const fs::path file = tmp.path() / "model";
  std::ofstream(file) << "not a folder";
  const std::string msg =
      file_error_of([&] { save_model(random_model({"x", "y"}, 5, 4), file.string(), true); });
  EXPECT_TRUE(contains(msg, file.string() + ": is a file, not a folder")) << msg;
  EXPECT_EQ(entries(tmp.path()), (std::vector<std::string>{"empty", "model"}));
}

TEST(ModelSaveLoad, ModelDirStateTellsTheCasesApart) {
  TempDir tmp;
  EXPECT_EQ(model_dir_state(tmp.path() / "missing"), ModelDirState::kMissing);
  EXPECT_EQ(model_dir_state(tmp.path()), ModelDirState::kEmpty);
  std::ofstream(tmp.path() / "model.json") << "{\"format\": \"something-else\"}";
  EXPECT_EQ(model_dir_state(tmp.path()), ModelDirState::kOtherFiles);
  std::ofstream(tmp.path() / "model.json") << "{\"format\": \"bagel-model\"}";
  EXPECT_EQ(model_dir_state(tmp.path()), ModelDirState::kModel);
  EXPECT_EQ(model_dir_state(tmp.path() / "model.json"), ModelDirState::kNotAFolder);
}

TEST(ModelSaveLoad, AcceptsADirectoryNameWithATrailingSlash) {
  // "--output runs/model/" is how shells complete folder names.
  TempDir tmp;
  const std::string dir = (tmp.path() / "model").string();
  const Model m = random_model({"x", "y"}, 5, 6);
  save_model(m, dir + "/");
  expect_same_model(m, load_model(dir));
  EXPECT_EQ(entries(dir), (std::vector<std::string>{"bias.npy", "model.json", "weight.npy"}));
  EXPECT_EQ(entries(tmp.path()), std::vector<std::string>{"model"});
  // And over an existing one.
  const Model m2 = random_model({"x", "y"}, 5, 7);
  save_model(m2, dir + "/");
  expect_same_model(m2, load_model(dir));
}

class ModelLoadErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (tmp_.path() / "model").string();
    save_model(random_model({"a", "b", "c"}, 4, 8), dir_);
    std::ifstream in(fs::path(dir_) / "model.json");
    json_ = nlohmann::json::parse(in);
  }
  void write_json(const std::string& text) {
    std::ofstream(fs::path(dir_) / "model.json", std::ios::trunc) << text;
  }
  std::string load_error() { return file_error_of([&] { load_model(dir_); }); }

  TempDir tmp_;
  std::string dir_;
  nlohmann::json json_;
};

TEST_F(ModelLoadErrors, MissingDirectoryIsNamed) {
  const std::string missing = (tmp_.path() / "nope").string();
  const std::string msg = file_error_of([&] { load_model(missing); });
  EXPECT_TRUE(contains(msg, missing)) << msg;
}

TEST_F(ModelLoadErrors, MissingModelJsonIsNamed) {
  fs::remove(fs::path(dir_) / "model.json");
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
}

TEST_F(ModelLoadErrors, InvalidJsonNamesModelJson) {
  write_json("{\"format\": \"bagel-model\", ");
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
}

TEST_F(ModelLoadErrors, WrongFormatNameNamesFileAndField) {
  json_["format"] = "fasttext";
  write_json(json_.dump());
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
  EXPECT_TRUE(contains(msg, "format")) << msg;
  EXPECT_TRUE(contains(msg, "fasttext")) << msg;
}

TEST_F(ModelLoadErrors, NewerVersionIsRefused) {
  json_["version"] = kModelVersion + 1;
  write_json(json_.dump());
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
  EXPECT_TRUE(contains(msg, "version")) << msg;
}

TEST_F(ModelLoadErrors, MissingFieldIsNamed) {
  json_.erase("classes");
  write_json(json_.dump());
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
  EXPECT_TRUE(contains(msg, "classes")) << msg;
}

TEST_F(ModelLoadErrors, OutputCountThatDisagreesWithClassesIsRefused) {
  json_["num_outputs"] = 1;  // three classes need three outputs
  write_json(json_.dump());
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "model.json")) << msg;
  EXPECT_TRUE(contains(msg, "num_outputs")) << msg;
}

TEST_F(ModelLoadErrors, WeightShapeThatDisagreesWithModelJsonNamesWeightFile) {
  const std::vector<float> w(5 * 3, 0.5f);  // model.json says (4, 3)
  write_npy((fs::path(dir_) / "weight.npy").string(), w, {5, 3});
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "weight.npy")) << msg;
  EXPECT_TRUE(contains(msg, "(5,3")) << msg;
}

TEST_F(ModelLoadErrors, TransposedWeightIsRefused) {
  const std::vector<float> w(4 * 3, 0.5f);  // Linear layout (3, 4) instead of (4, 3)
  write_npy((fs::path(dir_) / "weight.npy").string(), w, {3, 4});
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "weight.npy")) << msg;
}

TEST_F(ModelLoadErrors, BiasShapeThatDisagreesNamesBiasFile) {
  const std::vector<float> b(2, 0.5f);
  write_npy((fs::path(dir_) / "bias.npy").string(), b, {2});
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "bias.npy")) << msg;
}

TEST_F(ModelLoadErrors, MissingWeightFileIsNamed) {
  fs::remove(fs::path(dir_) / "weight.npy");
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "weight.npy")) << msg;
}

TEST_F(ModelLoadErrors, NonFiniteWeightIsRefused) {
  std::vector<float> w(4 * 3, 0.5f);
  w[7] = std::numeric_limits<float>::quiet_NaN();
  write_npy((fs::path(dir_) / "weight.npy").string(), w, {4, 3});
  const std::string msg = load_error();
  EXPECT_TRUE(contains(msg, "weight.npy")) << msg;
}

// Saves a binary model into DIR/m and rewrites its model.json as `edit`
// returns it (given the saved text's JSON); returns the model's folder.
template <class Edit>
fs::path saved_model_with_json(const TempDir& dir, Edit&& edit) {
  const fs::path model_dir = dir.path() / "m";
  save_model(random_model({"a", "b"}, 4, 1), model_dir.string());
  std::ifstream in(model_dir / "model.json");
  const std::string text = edit(nlohmann::json::parse(in));
  std::ofstream(model_dir / "model.json", std::ios::trunc) << text;
  return model_dir;
}

TEST(ModelLoad, AModelJsonNestedAMillionDeepIsAnErrorNotAStackOverflow) {
  // load_model copied "config" recursively: SIGSEGV on a 2 MB file.
  TempDir dir;
  const fs::path model_dir = saved_model_with_json(dir, [](nlohmann::json j) {
    j["config"] = nullptr;
    std::string text = j.dump();
    const std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    return text.replace(text.find("\"config\":null"), 13, "\"config\":" + deep);
  });
  const std::string msg = file_error_of([&] { load_model(model_dir.string()); });
  EXPECT_TRUE(contains(msg, "model.json: nested deeper than 64")) << msg;
}

TEST(ModelSaveLoad, ABoolClassTypeRoundTripsAndAnyOtherIsRefused) {
  TempDir dir;
  Model m = random_model({"False", "True"}, 4, 2);
  m.class_type = "bool";
  save_model(m, (dir.path() / "bool").string());
  EXPECT_EQ(load_model((dir.path() / "bool").string()).class_type, "bool");
  EXPECT_EQ(load_model(saved_model_with_json(dir, [](nlohmann::json j) { return j.dump(); }).string())
                .class_type, "");
  // A numpy number type, with numeric classes.
  Model numbers = random_model({"-3", "5"}, 4, 2);
  numbers.numeric_classes = true;
  numbers.class_type = "int8";
  save_model(numbers, (dir.path() / "int8").string());
  EXPECT_EQ(load_model((dir.path() / "int8").string()).class_type, "int8");
  // "bool" needs the classes False, True; a number type, numeric classes.
  for (const char* type : {"\"str\"", "\"bool\"", "\"int8\"", "\"int128\""}) {
    TempDir other;
    const fs::path bad = saved_model_with_json(other, [&](nlohmann::json j) {
      j["class_type"] = nlohmann::json::parse(type);
      return j.dump();
    });
    const std::string msg = file_error_of([&] { load_model(bad.string()); });
    EXPECT_TRUE(contains(msg, "model.json: class_type is ")) << msg;
  }
}

TEST(ModelSaveLoad, ConfigPathsThatAreNotUtf8AreWrittenNotFatal) {
  // File names are bytes; they used to fail the save after the training
  // with a raw json.exception.type_error.316.
  TempDir dir;
  Model m = random_model({"a", "b"}, 4, 2);
  m.config["output"] = std::string("runs/\xFF\xFEmodel");
  save_model(m, (dir.path() / "m").string());
  EXPECT_EQ(load_model((dir.path() / "m").string()).config["output"], "runs/\xEF\xBF\xBD\xEF\xBF\xBDmodel");
}

TEST(ModelLoad, MoreClassesThanTheLimitAreRefused) {
  TempDir dir;
  const fs::path model_dir = saved_model_with_json(dir, [](nlohmann::json j) {
    std::vector<std::string> many;
    for (std::size_t i = 0; i <= kMaxClasses; ++i) many.push_back("c" + std::to_string(i));
    j["classes"] = many;
    return j.dump();
  });
  const std::string msg = file_error_of([&] { load_model(model_dir.string()); });
  EXPECT_TRUE(contains(msg, "distinct classes, more than bagel's limit")) << msg;
}

TEST(ModelSize, WeightsBeyondAQuarterOfTheMemoryAreRefusedNamingTheSource) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // 2^31 - 1 columns, binary: 8 GiB of weights; training holds about three
  // such arrays, so 24 GiB (where half had let them through, and the run
  // was killed for memory) is too little.
  EXPECT_NO_THROW(check_model_size(2147483647, 2, "train.svm", 64 * gib));
  EXPECT_THROW(check_model_size(2147483647, 2, "train.svm", 24 * gib), FileError);
  const std::string msg =
      file_error_of([&] { check_model_size(2147483647, 2, "train.svm", 8 * gib); });
  EXPECT_TRUE(contains(msg, "train.svm: the model would have 2147483647 features x 1 outputs = 8.0 GiB"))
      << msg;
  // Outputs count: 1000 features x 5000 classes = 20 MB.
  EXPECT_NO_THROW(check_model_size(1000, 5000, "train.npz", 1 * gib));
  EXPECT_THROW(check_model_size(1000, 5000, "train.npz", 0.03 * gib), FileError);
}

// A process id that no process has now.
long dead_pid() {
  for (long pid = 4000000; pid > 1000; --pid)
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return pid;
  return 0;
}

Model versioned_model(int version) {
  Model m = Model::zeros({"a", "b", "c"}, false, 64);
  std::fill(m.weight.begin(), m.weight.end(), static_cast<float>(version));
  std::fill(m.bias.begin(), m.bias.end(), static_cast<float>(version));
  m.training = {{"version", version}};
  return m;
}

TEST(ModelCommit, AReaderAlwaysFindsAWholeModelWhileItIsReplaced) {
  // Before: model.json was removed, the arrays renamed, model.json renamed
  // back; a reader in between found no model, or old json over new arrays.
  TempDir dir;
  const std::string path = (dir.path() / "m").string();
  save_model(versioned_model(0), path);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::string failure;
  std::thread reader([&] {
    while (!done.load() && failure.empty()) {
      try {
        const Model m = load_model(path);
        const int version = m.training.at("version").get<int>();
        if (m.weight.front() != version || m.weight.back() != version || m.bias.front() != version)
          failure = "model.json of version " + std::to_string(version) + " over other arrays";
        ++reads;
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
  });
  for (int version = 1; version <= 60 && failure.empty(); ++version)
    save_model(versioned_model(version), path);
  done = true;
  reader.join();
  EXPECT_EQ(failure, "");
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m"}));  // no temporaries, no claim
}

TEST(ModelCommit, LeftoversOfKilledRunsAreRemovedOnlyWhenProvablyOurs) {
  TempDir dir;
  const long pid = dead_pid();
  ASSERT_NE(pid, 0);
  const fs::path model = dir.path() / "m";
  save_model(versioned_model(1), model.string());
  const std::string tag = ".tmp-" + std::to_string(pid);
  // A new model folder never renamed, and an old one swapped out: ours.
  fs::create_directory(dir.path() / ("m" + tag + "-1"));
  std::ofstream(dir.path() / ("m" + tag + "-1") / "weight.npy") << "x";
  // A folder of that name holding a user's file: not provably ours.
  fs::create_directory(dir.path() / ("m" + tag + "-2"));
  std::ofstream(dir.path() / ("m" + tag + "-2") / "notes.md") << "mine";
  // A model file's temporary inside the folder, the temporary of one (an
  // array written atomically onto the temporary of a file-by-file commit),
  // and one of a live process.
  std::ofstream(model / ("weight.npy" + tag + "-3")) << "x";
  std::ofstream(model / ("weight.npy" + tag + "-5" + tag + "-6")) << "x";
  std::ofstream(model / ("bias.npy.tmp-" + std::to_string(::getppid()) + "-4")) << "x";
  save_model(versioned_model(2), model.string());
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m", "m" + tag + "-2"}));
  EXPECT_EQ(entries(model), (std::vector<std::string>{"bias.npy", "bias.npy.tmp-" +
                                                                      std::to_string(::getppid()) + "-4",
                                                      "model.json", "weight.npy"}));
  EXPECT_EQ(load_model(model.string()).training.at("version"), 2);
}

TEST(ModelCommit, ASecondWriterFailsCleanlyWhileTheFolderIsClaimed) {
  TempDir dir;
  const fs::path model = dir.path() / "m";
  save_model(versioned_model(1), model.string());
  // The claim of a live process (our parent, the test runner's shell or ctest).
  std::ofstream(ModelDirClaim::lock_path(model)) << ::getppid() << "\n";
  const std::string msg = file_error_of([&] { save_model(versioned_model(2), model.string()); });
  EXPECT_TRUE(contains(msg, "another bagel run (process " + std::to_string(::getppid()) + ")"))
      << msg;
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m", "m.bagel-lock"}));
  EXPECT_EQ(load_model(model.string()).training.at("version"), 1);
  // A claim whose process is gone is taken over, and removed afterwards.
  std::ofstream(ModelDirClaim::lock_path(model), std::ios::trunc) << dead_pid() << "\n";
  save_model(versioned_model(3), model.string());
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m"}));
  EXPECT_EQ(load_model(model.string()).training.at("version"), 3);
  // A claim this process holds lets it write (train claims, then saves).
  {
    const ModelDirClaim claim = claim_model_dir(model, false, ModelSource::kFeatures);
    save_model(versioned_model(4), model.string());
    EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m", "m.bagel-lock"}));
  }
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m"}));
}

TEST(ModelCommit, AClaimHoldsForEveryPathToTheFolder) {
  // Written through a symbolic link, the model lands in the folder the link
  // names: a run claiming it by its own path must block a run by the link.
  TempDir dir;
  const fs::path model = dir.path() / "real" / "m";
  save_model(versioned_model(1), model.string());
  const fs::path link = dir.path() / "alias";
  fs::create_directory_symlink(model, link);
  EXPECT_EQ(ModelDirClaim::lock_path(link), ModelDirClaim::lock_path(model));
  std::ofstream(ModelDirClaim::lock_path(model)) << ::getppid() << "\n";
  const std::string msg = file_error_of([&] { save_model(versioned_model(2), link.string()); });
  EXPECT_TRUE(contains(msg, "another bagel run")) << msg;
  EXPECT_EQ(load_model(model.string()).training.at("version"), 1);
  fs::remove(ModelDirClaim::lock_path(model));
  save_model(versioned_model(3), link.string());
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(load_model(model.string()).training.at("version"), 3);
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"alias", "real"}));
}

// /proc/PID/stat's start time of a live process.
unsigned long long start_ticks(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  std::istringstream fields(stat.substr(stat.rfind(')') + 1));
  std::string field;
  for (int i = 3; i < 22; ++i) fields >> field;
  unsigned long long ticks = 0;
  fields >> ticks;
  return ticks;
}

TEST(ModelCommit, AClaimWhoseProcessIdWasReusedIsTakenOver) {
  // The claim names its process by id and start time: a live process that
  // got the id later (after a reboot or a container restart) is not the
  // writer, and the folder is not blocked for ever.
  TempDir dir;
  const fs::path model = dir.path() / "m";
  save_model(versioned_model(1), model.string());
  const long parent = ::getppid();
  std::ofstream(ModelDirClaim::lock_path(model)) << parent << " " << start_ticks(parent) + 1 << "\n";
  save_model(versioned_model(2), model.string());
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m"}));
  EXPECT_EQ(load_model(model.string()).training.at("version"), 2);
  // The same process, started when the claim says: still writing.
  std::ofstream(ModelDirClaim::lock_path(model)) << parent << " " << start_ticks(parent) << "\n";
  const std::string msg = file_error_of([&] { save_model(versioned_model(3), model.string()); });
  EXPECT_TRUE(contains(msg, "another bagel run")) << msg;
  // This process's own claim records its start time.
  {
    const ModelDirClaim claim = claim_model_dir(dir.path() / "n", false, ModelSource::kFeatures);
    std::ifstream in(ModelDirClaim::lock_path(dir.path() / "n"));
    long pid = 0;
    unsigned long long start = 0;
    in >> pid >> start;
    EXPECT_EQ(pid, ::getpid());
    EXPECT_EQ(start, start_ticks(::getpid()));
  }
}

}  // namespace
}  // namespace bagel
