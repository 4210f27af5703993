// Metrics against hand-checkable cases; the randomized cross-check against
// scikit-learn itself lives in tests/interop/test_metrics.py.
#include "bagel/metrics.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bagel/error.h"

namespace bagel {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();

// Rows that put `confidence` on the given class and share the rest equally,
// so the arg-max is the class we want without probabilities of 0 or 1.
std::vector<double> confident_rows(const std::vector<std::int32_t>& predicted, int num_classes,
                                   double confidence = 0.7) {
  const double rest = (1.0 - confidence) / (num_classes - 1);
  std::vector<double> proba;
  for (const std::int32_t c : predicted) {
    for (int k = 0; k < num_classes; ++k) proba.push_back(k == c ? confidence : rest);
  }
  return proba;
}

std::vector<double> one_hot_rows(const std::vector<std::int32_t>& predicted, int num_classes) {
  return confident_rows(predicted, num_classes, 1.0);
}

// Binary rows from positive-class scores.
std::vector<double> binary_rows(const std::vector<double>& positive) {
  std::vector<double> proba;
  for (const double p : positive) {
    proba.push_back(1.0 - p);
    proba.push_back(p);
  }
  return proba;
}

// Random rows of k classes: probabilities from random logits, labels at random.
void random_case(int k, int n, unsigned seed, std::vector<std::int32_t>& y,
                 std::vector<double>& p) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z(0.0, 2.0);
  y.resize(n);
  p.resize(static_cast<std::size_t>(n) * k);
  for (int r = 0; r < n; ++r) {
    y[r] = static_cast<std::int32_t>(rng() % k);
    double sum = 0;
    for (int c = 0; c < k; ++c) sum += (p[r * k + c] = std::exp(z(rng)));
    for (int c = 0; c < k; ++c) p[r * k + c] /= sum;
  }
}

TEST(MetricsAccumulator, ChunksGiveExactlyTheWholeInputsMetrics) {
  for (int k : {2, 5}) {
    std::vector<std::int32_t> y;
    std::vector<double> p;
    random_case(k, 1000, 3 + k, y, p);
    const Metrics whole = compute_metrics(y, p, k);
    MetricsAccumulator acc(k);
    for (std::size_t begin : {0, 1, 400, 999}) {  // chunks of 1, 399, 599 and 1 rows
      const std::size_t end = begin == 0 ? 1 : begin == 1 ? 400 : begin == 400 ? 999 : 1000;
      acc.add(std::span<const std::int32_t>(y).subspan(begin, end - begin),
              std::span<const double>(p).subspan(begin * k, (end - begin) * k));
    }
    const Metrics chunked = acc.finish();
    EXPECT_EQ(chunked.rows, 1000);
    EXPECT_EQ(chunked.accuracy, whole.accuracy);
    EXPECT_EQ(chunked.log_loss, whole.log_loss);
    EXPECT_EQ(chunked.macro_f1, whole.macro_f1);
    EXPECT_EQ(chunked.confusion, whole.confusion);
    EXPECT_EQ(chunked.roc_auc, whole.roc_auc);
    EXPECT_EQ(chunked.roc_auc.has_value(), k == 2);
  }
}

TEST(MetricsAccumulator, ErrorsCountRowsFromTheFirstChunkAndEmptyInputIsRefused) {
  MetricsAccumulator acc(2);
  EXPECT_THROW(acc.finish(), Error);
  acc.add(std::vector<std::int32_t>{0, 1}, std::vector<double>{0.5, 0.5, 0.2, 0.8});
  try {
    acc.add(std::vector<std::int32_t>{1, 7}, std::vector<double>{0.5, 0.5, 0.2, 0.8});
    FAIL() << "a class id out of range was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 3 has class id 7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MetricsAccumulator(1), Error);
}

TEST(MetricsAccumulator, GivenPredictedClassesCountOverTiedProbabilities) {
  // Two rows whose probabilities tie (as saturated one-vs-rest shares do):
  // the given classes decide, not the first of the tied columns.
  const std::vector<std::int32_t> truth{1, 2};
  const std::vector<double> proba{0.0, 0.5, 0.5, 0.0, 0.5, 0.5};
  MetricsAccumulator by_proba(3);
  by_proba.add(truth, proba);
  EXPECT_EQ(by_proba.finish().accuracy, 0.5);
  MetricsAccumulator given(3);
  given.add(truth, proba, std::vector<std::int32_t>{1, 2});
  const Metrics m = given.finish();
  EXPECT_EQ(m.accuracy, 1.0);
  EXPECT_EQ(m.log_loss, by_proba.finish().log_loss);
  MetricsAccumulator bad(3);
  EXPECT_THROW(bad.add(truth, proba, std::vector<std::int32_t>{1, 3}), Error);
  EXPECT_THROW(bad.add(truth, proba, std::vector<std::int32_t>{1}), Error);
}

TEST(Metrics, PerfectPredictionsScoreOneEverywhere) {
  const std::vector<std::int32_t> y = {0, 1, 2, 2, 1, 0};
  const Metrics m = compute_metrics(y, confident_rows(y, 3), 3);
  EXPECT_EQ(m.rows, 6);
  EXPECT_DOUBLE_EQ(m.accuracy, 1.0);
  EXPECT_DOUBLE_EQ(m.macro_f1, 1.0);
  EXPECT_NEAR(m.log_loss, -std::log(0.7), 1e-15);
  for (const ClassReport& report : m.per_class) {
    EXPECT_DOUBLE_EQ(report.precision, 1.0);
    EXPECT_DOUBLE_EQ(report.recall, 1.0);
    EXPECT_EQ(report.support, 2);
  }
  EXPECT_FALSE(m.roc_auc.has_value());  // three classes: no AUC
}

TEST(Metrics, AllWrongBinaryScoresZeroAndAucZero) {
  const std::vector<std::int32_t> y = {0, 1, 1, 0};
  const std::vector<std::int32_t> wrong = {1, 0, 0, 1};
  const Metrics m = compute_metrics(y, confident_rows(wrong, 2, 0.9), 2);
  EXPECT_DOUBLE_EQ(m.accuracy, 0.0);
  EXPECT_DOUBLE_EQ(m.macro_f1, 0.0);
  ASSERT_TRUE(m.roc_auc.has_value());
  EXPECT_DOUBLE_EQ(*m.roc_auc, 0.0);
  EXPECT_NEAR(m.log_loss, -std::log(0.1), 1e-12);
  EXPECT_EQ(m.confusion[0][1], 2);
  EXPECT_EQ(m.confusion[1][0], 2);
}

TEST(Metrics, ConfusionMatrixIsIndexedTrueThenPredicted) {
  const std::vector<std::int32_t> y = {0, 0, 0, 1};
  const std::vector<std::int32_t> predicted = {1, 1, 0, 1};
  const Metrics m = compute_metrics(y, confident_rows(predicted, 2), 2);
  EXPECT_EQ(m.confusion[0][0], 1);
  EXPECT_EQ(m.confusion[0][1], 2);  // true 0 predicted 1, twice
  EXPECT_EQ(m.confusion[1][0], 0);
  EXPECT_EQ(m.confusion[1][1], 1);
}

TEST(Metrics, PrecisionRecallF1FollowTheirDefinitions) {
  // Class 0: tp 1, predicted 2, support 2. Class 1: tp 2, predicted 3,
  // support 2. Class 2: never predicted, support 1.
  const std::vector<std::int32_t> y = {0, 0, 1, 1, 2};
  const std::vector<std::int32_t> predicted = {0, 1, 1, 1, 0};
  const Metrics m = compute_metrics(y, confident_rows(predicted, 3), 3);
  EXPECT_DOUBLE_EQ(m.per_class[0].precision, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].recall, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].f1, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[1].precision, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(m.per_class[1].recall, 1.0);
  EXPECT_DOUBLE_EQ(m.per_class[1].f1, 0.8);
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 0.0);  // zero_division=0
  EXPECT_DOUBLE_EQ(m.per_class[2].recall, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[2].f1, 0.0);
  EXPECT_EQ(m.per_class[2].support, 1);
  EXPECT_DOUBLE_EQ(m.accuracy, 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(m.macro_f1, (0.5 + 0.8 + 0.0) / 3.0);
}

TEST(Metrics, ClassAbsentFromTruthAndPredictionsCountsAsZeroInMacroF1) {
  const std::vector<std::int32_t> y = {0, 1, 0, 1};
  const Metrics m = compute_metrics(y, confident_rows(y, 4), 4);
  ASSERT_EQ(m.per_class.size(), 4u);
  EXPECT_EQ(m.per_class[3].support, 0);
  EXPECT_DOUBLE_EQ(m.per_class[3].f1, 0.0);
  EXPECT_DOUBLE_EQ(m.per_class[2].f1, 0.0);
  EXPECT_DOUBLE_EQ(m.macro_f1, 0.5);  // two perfect classes out of four
  EXPECT_DOUBLE_EQ(m.accuracy, 1.0);
}

TEST(Metrics, UniformProbabilitiesGiveLogLossOfLogK) {
  for (const int k : {2, 3, 7}) {
    const std::vector<std::int32_t> y = {0, 1, 1, 0, 1};
    const std::vector<double> proba(y.size() * static_cast<std::size_t>(k), 1.0 / k);
    const Metrics m = compute_metrics(y, proba, k);
    EXPECT_NEAR(m.log_loss, std::log(static_cast<double>(k)), 1e-14) << "k=" << k;
  }
}

TEST(Metrics, TiedRowPredictsTheFirstMaximum) {
  const std::vector<std::int32_t> y = {1, 2};
  const std::vector<double> proba = {0.2, 0.4, 0.4, 0.4, 0.2, 0.4};
  const Metrics m = compute_metrics(y, proba, 3);
  EXPECT_EQ(m.confusion[1][1], 1);  // row 0: classes 1 and 2 tie, 1 wins
  EXPECT_EQ(m.confusion[2][0], 1);  // row 1: classes 0 and 2 tie, 0 wins
}

TEST(Metrics, ZeroProbabilityOnTrueClassIsClippedToEps) {
  const std::vector<std::int32_t> y = {1};
  const Metrics m = compute_metrics(y, binary_rows({0.0}), 2);
  // Clipped to [eps, 1 - eps], whose sum is exactly 1: loss = -log(eps).
  EXPECT_TRUE(std::isfinite(m.log_loss));
  EXPECT_DOUBLE_EQ(m.log_loss, 52.0 * std::log(2.0));
}

TEST(Metrics, CertainCorrectPredictionLosesOnlyEpsAfterClipping) {
  const std::vector<std::int32_t> y = {0, 1};
  const Metrics m = compute_metrics(y, one_hot_rows(y, 2), 2);
  EXPECT_GT(m.log_loss, 0.0);  // 1 is clipped to 1 - eps
  EXPECT_NEAR(m.log_loss, kEps, 1e-20);
}

TEST(Metrics, RowsNotSummingToOneAreRenormalisedAsSklearn12Does) {
  const std::vector<std::int32_t> y = {0};
  const std::vector<double> proba = {0.2, 0.2};
  const Metrics m = compute_metrics(y, proba, 2);
  EXPECT_DOUBLE_EQ(m.log_loss, std::log(2.0));  // not -log(0.2)
}

TEST(Metrics, RocAucOfSeparableScoresIsOne) {
  const std::vector<std::int32_t> y = {0, 0, 1, 1};
  const Metrics m = compute_metrics(y, binary_rows({0.1, 0.2, 0.6, 0.9}), 2);
  ASSERT_TRUE(m.roc_auc.has_value());
  EXPECT_DOUBLE_EQ(*m.roc_auc, 1.0);
}

TEST(Metrics, RocAucCountsTiedPairsAsHalf) {
  // Positives score 0.6, 0.6; negatives 0.2, 0.6. Pairs: two wins (vs 0.2),
  // two ties (vs 0.6): (2 + 2 / 2) / 4.
  const std::vector<std::int32_t> y = {0, 1, 1, 0};
  const std::vector<double> score = {0.2, 0.6, 0.6, 0.6};
  EXPECT_DOUBLE_EQ(*binary_roc_auc(y, score), 0.75);
}

TEST(Metrics, RocAucOfConstantScoresIsOneHalf) {
  const std::vector<std::int32_t> y = {0, 1, 1, 0, 1};
  const std::vector<double> score(y.size(), 0.3);
  EXPECT_DOUBLE_EQ(*binary_roc_auc(y, score), 0.5);
}

TEST(Metrics, RocAucAbsentWhenOnlyOneClassIsPresent) {
  const std::vector<std::int32_t> y = {1, 1, 1};
  const Metrics m = compute_metrics(y, binary_rows({0.2, 0.7, 0.9}), 2);
  EXPECT_FALSE(m.roc_auc.has_value());
  EXPECT_FALSE(metrics_to_json(m, {"a", "b"}).contains("roc_auc"));
  EXPECT_EQ(metrics_summary(m).find("roc_auc"), std::string::npos);
}

// Definition of AUC as the probability that a random positive outscores a
// random negative, ties 1/2, counted over every pair: O(n^2), independent of
// the sort-and-trapezoid code under test.
double auc_by_pairs(const std::vector<std::int32_t>& y, const std::vector<double>& score) {
  double wins = 0, pairs = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (std::size_t j = 0; j < y.size(); ++j) {
      if (y[i] != 1 || y[j] != 0) continue;
      pairs += 1;
      wins += score[i] > score[j] ? 1.0 : score[i] == score[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

TEST(Metrics, RocAucEqualsPairCountOnRandomScoresWithManyTies) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t n = 50 + static_cast<std::size_t>(trial) * 13;
    std::bernoulli_distribution positive(0.3);
    std::uniform_int_distribution<int> level(0, 9);  // ten distinct scores: ties galore
    std::vector<std::int32_t> y(n);
    std::vector<double> score(n);
    for (std::size_t i = 0; i < n; ++i) {
      y[i] = positive(rng) ? 1 : 0;
      score[i] = level(rng) / 10.0 + (y[i] == 1 ? 0.05 * level(rng) : 0.0);
    }
    const auto auc = binary_roc_auc(y, score);
    ASSERT_TRUE(auc.has_value());
    EXPECT_NEAR(*auc, auc_by_pairs(y, score), 1e-12) << "trial " << trial;
  }
}

TEST(Metrics, JsonHasEveryFieldKeyedByClassName) {
  const std::vector<std::int32_t> y = {0, 1, 1};
  const std::vector<std::int32_t> predicted = {0, 1, 0};
  const Metrics m = compute_metrics(y, confident_rows(predicted, 2), 2);
  const nlohmann::json j = metrics_to_json(m, {"cat", "dog"});
  EXPECT_EQ(j.at("rows").get<std::int64_t>(), 3);
  EXPECT_DOUBLE_EQ(j.at("accuracy").get<double>(), m.accuracy);
  EXPECT_DOUBLE_EQ(j.at("log_loss").get<double>(), m.log_loss);
  EXPECT_DOUBLE_EQ(j.at("macro_f1").get<double>(), m.macro_f1);
  EXPECT_DOUBLE_EQ(j.at("roc_auc").get<double>(), *m.roc_auc);
  const nlohmann::json& dog = j.at("per_class").at("dog");
  EXPECT_DOUBLE_EQ(dog.at("precision").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(dog.at("recall").get<double>(), 0.5);
  EXPECT_EQ(dog.at("support").get<std::int64_t>(), 2);
  EXPECT_EQ(j.at("confusion_matrix").at("labels"), nlohmann::json({"cat", "dog"}));
  EXPECT_EQ(j.at("confusion_matrix").at("matrix"), nlohmann::json({{1, 0}, {1, 1}}));
}

TEST(Metrics, JsonDoublesRoundTripExactly) {
  const std::vector<std::int32_t> y = {0, 1, 2};
  const std::vector<double> proba = {0.31, 0.33, 0.36, 0.1, 0.7, 0.2, 0.25, 0.5, 0.25};
  const Metrics m = compute_metrics(y, proba, 3);
  const nlohmann::json j = nlohmann::json::parse(metrics_to_json(m, {"a", "b", "c"}).dump());
  EXPECT_EQ(j.at("log_loss").get<double>(), m.log_loss);
  EXPECT_FALSE(j.contains("roc_auc"));
}

TEST(Metrics, JsonRejectsWrongNumberOfClassNames) {
  const std::vector<std::int32_t> y = {0, 1};
  const Metrics m = compute_metrics(y, confident_rows(y, 2), 2);
  EXPECT_THROW(metrics_to_json(m, {"only-one"}), Error);
}

TEST(Metrics, SummaryIsOneLineWithFourDecimals) {
  const std::vector<std::int32_t> y = {0, 1, 1, 0};
  const Metrics m = compute_metrics(y, binary_rows({0.2, 0.9, 0.4, 0.1}), 2);
  const std::string line = metrics_summary(m);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_EQ(line.rfind("accuracy 0.7500  log_loss ", 0), 0u) << line;
  EXPECT_NE(line.find("  macro_f1 0.7333"), std::string::npos) << line;
  EXPECT_NE(line.find("  roc_auc 1.0000"), std::string::npos) << line;
}

TEST(Metrics, RejectsMismatchedSizes) {
  const std::vector<std::int32_t> y = {0, 1};
  const std::vector<double> proba = {0.5, 0.5, 0.5};
  EXPECT_THROW(compute_metrics(y, proba, 2), Error);
  const std::vector<double> score = {0.5};
  EXPECT_THROW(binary_roc_auc(y, score), Error);
}

TEST(Metrics, RejectsClassIdOutOfRange) {
  const std::vector<std::int32_t> y = {0, 2};
  try {
    compute_metrics(y, confident_rows({0, 1}, 2), 2);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("class id 2"), std::string::npos) << e.what();
  }
}

TEST(Metrics, RejectsNonFiniteProbability) {
  const std::vector<std::int32_t> y = {0};
  const std::vector<double> proba = {std::nan(""), 0.5};
  EXPECT_THROW(compute_metrics(y, proba, 2), Error);
}

TEST(Metrics, RejectsNoRowsAndFewerThanTwoClasses) {
  EXPECT_THROW(compute_metrics({}, {}, 2), Error);
  const std::vector<std::int32_t> y = {0};
  const std::vector<double> proba = {1.0};
  EXPECT_THROW(compute_metrics(y, proba, 1), Error);
}

TEST(Metrics, ManyClassesKeepPerClassScoresButNoQuadraticConfusionMatrix) {
  // 5,000 classes made a 376 MB model.json of training metrics.
  const int k = kMaxConfusionClasses + 1;
  const std::vector<std::int32_t> y = {0, 1, 2, 2};
  const std::vector<std::int32_t> predicted = {0, 2, 2, 1};
  const Metrics m = compute_metrics(y, confident_rows(predicted, k), k);
  EXPECT_TRUE(m.confusion.empty());
  ASSERT_EQ(m.per_class.size(), static_cast<std::size_t>(k));
  EXPECT_EQ(m.per_class[2].support, 2);
  EXPECT_DOUBLE_EQ(m.per_class[2].precision, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[2].recall, 0.5);
  EXPECT_DOUBLE_EQ(m.per_class[0].f1, 1.0);
  std::vector<std::string> names;
  for (int c = 0; c < k; ++c) names.push_back(std::to_string(c));
  const nlohmann::json j = metrics_to_json(m, names);
  EXPECT_FALSE(j.contains("confusion_matrix"));
  EXPECT_EQ(j.at("per_class").size(), static_cast<std::size_t>(k));
  // At the limit the matrix is still there.
  const int few = kMaxConfusionClasses;
  EXPECT_EQ(compute_metrics(y, confident_rows(predicted, few), few).confusion.size(),
            static_cast<std::size_t>(few));
}

}  // namespace
}  // namespace bagel
