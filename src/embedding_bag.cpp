#include "bagel/embedding_bag.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "bagel/error.h"
#include "bagel/huge_pages.h"

namespace bagel {

namespace {

// Weights bigger than this miss L2 often enough to be worth prefetching (see
// prefetch()); smaller ones stay cached (L2 is 1-2 MiB on current x86 cores,
// shared with the row window).
constexpr std::size_t kPrefetchMinWeightBytes = std::size_t{1} << 20;

template <int K>
void sum_fixed(const float* E, int, RowView row, float* z) {
  detail::bag_sum<K>(E, row, z);
}
template <int K>
void scatter_fixed(float* E, int, RowView row, const float* g, float c) {
  detail::bag_scatter<K>(E, row, g, c);
}

template <int K>
void scatter_range_fixed(float* E, int, RowView row, const float* g, float c, Index lo, Index hi) {
  detail::bag_scatter_range<K>(E, row, g, c, lo, hi);
}

// bias[i] -= eta * (the batch's gradients of output i, summed in batch
// order) / batch. A chunk of outputs at a time, the batch loop outside, so
// that the loops over outputs vectorise: one output at a time, with the
// batch loop inside, took ~24 instructions an output a step (at 20 outputs
// and batch 1, as many as the weight scatter of a row of 28 non-zeros).
// Same sums, same order.
void step_bias(std::span<float> bias, const float* grads, std::size_t batch, double eta) {
  constexpr int kChunk = 16;
  const int k = static_cast<int>(bias.size());
  if (batch == 1) return detail::bias_step_one(bias.data(), grads, eta, k);
  const double n = static_cast<double>(batch);
  for (int i0 = 0; i0 < k; i0 += kChunk) {
    const int m = std::min(kChunk, k - i0);
    double sum[kChunk];
    for (int j = 0; j < m; ++j) sum[j] = 0;  // (= {} compiled to a rep stos)
    for (std::size_t b = 0; b < batch; ++b) {
      const float* g = grads + b * static_cast<std::size_t>(k) + i0;
      for (int j = 0; j < m; ++j) sum[j] += g[j];
    }
    float* out = bias.data() + i0;
    for (int j = 0; j < m; ++j) out[j] = static_cast<float>(out[j] - eta * sum[j] / n);
  }
}

template <int... K>
detail::BagKernels pick(int k, std::integer_sequence<int, K...>) {
  detail::BagKernels out{detail::bag_sum_any, detail::bag_scatter_any,
                         detail::bag_scatter_range_any};
  ((k == K + 1 ? (out = {sum_fixed<K + 1>, scatter_fixed<K + 1>, scatter_range_fixed<K + 1>}, 0)
               : 0),
   ...);
  return out;
}

}  // namespace

detail::BagKernels detail::BagKernels::for_outputs(int k) {
  return pick(k, std::make_integer_sequence<int, kMaxFixedOutputs>{});
}

EmbeddingBagLayer::EmbeddingBagLayer(std::span<float> weight, std::span<float> bias,
                                     Index num_features, int outputs, double l2, double l1,
                                     double bias_rate)
    : weight_(weight),
      bias_(bias),
      num_features_(num_features),
      live_rows_(num_features),
      outputs_(outputs),
      kernels_(detail::BagKernels::for_outputs(outputs)),
      prefetch_weights_(weight.size() * sizeof(float) >= kPrefetchMinWeightBytes),
      penalty_(num_features, outputs, l2, l1),
      bias_rate_(bias_rate) {}

void EmbeddingBagLayer::set_threads(int threads) {
  merge();
  penalty_.set_threads(threads);
}

void EmbeddingBagLayer::prefetch(const CsrMatrix& x, std::span<const Index> rows) const {
  // Cache-resident weights are skipped (prefetch_weights_): then the
  // prefetch loop only adds instructions. Measured on 500k shuffled rows over row windows, 5 epochs:
  // at 2^20 features 1 output ran 1.85 -> 1.47 s with it (2.54 -> 1.70 s
  // without feature reordering) and 5 outputs 1.71 -> 1.34 s; at 2^14
  // features (64 KB of weights) 1 output ran 0.71 s without, 0.77 s with.
  // (Before row windows, rows narrower than a cache line ran faster without.)
  for (const Index r : rows) prefetch_row(x.row(r), outputs_);
}

void EmbeddingBagLayer::forward_readonly(const CsrMatrix& x, std::span<const Index> rows,
                                         float* logits) const {
  const float s = static_cast<float>(penalty_.scale_of(0));
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    float* z = logits + b * k;
    std::fill(z, z + k, 0.0f);
    kernels_.sum(weight_.data(), k, x.row(rows[b]), z);
    for (int i = 0; i < k; ++i) z[i] = detail::madd(bias_[i], s, z[i]);  // as forward_row()
  }
}

void EmbeddingBagLayer::forward(const CsrMatrix& x, std::span<const Index> rows, float* logits,
                                int thread) {
  for (std::size_t b = 0; b < rows.size(); ++b)
    forward_row(x.row(rows[b]), logits + b * outputs_, thread, outputs_);
}

void EmbeddingBagLayer::step(const CsrMatrix& x, std::span<const Index> rows, const float* grads,
                             double eta, int thread) {
  if (rows.size() == 1) return step_row(x.row(rows[0]), grads, eta, thread, outputs_);
  const int k = outputs_;
  const double batch = static_cast<double>(rows.size());
  const bool l1 = penalty_.has_l1();
  // Pending L1 must land before the gradient (forward() normally did it).
  if (l1)
    for (const Index r : rows) penalty_.catch_up(weight_.data(), x.row(r), penalty_.l1_of(thread));
  const double scale = penalty_.decay(thread, eta);
  const float c = static_cast<float>(-eta / (batch * scale));
  for (std::size_t b = 0; b < rows.size(); ++b)
    kernels_.scatter(weight_.data(), k, x.row(rows[b]), grads + b * k, c);
  step_bias(bias_, grads, rows.size(), eta * bias_rate_);
  if (l1) {
    penalty_.add_l1(thread, eta, scale);
    const double total = penalty_.l1_of(thread);
    for (const Index r : rows) penalty_.catch_up(weight_.data(), x.row(r), total);
  }
  if (averaging_) {
    // A -= C_(tau-1) dv with dv = x (c g): the same scatter, coefficient -C c.
    const auto ca = static_cast<float>(-avg_scale_sum_ * c);
    for (std::size_t b = 0; b < rows.size(); ++b)
      kernels_.scatter(avg_sum_.data(), k, x.row(rows[b]), grads + b * k, ca);
    for (int i = 0; i < k; ++i) avg_bias_[static_cast<std::size_t>(i)] += bias_[i];
    avg_scale_sum_ += scale;
    ++avg_steps_;
  }
  // Alone, a thread may fold at once; with others, only merge() may.
  if (penalty_.threads() == 1 && LazyPenalty::is_small(scale)) flush();
}

void EmbeddingBagLayer::catch_up_range(const CsrMatrix& x, std::span<const Index> rows, Index lo,
                                       Index hi) {
  if (!penalty_.has_l1()) return;
  const double total = penalty_.l1_of(0);
  for (const Index r : rows)
    for (const Index j : x.row(r).indices)
      if (j >= lo && j < hi) penalty_.catch_up(weight_.data(), j, total);
}

float EmbeddingBagLayer::begin_step(double eta, std::size_t batch) {
  const double scale = penalty_.decay(0, eta);
  return static_cast<float>(-eta / (static_cast<double>(batch) * scale));
}

void EmbeddingBagLayer::scatter_range(const CsrMatrix& x, std::span<const Index> rows,
                                      const float* grads, float c, Index lo, Index hi) {
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b)
    kernels_.scatter_range(weight_.data(), k, x.row(rows[b]), grads + b * k, c, lo, hi);
}

void EmbeddingBagLayer::end_step(std::span<const Index> rows, const float* grads, double eta) {
  step_bias(bias_, grads, rows.size(), eta * bias_rate_);
  if (penalty_.has_l1()) penalty_.add_l1(0, eta, penalty_.scale_of(0));
}

void EmbeddingBagLayer::merge() {
  if (penalty_.merge()) fold();
}

void EmbeddingBagLayer::flush() {
  merge();
  fold();
}

float EmbeddingBagLayer::take_scale() {
  merge();
  if (penalty_.has_l1() || averaging_) {  // their folds read the stored weights as they are
    fold();
    return 1.0f;
  }
  return static_cast<float>(penalty_.release_scale());  // fold() multiplies by this float
}

void EmbeddingBagLayer::start_averaging() {
  if (penalty_.threads() > 1 || penalty_.has_l1())
    throw Error("averaging needs one thread and no L1 (see optimizer.average)");
  averaging_ = true;
  avg_sum_ = huge_vector<float>(weight_.size());  // read at random, like the weights
  avg_bias_.assign(bias_.size(), 0.0);
  avg_scale_sum_ = 0.0;
  avg_steps_ = 0;
}

void EmbeddingBagLayer::restore_averaging(std::span<const float> weight_sum,
                                          std::span<const double> bias_sum, std::int64_t steps) {
  if (weight_sum.size() != weight_.size() || bias_sum.size() != bias_.size() || steps < 0)
    throw Error("restore_averaging: sums of the wrong size");
  start_averaging();
  std::copy(weight_sum.begin(), weight_sum.end(), avg_sum_.begin());
  std::copy(bias_sum.begin(), bias_sum.end(), avg_bias_.begin());
  avg_steps_ = steps;
}

void EmbeddingBagLayer::write_average(std::span<float> weight, std::span<float> bias) const {
  if (weight.size() != weight_.size() || bias.size() != bias_.size())
    throw Error("write_average: arrays of the wrong size");
  if (avg_scale_sum_ != 0.0) throw Error("write_average: call flush() first");
  if (!averaging_ || avg_steps_ == 0) {
    // (The trainer may pass the layer's own arrays: then there is nothing to copy.)
    if (weight.data() != weight_.data()) std::copy(weight_.begin(), weight_.end(), weight.begin());
    if (bias.data() != bias_.data()) std::copy(bias_.begin(), bias_.end(), bias.begin());
    return;
  }
  const double inv = 1.0 / static_cast<double>(avg_steps_);
  for (std::size_t j = 0; j < weight.size(); ++j)
    weight[j] = static_cast<float>(static_cast<double>(avg_sum_[j]) * inv);
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<float>(avg_bias_[i] * inv);
}

bool EmbeddingBagLayer::skip_unused_rows(Index rows) {
  rows = std::clamp<Index>(rows, 0, num_features_);
  const std::size_t first = static_cast<std::size_t>(rows) * static_cast<std::size_t>(outputs_);
  const auto zero = [first](std::span<const float> a) {
    return a.size() <= first || std::all_of(a.begin() + static_cast<std::ptrdiff_t>(first), a.end(),
                                            [](float w) { return w == 0.0f && !std::signbit(w); });
  };
  if (!zero(weight_) || (averaging_ && !zero(avg_sum_))) return false;
  live_rows_ = rows;
  return true;
}

void EmbeddingBagLayer::fold() {
  const std::size_t live = static_cast<std::size_t>(live_rows_) * static_cast<std::size_t>(outputs_);
  if (averaging_ && avg_scale_sum_ != 0.0) {
    // Close the lazy sum before the stored weights change units: A += C v.
    for (std::size_t j = 0; j < live; ++j)
      avg_sum_[j] = static_cast<float>(avg_sum_[j] + avg_scale_sum_ * weight_[j]);
    avg_scale_sum_ = 0.0;
  }
  penalty_.fold(weight_.first(live));
}

}  // namespace bagel
