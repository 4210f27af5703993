// How a training run uses the machine, decided once from the config and the
// shape of the data, and used by config validation, feature reordering and
// the trainer alike (so the rules live here only). bagel train prints it in
// its "plan:" line and stores it in model.json.
//
// Strategies (optimizer.threads, deterministic, deterministic_method):
// * single: one thread (threads 1, or data too small to split).
// * replicas (threads > 1 and deterministic, the default method): every thread trains its own
//   copy of the weights on its share of each block of the epoch's rows; at
//   the end of each block (4 per thread an epoch) the copies are combined
//   into one model (train/replicas.h). Deterministic for a seed and thread
//   count; reaches one thread's accuracy (README §3).
// * exact: each mini-batch split over the threads, bit for bit the
//   one-thread model at the same batch size; pays only for large batches.
// * hogwild: lock-free threads on shared weights; not deterministic.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bagel/config.h"

namespace bagel {

enum class ParallelStrategy { kSingle, kReplicas, kExact, kHogwild };

std::string to_string(ParallelStrategy s);

// The strategy the settings ask for when more than one thread runs.
ParallelStrategy parallel_strategy(const OptimizerConfig& c);

// "exact" splits every mini-batch over the threads with three barriers a
// batch; below this batch size the barriers cost more than the split saves
// (README §3), so smaller batches are refused.
inline constexpr int kExactMinBatch = 1024;

// optimizer.threads and predict --threads accept at most this many.
inline constexpr int kMaxThreads = 1024;

// Rows each training thread needs at least: below, splitting costs more than
// it saves, and replica blocks would hold too few rows to combine well.
inline constexpr std::int64_t kRowsPerThread = 1000;

struct TrainPlan {
  int threads = 1;              // the SGD loop's
  int cores = 1;                // the rate calibration's and the metrics'

  ParallelStrategy strategy = ParallelStrategy::kSingle;
  int blocks_per_epoch = 1;     // replicas: times an epoch the copies are combined
  bool sparse_sync = false;     // replicas: combine only the rows some copy changed
  bool reorder_features = false;  // number features by frequency first (feature_order.h)

  // "2 threads, replicas combined 8 times an epoch" (for the plan line).
  std::string describe() const;
  nlohmann::json to_json() const;
};

// Whether training on `threads` threads runs faster on features numbered by
// frequency (feature_order.h): with the sparse layer, when each weight row is
// written by one thread only (one thread, or replicas). Hogwild and "exact"
// threads write the same weights, and packing the head into a few cache
// lines measured slower there (README §9).
bool reorder_pays_off(const OptimizerConfig& c, LayerKind layer, int threads);

// cores: optimizer.threads resolved (0 = usable_cores()). threads: 1 for
// threads 0 (the loop does not gain from replicas yet: README §3), else
// optimizer.threads, at most one per kRowsPerThread rows. Throws ConfigError (optimizer.batch_size) for
// "exact" below kExactMinBatch.
TrainPlan plan_training(const OptimizerConfig& c, LayerKind layer, std::int64_t rows);

}  // namespace bagel
