// The sparse layer and the SGD loop against naive dense references written
// here: the layer's lazy L2 scale and lazy L1 cumulative penalty must give the
// same weights as eager dense updates, and the trainer must be the plain SGD
// loop it claims to be (order, batches, schedule, seeds, early stopping).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/dataset.h"
#include "bagel/embedding_bag.h"
#include "bagel/error.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/progress.h"
#include "bagel/trainer.h"

namespace bagel {
namespace {

using Entry = std::pair<Index, float>;
using Rows = std::vector<std::vector<Entry>>;

CsrMatrix make_csr(Index cols, const Rows& rows) {
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (const auto& row : rows) {
    for (const auto& [j, v] : row) {
      indices.push_back(j);
      data.push_back(v);
    }
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  CsrMatrix m(static_cast<Index>(rows.size()), cols, std::move(indptr), std::move(indices),
              std::move(data));
  m.validate("test matrix");
  return m;
}

// Random sparse rows; indices drawn with replacement, so rows may hold
// repeated and unsorted indices (valid CSR, as scipy allows), and some rows
// are empty.
Rows random_rows(int n, Index cols, int max_nnz, std::mt19937& rng) {
  std::uniform_int_distribution<int> count(0, max_nnz);
  std::uniform_int_distribution<Index> col(0, cols - 1);
  std::uniform_real_distribution<float> value(-1.0f, 2.0f);
  Rows rows(n);
  for (auto& row : rows) {
    const int c = count(rng);
    for (int p = 0; p < c; ++p) row.emplace_back(col(rng), value(rng));
  }
  return rows;
}

// ---------------------------------------------------------------------------
// Dense reference, in double: W (F x K) row-major, eager updates on every
// weight at every step.
struct DenseRef {
  Index F;
  int K;
  std::vector<double> W, b;
  DenseRef(Index f, int k) : F(f), K(k), W(static_cast<std::size_t>(f) * k, 0.0), b(k, 0.0) {}

  // z = x @ W + b with x densified first (repeats add up).
  std::vector<double> logits(const Rows& rows, std::size_t r) const {
    std::vector<double> x(F, 0.0);
    for (const auto& [j, v] : rows[r]) x[j] += v;
    std::vector<double> z(b);
    for (Index j = 0; j < F; ++j)
      for (int i = 0; i < K; ++i) z[i] += x[j] * W[j * K + i];
    return z;
  }

  // W <- (1 - eta l2) W - eta mean_b x_b g_b^T; W <- sign(W) max(0, |W| - eta l1);
  // b <- b - eta mean_b g_b.
  void step(const Rows& rows, const std::vector<std::size_t>& batch,
            const std::vector<std::vector<double>>& grads, double eta, double l2, double l1) {
    const double n = static_cast<double>(batch.size());
    std::vector<double> G(W.size(), 0.0);
    for (std::size_t bi = 0; bi < batch.size(); ++bi) {
      std::vector<double> x(F, 0.0);
      for (const auto& [j, v] : rows[batch[bi]]) x[j] += v;
      for (Index j = 0; j < F; ++j)
        for (int i = 0; i < K; ++i) G[j * K + i] += x[j] * grads[bi][i] / n;
    }
    for (std::size_t w = 0; w < W.size(); ++w) {
      double v = (1.0 - eta * l2) * W[w] - eta * G[w];
      const double t = eta * l1;
      v = v > 0 ? std::max(0.0, v - t) : std::min(0.0, v + t);
      W[w] = v;
    }
    for (int i = 0; i < K; ++i) {
      double s = 0;
      for (const auto& g : grads) s += g[i];
      b[i] -= eta * s / n;
    }
  }
};

// dloss/dz of the logistic head, textbook formulas.
std::vector<double> ref_grad(const std::vector<double>& z, int y) {
  if (z.size() == 1) return {1.0 / (1.0 + std::exp(-z[0])) - y};
  const double m = *std::max_element(z.begin(), z.end());
  double s = 0;
  for (double v : z) s += std::exp(v - m);
  std::vector<double> g(z.size());
  for (std::size_t i = 0; i < z.size(); ++i) g[i] = std::exp(z[i] - m) / s - (int(i) == y);
  return g;
}

double max_abs_diff(std::span<const float> a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i)
    d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
  return d;
}

// ---------------------------------------------------------------------------
// EmbeddingBagLayer

TEST(TrainerLayer, ForwardEqualsDenseProductWithUnsortedRepeatedIndicesAndEmptyRow) {
  const Index F = 6;
  const int K = 3;
  const Rows rows = {
      {{4, 1.0f}, {1, 2.0f}, {4, 0.5f}},  // unsorted, index 4 twice
      {},                                 // empty: logits are the bias
      {{0, -1.5f}},
      {{5, 3.0f}, {2, 1.0f}, {5, -3.0f}, {0, 0.25f}},  // repeat that cancels
  };
  const CsrMatrix x = make_csr(F, rows);
  std::vector<float> weight(F * K), bias = {0.5f, -1.0f, 2.0f};
  for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = 0.1f * static_cast<float>(i) - 0.7f;
  DenseRef ref(F, K);
  ref.W.assign(weight.begin(), weight.end());
  ref.b.assign(bias.begin(), bias.end());

  EmbeddingBagLayer layer(weight, bias, F, K, 0.0, 0.0);
  std::vector<Index> batch = {3, 1, 0, 2};  // any order of rows
  std::vector<float> logits(batch.size() * K);
  layer.forward(x, batch, logits.data());
  for (std::size_t b = 0; b < batch.size(); ++b) {
    const std::vector<double> z = ref.logits(rows, batch[b]);
    for (int i = 0; i < K; ++i) EXPECT_NEAR(logits[b * K + i], z[i], 1e-5) << b << "," << i;
  }
  // The empty row gives exactly the bias.
  for (int i = 0; i < K; ++i) EXPECT_EQ(logits[1 * K + i], bias[i]);

  // The inference function agrees with the training layer.
  std::vector<float> z1(K);
  embedding_bag_forward(weight.data(), bias.data(), K, x.row(0), z1.data());
  const std::vector<double> z0 = ref.logits(rows, 0);
  for (int i = 0; i < K; ++i) EXPECT_NEAR(z1[i], z0[i], 1e-5);

  // One output (the binary head) takes its own code path.
  std::vector<float> w1(F), b1 = {0.25f};
  for (Index j = 0; j < F; ++j) w1[j] = static_cast<float>(j) - 2.0f;
  DenseRef ref1(F, 1);
  ref1.W.assign(w1.begin(), w1.end());
  ref1.b = {0.25};
  EmbeddingBagLayer layer1(w1, b1, F, 1, 0.0, 0.0);
  std::vector<float> l1(batch.size());
  layer1.forward(x, batch, l1.data());
  for (std::size_t b = 0; b < batch.size(); ++b)
    EXPECT_NEAR(l1[b], ref1.logits(rows, batch[b])[0], 1e-5);
}

// One step from non-zero weights, written out by hand with naive loops:
// every weight decays (touched or not), the touched ones also move by the
// batch-mean gradient, and then every weight is soft-thresholded.
void check_one_step(int K, const std::vector<Index>& batch) {
  const Index F = 5;
  const Rows rows = {
      {{0, 1.0f}, {3, 2.0f}},
      {{3, -1.0f}, {1, 0.5f}, {3, 1.0f}},
      {{4, 2.0f}},
  };
  const CsrMatrix x = make_csr(F, rows);
  const double eta = 0.1, l2 = 0.5, l1 = 0.02;
  std::vector<float> w0(F * K), b0(K);
  // Some weights below eta*l1 in size (they must clip to exactly 0), some big.
  const float init[] = {0.8f, -0.6f, 0.001f, -0.0015f, 0.3f, 2.0f, -1.0f, 0.0f, 0.0019f, -0.4f,
                        1.5f, 0.05f, -0.002f, 0.7f, -0.9f};
  for (std::size_t i = 0; i < w0.size(); ++i) w0[i] = init[i];
  for (int i = 0; i < K; ++i) b0[i] = 0.1f * (i + 1);
  std::vector<float> grads(batch.size() * K);
  for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = 0.3f * static_cast<float>(i % 4) - 0.4f;

  // Expected, by hand.
  const double B = static_cast<double>(batch.size());
  std::vector<double> expected_w(w0.size()), expected_b(K);
  for (Index j = 0; j < F; ++j) {
    for (int i = 0; i < K; ++i) {
      double mean_xg = 0;  // mean over the batch of x_b[j] * g_b[i]
      for (std::size_t b = 0; b < batch.size(); ++b)
        for (const auto& [col, v] : rows[batch[b]])
          if (col == j) mean_xg += v * grads[b * K + i] / B;
      double w = (1.0 - eta * l2) * w0[j * K + i] - eta * mean_xg;
      if (w > eta * l1) w -= eta * l1;
      else if (w < -eta * l1) w += eta * l1;
      else w = 0.0;
      expected_w[j * K + i] = w;
    }
  }
  for (int i = 0; i < K; ++i) {
    double mean_g = 0;
    for (std::size_t b = 0; b < batch.size(); ++b) mean_g += grads[b * K + i] / B;
    expected_b[i] = b0[i] - eta * mean_g;
  }

  std::vector<float> w = w0, bias = b0;
  EmbeddingBagLayer layer(w, bias, F, K, l2, l1);
  std::vector<float> logits(batch.size() * K);
  layer.forward(x, batch, logits.data());
  layer.step(x, batch, grads.data(), eta);
  layer.flush();
  for (std::size_t i = 0; i < w.size(); ++i)
    EXPECT_NEAR(w[i], expected_w[i], 1e-6) << "K=" << K << " weight " << i;
  for (int i = 0; i < K; ++i) EXPECT_NEAR(bias[i], expected_b[i], 1e-6);
  // Clipped weights are exactly zero, not tiny of either sign.
  int zeros = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (expected_w[i] == 0.0) {
      EXPECT_EQ(w[i], 0.0f) << i;
      ++zeros;
    }
  EXPECT_GT(zeros, 0) << "the case should exercise the clip at zero";
}

TEST(TrainerLayer, OneStepEqualsHandComputedEagerUpdateBatchOfOne) {
  check_one_step(1, {1});
  check_one_step(3, {1});
}

TEST(TrainerLayer, OneStepEqualsHandComputedEagerUpdateBatchOfThree) {
  check_one_step(1, {2, 0, 1});
  check_one_step(3, {2, 0, 1});
}

// N steps of SGD on the real loss: the lazy layer (float32, w = s v, lazy
// L1) against the eager dense reference (float64). The two trajectories only
// differ by float32 rounding: each step rounds a stored weight to a relative
// 6e-8, the loss is convex and the steps contract, so after a few hundred
// steps the weights (of size ~1) agree to ~1e-5; 2e-4 leaves a margin while
// staying far below the effect of either penalty (checked below).
struct LazyVsEager {
  double max_weight_diff = 0;
  double max_logit_diff = 0;
  double max_bias_diff = 0;
  int touched_zeros = 0;  // reference weights of features in the data that L1 holds at 0
  DenseRef ref;
  std::vector<float> w, b;
};

LazyVsEager run_lazy_vs_eager(int K, int batch_size, int steps, double eta, double l2, double l1,
                              unsigned seed) {
  const Index F = 30;
  const int n = 40;
  std::mt19937 rng(seed);
  const Rows rows = random_rows(n, F, 6, rng);
  const CsrMatrix x = make_csr(F, rows);
  std::vector<int> y(n);
  std::uniform_int_distribution<int> cls(0, K == 1 ? 1 : K - 1);
  for (int& v : y) v = cls(rng);
  std::uniform_int_distribution<Index> pick(0, n - 1);

  LazyVsEager out{0, 0, 0, 0, DenseRef(F, K), std::vector<float>(F * K, 0.0f), std::vector<float>(K, 0.0f)};
  EmbeddingBagLayer layer(out.w, out.b, F, K, l2, l1);
  std::vector<float> logits(batch_size * K), grads(batch_size * K);
  for (int t = 0; t < steps; ++t) {
    std::vector<Index> batch(batch_size);
    std::vector<std::size_t> batch_ref(batch_size);
    for (int i = 0; i < batch_size; ++i) batch_ref[i] = static_cast<std::size_t>(batch[i] = pick(rng));
    layer.forward(x, batch, logits.data());
    std::vector<std::vector<double>> ref_grads;
    for (int i = 0; i < batch_size; ++i) {
      const std::vector<double> z = out.ref.logits(rows, batch_ref[i]);
      for (int k = 0; k < K; ++k)
        out.max_logit_diff = std::max(out.max_logit_diff, std::abs(logits[i * K + k] - z[k]));
      ref_grads.push_back(ref_grad(z, y[batch[i]]));
      // The layer's side uses its own logits, as the trainer does.
      std::vector<double> zl(logits.begin() + i * K, logits.begin() + (i + 1) * K);
      const std::vector<double> g = ref_grad(zl, y[batch[i]]);
      for (int k = 0; k < K; ++k) grads[i * K + k] = static_cast<float>(g[k]);
    }
    layer.step(x, batch, grads.data(), eta);
    out.ref.step(rows, batch_ref, ref_grads, eta, l2, l1);
  }
  layer.flush();
  out.max_weight_diff = max_abs_diff(out.w, out.ref.W);
  out.max_bias_diff = max_abs_diff(out.b, out.ref.b);
  std::vector<bool> touched(F, false);
  for (const auto& row : rows)
    for (const auto& e : row) touched[e.first] = true;
  for (Index j = 0; j < F; ++j)
    for (int k = 0; k < K; ++k) out.touched_zeros += touched[j] && out.ref.W[j * K + k] == 0.0;
  // Folding is idempotent: a second flush changes nothing.
  const std::vector<float> once = out.w;
  layer.flush();
  EXPECT_EQ(once, out.w);
  return out;
}

constexpr double kLazyTolerance = 2e-4;

TEST(TrainerLayer, ManyStepsWithL2AndL1EqualEagerDenseUpdates) {
  for (int K : {1, 4}) {
    for (int batch : {1, 3}) {
      const LazyVsEager r = run_lazy_vs_eager(K, batch, 400, 0.2, 0.01, 0.002, 100 + K + batch);
      EXPECT_LT(r.max_weight_diff, kLazyTolerance) << "K=" << K << " batch=" << batch;
      EXPECT_LT(r.max_logit_diff, kLazyTolerance) << "K=" << K << " batch=" << batch;
      EXPECT_LT(r.max_bias_diff, kLazyTolerance) << "K=" << K << " batch=" << batch;
      // The case is not trivial: weights moved, and L1 zeroed some that data touched.
      double biggest = 0;
      for (double v : r.ref.W) biggest = std::max(biggest, std::abs(v));
      EXPECT_GT(biggest, 0.3);
      EXPECT_GT(r.touched_zeros, 0);
    }
  }
}

TEST(TrainerLayer, PenaltiesChangeTheResultByFarMoreThanTheTolerance) {
  // Guards the equivalence test's power: dropping either penalty moves the
  // weights well beyond kLazyTolerance, so a lazy scheme that forgot one
  // could not pass it.
  const LazyVsEager both = run_lazy_vs_eager(1, 1, 400, 0.2, 0.01, 0.002, 101);
  const LazyVsEager no_l2 = run_lazy_vs_eager(1, 1, 400, 0.2, 0.0, 0.002, 101);
  const LazyVsEager no_l1 = run_lazy_vs_eager(1, 1, 400, 0.2, 0.01, 0.0, 101);
  auto diff = [](const DenseRef& a, const DenseRef& b) {
    double d = 0;
    for (std::size_t i = 0; i < a.W.size(); ++i) d = std::max(d, std::abs(a.W[i] - b.W[i]));
    return d;
  };
  EXPECT_GT(diff(both.ref, no_l2.ref), 50 * kLazyTolerance);
  EXPECT_GT(diff(both.ref, no_l1.ref), 50 * kLazyTolerance);
}

TEST(TrainerLayer, ScaleRenormalisationKeepsLongStrongDecayEqualToEager) {
  // eta * l2 = 0.5 halves the scale every step: it passes 1e-6 after 20 steps
  // and would reach 2^-600 ~ 1e-181 after 600, far beyond float32 range for
  // the stored v = w / s (and s itself rounds to 0 as a float). Only folding
  // the scale into the weights when it gets small keeps this finite and equal
  // to the eager updates. Tolerance as above (weights here are ~1).
  for (double l1 : {0.0, 0.01}) {
    const LazyVsEager r = run_lazy_vs_eager(3, 2, 600, 0.5, 1.0, l1, 7);
    for (float v : r.w) ASSERT_TRUE(std::isfinite(v));
    EXPECT_LT(r.max_weight_diff, kLazyTolerance) << "l1=" << l1;
    EXPECT_LT(r.max_logit_diff, kLazyTolerance) << "l1=" << l1;
    double biggest = 0;
    for (double v : r.ref.W) biggest = std::max(biggest, std::abs(v));
    EXPECT_GT(biggest, 0.05) << "weights should not have decayed to nothing";
  }
}

TEST(TrainerLayer, StepAppliesPendingL1BeforeTheGradientEvenWithoutForward) {
  // Feature 0 sits untouched for 10 steps of L1 (0.01 each): eagerly it
  // shrinks from 0.05 to 0 and stays there. Then a gradient step adds 0.2 and
  // one more shrink follows: 0.19. Applying the pending shrinkage after the
  // gradient instead gives 0.05 + 0.2 - 0.11 = 0.14. step() must not rely on
  // a forward() over the same rows having caught the rows up first.
  const CsrMatrix x = make_csr(2, {{{0, 1.0f}}, {{1, 1.0f}}});
  std::vector<float> w = {0.05f, 0.05f}, b = {0.0f};
  EmbeddingBagLayer layer(w, b, 2, 1, 0.0, 0.01);
  const std::vector<Index> row1 = {1}, row0 = {0};
  const float zero_grad = 0.0f, push = -0.2f;
  for (int t = 0; t < 10; ++t) layer.step(x, row1, &zero_grad, 1.0);
  layer.step(x, row0, &push, 1.0);
  layer.flush();
  EXPECT_NEAR(w[0], 0.19f, 1e-6);
  EXPECT_EQ(w[1], 0.0f);
}

// Rows no training row touches (features numbered by frequency put them
// last) are left out of the flush's pass over every weight where they hold
// zeros: the same bits as with the pass, L2, L1 and averaging included. A
// row that holds a weight (a warm start) must still decay, so there the
// rows are kept.
TEST(TrainerLayer, UnusedZeroRowsAreLeftOutOfTheFlushWithTheSameBits) {
  const Index F = 6;
  const int K = 3;
  // Rows use features 0..2 only; 3..5 are unused.
  const CsrMatrix x = make_csr(F, {{{0, 1.0f}, {2, 2.0f}}, {{1, 1.5f}}, {{0, 0.5f}, {1, 1.0f}}});
  auto train = [&](std::vector<float> w, bool skip, bool* took) {
    std::vector<float> b(K, 0.0f);
    EmbeddingBagLayer layer(w, b, F, K, 0.05, 0.001);
    *took = skip && layer.skip_unused_rows(3);
    std::vector<float> grads(3 * K);
    for (int t = 0; t < 30; ++t) {
      for (int i = 0; i < 3 * K; ++i) grads[static_cast<std::size_t>(i)] = 0.1f * float((t + i) % 5) - 0.2f;
      const std::vector<Index> rows = {t % 3, (t + 1) % 3};
      layer.step(x, rows, grads.data(), 0.3);
      if (t % 10 == 9) layer.flush();
    }
    layer.flush();
    return w;
  };
  const std::vector<float> fresh(static_cast<std::size_t>(F) * K, 0.0f);
  bool took = false;
  const std::vector<float> all = train(fresh, false, &took);
  EXPECT_EQ(train(fresh, true, &took), all);
  EXPECT_TRUE(took);
  for (std::size_t j = 3 * K; j < all.size(); ++j) EXPECT_EQ(all[j], 0.0f);
  // A warm start's unused row 4 holds 1: it decays, so no row is skipped.
  std::vector<float> warm = fresh;
  warm[4 * K] = 1.0f;
  const std::vector<float> kept = train(warm, true, &took);
  EXPECT_FALSE(took);
  EXPECT_EQ(kept, train(warm, false, &took));
  EXPECT_LT(kept[4 * K], 0.9f);
  EXPECT_GT(kept[4 * K], 0.0f);
}

TEST(TrainerLayer, AveragingLeavesUnusedZeroRowsOutWithTheSameMean) {
  const Index F = 5;
  const int K = 2;
  const CsrMatrix x = make_csr(F, {{{0, 1.0f}}, {{1, 2.0f}, {0, 1.0f}}});
  auto mean = [&](bool skip) {
    std::vector<float> w(static_cast<std::size_t>(F) * K, 0.0f), b(K, 0.0f);
    EmbeddingBagLayer layer(w, b, F, K, 0.02, 0.0);
    layer.start_averaging();
    EXPECT_EQ(skip && layer.skip_unused_rows(2), skip);
    const std::vector<float> grads = {0.3f, -0.1f, -0.2f, 0.4f};
    for (int t = 0; t < 20; ++t) {
      layer.step(x, std::vector<Index>{0, 1}, grads.data(), 0.2);
      if (t % 5 == 4) layer.flush();
    }
    layer.flush();
    std::vector<float> out(w.size()), out_b(K);
    layer.write_average(out, out_b);
    return out;
  };
  EXPECT_EQ(mean(true), mean(false));
}

// ---------------------------------------------------------------------------
// shuffle_rows

TEST(TrainerShuffle, IsASeededPermutation) {
  std::vector<Index> a(100), b(100), c(100);
  std::iota(a.begin(), a.end(), 0);
  b = a;
  c = a;
  std::mt19937_64 r1(5), r2(5), r3(6);
  shuffle_rows(a, r1);
  shuffle_rows(b, r2);
  shuffle_rows(c, r3);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::vector<Index> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  for (Index i = 0; i < 100; ++i) EXPECT_EQ(sorted[i], i);
  std::vector<Index> identity(100);
  std::iota(identity.begin(), identity.end(), 0);
  EXPECT_NE(a, identity);
}

TEST(TrainerShuffle, EveryPositionIsEquallyLikely) {
  // 5 items, 20000 shuffles: each item lands in position 0 with p = 1/5.
  std::mt19937_64 rng(1);
  std::vector<int> first(5, 0);
  for (int t = 0; t < 20000; ++t) {
    std::vector<Index> v = {0, 1, 2, 3, 4};
    shuffle_rows(v, rng);
    ++first[v[0]];
  }
  // Chi-square with 4 degrees of freedom; 18.5 is the 0.999 quantile.
  double chi2 = 0;
  for (int c : first) chi2 += (c - 4000.0) * (c - 4000.0) / 4000.0;
  EXPECT_LT(chi2, 18.5);
}

// ---------------------------------------------------------------------------
// train_model

Dataset make_dataset(const std::string& name, Index cols, const Rows& rows,
                     std::vector<std::int32_t> y) {
  return Dataset{name, make_csr(cols, rows), std::move(y)};
}

Model zeros_model(int classes, Index features) {
  std::vector<std::string> names;
  for (int c = 0; c < classes; ++c) names.push_back(std::to_string(c));
  return Model::zeros(names, true, features);
}

TrainingSummary train_quietly(Model& model, const Dataset& train, const Dataset* valid,
                              const OptimizerConfig& c) {
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  return train_model(model, train, valid, c, LayerKind::kSparse, quiet);
}

// Separable: feature c (value 1) marks class c; every row also has noise
// features shared by all classes.
Dataset separable(int classes, int n, unsigned seed) {
  std::mt19937 rng(seed);
  const Index F = classes + 20;
  std::uniform_int_distribution<Index> noise(classes, F - 1);
  std::uniform_real_distribution<float> val(0.5f, 1.5f);
  Rows rows(n);
  std::vector<std::int32_t> y(n);
  for (int r = 0; r < n; ++r) {
    y[r] = r % classes;
    rows[r].emplace_back(y[r], 1.0f);
    for (int p = 0; p < 3; ++p) rows[r].emplace_back(noise(rng), val(rng));
  }
  return make_dataset("train", F, rows, y);
}

double train_accuracy(const Model& model, const Dataset& d) {
  const std::vector<double> p = predict_proba(model, d.x, 1);
  const int c = model.num_classes();
  int right = 0;
  for (Index r = 0; r < d.x.rows(); ++r) {
    const double* row = p.data() + static_cast<std::size_t>(r) * c;
    right += (std::max_element(row, row + c) - row) == d.y[r];
  }
  return static_cast<double>(right) / d.x.rows();
}

TEST(TrainerTrain, LearnsALinearlySeparableSetPerfectly) {
  for (int classes : {2, 4}) {
    const Dataset train = separable(classes, 60, 3);
    Model model = zeros_model(classes, train.x.cols());
    OptimizerConfig c;
    c.epochs = 10;
    c.learning_rate = 0.3;
    const TrainingSummary s = train_quietly(model, train, nullptr, c);
    EXPECT_EQ(train_accuracy(model, train), 1.0) << classes << " classes";
    ASSERT_EQ(s.history.size(), 10u);
    EXPECT_EQ(s.epochs_run, 10);
    EXPECT_EQ(s.best_epoch, 10);
    EXPECT_FALSE(s.stopped_early);
    EXPECT_LT(s.history.back().train_loss, 0.5 * s.history.front().train_loss);
  }
}

TEST(TrainerTrain, SameSeedGivesBitIdenticalWeights) {
  const Dataset train = separable(3, 50, 4);
  OptimizerConfig c;
  c.epochs = 3;
  c.batch_size = 4;
  c.l2 = 1e-3;
  c.l1 = 1e-4;
  c.seed = 1234;
  Model a = zeros_model(3, train.x.cols()), b = zeros_model(3, train.x.cols());
  train_quietly(a, train, nullptr, c);
  train_quietly(b, train, nullptr, c);
  ASSERT_EQ(a.weight.size(), b.weight.size());
  EXPECT_EQ(0, std::memcmp(a.weight.data(), b.weight.data(), a.weight.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(a.bias.data(), b.bias.data(), a.bias.size() * sizeof(float)));

  c.seed = 1235;
  Model d = zeros_model(3, train.x.cols());
  train_quietly(d, train, nullptr, c);
  EXPECT_NE(0, std::memcmp(a.weight.data(), d.weight.data(), a.weight.size() * sizeof(float)));
}

// The whole loop in the test: epochs over `order` (reshuffled in place each
// epoch with shuffle_rows when `shuffle`), batches of `batch_size` (the last
// one shorter), one update per batch with eta(t), t counted from 1.
template <class EtaFn>
// Each row's gradient is clipped so that its own update moves none of its
// logits by more than max_logit_step: |g_i| <= max / ((eta / B) (sum v^2 + 1)),
// the sum over the row's stored values, the 1 for the bias.
DenseRef reference_sgd(const Rows& rows, const std::vector<std::int32_t>& y, Index F, int K,
                       std::vector<Index> order, bool shuffle, std::uint64_t seed, int epochs,
                       int batch_size, double l2, double l1, EtaFn eta,
                       double max_logit_step = kMaxLogitStep) {
  DenseRef ref(F, K);
  std::mt19937_64 rng(seed);
  std::int64_t t = 0;
  for (int e = 0; e < epochs; ++e) {
    if (shuffle) shuffle_rows(order, rng);
    for (std::size_t begin = 0; begin < order.size(); begin += batch_size) {
      const std::size_t end = std::min(order.size(), begin + batch_size);
      const double rate = eta(++t);
      std::vector<std::size_t> batch;
      std::vector<std::vector<double>> grads;
      for (std::size_t p = begin; p < end; ++p) {
        batch.push_back(static_cast<std::size_t>(order[p]));
        std::vector<double> g = ref_grad(ref.logits(rows, order[p]), y[order[p]]);
        double sq = 1;
        for (const auto& [j, v] : rows[order[p]]) sq += double(v) * v;
        const double limit = max_logit_step / (rate / double(end - begin) * sq);
        for (double& gi : g) gi = std::clamp(gi, -limit, limit);
        grads.push_back(std::move(g));
      }
      ref.step(rows, batch, grads, rate, l2, l1);
    }
  }
  return ref;
}

struct OrderCase {
  Rows rows;
  std::vector<std::int32_t> y;
  Index F = 12;
  int n = 10;
};

OrderCase order_case(int classes) {
  OrderCase oc;
  std::mt19937 rng(21);
  oc.rows = random_rows(oc.n, oc.F, 5, rng);
  for (int r = 0; r < oc.n; ++r) oc.y.push_back(r % classes);
  return oc;
}

std::vector<Index> identity(int n) {
  std::vector<Index> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(TrainerTrain, ClipsEachRowsLogitStepAsTheReferenceDoes) {
  // Three of the ten rows of the case above replaced by rows of values in
  // the tens (|x|^2 6,800; written out, as the random rows differ between
  // standard libraries) at rate 0.8: their steps would move their logits by
  // hundreds, so the clip shapes the run. The other rows (|x|^2 <= 21)
  // reach the limit at most alone in an epoch's last batch (of one row), so
  // at most 4 of 10 rows are clipped and the divergence guard, which needs
  // more than half, does not restart, whatever the last bit of rounding.
  // Batches of 3, a linear schedule, softmax and sigmoid, L2.
  for (int classes : {2, 3}) {
    OrderCase oc = order_case(classes);
    for (Index r = 0; r < 3; ++r) oc.rows[static_cast<std::size_t>(r)] = {{r, 40.0f}, {r + 3, 60.0f}, {r + 6, -40.0f}};
    OptimizerConfig c;
    c.epochs = 4;
    c.learning_rate = 0.8;
    c.schedule = ScheduleKind::kLinear;
    c.batch_size = 3;
    c.l2 = 0.01;
    c.seed = 5;
    Model model = zeros_model(classes, oc.F);
    const Dataset train = make_dataset("train", oc.F, oc.rows, oc.y);
    const TrainingSummary s = train_quietly(model, train, nullptr, c);
    EXPECT_TRUE(s.restarts.empty());
    const double total = 16.0;
    auto eta = [&](std::int64_t t) { return 0.8 * (1.0 - double(t - 1) / total); };
    const int K = classes == 2 ? 1 : classes;
    const DenseRef clipped = reference_sgd(oc.rows, oc.y, oc.F, K, identity(oc.n), true, 5, 4, 3,
                                           0.01, 0.0, eta);
    const DenseRef unclipped = reference_sgd(oc.rows, oc.y, oc.F, K, identity(oc.n), true, 5, 4, 3,
                                             0.01, 0.0, eta, std::numeric_limits<double>::infinity());
    double scale = 0;
    for (const double w : clipped.W) scale = std::max(scale, std::abs(w));
    EXPECT_LT(max_abs_diff(model.weight, clipped.W), 1e-5 * scale) << classes;
    EXPECT_LT(max_abs_diff(model.bias, clipped.b), 1e-5 * scale) << classes;
    EXPECT_GT(max_abs_diff(model.weight, unclipped.W), 0.1 * scale) << "the clip must act here";
  }
}

TEST(TrainerTrain, WithoutShuffleVisitsRowsInFileOrder) {
  const OrderCase oc = order_case(2);
  OptimizerConfig c;
  c.epochs = 3;
  c.learning_rate = 0.5;
  c.schedule = ScheduleKind::kConstant;
  c.shuffle = false;
  Model model = zeros_model(2, oc.F);
  const Dataset train = make_dataset("train", oc.F, oc.rows, oc.y);
  train_quietly(model, train, nullptr, c);
  auto eta = [](std::int64_t) { return 0.5; };
  const DenseRef in_order =
      reference_sgd(oc.rows, oc.y, oc.F, 1, identity(oc.n), false, 0, 3, 1, 0, 0, eta);
  std::vector<Index> reversed = identity(oc.n);
  std::reverse(reversed.begin(), reversed.end());
  const DenseRef backwards =
      reference_sgd(oc.rows, oc.y, oc.F, 1, reversed, false, 0, 3, 1, 0, 0, eta);
  EXPECT_LT(max_abs_diff(model.weight, in_order.W), 1e-5);
  EXPECT_LT(max_abs_diff(model.bias, in_order.b), 1e-5);
  // The order matters in this case, so the check above could fail.
  EXPECT_GT(max_abs_diff(model.weight, backwards.W), 1e-2);
}

TEST(TrainerTrain, WithShuffleVisitsRowsInTheSeededPermutation) {
  const OrderCase oc = order_case(2);
  OptimizerConfig c;
  c.epochs = 3;
  c.learning_rate = 0.5;
  c.schedule = ScheduleKind::kConstant;
  c.seed = 99;
  Model model = zeros_model(2, oc.F);
  const Dataset train = make_dataset("train", oc.F, oc.rows, oc.y);
  train_quietly(model, train, nullptr, c);
  auto eta = [](std::int64_t) { return 0.5; };
  const DenseRef shuffled =
      reference_sgd(oc.rows, oc.y, oc.F, 1, identity(oc.n), true, 99, 3, 1, 0, 0, eta);
  const DenseRef in_order =
      reference_sgd(oc.rows, oc.y, oc.F, 1, identity(oc.n), false, 0, 3, 1, 0, 0, eta);
  EXPECT_LT(max_abs_diff(model.weight, shuffled.W), 1e-5);
  EXPECT_GT(max_abs_diff(model.weight, in_order.W), 1e-2);
}

TEST(TrainerTrain, MatchesReferenceSgdWithBatchesScheduleAndPenalties) {
  // 10 rows in batches of 3 (the last batch has 1 row), invscaling and
  // linear schedules, L2 and L1, softmax and sigmoid heads: the trainer's
  // weights equal the naive dense eager loop's within float32 tolerance.
  for (int classes : {2, 3}) {
    for (ScheduleKind kind : {ScheduleKind::kInvScaling, ScheduleKind::kLinear}) {
      const OrderCase oc = order_case(classes);
      OptimizerConfig c;
      c.epochs = 4;
      c.learning_rate = 0.8;
      c.schedule = kind;
      c.power_t = 0.5;
      c.batch_size = 3;
      c.l2 = 0.05;
      c.l1 = 0.01;
      c.seed = 5;
      Model model = zeros_model(classes, oc.F);
      const Dataset train = make_dataset("train", oc.F, oc.rows, oc.y);
      const TrainingSummary s = train_quietly(model, train, nullptr, c);
      const double total = 4.0 * 4.0;  // 4 batches per epoch, 4 epochs
      auto eta = [&](std::int64_t t) {
        return kind == ScheduleKind::kInvScaling ? 0.8 / std::sqrt(double(t))
                                                 : 0.8 * (1.0 - double(t - 1) / total);
      };
      const int K = classes == 2 ? 1 : classes;
      const DenseRef ref = reference_sgd(oc.rows, oc.y, oc.F, K, identity(oc.n), true, 5, 4, 3,
                                         0.05, 0.01, eta);
      EXPECT_LT(max_abs_diff(model.weight, ref.W), 1e-5) << classes << " " << to_string(kind);
      EXPECT_LT(max_abs_diff(model.bias, ref.b), 1e-5) << classes << " " << to_string(kind);
      EXPECT_NEAR(s.history.back().learning_rate, eta(16), 1e-12);
    }
  }
}

// Valid loss that first falls, then rises: train is separable (margins grow
// every epoch), valid has the same rows but 2 of every 10 labels flipped, so
// its loss 0.8 softplus(-m) + 0.2 softplus(m) is lowest at margin m = ln 4
// and rises after.
struct EarlyStopCase {
  Dataset train, valid;
};

EarlyStopCase early_stop_case() {
  Rows train_rows, valid_rows;
  std::vector<std::int32_t> ty, vy;
  for (int r = 0; r < 20; ++r) {
    const int cls = r % 2;
    train_rows.push_back({{static_cast<Index>(cls), 1.0f}});
    ty.push_back(cls);
  }
  for (int r = 0; r < 20; ++r) {
    const int cls = r % 2;
    valid_rows.push_back({{static_cast<Index>(cls), 1.0f}});
    vy.push_back((r / 2) % 5 == 0 ? 1 - cls : cls);  // 4 of 20 flipped
  }
  return {make_dataset("train", 2, train_rows, ty), make_dataset("valid", 2, valid_rows, vy)};
}

TEST(TrainerEarlyStopping, StopsAfterPatienceAndKeepsTheBestEpochsWeights) {
  const EarlyStopCase ec = early_stop_case();
  OptimizerConfig c;
  c.epochs = 40;
  c.learning_rate = 0.05;
  c.schedule = ScheduleKind::kConstant;  // a curve that rises again: early stopping has work
  c.seed = 3;
  c.min_delta = 1e-4;

  // The full curve first (no early stopping), to know where the best is.
  Model full = zeros_model(2, 2);
  const TrainingSummary all = train_quietly(full, ec.train, &ec.valid, c);
  ASSERT_EQ(all.history.size(), 40u);
  ASSERT_FALSE(all.stopped_early);
  double best = std::numeric_limits<double>::infinity();
  int best_epoch = 0, bad = 0, stop_epoch = 0;
  const int patience = 3;
  for (const EpochRecord& r : all.history) {
    ASSERT_TRUE(r.valid.has_value());
    if (r.valid->log_loss < best - c.min_delta) {
      best = r.valid->log_loss;
      best_epoch = r.epoch;
      bad = 0;
    } else if (++bad >= patience) {
      stop_epoch = r.epoch;
      break;
    }
  }
  // The case does what it is built for: improves for a while, then worsens.
  ASSERT_GT(best_epoch, 1);
  ASSERT_GT(stop_epoch, 0) << "valid loss never rose";
  ASSERT_EQ(stop_epoch, best_epoch + patience);
  ASSERT_GT(all.history[stop_epoch - 1].valid->log_loss, best);

  c.patience = patience;
  Model stopped = zeros_model(2, 2);
  const TrainingSummary s = train_quietly(stopped, ec.train, &ec.valid, c);
  EXPECT_TRUE(s.stopped_early);
  EXPECT_EQ(s.epochs_run, stop_epoch);
  EXPECT_EQ(s.history.size(), static_cast<std::size_t>(stop_epoch));
  EXPECT_EQ(s.best_epoch, best_epoch);

  // The kept weights are those at the end of the best epoch: a fresh run of
  // exactly best_epoch epochs with the same seed (constant rate, so the
  // schedule does not depend on the epoch count) reproduces them bit for bit.
  OptimizerConfig shorter = c;
  shorter.patience = 0;
  shorter.epochs = best_epoch;
  Model again = zeros_model(2, 2);
  train_quietly(again, ec.train, nullptr, shorter);
  EXPECT_EQ(0, std::memcmp(stopped.weight.data(), again.weight.data(),
                           again.weight.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(stopped.bias.data(), again.bias.data(), again.bias.size() * sizeof(float)));
  // ... and they are not simply the last epoch's.
  OptimizerConfig last = shorter;
  last.epochs = stop_epoch;
  Model at_stop = zeros_model(2, 2);
  train_quietly(at_stop, ec.train, nullptr, last);
  EXPECT_NE(0, std::memcmp(stopped.weight.data(), at_stop.weight.data(),
                           at_stop.weight.size() * sizeof(float)));
}

TEST(TrainerEarlyStopping, RunsAllEpochsWhileValidLossKeepsImproving) {
  const Dataset train = separable(2, 40, 8);
  const Dataset valid = separable(2, 20, 9);
  OptimizerConfig c;
  c.epochs = 5;
  c.learning_rate = 0.05;
  c.patience = 2;
  Model model = zeros_model(2, train.x.cols());
  const TrainingSummary s = train_quietly(model, train, &valid, c);
  EXPECT_FALSE(s.stopped_early);
  EXPECT_EQ(s.epochs_run, 5);
  EXPECT_EQ(s.best_epoch, 5);
}

TEST(TrainerDivergence, RateTooLargeAfterEveryRestartRaisesErrorNamingEpochAndLearningRate) {
  const Dataset train = separable(2, 20, 10);
  Rows big;
  std::vector<std::int32_t> y;
  for (int r = 0; r < 20; ++r) {
    big.push_back({{static_cast<Index>(r % 2), 1e4f}, {2, 3e4f}});
    y.push_back(r % 2);
  }
  const Dataset huge = make_dataset("train", 3, big, y);
  OptimizerConfig c;
  c.epochs = 3;
  c.learning_rate = 1e36;
  Model model = zeros_model(2, 3);
  try {
    train_quietly(model, huge, nullptr, c);
    FAIL() << "expected bagel::Error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("epoch 1"), std::string::npos) << what;
    EXPECT_NE(what.find("learning_rate"), std::string::npos) << what;
    EXPECT_NE(what.find("1e+28"), std::string::npos) << what;  // the last rate tried: 1e36 / 10^8
    EXPECT_NE(what.find("after 8 restarts"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace bagel
