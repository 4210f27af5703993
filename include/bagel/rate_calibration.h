// "learning_rate": "auto": eta0 picked by trying rates on a sample of the
// training rows before training (Bottou's svmsgd determineEta0, with a
// held-out part of the sample as the judge).
//
// The right rate depends on the scale of the rows: for logistic loss a step
// is stable while eta * |x|^2 stays around 1, so count vectors (|x|^2 in the
// hundreds), tf-idf rows (norm 1) and binary indicators each want a rate
// orders of magnitude apart. Trying the rates costs a few thousand rows'
// worth of SGD per candidate, and keeps the optimizer itself unchanged: the
// lazy O(non-zeros) step, both layers and their equivalence are untouched.
#pragma once

#include <cstdint>
#include <vector>

#include "bagel/config.h"
#include "bagel/dataset.h"

namespace bagel {

struct RateTrial {
  double rate = 0;
  double holdout_log_loss = 0;  // +inf when training on the sample diverged
};

struct RateCalibration {
  double rate = 0;              // the chosen eta0
  std::vector<RateTrial> trials;
  std::int64_t sample_rows = 0;
  double mean_squared_norm = 0; // of the sample's rows: the centre of the search
  double seconds = 0;
};

// Searches eta0 = 2^k / mean(|x|^2) over a range of k (coarse to fine: the
// best of every other k, found by a walk from 2^2 (rate_search.h), then its
// neighbours), each tried by training on 80% of
// a seeded sample of `train` (at most `sample_rows` rows, the schedule, L2,
// batch size and epochs of `c`, at most 10 epochs, one thread each, several candidates in
// parallel) and scoring log loss on the other 20%. Returns the rate with the
// lowest held-out loss. `classes` is the number of classes of `train.y`, `head`
// the model's (loss.h).
RateCalibration calibrate_learning_rate(const Dataset& train, int classes, Head head,
                                        const OptimizerConfig& c,
                                        std::int64_t sample_rows = 2000);

}  // namespace bagel
