// bagel tune (tune.h): the plan around the defaults, the pick, the budget.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <set>
#include <sstream>

#include "bagel/error.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/synthetic.h"
#include "bagel/trainer.h"
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

TEST(Tune, TheHeldOutPartIsStratifiedAndLeavesEveryClassSomethingToTrainOn) {
  Dataset d = counts(80, 5);
  // Classes of 50, 29 and 1 rows: a plain 20% would hold the lone row out at
  // about one seed in five, leaving its class nothing to learn from.
  for (std::size_t i = 0; i < d.y.size(); ++i) d.y[i] = i == 37 ? 2 : (i % 8 < 5 ? 0 : 1);
  std::array<int, 3> total{};
  for (const std::int32_t label : d.y) ++total[static_cast<std::size_t>(label)];
  ASSERT_EQ(total, (std::array<int, 3>{50, 29, 1}));
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    const auto [fit, held] = split_holdout(d, 0.2, seed);
    EXPECT_EQ(held.x.rows(), 16);  // 20% of 80
    std::array<int, 3> out{};
    for (const std::int32_t label : held.y) ++out[static_cast<std::size_t>(label)];
    // 10 and 5.8 -> 6 of the two large classes; the lone row stays to train on.
    EXPECT_EQ(out, (std::array<int, 3>{10, 6, 0})) << "seed " << seed;
    EXPECT_EQ(fit.x.rows() + held.x.rows(), 80);
  }
  // The seed decides which rows.
  EXPECT_NE(split_holdout(d, 0.2, 1).second.y, split_holdout(d, 0.2, 2).second.y);
}

TEST(Tune, EqualSharesOfTheHeldOutPartGoToClassesTheSeedPicks) {
  // 30 classes of 2 rows: 0.4 of a row each, 12 held out in all. Picked by
  // class number, every seed would judge on the same 12 classes.
  Dataset d = counts(60, 8);
  for (std::size_t i = 0; i < d.y.size(); ++i) d.y[i] = static_cast<std::int32_t>(i / 2);
  std::set<std::vector<std::int32_t>> judged;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const auto [fit, held] = split_holdout(d, 0.2, seed);
    EXPECT_EQ(held.x.rows(), 12);
    EXPECT_EQ(std::set<std::int32_t>(held.y.begin(), held.y.end()).size(), 12u);  // one row a class
    EXPECT_EQ(std::set<std::int32_t>(fit.y.begin(), fit.y.end()).size(), 30u);    // every class trains
    judged.insert(held.y);
  }
  EXPECT_EQ(judged.size(), 5u);
  // Every class a single row: nothing can be held out, and the error says why.
  for (std::size_t i = 0; i < d.y.size(); ++i) d.y[i] = static_cast<std::int32_t>(i);
  try {
    split_holdout(d, 0.2, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("every class of the 60 training rows has a single row"),
              std::string::npos) << e.what();
  }
}

TEST(Tune, ATrialThatDivergesRestartsAtATenthOfTheRateAsTrainDoes) {
  const auto [train, valid] = split_holdout(counts(1000, 6), 0.2, 42);
  OptimizerConfig base;
  base.learning_rate = 1e3;  // x 1/4 .. x 4: diverges at every point of the grid
  base.epochs = 2;
  std::ostringstream log;
  Progress progress(Progress::Mode::kLines, log);
  const TuneResult r = tune(train, valid, 3, Head::kSoftmax, base, LayerKind::kSparse, 600, 2, progress);
  ASSERT_EQ(r.trials.size(), 40u);
  for (const TuneTrial& t : r.trials) {
    ASSERT_TRUE(t.ran);
    EXPECT_TRUE(t.error.empty()) << t.error;
    ASSERT_GT(t.diverged_rate, 0);
    // Some power of ten below the grid's rate, which train would reach too.
    const double tenths = std::log10(t.diverged_rate / t.settings.learning_rate);
    EXPECT_NEAR(tenths, std::round(tenths), 1e-9);
    EXPECT_GE(tenths, 1);
    // The model of the rate it trained at: train at that rate gives it.
    EXPECT_GT(t.valid_accuracy, 0.5);
  }
  EXPECT_NE(log.str().find("diverged, restarted at"), std::string::npos) << log.str();
  // The written rate trains without a restart to the trial's score.
  const TuneTrial& best = r.trials[r.best];
  Model m = Model::zeros({"0", "1", "2"}, true, train.x.cols(), best.head);
  std::ostringstream quiet_log;
  Progress quiet(Progress::Mode::kQuiet, quiet_log);
  const TrainingSummary s = train_model(m, train, nullptr, best.settings, LayerKind::kSparse, quiet);
  EXPECT_TRUE(s.restarts.empty());
  EXPECT_EQ(evaluate(m, valid.x, valid.y, 1).accuracy, best.valid_accuracy);
}

TEST(Tune, CountsTheGridPointsWhoseDecayWouldReverseTheWeights) {
  const auto [train, valid] = split_holdout(counts(1000, 7), 0.2, 42);
  OptimizerConfig base;
  base.learning_rate = 2e4;  // x 1/4 .. x 4: 5e3 .. 8e4; with l2 1e-4 all but 5e3 reach 1
  base.epochs = 1;
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  const TuneResult r = tune(train, valid, 3, Head::kSoftmax, base, LayerKind::kSparse, 1e-9, 1, quiet);
  EXPECT_EQ(r.grid_left_out, 2 * 4);  // at both epoch counts
  EXPECT_EQ(r.trials.size() + static_cast<std::size_t>(r.grid_left_out), 40u);
  for (const TuneTrial& t : r.trials) EXPECT_LT(t.settings.learning_rate * t.settings.l2, 1);
}

}  // namespace
}  // namespace bagel
