// TopClasses: the classes predict --top-k / --threshold writes for a row.
#include "bagel/top_classes.h"

#include <gtest/gtest.h>

#include <vector>

namespace bagel {
namespace {

TEST(TopClasses, BestFirstTiesInClassOrder) {
  const double p[] = {0.1, 0.3, 0.2, 0.3, 0.1};
  TopClasses top(5, 3, 0.0);
  const auto got = top.of(p);
  EXPECT_EQ(std::vector<int>(got.begin(), got.end()), (std::vector<int>{1, 3, 2}));
  TopClasses all(5, 99, 0.0);  // K above the number of classes: all of them
  const auto every = all.of(p);
  EXPECT_EQ(std::vector<int>(every.begin(), every.end()), (std::vector<int>{1, 3, 2, 0, 4}));
}

TEST(TopClasses, ThresholdKeepsClassesAtOrAboveIt) {
  const double p[] = {0.25, 0.5, 0.25};
  TopClasses top(3, 3, 0.25);  // >= threshold, as fastText's findKBest
  const auto got = top.of(p);
  EXPECT_EQ(std::vector<int>(got.begin(), got.end()), (std::vector<int>{1, 0, 2}));
  TopClasses one(3, 1, 0.3);
  const auto best = one.of(p);
  EXPECT_EQ(std::vector<int>(best.begin(), best.end()), (std::vector<int>{1}));
  TopClasses none(3, 2, 0.6);
  EXPECT_TRUE(none.of(p).empty());
}

}  // namespace
}  // namespace bagel
