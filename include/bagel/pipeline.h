// The training pipeline that `bagel train` and the Python estimator share:
// number the features by frequency when that pays off, train, evaluate on
// the train (TrainConfig::train_metrics) and valid splits, give the model its feature numbers back and
// record the run in model.training. Callers only load (or wrap) the data
// and print.
#pragma once

#include <optional>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/progress.h"
#include "bagel/train_plan.h"
#include "bagel/trainer.h"

namespace bagel {

struct TrainResult {
  Model model;                      // config and training summary filled in
  TrainingSummary summary;          // seconds include the feature relabelling
  std::optional<Metrics> train_metrics;  // when config.train_metrics
  std::optional<Metrics> valid_metrics;
};

// Trains a new model on `data`. The data is taken by value because the
// relabelling rewrites its indices (a borrowed array is copied first, never
// written): a caller keeping it would hold renumbered features.
//
// `checkpoints` (trainer.h): `resume`, when it holds a completed epoch, is
// where training goes on from (its weights, in the data's feature numbers,
// replace the zeros); `latest` receives the state after each completed
// epoch, its weights in the data's feature numbers once train() has thrown
// Interrupted (what a caller saves to resume from).
TrainResult train(const TrainConfig& config, TrainingData data, Progress& progress,
                  Checkpointing checkpoints = {});

// The same, from `start`'s weights rather than zeros (more data for a model
// already trained: scikit-learn's partial_fit). `start` must have data's
// classes and at least as many features as data's columns; ConfigError
// otherwise.
TrainResult train(Model start, const TrainConfig& config, TrainingData data, Progress& progress,
                  Checkpointing checkpoints = {});

// The columns a new model needs: the wider of the train and valid splits.
Index widest_split(const TrainingData& data);

// What train() will train on `data`: `start`'s head, outputs and features
// when it starts from a model, else a new model's for data's classes and
// the widest split (what train(config, data) builds), and how: the run's
// resolved settings and plan (train_plan.h).
ResolvedRun resolve_training(const TrainConfig& config, const TrainingData& data,
                             const Model* start = nullptr);

// A warm start (config "init"): checks that split `d`, read from `source`,
// fits `start`, the model loaded from `start_dir`, before any training. An
// .npz must have exactly the model's columns (another width means another
// vocabulary, whose columns mean other words); svmlight may have fewer.
// FileError naming both sizes and the model's folder otherwise.
void check_warm_start(const Model& start, const std::string& start_dir, const Dataset& d,
                      const std::string& source);

// A warm start from a model trained on text reads the new text with that
// model's vectorizer (its vocabulary: each column keeps its word), whatever
// the config's "vectorizer" section says. So a key of that section whose
// value differs from the model's vectorizer is a ConfigError naming it
// (vectorizer.KEY), checked before any data is read; keys that match, or no
// section, are fine. model.json records the vectorizer used (train()).
void check_init_vectorizer(const TrainConfig& config, const Model& start, const std::string& start_dir);

}  // namespace bagel
