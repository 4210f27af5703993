// Row weights: optimizer.class_weight and train.sample_weights
// (sample_weights.h), and what the trainer does with them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "bagel/error.h"
#include "bagel/sample_weights.h"
#include "bagel/trainer.h"

namespace bagel {
namespace {

Classes classes_of(std::vector<std::string> names, bool numeric) {
  Classes c;
  c.names = std::move(names);
  c.numeric = numeric;
  return c;
}

TEST(ClassWeights, BalancedIsRowsOverClassesTimesCountAsScikitLearn) {
  const Classes c = classes_of({"a", "b", "c"}, false);
  const std::vector<std::int32_t> y = {0, 0, 0, 0, 0, 0, 1, 1, 2, 0};  // 7, 2, 1
  const std::vector<double> w = class_weights({ClassWeightSpec::Kind::kBalanced, {}}, c, y);
  EXPECT_DOUBLE_EQ(w[0], 10.0 / (3 * 7));
  EXPECT_DOUBLE_EQ(w[1], 10.0 / (3 * 2));
  EXPECT_DOUBLE_EQ(w[2], 10.0 / (3 * 1));
}

TEST(ClassWeights, MapByNameOrNumericValueAndUnknownClassIsNamed) {
  const Classes c = classes_of({"-1", "1"}, true);
  const std::vector<std::int32_t> y = {0, 1};
  ClassWeightSpec spec{ClassWeightSpec::Kind::kMap, {{"1.0", 5.0}}};
  const std::vector<double> w = class_weights(spec, c, y);
  EXPECT_EQ(w, (std::vector<double>{1.0, 5.0}));
  spec.map = {{"2", 3.0}};
  try {
    class_weights(spec, c, y);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "optimizer.class_weight");
    EXPECT_NE(std::string(e.what()).find("\"2\" is not a training class"), std::string::npos) << e.what();
  }
}

TEST(ClassWeights, TwoSpellingsOfOneNumericClassAreAnError) {
  // "1" and "1.0" both name the class 1: the weight of the last had been
  // taken without a word.
  const Classes c = classes_of({"0", "1"}, true);
  const std::vector<std::int32_t> y = {0, 1};
  const ClassWeightSpec spec{ClassWeightSpec::Kind::kMap, {{"1", 3.0}, {"1.0", 2.0}}};
  try {
    class_weights(spec, c, y);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "optimizer.class_weight");
    EXPECT_NE(std::string(e.what()).find("\"1\" and \"1.0\" both name the class \"1\""),
              std::string::npos) << e.what();
  }
}

TEST(SampleWeights, FileErrorsNameTheFileAndLine) {
  const std::string path = (std::filesystem::temp_directory_path() / "bagel_test_weights.txt").string();
  auto write = [&](const std::string& text) { std::ofstream(path) << text; };
  write("1\n0.5\n2\n");
  EXPECT_EQ(read_sample_weights(path, 3), (std::vector<float>{1.0f, 0.5f, 2.0f}));
  try {
    read_sample_weights(path, 4);
    FAIL();
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("has 3 weights but the training data has 4 rows"),
              std::string::npos) << e.what();
  }
  for (const char* bad : {"1\n-2\n3\n", "1\nnan\n3\n", "1\nx\n3\n"}) {
    write(bad);
    try {
      read_sample_weights(path, 3);
      FAIL() << bad;
    } catch (const FileError& e) {
      EXPECT_EQ(e.line(), 2) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected a finite weight >= 0"), std::string::npos);
    }
  }
  std::filesystem::remove(path);
}

TEST(SampleWeights, AllOnesNeedNoWeightsAtAll) {
  const std::vector<std::int32_t> y = {0, 1, 1};
  EXPECT_TRUE(row_weights(std::vector<double>{1, 1}, y, {}).empty());
  EXPECT_EQ(row_weights(std::vector<double>{1, 2}, y, std::vector<float>{1, 1, 0.5f}),
            (std::vector<float>{1, 2, 1}));
}

// Full-batch descent on rows weighted by integers w_i takes the step
// (eta / n) sum_i w_i g_i; on the same rows repeated w_i times (N rows in
// all) at rate eta N / n it takes exactly that step too. So the two must
// train the same model, on both layers.
TEST(SampleWeights, IntegerWeightsTrainAsRepeatedRowsOnBothLayers) {
  std::mt19937 rng(5);
  const Index n = 60, cols = 12;
  const int classes = 3;
  std::vector<Index> indptr{0}, indices, rep_indptr{0}, rep_indices;
  std::vector<float> data, rep_data, weight;
  std::vector<std::int32_t> y, rep_y;
  for (Index r = 0; r < n; ++r) {
    const int w = static_cast<int>(rng() % 4);  // 0..3
    const std::int32_t label = static_cast<std::int32_t>(rng() % classes);
    std::vector<std::pair<Index, float>> row;
    for (int p = 0; p < 4; ++p) row.emplace_back(static_cast<Index>(rng() % cols), float(1 + rng() % 3));
    for (const auto& [j, v] : row) indices.push_back(j), data.push_back(v);
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(label);
    weight.push_back(static_cast<float>(w));
    for (int copy = 0; copy < w; ++copy) {
      for (const auto& [j, v] : row) rep_indices.push_back(j), rep_data.push_back(v);
      rep_indptr.push_back(static_cast<Index>(rep_indices.size()));
      rep_y.push_back(label);
    }
  }
  const auto big_n = static_cast<Index>(rep_y.size());
  const Dataset weighted{"train", CsrMatrix(n, cols, indptr, indices, data), y, weight};
  const Dataset repeated{"train", CsrMatrix(big_n, cols, rep_indptr, rep_indices, rep_data), rep_y};
  OptimizerConfig c;
  c.epochs = 15;
  c.schedule = ScheduleKind::kConstant;
  c.learning_rate = 0.05;
  c.batch_size = n;
  c.shuffle = false;
  OptimizerConfig rc = c;
  rc.batch_size = big_n;
  rc.learning_rate = c.learning_rate * double(big_n) / double(n);
  for (const LayerKind layer : {LayerKind::kSparse, LayerKind::kDense}) {
    Progress quiet(Progress::Mode::kQuiet, std::cerr);
    Model a = Model::zeros({"0", "1", "2"}, true, cols), b = a;
    train_model(a, weighted, nullptr, c, layer, quiet);
    train_model(b, repeated, nullptr, rc, layer, quiet);
    double max_diff = 0, max_w = 0;
    for (std::size_t i = 0; i < a.weight.size(); ++i) {
      max_diff = std::max(max_diff, double(std::abs(a.weight[i] - b.weight[i])));
      max_w = std::max(max_w, double(std::abs(a.weight[i])));
    }
    EXPECT_LT(max_diff, 1e-5 * std::max(1.0, max_w)) << to_string(layer);
    EXPECT_GT(max_w, 0.1) << "the model learned something";
    for (int i = 0; i < classes; ++i) EXPECT_NEAR(a.bias[i], b.bias[i], 1e-5) << to_string(layer);
  }
  // And the weights matter: unweighted rows give another model.
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  Dataset unweighted{"train", CsrMatrix(n, cols, indptr, indices, data), y};
  Model a = Model::zeros({"0", "1", "2"}, true, cols), u = a;
  train_model(a, weighted, nullptr, c, LayerKind::kSparse, quiet);
  train_model(u, unweighted, nullptr, c, LayerKind::kSparse, quiet);
  double diff = 0;
  for (std::size_t i = 0; i < a.weight.size(); ++i) diff = std::max(diff, double(std::abs(a.weight[i] - u.weight[i])));
  EXPECT_GT(diff, 1e-2);
}

}  // namespace
}  // namespace bagel
