#include "bagel/rate_search.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace bagel {

RateSearch::RateSearch(int count, int start)
    : count_(count),
      start_(start),
      loss_(static_cast<std::size_t>(std::max(count, 0)), std::numeric_limits<double>::infinity()),
      tried_(static_cast<std::size_t>(std::max(count, 0)), false) {
  if (count < 1 || start < 0 || start >= count || start % 2 != 0)
    throw std::invalid_argument("RateSearch: start " + std::to_string(start) +
                                " is not a coarse candidate of " + std::to_string(count));
}

bool RateSearch::untried(int i) const { return i >= 0 && i < count_ && !tried(i); }

int RateSearch::coarse_best() const {
  int b = -1;
  for (int i = 0; i < count_; i += 2)
    if (tried(i) && (b < 0 || loss_[static_cast<std::size_t>(i)] < loss_[static_cast<std::size_t>(b)]))
      b = i;
  return b;
}

std::vector<int> RateSearch::next(int threads) const {
  std::vector<int> want;
  const int b = coarse_best();
  if (b < 0) {
    // Nothing tried yet: nearest the start first, the higher rate of two as near.
    for (int parity : {0, 1}) {
      std::vector<int> part;
      for (int i = parity; i < count_; i += 2) part.push_back(i);
      std::stable_sort(part.begin(), part.end(), [&](int x, int y) {
        const int dx = std::abs(x - start_), dy = std::abs(y - start_);
        return dx != dy ? dx < dy : x > y;
      });
      want.insert(want.end(), part.begin(), part.end());
    }
  } else {
    std::vector<int> needed;  // coarse neighbours of the best, to bracket it
    for (const int d : {-2, 2})
      if (untried(b + d)) needed.push_back(b + d);
    want = needed;
    for (const int d : {-1, 1})
      if (untried(b + d)) want.push_back(b + d);
    if (!needed.empty()) {
      // Speculation only: the walk goes on past a needed neighbour if it is better.
      for (const int n : needed) {
        const int step = n < b ? -2 : 2;
        for (int i = n + step; i >= 0 && i < count_; i += step)
          if (untried(i)) want.push_back(i);
      }
    }
  }
  if (want.size() > static_cast<std::size_t>(std::max(threads, 1)))
    want.resize(static_cast<std::size_t>(std::max(threads, 1)));
  return want;
}

void RateSearch::record(int i, double loss) {
  if (i < 0 || i >= count_) throw std::out_of_range("RateSearch: no candidate " + std::to_string(i));
  tried_[static_cast<std::size_t>(i)] = true;
  loss_[static_cast<std::size_t>(i)] = loss;
}

int RateSearch::chosen() const {
  const int b = coarse_best();
  if (b < 0) return -1;
  // The other coarse candidates tried are no better than b (its definition).
  int pick = -1;
  for (int i = std::max(b - 1, 0); i <= std::min(b + 1, count_ - 1); ++i)
    if (tried(i) && (pick < 0 || loss_[static_cast<std::size_t>(i)] < loss_[static_cast<std::size_t>(pick)]))
      pick = i;
  return pick;
}

}  // namespace bagel
