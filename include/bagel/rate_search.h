// Which candidate learning rates calibrate_learning_rate() tries, and in
// what order (rate_calibration.h).
//
// The candidates are numbered 0 .. count-1 (rate 2^(index + lowest) / mean
// |x|^2); the even ones are the coarse grid. The rule the choice follows:
// the coarse candidate of the lowest held-out loss, then the lowest loss
// among it and its two odd neighbours. Trying every coarse candidate to find
// that one is wasted work where the loss falls and then rises along the
// grid, which it did on every curve measured (12 data sets x 5 seeds, all 16
// candidates each: data/PERFORMANCE.md): the search walks from `start` instead and
// stops once the best coarse candidate has a worse (or absent) coarse
// neighbour on both sides. It then picks what trying all ten would have
// picked, from about half as many trials and fewer rounds of parallel ones.
// Where a round has more threads than needed candidates, it also tries the
// candidates most likely to be needed next (the odd neighbours of the best
// so far, then the coarse ones further along the walk); with a thread for
// every candidate, the first round tries them all and is the only one.
#pragma once

#include <vector>

namespace bagel {

class RateSearch {
 public:
  // `count` >= 1 candidates; the walk starts at the coarse candidate `start`
  // and the one above it.
  RateSearch(int count, int start);

  // The untried candidates to try next, at most `threads` (>= 1) of them;
  // empty when the search is over.
  std::vector<int> next(int threads) const;

  // The held-out loss of candidate `i` (+inf for one that diverged).
  void record(int i, double loss);

  bool tried(int i) const { return tried_[static_cast<std::size_t>(i)]; }

  // The chosen candidate (the rule above, over those tried; ties go to the
  // smaller rate); -1 before any was recorded.
  int chosen() const;

 private:
  int coarse_best() const;
  bool untried(int i) const;

  int count_;
  int start_;
  std::vector<double> loss_;
  std::vector<bool> tried_;
};

}  // namespace bagel
