// RateSearch (rate_search.h): the walk picks what trying every coarse
// candidate and the best one's neighbours picks, on loss curves that fall
// and then rise, with fewer trials and rounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "bagel/rate_search.h"

namespace bagel {
namespace {

constexpr int kCount = 16;
constexpr int kStart = 10;
constexpr double kInf = std::numeric_limits<double>::infinity();

// The rule the search must reproduce, from every loss: the coarse (even)
// candidate of the lowest loss, then the lowest among it and its neighbours;
// ties to the lower index.
int exhaustive_choice(const std::vector<double>& loss) {
  int b = 0;
  for (int i = 0; i < kCount; i += 2)
    if (loss[static_cast<std::size_t>(i)] < loss[static_cast<std::size_t>(b)]) b = i;
  int pick = std::max(b - 1, 0);
  for (int i = pick + 1; i <= std::min(b + 1, kCount - 1); ++i)
    if (loss[static_cast<std::size_t>(i)] < loss[static_cast<std::size_t>(pick)]) pick = i;
  return pick;
}

struct Outcome {
  int chosen = -1;
  int rounds = 0;
  int trials = 0;
};

Outcome search(const std::vector<double>& loss, int threads) {
  RateSearch s(kCount, kStart);
  Outcome out;
  std::set<int> seen;
  for (std::vector<int> batch = s.next(threads); !batch.empty(); batch = s.next(threads)) {
    EXPECT_LE(batch.size(), static_cast<std::size_t>(threads));
    for (const int i : batch) {
      EXPECT_TRUE(seen.insert(i).second) << "candidate " << i << " asked for twice";
      s.record(i, loss[static_cast<std::size_t>(i)]);
    }
    ++out.rounds;
    out.trials += static_cast<int>(batch.size());
    EXPECT_LE(out.rounds, kCount) << "the search does not end";
    if (out.rounds > kCount) break;
  }
  out.chosen = s.chosen();
  return out;
}

// A curve falling to its lowest at `low` (a real position in [0, 15]) and
// rising after it, diverging (+inf) from `diverge` on: the shape of every
// curve data/PERFORMANCE.md measured.
std::vector<double> valley(double low, int diverge, double left_slope, double right_slope) {
  std::vector<double> loss(kCount);
  for (int i = 0; i < kCount; ++i) {
    const double d = i - low;
    loss[static_cast<std::size_t>(i)] = i >= diverge ? kInf : 1.0 + (d < 0 ? -d * left_slope : d * right_slope);
  }
  return loss;
}

TEST(RateSearch, PicksWhatTryingEveryCoarseCandidatePicksOnValleys) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> where(0.0, kCount - 1.0), slope(0.01, 1.0);
  int cases = 0;
  for (int n = 0; n < 2000; ++n) {
    const double low = where(rng);
    const int diverge = std::uniform_int_distribution<int>(static_cast<int>(std::ceil(low)) + 1, kCount + 2)(rng);
    const std::vector<double> loss = valley(low, diverge, slope(rng), slope(rng));
    for (const int threads : {1, 2, 3, 4, 8, 16, 32}) {
      const Outcome o = search(loss, threads);
      ASSERT_EQ(o.chosen, exhaustive_choice(loss)) << "low " << low << " threads " << threads;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 2000 * 7);
}

TEST(RateSearch, NeedsFewerTrialsAndRoundsThanTheWholeGridNearTheStart) {
  // Lowest at 2^1 to 2^3 (indices 9-11), as on most of §9's sets: the whole
  // grid takes 10 trials, in 5 rounds on 2 threads and 2 rounds on 8.
  for (const double low : {9.0, 9.5, 10.0, 10.5, 11.0}) {
    const std::vector<double> loss = valley(low, 14, 0.3, 0.5);
    EXPECT_LE(search(loss, 1).trials, 6) << low;
    EXPECT_LE(search(loss, 2).rounds, 3) << low;
    EXPECT_LE(search(loss, 4).rounds, 2) << low;
  }
}

TEST(RateSearch, OneRoundWithAThreadForEveryCandidate) {
  const std::vector<double> loss = valley(3.2, 16, 0.2, 0.2);
  const Outcome o = search(loss, kCount);
  EXPECT_EQ(o.rounds, 1);
  EXPECT_EQ(o.trials, kCount);
  EXPECT_EQ(o.chosen, exhaustive_choice(loss));
}

TEST(RateSearch, EveryCandidateDivergingEndsAtTheLowestRate) {
  // The caller reports the chosen rate's +inf as "every rate diverged".
  const std::vector<double> loss(kCount, kInf);
  for (const int threads : {1, 2, 16}) {
    const Outcome o = search(loss, threads);
    EXPECT_EQ(o.chosen, 0) << threads;
  }
}

TEST(RateSearch, BestAtEitherEdge) {
  for (const double low : {0.0, 15.0}) {
    const std::vector<double> loss = valley(low, kCount, 0.1, 0.1);
    for (const int threads : {1, 2, 5}) EXPECT_EQ(search(loss, threads).chosen, static_cast<int>(low)) << low;
  }
}

TEST(RateSearch, NothingChosenBeforeATrialAndBadArgumentsRefused) {
  RateSearch s(kCount, kStart);
  EXPECT_EQ(s.chosen(), -1);
  EXPECT_EQ(s.next(2), (std::vector<int>{10, 12}));
  EXPECT_THROW(RateSearch(kCount, 3), std::invalid_argument);
  EXPECT_THROW(RateSearch(kCount, kCount), std::invalid_argument);
  EXPECT_THROW(s.record(kCount, 1.0), std::out_of_range);
}

}  // namespace
}  // namespace bagel
