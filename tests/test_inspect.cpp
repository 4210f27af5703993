// inspect.h (weights report, training summary, explanations, feature names)
// and table_writer.h's TextTable.
#include "bagel/inspect.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bagel/error.h"
#include "bagel/npz.h"
#include "bagel/predict.h"
#include "bagel/table_writer.h"
#include "bagel/text/vocabulary_file.h"
#include "temp_dir.h"

namespace bagel {
namespace {

// A softmax model over 3 classes and 5 features whose weights are given
// column by column (w[class][feature]).
Model three_class_model(const std::vector<std::vector<float>>& w, std::vector<float> bias) {
  Model m = Model::zeros({"a", "b", "c"}, false, static_cast<Index>(w[0].size()));
  for (std::size_t k = 0; k < w.size(); ++k)
    for (std::size_t j = 0; j < w[k].size(); ++j) m.weight[j * 3 + k] = w[k][j];
  m.bias = std::move(bias);
  return m;
}

std::vector<Index> features_of(const std::vector<FeatureWeight>& fw) {
  std::vector<Index> out;
  for (const FeatureWeight& f : fw) out.push_back(f.feature);
  return out;
}

// Seeded normal weights for a model of `classes` on `features` columns.
Model random_model(std::vector<std::string> classes, Index features, unsigned seed) {
  Model m = Model::zeros(std::move(classes), false, features);
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.5f);
  for (float& w : m.weight) w = normal(rng);
  for (float& b : m.bias) b = normal(rng);
  return m;
}

const std::string kFortunesTest = std::string(BAGEL_TEST_DATA) + "/../../data/fortunes-multi/test.npz";

TEST(InspectWeights, LargestAndSmallestWithTiesByFeatureIndex) {
  const Model m = three_class_model({{0.5f, -1.0f, 0.5f, 2.0f, -1.0f},
                                     {0.0f, -0.0f, 3.0f, 0.0f, 0.0f},
                                     {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}},
                                    {0.1f, 0.2f, 0.3f});
  const WeightsReport r = inspect_weights(m, 2);
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_EQ(features_of(r.outputs[0].largest), (std::vector<Index>{3, 0}));
  EXPECT_EQ(features_of(r.outputs[0].smallest), (std::vector<Index>{1, 4}));
  EXPECT_EQ(features_of(r.outputs[2].largest), (std::vector<Index>{0, 1}));
  EXPECT_EQ(features_of(r.outputs[2].smallest), (std::vector<Index>{0, 1}));
  EXPECT_EQ(r.outputs[0].largest[0].weight, 2.0f);
  EXPECT_EQ(r.outputs[1].favoured, "b");
  EXPECT_TRUE(r.outputs[1].disfavoured.empty());
  EXPECT_EQ(r.outputs[1].bias, 0.2f);
}

TEST(InspectWeights, StatisticsCountExactZerosAndNorms) {
  const Model m = three_class_model({{0.5f, -1.0f, 0.5f, 2.0f, -1.0f},
                                     {0.0f, -0.0f, 3.0f, 0.0f, 0.0f},
                                     {1.0f, 1.0f, 1.0f, 1.0f, 1.0f}},
                                    {0, 0, 0});
  const WeightsReport r = inspect_weights(m, 1);
  const WeightStats& a = r.outputs[0].stats;
  EXPECT_EQ(a.weights, 5);
  EXPECT_EQ(a.nonzero, 5);
  EXPECT_DOUBLE_EQ(a.l1, 5.0);
  EXPECT_DOUBLE_EQ(a.l2, std::sqrt(0.25 + 1 + 0.25 + 4 + 1));
  EXPECT_DOUBLE_EQ(a.max_abs, 2.0);
  EXPECT_EQ(r.outputs[1].stats.nonzero, 1);  // -0.0 is a zero
  EXPECT_EQ(r.overall.weights, 15);
  EXPECT_EQ(r.overall.nonzero, 11);
  EXPECT_DOUBLE_EQ(r.overall.l1, 5.0 + 3.0 + 5.0);
  EXPECT_DOUBLE_EQ(r.overall.l2, std::sqrt(6.5 + 9 + 5));
  EXPECT_DOUBLE_EQ(r.overall.max_abs, 3.0);
}

TEST(InspectWeights, SelectedOutputsAndTopBeyondTheFeatures) {
  const Model m = random_model({"x", "y", "z", "w"}, 3, 1);
  const std::vector<int> outputs = {2};
  const WeightsReport r = inspect_weights(m, 10, outputs);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].favoured, "z");
  EXPECT_EQ(r.outputs[0].largest.size(), 3u);
  EXPECT_EQ(r.overall.weights, 12);  // overall is the whole model
}

TEST(InspectWeights, BinaryModelsHaveOneColumnFavouringTheSecondClass) {
  const Model m = random_model({"neg", "pos"}, 4, 2);
  const WeightsReport r = inspect_weights(m, 2);
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].favoured, "pos");
  EXPECT_EQ(r.outputs[0].disfavoured, "neg");
  EXPECT_EQ(output_of_class(m, "neg", "--class"), 0);
  EXPECT_EQ(output_of_class(m, "pos", "--class"), 0);
}

TEST(InspectWeights, UnknownClassIsAUsageErrorListingTheClasses) {
  const Model m = random_model({"ham", "spam", "eggs"}, 4, 3);
  EXPECT_EQ(output_of_class(m, "eggs", "--class"), 2);
  try {
    output_of_class(m, "bacon", "--class");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--class: 'bacon' is not a class of the model (classes: ham, spam, eggs)");
  }
}

TEST(TrainingSummary, CopiesTheRecordedKeysOnly) {
  Model m = Model::zeros({"a", "b"}, false, 2);
  m.config = {{"optimizer", {{"l2", 1e-4}, {"l1", 0.0}, {"schedule", "linear"}}},
              {"train", {{"features", "/data/train.npz"}}},
              {"valid", nullptr}};
  m.training = {{"epochs", 7},
                {"epochs_run", 5},
                {"learning_rate", 0.25},
                {"train_rows", 1234},
                {"train_metrics", {{"accuracy", 0.9}, {"log_loss", 0.3}}}};
  const nlohmann::json s = training_summary(m);
  EXPECT_EQ(s.at("train"), "/data/train.npz");
  EXPECT_EQ(s.at("epochs"), 7);
  EXPECT_EQ(s.at("epochs_run"), 5);
  EXPECT_EQ(s.at("learning_rate"), 0.25);
  EXPECT_EQ(s.at("l2"), 1e-4);
  EXPECT_EQ(s.at("schedule"), "linear");
  EXPECT_EQ(s.at("train_rows"), 1234);
  EXPECT_EQ(s.at("train_accuracy"), 0.9);
  EXPECT_FALSE(s.contains("valid"));           // null in the config
  EXPECT_FALSE(s.contains("valid_accuracy"));  // not recorded
  EXPECT_FALSE(s.contains("batch_size"));
  EXPECT_FALSE(s.contains("average"));
  // "auto" in the config, what it resolved to in the training record.
  m.config["optimizer"]["average"] = "auto";
  EXPECT_EQ(training_summary(m).at("average"), "auto");  // a model from before training.average
  m.training["average"] = true;
  EXPECT_EQ(training_summary(m).at("average"), true);
}

TEST(ExplainRow, ContributionsAndBiasSumToPredictsLogitOnRealRows) {
  const CsrMatrix x = read_npz_csr(kFortunesTest);
  const Model m = random_model({"computers", "food", "love", "politics", "sports", "startrek"},
                               x.cols(), 4);
  std::vector<double> logits(static_cast<std::size_t>(m.num_outputs));
  std::vector<double> proba(static_cast<std::size_t>(m.num_classes()));
  for (Index row = 0; row < x.rows(); row += 37) {
    const RowExplanation e = explain_row(m, x, row, "test.npz");
    predict_logits_rows(m, x, row, row + 1, logits.data());
    predict_proba_rows(m, x, row, row + 1, proba.data());
    EXPECT_EQ(e.predicted, std::max_element(proba.begin(), proba.end()) - proba.begin());
    EXPECT_EQ(e.logit, logits[static_cast<std::size_t>(e.predicted)]);
    double scale = std::abs(e.bias), sum = e.bias, versus = e.versus_bias;
    for (const Contribution& c : e.contributions) {
      scale += std::abs(c.contribution);
      sum += c.contribution;
      versus += c.versus_runner_up;
    }
    EXPECT_NEAR(sum, e.contribution_sum, 1e-12 * scale);  // the same sum, in another order
    // The kernel sums in float: the same value within float rounding.
    EXPECT_NEAR(e.contribution_sum, e.logit, 1e-6 * scale + 1e-7) << "row " << row;
    EXPECT_NEAR(versus, e.margin, 2e-6 * scale + 1e-7) << "row " << row;
    EXPECT_EQ(e.contributions.size(), x.row(row).size());
    for (std::size_t i = 1; i < e.contributions.size(); ++i)
      EXPECT_GE(std::abs(e.contributions[i - 1].contribution), std::abs(e.contributions[i].contribution));
  }
}

TEST(ExplainRow, BinaryExplainsTheScoreAndSignsTheComparison) {
  const CsrMatrix x = read_npz_csr(kFortunesTest);
  const Model m = random_model({"neg", "pos"}, x.cols(), 5);
  std::vector<double> logit(1);
  int seen[2] = {0, 0};
  for (Index row = 0; row < x.rows(); row += 11) {
    const RowExplanation e = explain_row(m, x, row, "test.npz", ExplainOrder::kVersusRunnerUp);
    predict_logits_rows(m, x, row, row + 1, logit.data());
    EXPECT_EQ(e.output, 0);
    EXPECT_EQ(e.logit, logit[0]);
    EXPECT_EQ(e.predicted, logit[0] > 0 ? 1 : 0);
    EXPECT_EQ(e.runner_up, 1 - e.predicted);
    EXPECT_EQ(e.margin, e.predicted == 1 ? e.logit : -e.logit);
    for (const Contribution& c : e.contributions)
      EXPECT_EQ(c.versus_runner_up, e.predicted == 1 ? c.contribution : -c.contribution);
    ++seen[e.predicted];
  }
  EXPECT_GT(seen[0], 0);
  EXPECT_GT(seen[1], 0);
}

TEST(ExplainRow, RowOutsideTheInputIsAUsageError) {
  const CsrMatrix x = read_npz_csr(kFortunesTest);
  const Model m = random_model({"a", "b"}, x.cols(), 6);
  try {
    explain_row(m, x, x.rows(), "test.npz");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--row: " + std::to_string(x.rows()) + " is not a row of test.npz (" +
                                         std::to_string(x.rows()) + " rows, numbered from 0)");
  }
  EXPECT_THROW(explain_row(m, x, -1, "test.npz"), UsageError);
}

TEST(FeatureNames, ModelVocabularyOrGivenFileOfTheRightLength) {
  TempDir dir;
  const Model m = random_model({"a", "b"}, 3, 7);
  EXPECT_TRUE(feature_names(m, dir.path().string(), "").empty());
  write_vocabulary_file(dir.path(kVocabularyFileName), {"one", "two", "three"});
  std::string found;
  EXPECT_EQ(feature_names(m, dir.path().string(), "", &found),
            (std::vector<std::string>{"one", "two", "three"}));
  EXPECT_EQ(found, dir.path(kVocabularyFileName));
  const std::string other = dir.write("other.txt", "x\ny\nz\n");
  EXPECT_EQ(feature_names(m, dir.path().string(), other)[0], "x");
  const std::string short_one = dir.write("short.txt", "x\ny\n");
  try {
    feature_names(m, "runs/m", short_one);
    FAIL() << "no error";
  } catch (const FileError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("short.txt: has 2 terms but the model in runs/m has 3 features"),
              std::string::npos)
        << msg;
  }
}

TEST(TextTable, PadsColumnsByCodePoints) {
  TextTable t({TextTable::Align::kLeft, TextTable::Align::kRight});
  t.add_row({"caf\xc3\xa9", "1"});
  t.add_row({"ab", "100"});
  t.add_row({"x"});
  EXPECT_EQ(t.render("> "), "> caf\xc3\xa9    1\n> ab    100\n> x\n");
}

}  // namespace
}  // namespace bagel
