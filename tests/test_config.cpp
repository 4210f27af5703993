#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "bagel/config.h"
#include "bagel/bench.h"
#include "bagel/error.h"
#include "bagel/json_reader.h"

namespace bagel {
namespace {

nlohmann::json minimal() {
  return nlohmann::json::parse(R"({"train": {"features": "x/train.npz", "labels": "x/train.labels"}})");
}

std::string error_of(const nlohmann::json& doc) {
  try {
    parse_train_config(doc, "/base");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Config, DefaultsAndRelativePathsResolveAgainstConfigFolder) {
  const TrainConfig c = parse_train_config(minimal(), "/base/dir");
  EXPECT_EQ(c.train.features, "/base/dir/x/train.npz");
  EXPECT_EQ(c.train.labels, "/base/dir/x/train.labels");
  EXPECT_FALSE(c.valid.has_value());
  EXPECT_EQ(c.layer, LayerKind::kSparse);
  EXPECT_EQ(c.optimizer.epochs, 0);  // "auto"
  EXPECT_EQ(c.optimizer.learning_rate, 0);  // "auto"
  EXPECT_EQ(c.optimizer.l2, 0);
  EXPECT_EQ(c.optimizer.batch_size, 1);
  EXPECT_EQ(c.resolved["optimizer"]["schedule"], "linear");
  EXPECT_EQ(c.resolved["optimizer"]["epochs"], "auto");
  EXPECT_EQ(c.resolved["optimizer"]["learning_rate"], "auto");
  EXPECT_TRUE(c.optimizer.bias_rate_auto);
  EXPECT_EQ(c.optimizer.bias_rate, 1);
  EXPECT_EQ(c.resolved["optimizer"]["bias_rate"], "auto");
}

TEST(Config, AutoOrANumberForEpochsAndLearningRate) {
  auto doc = minimal();
  doc["optimizer"] = {{"epochs", "auto"}, {"learning_rate", "auto"}};
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.epochs, 0);
  doc["optimizer"] = {{"epochs", 7}, {"learning_rate", 0.25}};
  const TrainConfig c = parse_train_config(doc, "/b");
  EXPECT_EQ(c.optimizer.epochs, 7);
  EXPECT_EQ(c.optimizer.learning_rate, 0.25);
  EXPECT_EQ(c.resolved["optimizer"]["learning_rate"], 0.25);
  doc["optimizer"] = {{"epochs", "many"}};
  EXPECT_NE(error_of(doc).find("optimizer.epochs: expected an integer >= 1 or \"auto\""),
            std::string::npos) << error_of(doc);
  doc["optimizer"] = {{"learning_rate", "fast"}};
  EXPECT_NE(error_of(doc).find("optimizer.learning_rate: expected a number > 0 or \"auto\""),
            std::string::npos) << error_of(doc);
  doc["optimizer"] = {{"bias_rate", 0.01}};
  const TrainConfig b = parse_train_config(doc, "/b");
  EXPECT_FALSE(b.optimizer.bias_rate_auto);
  EXPECT_EQ(b.optimizer.bias_rate, 0.01);
  EXPECT_EQ(b.resolved["optimizer"]["bias_rate"], 0.01);
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(-1), nlohmann::json("slow")}) {
    doc["optimizer"] = {{"bias_rate", bad}};
    EXPECT_NE(error_of(doc).find("optimizer.bias_rate: expected a number > 0 or \"auto\""),
              std::string::npos) << error_of(doc);
  }
}

TEST(Config, NullIsTheDefaultAndIntegersBeyondInt64AreNamed) {
  auto doc = minimal();
  doc["optimizer"] = {{"epochs", nullptr}, {"learning_rate", nullptr}, {"bias_rate", nullptr},
                      {"average", nullptr}};
  doc["model"] = {{"multiclass", nullptr}};
  const TrainConfig c = parse_train_config(doc, "/b");  // had said "found 0" and "found \"\""
  const TrainConfig d = parse_train_config(minimal(), "/b");
  EXPECT_EQ(c.optimizer.epochs, 0);
  EXPECT_FALSE(c.multiclass.has_value());
  // The rates and average too, which had been refused ("expected true,
  // false or \"auto\", found null").
  EXPECT_EQ(c.optimizer.learning_rate, d.optimizer.learning_rate);
  EXPECT_EQ(c.optimizer.bias_rate_auto, d.optimizer.bias_rate_auto);
  EXPECT_EQ(c.optimizer.average, d.optimizer.average);
  EXPECT_EQ(c.optimizer.average_auto, d.optimizer.average_auto);
  // The seed takes every integer from 0 to 2^63 - 1: a whole number written
  // with an exponent from 9e15 on may have been rounded, so it is asked in
  // digits; 10^16 in digits is read exactly.
  doc = minimal();
  doc["optimizer"] = nlohmann::json::parse(R"({"seed": 1e16})");
  EXPECT_NE(error_of(doc).find("optimizer.seed: expected an integer, found 1e+16: from 9e15 on, "
                               "write it in digits alone"),
            std::string::npos) << error_of(doc);
  doc["optimizer"] = nlohmann::json::parse(R"({"seed": 10000000000000000})");
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.seed, 10000000000000000u);
}

// A value outside a key's range names that range however it is written: in
// digits past 2^63 (which JSON reads as an unsigned integer) or past 2^64 (a
// double), or with an exponent. It had named the int64 range, or asked for
// digits, which would be out of range all the same.
TEST(Config, AnIntegerOutsideTheKeysRangeNamesTheKeysRange) {
  const std::string epochs = "optimizer.epochs: expected an integer in [1, 2147483647], found ";
  const std::string seed = "optimizer.seed: expected an integer in [0, 9223372036854775807], found ";
  const std::string threads = "optimizer.threads: expected an integer in [0, 1024], found ";
  const std::pair<const char*, std::string> cases[] = {
      {R"({"epochs": 4294967296})", epochs + "4294967296"},
      {R"({"epochs": 9223372036854775808})", epochs + "9223372036854775808"},  // had read as -2^63
      {R"({"epochs": 18446744073709551616})", epochs + "1.8446744073709552e+19"},
      {R"({"epochs": 1e16})", epochs + "1e+16"},
      {R"({"epochs": 1e30})", epochs + "1e+30"},
      // The Python estimator's json.dumps(10**20): the same parser, the same message.
      {R"({"epochs": 100000000000000000000})", epochs + "1e+20"},
      {R"({"epochs": -1e30})", epochs + "-1e+30"},
      {R"({"epochs": -9223372036854775809})", epochs + "-9.223372036854776e+18"},
      {R"({"batch_size": 1e16})",
       "optimizer.batch_size: expected an integer in [1, 2147483647], found 1e+16"},
      {R"({"threads": 1e16})", threads + "1e+16"},
      {R"({"threads": 1025})", threads + "1025"},
      {R"({"patience": -1e30})", "optimizer.patience: expected an integer in [0, 2147483647], found -1e+30"},
      {R"({"seed": 18446744073709551616})", seed + "1.8446744073709552e+19"},
      {R"({"seed": 9223372036854775808})", seed + "9223372036854775808"},
      {R"({"seed": 1e30})", seed + "1e+30"},
      {R"({"seed": -1e16})", seed + "-1e+16"},
      {R"({"seed": -1})", seed + "-1"},
  };
  for (const auto& [optimizer, expected] : cases) {
    auto doc = minimal();
    doc["optimizer"] = nlohmann::json::parse(optimizer);
    const std::string error = error_of(doc);
    EXPECT_NE(error.find(expected), std::string::npos) << optimizer << ": " << error;
    EXPECT_EQ(error.find("digits"), std::string::npos) << optimizer << ": " << error;
    EXPECT_EQ(error.find("64-bit"), std::string::npos) << optimizer << ": " << error;
  }
  auto doc = minimal();
  doc["optimizer"] = nlohmann::json::parse(R"({"epochs": 3, "average": true, "average_from": 1e16})");
  EXPECT_NE(error_of(doc).find("optimizer.average_from: expected an integer in [1, 3], found 1e+16"),
            std::string::npos) << error_of(doc);
  doc = minimal();
  doc["optimizer"] = nlohmann::json::parse(R"({"epochs": 1e1})");  // whole and in range: fine
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.epochs, 10);
  doc["optimizer"] = nlohmann::json::parse(R"({"epochs": 2.5})");
  EXPECT_NE(error_of(doc).find("optimizer.epochs: expected an integer, found a number 2.5"),
            std::string::npos) << error_of(doc);
}

TEST(Config, AnEmptyFeaturesPathNamesTheKey) {
  auto doc = minimal();
  doc["train"]["features"] = "";  // had been ": cannot open"
  EXPECT_NE(error_of(doc).find("train.features: is empty"), std::string::npos) << error_of(doc);
}

TEST(Config, ATextKeyBesideFeaturesSaysItIsForText) {
  auto doc = minimal();
  doc["train"]["format"] = "lines";
  std::string msg = error_of(doc);
  EXPECT_NE(msg.find("train.format: applies to raw text"), std::string::npos) << msg;
  doc = minimal();
  doc["valid"] = {{"features", "v.svm"}, {"decode_error", "replace"}};
  msg = error_of(doc);
  EXPECT_NE(msg.find("valid.decode_error: applies to raw text"), std::string::npos) << msg;
  // Another unknown key lists every key of the section, the text ones too.
  doc = minimal();
  doc["train"]["foo"] = 1;
  msg = error_of(doc);
  EXPECT_NE(msg.find("train.foo: unknown key 'foo'; valid keys:"), std::string::npos) << msg;
  for (const char* key : {"features", "labels", "text", "format", "quoting", "zero_based"})
    EXPECT_NE(msg.find(std::string(" ") + key), std::string::npos) << key << ": " << msg;
}

TEST(Config, AutoEpochsGiveAbout200kRowUpdatesBetween5And20) {
  // Features used 100 times a pass: the row count decides.
  auto epochs = [](std::int64_t rows) { return auto_epochs(rows, rows * 100, rows, false); };
  EXPECT_EQ(epochs(100), 20);
  EXPECT_EQ(epochs(10000), 20);
  EXPECT_EQ(epochs(20000), 10);
  EXPECT_EQ(epochs(30000), 7);
  EXPECT_EQ(epochs(40000), 5);
  EXPECT_EQ(epochs(1000000), 5);
}

TEST(Config, AutoEpochsUpdateEachUsedWeightRowAbout300Times) {
  // 140,000 rows of 75 non-zeros over 686,000 used features: ~15 updates of
  // a weight row a pass, so 20 passes, where the row count alone gives 5.
  EXPECT_EQ(auto_epochs(140000, 140000 * 75, 686000, false), 20);
  EXPECT_EQ(auto_epochs(140000, 140000 * 75, 350000, false), 10);  // 30 a pass
  EXPECT_EQ(auto_epochs(140000, 140000 * 75, 10000, false), 5);
  EXPECT_EQ(auto_epochs(0, 0, 0, false), 20);
}

TEST(Config, AutoEpochsOfAveragedSmallDataAreAtLeast40) {
  // Averaged SGD on at most kAutoAverageRows rows: 40 passes, or enough for
  // 100,000 updates (at most 200), whatever the other rules say; one row
  // more, or the last iterate, and the rules apply.
  EXPECT_EQ(auto_epochs(100, 100 * 100, 100, true), kMaxSmallDataEpochs);
  EXPECT_EQ(auto_epochs(930, 930 * 19, 900, true), 108);  // fortunes-pair's training rows
  EXPECT_EQ(auto_epochs(2500, 2500 * 19, 900, true), 40);
  EXPECT_EQ(auto_epochs(2499, 2499 * 19, 900, true), 41);
  EXPECT_EQ(auto_epochs(kAutoAverageRows, kAutoAverageRows * 100, kAutoAverageRows, true), 40);
  EXPECT_EQ(auto_epochs(kAutoAverageRows, kAutoAverageRows * 100, kAutoAverageRows, false), 20);
  EXPECT_EQ(auto_epochs(kAutoAverageRows + 1, (kAutoAverageRows + 1) * 100, 100, true), 20);
  EXPECT_EQ(auto_epochs(40000, 40000 * 100, 40000, true), 5);
}

TEST(Config, AutoEpochsOfAMatrixCountTheColumnsItsRowsUse) {
  // 3 rows, 6 non-zeros, columns 0, 2 and 7 used of 10: 2 updates a pass.
  const std::vector<Index> indptr{0, 2, 4, 6}, indices{0, 2, 2, 7, 0, 7};
  const std::vector<float> data(6, 1.0f);
  const CsrMatrix x = CsrMatrix::view(3, 10, indptr, indices, data);
  EXPECT_EQ(auto_epochs(x, false), auto_epochs(3, 6, 3, false));
  EXPECT_EQ(auto_epochs(x, false), 20);  // ceil(300 / 2) = 150, clamped
  EXPECT_EQ(auto_epochs(x, true), kMaxSmallDataEpochs);
}

TEST(Config, AverageIsAutoByDefaultAndResolvedFromTheRows) {
  auto doc = minimal();
  OptimizerConfig o = parse_train_config(doc, "/base").optimizer;
  EXPECT_TRUE(o.average_auto);
  EXPECT_EQ(parse_train_config(doc, "/base").resolved["optimizer"]["average"], "auto");
  OptimizerConfig small = o, large = o;
  resolve_averaging(small, kAutoAverageRows, true);
  resolve_averaging(large, kAutoAverageRows + 1, true);
  EXPECT_TRUE(small.average);
  EXPECT_FALSE(small.average_auto);
  EXPECT_FALSE(large.average);
  // Settings that cannot average keep the last iterate.
  OptimizerConfig l1 = o, hogwild = o;
  l1.l1 = 1e-5;
  hogwild.threads = 2;
  hogwild.deterministic = false;
  resolve_averaging(l1, 100, true);
  resolve_averaging(hogwild, 100, false);
  EXPECT_FALSE(l1.average);
  EXPECT_FALSE(hogwild.average);
  // An explicit choice is kept whatever the rows.
  doc["optimizer"] = {{"average", false}};
  OptimizerConfig off = parse_train_config(doc, "/base").optimizer;
  resolve_averaging(off, 100, true);
  EXPECT_FALSE(off.average);
  doc["optimizer"] = {{"average", true}};
  OptimizerConfig on = parse_train_config(doc, "/base").optimizer;
  resolve_averaging(on, 1000000, false);
  EXPECT_TRUE(on.average);
  for (const nlohmann::json& bad : {nlohmann::json("sometimes"), nlohmann::json(1)}) {
    doc["optimizer"] = {{"average", bad}};
    EXPECT_NE(error_of(doc).find("optimizer.average: expected true, false or \"auto\", found " +
                                 bad.dump()),
              std::string::npos) << error_of(doc);
  }
  // "auto" written out is the default.
  doc["optimizer"] = {{"average", "auto"}};
  EXPECT_TRUE(parse_train_config(doc, "/base").optimizer.average_auto);
}

TEST(Config, AbsolutePathsAreKept) {
  auto doc = minimal();
  doc["train"]["features"] = "/data/a.svm";
  doc["train"].erase("labels");
  const TrainConfig c = parse_train_config(doc, "/base");
  EXPECT_EQ(c.train.features, "/data/a.svm");
  EXPECT_TRUE(c.train.labels.empty());
}

TEST(Config, UnknownKeyIsNamedWithNearestValidKey) {
  auto doc = minimal();
  doc["optimizer"] = {{"epochss", 3}};
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.epochss"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did you mean 'epochs'"), std::string::npos) << msg;
}

TEST(Config, UnknownTopLevelKeyIsAnError) {
  auto doc = minimal();
  doc["outptu"] = "runs/x";
  EXPECT_NE(error_of(doc).find("did you mean 'output'"), std::string::npos);
}

TEST(Config, WrongTypeNamesKeyPathAndExpectedType) {
  auto doc = minimal();
  doc["optimizer"] = {{"epochs", "ten"}};
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.epochs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("integer"), std::string::npos) << msg;
  doc["optimizer"] = {{"learning_rate", true}};
  EXPECT_NE(error_of(doc).find("optimizer.learning_rate: expected a number"), std::string::npos);
}

TEST(Config, OutOfRangeValuesAreRejected) {
  for (const char* bad : {R"({"epochs": 0})", R"({"learning_rate": -1})", R"({"batch_size": 0})",
                          R"({"l2": -0.1})", R"({"schedule": "cosine"})", R"({"epochs": 2.5})"}) {
    auto doc = minimal();
    doc["optimizer"] = nlohmann::json::parse(bad);
    EXPECT_NE(error_of(doc).find("optimizer."), std::string::npos) << bad;
  }
}

TEST(Config, AllCoresDeterministicReplicasByDefault) {
  auto doc = minimal();
  const OptimizerConfig o = parse_train_config(doc, "/b").optimizer;
  EXPECT_EQ(o.threads, 0);  // all usable cores
  EXPECT_TRUE(o.deterministic);
  EXPECT_EQ(o.deterministic_method, DeterministicMethod::kAverage);
  EXPECT_EQ(parse_train_config(doc, "/b").resolved["optimizer"]["threads"], 0);
  doc["optimizer"] = {{"deterministic", true}, {"deterministic_method", "exact"}};
  const TrainConfig c = parse_train_config(doc, "/b");
  EXPECT_EQ(c.optimizer.deterministic_method, DeterministicMethod::kExact);
  EXPECT_EQ(c.resolved["optimizer"]["deterministic_method"], "exact");
  doc["optimizer"]["deterministic_method"] = "mean";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.deterministic_method"), std::string::npos) << msg;
  EXPECT_NE(msg.find("\"average\" or \"exact\""), std::string::npos) << msg;
}

TEST(Config, ReorderFeaturesIsOnByDefaultAndABool) {
  auto doc = minimal();
  EXPECT_TRUE(parse_train_config(doc, "/b").optimizer.reorder_features);
  doc["optimizer"] = {{"reorder_features", false}};
  const TrainConfig c = parse_train_config(doc, "/b");
  EXPECT_FALSE(c.optimizer.reorder_features);
  EXPECT_EQ(c.resolved["optimizer"]["reorder_features"], false);
  doc["optimizer"]["reorder_features"] = "no";
  const std::string msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.reorder_features"), std::string::npos) << msg;
}

TEST(Config, AverageNeedsOneThreadOrReplicasAndNoL1) {
  auto doc = minimal();
  doc["optimizer"] = {{"average", true}};
  const TrainConfig c = parse_train_config(doc, "/b");
  EXPECT_TRUE(c.optimizer.average);
  EXPECT_EQ(c.resolved["optimizer"]["average"], true);
  doc["optimizer"]["average"] = 1;
  std::string msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.average"), std::string::npos) << msg;
  doc["optimizer"] = {{"average", true}, {"threads", 2}, {"deterministic", false}};  // Hogwild
  msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.average"), std::string::npos) << msg;
  EXPECT_NE(msg.find("threads"), std::string::npos) << msg;
  doc["optimizer"]["deterministic"] = true;
  doc["optimizer"]["deterministic_method"] = "exact";  // refused too
  EXPECT_NE(error_of(doc).find("optimizer.average"), std::string::npos);
  doc["optimizer"]["deterministic_method"] = "average";  // replicas: each one averages
  EXPECT_TRUE(parse_train_config(doc, "/b").optimizer.average);
  doc["optimizer"] = {{"average", true}, {"epochs", 4}, {"average_from", 3}};
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.average_from, 3);
  EXPECT_EQ(parse_train_config(doc, "/b").resolved["optimizer"]["average_from"], 3);
  for (const int bad : {0, 5}) {  // epochs 1..4
    doc["optimizer"]["average_from"] = bad;
    msg = error_of(doc);
    EXPECT_NE(msg.find("optimizer.average_from"), std::string::npos) << msg;
  }
  doc["optimizer"] = {{"average_from", 1}};  // the default: fine without averaging
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.average_from, 1);
  doc["optimizer"] = {{"epochs", 4}, {"average_from", 2}};
  msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.average_from"), std::string::npos) << msg;
  EXPECT_NE(msg.find("average to true"), std::string::npos) << msg;
  // "auto" may average (few rows), but decides only once the data is read.
  EXPECT_NE(msg.find("\"auto\" (the default average) chooses only after reading the data"),
            std::string::npos) << msg;
  doc["optimizer"] = {{"epochs", 4}, {"average_from", 2}, {"average", false}};
  msg = error_of(doc);
  EXPECT_NE(msg.find("average to true"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("auto"), std::string::npos) << msg;
  doc["optimizer"] = {{"average", true}, {"l1", 0.001}};
  msg = error_of(doc);
  EXPECT_NE(msg.find("optimizer.average"), std::string::npos) << msg;
  EXPECT_NE(msg.find("l1"), std::string::npos) << msg;
}

TEST(Config, OptimalScheduleNeedsAPenalty) {
  auto doc = minimal();
  doc["optimizer"] = {{"schedule", "optimal"}};
  EXPECT_NE(error_of(doc).find("optimizer.schedule"), std::string::npos);
  doc["optimizer"]["l2"] = 1e-4;
  EXPECT_NO_THROW(parse_train_config(doc, "/base"));
}

TEST(Config, NpzFeaturesNeedLabels) {
  auto doc = minimal();
  doc["train"].erase("labels");
  EXPECT_NE(error_of(doc).find("train.labels"), std::string::npos);
}

TEST(Config, PatienceNeedsValidationSet) {
  auto doc = minimal();
  doc["optimizer"] = {{"patience", 2}};
  EXPECT_NE(error_of(doc).find("optimizer.patience"), std::string::npos);
  doc["valid"] = {{"features", "v.npz"}, {"labels", "v.labels"}};
  EXPECT_EQ(parse_train_config(doc, "/b").optimizer.patience, 2);
}

TEST(Config, LayerMustBeSparseOrDense) {
  auto doc = minimal();
  doc["model"] = {{"layer", "conv"}};
  EXPECT_NE(error_of(doc).find("model.layer"), std::string::npos);
  doc["model"]["layer"] = "dense";
  EXPECT_EQ(parse_train_config(doc, "/b").layer, LayerKind::kDense);
}

TEST(Config, OverridesSetNestedKeysWithJsonOrStringValues) {
  auto doc = minimal();
  apply_override(doc, "optimizer.epochs=12");
  apply_override(doc, "model.layer=dense");
  apply_override(doc, "optimizer.shuffle=false");
  const TrainConfig c = parse_train_config(doc, "/b");
  EXPECT_EQ(c.optimizer.epochs, 12);
  EXPECT_EQ(c.layer, LayerKind::kDense);
  EXPECT_FALSE(c.optimizer.shuffle);
  EXPECT_THROW(apply_override(doc, "no-equals-sign"), ConfigError);
}

TEST(Config, FileErrorsNameTheConfigFile) {
  const auto path = std::filesystem::temp_directory_path() / "bagel_test_bad_config.json";
  {
    std::ofstream(path) << "{\"train\": {\"features\": \"a.npz\",}";
  }
  try {
    load_train_config(path.string(), {});
    FAIL() << "expected an error";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(JsonReader, EditDistanceCountsEdits) {
  EXPECT_EQ(edit_distance("epochs", "epochs"), 0u);
  EXPECT_EQ(edit_distance("epochss", "epochs"), 1u);
  EXPECT_EQ(edit_distance("lr", "l2"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

}  // namespace
}  // namespace bagel

namespace bagel {
namespace {

TEST(BenchConfig, TrainsAtTheConfiguredConstantRateAndEpochs) {
  nlohmann::json doc = {{"output", nullptr}};
  BenchConfig c = parse_bench_config(doc, "/b");
  EXPECT_EQ(c.learning_rate, 0.01);  // README §7
  EXPECT_EQ(c.epochs, 1);
  doc["learning_rate"] = 0.002;
  doc["epochs"] = 3;
  doc["l2"] = 0;
  c = parse_bench_config(doc, "/b");
  EXPECT_EQ(c.learning_rate, 0.002);
  EXPECT_EQ(c.epochs, 3);
  EXPECT_EQ(c.l2, 0.0);
  for (const auto& [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"learning_rate", 0}, {"learning_rate", "auto"}, {"epochs", 0}, {"l2", -1}}) {
    nlohmann::json d = doc;
    d[key] = bad;
    try {
      parse_bench_config(d, "/b");
      ADD_FAILURE() << key << " " << bad.dump() << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), key);
    }
  }
}

}  // namespace
}  // namespace bagel
