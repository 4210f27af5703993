// `bagel tune`: a search over the settings that matter most for accuracy
// (learning rate, L2, epochs), each trial trained on the training set and
// scored on a validation set, trials in parallel on all cores, within a time
// budget. fastText's -autotune-validation is the model: one command, a
// budget, and a config out that `bagel train` takes as is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/progress.h"

namespace bagel {

struct TuneTrial {
  OptimizerConfig settings;      // every value resolved (no "auto")
  Head head = Head::kSoftmax;    // the model's (model.multiclass; kSigmoid for two classes)
  double valid_accuracy = 0;
  double valid_log_loss = 0;
  double seconds = 0;
  bool ran = false;              // false: skipped by the budget
  std::string error;             // a trial that failed (diverged): why
  // The grid's rate where it diverged and the trial restarted at a tenth of
  // it, as `bagel train` does (settings.learning_rate is the rate it
  // trained at); 0 where it did not.
  double diverged_rate = 0;
};

struct TuneResult {
  std::vector<TuneTrial> trials;  // in the order they were planned
  std::size_t best = 0;           // index into trials
  double seconds = 0;
  bool budget_cut = false;        // some trials did not run
  int grid_left_out = 0;          // trials of grid points whose learning_rate x l2 >= 1
};

// Holds out a seeded `fraction` of `train`'s rows as the validation set
// (for configs without one), stratified by class: each class gives its
// share (the remainders going to the classes with the largest, equal ones
// in a seeded order), but keeps at least one row to train on. {train part,
// held-out part}.
std::pair<Dataset, Dataset> split_holdout(const Dataset& train, double fraction, std::uint64_t seed);

// Plans the trials around `base` (its "auto" values resolved on `train`):
// learning rate x 1/4 .. x 4 of the calibrated one, l2 in {0, 1e-6, 1e-5,
// 1e-4}, epochs x 1 and x 2; the defaults first, then the rest in order of
// distance from them, so that a short budget still tries the likeliest. Runs
// as many as fit in `budget_seconds` (a trial starts only when the mean
// trial so far still fits), `threads` at a time (0: all cores), each on one
// thread, as `bagel train` would train it (a run that diverges restarts at
// a tenth of the rate: TuneTrial::diverged_rate). The best is the highest
// valid accuracy, ties broken by log loss.
// `multiclass`: the head of K > 2 classes; unset, both softmax and
// one-vs-rest are tried (each one-vs-rest point after its softmax twin, at
// the rates calibrated for softmax).
TuneResult tune(const Dataset& train, const Dataset& valid, int classes,
                std::optional<Head> multiclass, const OptimizerConfig& base,
                LayerKind layer, double budget_seconds, int threads, Progress& progress);

}  // namespace bagel
