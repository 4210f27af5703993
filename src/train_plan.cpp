#include "bagel/train_plan.h"

#include <algorithm>

#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/model.h"

namespace bagel {

std::string to_string(ParallelStrategy s) {
  switch (s) {
    case ParallelStrategy::kSingle: return "single";
    case ParallelStrategy::kReplicas: return "replicas";
    case ParallelStrategy::kExact: return "exact";
    case ParallelStrategy::kHogwild: return "hogwild";
    case ParallelStrategy::kClassShards: return "classes";
  }
  return "?";
}

ParallelStrategy parallel_strategy(const OptimizerConfig& c) {
  if (!c.deterministic) return ParallelStrategy::kHogwild;
  return c.deterministic_method == DeterministicMethod::kExact ? ParallelStrategy::kExact
                                                               : ParallelStrategy::kReplicas;
}

namespace {

// Four combinations per thread an epoch: with fewer, the copies drift apart
// and the model lags one thread's (measured at 2 and 8 threads, README §3);
// but at least 128 rows per copy and block.
int replica_blocks(int threads, std::int64_t rows) {
  const std::int64_t by_rows = rows / (std::int64_t{128} * threads);
  return static_cast<int>(std::clamp<std::int64_t>(by_rows, 1, 4 * threads));
}

double weight_bytes(const ModelShape& model) {
  return double(model.features) * model.outputs * sizeof(float);
}

// Whether each thread's group of classes (`starts`: class_group_starts())
// takes at most kClassesMaxGroupBytes of weights.
bool class_groups_fit(const ModelShape& model, const std::vector<int>& starts) {
  int widest = 0;
  for (std::size_t g = 0; g + 1 < starts.size(); ++g) widest = std::max(widest, starts[g + 1] - starts[g]);
  return double(model.features) * widest * sizeof(float) <= kClassesMaxGroupBytes;
}

// The loop's threads for threads 0 ("all cores"): the cores when the classes
// split (the model is the one-thread model, bit for bit), at most one per
// block of kClassBlock classes where they make 2 blocks or more; replicas where
// many cores and small weights make them pay (kReplicasMinCores); otherwise
// one thread, while the rate calibration and the metrics use the cores.
int auto_threads(int cores, const OptimizerConfig& c, LayerKind layer, const ModelShape& model,
                 bool classes) {
  if (classes) {
    const int blocks = (model.outputs + kClassBlock - 1) / kClassBlock;
    return blocks >= 2 ? std::min(cores, blocks) : cores;
  }
  const bool replicas_pay = layer == LayerKind::kSparse && cores >= kReplicasMinCores &&
                            parallel_strategy(c) == ParallelStrategy::kReplicas &&
                            weight_bytes(model) <= kReplicasMaxWeightBytes;
  return replicas_pay ? std::min(cores, kReplicasAutoThreads) : 1;
}

}  // namespace

std::vector<int> class_group_starts(int classes, int groups) {
  std::vector<int> starts(static_cast<std::size_t>(groups) + 1);
  const int blocks = (classes + kClassBlock - 1) / kClassBlock;
  bool whole_blocks = groups <= blocks;
  for (int s = 0; s <= groups && whole_blocks; ++s) {
    starts[static_cast<std::size_t>(s)] = std::min(classes, kClassBlock * (blocks * s / groups));
    // A short last block alone (5 classes: 4 + 1) is below kClassesPerThread.
    if (s > 0 && starts[static_cast<std::size_t>(s)] - starts[static_cast<std::size_t>(s) - 1] <
                     std::min(kClassesPerThread, classes / groups))
      whole_blocks = false;
  }
  if (!whole_blocks)
    for (int s = 0; s <= groups; ++s) starts[static_cast<std::size_t>(s)] = classes * s / groups;
  return starts;
}

bool splits_classes(const OptimizerConfig& c, LayerKind layer, const ModelShape& model) {
  return layer == LayerKind::kSparse && model.head == Head::kOneVsRest &&
         model.outputs >= 2 * kClassesPerThread &&
         parallel_strategy(c) == ParallelStrategy::kReplicas;
}

TrainPlan plan_training(const OptimizerConfig& c, LayerKind layer, std::int64_t rows,
                        const ModelShape& model) {
  // The cores are looked up (affinity mask, cgroup quota) only for threads 0.
  return plan_training_on(c.threads > 0 ? c.threads : usable_cores(), c, layer, rows, model);
}

TrainPlan plan_training_on(int usable, const OptimizerConfig& c, LayerKind layer,
                           std::int64_t rows, const ModelShape& model) {
  TrainPlan p;
  p.cores = c.threads > 0 ? c.threads : usable;
  const std::int64_t by_rows = std::max<std::int64_t>(1, rows / kRowsPerThread);
  // The classes split where each thread's group of them fits; else the
  // threads the other strategies would take.
  bool classes = false;
  if (splits_classes(c, layer, model)) {
    const int asked = c.threads == 0 ? auto_threads(p.cores, c, layer, model, true) : c.threads;
    const std::int64_t most = std::min<std::int64_t>(by_rows, model.outputs / kClassesPerThread);
    p.threads = static_cast<int>(std::clamp<std::int64_t>(asked, 1, most));
    p.class_starts = class_group_starts(model.outputs, p.threads);
    // threads 0 splits only where each group fits (else one thread trains
    // faster); an asked-for count splits anyway: the one-thread model, and on
    // weights too large to fit it is faster than replicas, whose combinations
    // then read and write every copy's rows (data/PERFORMANCE.md).
    classes = p.threads > 1 && (c.threads > 0 || class_groups_fit(model, p.class_starts));
  }
  if (!classes) {
    const int asked = c.threads == 0 ? auto_threads(p.cores, c, layer, model, false) : c.threads;
    p.threads = static_cast<int>(std::clamp<std::int64_t>(asked, 1, by_rows));
    p.class_starts.clear();
  }
  // The dense layer runs its GEMMs on the threads (Eigen); its loop is one.
  if (layer == LayerKind::kDense || p.threads == 1) {
    p.strategy = ParallelStrategy::kSingle;
  } else {
    p.strategy = classes ? ParallelStrategy::kClassShards : parallel_strategy(c);
  }
  if (p.strategy == ParallelStrategy::kExact && c.batch_size < kExactMinBatch)
    // Named by the method, which a config sets to "exact" on purpose, where
    // batch_size is usually its default.
    throw ConfigError("optimizer.deterministic_method",
                      "is \"exact\", which splits each batch over the " + std::to_string(p.threads) +
                      " threads and is slower than one thread below batch_size " +
                      std::to_string(kExactMinBatch) + " (batch_size is " +
                      std::to_string(c.batch_size) + "); use \"average\" (the default) or "
                      "batch_size >= " + std::to_string(kExactMinBatch));
  if (p.strategy == ParallelStrategy::kReplicas) {
    p.blocks_per_epoch = replica_blocks(p.threads, rows);
    // L2 decays and L1 shrinks every row, and averaged SGD sums every row:
    // then every row changes in every block.
    p.sparse_sync = c.l2 == 0 && c.l1 == 0 && !c.average;
  }
  p.reorder_features = reorder_pays_off(c, layer, p.threads);
  p.gather_ahead = p.strategy == ParallelStrategy::kSingle && layer == LayerKind::kSparse && p.cores >= 2;
  return p;
}

ModelShape shape_of(const Model& model) {
  return {model.head(), model.num_outputs, model.num_features};
}

ResolvedRun resolve_run(const OptimizerConfig& c, LayerKind layer, std::int64_t rows,
                        std::span<const float> weights, const ModelShape& model) {
  ResolvedRun run{c, {}};
  // "auto" averaging asks whether the loop runs on one thread, which the
  // plan decides (a small set trains on one whatever `threads` asks); the
  // plan then depends on the averaging (sparse_sync).
  if (run.optimizer.average_auto) {
    const TrainPlan unaveraged = plan_training(run.optimizer, layer, rows, model);
    resolve_averaging(run.optimizer, weighted_rows(rows, weights), unaveraged.threads == 1);
  }
  run.plan = plan_training(run.optimizer, layer, rows, model);
  return run;
}

bool reorder_pays_off(const OptimizerConfig& c, LayerKind layer, int threads) {
  if (!c.reorder_features || layer != LayerKind::kSparse) return false;
  return threads <= 1 || parallel_strategy(c) == ParallelStrategy::kReplicas;
}

std::string TrainPlan::describe() const {
  std::string s = std::to_string(threads) + (threads == 1 ? " thread" : " threads");
  if (cores > threads) s += " (" + std::to_string(cores) + " cores for the rate calibration and metrics)";
  switch (strategy) {
    case ParallelStrategy::kSingle:
      if (gather_ahead) s += ", a second copying its rows ahead";
      break;
    case ParallelStrategy::kReplicas:
      s += ", replicas combined " + std::to_string(blocks_per_epoch) + " times an epoch";
      break;
    case ParallelStrategy::kExact: s += ", exact (batches split over the threads)"; break;
    case ParallelStrategy::kHogwild: s += ", hogwild (not deterministic)"; break;
    case ParallelStrategy::kClassShards: {
      s += ", the classes split between them (";
      for (std::size_t g = 0; g + 1 < class_starts.size(); ++g)
        s += (g > 0 ? " + " : "") + std::to_string(class_starts[g + 1] - class_starts[g]);
      s += ")";
      break;
    }
  }
  return s;
}

nlohmann::json TrainPlan::to_json() const {
  return {{"threads", threads}, {"cores", cores}, {"strategy", to_string(strategy)},
          {"blocks_per_epoch", blocks_per_epoch}, {"sparse_sync", sparse_sync},
          {"reorder_features", reorder_features}, {"class_starts", class_starts},
          {"gather_ahead", gather_ahead}};
}

}  // namespace bagel
