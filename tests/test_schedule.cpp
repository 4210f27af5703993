// Learning-rate schedules: each formula, as scikit-learn's SGD defines it.
#include <gtest/gtest.h>

#include <cmath>

#include "bagel/config.h"
#include "bagel/schedule.h"

namespace bagel {
namespace {

OptimizerConfig config_with(ScheduleKind kind, double eta0, double l2 = 0.0, double l1 = 0.0) {
  OptimizerConfig c;
  c.schedule = kind;
  c.learning_rate = eta0;
  c.l2 = l2;
  c.l1 = l1;
  return c;
}

TEST(ScheduleConstant, RateIsEta0AtEveryStep) {
  const Schedule s(config_with(ScheduleKind::kConstant, 0.25), 100);
  for (std::int64_t t : {1, 2, 50, 100, 1000}) EXPECT_DOUBLE_EQ(s.eta(t), 0.25) << t;
}

TEST(ScheduleInvScaling, RateIsEta0OverTToThePowerT) {
  OptimizerConfig c = config_with(ScheduleKind::kInvScaling, 0.5);
  c.power_t = 0.5;
  const Schedule s(c, 1000);
  EXPECT_DOUBLE_EQ(s.eta(1), 0.5);
  EXPECT_DOUBLE_EQ(s.eta(4), 0.25);
  EXPECT_DOUBLE_EQ(s.eta(100), 0.05);
  c.power_t = 0.25;
  const Schedule q(c, 1000);
  EXPECT_NEAR(q.eta(16), 0.25, 1e-15);
  EXPECT_NEAR(q.eta(81), 0.5 / 3.0, 1e-15);
  c.power_t = 0.0;  // power 0: constant
  const Schedule z(c, 1000);
  EXPECT_DOUBLE_EQ(z.eta(777), 0.5);
}

TEST(ScheduleOptimal, FirstRateIsTypwAndThenOneOverAlphaTimesT0PlusTMinusOne) {
  for (double alpha : {1e-4, 1e-2, 0.5}) {
    // alpha = l2 + l1: split it to check both count.
    const Schedule s(config_with(ScheduleKind::kOptimal, 123.0, alpha * 0.75, alpha * 0.25), 10);
    const double typw = std::sqrt(1.0 / std::sqrt(alpha));
    const double t0 = 1.0 / (typw * alpha);
    EXPECT_NEAR(s.eta(1), typw, 1e-12 * typw) << alpha;
    for (std::int64_t t : {1, 2, 3, 10, 1000, 1000000}) {
      const double expected = 1.0 / (alpha * (t0 + static_cast<double>(t) - 1.0));
      EXPECT_NEAR(s.eta(t), expected, 1e-12 * expected) << "alpha=" << alpha << " t=" << t;
    }
    // eta0 (learning_rate) is ignored by "optimal", as in scikit-learn.
    EXPECT_NE(s.eta(1), 123.0);
  }
}

TEST(ScheduleOptimal, MatchesScikitLearnValuesForAlpha1e4) {
  // sklearn: typw = sqrt(1/sqrt(1e-4)) = 10; optimal_init = 1/(10 * 1e-4) = 1000;
  // eta(t) = 1 / (1e-4 * (1000 + t - 1)).
  const Schedule s(config_with(ScheduleKind::kOptimal, 0.1, 1e-4), 10);
  EXPECT_NEAR(s.eta(1), 10.0, 1e-9);
  EXPECT_NEAR(s.eta(1001), 5.0, 1e-9);
  EXPECT_NEAR(s.eta(9001), 1.0, 1e-9);
}

TEST(ScheduleLinear, DecaysFromEta0ToAboutZeroAtTheLastStep) {
  const std::int64_t total = 200;
  const Schedule s(config_with(ScheduleKind::kLinear, 0.4), total);
  EXPECT_DOUBLE_EQ(s.eta(1), 0.4);
  for (std::int64_t t : {2, 51, 101, 151}) {
    EXPECT_NEAR(s.eta(t), 0.4 * (1.0 - static_cast<double>(t - 1) / total), 1e-15) << t;
  }
  // The last step still moves (a little); the rate never goes negative.
  EXPECT_GT(s.eta(total), 0.0);
  EXPECT_LE(s.eta(total), 0.4 / total + 1e-15);
  EXPECT_GE(s.eta(total + 1), 0.0);
  EXPECT_NEAR(s.eta(total + 1), 0.0, 1e-15);
  EXPECT_GE(s.eta(10 * total), 0.0);
  // Strictly decreasing over the run.
  for (std::int64_t t = 2; t <= total; ++t) EXPECT_LT(s.eta(t), s.eta(t - 1));
}

}  // namespace
}  // namespace bagel
