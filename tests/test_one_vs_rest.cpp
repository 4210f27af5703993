// model.multiclass "ovr": K sigmoid outputs, each a binary problem of class k
// against the rest (LIBLINEAR's -s 0, scikit-learn's SGDClassifier).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "bagel/config.h"
#include "bagel/error.h"
#include "bagel/loss.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "train_helpers.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

TEST(OneVsRestLoss, IsTheSumOfTheBinaryLossesAndItsGradient) {
  const std::vector<float> z = {2.5f, -1.0f, 0.0f, -30.0f};
  for (std::int32_t y = 0; y < 4; ++y) {
    std::vector<float> grad(4);
    const double loss = OneVsRestLogLoss::loss_and_grad(z.data(), y, grad.data(), 4);
    double expected = 0;
    for (int k = 0; k < 4; ++k) {
      float g = 0;
      expected += BinaryLogLoss::loss_and_grad(&z[k], k == y, &g, 1);
      EXPECT_EQ(grad[k], g) << "output " << k;
    }
    EXPECT_NEAR(loss, expected, 1e-12);
    // Central differences of the loss in each logit.
    for (int k = 0; k < 4; ++k) {
      std::vector<float> up = z, down = z, scratch(4);
      up[k] += 1e-2f;
      down[k] -= 1e-2f;
      const double numeric = (OneVsRestLogLoss::loss_and_grad(up.data(), y, scratch.data(), 4) -
                              OneVsRestLogLoss::loss_and_grad(down.data(), y, scratch.data(), 4)) /
                             2e-2;
      EXPECT_NEAR(grad[k], numeric, 1e-4) << "y " << y << ", output " << k;
    }
  }
}

TEST(OneVsRestLoss, ManyOutputsSumTheBinaryLossesToo) {
  // 1,500 outputs (three of the product's chunks), margins from -40 to 40
  // and at 0, where each term's log1p(e) runs from 4e-18 to log 2.
  const int k = 1500;
  std::vector<float> z(k), grad(k);
  for (int i = 0; i < k; ++i) z[static_cast<std::size_t>(i)] = -40.0f + 80.0f * static_cast<float>(i % 97) / 96.0f;
  z[700] = 0.0f;
  for (const std::int32_t y : {0, 700, k - 1}) {
    const double loss = OneVsRestLogLoss::loss_and_grad(z.data(), y, grad.data(), k);
    double expected = 0;
    for (int i = 0; i < k; ++i) {
      float g = 0;
      expected += BinaryLogLoss::loss_and_grad(&z[static_cast<std::size_t>(i)], i == y, &g, 1);
      ASSERT_EQ(grad[static_cast<std::size_t>(i)], g) << "output " << i;
    }
    EXPECT_NEAR(loss, expected, 1e-12 * expected) << "label " << y;
  }
}

TEST(OneVsRestLoss, ProbabilitiesAreTheNormalisedSigmoids) {
  const std::vector<float> z = {1.0f, -2.0f, 0.5f};
  double p[3];
  head_probabilities(z.data(), p, 3, Head::kOneVsRest);
  const double s[3] = {sigmoid(1.0), sigmoid(-2.0), sigmoid(0.5)};
  for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[k], s[k] / (s[0] + s[1] + s[2]), 1e-15);
  EXPECT_NEAR(loss_at_zero(Head::kOneVsRest, 3), 3 * std::log(2.0), 1e-15);
  EXPECT_NEAR(loss_at_zero(Head::kSoftmax, 3), std::log(3.0), 1e-15);
}

OptimizerConfig fixed(double rate) {
  OptimizerConfig c;
  c.learning_rate = rate;
  c.epochs = 3;
  c.threads = 1;
  c.schedule = ScheduleKind::kLinear;
  return c;
}

Model train_head(const Dataset& d, int classes, Head head, const OptimizerConfig& c,
                 LayerKind layer = LayerKind::kSparse) {
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  Model m = Model::zeros(names, true, d.x.cols(), head);
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  train_model(m, d, nullptr, c, layer, quiet);
  return m;
}

// Each output's gradient depends on its own logit only, so the K outputs
// learn what K binary models (class k or not) learn on the same row order.
TEST(OneVsRestTraining, EqualsOneBinaryModelPerClass) {
  const Dataset d = synthetic(4, 1500, 5, 800, 20);
  for (const bool average : {false, true}) {
    OptimizerConfig c = fixed(0.01);
    c.average = average;
    const Model ovr = train_head(d, 4, Head::kOneVsRest, c);
    ASSERT_EQ(ovr.num_outputs, 4);
    EXPECT_EQ(ovr.output_kind(), "ovr");
    for (int k = 0; k < 4; ++k) {
      Dataset binary{"class " + std::to_string(k), d.x.clone(), d.y, {}};
      for (std::int32_t& y : binary.y) y = y == k;
      const Model one = train_head(binary, 2, Head::kOneVsRest, c);
      ASSERT_EQ(one.num_outputs, 1);
      EXPECT_EQ(one.head(), Head::kSigmoid);
      EXPECT_NEAR(ovr.bias[k], one.bias[0], 1e-5) << "class " << k << ", average " << average;
      double worst = 0;
      for (Index j = 0; j < d.x.cols(); ++j)
        worst = std::max(worst, std::abs(double(ovr.weight[j * 4 + k]) - one.weight[j]));
      EXPECT_LT(worst, 1e-5) << "class " << k << ", average " << average;
    }
  }
}

TEST(OneVsRestTraining, DenseLayerMatchesTheSparseLayer) {
  const Dataset d = synthetic(3, 600, 9, 300, 15);
  OptimizerConfig c = fixed(0.02);
  c.l2 = 1e-4;
  const Model sparse = train_head(d, 3, Head::kOneVsRest, c, LayerKind::kSparse);
  const Model dense = train_head(d, 3, Head::kOneVsRest, c, LayerKind::kDense);
  ASSERT_EQ(sparse.weight.size(), dense.weight.size());
  for (std::size_t i = 0; i < sparse.weight.size(); ++i)
    ASSERT_NEAR(sparse.weight[i], dense.weight[i], 1e-4) << "weight " << i;
  // Softmax on the same rows is another model.
  const Model softmax = train_head(d, 3, Head::kSoftmax, c);
  double differ = 0;
  for (std::size_t i = 0; i < sparse.weight.size(); ++i)
    differ = std::max(differ, std::abs(double(sparse.weight[i]) - softmax.weight[i]));
  EXPECT_GT(differ, 1e-3);
}

TEST(OneVsRestModel, SavesLoadsAndPredictsWithItsHead) {
  const Dataset d = synthetic(3, 400, 2, 200, 10);
  const Model m = train_head(d, 3, Head::kOneVsRest, fixed(0.02));
  const fs::path dir = fs::temp_directory_path() / ("bagel_ovr_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  save_model(m, dir.string());
  {
    std::ifstream in(dir / "model.json");
    const nlohmann::json j = nlohmann::json::parse(in);
    EXPECT_EQ(j.at("output"), "ovr");
  }
  const Model back = load_model(dir.string());
  EXPECT_EQ(back.head(), Head::kOneVsRest);
  const std::vector<double> p = predict_proba(back, d.x, 1);
  std::vector<double> logits = predict_logits_chunk(back, d.x, 0, d.x.rows(), 1);
  for (Index r = 0; r < 5; ++r) {
    double s[3], sum = 0;
    for (int k = 0; k < 3; ++k) sum += (s[k] = sigmoid(logits[r * 3 + k]));
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(p[r * 3 + k], s[k] / sum, 1e-6);
  }
  // A model.json whose output names no head of its class count.
  nlohmann::json j;
  {
    std::ifstream in(dir / "model.json");
    j = nlohmann::json::parse(in);
  }
  j["output"] = "sigmoid";
  std::ofstream(dir / "model.json") << j.dump();
  try {
    load_model(dir.string());
    ADD_FAILURE() << "a 3-class model with output \"sigmoid\" loaded";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("output is \"sigmoid\", expected \"softmax\" or \"ovr\""),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(OneVsRestModel, TheTwoClassHeadAsMulticlassMeansSoftmax) {
  EXPECT_EQ(Model::zeros({"a", "b", "c"}, false, 4, Head::kSigmoid).head(), Head::kSoftmax);
  EXPECT_EQ(Model::zeros({"a", "b"}, false, 4, Head::kOneVsRest).head(), Head::kSigmoid);
}

TEST(OneVsRestConfig, ParsesAndRejectsUnknownHeads) {
  const nlohmann::json base = {{"train", {{"features", "x.npz"}, {"labels", "y.txt"}}}};
  nlohmann::json doc = base;
  doc["model"] = {{"multiclass", "ovr"}};
  const TrainConfig c = parse_train_config(doc, "/");
  ASSERT_TRUE(c.multiclass.has_value());
  EXPECT_EQ(*c.multiclass, Head::kOneVsRest);
  EXPECT_EQ(c.resolved["model"]["multiclass"], "ovr");
  EXPECT_FALSE(parse_train_config(base, "/").multiclass.has_value());
  doc["model"]["multiclass"] = "multinomial";
  try {
    parse_train_config(doc, "/");
    ADD_FAILURE() << "multiclass \"multinomial\" accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "model.multiclass");
    EXPECT_NE(std::string(e.what()).find("expected \"softmax\" or \"ovr\""), std::string::npos);
  }
}

}  // namespace
}  // namespace bagel
