// When the trainer keeps a checkpoint: what a first Ctrl-C or kill saves
// for --resume (src/cli/train_command.cpp).
//
// Keeping one copies the weights and scans them for non-finite values.
// After every epoch, that took 17% of a one-thread run's time at 2^20
// features and 20 classes (84 MB a copy, 0.1 s epochs) and 10% at 6 MB
// (man-section, 7 ms epochs). So one is kept after the first epoch, and then
// once the epochs since the last took kCostRatio times what that one cost:
// the copies take at most about 1/kCostRatio of the run, and a stop goes
// back at most kCostRatio times a copy's cost (the resumed run ends with the
// same model either way). Where an epoch takes about as long as a copy
// (the real sets of data/PERFORMANCE.md), that is several epochs but a fraction of a second.
#pragma once

namespace bagel::train {

class CheckpointPace {
 public:
  static constexpr double kCostRatio = 50;

  // After an epoch of `epoch_seconds`: whether to keep one now.
  bool due(double epoch_seconds) {
    since_ += epoch_seconds;
    return since_ >= kCostRatio * cost_;
  }
  // One was kept; it took `seconds`.
  void kept(double seconds) { cost_ = seconds, since_ = 0; }

 private:
  double since_ = 0;  // the epochs' seconds since the last one kept
  double cost_ = 0;   // what the last one took
};

}  // namespace bagel::train
