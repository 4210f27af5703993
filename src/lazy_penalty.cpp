#include "bagel/lazy_penalty.h"

#include <algorithm>

namespace bagel {

LazyPenalty::LazyPenalty(Index num_features, int outputs, double l2, double l1)
    : outputs_(outputs), l2_(l2), l1_(l1), threads_(1) {
  if (l1_ > 0) l1_applied_.assign(static_cast<std::size_t>(num_features), 0.0);
}

void LazyPenalty::set_threads(int threads) {
  threads_.assign(static_cast<std::size_t>(std::max(threads, 1)), ThreadState{});
}

bool LazyPenalty::merge() {
  for (ThreadState& t : threads_) {
    scale_ *= t.decay;
    l1_total_ += t.l1_added;
    t = ThreadState{};
  }
  return scale_is_small();
}

void LazyPenalty::fold(std::span<float> weight) {
  const int k = outputs_;
  if (l1_ > 0) {
    // The rows past `weight` (zeros no row touches) keep 0 applied of a total of 0.
    const std::size_t rows = std::min(l1_applied_.size(), weight.size() / static_cast<std::size_t>(k));
    for (std::size_t j = 0; j < rows; ++j) {
      shrink_row(weight.data() + j * k, k, l1_total_ - l1_applied_[j]);
      l1_applied_[j] = 0.0;
    }
    l1_total_ = 0.0;
  }
  if (scale_ != 1.0) {
    const float s = static_cast<float>(scale_);
    for (float& w : weight) w *= s;
    scale_ = 1.0;
  }
}

void LazyPenalty::shrink_row(float* e, int k, double amount) {
  if (amount <= 0) return;
  for (int i = 0; i < k; ++i) {
    const double v = e[i];
    e[i] = static_cast<float>(v > 0 ? std::max(0.0, v - amount) : std::min(0.0, v + amount));
  }
}

}  // namespace bagel
