// The classes worth reporting for one row of probabilities, as fastText's
// predict-prob chooses them: those with probability >= threshold, the k most
// probable of them, best first. Equal probabilities keep class order (the
// model's sorted classes), except the predicted class (predicted_class,
// loss.h), which goes first among those of its probability: where long rows
// saturate the one-vs-rest sigmoids, the first of the top k is the class
// predict gives.
#pragma once

#include <span>
#include <vector>

namespace bagel {

class TopClasses {
 public:
  // k >= 1 (more than `classes` means all of them); threshold in [0, 1].
  TopClasses(int classes, int k, double threshold);

  // Class ids of `proba` (one row, `classes` values) to report, `best` the
  // row's predicted class (-1: none); the span lives until the next call.
  // Empty when no class reaches the threshold.
  std::span<const int> of(const double* proba, int best = -1);

 private:
  int classes_;
  int k_;
  double threshold_;
  std::vector<int> order_;  // scratch, so that no row allocates
};

}  // namespace bagel
