// The SGD loop: epochs over a seeded permutation of the rows, mini-batches,
// learning-rate schedule, lazy penalties (in the layer), validation metrics
// per epoch and early stopping on validation log loss.
//
// The loop is a template over the layer (EmbeddingBagLayer, DenseLinearLayer)
// so the per-batch calls are direct; all per-thread scratch (logits,
// gradients) lives in one BatchScratch, so the weights are the only shared
// mutable state: a lock-free multi-threaded loop runs one loop per thread
// over its slice of the permutation, and a deterministic mode reduces
// per-thread gradients in a fixed order.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/progress.h"
#include "bagel/rate_calibration.h"
#include "bagel/train_plan.h"

namespace bagel {

struct EpochRecord {
  int epoch = 0;
  double train_loss = 0;          // mean loss over the epoch, before each update
  double seconds = 0;
  double samples_per_second = 0;
  double learning_rate = 0;       // at the end of the epoch
  std::optional<Metrics> valid;
};

// The most one row's update may move any of that row's logits (the
// training step's clip: train/epoch_loop.h, README §3).
inline constexpr double kMaxLogitStep = 10;

// A run that diverged at `learning_rate` and was restarted at a lower one.
struct RateRestart {
  double learning_rate = 0;
  int epoch = 0;
  std::int64_t rows = 0;        // rows of that epoch seen when it was noticed
  double mean_loss = 0;         // their mean loss then (may be inf or NaN)
  std::int64_t limited_rows = 0;  // of those rows, the ones whose steps had to be clipped
};

struct TrainingSummary {
  std::vector<EpochRecord> history;
  int epochs_run = 0;
  int best_epoch = 0;             // epoch whose weights were kept (last one without early stopping)
  bool stopped_early = false;
  double seconds = 0;             // training (with the rate calibration), not loading
  int epochs = 0;                 // planned (optimizer.epochs, "auto" resolved)
  double learning_rate = 0;       // eta0 of the run that finished
  double bias_rate = 1;           // the biases' rate over learning_rate (OptimizerConfig)
  bool average = false;           // averaged SGD (optimizer.average, "auto" resolved)
  std::optional<RateCalibration> calibration;  // when learning_rate was "auto"
  nlohmann::json calibration_json;             // a resumed run's: the first part's calibration
  int resumed_from_epoch = 0;                  // a resumed run: epochs done before it
  std::vector<RateRestart> restarts;           // divergences, in order
  TrainPlan plan;                              // threads and strategy it ran with
};

nlohmann::json summary_to_json(const TrainingSummary& s);

// The end of a run's "trained N epochs" line: which epoch's weights early
// stopping kept, "" when they are the last epoch's.
std::string kept_epoch_note(const TrainingSummary& s);
nlohmann::json calibration_to_json(const RateCalibration& c);

// Everything a run needs to go on after a completed epoch as if it had never
// stopped: the weights then, where the schedule and the shuffles were (the
// shuffles are replayed from the seed), the resolved rate and epochs, the
// history and the early-stopping state. With one training thread (the
// default) or "exact", a resumed run ends with the model of an unstopped one,
// bit for bit (without l1: its cumulative shrink restarts from 0).
struct TrainingCheckpoint {
  int epoch = 0;                    // epochs completed; 0 = none yet
  std::int64_t step = 0;            // updates done
  double learning_rate = 0;         // eta0 in use ("auto" and restarts resolved)
  double bias_rate = 1;             // the biases' rate over it (OptimizerConfig)
  int epochs = 0;                   // planned ("auto" resolved)
  std::vector<EpochRecord> history;
  std::vector<RateRestart> restarts;
  nlohmann::json calibration;       // summary_to_json's "rate_calibration", or null
  double best_loss = 0;             // early stopping (patience > 0)
  int best_epoch = 0;
  int bad_epochs = 0;
  std::vector<float> best_weight, best_bias;
  std::vector<float> weight, bias;  // after `epoch`
  // Averaged SGD (sparse layer), once it has started: the layer's running
  // sums of the weights and biases and the number of steps they hold.
  bool averaging = false;
  std::vector<float> average_weight_sum;
  std::vector<double> average_bias_sum;
  std::int64_t average_steps = 0;
};

// Why runs of this config cannot be resumed ("" when they can): the
// replicas' momentum and the dense layer's averaged sums live outside the
// weights and are not saved.
std::string resume_unsupported(const OptimizerConfig& config, LayerKind layer, const TrainPlan& plan);

// What train_model resumes from and keeps: `resume` (may be null) is where
// it starts; `latest` (may be null) receives the state after the first
// epoch and then after epochs as often as its cost allows
// (src/train/checkpoint_pace.h), when the config can be resumed at all.
struct Checkpointing {
  const TrainingCheckpoint* resume = nullptr;
  TrainingCheckpoint* latest = nullptr;
};

// Seeded Fisher-Yates with an explicit bounded draw (Lemire), so the order is
// the same on every platform and standard library.
void shuffle_rows(std::vector<Index>& rows, std::mt19937_64& rng);

// Trains `model` (already sized for the classes and features) in place,
// from its current weights. learning_rate 0 ("auto") is calibrated first
// (rate_calibration.h). A run whose loss diverges (not finite, or far above
// log K) is noticed within the epoch, reported by progress.warn() and
// restarted from the starting weights at a tenth of the rate, up to 8 times;
// the weights returned are always finite. progress.request_stop() ends it
// within a few hundred rows with Interrupted (error.h).
TrainingSummary train_model(Model& model, const Dataset& train, const Dataset* valid,
                            const OptimizerConfig& config, LayerKind layer, Progress& progress,
                            Checkpointing checkpoints = {});

// One run at the configured rate (which must be set), as the rate
// calibration's candidates need: no calibration, no restart; a divergence is
// an Error.
TrainingSummary train_fixed_rate(Model& model, const Dataset& train, const Dataset* valid,
                                 const OptimizerConfig& config, LayerKind layer,
                                 Progress& progress);

}  // namespace bagel
