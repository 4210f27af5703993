// The trainer's rule for keeping checkpoints (train/checkpoint_pace.h).
#include <gtest/gtest.h>

#include "train/checkpoint_pace.h"

namespace bagel::train {
namespace {

TEST(CheckpointPace, KeepsOneAfterTheFirstEpochAndThenOnceTheEpochsTookTheRatioOfItsCost) {
  CheckpointPace pace;
  EXPECT_TRUE(pace.due(0.001));  // nothing kept yet
  pace.kept(0.01);  // 10 ms: the next once 50 x 10 ms of epochs have run
  EXPECT_FALSE(pace.due(0.2));
  EXPECT_FALSE(pace.due(0.2));
  EXPECT_TRUE(pace.due(0.2));
  pace.kept(0.01);
  EXPECT_FALSE(pace.due(0.2));  // counted from the one just kept
}

TEST(CheckpointPace, CheapCheckpointsAreKeptAfterEveryEpoch) {
  CheckpointPace pace;
  for (int epoch = 0; epoch < 5; ++epoch) {
    ASSERT_TRUE(pace.due(0.01)) << epoch;
    pace.kept(0.0001);  // a small model: a copy costs 1% of an epoch
  }
}

TEST(CheckpointPace, OneCostlierThanTheEpochsWaitsForThemToAddUp) {
  CheckpointPace pace;
  ASSERT_TRUE(pace.due(0.1));
  pace.kept(0.025);  // 84 MB copied and scanned after a 0.1 s epoch
  int epochs = 0;
  while (!pace.due(0.1)) ++epochs;
  EXPECT_EQ(epochs, 12);  // 13 epochs of 0.1 s reach 50 x 0.025 s
}

}  // namespace
}  // namespace bagel::train
