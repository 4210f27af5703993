// bagel tune (tune.h): the plan around the defaults, the pick, the budget.
#include <gtest/gtest.h>

#include <sstream>

#include "bagel/error.h"
#include "bagel/synthetic.h"
#include "bagel/tune.h"
#include "train_helpers.h"

namespace bagel {
namespace {

Dataset counts(Index rows, std::uint64_t seed) { return synthetic(3, rows, seed, 3000, 30); }

TEST(Tune, TriesTheDefaultsFirstAndPicksTheBestValidAccuracy) {
  const auto [train, valid] = split_holdout(counts(3000, 1), 0.2, 42);
  EXPECT_EQ(valid.x.rows(), 600);
  std::ostringstream log;
  Progress progress(Progress::Mode::kLines, log);
  const TuneResult r = tune(train, valid, 3, Head::kSoftmax, OptimizerConfig{}, LayerKind::kSparse, 600, 2, progress);
  ASSERT_EQ(r.trials.size(), 40u);  // 5 rates x 4 l2 x 2 epoch counts
  EXPECT_FALSE(r.budget_cut);
  const OptimizerConfig& first = r.trials.front().settings;
  EXPECT_EQ(first.epochs, auto_epochs(train.x, first.average));
  EXPECT_EQ(first.l2, 0);
  double lowest = 1e9, highest = 0;
  for (const TuneTrial& t : r.trials) {
    ASSERT_TRUE(t.ran);
    EXPECT_TRUE(t.error.empty()) << t.error;
    EXPECT_GE(r.trials[r.best].valid_accuracy, t.valid_accuracy);
    lowest = std::min(lowest, t.settings.learning_rate);
    highest = std::max(highest, t.settings.learning_rate);
  }
  EXPECT_DOUBLE_EQ(highest / lowest, 16.0);  // x 1/4 .. x 4 of the calibrated rate
  EXPECT_NE(log.str().find("trial 40/40"), std::string::npos);
}

TEST(Tune, WithoutAMulticlassHeadTriesSoftmaxAndOneVsRestAtEachPoint) {
  const auto [train, valid] = split_holdout(counts(2000, 4), 0.2, 42);
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  const TuneResult r = tune(train, valid, 3, std::nullopt, OptimizerConfig{}, LayerKind::kSparse, 600, 2, quiet);
  ASSERT_EQ(r.trials.size(), 80u);
  for (std::size_t i = 0; i < r.trials.size(); i += 2) {
    // The default head first: the very first trial is the defaults.
    EXPECT_EQ(r.trials[i].head, Head::kOneVsRest);
    EXPECT_EQ(r.trials[i + 1].head, Head::kSoftmax);
    EXPECT_EQ(r.trials[i].settings.learning_rate, r.trials[i + 1].settings.learning_rate);
    EXPECT_EQ(r.trials[i].settings.l2, r.trials[i + 1].settings.l2);
    // The two heads learn different models.
    EXPECT_NE(r.trials[i].valid_log_loss, r.trials[i + 1].valid_log_loss);
  }
  // Two classes have one head, the sigmoid.
  const auto [train2, valid2] = split_holdout(synthetic(2, 2000, 5, 3000, 30), 0.2, 42);
  const TuneResult b = tune(train2, valid2, 2, std::nullopt, OptimizerConfig{}, LayerKind::kSparse, 600, 2, quiet);
  ASSERT_EQ(b.trials.size(), 40u);
  for (const TuneTrial& t : b.trials) EXPECT_EQ(t.head, Head::kSigmoid);
}

TEST(Tune, ABudgetTooShortForMoreStillRunsTheDefaults) {
  const auto [train, valid] = split_holdout(counts(3000, 2), 0.2, 42);
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  const TuneResult r = tune(train, valid, 3, Head::kSoftmax, OptimizerConfig{}, LayerKind::kSparse, 1e-9, 1, quiet);
  EXPECT_TRUE(r.trials.front().ran);
  EXPECT_TRUE(r.budget_cut);
  EXPECT_EQ(r.best, 0u);
  for (std::size_t i = 1; i < r.trials.size(); ++i) EXPECT_FALSE(r.trials[i].ran);
}

TEST(Tune, BudgetMustBePositiveAndTinyDataCannotBeSplit) {
  const auto [train, valid] = split_holdout(counts(100, 3), 0.2, 1);
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  for (const double bad : {0.0, -1.0}) {
    try {
      tune(train, valid, 3, Head::kSoftmax, OptimizerConfig{}, LayerKind::kSparse, bad, 1, quiet);
      FAIL() << bad;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.field(), "--budget");
    }
  }
  EXPECT_THROW(split_holdout(counts(2, 3), 0.2, 1), Error);
}

}  // namespace
}  // namespace bagel
