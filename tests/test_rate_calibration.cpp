// learning_rate "auto" (rate_calibration.h) and the divergence guard of
// train_model (trainer.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <cmath>
#include <random>
#include <sstream>
#include <string>

#include "bagel/error.h"
#include "bagel/predict.h"
#include "bagel/rate_calibration.h"
#include "bagel/synthetic.h"
#include "bagel/trainer.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// Zipf count rows, as CountVectorizer makes them: ~40 distinct features a
// row with repeats, so |x|^2 is in the hundreds.
Dataset counts(int classes, Index rows, std::uint64_t seed) {
  return synthetic(classes, rows, seed, 4000, 40);
}

// The same rows with every value times `factor`.
Dataset scaled(const Dataset& d, float factor) {
  std::vector<float> data(d.x.data().begin(), d.x.data().end());
  for (float& v : data) v *= factor;
  return Dataset{d.name,
                 CsrMatrix(d.x.rows(), d.x.cols(),
                           std::vector<Index>(d.x.indptr().begin(), d.x.indptr().end()),
                           std::vector<Index>(d.x.indices().begin(), d.x.indices().end()),
                           std::move(data)),
                 d.y};
}

double accuracy(const Model& m, const Dataset& d) {
  return evaluate(m, d.x, d.y, 1).accuracy;
}

OptimizerConfig defaults() {
  OptimizerConfig c;
  c.threads = 1;        // the same model on every machine
  c.learning_rate = 0;  // "auto"
  c.schedule = ScheduleKind::kLinear;
  c.epochs = 5;
  return c;
}

TEST(RateCalibration, RateFollowsTheScaleOfTheRows) {
  // Values times 4 give |x|^2 times 16, and the candidates 16 times smaller.
  // The weights' trajectory is then the same up to the factor 4, but the
  // bias's is not (its input is 1 at every scale), so the pick may move by
  // one candidate; without the scaling it would move by four.
  const Dataset d = counts(2, 3000, 1);
  const RateCalibration a = calibrate_learning_rate(d, 2, Head::kSoftmax, defaults());
  const RateCalibration b = calibrate_learning_rate(scaled(d, 4.0f), 2, Head::kSoftmax, defaults());
  const RateCalibration c = calibrate_learning_rate(scaled(d, 0.25f), 2, Head::kSoftmax, defaults());
  EXPECT_DOUBLE_EQ(b.mean_squared_norm, a.mean_squared_norm * 16);
  EXPECT_LE(std::abs(std::log2(a.rate / (16 * b.rate))), 1.0) << a.rate << " vs " << b.rate;
  EXPECT_LE(std::abs(std::log2(16 * a.rate / c.rate)), 1.0) << a.rate << " vs " << c.rate;
  // The chosen rate is one of the trials, and not at the edge of the range.
  EXPECT_GT(a.rate, a.trials.front().rate);
  EXPECT_LT(a.rate, a.trials.back().rate);
  EXPECT_EQ(a.sample_rows, 2000);
}

// The rows of `d` listed in `rows` with every value times `factor`.
Dataset with_rows_scaled(const Dataset& d, const std::vector<Index>& rows, float factor) {
  std::vector<float> data(d.x.data().begin(), d.x.data().end());
  for (const Index r : rows)
    for (Index p = d.x.indptr()[static_cast<std::size_t>(r)]; p < d.x.indptr()[static_cast<std::size_t>(r) + 1]; ++p)
      data[static_cast<std::size_t>(p)] *= factor;
  return Dataset{d.name,
                 CsrMatrix(d.x.rows(), d.x.cols(),
                           std::vector<Index>(d.x.indptr().begin(), d.x.indptr().end()),
                           std::vector<Index>(d.x.indices().begin(), d.x.indices().end()),
                           std::move(data)),
                 d.y, d.weight};
}

TEST(RateCalibration, AFewHugeRowsDoNotSetTheScale) {
  // One row in a hundred 100 times longer (|x|^2 10,000 times the rest's,
  // a book among paragraphs): in the mean they put the centre ~100 times
  // too low, and every candidate with it. Their steps are clipped in
  // training; the centre is the other rows'.
  const Dataset d = counts(3, 1500, 3);
  std::vector<Index> huge;
  for (Index r = 0; r < d.x.rows(); r += 100) huge.push_back(r);
  const RateCalibration a = calibrate_learning_rate(d, 3, Head::kOneVsRest, defaults());
  const RateCalibration b =
      calibrate_learning_rate(with_rows_scaled(d, huge, 100.0f), 3, Head::kOneVsRest, defaults());
  EXPECT_NEAR(b.mean_squared_norm / a.mean_squared_norm, 1.0, 0.05);
  EXPECT_LE(std::abs(std::log2(b.rate / a.rate)), 1.0) << a.rate << " vs " << b.rate;
}

TEST(RateCalibration, RowsWeightedZeroDoNotChooseTheRate) {
  // A third of the rows relabelled at random and weighted 0: training
  // ignores them, so the candidates must be judged without them too (they
  // had favoured small rates, whose flat probabilities lose least on noise).
  const Dataset d = counts(3, 3000, 4);
  Dataset noisy = with_rows_scaled(d, {}, 1.0f);  // a copy
  noisy.weight.assign(static_cast<std::size_t>(d.x.rows()), 1.0f);
  std::mt19937_64 rng(5);
  for (std::size_t r = 0; r < noisy.y.size(); r += 3) {
    noisy.y[r] = static_cast<std::int32_t>(rng() % 3);
    noisy.weight[r] = 0.0f;
  }
  Dataset kept = with_rows_scaled(d, {}, 1.0f);
  kept.weight.assign(static_cast<std::size_t>(d.x.rows()), 1.0f);
  for (std::size_t r = 0; r < kept.y.size(); r += 3) kept.weight[r] = 0.0f;
  const RateCalibration clean = calibrate_learning_rate(kept, 3, Head::kOneVsRest, defaults());
  const RateCalibration weighted = calibrate_learning_rate(noisy, 3, Head::kOneVsRest, defaults());
  EXPECT_EQ(weighted.rate, clean.rate);
  for (std::size_t i = 0; i < clean.trials.size(); ++i)
    EXPECT_DOUBLE_EQ(weighted.trials[i].holdout_log_loss, clean.trials[i].holdout_log_loss);
}

TEST(RateCalibration, PicksTheRateOfTheBestHeldOutLossAndTriedBothNeighbours) {
  const Dataset d = counts(5, 3000, 2);
  const RateCalibration cal = calibrate_learning_rate(d, 5, Head::kSoftmax, defaults());
  double best = INFINITY;
  for (const RateTrial& t : cal.trials) best = std::min(best, t.holdout_log_loss);
  int neighbours = 0;
  for (const RateTrial& t : cal.trials) {
    if (t.rate == cal.rate) EXPECT_EQ(t.holdout_log_loss, best);
    const double octaves = std::abs(std::log2(t.rate / cal.rate));
    if (std::abs(octaves - 1) < 1e-9) ++neighbours;
  }
  EXPECT_EQ(neighbours, 2) << "the rates at half and twice the chosen one must have been tried";
}

TEST(RateCalibration, WithoutASignalTheRateOfLowestLossIsKeptWhereTheStartPredictsNoBetter) {
  // Labels shuffled away from the rows: no rate clearly beats the class
  // shares held out (at shuffle 6 none beats them at all; at shuffle 1 the
  // lowest loss goes to the rate that learns least, 2^-8), and 2^2 gets no
  // more held-out rows right, so the rate of lowest loss is kept: its
  // probabilities stay near the class shares, where 2^2's are confident
  // and wrong.
  for (const std::uint64_t shuffle : {6, 1}) {
    Dataset noise = counts(10, 600, 3);
    std::mt19937_64 rng(shuffle);
    std::shuffle(noise.y.begin(), noise.y.end(), rng);
    const RateCalibration none = calibrate_learning_rate(noise, 10, Head::kOneVsRest, defaults());
    EXPECT_FALSE(none.no_signal) << shuffle;
    EXPECT_GT(none.prior_log_loss, 2.0);  // ten classes: about log 10
    const RateTrial* best = &none.trials.front();
    const RateTrial* start = nullptr;
    for (const RateTrial& t : none.trials) {
      if (t.holdout_log_loss < best->holdout_log_loss) best = &t;
      if (std::abs(t.rate * none.mean_squared_norm - 4.0) < 1e-9) start = &t;
    }
    EXPECT_EQ(none.rate, best->rate) << shuffle;
    EXPECT_GE(best->holdout_log_loss, 0.95 * none.prior_log_loss);
    EXPECT_LT(best->holdout_log_loss, 1.05 * none.prior_log_loss) << "near the class shares";
    if (shuffle == 6) EXPECT_GE(best->holdout_log_loss, none.prior_log_loss);
    if (shuffle == 1) EXPECT_DOUBLE_EQ(best->holdout_log_loss, none.trials.front().holdout_log_loss) << "2^-8";
    ASSERT_NE(start, nullptr) << "2^2 was tried: the search starts there";
    EXPECT_GT(start->holdout_log_loss, 1.05 * none.prior_log_loss) << "2^2 is confident and wrong";
    EXPECT_FALSE(detail::predicts_clearly_better(*start, *best, 120));
  }
  // The same rows with their own labels: the best rate clearly beats them.
  const Dataset signal = counts(10, 600, 3);
  const RateCalibration some = calibrate_learning_rate(signal, 10, Head::kOneVsRest, defaults());
  EXPECT_FALSE(some.no_signal);
  double best = std::numeric_limits<double>::infinity();
  for (const RateTrial& t : some.trials) best = std::min(best, t.holdout_log_loss);
  EXPECT_LT(best, 0.95 * some.prior_log_loss);
  EXPECT_NEAR(some.prior_log_loss, 2.3, 0.1) << "ten classes of about equal counts";
}

TEST(RateCalibration, TheStartReplacesTheLowestLossOnlyWhereItGetsClearlyMoreRowsRight) {
  const auto trial = [](double accuracy) { return RateTrial{1.0, 2.3, accuracy}; };
  // Long licence texts, 45 held out: 2^-7 got 0.14 and 0.32 of them right,
  // 2^2 0.34 and 0.48 (test accuracy 0.28-0.33 against 0.53-0.57).
  EXPECT_TRUE(detail::predicts_clearly_better(trial(0.34), trial(0.14), 45));
  EXPECT_TRUE(detail::predicts_clearly_better(trial(0.48), trial(0.32), 45));
  // A weak binary signal, 200 held out: 0.48 against 0.46 is noise (2^2
  // then scored test log loss 1.32 where 2^-8 scored 0.69).
  EXPECT_FALSE(detail::predicts_clearly_better(trial(0.48), trial(0.46), 200));
  EXPECT_FALSE(detail::predicts_clearly_better(trial(0.5), trial(0.5), 1000));
  EXPECT_FALSE(detail::predicts_clearly_better(trial(0.4), trial(0.6), 45));
  // One standard error of an accuracy near 0.5 over 100 rows is 0.05.
  EXPECT_TRUE(detail::predicts_clearly_better(trial(0.56), trial(0.5), 100));
  EXPECT_FALSE(detail::predicts_clearly_better(trial(0.54), trial(0.5), 100));
}

// A weak binary signal: 15 distinct features of 500 a row, each 1, and the
// label drawn from the sigmoid of the row's sum of small normal weights.
Dataset weak_signal(Index rows, double strength, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, strength);
  std::vector<double> w(500);
  for (double& v : w) v = normal(rng);
  std::vector<Index> indptr{0}, indices;
  std::vector<std::int32_t> y;
  std::vector<Index> all(w.size());
  for (std::size_t j = 0; j < all.size(); ++j) all[j] = static_cast<Index>(j);
  for (Index r = 0; r < rows; ++r) {
    std::shuffle(all.begin(), all.end(), rng);
    std::vector<Index> row(all.begin(), all.begin() + 15);
    std::sort(row.begin(), row.end());
    double z = 0;
    for (const Index j : row) z += w[static_cast<std::size_t>(j)];
    indices.insert(indices.end(), row.begin(), row.end());
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(std::uniform_real_distribution<double>(0, 1)(rng) < 1 / (1 + std::exp(-z)) ? 1 : 0);
  }
  std::vector<float> data(indices.size(), 1.0f);
  return Dataset{"weak", CsrMatrix(rows, 500, std::move(indptr), std::move(indices), std::move(data)),
                 std::move(y)};
}

TEST(RateCalibration, AWeakSignalInsideTheRangeIsKept) {
  // The held-out loss has its minimum inside the range and beats the class
  // shares, by less than 5%: that is a signal, not the holdout preferring
  // to learn nothing, and its rate is taken (2^2 had scored a test log loss
  // three times that of the minimum on such data).
  OptimizerConfig c = defaults();
  c.epochs = 20;
  const Dataset d = weak_signal(1000, 0.3, 3);
  const RateCalibration cal = calibrate_learning_rate(d, 2, Head::kSoftmax, c);
  const RateTrial* best = &cal.trials.front();
  for (const RateTrial& t : cal.trials)
    if (t.holdout_log_loss < best->holdout_log_loss) best = &t;
  const double k = std::log2(best->rate * cal.mean_squared_norm);
  ASSERT_LT(best->holdout_log_loss, cal.prior_log_loss);
  ASSERT_GT(best->holdout_log_loss, 0.95 * cal.prior_log_loss) << "the data must sit in the window";
  ASSERT_GT(k, -5.5) << "the minimum must be inside the range";
  EXPECT_FALSE(cal.no_signal);
  EXPECT_EQ(cal.rate, best->rate);
}

TEST(RateCalibration, SameSeedSameRateAndOtherSeedsStillClose) {
  const Dataset d = counts(2, 5000, 3);
  OptimizerConfig c = defaults();
  const double a = calibrate_learning_rate(d, 2, Head::kSoftmax, c).rate;
  EXPECT_EQ(calibrate_learning_rate(d, 2, Head::kSoftmax, c).rate, a);
  c.seed = 7;
  const double b = calibrate_learning_rate(d, 2, Head::kSoftmax, c).rate;
  EXPECT_LE(std::abs(std::log2(b / a)), 2.0) << a << " vs " << b;
}

TEST(RateCalibration, AutoLearnsAtEveryScaleWhereAFixedRateFailsOnOne) {
  // The same rows as counts, as long documents (x 16) and as unit-ish rows
  // (x 1/16): "auto" learns all three alike; the old default, a constant
  // 0.1, swings the logits of the long rows by hundreds each step.
  const Dataset base = counts(2, 6000, 4);
  OptimizerConfig old = defaults();
  old.learning_rate = 0.1;
  old.schedule = ScheduleKind::kConstant;
  double worst_auto = 1, worst_old = 1;
  for (const float factor : {1.0f / 16, 1.0f, 16.0f}) {
    const Dataset d = scaled(base, factor);
    const double acc_auto = accuracy(train_sparse(d, 2, defaults()), d);
    const double acc_old = accuracy(train_sparse(d, 2, old), d);
    worst_auto = std::min(worst_auto, acc_auto);
    worst_old = std::min(worst_old, acc_old);
  }
  EXPECT_GT(worst_auto, 0.85);
  EXPECT_GT(worst_auto, worst_old + 0.05) << "auto " << worst_auto << ", constant 0.1 " << worst_old;
}

TEST(RateCalibration, RowsOfMeanNormBelowAHalfTrainTheSameModelAtEveryScale) {
  // Counts times 2^-8 and 2^-16 (mean |x|^2 ~ 0.01 and ~2e-7): the rates
  // differ by 2^16, the bias steps at mean |x|^2 / 64 of the rate, so the bias
  // moves alike and the weights by the inverse of the scale, bit for bit
  // (powers of two scale floats exactly). With the bias at the full rate,
  // it moved 1 / |x|^2 times as far as the weights' part of a logit, and
  // every rate tried at 2^-16 had its steps clipped.
  const Dataset base = counts(2, 3000, 5);
  const Dataset a = scaled(base, 0x1p-8f), b = scaled(base, 0x1p-16f);
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  Model ma = Model::zeros({"0", "1"}, true, base.x.cols());
  Model mb = ma;
  const TrainingSummary sa = train_model(ma, a, nullptr, defaults(), LayerKind::kSparse, quiet);
  const TrainingSummary sb = train_model(mb, b, nullptr, defaults(), LayerKind::kSparse, quiet);
  ASSERT_TRUE(sa.calibration && sb.calibration);
  EXPECT_LT(sa.bias_rate, 1.0);
  EXPECT_EQ(sa.bias_rate, sa.calibration->mean_squared_norm / 64);
  EXPECT_EQ(sb.bias_rate, sa.bias_rate * 0x1p-16);
  EXPECT_EQ(sb.learning_rate, sa.learning_rate * 0x1p16);
  EXPECT_EQ(ma.bias, mb.bias);
  ASSERT_EQ(ma.weight.size(), mb.weight.size());
  for (std::size_t i = 0; i < ma.weight.size(); ++i)
    ASSERT_EQ(mb.weight[i], ma.weight[i] * 0x1p8f) << "weight " << i;
  // And the model learns as the unscaled rows' does (|x|^2 in the hundreds,
  // where the bias keeps the rate: bias_rate 1).
  Model m1 = Model::zeros({"0", "1"}, true, base.x.cols());
  const TrainingSummary s1 = train_model(m1, base, nullptr, defaults(), LayerKind::kSparse, quiet);
  EXPECT_EQ(s1.bias_rate, 1.0);
  EXPECT_GT(accuracy(ma, a), accuracy(m1, base) - 0.02);
}

TEST(RateCalibration, AnExplicitBiasRateStepsTheBiasAtThatShareOfTheRate) {
  // One row, one step from zero weights at rate 0.5: the logit is 0, the
  // gradient sigmoid(0) - y = -0.5 for y = 1, so the bias moves by 0.25 r.
  Dataset d = scaled(counts(2, 1, 11), 1e-3f);  // rows so small that "auto" would pick its own
  d.y.assign(1, 1);
  OptimizerConfig c = defaults();
  c.learning_rate = 0.5;
  c.schedule = ScheduleKind::kConstant;
  c.epochs = 1;
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  for (const double r : {1.0, 0.125}) {
    c.bias_rate = r;
    c.bias_rate_auto = r == 1.0;
    Model m = Model::zeros({"0", "1"}, true, d.x.cols());
    const TrainingSummary s = train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
    EXPECT_EQ(s.bias_rate, r);
    EXPECT_EQ(m.bias[0], static_cast<float>(0.25 * r));
  }
  // With the rate "auto" too, an explicit bias_rate is the one every
  // candidate and the run use.
  c = defaults();
  c.bias_rate = 0.125;
  c.bias_rate_auto = false;
  const Dataset small = scaled(counts(2, 2000, 12), 1e-3f);
  EXPECT_EQ(calibrate_learning_rate(small, 2, Head::kSoftmax, c).bias_rate, 0.125);
}

TEST(RateCalibration, FewRowsAreJudgedByFiveFolds) {
  // 20% of a few dozen rows is a judge of a dozen: on 50 tf-idf rows of
  // four languages one draw picked 2^-8 / |x|^2 and the model predicted
  // one class (0.56 test accuracy against 0.86). Below 200 rows each
  // candidate is judged on every fifth in turn; from 200 rows, as before.
  const Dataset few = counts(3, 120, 21);
  const RateCalibration c = calibrate_learning_rate(few, 3, Head::kOneVsRest, defaults());
  EXPECT_EQ(c.folds, 5);
  EXPECT_EQ(c.sample_rows, 120);
  EXPECT_EQ(calibrate_learning_rate(counts(3, 400, 21), 3, Head::kOneVsRest, defaults()).folds, 1);
  // Five folds of 120 rows judge on all of them: the loss a candidate gets
  // is the mean of five, each over 24 rows the candidate did not train on.
  for (const RateTrial& t : c.trials) EXPECT_TRUE(std::isfinite(t.holdout_log_loss));
  EXPECT_GT(accuracy(train_sparse(few, 3, defaults()), few), 0.8);
}

TEST(RateCalibration, RowsBeyondFloatRangeNameTheScaleAndTheKey) {
  // |x|^2 ~ 1e-46 a row: every rate of 2^k / |x|^2 overflows float32.
  const Dataset d = scaled(counts(2, 2000, 6), 1e-24f);
  try {
    calibrate_learning_rate(d, 2, Head::kSoftmax, defaults());
    FAIL() << "expected bagel::ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "optimizer.learning_rate");
    EXPECT_NE(e.message().find("every rate tried"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("mean squared norm is"), std::string::npos) << e.what();
  }
}

TEST(RateCalibration, AnL2ThatRulesOutEveryRateNamesL2) {
  // Nothing diverged: every candidate was skipped, its 1 - rate x l2 not
  // positive. The error had named learning_rate, and a number given there
  // then failed on l2.
  OptimizerConfig c = defaults();
  c.l2 = 1e6;
  try {
    calibrate_learning_rate(counts(2, 2000, 6), 2, Head::kSoftmax, c);
    FAIL() << "expected bagel::ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "optimizer.l2");
    EXPECT_NE(e.message().find("give a smaller l2"), std::string::npos) << e.what();
  }
}

TEST(RateCalibration, AFewVeryLongRowsLeaveTheModelOfTheOthersAlone) {
  // Count rows plus 1% of them again at 30 times their values (|x|^2 900
  // times the typical: changelog-era's few whole-changelog entries, README
  // §9). Unclipped, each step on a long row at a rate that suits the other
  // rows moves the logits of the rows that share its words by hundreds, and
  // the calibration, judging rates on a sample, settles on one too small
  // for the rest (0.81 here instead of 0.85). With each row's step clipped
  // to a logit change of kMaxLogitStep, "auto" learns the ordinary rows as
  // well as without the long ones.
  const Dataset d = counts(2, 4000, 13);
  std::vector<Index> indptr(d.x.indptr().begin(), d.x.indptr().end());
  std::vector<Index> indices(d.x.indices().begin(), d.x.indices().end());
  std::vector<float> data(d.x.data().begin(), d.x.data().end());
  std::vector<std::int32_t> y = d.y;
  for (Index r = 0; r < 40; ++r) {
    const RowView row = d.x.row(r);
    for (std::size_t p = 0; p < row.size(); ++p) {
      indices.push_back(row.indices[p]);
      data.push_back(30.0f * row.values[p]);
    }
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(d.y[static_cast<std::size_t>(r)]);
  }
  const Dataset with_long{"train", CsrMatrix(d.x.rows() + 40, d.x.cols(), std::move(indptr),
                                             std::move(indices), std::move(data)),
                          std::move(y)};
  const double plain = accuracy(train_sparse(d, 2, defaults()), d);
  const double mixed = accuracy(train_sparse(with_long, 2, defaults()), d);
  EXPECT_GT(plain, 0.85);
  EXPECT_GT(mixed, plain - 0.02) << "without the long rows " << plain;
}

TEST(DivergenceGuard, OneHugeRowAgainstItsWordsIsNoDivergence) {
  // One row holding every class-0 row's words at once (|x|^2 millions of
  // times the typical), labelled 1: its loss alone lifts the running mean
  // far past the guard's limit, while the other rows train well and only
  // its own step is clipped. That is no divergence: no restart, and the
  // model of the others (restarting at a tenth of the rate, again and
  // again, had cost 20 points on real text).
  const Dataset d = counts(2, 4000, 17);
  std::vector<Index> indptr(d.x.indptr().begin(), d.x.indptr().end());
  std::vector<Index> indices(d.x.indices().begin(), d.x.indices().end());
  std::vector<float> data(d.x.data().begin(), d.x.data().end());
  std::vector<float> sum(static_cast<std::size_t>(d.x.cols()), 0.0f);
  for (Index r = 0; r < d.x.rows(); ++r) {
    if (d.y[static_cast<std::size_t>(r)] != 0) continue;
    const RowView row = d.x.row(r);
    for (std::size_t p = 0; p < row.size(); ++p) sum[static_cast<std::size_t>(row.indices[p])] += row.values[p];
  }
  for (Index j = 0; j < d.x.cols(); ++j)
    if (sum[static_cast<std::size_t>(j)] > 0) {
      indices.push_back(j);
      data.push_back(sum[static_cast<std::size_t>(j)]);
    }
  indptr.push_back(static_cast<Index>(indices.size()));
  std::vector<std::int32_t> y = d.y;
  y.push_back(1);
  const Dataset with_huge{"train", CsrMatrix(d.x.rows() + 1, d.x.cols(), std::move(indptr),
                                             std::move(indices), std::move(data)),
                          std::move(y)};
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  Model m = Model::zeros({"0", "1"}, true, d.x.cols());
  const TrainingSummary s = train_model(m, with_huge, nullptr, defaults(), LayerKind::kSparse, quiet);
  EXPECT_TRUE(s.restarts.empty()) << log.str();
  EXPECT_GT(accuracy(m, d), accuracy(train_sparse(d, 2, defaults()), d) - 0.02);
}

TEST(DivergenceGuard, AbsurdRateEndsInAFiniteModelWithAWarningEvenWhenQuiet) {
  const Dataset d = counts(3, 3000, 5);
  OptimizerConfig c = defaults();
  c.learning_rate = 1e6;
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  Model m = Model::zeros({"0", "1", "2"}, true, d.x.cols());
  const TrainingSummary s = train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
  ASSERT_FALSE(s.restarts.empty());
  EXPECT_EQ(s.restarts.front().learning_rate, 1e6);
  EXPECT_EQ(s.restarts.front().epoch, 1);
  EXPECT_LE(s.restarts.front().rows, 1024) << "noticed late in the epoch";
  EXPECT_LT(s.learning_rate, 1e6);
  EXPECT_DOUBLE_EQ(s.learning_rate, 1e6 / std::pow(10.0, double(s.restarts.size())));
  for (const float w : m.weight) ASSERT_TRUE(std::isfinite(w));
  EXPECT_GT(accuracy(m, d), 0.6);
  const std::string text = log.str();
  EXPECT_NE(text.find("bagel: warning: training diverged in epoch 1"), std::string::npos) << text;
  EXPECT_NE(text.find("restarting at learning_rate 100000"), std::string::npos) << text;
  // The clip keeps the logits from swinging; what shows the rate is too
  // large is that most rows' steps had to be clipped.
  EXPECT_GT(2 * s.restarts.front().limited_rows, s.restarts.front().rows);
  EXPECT_NE(text.find("were clipped"), std::string::npos) << text;
}

TEST(DivergenceGuard, EveryParallelModeRestartsToo) {
  const Dataset d = counts(2, 4000, 6);
  for (const bool deterministic : {false, true})
    for (const DeterministicMethod method : {DeterministicMethod::kExact, DeterministicMethod::kAverage}) {
      OptimizerConfig c = defaults();
      c.learning_rate = 1e5;
      c.threads = 2;
      c.deterministic = deterministic;
      c.deterministic_method = method;
      if (deterministic && method == DeterministicMethod::kExact) c.batch_size = kExactMinBatch;
      std::ostringstream log;
      Progress quiet(Progress::Mode::kQuiet, log);
      Model m = Model::zeros({"0", "1"}, true, d.x.cols());
      const TrainingSummary s = train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
      EXPECT_FALSE(s.restarts.empty());
      for (const float w : m.weight) ASSERT_TRUE(std::isfinite(w));
      EXPECT_GT(accuracy(m, d), 0.6) << deterministic << " " << to_string(method);
    }
}

TEST(DivergenceGuard, RestartsFromTheStartingWeightsOfAWarmStart) {
  // Trained further from a model, a diverged run starts again from that
  // model, not from zeros: with a rate that is fine after the restart, the
  // result equals training from the model at that rate.
  const Dataset d = counts(2, 3000, 8);
  OptimizerConfig c = defaults();
  c.learning_rate = 1e-3;
  const Model start = train_sparse(d, 2, c);
  c.learning_rate = 1e4;
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  Model restarted = start;
  const TrainingSummary s = train_model(restarted, d, nullptr, c, LayerKind::kSparse, quiet);
  ASSERT_FALSE(s.restarts.empty());
  OptimizerConfig direct = c;
  direct.learning_rate = s.learning_rate;
  Model expected = start;
  train_fixed_rate(expected, d, nullptr, direct, LayerKind::kSparse, quiet);
  EXPECT_NE(restarted.weight, start.weight);
  EXPECT_EQ(restarted.weight, expected.weight);
}

TEST(DivergenceGuard, GivesUpWithAClearErrorWhenNoRateHelps) {
  const Dataset d = counts(2, 2000, 9);
  OptimizerConfig c = defaults();
  c.learning_rate = 1e36;
  std::ostringstream log;
  Progress quiet(Progress::Mode::kQuiet, log);
  Model m = Model::zeros({"0", "1"}, true, d.x.cols());
  try {
    train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
    FAIL() << "expected bagel::ConfigError";
  } catch (const ConfigError& e) {  // names the key, which Python renames to its parameter
    const std::string what = e.what();
    EXPECT_EQ(e.field(), "optimizer.learning_rate");
    EXPECT_NE(what.find("after 8 restarts"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace bagel
