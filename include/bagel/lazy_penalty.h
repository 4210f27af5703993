// The lazy L2 and L1 state of a weight matrix (the math is at the top of
// embedding_bag.h): the scale s with true weight = s * stored, the running
// L1 total U with each row's applied part q_j, and the per-thread views that
// lock-free (Hogwild) threads keep between merges. The layer owns the
// weights and the kernels; this owns the scalars and the per-row L1 state,
// and the two operations that apply them to stored rows.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "bagel/csr.h"
#include "bagel/libm_calls.h"
#include "bagel/madd.h"

namespace bagel {

class LazyPenalty {
 public:
  LazyPenalty(Index num_features, int outputs, double l2, double l1);

  double l2() const { return l2_; }
  double l1() const { return l1_; }
  bool has_l1() const { return l1_ > 0; }
  int threads() const { return static_cast<int>(threads_.size()); }
  // Views for `threads` concurrent threads; call after merge().
  void set_threads(int threads);

  // What `thread` sees: the scale, and the L1 total in stored units.
  double scale_of(int thread) const { return scale_ * threads_[thread].view; }
  double l1_of(int thread) const {
    return l1_total_ + static_cast<double>(threads_.size()) * threads_[thread].l1_added;
  }

  // The decay of one step of `thread` at rate eta; returns its new scale.
  double decay(int thread, double eta) {
    ThreadState& t = threads_[thread];
    const double a = detail::madd(1.0, -eta, l2_);  // 1 - eta l2 (madd.h)
    t.decay *= a;
    t.view = threads_.size() == 1 ? t.decay : t.view * libm::pow(a, double(threads_.size()));
    return scale_of(thread);
  }
  // The L1 shrink of one step of `thread` at rate eta, at scale `scale`.
  void add_l1(int thread, double eta, double scale) {
    threads_[thread].l1_added += eta * l1_ / scale;
  }

  // Applies row j's pending L1 (up to `total`) to its stored row.
  void catch_up(float* weight, Index j, double total) {
    const double pending = total - l1_applied_[static_cast<std::size_t>(j)];
    if (pending <= 0) return;
    l1_applied_[static_cast<std::size_t>(j)] = total;
    shrink_row(weight + static_cast<std::size_t>(j) * outputs_, outputs_, pending);
  }
  void catch_up(float* weight, RowView row, double total) {
    for (const Index j : row.indices) catch_up(weight, j, total);
  }

  // Folds every thread's decay and L1 into the shared state. Returns true
  // when the scale got small enough that fold() must run.
  bool merge();
  bool scale_is_small() const { return is_small(scale_); }
  // Below this the stored weights grow as 1/s and lose float range: fold.
  static bool is_small(double scale) { return scale < kMinScale; }
  // Applies the scale and all pending L1 to every stored weight of `weight`
  // (O(F K)); afterwards stored = true weights. Rows past it must be zeros
  // that no step touched (EmbeddingBagLayer::skip_unused_rows).
  void fold(std::span<float> weight);
  // Hands the scale to the caller instead of multiplying it in (see
  // EmbeddingBagLayer::take_scale()): returns it and sets it to 1.
  double release_scale() {
    const double s = scale_;
    scale_ = 1.0;
    return s;
  }

  // Soft-threshold of one weight row by `amount` (stored units), clipped at
  // 0. A Hogwild thread's view may have run ahead of the merged total,
  // leaving a negative amount for a row: that row has nothing pending.
  static void shrink_row(float* e, int k, double amount);

 private:
  static constexpr double kMinScale = 1e-6;

  struct alignas(64) ThreadState {  // own cache line: no false sharing
    double decay = 1.0;     // product of this thread's (1 - eta l2) since the last merge
    double view = 1.0;      // the same with every thread's steps counted
    double l1_added = 0.0;  // L1 shrink added since the last merge, stored units
  };

  int outputs_;
  double l2_;
  double l1_;
  double scale_ = 1.0;              // merged: true weight = scale_ * stored
  double l1_total_ = 0.0;           // merged U, in stored units
  std::vector<ThreadState> threads_;
  std::vector<double> l1_applied_;  // q_j per feature row (only with L1)
};

}  // namespace bagel
