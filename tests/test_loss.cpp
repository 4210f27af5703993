// The logistic head: stable at large margins, gradients equal to p - onehot,
// and dloss/dz agreeing with a finite difference of the loss itself.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "bagel/loss.h"

namespace bagel {
namespace {

// Naive reference, fine where it does not overflow (|z| small).
double naive_sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

TEST(LossSoftplus, StableAtZeroAndLargeMargins) {
  EXPECT_NEAR(softplus(0.0), std::log(2.0), 1e-15);
  EXPECT_NEAR(softplus(30.0), 30.0 + std::log1p(std::exp(-30.0)), 1e-12);
  EXPECT_NEAR(softplus(-30.0), std::exp(-30.0), 1e-25);  // log1p(e^-30) ~ e^-30, not 0
  EXPECT_GT(softplus(-30.0), 0.0);
  // exp(800) overflows a double: the naive log(1 + exp(800)) is inf.
  ASSERT_TRUE(std::isinf(std::log(1.0 + std::exp(800.0))));
  EXPECT_DOUBLE_EQ(softplus(800.0), 800.0);
  EXPECT_EQ(softplus(-800.0), 0.0);
  EXPECT_TRUE(std::isfinite(softplus(800.0)));
}

TEST(LossSigmoid, StableAtZeroAndLargeMargins) {
  EXPECT_DOUBLE_EQ(sigmoid(0.0), 0.5);
  EXPECT_NEAR(sigmoid(30.0), naive_sigmoid(30.0), 1e-16);
  EXPECT_NEAR(sigmoid(-30.0), std::exp(-30.0) / (1 + std::exp(-30.0)), 1e-28);
  EXPECT_GT(sigmoid(-30.0), 0.0);  // relative precision kept on the small side
  EXPECT_NEAR(sigmoid(-30.0) / 9.357622968839299e-14, 1.0, 1e-12);
  for (double z : {800.0, -800.0, 1e300, -1e300}) {
    const double s = sigmoid(z);
    EXPECT_TRUE(std::isfinite(s)) << z;
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 1.0);
  }
  EXPECT_EQ(sigmoid(800.0), 1.0);
  EXPECT_EQ(sigmoid(-800.0), 0.0);
}

TEST(LossBinary, LossIsMarginOnWrongSideAndZeroOnRightSide) {
  float g = 0;
  for (float z : {30.0f, 800.0f}) {
    const float zp = z, zn = -z;
    // Wrong side: label 0 with z > 0, label 1 with z < 0 -> loss ~ |z|.
    const double l0 = BinaryLogLoss::loss_and_grad(&zp, 0, &g, 1);
    EXPECT_TRUE(std::isfinite(l0));
    EXPECT_NEAR(l0, z, 1e-9 * z);
    EXPECT_NEAR(g, 1.0f, 1e-6);
    const double l1 = BinaryLogLoss::loss_and_grad(&zn, 1, &g, 1);
    EXPECT_TRUE(std::isfinite(l1));
    EXPECT_NEAR(l1, z, 1e-9 * z);
    EXPECT_NEAR(g, -1.0f, 1e-6);
    // Right side: loss ~ exp(-|z|), non-negative, finite.
    const double r1 = BinaryLogLoss::loss_and_grad(&zp, 1, &g, 1);
    EXPECT_GE(r1, 0.0);
    EXPECT_LT(r1, 1e-12);
    EXPECT_NEAR(g, 0.0f, 1e-12);
  }
  const float zero = 0.0f;
  EXPECT_NEAR(BinaryLogLoss::loss_and_grad(&zero, 1, &g, 1), std::log(2.0), 1e-12);
  EXPECT_FLOAT_EQ(g, -0.5f);
  EXPECT_NEAR(BinaryLogLoss::loss_and_grad(&zero, 0, &g, 1), std::log(2.0), 1e-12);
  EXPECT_FLOAT_EQ(g, 0.5f);
}

TEST(LossBinary, GradientIsSigmoidMinusLabel) {
  for (float z : {-5.0f, -1.5f, -0.1f, 0.0f, 0.3f, 2.0f, 7.0f}) {
    for (int y : {0, 1}) {
      float g = 0;
      BinaryLogLoss::loss_and_grad(&z, y, &g, 1);
      EXPECT_NEAR(g, naive_sigmoid(z) - y, 1e-7) << "z=" << z << " y=" << y;
    }
  }
}

TEST(LossBinary, GradientMatchesFiniteDifferenceOfLoss) {
  for (double z : {-4.0, -1.0, -0.25, 0.0, 0.5, 2.5, 6.0}) {
    for (int y : {0, 1}) {
      const double h = 1e-5;
      // Loss evaluated in double through the documented formula, the float
      // entry point is checked against it below.
      const double lp = softplus(z + h) - y * (z + h);
      const double lm = softplus(z - h) - y * (z - h);
      const double fd = (lp - lm) / (2 * h);
      const float zf = static_cast<float>(z);
      float g = 0;
      const double l = BinaryLogLoss::loss_and_grad(&zf, y, &g, 1);
      EXPECT_NEAR(l, softplus(z) - y * z, 1e-12);
      EXPECT_NEAR(g, fd, 1e-6) << "z=" << z << " y=" << y;
      // And the loss is the textbook cross-entropy where that is computable.
      const double p = naive_sigmoid(z);
      EXPECT_NEAR(l, -(y * std::log(p) + (1 - y) * std::log(1 - p)), 1e-12);
    }
  }
}

TEST(LossBinary, ProbabilitiesAreOneMinusPThenP) {
  for (float z : {-800.0f, -3.0f, 0.0f, 1.25f, 800.0f}) {
    double proba[2];
    BinaryLogLoss::probabilities(&z, proba, 1);
    EXPECT_NEAR(proba[1], sigmoid(z), 1e-15);
    EXPECT_NEAR(proba[0] + proba[1], 1.0, 1e-15);
    EXPECT_GE(proba[0], 0.0);
  }
}

TEST(LossBinary, TheSmallerProbabilityKeepsItsDigits) {
  // Each of 1 - p and p to a relative 1e-15, on either side: the smaller
  // taken as 1 minus the larger was 0 at a logit of 55.7 (true 6.4e-25).
  for (float z : {-55.7f, -26.3f, 26.3f, 55.7f, 700.0f}) {
    double proba[2];
    BinaryLogLoss::probabilities(&z, proba, 1);
    const double zd = z;
    EXPECT_NEAR(proba[1] / (1.0 / (1.0 + std::exp(-zd))), 1.0, 1e-15) << z;
    EXPECT_NEAR(proba[0] / (1.0 / (1.0 + std::exp(zd))), 1.0, 1e-15) << z;
  }
}

TEST(LossHead, ProbabilitiesUnderExpsFloorAreZeroNotTheFloor) {
  // exp_nonpositive stops at exp(-708) = 3.3e-308; a class further down
  // has probability 0 (predict flushes subnormals), not a tie at the floor.
  const std::vector<float> z = {0.0f, -800.0f, -720.0f, -707.5f};
  std::vector<double> p(z.size());
  SoftmaxCrossEntropy::probabilities(z.data(), p.data(), 4);
  EXPECT_EQ(p[1], 0.0);
  EXPECT_EQ(p[2], 0.0);
  EXPECT_NEAR(p[3] / std::exp(-707.5), 1.0, 1e-12);
  const std::vector<float> ovr = {5.0f, -720.0f, -800.0f};
  std::vector<double> q(ovr.size());
  OneVsRestLogLoss::probabilities(ovr.data(), q.data(), 3);
  EXPECT_EQ(q[1], 0.0);
  EXPECT_EQ(q[2], 0.0);
  EXPECT_EQ(q[0], 1.0);
}

std::vector<double> naive_softmax(const std::vector<float>& z) {
  double sum = 0;
  std::vector<double> p(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) sum += p[i] = std::exp(static_cast<double>(z[i]));
  for (double& v : p) v /= sum;
  return p;
}

TEST(LossSoftmax, GradientIsProbabilitiesMinusOneHotAndSumsToZero) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int k : {2, 3, 5, 10}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> z(k), g(k);
      for (float& v : z) v = normal(rng);
      const int y = trial % k;
      const double loss = SoftmaxCrossEntropy::loss_and_grad(z.data(), y, g.data(), k);
      const std::vector<double> p = naive_softmax(z);
      double gsum = 0;
      for (int i = 0; i < k; ++i) {
        EXPECT_NEAR(g[i], p[i] - (i == y ? 1.0 : 0.0), 1e-6);
        gsum += g[i];
      }
      EXPECT_NEAR(gsum, 0.0, 1e-6);
      EXPECT_NEAR(loss, -std::log(p[y]), 1e-6);
    }
  }
}

TEST(LossSoftmax, GradientMatchesFiniteDifferenceOfLoss) {
  // The loss in double from the documented formula: logsumexp(z) - z_y.
  auto loss_of = [](const std::vector<double>& z, int y) {
    double m = z[0];
    for (double v : z) m = std::max(m, v);
    double s = 0;
    for (double v : z) s += std::exp(v - m);
    return m + std::log(s) - z[y];
  };
  const std::vector<float> z = {0.5f, -1.25f, 2.0f, 0.0f, -0.75f};
  const int k = static_cast<int>(z.size());
  for (int y = 0; y < k; ++y) {
    std::vector<float> g(k);
    const double l = SoftmaxCrossEntropy::loss_and_grad(z.data(), y, g.data(), k);
    std::vector<double> zd(z.begin(), z.end());
    EXPECT_NEAR(l, loss_of(zd, y), 1e-12);
    for (int i = 0; i < k; ++i) {
      const double h = 1e-5;
      std::vector<double> zp = zd, zm = zd;
      zp[i] += h;
      zm[i] -= h;
      const double fd = (loss_of(zp, y) - loss_of(zm, y)) / (2 * h);
      EXPECT_NEAR(g[i], fd, 1e-6) << "y=" << y << " i=" << i;
    }
  }
}

TEST(LossSoftmax, StableAtHugeLogits) {
  for (float big : {30.0f, 800.0f, 1e30f}) {
    const std::vector<float> z = {big, -big, 0.0f};
    std::vector<float> g(3);
    // Right class: loss ~ 0.
    const double right = SoftmaxCrossEntropy::loss_and_grad(z.data(), 0, g.data(), 3);
    EXPECT_TRUE(std::isfinite(right));
    EXPECT_GE(right, 0.0);
    EXPECT_LT(right, 1e-12);
    for (float v : g) EXPECT_TRUE(std::isfinite(v));
    // Wrong class with logit -big: loss ~ 2 big.
    const double wrong = SoftmaxCrossEntropy::loss_and_grad(z.data(), 1, g.data(), 3);
    EXPECT_TRUE(std::isfinite(wrong));
    EXPECT_NEAR(wrong, 2.0 * big, 1e-9 * big);
    EXPECT_NEAR(g[0], 1.0f, 1e-6);
    EXPECT_NEAR(g[1], -1.0f, 1e-6);
    double proba[3];
    SoftmaxCrossEntropy::probabilities(z.data(), proba, 3);
    for (double p : proba) EXPECT_TRUE(std::isfinite(p));
    EXPECT_NEAR(proba[0], 1.0, 1e-12);
  }
  // All-equal logits at a huge offset: uniform, not nan.
  const std::vector<float> same = {800.0f, 800.0f, 800.0f, 800.0f};
  double proba[4];
  SoftmaxCrossEntropy::probabilities(same.data(), proba, 4);
  for (double p : proba) EXPECT_NEAR(p, 0.25, 1e-15);
}

TEST(LossSoftmax, ProbabilitiesSumToOneAndMatchNaiveSoftmax) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (int k : {3, 4, 7}) {
    std::vector<float> z(k);
    for (float& v : z) v = u(rng);
    std::vector<double> proba(k);
    SoftmaxCrossEntropy::probabilities(z.data(), proba.data(), k);
    const std::vector<double> ref = naive_softmax(z);
    double sum = 0;
    for (int i = 0; i < k; ++i) {
      EXPECT_NEAR(proba[i], ref[i], 1e-12);
      sum += proba[i];
    }
    EXPECT_NEAR(sum, 1.0, 1e-12);
  }
}

TEST(LossHead, OutputCountPicksSigmoidForTwoClassesAndSoftmaxOtherwise) {
  EXPECT_EQ(num_outputs_for(2), 1);
  EXPECT_EQ(num_outputs_for(3), 3);
  EXPECT_EQ(num_outputs_for(10), 10);
  const float z = 1.5f;
  float g = 0;
  EXPECT_DOUBLE_EQ(head_loss_and_grad(&z, 1, &g, 1, Head::kSigmoid), softplus(1.5) - 1.5);
  double p2[2];
  head_probabilities(&z, p2, 1, Head::kSigmoid);
  EXPECT_NEAR(p2[1], sigmoid(1.5), 1e-15);
  const std::vector<float> z3 = {0.0f, 1.0f, 2.0f};
  std::vector<float> g3(3);
  EXPECT_NEAR(head_loss_and_grad(z3.data(), 2, g3.data(), 3, Head::kSoftmax),
              -std::log(naive_softmax(z3)[2]), 1e-12);
  double p3[3];
  head_probabilities(z3.data(), p3, 3, Head::kSoftmax);
  EXPECT_NEAR(p3[0] + p3[1] + p3[2], 1.0, 1e-15);
}

// Units in the last place between two doubles of the same sign.
std::int64_t ulps_apart(double a, double b) {
  return std::abs(std::bit_cast<std::int64_t>(a) - std::bit_cast<std::int64_t>(b));
}

TEST(ExpNonpositive, WithinTwoUlpOfLibmDownToMinus708) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> wide(-708.0, 0.0), near(-1.0, 0.0);
  std::vector<double> xs = {0.0, -0.0, -1e-300, -1e-17, -0.5 * std::log(2.0), -std::log(2.0),
                            -1.0, -20.0, -700.0, -707.9};
  for (int i = 0; i < 200000; ++i) xs.push_back(i % 2 ? wide(rng) : near(rng));
  for (double x : xs) {
    const double ours = exp_nonpositive(x), exact = std::exp(x);
    ASSERT_LE(ulps_apart(ours, exact), 2) << "x=" << x << " ours=" << ours << " libm=" << exact;
  }
  EXPECT_EQ(exp_nonpositive(0.0), 1.0);
}

TEST(ExpNonpositive, TinyBelowMinus708AndNaNStaysNaN) {
  for (double x : {-708.5, -745.0, -1e6, -std::numeric_limits<double>::infinity()}) {
    const double e = exp_nonpositive(x);
    EXPECT_GE(e, 0.0) << x;
    EXPECT_LE(e, std::exp(-708.0) * (1 + 1e-15)) << x;
    EXPECT_EQ(1.0 + e, 1.0) << x;
    EXPECT_EQ(static_cast<float>(e), 0.0f) << x;
  }
  EXPECT_TRUE(std::isnan(exp_nonpositive(std::numeric_limits<double>::quiet_NaN())));
}

TEST(LossOneVsRest, MatchesLibmFormulasAcrossChunksAndClassCounts) {
  // Class counts below, at and past the head's chunk of outputs, the true
  // class in the first and in a later chunk; logits from -40 to 40.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> logit(-40.0f, 40.0f);
  for (int k : {3, kHeadChunk, kHeadChunk + 1, 3 * kHeadChunk + 5}) {
    std::vector<float> z(k), g(k);
    for (int y : {0, k - 1}) {
      for (float& v : z) v = logit(rng);
      const double loss = OneVsRestLogLoss::loss_and_grad(z.data(), y, g.data(), k);
      double want = 0;
      for (int i = 0; i < k; ++i) {
        want += softplus(z[i]) - (i == y ? z[i] : 0.0);
        EXPECT_NEAR(g[i], sigmoid(z[i]) - (i == y), 1e-7) << "k=" << k << " i=" << i;
      }
      EXPECT_NEAR(loss, want, 1e-12 * std::max(1.0, want)) << "k=" << k << " y=" << y;
    }
  }
}

}  // namespace
// LossSum's one log of many factors against a log a row, summed in long
// double: tiny losses keep their digits (1 + 1e-13 alone would lose 0.06%
// of each), and products past 2^900 are folded before they overflow.
TEST(LossSum, AsExactAsALogARowForTinyAndLargeFactors) {
  std::mt19937_64 rng(5);
  for (const double scale : {1e-13, 1e-6, 0.5}) {
    LossSum sum(2.0);
    long double expected = 2.0L;
    std::uniform_real_distribution<double> u(0.0, scale);
    for (int i = 0; i < 5000; ++i) {
      const double e = u(rng);
      sum.add_log1p(e);
      expected += std::log1p(static_cast<long double>(e));
    }
    const double got = sum.total();
    EXPECT_NEAR(got, static_cast<double>(expected), 4e-16 * std::abs(static_cast<double>(expected)) + 1e-30)
        << scale;
  }
  // Products of factors up to 2^16 (one-vs-rest chunks), 3000 of them:
  // 2^900 is passed every 56 factors or more.
  LossSum big;
  long double expected = 0;
  std::uniform_real_distribution<double> u(1.0, 65536.0);
  for (int i = 0; i < 3000; ++i) {
    const double f = u(rng);
    big.add_log_of(f);
    expected += std::log(static_cast<long double>(f));
  }
  const double got = big.total();
  ASSERT_TRUE(std::isfinite(got));
  EXPECT_NEAR(got, static_cast<double>(expected), 1e-14 * static_cast<double>(expected));
  // Nothing pending: total() is the sum, and stays it.
  EXPECT_EQ(big.total(), got);
  // A weighted row's loss goes in with one rounding, as weigh_row adds it.
  LossSum weighted(1.0);
  weighted.add_weighted(0.1, 3.0);
  EXPECT_EQ(weighted.total(), std::fma(0.1, 3.0, 1.0));
}

TEST(LossSum, NonFiniteFactorsMakeTheSumNaN) {
  LossSum sum(1.0);
  sum.add_log1p(std::numeric_limits<double>::quiet_NaN());
  sum.add_log1p(0.5);
  EXPECT_TRUE(std::isnan(sum.total()));
}

// The heads give the same row loss either way, to rounding: the log term
// now (LogsNow) or left in a LossSum.
TEST(LossSum, EveryHeadLeavesItsLogTermInTheSum) {
  std::mt19937_64 rng(9);
  std::normal_distribution<float> n(0.0f, 4.0f);
  for (const Head head : {Head::kSigmoid, Head::kOneVsRest, Head::kSoftmax}) {
    const int k = head == Head::kSigmoid ? 1 : 20;
    std::vector<float> z(static_cast<std::size_t>(k)), g1(z.size()), g2(z.size());
    double now = 0;
    LossSum later;
    for (int row = 0; row < 200; ++row) {
      for (float& v : z) v = n(rng);
      const auto y = static_cast<std::int32_t>(row % (head == Head::kSigmoid ? 2 : k));
      now += head_loss_and_grad(z.data(), y, g1.data(), k, head);
      later.add(head_loss_and_grad(z.data(), y, g2.data(), k, head, later));
      EXPECT_EQ(g1, g2);  // the gradients are the same bits
    }
    EXPECT_NEAR(later.total(), now, 1e-13 * std::abs(now)) << static_cast<int>(head);
  }
}

}  // namespace bagel
