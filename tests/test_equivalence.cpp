// The EmbeddingBag-sum layer and the dense Linear layer compute the same
// model: same logits, losses, gradients, steps and trained weights, within
// float32 rounding. As scikit-learn runs one SGD suite over dense and sparse
// inputs, the layer-contract tests below are typed over both layers and
// checked against a double-precision oracle written here (plain eager SGD on
// a dense (F, K) array, independent of bagel's code); the cross-layer tests
// then compare the two float32 layers with each other directly.
//
// Tolerances. float32 has unit roundoff u = 2^-24 ~ 6e-8 (kEps below is
// 2u = FLT_EPSILON). A sum of n products computed in any order is off by at
// most gamma_n * sum|terms| with gamma_n ~ n u (Higham, ch. 3), so two
// float32 computations of one logit differ by at most ~2 n u sum|x e|. We
// use 4 n kEps sum|terms| (a further x4 of margin) and never a bare absolute
// constant for per-step quantities. Over many SGD steps each step adds its
// own rounding and the SGD map (I - eta H) carries earlier differences
// forward, so the allowed weight difference grows with the number of steps;
// MaxWeightDifferenceGrowsAtMostLinearlyWithSteps measures that growth and
// the multi-step tolerances are derived from it (weight_tolerance below).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/dataset.h"
#include "bagel/dense_linear.h"
#include "bagel/error.h"
#include "bagel/embedding_bag.h"
#include "bagel/loss.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/progress.h"
#include "bagel/trainer.h"

namespace bagel {
namespace {

constexpr double kEps = FLT_EPSILON;  // 2^-23

// ---------------------------------------------------------------------------
// Data: CSR rows with what real bag-of-words data and hand-built CSR contain.

struct DataOptions {
  Index rows = 40;
  Index features = 30;
  int classes = 2;
  std::uint64_t seed = 1;
};

// Rows with 0..9 entries, indices in random (unsorted) order with repeats,
// every 7th row empty, values a mix of positive counts and negative reals.
// Labels from the arg-max of a random linear score, so they are learnable.
Dataset make_dataset(const DataOptions& o) {
  std::mt19937_64 rng(o.seed);
  std::uniform_int_distribution<Index> feature(0, o.features - 1);
  std::uniform_int_distribution<int> count(1, 9);
  std::uniform_real_distribution<double> real(-1.5, 1.5);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> truth(static_cast<std::size_t>(o.features) * o.classes);
  for (double& t : truth) t = normal(rng);

  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  std::vector<std::int32_t> y;
  for (Index r = 0; r < o.rows; ++r) {
    const int n = (r % 7 == 3) ? 0 : count(rng);
    std::vector<double> score(o.classes, 0.0);
    for (int p = 0; p < n; ++p) {
      // One entry in four repeats an index already in the row.
      const std::size_t row_begin = static_cast<std::size_t>(indptr.back());
      const bool repeat = p > 0 && rng() % 4 == 0;
      const Index j = repeat ? indices[row_begin + rng() % p] : feature(rng);
      const double v = (rng() % 2 == 0) ? double(1 + rng() % 3) : real(rng);
      const float value = static_cast<float>(v);
      indices.push_back(j);
      data.push_back(value);
      for (int c = 0; c < o.classes; ++c) score[c] += value * truth[j * o.classes + c];
    }
    indptr.push_back(static_cast<Index>(indices.size()));
    if (o.classes == 2) {
      y.push_back(score[1] - score[0] + 0.3 * normal(rng) > 0 ? 1 : 0);
    } else {
      for (double& s : score) s += 0.3 * normal(rng);
      y.push_back(static_cast<std::int32_t>(std::max_element(score.begin(), score.end()) -
                                            score.begin()));
    }
  }
  Dataset d;
  d.name = "equivalence";
  d.x = CsrMatrix(o.rows, o.features, std::move(indptr), std::move(indices), std::move(data));
  d.x.validate("make_dataset");
  d.y = std::move(y);
  return d;
}

std::vector<std::string> class_names(int classes) {
  std::vector<std::string> names;
  for (int c = 0; c < classes; ++c) names.push_back(std::string(1, char('a' + c)));
  return names;
}

// A model with small random weights and bias (zero weights would hide a
// transposed layout or a forgotten per-sample weight in the forward).
Model random_model(int classes, Index features, std::uint64_t seed, double stddev = 0.5) {
  Model m = Model::zeros(class_names(classes), false, features);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(stddev));
  for (float& w : m.weight) w = normal(rng);
  for (float& b : m.bias) b = normal(rng);
  return m;
}

// The cases below are only as good as the data: it must hold what the
// layers must handle.
TEST(EquivalenceData, RowsHaveUnsortedAndRepeatedIndicesNegativeValuesAndEmptyRows) {
  const Dataset d = make_dataset({.rows = 21, .features = 17, .classes = 4, .seed = 7});
  bool unsorted = false, repeated = false, negative = false, empty = false;
  for (Index r = 0; r < d.x.rows(); ++r) {
    const RowView row = d.x.row(r);
    empty |= row.size() == 0;
    unsorted |= !std::is_sorted(row.indices.begin(), row.indices.end());
    std::vector<Index> sorted(row.indices.begin(), row.indices.end());
    std::sort(sorted.begin(), sorted.end());
    repeated |= std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
    for (float v : row.values) negative |= v < 0;
  }
  EXPECT_TRUE(unsorted);
  EXPECT_TRUE(repeated);
  EXPECT_TRUE(negative);
  EXPECT_TRUE(empty);
  EXPECT_EQ(d.x.row(3).size(), 0u) << "the forward test reads row 3 as the empty row";
  EXPECT_EQ(std::set<std::int32_t>(d.y.begin(), d.y.end()).size(), 4u) << "all classes occur";
}

// ---------------------------------------------------------------------------
// The double-precision oracle: eager SGD on E (F, K), as the docs define it.

struct Oracle {
  Index features;
  int k;
  double l2, l1;
  std::vector<double> w, b;

  Oracle(const Model& m, double l2_, double l1_)
      : features(m.num_features), k(m.num_outputs), l2(l2_), l1(l1_),
        w(m.weight.begin(), m.weight.end()), b(m.bias.begin(), m.bias.end()) {}

  std::vector<double> forward(const CsrMatrix& x, std::span<const Index> rows) const {
    std::vector<double> z(rows.size() * k);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const RowView row = x.row(rows[r]);
      for (int i = 0; i < k; ++i) {
        double s = b[i];
        for (std::size_t p = 0; p < row.size(); ++p)
          s += double(row.values[p]) * w[std::size_t(row.indices[p]) * k + i];
        z[r * k + i] = s;
      }
    }
    return z;
  }

  // W <- (1 - eta l2) W - eta/B sum_b x_b g_b^T, then shrink by eta l1.
  void step(const CsrMatrix& x, std::span<const Index> rows, const std::vector<double>& g,
            double eta) {
    const double batch = double(rows.size());
    for (double& v : w) v *= 1.0 - eta * l2;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const RowView row = x.row(rows[r]);
      for (std::size_t p = 0; p < row.size(); ++p)
        for (int i = 0; i < k; ++i)
          w[std::size_t(row.indices[p]) * k + i] -= eta / batch * row.values[p] * g[r * k + i];
    }
    if (l1 > 0)
      for (double& v : w) v = v > 0 ? std::max(0.0, v - eta * l1) : std::min(0.0, v + eta * l1);
    for (int i = 0; i < k; ++i) {
      double s = 0;
      for (std::size_t r = 0; r < rows.size(); ++r) s += g[r * k + i];
      b[i] -= eta * s / batch;
    }
  }
};

// Loss and dloss/dz in double, from the textbook formulas (not loss.h).
double oracle_loss_and_grad(const double* z, int y, double* g, int k) {
  if (k == 1) {
    const double p = 1.0 / (1.0 + std::exp(-z[0]));
    g[0] = p - y;
    return std::log1p(std::exp(-std::abs(z[0]))) + std::max(z[0], 0.0) - y * z[0];
  }
  const double m = *std::max_element(z, z + k);
  double sum = 0;
  for (int i = 0; i < k; ++i) sum += std::exp(z[i] - m);
  for (int i = 0; i < k; ++i) g[i] = std::exp(z[i] - m) / sum - (i == y ? 1.0 : 0.0);
  return m + std::log(sum) - z[y];
}

// sum_p |x_p| |E[j_p, i]| + |b_i| for each logit of each row: the magnitude
// that float rounding of the logit is proportional to.
std::vector<double> logit_magnitude(const Model& m, const CsrMatrix& x,
                                    std::span<const Index> rows) {
  const int k = m.num_outputs;
  std::vector<double> mag(rows.size() * k);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const RowView row = x.row(rows[r]);
    for (int i = 0; i < k; ++i) {
      double s = std::abs(m.bias[i]);
      for (std::size_t p = 0; p < row.size(); ++p)
        s += std::abs(row.values[p]) * std::abs(m.weight[std::size_t(row.indices[p]) * k + i]);
      mag[r * k + i] = s;
    }
  }
  return mag;
}

// 4 n kEps sum|terms|: twice the float32 summation bound for n terms (see top).
double sum_tolerance(std::size_t terms, double magnitude) {
  return 4.0 * double(terms + 2) * kEps * magnitude + 1e-30;
}

std::vector<Index> iota_rows(Index n) {
  std::vector<Index> r(static_cast<std::size_t>(n));
  for (Index i = 0; i < n; ++i) r[i] = i;
  return r;
}

// Batches of `batch` rows from a seeded permutation, repeated for `steps`.
std::vector<std::vector<Index>> batch_order(Index rows, int batch, int steps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Index> order = iota_rows(rows);
  std::vector<std::vector<Index>> batches;
  std::size_t pos = order.size();
  while (static_cast<int>(batches.size()) < steps) {
    std::vector<Index> b;
    while (static_cast<int>(b.size()) < batch) {
      if (pos == order.size()) shuffle_rows(order, rng), pos = 0;
      b.push_back(order[pos++]);
    }
    batches.push_back(std::move(b));
  }
  return batches;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

std::string format_g(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

double max_abs(const std::vector<float>& a) {
  double m = 0;
  for (float v : a) m = std::max(m, std::abs(double(v)));
  return m;
}

// ---------------------------------------------------------------------------
// One interface over both layers, so the typed tests share their bodies.

template <class L>
struct Harness;

template <>
struct Harness<EmbeddingBagLayer> {
  static constexpr const char* kName = "sparse";
  Model model;
  EmbeddingBagLayer layer;
  Harness(Model m, double l2, double l1)
      : model(std::move(m)),
        layer(model.weight, model.bias, model.num_features, model.num_outputs, l2, l1) {}
  // True weights in the embedding layout (folds the lazy scale and L1 in).
  const Model& flushed() {
    layer.flush();
    return model;
  }
};

template <>
struct Harness<DenseLinearLayer> {
  static constexpr const char* kName = "dense";
  Model model;
  DenseLinearLayer layer;
  Harness(Model m, double l2, double l1) : model(std::move(m)), layer(model, l2, l1) {}
  const Model& flushed() {
    layer.flush();
    return model;
  }
};

// A forward + head + step, as run_epoch does; returns the float logits and grads.
template <class L>
void train_step(Harness<L>& h, const Dataset& d, std::span<const Index> rows, double eta,
                std::vector<float>* logits_out = nullptr, std::vector<float>* grads_out = nullptr) {
  const int k = h.layer.outputs();
  std::vector<float> z(rows.size() * k), g(rows.size() * k);
  h.layer.forward(d.x, rows, z.data());
  for (std::size_t b = 0; b < rows.size(); ++b)
    head_loss_and_grad(z.data() + b * k, d.y[rows[b]], g.data() + b * k, k,
                       k == 1 ? Head::kSigmoid : Head::kSoftmax);
  h.layer.step(d.x, rows, g.data(), eta);
  if (logits_out) *logits_out = z;
  if (grads_out) *grads_out = g;
}

// ---------------------------------------------------------------------------
// Typed suite: every layer against the double oracle.

template <class L>
class LayerContract : public ::testing::Test {};

using Layers = ::testing::Types<EmbeddingBagLayer, DenseLinearLayer>;
class LayerNames {
 public:
  template <class T>
  static std::string GetName(int) { return Harness<T>::kName; }
};
TYPED_TEST_SUITE(LayerContract, Layers, LayerNames);

TYPED_TEST(LayerContract, ForwardLogitsMatchOracleOnUnsortedRepeatedNegativeAndEmptyRows) {
  for (int classes : {2, 4}) {
    const Dataset d = make_dataset({.rows = 21, .features = 17, .classes = classes, .seed = 7});
    Harness<TypeParam> h(random_model(classes, 17, 11), 0.0, 0.0);
    const Oracle oracle(h.model, 0.0, 0.0);
    const std::vector<Index> rows = iota_rows(d.x.rows());
    const int k = h.model.num_outputs;
    std::vector<float> z(rows.size() * k);
    h.layer.forward(d.x, rows, z.data());
    const std::vector<double> want = oracle.forward(d.x, rows);
    const std::vector<double> mag = logit_magnitude(h.model, d.x, rows);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (int i = 0; i < k; ++i) {
        const std::size_t at = r * k + i;
        EXPECT_NEAR(z[at], want[at], sum_tolerance(d.x.row(rows[r]).size(), mag[at]))
            << "row " << r << " output " << i << " K=" << k;
      }
    // An empty row is exactly the bias: nothing to round.
    for (int i = 0; i < k; ++i) EXPECT_EQ(z[3 * k + i], h.model.bias[i]) << "empty row 3";
  }
}

TYPED_TEST(LayerContract, LossAndDlossDzPerRowMatchOracle) {
  for (int classes : {2, 4}) {
    const Dataset d = make_dataset({.rows = 21, .features = 17, .classes = classes, .seed = 8});
    Harness<TypeParam> h(random_model(classes, 17, 12, 1.0), 0.0, 0.0);
    const Oracle oracle(h.model, 0.0, 0.0);
    const std::vector<Index> rows = iota_rows(d.x.rows());
    const int k = h.model.num_outputs;
    std::vector<float> z(rows.size() * k), g(k);
    h.layer.forward(d.x, rows, z.data());
    const std::vector<double> zo = oracle.forward(d.x, rows);
    const std::vector<double> mag = logit_magnitude(h.model, d.x, rows);
    std::vector<double> go(k);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const double loss = head_loss_and_grad(z.data() + r * k, d.y[r], g.data(), k,
                                             k == 1 ? Head::kSigmoid : Head::kSoftmax);
      const double want = oracle_loss_and_grad(zo.data() + r * k, d.y[r], go.data(), k);
      double dz = 0;
      for (int i = 0; i < k; ++i)
        dz = std::max(dz, sum_tolerance(d.x.row(r).size(), mag[r * k + i]));
      // |dloss/dz|_1 <= 2, so the loss moves at most 2 max|dz|; softmax and
      // sigmoid move at most 1/2 max|dz|; plus rounding of the float grad.
      EXPECT_NEAR(loss, want, 2 * dz + 1e-12) << "row " << r << " K=" << k;
      for (int i = 0; i < k; ++i)
        EXPECT_NEAR(g[i], go[i], 0.5 * dz + kEps) << "row " << r << " output " << i;
    }
  }
}

// With l2 = l1 = 0 one step moves W by -eta * dW exactly, so the weight
// gradient dW = mean_b x_b g_b^T is observable as (W' - W) / -eta. eta = 1
// keeps the division from magnifying the rounding of W' - W, which is at most
// kEps (|W| + |W'|). Rows of features outside the batch must not move at all.
TYPED_TEST(LayerContract, WeightGradientObservedFromOneStepMatchesOracle) {
  constexpr double kEta = 1.0;
  for (int classes : {2, 4}) {
    for (int batch : {1, 4}) {
      const Dataset d = make_dataset({.rows = 24, .features = 13, .classes = classes, .seed = 9});
      for (const std::vector<Index>& rows : batch_order(d.x.rows(), batch, 6, 21)) {
        const Model start = random_model(classes, 13, 13);
        Harness<TypeParam> h(start, 0.0, 0.0);
        std::vector<float> g;
        train_step(h, d, rows, kEta, nullptr, &g);
        const Model& after = h.flushed();
        const int k = start.num_outputs;
        const double inv_b = 1.0 / double(rows.size());
        std::vector<double> dw(start.weight.size(), 0.0), mag(start.weight.size(), 0.0);
        std::vector<std::size_t> terms(start.weight.size(), 0);
        for (std::size_t b = 0; b < rows.size(); ++b) {
          const RowView row = d.x.row(rows[b]);
          for (std::size_t p = 0; p < row.size(); ++p)
            for (int i = 0; i < k; ++i) {
              const std::size_t at = std::size_t(row.indices[p]) * k + i;
              dw[at] += inv_b * row.values[p] * g[b * k + i];
              mag[at] += inv_b * std::abs(row.values[p] * g[b * k + i]);
              ++terms[at];
            }
        }
        for (std::size_t e = 0; e < dw.size(); ++e) {
          if (terms[e] == 0) {
            EXPECT_EQ(after.weight[e], start.weight[e]) << "untouched weight " << e << " moved";
            continue;
          }
          const double observed = (double(after.weight[e]) - start.weight[e]) / -kEta;
          const double tol = (2 * kEps * (std::abs(start.weight[e]) + std::abs(after.weight[e])) +
                              sum_tolerance(terms[e], kEta * mag[e])) / kEta;
          EXPECT_NEAR(observed, dw[e], tol) << "weight " << e << " K=" << k << " B=" << batch;
        }
        for (int i = 0; i < k; ++i) {
          double mean = 0, abs_mean = 0;
          for (std::size_t b = 0; b < rows.size(); ++b)
            mean += inv_b * g[b * k + i], abs_mean += inv_b * std::abs(g[b * k + i]);
          const double observed = (double(after.bias[i]) - start.bias[i]) / -kEta;
          EXPECT_NEAR(observed, mean,
                      2 * kEps * (std::abs(start.bias[i]) + std::abs(after.bias[i]) + abs_mean))
              << "bias " << i;
        }
      }
    }
  }
}

struct Penalty {
  double l2, l1;
};

// One step from random weights with each penalty, against the eager oracle
// fed the same dloss/dz. The lazy sparse path must apply the decay and the
// shrink to every weight, touched or not (visible after flush). Each weight
// sees a handful of roundings (decay factor, product, sum, shrink), each at
// most kEps of |W| + eta |dW| + eta l1: allow 8 of them.
TYPED_TEST(LayerContract, OneStepWithL2AndL1MatchesEagerOracleIncludingExactZeros) {
  constexpr double kEta = 0.3;
  int zeros_seen = 0;
  for (const Penalty pen : {Penalty{0.2, 0.0}, Penalty{0.0, 0.3}, Penalty{0.2, 0.3}}) {
    for (int classes : {2, 4}) {
      for (int batch : {1, 4}) {
        const Dataset d = make_dataset({.rows = 24, .features = 13, .classes = classes, .seed = 10});
        for (const std::vector<Index>& rows : batch_order(d.x.rows(), batch, 3, 22)) {
          const Model start = random_model(classes, 13, 14);
          Harness<TypeParam> h(start, pen.l2, pen.l1);
          Oracle oracle(start, pen.l2, pen.l1);
          std::vector<float> g;
          train_step(h, d, rows, kEta, nullptr, &g);
          oracle.step(d.x, rows, std::vector<double>(g.begin(), g.end()), kEta);
          const Model& after = h.flushed();
          const int k = start.num_outputs;
          std::vector<double> mag(start.weight.size(), 0.0);
          for (std::size_t b = 0; b < rows.size(); ++b) {
            const RowView row = d.x.row(rows[b]);
            for (std::size_t p = 0; p < row.size(); ++p)
              for (int i = 0; i < k; ++i)
                mag[std::size_t(row.indices[p]) * k + i] +=
                    kEta / double(rows.size()) * std::abs(row.values[p] * g[b * k + i]);
          }
          for (std::size_t e = 0; e < start.weight.size(); ++e) {
            const double tol =
                8 * kEps * (std::abs(start.weight[e]) + mag[e] + kEta * pen.l1) + 1e-30;
            EXPECT_NEAR(after.weight[e], oracle.w[e], tol)
                << "weight " << e << " l2=" << pen.l2 << " l1=" << pen.l1 << " B=" << batch;
            // Clipping at zero is exact in both: a zeroed weight is 0, not 1e-9.
            EXPECT_EQ(after.weight[e] == 0.0f, oracle.w[e] == 0.0) << "weight " << e;
            zeros_seen += oracle.w[e] == 0.0;
          }
          for (int i = 0; i < k; ++i)
            EXPECT_NEAR(after.bias[i], oracle.b[i], 4 * kEps * (std::abs(oracle.b[i]) + kEta));
        }
      }
    }
  }
  EXPECT_GT(zeros_seen, 50) << "L1 must clip some weights to zero for the check to mean anything";
}

// Weight tolerance after `steps` SGD steps: kDriftPerStep * steps * kEps *
// max(1, |W|max). Measured (MaxWeightDifferenceGrowsAtMostLinearlyWithSteps,
// 1 to 3000 steps, and the 50-step cross-layer cases): the two layers drift
// apart by 0.12 to 0.25 kEps |W|max per step, roughly linearly. One step's
// rounding is a few kEps |W| and these small rates do not amplify it, so a
// linear bound is the safe side (a random walk grows as sqrt(steps)); 4 leaves
// a 16x margin for other compilers and FMA contraction, while a real slip
// (an L1 or L2 step applied once too often or too late) moves weights by
// eta l1 or eta l2 |W|, ~1e-3, far above 4 * 50 * kEps ~ 2e-5.
constexpr double kDriftPerStep = 4.0;

// The oracle's own forward, head and step on one batch.
void oracle_train_step(Oracle& oracle, const Dataset& d, std::span<const Index> rows, double eta) {
  const int k = oracle.k;
  const std::vector<double> z = oracle.forward(d.x, rows);
  std::vector<double> g(z.size());
  for (std::size_t b = 0; b < rows.size(); ++b)
    oracle_loss_and_grad(z.data() + b * k, d.y[rows[b]], g.data() + b * k, k);
  oracle.step(d.x, rows, g, eta);
}

double weight_tolerance(int steps, double weight_scale) {
  return kDriftPerStep * double(std::max(steps, 1)) * kEps * std::max(1.0, weight_scale);
}

// Closed loop: each computes its own logits and gradients for 50 steps with
// the same batches; the float32 layer must stay within the drift tolerance
// of the double oracle.
TYPED_TEST(LayerContract, FiftyStepsTrackTheDoubleOracle) {
  constexpr int kSteps = 50;
  constexpr double kEta = 0.1;
  for (const Penalty pen : {Penalty{0, 0}, Penalty{0.05, 0}, Penalty{0, 0.01}, Penalty{0.05, 0.01}}) {
    for (int classes : {2, 4}) {
      for (int batch : {1, 4}) {
        const Dataset d = make_dataset({.rows = 30, .features = 20, .classes = classes, .seed = 12});
        const Model start = random_model(classes, 20, 15, 0.3);
        Harness<TypeParam> h(start, pen.l2, pen.l1);
        Oracle oracle(start, pen.l2, pen.l1);
        const int k = start.num_outputs;
        for (const std::vector<Index>& rows : batch_order(d.x.rows(), batch, kSteps, 23)) {
          train_step(h, d, rows, kEta);
          oracle_train_step(oracle, d, rows, kEta);
        }
        const Model& after = h.flushed();
        const std::vector<float> want(oracle.w.begin(), oracle.w.end());
        const double tol = weight_tolerance(kSteps, max_abs(want));
        EXPECT_LE(max_abs_diff(after.weight, want), tol)
            << "l2=" << pen.l2 << " l1=" << pen.l1 << " K=" << k << " B=" << batch;
        const std::vector<float> want_b(oracle.b.begin(), oracle.b.end());
        EXPECT_LE(max_abs_diff(after.bias, want_b), tol);
      }
    }
  }
}

// Averaged SGD: the mean of the weights after every step, against the
// oracle's eager running sum. The sparse layer keeps that sum lazily (one
// scalar and one array, closed whenever the scale is folded); a flush half
// way (an epoch end) and a decay strong enough to force folds mid-run
// exercise the closing. Steps before start_averaging() do not count.
TYPED_TEST(LayerContract, AveragedWeightsAreTheMeanOfEveryStepsWeights) {
  constexpr int kSteps = 50, kWarmup = 5;
  constexpr double kEta = 0.1;
  for (const double l2 : {0.0, 0.05, 2.5}) {  // 2.5: (1 - eta l2)^50 ~ 1e-6, folds mid-run
    for (int classes : {2, 4}) {
      for (int batch : {1, 4}) {
        const Dataset d = make_dataset({.rows = 30, .features = 20, .classes = classes, .seed = 12});
        const Model start = random_model(classes, 20, 15, 0.3);
        Harness<TypeParam> h(start, l2, 0.0);
        Oracle oracle(start, l2, 0.0);
        const int k = start.num_outputs;
        std::vector<double> sum_w(oracle.w.size(), 0.0), sum_b(oracle.b.size(), 0.0);
        int step = 0;
        for (const std::vector<Index>& rows : batch_order(d.x.rows(), batch, kSteps + kWarmup, 23)) {
          if (step == kWarmup) h.layer.start_averaging();
          if (step == kWarmup + kSteps / 2) h.flushed();
          train_step(h, d, rows, kEta);
          oracle_train_step(oracle, d, rows, kEta);
          if (step++ < kWarmup) continue;
          for (std::size_t i = 0; i < sum_w.size(); ++i) sum_w[i] += oracle.w[i];
          for (std::size_t i = 0; i < sum_b.size(); ++i) sum_b[i] += oracle.b[i];
        }
        const Model& last = h.flushed();
        std::vector<float> avg_w(last.weight.size()), avg_b(last.bias.size());
        h.layer.write_average(avg_w, avg_b);
        std::vector<float> want_w(sum_w.size()), want_b(sum_b.size());
        for (std::size_t i = 0; i < sum_w.size(); ++i) want_w[i] = float(sum_w[i] / kSteps);
        for (std::size_t i = 0; i < sum_b.size(); ++i) want_b[i] = float(sum_b[i] / kSteps);
        const double tol = weight_tolerance(kSteps, max_abs(want_w));
        const std::string where = "l2=" + format_g(l2) + " K=" + std::to_string(k) +
                                  " B=" + std::to_string(batch);
        EXPECT_LE(max_abs_diff(avg_w, want_w), tol) << where;
        EXPECT_LE(max_abs_diff(avg_b, want_b), tol) << where;
        // The mean is not the last iterate (which the model keeps training on).
        EXPECT_GT(max_abs_diff(avg_w, last.weight), 100 * tol) << where;
      }
    }
  }
}

TEST(Averaging, WithoutStepsTheAverageIsTheCurrentModel) {
  Model m = random_model(4, 10, 3);
  EmbeddingBagLayer layer(m.weight, m.bias, m.num_features, m.num_outputs, 0.01, 0.0);
  layer.start_averaging();
  layer.flush();
  std::vector<float> w(m.weight.size()), b(m.bias.size());
  layer.write_average(w, b);
  EXPECT_EQ(w, m.weight);
  EXPECT_EQ(b, m.bias);
}

TEST(Averaging, SparseLayerRefusesThreadsAndL1) {
  Model m = random_model(2, 10, 3);
  EmbeddingBagLayer with_l1(m.weight, m.bias, m.num_features, m.num_outputs, 0.0, 0.01);
  EXPECT_THROW(with_l1.start_averaging(), Error);
  EmbeddingBagLayer hogwild(m.weight, m.bias, m.num_features, m.num_outputs, 0.0, 0.0);
  hogwild.set_threads(2);
  EXPECT_THROW(hogwild.start_averaging(), Error);
}

// ---------------------------------------------------------------------------
// Cross-layer: the sparse and the dense float32 layers side by side.

struct Case {
  const char* name;
  int classes;
  int batch;
  double l2, l1, eta;
  int steps;
  bool renormalises;  // (1 - eta l2)^steps < 1e-6: the lazy scale must be folded in
};

// gtest prints a failing parameter with this instead of its raw bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CrossLayer : public ::testing::TestWithParam<Case> {};

// Runs the same batches through both layers, each closed-loop on its own
// logits; at every step their logits and dloss/dz must agree within the
// forward bound plus the drift so far (weight_tolerance(t) per unit of
// sum |x|, and one for the bias).
void expect_same_steps(Harness<EmbeddingBagLayer>& sparse, Harness<DenseLinearLayer>& dense,
                       const Dataset& d, const std::vector<std::vector<Index>>& batches,
                       double eta) {
  const int k = dense.layer.outputs();
  int t = 0;
  for (const std::vector<Index>& rows : batches) {
    const RowMajorMatrix w = dense.layer.weight();  // (K, F), before the step
    std::vector<float> zs, gs, zd, gd;
    train_step(sparse, d, rows, eta, &zs, &gs);
    train_step(dense, d, rows, eta, &zd, &gd);
    const double drift = weight_tolerance(t, w.cwiseAbs().maxCoeff());
    for (std::size_t b = 0; b < rows.size(); ++b) {
      const RowView row = d.x.row(rows[b]);
      for (int i = 0; i < k; ++i) {
        // |bias| <= |z| + sum |x w|, so 2 sum|x w| + |z| bounds the terms.
        double sum_x = 1, mag = std::abs(zd[b * k + i]);
        for (std::size_t p = 0; p < row.size(); ++p) {
          sum_x += std::abs(row.values[p]);
          mag += 2 * std::abs(row.values[p] * w(i, row.indices[p]));
        }
        const double tol = sum_tolerance(row.size(), mag) + drift * sum_x;
        ASSERT_NEAR(zs[b * k + i], zd[b * k + i], tol) << "step " << t << " row " << rows[b];
        ASSERT_NEAR(gs[b * k + i], gd[b * k + i], 0.5 * tol + kEps) << "step " << t;
      }
    }
    ++t;
  }
}

// Every weight the dense path clipped to zero is exactly zero in the sparse
// path, and the other way round; returns the number of zeros.
int expect_same_zeros(const std::vector<float>& sparse, const std::vector<float>& dense) {
  int zeros = 0;
  for (std::size_t e = 0; e < dense.size(); ++e) {
    zeros += dense[e] == 0.0f;
    EXPECT_EQ(sparse[e] == 0.0f, dense[e] == 0.0f)
        << "weight " << e << ": sparse " << sparse[e] << ", dense " << dense[e];
  }
  return zeros;
}

// With L1, a weight the dense path clipped to zero must be exactly zero in
// the sparse path; at the end the weights agree within the drift tolerance.
TEST_P(CrossLayer, SameBatchesGiveSameLogitsGradientsAndWeights) {
  const Case c = GetParam();
  if (c.renormalises)
    ASSERT_LT(std::pow(1.0 - c.eta * c.l2, c.steps), 1e-6)
        << "this case must push the lazy L2 scale below the renormalisation threshold";
  const Dataset d = make_dataset({.rows = 32, .features = 24, .classes = c.classes, .seed = 31});
  const Model start = random_model(c.classes, 24, 32, 0.3);
  Harness<EmbeddingBagLayer> sparse(start, c.l2, c.l1);
  Harness<DenseLinearLayer> dense(start, c.l2, c.l1);
  expect_same_steps(sparse, dense, d, batch_order(d.x.rows(), c.batch, c.steps, 33), c.eta);
  if (HasFatalFailure()) return;
  const std::vector<float> ws = sparse.flushed().weight;
  const std::vector<float> wd = dense.flushed().weight;
  const double tol = weight_tolerance(c.steps, max_abs(wd));
  const double diff = max_abs_diff(ws, wd);
  RecordProperty("max_weight_diff", format_g(diff));
  RecordProperty("weight_tolerance", format_g(tol));
  EXPECT_LE(diff, tol) << c.name;
  EXPECT_LE(max_abs_diff(sparse.model.bias, dense.model.bias), tol);
  EXPECT_GT(max_abs_diff(ws, start.weight), 1000 * tol) << "the run must move the weights";
  if (c.l1 > 0) EXPECT_GT(expect_same_zeros(ws, wd), 0) << "L1 must clip some weight to zero";
}

INSTANTIATE_TEST_SUITE_P(
    Equivalence, CrossLayer,
    ::testing::Values(
        Case{"binary_b1_plain", 2, 1, 0.0, 0.0, 0.1, 50, false},
        Case{"binary_b4_l2", 2, 4, 0.05, 0.0, 0.1, 50, false},
        Case{"binary_b1_l1", 2, 1, 0.0, 0.02, 0.1, 50, false},
        Case{"binary_b4_l1_l2", 2, 4, 0.05, 0.02, 0.1, 50, false},
        Case{"multi_b1_l2", 4, 1, 0.05, 0.0, 0.1, 50, false},
        Case{"multi_b4_l1", 4, 4, 0.0, 0.02, 0.1, 50, false},
        Case{"multi_b1_l1_l2", 4, 1, 0.05, 0.02, 0.1, 50, false},
        Case{"multi_b4_plain", 4, 4, 0.0, 0.0, 0.1, 50, false},
        // eta l2 = 0.75 (0.9): the scale falls 4x (10x) a step, below 1e-6
        // every 10 (6) steps, so it is folded into the weights many times.
        // Unfolded it would reach 0.25^100 ~ 6e-61 (0.1^100): below float's
        // range, so a missing renormalisation cannot go unnoticed.
        Case{"multi_b1_renormalise", 4, 1, 1.5, 0.0, 0.5, 100, true},
        Case{"binary_b4_renormalise_l1", 2, 4, 1.5, 0.01, 0.5, 100, true},
        Case{"multi_b4_renormalise_l1", 4, 4, 1.8, 0.005, 0.5, 100, true}),
    [](const ::testing::TestParamInfo<Case>& info) { return std::string(info.param.name); });

// Measures how far the float32 layers drift apart as steps accumulate, the
// basis of kDriftPerStep. Each prefix is a fresh pair of runs.
TEST(EquivalenceDrift, MaxWeightDifferenceGrowsAtMostLinearlyWithSteps) {
  const Dataset d = make_dataset({.rows = 40, .features = 24, .classes = 4, .seed = 41});
  const Model start = random_model(4, 24, 42, 0.3);
  const auto batches = batch_order(d.x.rows(), 1, 3000, 43);
  for (int steps : {1, 10, 100, 1000, 3000}) {
    Harness<EmbeddingBagLayer> sparse(start, 1e-3, 1e-3);
    Harness<DenseLinearLayer> dense(start, 1e-3, 1e-3);
    for (int t = 0; t < steps; ++t) {
      train_step(sparse, d, batches[t], 0.05);
      train_step(dense, d, batches[t], 0.05);
    }
    const std::vector<float> ws = sparse.flushed().weight;
    const std::vector<float> wd = dense.flushed().weight;
    const double diff = max_abs_diff(ws, wd);
    const double per_step = diff / (steps * kEps * std::max(1.0, max_abs(wd)));
    std::cout << "  steps " << steps << ": max |W_sparse - W_dense| = " << diff
              << " (" << per_step << " kEps |W|max per step)\n";
    EXPECT_LE(diff, weight_tolerance(steps, max_abs(wd))) << steps << " steps";
  }
}

// ---------------------------------------------------------------------------
// Lazy L1 on features that go untouched for many steps.

// Hot features 0-5 are in every row (unsorted, 0 repeated); cold features
// 6-15 are in rows 0-9 only, and 6-10 come back in rows 20-24 (each twice in
// its row). Labels cycle through the classes.
Dataset cold_feature_dataset(int classes) {
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  std::vector<std::int32_t> y;
  const auto add = [&](Index j, float v) { indices.push_back(j), data.push_back(v); };
  for (Index r = 0; r < 25; ++r) {
    for (const Index j : {5, 0, 3, 1, 4, 2, 0}) add(j, (r + j) % 3 == 0 ? -0.5f : 1.0f);
    if (r < 10) add(6 + r, r % 2 ? 1.0f : -1.0f), add(15 - r, 2.0f);
    if (r >= 20) add(6 + (r - 20), 1.0f), add(6 + (r - 20), 0.5f);
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(r % classes);
  }
  Dataset d;
  d.name = "cold";
  d.x = CsrMatrix(25, 16, std::move(indptr), std::move(indices), std::move(data));
  d.x.validate("cold_feature_dataset");
  d.y = std::move(y);
  return d;
}

// A: rows 0-9 twice (cold features learn); B: rows 10-19 six times (60 steps
// without any cold feature: L1 drives them to zero, lazily in the sparse
// path); C: rows 20-24 (cold 6-10 touched again: the first read must see the
// caught-up weight); D: rows 10-14 (cold 11-15 still untouched, and the
// small weights 6-10 regained in C are shrunk back towards zero, lazily).
std::vector<std::vector<Index>> cold_feature_schedule() {
  std::vector<std::vector<Index>> steps;
  for (int pass = 0; pass < 2; ++pass)
    for (Index r = 0; r < 10; ++r) steps.push_back({r});
  for (int pass = 0; pass < 6; ++pass)
    for (Index r = 10; r < 20; ++r) steps.push_back({r});
  for (Index r = 20; r < 25; ++r) steps.push_back({r});
  for (Index r = 10; r < 15; ++r) steps.push_back({r});
  return steps;
}

TEST(EquivalenceLazyL1, UntouchedFeaturesAreClippedToExactlyZeroLikeEagerDecay) {
  constexpr double kEta = 0.1, kL1 = 0.15;
  const std::vector<std::vector<Index>> schedule = cold_feature_schedule();
  for (const double l2 : {0.0, 0.02}) {
    for (const int classes : {2, 4}) {
      const Dataset d = cold_feature_dataset(classes);
      const Model start = Model::zeros(class_names(classes), false, 16);
      const int k = start.num_outputs;
      const auto cold = [&](const std::vector<float>& w, Index first, Index last) {
        int nonzero = 0;
        for (Index j = first; j <= last; ++j)
          for (int i = 0; i < k; ++i) nonzero += w[std::size_t(j) * k + i] != 0.0f;
        return nonzero;
      };
      // Each prefix runs on a fresh pair, so flushing does not disturb a run.
      for (const int steps : {20, 80, 85, 90}) {
        SCOPED_TRACE("l2=" + std::to_string(l2) + " K=" + std::to_string(k) +
                     " after step " + std::to_string(steps));
        Harness<EmbeddingBagLayer> sparse(start, l2, kL1);
        Harness<DenseLinearLayer> dense(start, l2, kL1);
        const std::vector<std::vector<Index>> prefix(schedule.begin(), schedule.begin() + steps);
        expect_same_steps(sparse, dense, d, prefix, kEta);
        if (HasFatalFailure()) return;
        const std::vector<float> ws = sparse.flushed().weight;
        const std::vector<float> wd = dense.flushed().weight;
        EXPECT_LE(max_abs_diff(ws, wd), weight_tolerance(steps, max_abs(wd)));
        expect_same_zeros(ws, wd);
        if (steps == 20) EXPECT_GE(cold(wd, 6, 15), 5 * k) << "cold features must have learned";
        if (steps >= 80) {
          EXPECT_EQ(cold(wd, 11, 15), 0) << "60+ steps of L1 must zero the untouched features";
          EXPECT_EQ(cold(ws, 11, 15), 0);
        }
        if (steps == 80) EXPECT_EQ(cold(ws, 6, 10), 0);
        if (steps == 85) {
          EXPECT_GT(cold(wd, 6, 10), 0) << "re-touched cold features learn again";
          EXPECT_GT(cold(ws, 6, 10), 0);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Inference: sparse predict, dense predict and Eigen's own product.

// The softmax and the sigmoid move by at most 1/2 max|dz| (their Jacobian
// rows sum in absolute value to 2 p (1 - p) <= 1/2), so probabilities agree
// within half the logit bound, plus double rounding of exp and the division.
double proba_tolerance(const Model& m, const CsrMatrix& x, Index r) {
  const std::vector<Index> one{r};
  double tol = 0;
  for (double mag : logit_magnitude(m, x, one))
    tol = std::max(tol, sum_tolerance(x.row(r).size(), mag));
  return 0.5 * tol + 1e-14;
}

TEST(EquivalencePredict, SparseAndDenseProbabilitiesAgreeForEveryBlockSizeAndRange) {
  for (int classes : {2, 4}) {
    const Dataset d = make_dataset({.rows = 50, .features = 30, .classes = classes, .seed = 51});
    const Model m = random_model(classes, 30, 52, 1.0);
    const std::vector<double> sparse = predict_proba(m, d.x, 1);
    for (const Index block : {1, 3, 256}) {
      for (const auto [begin, end] : {std::pair<Index, Index>{0, 50}, {7, 31}}) {
        std::vector<double> dense(std::size_t(end - begin) * classes);
        predict_proba_dense(m, d.x, begin, end, dense.data(), block);
        for (Index r = begin; r < end; ++r) {
          double row_sum = 0;
          for (int c = 0; c < classes; ++c) {
            const double p = dense[std::size_t(r - begin) * classes + c];
            row_sum += p;
            EXPECT_NEAR(p, sparse[std::size_t(r) * classes + c], proba_tolerance(m, d.x, r))
                << "row " << r << " class " << c << " block " << block;
          }
          EXPECT_NEAR(row_sum, 1.0, 1e-12);
        }
      }
    }
  }
}

// Eigen's CSR * dense product (CsrMatrix::eigen() * E), embedding_bag_forward
// and the dense layer's GEMM on densified rows: three computations of X E + b.
TEST(EquivalenceForward, EigenSparseProductIsAThirdWitnessOfTheForward) {
  for (int classes : {2, 4}) {
    const Dataset d = make_dataset({.rows = 35, .features = 26, .classes = classes, .seed = 61});
    const Model m = random_model(classes, 26, 62, 1.0);
    const int k = m.num_outputs;
    const Eigen::Map<const RowMajorMatrix> e(m.weight.data(), 26, k);
    const Eigen::Map<const Eigen::RowVectorXf> bias(m.bias.data(), k);
    RowMajorMatrix z_eigen = d.x.eigen() * e;
    z_eigen.rowwise() += bias;
    const std::vector<Index> rows = iota_rows(d.x.rows());
    Harness<DenseLinearLayer> dense(m, 0.0, 0.0);
    std::vector<float> z_dense(rows.size() * k), z_bag(rows.size() * k);
    dense.layer.forward(d.x, rows, z_dense.data());
    for (Index r = 0; r < d.x.rows(); ++r)
      embedding_bag_forward(m.weight.data(), m.bias.data(), k, d.x.row(r), z_bag.data() + r * k);
    const std::vector<double> want = Oracle(m, 0, 0).forward(d.x, rows);
    const std::vector<double> mag = logit_magnitude(m, d.x, rows);
    for (Index r = 0; r < d.x.rows(); ++r)
      for (int i = 0; i < k; ++i) {
        const std::size_t at = std::size_t(r) * k + i;
        const double tol = sum_tolerance(d.x.row(r).size(), mag[at]);
        EXPECT_NEAR(z_eigen(r, i), want[at], tol) << "eigen, row " << r;
        EXPECT_NEAR(z_eigen(r, i), z_bag[at], tol) << "eigen vs bag, row " << r;
        EXPECT_NEAR(z_eigen(r, i), z_dense[at], tol) << "eigen vs dense, row " << r;
      }
  }
}

// A matrix may have fewer columns than the model: predict accepts an
// svmlight file that never uses the last features (check_features_fit with
// ColumnCount::kInferred), and train sizes the model to max(train, valid)
// columns. The missing columns are zeros, so both paths must still agree.
// Several blocks of different sizes make any unset (stale) memory in the
// widened dense batch show up.
TEST(EquivalencePredict, DensePathOnMatrixNarrowerThanModelEqualsSparse) {
  const Dataset d = make_dataset({.rows = 40, .features = 20, .classes = 4, .seed = 71});
  const Model m = random_model(4, 30, 72, 1.0);
  const std::vector<double> sparse = predict_proba(m, d.x, 1);
  for (const Index block : {4, 7, 40}) {
    std::vector<double> dense(sparse.size());
    predict_proba_dense(m, d.x, 0, d.x.rows(), dense.data(), block);
    for (Index r = 0; r < d.x.rows(); ++r)
      for (int c = 0; c < 4; ++c)
        EXPECT_NEAR(dense[std::size_t(r) * 4 + c], sparse[std::size_t(r) * 4 + c],
                    proba_tolerance(m, d.x, r))
            << "row " << r << " class " << c << " block " << block;
  }
  // The layer used by training: forward over batches of changing size.
  Harness<DenseLinearLayer> dense(m, 0.0, 0.0);
  std::vector<Index> rows;
  for (Index r = 0; r < d.x.rows(); r += int(rows.size())) {
    rows.clear();
    for (Index q = r; q < std::min<Index>(d.x.rows(), r + 1 + r % 5); ++q) rows.push_back(q);
    std::vector<float> z(rows.size() * 4), want(4);
    dense.layer.forward(d.x, rows, z.data());
    for (std::size_t b = 0; b < rows.size(); ++b) {
      embedding_bag_forward(m.weight.data(), m.bias.data(), 4, d.x.row(rows[b]), want.data());
      for (int i = 0; i < 4; ++i)
        EXPECT_NEAR(z[b * 4 + i], want[i], 2 * proba_tolerance(m, d.x, rows[b]))  // = logit bound
            << "row " << rows[b] << " output " << i;
    }
  }
}

// ---------------------------------------------------------------------------
// Whole training runs through train_model with both layers.

struct TrainCase {
  const char* name;
  ScheduleKind schedule;
  int classes;
  int batch;
  double l2, l1;
  double eta;  // eta0; "optimal" ignores it and starts at (l2 + l1)^(-1/4)
};

void PrintTo(const TrainCase& c, std::ostream* os) { *os << c.name; }

class TrainBothLayers : public ::testing::TestWithParam<TrainCase> {
 protected:
  static OptimizerConfig config(const TrainCase& c, int epochs) {
    OptimizerConfig o;
    o.epochs = epochs;
    o.learning_rate = c.eta;
    o.schedule = c.schedule;
    o.batch_size = c.batch;
    o.l2 = c.l2;
    o.l1 = c.l1;
    o.seed = 7;
    o.threads = 1;
    return o;
  }
  // The two layers' weights and biases agree within the drift tolerance of
  // the run's number of updates; returns that tolerance.
  static double expect_layers_agree(const Model& sparse, const Model& dense, const OptimizerConfig& o,
                                    Index rows, const char* name) {
    const int steps = o.epochs * static_cast<int>((rows + o.batch_size - 1) / o.batch_size);
    const double tol = weight_tolerance(steps, max_abs(dense.weight));
    EXPECT_LE(max_abs_diff(sparse.weight, dense.weight), tol) << name;
    EXPECT_LE(max_abs_diff(sparse.bias, dense.bias), tol) << name;
    return tol;
  }
  static Model train(LayerKind layer, const Dataset& d, const OptimizerConfig& o, int classes,
                     const Dataset* valid = nullptr) {
    Model m = Model::zeros(class_names(classes), false, d.x.cols());
    Progress quiet(Progress::Mode::kQuiet, std::cerr);
    train_model(m, d, valid, o, layer, quiet);
    return m;
  }
};

// Few epochs: the final weights agree within the drift tolerance for the
// number of updates made.
TEST_P(TrainBothLayers, ShortRunGivesTheSameWeights) {
  const TrainCase c = GetParam();
  const Dataset d = make_dataset({.rows = 48, .features = 24, .classes = c.classes, .seed = 81});
  const OptimizerConfig o = config(c, 2);
  const Model sparse = train(LayerKind::kSparse, d, o, c.classes);
  const Model dense = train(LayerKind::kDense, d, o, c.classes);
  const int steps = o.epochs * ((d.x.rows() + c.batch - 1) / c.batch);
  const double tol = weight_tolerance(steps, max_abs(dense.weight));
  const double diff = max_abs_diff(sparse.weight, dense.weight);
  RecordProperty("max_weight_diff", format_g(diff));
  RecordProperty("weight_tolerance", format_g(tol));
  EXPECT_LE(diff, tol) << c.name;
  EXPECT_LE(max_abs_diff(sparse.bias, dense.bias), tol);
  EXPECT_GT(max_abs(dense.weight), 1000 * tol) << "training must move the weights";
  if (c.l1 > 0) expect_same_zeros(sparse.weight, dense.weight);
}

// Rows 30 times larger: most steps would move their row's logits by more
// than kMaxLogitStep, so the clip, which the trainer applies to the
// gradient before either layer's step, shapes the run; both layers agree.
TEST_P(TrainBothLayers, ClippedStepsGiveTheSameWeights) {
  const TrainCase c = GetParam();
  if (c.schedule == ScheduleKind::kOptimal) GTEST_SKIP() << "\"optimal\" sets its own rates";
  Dataset d = make_dataset({.rows = 48, .features = 24, .classes = c.classes, .seed = 82});
  std::vector<float> data(d.x.data().begin(), d.x.data().end());
  for (float& v : data) v *= 30.0f;
  d.x = CsrMatrix(d.x.rows(), d.x.cols(), std::vector<Index>(d.x.indptr().begin(), d.x.indptr().end()),
                  std::vector<Index>(d.x.indices().begin(), d.x.indices().end()), std::move(data));
  double widest = 0;
  for (Index r = 0; r < d.x.rows(); ++r) widest = std::max(widest, double(squared_norm(d.x.row(r))) + 1);
  ASSERT_GT(c.eta / c.batch * widest, 4 * kMaxLogitStep) << "a first step at |g| 1/4 must be clipped";
  const OptimizerConfig o = config(c, 2);
  expect_layers_agree(train(LayerKind::kSparse, d, o, c.classes), train(LayerKind::kDense, d, o, c.classes),
                      o, d.x.rows(), c.name);
}

// optimizer.average through train_model: both layers save the same mean
// weights, which differ from the last iterate's.
TEST_P(TrainBothLayers, AveragedRunGivesTheSameMeanWeights) {
  const TrainCase c = GetParam();
  if (c.l1 > 0) GTEST_SKIP() << "averaging does not combine with l1";
  const Dataset d = make_dataset({.rows = 48, .features = 24, .classes = c.classes, .seed = 81});
  OptimizerConfig o = config(c, 2);
  const Model plain = train(LayerKind::kSparse, d, o, c.classes);
  o.average = true;
  const Model sparse = train(LayerKind::kSparse, d, o, c.classes);
  const Model dense = train(LayerKind::kDense, d, o, c.classes);
  const double tol = expect_layers_agree(sparse, dense, o, d.x.rows(), c.name);
  EXPECT_GT(max_abs_diff(sparse.weight, plain.weight), 100 * tol) << c.name;
  // With a validation set the trainer keeps the mean in a copy of the model
  // after every epoch (for the metrics); the saved model is the same.
  for (const LayerKind layer : {LayerKind::kSparse, LayerKind::kDense}) {
    const Model alone = layer == LayerKind::kSparse ? sparse : dense;
    const Model validated = train(layer, d, o, c.classes, &d);
    EXPECT_EQ(validated.weight, alone.weight) << c.name;
    EXPECT_EQ(validated.bias, alone.bias) << c.name;
  }
}

// Averaging from epoch 3 of 3 is the mean of epoch 3's steps alone: the same
// as 2 plain epochs, then 1 averaged epoch from their model (constant rate,
// file order: the same steps), bit for bit, on both layers.
TEST(Averaging, FromALaterEpochIsTheMeanOfThoseEpochsAlone) {
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  for (const int classes : {2, 5}) {
    const Dataset d = make_dataset({.rows = 48, .features = 24, .classes = classes, .seed = 83});
    for (const LayerKind layer : {LayerKind::kSparse, LayerKind::kDense}) {
      OptimizerConfig o;
      o.epochs = 3;
      o.learning_rate = 0.05;
      o.schedule = ScheduleKind::kConstant;
      o.l2 = 0.01;
      o.shuffle = false;
      o.threads = 1;
      o.average = true;
      o.average_from = 3;
      Model late = Model::zeros(class_names(classes), false, d.x.cols());
      train_model(late, d, nullptr, o, layer, quiet);

      OptimizerConfig plain = o, averaged = o;
      plain.epochs = 2;
      plain.average = false;
      plain.average_from = 1;
      averaged.epochs = 1;
      averaged.average_from = 1;
      Model twice = Model::zeros(class_names(classes), false, d.x.cols());
      train_model(twice, d, nullptr, plain, layer, quiet);
      train_model(twice, d, nullptr, averaged, layer, quiet);
      EXPECT_EQ(late.weight, twice.weight) << classes << " classes";
      EXPECT_EQ(late.bias, twice.bias) << classes << " classes";

      o.average_from = 1;  // all three epochs: another mean
      Model all = Model::zeros(class_names(classes), false, d.x.cols());
      train_model(all, d, nullptr, o, layer, quiet);
      EXPECT_NE(all.weight, late.weight) << classes << " classes";
    }
  }
}

TEST(Averaging, TrainerRefusesHogwildThreads) {
  const Dataset d = make_dataset({.rows = 4000, .features = 24, .classes = 2, .seed = 81});
  OptimizerConfig o;
  o.epochs = 1;
  o.threads = 2;
  o.deterministic = false;
  o.average = true;
  Model m = Model::zeros(class_names(2), false, d.x.cols());
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  EXPECT_THROW(train_model(m, d, nullptr, o, LayerKind::kSparse, quiet), Error);
}

// Many epochs: rounding differences have had thousands of steps to grow, so
// compare what the model is for: probabilities within kLongRunProbaTol, the
// same predicted class wherever the top two classes are further apart than
// that, and the same training accuracy.
TEST_P(TrainBothLayers, LongRunGivesTheSamePredictions) {
  constexpr double kLongRunProbaTol = 1e-4;
  const TrainCase c = GetParam();
  const Dataset d = make_dataset({.rows = 60, .features = 24, .classes = c.classes, .seed = 82});
  const OptimizerConfig o = config(c, 40);
  const Model sparse_model = train(LayerKind::kSparse, d, o, c.classes);
  const Model dense_model = train(LayerKind::kDense, d, o, c.classes);
  const std::vector<double> ps = predict_proba(sparse_model, d.x, 1);
  const std::vector<double> pd = predict_proba(dense_model, d.x, 1);
  double diff = 0;
  int correct_s = 0, correct_d = 0;
  const int n = c.classes;
  for (Index r = 0; r < d.x.rows(); ++r) {
    const double* a = ps.data() + std::size_t(r) * n;
    const double* b = pd.data() + std::size_t(r) * n;
    for (int i = 0; i < n; ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
    const int ca = int(std::max_element(a, a + n) - a), cb = int(std::max_element(b, b + n) - b);
    std::vector<double> sorted(b, b + n);
    std::sort(sorted.rbegin(), sorted.rend());
    if (sorted[0] - sorted[1] > 2 * kLongRunProbaTol) EXPECT_EQ(ca, cb) << "row " << r;
    correct_s += ca == d.y[r];
    correct_d += cb == d.y[r];
  }
  RecordProperty("max_proba_diff", format_g(diff));
  EXPECT_LE(diff, kLongRunProbaTol) << c.name;
  EXPECT_EQ(correct_s, correct_d);
  EXPECT_GT(correct_d, d.x.rows() / n + 5) << "the model must have learned something";
}

INSTANTIATE_TEST_SUITE_P(
    Equivalence, TrainBothLayers,
    ::testing::Values(
        TrainCase{"constant_binary_b1_l2", ScheduleKind::kConstant, 2, 1, 1e-2, 0.0, 0.05},
        TrainCase{"constant_multi_b4_l1", ScheduleKind::kConstant, 4, 4, 0.0, 1e-2, 0.1},
        TrainCase{"invscaling_binary_b4_l1_l2", ScheduleKind::kInvScaling, 2, 4, 1e-2, 5e-3, 0.2},
        TrainCase{"invscaling_multi_b1_l2", ScheduleKind::kInvScaling, 4, 1, 1e-2, 0.0, 0.2},
        TrainCase{"optimal_multi_b1_l1_l2", ScheduleKind::kOptimal, 4, 1, 0.05, 0.01, 1.0},
        TrainCase{"optimal_binary_b4_l2", ScheduleKind::kOptimal, 2, 4, 0.1, 0.0, 1.0},
        TrainCase{"linear_multi_b4_l1_l2", ScheduleKind::kLinear, 4, 4, 1e-2, 1e-2, 0.1},
        TrainCase{"linear_binary_b1_l1", ScheduleKind::kLinear, 2, 1, 0.0, 1e-2, 0.1}),
    [](const ::testing::TestParamInfo<TrainCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace bagel

namespace bagel {
namespace {

// Every kernel instance (scalar K=1; fixed K with 8-wide, 4-wide and scalar
// parts, alone and together; the blocked any-K path above 32) against a naive double sum, on rows
// with unsorted and repeated indices.
TEST(KernelWidths, ForwardAndScatterMatchNaiveForEveryOutputCount) {
  const CsrMatrix x(3, 50, {0, 5, 5, 9}, {7, 3, 7, 49, 0, 12, 1, 12, 30},
                    {1.5f, -2.f, 0.5f, 3.f, 1.f, 2.f, -1.f, 0.25f, 4.f});
  for (const int k : {1, 2, 4, 7, 8, 9, 12, 13, 20, 28, 31, 32, 33, 40, 64, 100}) {
    std::vector<float> e(static_cast<std::size_t>(50) * k);
    for (std::size_t i = 0; i < e.size(); ++i) e[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) / 50.0f;
    const detail::BagKernels kern = detail::BagKernels::for_outputs(k);
    for (Index r = 0; r < x.rows(); ++r) {
      std::vector<float> z(k, 0.0f);
      kern.sum(e.data(), k, x.row(r), z.data());
      for (int i = 0; i < k; ++i) {
        double want = 0;
        for (std::size_t p = 0; p < x.row(r).size(); ++p)
          want += double(x.row(r).values[p]) * e[static_cast<std::size_t>(x.row(r).indices[p]) * k + i];
        EXPECT_NEAR(z[i], want, 1e-5) << "k=" << k << " row " << r << " output " << i;
      }
      std::vector<float> g(k), after = e;
      for (int i = 0; i < k; ++i) g[i] = 0.1f * (i + 1);
      kern.scatter(after.data(), k, x.row(r), g.data(), -0.5f);
      std::vector<double> want(e.begin(), e.end());
      for (std::size_t p = 0; p < x.row(r).size(); ++p)
        for (int i = 0; i < k; ++i)
          want[static_cast<std::size_t>(x.row(r).indices[p]) * k + i] += -0.5 * x.row(r).values[p] * g[i];
      for (std::size_t i = 0; i < e.size(); ++i) EXPECT_NEAR(after[i], want[i], 1e-5) << "k=" << k;
    }
  }
}

}  // namespace
}  // namespace bagel
