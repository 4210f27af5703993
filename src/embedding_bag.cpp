#include "bagel/embedding_bag.h"

#include <algorithm>
#include <cmath>

namespace bagel {

namespace {

// Below this the stored weights grow as 1/s and lose float range; fold it in.
constexpr double kMinScale = 1e-6;

}  // namespace

EmbeddingBagLayer::EmbeddingBagLayer(std::span<float> weight, std::span<float> bias,
                                     Index num_features, int outputs, double l2, double l1)
    : weight_(weight), bias_(bias), num_features_(num_features), outputs_(outputs), l2_(l2), l1_(l1) {
  if (l1_ > 0) l1_applied_.assign(static_cast<std::size_t>(num_features_), 0.0);
}

void EmbeddingBagLayer::catch_up_l1(RowView row) {
  for (const Index j : row.indices) {
    const double pending = l1_total_ - l1_applied_[j];
    if (pending <= 0) continue;
    l1_applied_[j] = l1_total_;
    float* e = weight_.data() + static_cast<std::size_t>(j) * outputs_;
    for (int i = 0; i < outputs_; ++i) {
      const double v = e[i];
      e[i] = static_cast<float>(v > 0 ? std::max(0.0, v - pending) : std::min(0.0, v + pending));
    }
  }
}

void EmbeddingBagLayer::forward(const CsrMatrix& x, std::span<const Index> rows, float* logits) {
  const float s = static_cast<float>(scale_);
  const int k = outputs_;
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const RowView row = x.row(rows[b]);
    if (l1_ > 0) catch_up_l1(row);
    float* z = logits + b * k;
    std::fill(z, z + k, 0.0f);
    if (k == 1) detail::bag_sum<1>(weight_.data(), 1, row, z);
    else detail::bag_sum<0>(weight_.data(), k, row, z);
    for (int i = 0; i < k; ++i) z[i] = s * z[i] + bias_[i];
  }
}

void EmbeddingBagLayer::step(const CsrMatrix& x, std::span<const Index> rows, const float* grads,
                             double eta) {
  const int k = outputs_;
  const double batch = static_cast<double>(rows.size());
  scale_ *= 1.0 - eta * l2_;
  const float c = static_cast<float>(-eta / (batch * scale_));
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const RowView row = x.row(rows[b]);
    const float* g = grads + b * k;
    if (k == 1) detail::bag_scatter<1>(weight_.data(), 1, row, g, c);
    else detail::bag_scatter<0>(weight_.data(), k, row, g, c);
  }
  for (int i = 0; i < k; ++i) {
    double sum = 0;
    for (std::size_t b = 0; b < rows.size(); ++b) sum += grads[b * k + i];
    bias_[i] = static_cast<float>(bias_[i] - eta * sum / batch);
  }
  if (l1_ > 0) {
    l1_total_ += eta * l1_ / scale_;
    for (const Index r : rows) catch_up_l1(x.row(r));
  }
  if (scale_ < kMinScale) flush();
}

void EmbeddingBagLayer::flush() {
  const std::size_t rows = static_cast<std::size_t>(num_features_);
  const int k = outputs_;
  if (l1_ > 0) {
    for (std::size_t j = 0; j < rows; ++j) {
      const double pending = l1_total_ - l1_applied_[j];
      float* e = weight_.data() + j * k;
      for (int i = 0; i < k; ++i) {
        const double v = e[i];
        e[i] = static_cast<float>(v > 0 ? std::max(0.0, v - pending) : std::min(0.0, v + pending));
      }
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
