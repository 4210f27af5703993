// One-vs-rest models on several threads: the K classes are split into one
// contiguous group per thread (whole blocks of 4 where there are enough:
// class_group_starts(), train_plan.h), and each thread trains its group's
// own weights (features x its classes) over every row of the epoch.
//
// One-vs-rest is K binary problems on the same rows: the gradient of class
// k's output depends on its own logit only, and the kernels compute each
// output lane alike whatever the row width (one multiply-add per lane), so
// the groups together take exactly the steps one thread takes, and the
// merged model is the one-thread model bit for bit, at every thread count
// (tests/test_parallel.cpp). What it costs: every thread reads every row,
// and the weights are copied into the groups once and merged back when the
// caller needs the model (the end; each epoch with a validation set or
// checkpoints). The epoch's shuffled rows are gathered once, by all the
// threads together, into one copy that every group reads in order (when
// it takes at most kMaxEpochCopyBytes; else each group gathers its own
// windows of rows, as one thread does). The divergence watch checks each group's loss against its
// share of the limit (4 log 2 a class), so a restart may come at another
// row than one thread's would.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "bagel/embedding_bag.h"
#include "bagel/model.h"
#include "bagel/parallel_errors.h"
#include "bagel/row_window.h"
#include "bagel/train_plan.h"
#include "train/epoch_loop.h"
#include "train/thread_team.h"

namespace bagel::train {

class ClassShards {
 public:
  // The shared copy's limit: its indices, values, row pointers and labels.
  static constexpr double kMaxEpochCopyBytes = 256.0 * (1 << 20);

  // Groups of the model's outputs for plan.threads threads, holding the
  // model's current weights; `data` (the training set) must outlive this.
  // Epochs share one gathered copy of their rows when it takes at most
  // `max_copy_bytes` (tests lower it to reach the other path).
  ClassShards(const Model& model, const OptimizerConfig& c, const TrainPlan& plan,
              const Dataset& data, double max_copy_bytes = kMaxEpochCopyBytes);

  // Whether the epochs read one shared copy of their rows.
  bool shares_epoch_copy() const { return gathered_; }

  void start_averaging();
  // Resuming: the running sums of averaged SGD, in the model's layout.
  void restore_averaging(std::span<const float> weight_sum, std::span<const double> bias_sum,
                         std::int64_t steps);

  // One epoch over `order`; returns the summed loss. The weights stay in
  // the groups (flushed, as EmbeddingBagLayer::flush leaves them) until
  // write_model: merging them after every epoch read and wrote the whole
  // model each time, for a caller that mostly needs it at the end.
  double run_epoch(std::span<const Index> order, const OptimizerConfig& c, const Schedule& schedule,
                   std::int64_t& step, DivergenceWatch& watch, Progress& progress);
  // EmbeddingBagLayer::skip_unused_rows of every group's layer.
  void skip_unused_rows(Index rows);
  // The groups' weights and biases merged into `model`, on the groups' threads.
  void write_model(Model& model) const;
  // Whether every weight and bias of every group is finite (a diverged run
  // is not), each group checked by its own thread.
  bool weights_finite() const;

  // Averaged SGD: the mean weights, in the model's layout.
  void write_average(std::span<float> weight, std::span<float> bias);
  // Averaged SGD: the running sums in the model's layout (checkpoints).
  void average_sums(std::vector<float>& weight_sum, std::vector<double>& bias_sum,
                    std::int64_t& steps) const;

 private:
  // A cache line apart from the next (alignas, and the bias padded on both
  // sides): the threads write their layer's scalars and their bias at
  // every step, and a shared line would bounce between the cores.
  struct alignas(64) Shard {
    int first = 0;  // its first class
    int k = 0;      // its classes
    std::vector<float> weight;
    std::vector<float> padded_bias;  // kPad floats, the k biases, kPad floats
    std::span<float> bias;
    std::vector<float> mean_weight, mean_bias;  // write_average's scratch
    Dataset data;   // the training rows (a view) with labels relative to `first`
    Dataset epoch;  // the epoch's gathered rows (a view) with the group's labels and weights
    std::optional<EmbeddingBagLayer> layer;
    std::optional<BatchScratch> scratch;  // made by its thread, kept across epochs
    RowWindow window;
  };
  static constexpr std::size_t kPad = 16;

  // The epoch's rows in `order`, gathered by the team's `groups` ranks
  // (each calls it); then each group's labels and weights for them.
  // False when an allocation failed (kept in `errors`).
  bool gather_epoch(std::span<const Index> order, int s, RegionErrors& errors);

  int k_;
  Index features_;
  // One rank a group, the caller's rank 0 (mutable: running work on it
  // changes nothing of the shards', as in write_model()).
  mutable ThreadTeam team_;
  const Dataset* data_;   // the training set
  bool gathered_ = false; // epochs read one shared copy of their rows (epoch_)
  RowWindow epoch_;
  std::vector<Shard> shards_;
};

}  // namespace bagel::train
