// How a training run uses the machine, decided once from the config and the
// shape of the data, and used by config validation, feature reordering and
// the trainer alike (so the rules live here only). bagel train prints it in
// its "plan:" line and stores it in model.json.
//
// Strategies (optimizer.threads, deterministic, deterministic_method, and
// the model's head):
// * single: one thread (threads 1, or data too small to split).
// * classes (one-vs-rest with at least 2 classes a thread, deterministic
//   with the default method; with threads 0, only where each thread's
//   classes' weights fit kClassesMaxGroupBytes): each thread trains its own group
//   of the classes over every row; the one-thread model bit for bit, at any
//   thread count (train/class_shards.h).
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
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/config.h"
#include "bagel/loss.h"

namespace bagel {

enum class ParallelStrategy { kSingle, kReplicas, kExact, kHogwild, kClassShards };

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

// Classes each thread of the "classes" strategy trains at least: one class
// a thread would pay a whole pass over the rows for one output.
inline constexpr int kClassesPerThread = 2;

// The "classes" strategy's groups are whole blocks of kClassBlock classes
// where the classes make at least as many blocks as there are threads: the
// kernels do a group of 4 classes in one 4-float multiply-add a non-zero,
// of 2 in two scalar ones, of 10 in an 8-float and two scalar ones (the
// same count as 20: 8 + 8 + 4). threads 0 splits a model of at least 2
// blocks over at most one thread a block. On a 16-core Xeon (data/PERFORMANCE.md) the
// 20-class sets' loop ran 1.46-2.15x one thread's at 5 threads of 4
// classes, against 1.15-1.71x at 7-10 threads of 2 or 3.
inline constexpr int kClassBlock = 4;

// Where each of `groups` threads' classes start, then `classes`: whole
// blocks spread evenly (20 classes: 8 + 12 on 2 threads, 4 each on 5) when
// there are at least `groups` blocks, else an even split (2 each on 10).
std::vector<int> class_group_starts(int classes, int groups);

// threads 0 splits the classes only where each thread's group takes at most
// this much of the weights: every thread walks every row, and what it gains
// is a smaller share of the weights to keep in its caches. On a 16-core Xeon
// (data/PERFORMANCE.md) 2^20 features x 20 classes trained 1.44x faster in
// 5 groups of 4 classes (16 MiB each) and 10 of 2, and 0.68-0.90x and
// 0.98-1.10x in 2 (8 + 12 classes: 48 MiB) and 4 (the widest 32 MiB), where
// an asked-for thread count still splits them (replicas of those 80 MiB ran
// 0.50-0.62x); man-section's 6
// classes (4 + 2: 4 MiB) 1.09-1.35x there, and on 2 cores 1.13x as fast as
// on one thread's loop with the calibration on both cores.
inline constexpr double kClassesMaxGroupBytes = 16.0 * (1 << 20);

// threads 0 trains a model whose classes do not split on replicas when the
// process has at least kReplicasMinCores cores and the weights take at most
// kReplicasMaxWeightBytes, on at most kReplicasAutoThreads of them. On a
// 16-core Xeon (data/PERFORMANCE.md) replicas at 8 threads ran the loop 1.5-2.3x one
// thread's on the binary sets (0.04-4 MiB of weights) at one thread's
// accuracy (within 0.3 points), and at 16 no faster than at 8 (the
// combinations grow with the threads). On man-section (6 classes, 6 MiB:
// every combined row is 6 values in each copy) 0.84-1.16x in five device
// sessions (it splits its classes instead); at 84 MB (2^20 features x 20
// classes) they were slower than one thread at every count. On 2 cores
// they cost about what the second core saves.
inline constexpr int kReplicasMinCores = 8;
inline constexpr int kReplicasAutoThreads = 8;
inline constexpr double kReplicasMaxWeightBytes = 4.0 * (1 << 20);

// What the plan needs to know of the model that trains.
struct ModelShape {
  Head head = Head::kSigmoid;
  int outputs = 1;
  std::int64_t features = 0;
};

struct Model;
ModelShape shape_of(const Model& model);

struct TrainPlan {
  int threads = 1;              // the SGD loop's
  int cores = 1;                // the rate calibration's and the metrics'

  ParallelStrategy strategy = ParallelStrategy::kSingle;
  int blocks_per_epoch = 1;     // replicas: times an epoch the copies are combined
  bool sparse_sync = false;     // replicas: combine only the rows some copy changed
  bool reorder_features = false;  // number features by frequency first (feature_order.h)
  std::vector<int> class_starts;  // classes: where each thread's classes start, then the count
  // One loop thread with a core to spare (sparse layer): a second thread
  // copies the next window of shuffled rows while the loop trains on one
  // (for_each_window, train/epoch_loop.h).
  bool gather_ahead = false;

  // "2 threads, replicas combined 8 times an epoch" (for the plan line).
  std::string describe() const;
  nlohmann::json to_json() const;
};

// Whether training on `threads` threads runs faster on features numbered by
// frequency (feature_order.h): with the sparse layer, when each weight row is
// written by one thread only: one thread, or the deterministic method
// "average", whose plan is replicas or split classes (each thread owns its
// copy, or its classes' columns). Hogwild and "exact" threads write the same
// weights, and packing the head into a few cache lines measured slower there
// (data/PERFORMANCE.md).
bool reorder_pays_off(const OptimizerConfig& c, LayerKind layer, int threads);

// Whether this model's classes could be split between threads ("classes"
// above); with threads 0 the plan splits them where, at its thread count,
// each thread's group also fits kClassesMaxGroupBytes.
bool splits_classes(const OptimizerConfig& c, LayerKind layer, const ModelShape& model);

// The settings a run trains with ("auto" averaging decided for its rows of
// weight above 0, `weights` the rows' weights or empty: resolve_averaging,
// config.h) and its plan (for all `rows`: each costs its time). resolve_run() is the one place
// both are derived: the pipeline asks it whether to number features by
// frequency, the CLI whether the run can be resumed, the trainer how to
// train; each gets the same answer.
struct ResolvedRun {
  OptimizerConfig optimizer;
  TrainPlan plan;
};
ResolvedRun resolve_run(const OptimizerConfig& c, LayerKind layer, std::int64_t rows,
                        std::span<const float> weights, const ModelShape& model);

// cores: optimizer.threads resolved (0 = usable_cores()). threads: for
// threads 0, the cores when the classes can be split (one-vs-rest), else
// replicas on up to kReplicasAutoThreads threads where the cores and the
// weights allow (above), else 1; else optimizer.threads; at most one per
// kRowsPerThread rows, and with split classes at most one per
// kClassesPerThread outputs. Throws ConfigError (optimizer.batch_size) for
// "exact" below kExactMinBatch.
TrainPlan plan_training(const OptimizerConfig& c, LayerKind layer, std::int64_t rows,
                        const ModelShape& model = {});
// The same on a machine where this process may use `usable` cores (what
// threads 0 means; plan_training asks usable_cores()).
TrainPlan plan_training_on(int usable, const OptimizerConfig& c, LayerKind layer,
                           std::int64_t rows, const ModelShape& model = {});

}  // namespace bagel
