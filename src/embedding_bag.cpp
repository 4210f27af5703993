#include "bagel/embedding_bag.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "bagel/error.h"
#include "bagel/huge_pages.h"

namespace bagel {

namespace {

// Below this the stored weights grow as 1/s and lose float range; fold it in.
constexpr double kMinScale = 1e-6;

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

template <int... K>
detail::BagKernels pick(int k, std::integer_sequence<int, K...>) {
  detail::BagKernels out{detail::bag_sum_any, detail::bag_scatter_any,
                         detail::bag_scatter_range_any};
  ((k == K + 1 ? (out = {sum_fixed<K + 1>, scatter_fixed<K + 1>, scatter_range_fixed<K + 1>}, 0)
               : 0),
   ...);
  return out;
}

// Soft-threshold of one weight row by `amount` (stored units), clipped at 0.
// A Hogwild thread's view may have run ahead of the merged total, leaving a
// negative amount for a row: that row has nothing pending.
void shrink_row(float* e, int k, double amount) {
  if (amount <= 0) return;
  for (int i = 0; i < k; ++i) {
    const double v = e[i];
    e[i] = static_cast<float>(v > 0 ? std::max(0.0, v - amount) : std::min(0.0, v + amount));
  }
}

}  // namespace

detail::BagKernels detail::BagKernels::for_outputs(int k) {
  return pick(k, std::make_integer_sequence<int, kMaxFixedOutputs>{});
}

EmbeddingBagLayer::EmbeddingBagLayer(std::span<float> weight, std::span<float> bias,
                                     Index num_features, int outputs, double l2, double l1)
    : weight_(weight),
      bias_(bias),
      num_features_(num_features),
      outputs_(outputs),
      l2_(l2),
      l1_(l1),
      kernels_(detail::BagKernels::for_outputs(outputs)),
      threads_(1) {
  if (l1_ > 0) l1_applied_.assign(static_cast<std::size_t>(num_features_), 0.0);
}

void EmbeddingBagLayer::set_threads(int threads) {
  merge();
  threads_.assign(static_cast<std::size_t>(std::max(threads, 1)), ThreadState{});
}

void EmbeddingBagLayer::catch_up_l1(RowView row, double total) {
  for (const Index j : row.indices) {
    const double pending = total - l1_applied_[j];
    if (pending <= 0) continue;
    l1_applied_[j] = total;
    shrink_row(weight_.data() + static_cast<std::size_t>(j) * outputs_, outputs_, pending);
  }
}

void EmbeddingBagLayer::prefetch(const CsrMatrix& x, std::span<const Index> rows) const {
  // Cache-resident weights are skipped: then the prefetch loop only adds
  // instructions. Measured on 500k shuffled rows over row windows, 5 epochs:
  // at 2^20 features 1 output ran 1.85 -> 1.47 s with it (2.54 -> 1.70 s
  // without feature reordering) and 5 outputs 1.71 -> 1.34 s; at 2^14
  // features (64 KB of weights) 1 output ran 0.71 s without, 0.77 s with.
  // (Before row windows, rows narrower than a cache line ran faster without.)
  if (weight_.size() * sizeof(float) < kPrefetchMinWeightBytes) return;
  for (const Index r : rows) prefetch_rows(weight_.data(), outputs_, x.row(r));
  if (averaging_)
    for (const Index r : rows) prefetch_rows(avg_sum_.data(), outputs_, x.row(r));
}

void EmbeddingBagLayer::forward_readonly(const CsrMatrix& x, std::span<const Index> rows,
                                         float* logits) const {
  const float s = static_cast<float>(scale_of(0));
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    float* z = logits + b * k;
    std::fill(z, z + k, 0.0f);
    kernels_.sum(weight_.data(), k, x.row(rows[b]), z);
    for (int i = 0; i < k; ++i) z[i] = s * z[i] + bias_[i];
  }
}

void EmbeddingBagLayer::forward(const CsrMatrix& x, std::span<const Index> rows, float* logits,
                                int thread) {
  const float s = static_cast<float>(scale_of(thread));
  const double l1_total = l1_of(thread);
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const RowView row = x.row(rows[b]);
    if (l1_ > 0) catch_up_l1(row, l1_total);
    float* z = logits + b * k;
    std::fill(z, z + k, 0.0f);
    kernels_.sum(weight_.data(), k, row, z);
    for (int i = 0; i < k; ++i) z[i] = s * z[i] + bias_[i];
  }
}

void EmbeddingBagLayer::step(const CsrMatrix& x, std::span<const Index> rows, const float* grads,
                             double eta, int thread) {
  const int k = outputs_;
  const double batch = static_cast<double>(rows.size());
  ThreadState& t = threads_[thread];
  // Pending L1 must land before the gradient (forward() normally did it).
  if (l1_ > 0)
    for (const Index r : rows) catch_up_l1(x.row(r), l1_of(thread));
  const double a = 1.0 - eta * l2_;
  t.decay *= a;
  t.view = threads_.size() == 1 ? t.decay : t.view * std::pow(a, double(threads_.size()));
  const double scale = scale_of(thread);
  const float c = static_cast<float>(-eta / (batch * scale));
  for (std::size_t b = 0; b < rows.size(); ++b)
    kernels_.scatter(weight_.data(), k, x.row(rows[b]), grads + b * k, c);
  for (int i = 0; i < k; ++i) {
    double sum = 0;
    for (std::size_t b = 0; b < rows.size(); ++b) sum += grads[b * k + i];
    bias_[i] = static_cast<float>(bias_[i] - eta * sum / batch);
  }
  if (l1_ > 0) {
    t.l1_added += eta * l1_ / scale;
    const double total = l1_of(thread);
    for (const Index r : rows) catch_up_l1(x.row(r), total);
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
  if (threads_.size() == 1 && scale < kMinScale) flush();
}

void EmbeddingBagLayer::catch_up_range(const CsrMatrix& x, std::span<const Index> rows, Index lo,
                                       Index hi) {
  if (l1_ <= 0) return;
  const double total = l1_of(0);
  for (const Index r : rows) {
    const RowView row = x.row(r);
    for (const Index j : row.indices) {
      if (j < lo || j >= hi) continue;
      const double pending = total - l1_applied_[j];
      if (pending <= 0) continue;
      l1_applied_[j] = total;
      shrink_row(weight_.data() + static_cast<std::size_t>(j) * outputs_, outputs_, pending);
    }
  }
}

float EmbeddingBagLayer::begin_step(double eta, std::size_t batch) {
  threads_[0].decay *= 1.0 - eta * l2_;
  threads_[0].view = threads_[0].decay;
  return static_cast<float>(-eta / (static_cast<double>(batch) * scale_of(0)));
}

void EmbeddingBagLayer::scatter_range(const CsrMatrix& x, std::span<const Index> rows,
                                      const float* grads, float c, Index lo, Index hi) {
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b)
    kernels_.scatter_range(weight_.data(), k, x.row(rows[b]), grads + b * k, c, lo, hi);
}

void EmbeddingBagLayer::end_step(std::span<const Index> rows, const float* grads, double eta) {
  const int k = outputs_;
  const double batch = static_cast<double>(rows.size());
  for (int i = 0; i < k; ++i) {
    double sum = 0;
    for (std::size_t b = 0; b < rows.size(); ++b) sum += grads[b * k + i];
    bias_[i] = static_cast<float>(bias_[i] - eta * sum / batch);
  }
  if (l1_ > 0) threads_[0].l1_added += eta * l1_ / scale_of(0);
}

void EmbeddingBagLayer::merge() {
  for (ThreadState& t : threads_) {
    scale_ *= t.decay;
    l1_total_ += t.l1_added;
    t = ThreadState{};
  }
  if (scale_ < kMinScale) fold();
}

void EmbeddingBagLayer::flush() {
  merge();
  fold();
}

float EmbeddingBagLayer::take_scale() {
  merge();
  if (l1_ > 0 || averaging_) {  // their folds read the stored weights as they are
    fold();
    return 1.0f;
  }
  const auto s = static_cast<float>(scale_);  // fold() multiplies by this float
  scale_ = 1.0;
  return s;
}

void EmbeddingBagLayer::start_averaging() {
  if (threads_.size() > 1 || l1_ > 0)
    throw Error("averaging needs one thread and no L1 (see optimizer.average)");
  averaging_ = true;
  avg_sum_ = huge_vector<float>(weight_.size());  // read at random, like the weights
  avg_bias_.assign(bias_.size(), 0.0);
  avg_scale_sum_ = 0.0;
  avg_steps_ = 0;
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

void EmbeddingBagLayer::fold() {
  const std::size_t rows = static_cast<std::size_t>(num_features_);
  const int k = outputs_;
  if (averaging_ && avg_scale_sum_ != 0.0) {
    // Close the lazy sum before the stored weights change units: A += C v.
    for (std::size_t j = 0; j < weight_.size(); ++j)
      avg_sum_[j] = static_cast<float>(avg_sum_[j] + avg_scale_sum_ * weight_[j]);
    avg_scale_sum_ = 0.0;
  }
  if (l1_ > 0) {
    for (std::size_t j = 0; j < rows; ++j) {
      shrink_row(weight_.data() + j * k, k, l1_total_ - l1_applied_[j]);
      l1_applied_[j] = 0.0;
    }
    l1_total_ = 0.0;
  }
  if (scale_ != 1.0) {
    const float s = static_cast<float>(scale_);
    for (float& w : weight_) w *= s;
    scale_ = 1.0;
  }
}

}  // namespace bagel
