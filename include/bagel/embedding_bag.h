// The sparse layer: an EmbeddingBag in sum mode over CSR rows.
//
//   z = sum_p data[p] * E[indices[p]] + b        E: (num_features, K)
//
// which is x @ W.T + b with W = E.T, computed without touching the zeros of
// x. Backward scatter-adds into only the rows of E that the sample used.
//
// Lazy regularisation (so a step costs O(nnz of the batch), not O(F K)):
// * L2. The eager update w <- (1 - eta l2) w - eta g multiplies every weight.
//   We store v with w = s * v for one scalar s (Bottou's / scikit-learn's
//   wscale): the decay is s *= (1 - eta l2), and a gradient step on the
//   touched rows is v -= eta g / s. When s gets tiny we fold it into v.
// * L1. Eager: w <- sign(w) max(0, |w| - eta l1) on every weight (clipped at
//   zero, "truncated gradient"). For a weight that no sample touches, k such
//   shrinks in a row equal one shrink by their sum, because the weight moves
//   monotonically to zero and stays there. So we keep U = sum of all shrinks
//   so far (in v units: eta l1 / s, since |w| = s |v|) and, per feature row,
//   q_j = the part of U already applied; touching row j first applies U - q_j
//   (Tsuruoka et al. 2009, cumulative penalty, made exact by applying it
//   before the row is read). This matches the dense path's eager updates.
// * Averaging (averaged SGD, Polyak-Ruppert; scikit-learn's average=True).
//   The model is the mean of w_1..w_T, the weights after each step, which
//   change everywhere at every step (the decay). With w_t = s_t v_t and v
//   changed by dv_tau at step tau (only the touched rows),
//     sum_t w_t = C_T v_T - sum_tau C_(tau-1) dv_tau,   C_t = s_1 + ... + s_t,
//   so we keep the scalar C and one array A, adding -C_(tau-1) dv_tau to the
//   touched rows of A along with each update (Xu 2011; scikit-learn's
//   average_a/average_b do the same). Folding the scale closes the sum:
//   A += C v, C = 0; then A holds sum_t w_t and the mean is A / T.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>
#if defined(__FMA__)
#include <immintrin.h>
#endif

#include "bagel/csr.h"
#include "bagel/lazy_penalty.h"
#include "bagel/madd.h"
#include "bagel/row_width.h"

namespace bagel {

namespace detail {

// Eight floats in one vector register (AVX ymm; two SSE registers without
// AVX), and four (one SSE register) for the K % 8 >= 4 part of a row, so
// that K = 20 is three vector operations per non-zero rather than two and
// four scalar. GCC's vector extension keeps the code portable; loads and
// stores go through memcpy because weight rows of K floats are not aligned.
typedef float Vec8 __attribute__((vector_size(32)));
typedef float Vec4 __attribute__((vector_size(16)));

template <class V>
inline V load(const float* p) {
  V v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void store(float* p, V v) {
  __builtin_memcpy(p, &v, sizeof v);
}
inline Vec8 load8(const float* p) { return load<Vec8>(p); }
inline Vec4 load4(const float* p) { return load<Vec4>(p); }

// madd() (madd.h) in every lane of the vector widths too: a one-vs-rest
// model trained with its classes split over threads (train/class_shards.h)
// must be the one-thread model, whose rows are as wide as all the classes.
#if defined(__FMA__)
inline Vec4 madd(Vec4 a, float x, Vec4 b) {
  return reinterpret_cast<Vec4>(_mm_fmadd_ps(_mm_set1_ps(x), reinterpret_cast<__m128>(b),
                                             reinterpret_cast<__m128>(a)));
}
inline Vec8 madd(Vec8 a, float x, Vec8 b) {
  return reinterpret_cast<Vec8>(_mm256_fmadd_ps(_mm256_set1_ps(x), reinterpret_cast<__m256>(b),
                                                reinterpret_cast<__m256>(a)));
}
#else
inline Vec4 madd(Vec4 a, float x, Vec4 b) { return a + x * b; }
inline Vec8 madd(Vec8 a, float x, Vec8 b) { return a + x * b; }
#endif

// The per-non-zero loops below must not be auto-vectorised: GCC turns them
// into AVX-512 gathers plus shuffles and horizontal sums, measured slower
// than the scalar index walk. The K-wide arithmetic is vectorised
// explicitly with Vec8, which this attribute does not affect.
#if defined(__clang__)
// clang has no per-function switch; its builds are the sanitizer and fuzzing
// ones, where the speed of these loops does not matter.
#define BAGEL_NO_AUTOVEC
#else
#define BAGEL_NO_AUTOVEC __attribute__((optimize("no-tree-vectorize")))
#endif

// z[0..K) += sum_p values[p] * E[indices[p]]: K known at compile time, so the
// accumulators stay in registers (K/8 vectors plus K%8 scalars) and nothing
// in the per-non-zero loop depends on a run-time size.
template <int K>
BAGEL_NO_AUTOVEC inline void bag_sum(const float* __restrict E, RowView row, float* __restrict z) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  if constexpr (K == 1) {
    // Four independent chains: one FMA chain would wait on its own latency.
    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    std::size_t p = 0;
    for (; p + 4 <= n; p += 4) {
      a0 = madd(a0, val[p], E[idx[p]]);
      a1 = madd(a1, val[p + 1], E[idx[p + 1]]);
      a2 = madd(a2, val[p + 2], E[idx[p + 2]]);
      a3 = madd(a3, val[p + 3], E[idx[p + 3]]);
    }
    for (; p < n; ++p) a0 = madd(a0, val[p], E[idx[p]]);
    z[0] += (a0 + a1) + (a2 + a3);
  } else {
    constexpr int kVecs = K / 8, kHalf = (K % 8) / 4, kRest = K % 4;
    constexpr int kTail = 8 * kVecs + 4 * kHalf;  // first output of the scalar rest
    Vec8 acc[kVecs > 0 ? kVecs : 1] = {};
    Vec4 half = {};
    float rest[kRest > 0 ? kRest : 1] = {};
    for (std::size_t p = 0; p < n; ++p) {
      const float x = val[p];
      const float* e = E + static_cast<std::size_t>(idx[p]) * K;
      for (int v = 0; v < kVecs; ++v) acc[v] = madd(acc[v], x, load8(e + 8 * v));
      if constexpr (kHalf) half = madd(half, x, load4(e + 8 * kVecs));
      for (int i = 0; i < kRest; ++i) rest[i] = madd(rest[i], x, e[kTail + i]);
    }
    for (int v = 0; v < kVecs; ++v) store(z + 8 * v, load8(z + 8 * v) + acc[v]);
    if constexpr (kHalf) store(z + 8 * kVecs, load4(z + 8 * kVecs) + half);
    for (int i = 0; i < kRest; ++i) z[kTail + i] += rest[i];
  }
}

// E[indices[p]] += (c * values[p]) * g, for each p; K fixed as above.
template <int K>
BAGEL_NO_AUTOVEC inline void bag_scatter(float* __restrict E, RowView row, const float* __restrict g, float c) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  if constexpr (K == 1) {
    const float gc = c * g[0];
    for (std::size_t p = 0; p < n; ++p) E[idx[p]] = madd(E[idx[p]], val[p], gc);
  } else {
    constexpr int kVecs = K / 8, kHalf = (K % 8) / 4, kRest = K % 4;
    constexpr int kTail = 8 * kVecs + 4 * kHalf;
    Vec8 gv[kVecs > 0 ? kVecs : 1];
    Vec4 gh = {};
    float gr[kRest > 0 ? kRest : 1];
    for (int v = 0; v < kVecs; ++v) gv[v] = c * load8(g + 8 * v);
    if constexpr (kHalf) gh = c * load4(g + 8 * kVecs);
    for (int i = 0; i < kRest; ++i) gr[i] = c * g[kTail + i];
    for (std::size_t p = 0; p < n; ++p) {
      const float x = val[p];
      float* e = E + static_cast<std::size_t>(idx[p]) * K;
      for (int v = 0; v < kVecs; ++v) store(e + 8 * v, madd(load8(e + 8 * v), x, gv[v]));
      if constexpr (kHalf) store(e + 8 * kVecs, madd(load4(e + 8 * kVecs), x, gh));
      for (int i = 0; i < kRest; ++i) e[kTail + i] = madd(e[kTail + i], x, gr[i]);
    }
  }
}

// Any K (above the fixed-K instances): the outputs in blocks of 32, each
// block summed over the row with its accumulators in registers. The row's
// indices are walked K/32 times, but the weights are read once.
BAGEL_NO_AUTOVEC inline void bag_sum_any(const float* __restrict E, int k, RowView row,
                                         float* __restrict z) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  int i0 = 0;
  for (; i0 + 32 <= k; i0 += 32) {
    Vec8 a0 = {}, a1 = {}, a2 = {}, a3 = {};
    for (std::size_t p = 0; p < n; ++p) {
      const float x = val[p];
      const float* e = E + static_cast<std::size_t>(idx[p]) * k + i0;
      a0 = madd(a0, x, load8(e));
      a1 = madd(a1, x, load8(e + 8));
      a2 = madd(a2, x, load8(e + 16));
      a3 = madd(a3, x, load8(e + 24));
    }
    store(z + i0, load8(z + i0) + a0);
    store(z + i0 + 8, load8(z + i0 + 8) + a1);
    store(z + i0 + 16, load8(z + i0 + 16) + a2);
    store(z + i0 + 24, load8(z + i0 + 24) + a3);
  }
  for (std::size_t p = 0; i0 < k && p < n; ++p) {
    const float x = val[p];
    const float* e = E + static_cast<std::size_t>(idx[p]) * k;
    for (int i = i0; i < k; ++i) z[i] = madd(z[i], x, e[i]);
  }
}

inline void bag_scatter_any(float* __restrict E, int k, RowView row, const float* __restrict g,
                            float c) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  for (std::size_t p = 0; p < row.size(); ++p) {
    // x * (c * g) in this order, as the fixed-K kernels and scatter_range do,
    // so every path rounds alike.
    const float x = val[p];
    float* e = E + static_cast<std::size_t>(idx[p]) * k;
    int i = 0;
    for (; i + 16 <= k; i += 16)
      for (int j = 0; j < 16; ++j) e[i + j] = madd(e[i + j], x, c * g[i + j]);
    for (; i < k; ++i) e[i] = madd(e[i], x, c * g[i]);
  }
}

// bag_scatter restricted to the features in [lo, hi): the deterministic
// mode's threads each own one feature range and all walk the same rows.
// (A branch-free variant, adding out-of-range non-zeros to scratch rows,
// measured 25% slower at 2^20 features: twice the memory traffic.)
template <int K>
BAGEL_NO_AUTOVEC inline void bag_scatter_range(float* __restrict E, RowView row,
                                               const float* __restrict g, float c, Index lo,
                                               Index hi) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  float gc[K];
  for (int i = 0; i < K; ++i) gc[i] = c * g[i];
  const auto width = static_cast<std::uint32_t>(hi - lo);
  for (std::size_t p = 0; p < n; ++p) {
    const Index j = idx[p];
    if (static_cast<std::uint32_t>(j - lo) >= width) continue;
    float* e = E + static_cast<std::size_t>(j) * K;
    const float x = val[p];
    for (int i = 0; i < K; ++i) e[i] = madd(e[i], x, gc[i]);
  }
}

inline void bag_scatter_range_any(float* __restrict E, int k, RowView row,
                                  const float* __restrict g, float c, Index lo, Index hi) {
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  for (std::size_t p = 0; p < row.size(); ++p) {
    const Index j = idx[p];
    if (j < lo || j >= hi) continue;
    float* e = E + static_cast<std::size_t>(j) * k;
    const float x = val[p];
    for (int i = 0; i < k; ++i) e[i] = madd(e[i], x, c * g[i]);
  }
}

// The kernels for one output count, picked once per layer so the per-row
// call is direct through a pointer and the per-non-zero loop has no branch
// on K. Fixed-K instances cover 1..32 outputs; above that, bag_*_any.
struct BagKernels {
  void (*sum)(const float*, int, RowView, float*);
  void (*scatter)(float*, int, RowView, const float*, float);
  void (*scatter_range)(float*, int, RowView, const float*, float, Index, Index);
  static BagKernels for_outputs(int k);
};

inline constexpr int kMaxFixedOutputs = 32;

// bias[i] -= eta * g[i] for one row: the bias step of a batch of one (its
// mean gradient is 0.0 + g, which makes -0 +0; dividing by 1 changes
// nothing). One expression for every caller, so that all round alike.
inline void bias_step_one(float* __restrict bias, const float* __restrict g, double eta,
                          Width auto k) {
  for (int i = 0; i < k; ++i) bias[i] = static_cast<float>(madd(double(bias[i]), -eta, 0.0 + g[i]));
}

}  // namespace detail

// Inference: logits[0..k) = sum_p values[p] * E[indices[p]] + bias.
inline void embedding_bag_forward(const detail::BagKernels& kernels, const float* weight,
                                  const float* bias, int outputs, RowView row, float* logits) {
  for (int i = 0; i < outputs; ++i) logits[i] = 0.0f;
  kernels.sum(weight, outputs, row, logits);
  for (int i = 0; i < outputs; ++i) logits[i] += bias[i];
}

// Same, picking the kernels itself (convenient for single rows and tests).
inline void embedding_bag_forward(const float* weight, const float* bias, int outputs, RowView row,
                                  float* logits) {
  embedding_bag_forward(detail::BagKernels::for_outputs(outputs), weight, bias, outputs, row, logits);
}

// Asks the cache for the weight rows that `row` will read (a hint; no effect
// on results). Called one sample ahead, it hides the latency of the random
// row reads behind the current sample's arithmetic. (Always inlined: see
// prefetch_row_data() in csr.h.)
[[gnu::always_inline]] inline void prefetch_rows(const float* weight, Width auto outputs, RowView row) {
  const std::size_t last = static_cast<std::size_t>(outputs) * sizeof(float) - 1;
  for (const Index j : row.indices) {
    const char* p = reinterpret_cast<const char*>(weight + static_cast<std::size_t>(j) * outputs);
    __builtin_prefetch(p, 1, 3);
    if (last >= 64) __builtin_prefetch(p + last, 1, 3);
  }
}

// Trains weights in place (the model's arrays), with lazy L2 and L1.
//
// Threads. Lock-free (Hogwild) training runs one loop per thread over the
// same weights, each with its own `thread` index. The scale and the L1 total
// are per thread between merges. A thread's own steps multiply `decay`; as
// T threads step at about the same rate, its view of the shared scale
// advances T steps per own step (`view` *= (1 - eta l2)^T), so an update is
// decayed as if the threads had taken turns. merge() (at a barrier, every
// few thousand rows) folds the true product of every thread's decays and L1
// into the shared state. Views differ from the truth by at most the decay of
// one merge interval, which the trainer keeps small: the same kind of noise
// Hogwild's unsynchronised reads add.
// The deterministic mode instead splits each mini-batch: forward_readonly()
// on disjoint rows, then scatter_range() on disjoint feature ranges, so every
// weight sees the same float operations in the same order as with one thread.
class EmbeddingBagLayer {
 public:
  // `weight` is (num_features, outputs) row-major; `bias` has `outputs` values.
  // The biases step at `bias_rate` times the weights' rate (OptimizerConfig).
  EmbeddingBagLayer(std::span<float> weight, std::span<float> bias, Index num_features,
                    int outputs, double l2, double l1, double bias_rate = 1);

  int outputs() const { return outputs_; }
  double bias_rate() const { return bias_rate_; }
  Index num_features() const { return num_features_; }

  // Number of concurrent Hogwild threads (merges first).
  void set_threads(int threads);

  // Prefetches the weight rows of `rows` (the next batch), when a row fills
  // a cache line (16 or more outputs).
  void prefetch(const CsrMatrix& x, std::span<const Index> rows) const;

  // logits (rows.size() x outputs) at the current weights. With L1 it first
  // applies the pending shrinkage of the touched rows (so this writes).
  void forward(const CsrMatrix& x, std::span<const Index> rows, float* logits, int thread = 0);

  // One SGD step on the mean loss of the batch, given dloss/dz per row
  // (rows.size() x outputs):
  //   W <- (1 - eta l2) W - eta mean_b(x_b g_b^T);  W <- shrink(W, eta l1)
  //   b <- b - eta r mean_b(g_b)   (r: bias_rate(); the bias is not penalised)
  void step(const CsrMatrix& x, std::span<const Index> rows, const float* grads, double eta,
            int thread = 0);

  // --- one row (a batch of one), k == outputs() as a Width (row_width.h) ---
  // prefetch(), forward() and step() on the batch {row}: the same float
  // operations. At a constant k the kernels are called directly and every
  // loop over the outputs has a fixed trip count (train/row_steps.cpp).
  template <Width W>
  void prefetch_row(RowView row, W k) const;
  template <Width W>
  void forward_row(RowView row, float* z, int thread, W k);
  template <Width W>
  void step_row(RowView row, const float* grad, double eta, int thread, W k);

  // Folds every thread's pending decay and L1 into the shared state; folds
  // the scale into the weights when it gets small. No thread may be inside
  // forward/step meanwhile.
  void merge();

  // merge(), then folds the scale and all pending L1 into the stored weights
  // (O(F K)). Afterwards the weight span holds the true weights.
  void flush();

  // Rows from `rows` on are left out of the passes over every weight
  // (flush(), a small scale's fold, the averaged sum's closing) where they
  // hold zeros, and their averaged sums too: no training row may touch
  // them (features numbered by frequency put the unused ones last). Their
  // zeros would stay zeros, bit for bit. Returns whether it took effect
  // (false where a weight there is not zero: a warm start).
  bool skip_unused_rows(Index rows);

  // flush() without its last pass: returns the factor the stored weights
  // still need (1 when none), which the caller must multiply into every
  // stored weight before any other call. The replicas' mean applies it while
  // it reads the weights anyway, saving a pass over them (84 MB at 2^20
  // features and 20 classes). With L1 or averaging it is flush(), and 1.
  float take_scale();

  // --- averaged SGD (one thread, no L1; see the top of this file) ---
  // From the next step on, also sums the weights after every step.
  void start_averaging();
  // Mean weights (num_features x outputs) and bias of the steps since
  // start_averaging(); the current ones if there were none. After flush().
  // The output may be the layer's own weight and bias (the last call).
  void write_average(std::span<float> weight, std::span<float> bias) const;
  // The sums behind that mean (after flush()): of the weights, of the biases,
  // and the number of steps. Replicas combine theirs into one mean.
  std::span<const float> average_weight_sum() const { return avg_sum_; }
  std::span<const double> average_bias_sum() const { return avg_bias_; }
  std::int64_t average_steps() const { return avg_steps_; }
  // Averaging as those three left it (a resumed run's), in place of
  // start_averaging(): the mean then goes on as if never interrupted.
  void restore_averaging(std::span<const float> weight_sum, std::span<const double> bias_sum,
                         std::int64_t steps);

  // --- deterministic parallel mode (thread 0's state; callers synchronise) ---
  // Pending L1 of the features in [lo, hi) that `rows` touch.
  void catch_up_range(const CsrMatrix& x, std::span<const Index> rows, Index lo, Index hi);
  // Forward without the L1 catch-up (pure read; call catch_up_range first).
  void forward_readonly(const CsrMatrix& x, std::span<const Index> rows, float* logits) const;
  // Applies the decay of one step and returns the scatter coefficient
  // -eta / (B * scale) for scatter_range().
  float begin_step(double eta, std::size_t batch);
  // The weight update of features in [lo, hi), rows in batch order.
  void scatter_range(const CsrMatrix& x, std::span<const Index> rows, const float* grads, float c,
                     Index lo, Index hi);
  // Bias update and the L1 total of the step; then catch_up_range() of the
  // batch (as step() does) and merge() (which folds a small scale).
  void end_step(std::span<const Index> rows, const float* grads, double eta);

 private:
  void fold();
  // The bag kernels on one row: through kernels_ at a run-time k, directly
  // at a constant one.
  template <Width W>
  void sum_row(RowView row, float* z, W k) const;
  template <Width W>
  void scatter_row(float* target, RowView row, const float* g, float c, W k) const;

  std::span<float> weight_;
  std::span<float> bias_;
  Index num_features_;
  Index live_rows_;                 // fold() passes over these rows (skip_unused_rows)
  int outputs_;
  detail::BagKernels kernels_;
  bool prefetch_weights_;           // the weights are big enough to miss the cache (prefetch())
  LazyPenalty penalty_;             // L2 scale, L1 totals, the threads' views
  double bias_rate_;                // the biases' rate over the weights'
  bool averaging_ = false;
  std::vector<float> avg_sum_;       // A: sum of the weights, lazily (stored units)
  std::vector<double> avg_bias_;     // sum of the biases
  double avg_scale_sum_ = 0.0;       // C since A was last closed
  std::int64_t avg_steps_ = 0;       // T
};

template <Width W>
void EmbeddingBagLayer::sum_row(RowView row, float* z, W k) const {
  if constexpr (std::is_same_v<W, int>) {
    kernels_.sum(weight_.data(), k, row, z);
  } else {
    static_assert(W::value >= 1 && W::value <= detail::kMaxFixedOutputs);
    detail::bag_sum<W::value>(weight_.data(), row, z);
  }
}

template <Width W>
void EmbeddingBagLayer::scatter_row(float* target, RowView row, const float* g, float c, W k) const {
  if constexpr (std::is_same_v<W, int>) {
    kernels_.scatter(target, k, row, g, c);
  } else {
    static_assert(W::value >= 1 && W::value <= detail::kMaxFixedOutputs);
    detail::bag_scatter<W::value>(target, row, g, c);
  }
}

template <Width W>
[[gnu::always_inline]] inline void EmbeddingBagLayer::prefetch_row(RowView row, W k) const {
  if (!prefetch_weights_) return;
  prefetch_rows(weight_.data(), k, row);
  if (averaging_) prefetch_rows(avg_sum_.data(), k, row);
}

template <Width W>
void EmbeddingBagLayer::forward_row(RowView row, float* z, int thread, W k) {
  if (penalty_.has_l1()) penalty_.catch_up(weight_.data(), row, penalty_.l1_of(thread));
  const auto s = static_cast<float>(penalty_.scale_of(thread));
  float* __restrict out = z;
  const float* __restrict b = bias_.data();
  for (int i = 0; i < k; ++i) out[i] = 0.0f;
  sum_row(row, out, k);
  for (int i = 0; i < k; ++i) out[i] = detail::madd(b[i], s, out[i]);
}

template <Width W>
void EmbeddingBagLayer::step_row(RowView row, const float* grad, double eta, int thread, W k) {
  const bool l1 = penalty_.has_l1();
  // Pending L1 must land before the gradient (forward_row() normally did it).
  if (l1) penalty_.catch_up(weight_.data(), row, penalty_.l1_of(thread));
  const double scale = penalty_.decay(thread, eta);
  const auto c = static_cast<float>(-eta / scale);  // step()'s -eta / (B scale) at B = 1
  scatter_row(weight_.data(), row, grad, c, k);
  detail::bias_step_one(bias_.data(), grad, eta * bias_rate_, k);
  if (l1) {
    penalty_.add_l1(thread, eta, scale);
    penalty_.catch_up(weight_.data(), row, penalty_.l1_of(thread));
  }
  if (averaging_) {
    // A -= C_(tau-1) dv with dv = x (c g): the same scatter, coefficient -C c.
    scatter_row(avg_sum_.data(), row, grad, static_cast<float>(-avg_scale_sum_ * c), k);
    for (int i = 0; i < k; ++i) avg_bias_[static_cast<std::size_t>(i)] += bias_[static_cast<std::size_t>(i)];
    avg_scale_sum_ += scale;
    ++avg_steps_;
  }
  // Alone, a thread may fold at once; with others, only merge() may.
  if (penalty_.threads() == 1 && LazyPenalty::is_small(scale)) flush();
}

}  // namespace bagel
