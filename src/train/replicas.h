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
// so the combination visits just those (each copy marks its rows in a
// bitset; thread t combines every T-th run of 1024 rows); otherwise every
// row, every block.
// With 4 blocks per thread and epoch, measured within 0.33 points of one
// thread's test accuracy on the sets of data/PERFORMANCE.md at 2 threads and 0.47 at 8
// (2 blocks a thread lost up to 0.5 at 4 threads). The combination reads
// and writes T + 2 arrays for every row a block touched: on 2^20 features
// that is as much memory traffic as the steps, and the loop on 2 threads
// ran 0.66-1.29x one thread's (data/PERFORMANCE.md).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "bagel/model.h"
#include "bagel/train_plan.h"
#include "train/epoch_loop.h"
#include "train/thread_team.h"
#include "train/touch_log.h"

namespace bagel::train {

// (1 - 1/n)^age, the block momentum's decay, looked up for the ages a row
// usually has (std::pow on every combined row costs a fifth of the
// combination); the same values std::pow gives. n is the number of copies
// that changed a row, 1..copies.
class MomentumDecay {
 public:
  explicit MomentumDecay(int copies);
  float operator()(int n, std::uint32_t age) const {
    if (n <= 1) return 0.0f;
    if (age < kAges) return table_[static_cast<std::size_t>(n) * kAges + age];
    return std::pow(1.0f - 1.0f / static_cast<float>(n), static_cast<float>(age));
  }
  // 1/n, the mean's factor (a division a row costs a fifth of the combination).
  float inverse(int n) const { return inverse_[static_cast<std::size_t>(n)]; }

 private:
  static constexpr std::uint32_t kAges = 64;
  std::vector<float> table_;
  std::vector<float> inverse_;
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
  // This rank's share of the combination at the end of a block (replicas.cpp).
  void combine(Model& model, int rank, std::span<const float> scales);
  void copy_model(Model& model, int rank);

  int threads_;
  int blocks_;
  bool sparse_;
  int k_;
  std::vector<std::vector<float>> weight_, bias_;  // copies 1..T-1
  std::vector<EmbeddingBagLayer> layers_;
  std::vector<TouchLog> logs_;                     // one per copy (sparse only)
  MomentumDecay decay_;
  std::vector<float> ones_;                        // the biases' scales (they have none)
  std::vector<float> base_weight_, base_bias_;     // the model at the last combination
  std::vector<float> velocity_weight_, velocity_bias_;
  std::vector<std::uint32_t> moved_weight_;        // block in which each row's velocity last moved
  std::uint32_t moved_bias_ = 0;
  std::uint32_t block_ = 1;                        // blocks so far, from 1
  bool copies_current_ = false;                    // the copies hold the model
  ThreadTeam team_;                                // rank r trains copy r (0: the model's)
};

}  // namespace bagel::train
