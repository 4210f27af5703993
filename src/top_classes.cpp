#include "bagel/top_classes.h"

#include <algorithm>

namespace bagel {

TopClasses::TopClasses(int classes, int k, double threshold)
    : classes_(classes), k_(std::min(k, classes)), threshold_(threshold) {
  order_.reserve(static_cast<std::size_t>(classes));
}

std::span<const int> TopClasses::of(const double* proba, int best) {
  order_.clear();
  for (int c = 0; c < classes_; ++c)
    if (proba[c] >= threshold_) order_.push_back(c);
  const auto better = [proba, best](int a, int b) {
    if (proba[a] != proba[b]) return proba[a] > proba[b];
    return a == best || (b != best && a < b);
  };
  const auto shown = std::min(order_.size(), static_cast<std::size_t>(k_));
  std::partial_sort(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(shown),
                    order_.end(), better);
  return std::span<const int>(order_).first(shown);
}

}  // namespace bagel
