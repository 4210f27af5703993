// "learning_rate": "auto": eta0 picked by trying rates on a sample of the
// training rows before training (Bottou's svmsgd determineEta0, with a
// held-out part of the sample as the judge).
//
// The right rate depends on the scale of the rows: for logistic loss a step
// is stable while eta * |x|^2 stays around 1, so count vectors (|x|^2 in the
// hundreds), tf-idf rows (norm 1) and binary indicators each want a rate
// orders of magnitude apart. The bias, whose "feature" is always 1, moves a
// logit by eta per unit gradient, so where |x|^2 is far below 1 (counts
// scaled by 1/1000, or rows normalised to sum to 1) a rate that suits the
// weights would throw the bias about by 1 / |x|^2 times their change: every
// step clipped, or, short of that, a bias that drowns the weights (test
// accuracy 0.75 -> 0.71 at counts times 0.03, training refused from 0.001).
// Below a mean |x|^2 of 1/2 the bias therefore steps at bias_rate = mean
// |x|^2 / 64 times the rate, as if its feature were sqrt(mean |x|^2) / 8
// (LIBLINEAR's -B; scikit-learn's SGDClassifier damps the bias of sparse
// data by 0.01): it moves a logit 1/64 as far as the weights do on a row of
// mean |x|^2, about as slowly as on count data (where that is 1/25 to
// 1/2400 at the full rate), and the model is the same, to rounding,
// whatever the scale of such rows. From 1/2 up (counts, and unit-length
// tf-idf rows, at 1 or just under) the bias keeps the full rate.
//
// Trying the rates costs a few thousand rows' worth of SGD per candidate,
// and keeps the optimizer itself unchanged: the lazy O(non-zeros) step, both
// layers and their equivalence are untouched.
#pragma once

#include <cstdint>
#include <vector>

#include "bagel/config.h"
#include "bagel/dataset.h"

namespace bagel {

// Rows of mean |x|^2 below kSmallRows step their bias at kSmallRowsBiasShare
// times mean |x|^2 of the rate (above). Of 1/64, 1/16 and 1 (the bias moving
// a logit as far as the weights), tried on eight of the benchmark sets
// (data/PERFORMANCE.md) with their values times 1e-3 (three seeds each),
// 1/64 came within 0.16 points of the unscaled sets' test accuracy on all
// eight; 1 lost up to 3.3 points (changelog-era, whose mean is set by a few
// very long rows).
// Unit-length rows (tf-idf, hashing: mean |x|^2 1, or just under with some
// empty rows) stay above the threshold, with the bias at the full rate.
inline constexpr double kSmallRows = 0.5;
inline constexpr double kSmallRowsBiasShare = 1.0 / 64;

struct RateTrial {
  double rate = 0;
  double holdout_log_loss = 0;  // +inf when training on the sample diverged
  double holdout_accuracy = 0;  // 0 when it diverged
};

struct RateCalibration {
  double rate = 0;              // the chosen eta0
  std::vector<RateTrial> trials;
  std::int64_t sample_rows = 0;
  int folds = 1;                // 1: judged on 20% of the sample; 5 below 200 rows
  // The centre of the search: mean |x|^2 of the rows the candidates train on
  // (the whole sample with folds), rows past 1,000 times the median left out.
  double mean_squared_norm = 0;
  double bias_rate = 1;         // the biases' rate over it (below; or optimizer.bias_rate)
  double seconds = 0;
  // The held-out loss of the training part's class shares alone; where no
  // candidate's loss was 5% below it, and none was below it at all or the
  // best was among the three lowest rates, the rate is 2^2 / mean |x|^2
  // if that rate's held-out accuracy is clearly higher (no_signal).
  double prior_log_loss = 0;
  bool no_signal = false;
};

// Searches eta0 = 2^k / mean(|x|^2) over a range of k (coarse to fine: the
// best of every other k, found by a walk from 2^2 (rate_search.h), then its
// neighbours), each tried by training on 80% of
// a seeded sample of `train` (at most `sample_rows` rows, the schedule, L2,
// batch size and epochs of `c`, at most 10 epochs, one thread each, several candidates in
// parallel) and scoring log loss on the other 20%; a sample of fewer than
// 200 rows is judged by 5-fold cross-validation instead (the mean loss of
// the five fifths). Returns the rate with the lowest held-out loss, or,
// where none is 5% below the held-out loss of the class shares alone (no
// signal in the loss), 2^2 / mean |x|^2 if it gets clearly more held-out
// rows right. `classes` is the number of classes of `train.y`, `head` the
// model's (loss.h).
RateCalibration calibrate_learning_rate(const Dataset& train, int classes, Head head,
                                        const OptimizerConfig& c,
                                        std::int64_t sample_rows = 2000);

namespace detail {

// Whether `candidate` predicts the `judged` held-out rows clearly better
// than `best`: its accuracy more than one standard error of an accuracy
// over those rows above best's.
bool predicts_clearly_better(const RateTrial& candidate, const RateTrial& best, double judged);

}  // namespace detail

}  // namespace bagel
