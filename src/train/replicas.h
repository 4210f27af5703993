// Synchronised replicas: the default way bagel trains on several threads.
//
// Each thread trains its own copy of the weights (no weight is shared while
// training, so threads neither race nor wait) on its share of each block of
// the epoch's permutation; at the end of each block the copies are combined
// into one model, which starts the next block everywhere. The same seed and
// thread count give the same model.
//
// Combining. Plain averaging (iterative parameter mixing, Mann et al. 2009)
// moves the model about 1/T as far per row as one thread does: a row of E
// that one copy trained and the T - 1 others did not is divided by T. So,
// per weight row j:
//   * the change is the mean over the n_j copies that changed row j in the
//     block (a row one copy alone trained keeps its whole update, as with one
//     thread), and
//   * block momentum (BMUF, Chen & Huo 2016) with mu = 1 - 1/n_j:
//     v_j <- mu^(blocks since v_j last moved) v_j + mean change, E_j += v_j,
//     which, for a row every copy trains in every block, adds up over blocks
//     to the sum of the copies' changes, as T threads taking turns would.
// Without L2, L1 or averaged SGD only the rows some copy touched can change,
// so the combination visits just those (each copy logs its rows, bucketed by
// the thread that combines them); otherwise every row, every block.
// With 4 blocks per thread and epoch, measured within 0.33 points of one
// thread's test accuracy on README §9's sets at 2 threads and 0.47 at 8; but
// slower than one thread on every one of them (README §9).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bagel/model.h"
#include "bagel/train_plan.h"
#include "train/epoch_loop.h"

namespace bagel::train {

// The weight rows one copy changed in the current block, each once, in
// buckets by the thread that combines them (row j: bucket j % owners).
class TouchLog {
 public:
  TouchLog(Index features, int owners);
  void record(const CsrMatrix& x, std::span<const Index> rows) {
    for (const Index r : rows)
      for (const Index j : x.row(r).indices) {
        std::uint32_t& s = stamp_[static_cast<std::size_t>(j)];
        if (s == block_) continue;
        s = block_;
        buckets_[static_cast<std::size_t>(j % owners_)].push_back(j);
      }
  }
  std::span<const Index> rows_of(int owner) const { return buckets_[static_cast<std::size_t>(owner)]; }
  void sort();  // each bucket by row
  void next_block();

 private:
  std::vector<std::uint32_t> stamp_;  // the block in which each row was last logged
  std::uint32_t block_ = 1;
  std::vector<std::vector<Index>> buckets_;
  int owners_;
};

class Replicas {
 public:
  // Copies for ranks 1..threads-1 (rank 0 trains on the model's arrays).
  Replicas(const Model& model, const OptimizerConfig& c, const TrainPlan& plan);

  // Averaged SGD from the next step on, in every copy but rank 0's (whose
  // layer the trainer starts).
  void start_averaging();
  // Averaged SGD: the mean of every copy's steps' weights, all copies pooled,
  // into `weight` and `bias` (which may be layer0's own). After run_epoch.
  void write_average(const EmbeddingBagLayer& layer0, std::span<float> weight,
                     std::span<float> bias) const;

  // One epoch over `order`; returns the summed loss. Leaves the combined
  // model in `model` (layer0's arrays).
  double run_epoch(EmbeddingBagLayer& layer0, Model& model, const Dataset& data,
                   std::span<const Index> order, const OptimizerConfig& c,
                   const Schedule& schedule, std::int64_t& step, DivergenceWatch& watch,
                   Progress& progress);

 private:
  // The arrays of copy r (0: the model's).
  float* weight_of(Model& model, int r);
  float* bias_of(Model& model, int r);
  void combine_row(Model& model, std::size_t j, std::span<const float> scales, bool sparse);
  void combine_bias(Model& model);
  void copy_model(Model& model, int rank);

  int threads_;
  int blocks_;
  bool sparse_;
  int k_;
  std::vector<std::vector<float>> weight_, bias_;  // copies 1..T-1
  std::vector<EmbeddingBagLayer> layers_;
  std::vector<TouchLog> logs_;                     // one per copy (sparse only)
  std::vector<float> ones_;                        // the biases' scales (they have none)
  std::vector<float> base_weight_, base_bias_;     // the model at the last combination
  std::vector<float> velocity_weight_, velocity_bias_;
  std::vector<std::uint32_t> moved_weight_;        // block in which each row's velocity last moved
  std::uint32_t moved_bias_ = 0;
  std::uint32_t block_ = 1;                        // blocks so far, from 1
  bool copies_current_ = false;                    // the copies hold the model
};

}  // namespace bagel::train
