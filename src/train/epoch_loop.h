// The pieces every training strategy shares (internal to the trainer): the
// per-thread batch scratch, row windows, the step clock, the divergence
// watch and run_epoch(), the loop over one slice of the epoch's rows that
// each strategy runs on its thread(s). Strategies: run_epoch_single() here,
// run_epoch_hogwild() and run_epoch_exact() below (one file each), and the
// replicas in replicas.h.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <type_traits>
#include <vector>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/embedding_bag.h"
#include "bagel/loss.h"
#include "bagel/parallel_errors.h"
#include "bagel/progress.h"
#include "bagel/row_window.h"
#include "bagel/schedule.h"
#include "bagel/trainer.h"
#include "train/thread_team.h"
#include "train/touch_log.h"
#include "train/window_relay.h"

namespace bagel::train {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Without an early exit, so that the loop vectorises: it reads every weight
// after every epoch, and all of them are finite but in a diverged run.
inline bool all_finite(std::span<const float> values) {
  constexpr float kMax = std::numeric_limits<float>::max();
  unsigned bad = 0;
  for (const float v : values) bad |= !(std::abs(v) <= kMax);  // NaN compares false
  return bad == 0;
}

// Per-thread scratch for one mini-batch.
struct BatchScratch {
  std::vector<float> logits;
  std::vector<float> grads;
  Head head;  // the model's: how the logits give the loss and its gradient
  BatchScratch(int batch_size, int outputs, Head model_head)
      : logits(static_cast<std::size_t>(batch_size) * outputs),
        grads(static_cast<std::size_t>(batch_size) * outputs),
        head(model_head) {}
};

// Shuffled rows are random accesses into the CSR arrays and the labels, each
// a cache and TLB miss. Training runs over RowWindows (rows copied in order
// first); batches too big to copy read the rows in place, requested in stages
// so that each stage's addresses are already cached when it runs: 8 batches
// ahead the row pointers and labels, 4 batches ahead the rows' index and
// value arrays (the layer asks for the weight rows 1 batch ahead). Always
// inlined: see prefetch_row_data() in csr.h.
[[gnu::always_inline]] inline void prefetch_ahead(const CsrMatrix& x, std::span<const std::int32_t> y,
                           std::span<const Index> rows, std::size_t next, int batch_size) {
  const std::size_t n = rows.size();
  const std::size_t far = next + 7 * static_cast<std::size_t>(batch_size);
  for (std::size_t i = far; i < std::min(n, far + batch_size); ++i) {
    __builtin_prefetch(x.indptr().data() + rows[i], 0, 3);
    __builtin_prefetch(y.data() + rows[i], 0, 3);
  }
  const std::size_t mid = next + 3 * static_cast<std::size_t>(batch_size);
  for (std::size_t i = mid; i < std::min(n, mid + batch_size); ++i)
    prefetch_row_data(x.row(rows[i]));
}

// Rows per RowWindow: whole batches, at least 256 rows (~150 KB at 75
// non-zeros a row, so that a window of small batches stays in L2). A batch
// whose copy would exceed 16 MiB (full-batch descent on a big matrix, say)
// reads its rows in place instead.
inline constexpr std::size_t kWindowRows = 256;
inline constexpr std::size_t kTeamWindowRows = 2048;
inline constexpr std::size_t kAheadWindowRows = 2048;
inline constexpr double kMaxWindowBytes = 16.0 * (1 << 20);

inline bool use_windows(const CsrMatrix& x, std::size_t batch) {
  const double row_bytes =
      x.rows() > 0 ? double(x.nonZeros()) / double(x.rows()) * (sizeof(Index) + sizeof(float)) : 0;
  return double(batch) * (row_bytes + sizeof(Index)) <= kMaxWindowBytes;
}

// The helper of a one-thread loop that copies its rows ahead
// (plan.gather_ahead): the second window, which the helper fills while the
// loop trains on the first, and the team of the two threads, kept for the
// whole training (an OpenMP region an epoch left its pool spinning between
// epochs, on a core another process may need: thread_team.h).
struct CopyAhead {
  RowWindow window;
  ThreadTeam team{2};
};

// The rows `order` of `data` copied into `window` by every rank of `team`
// together (each calls it with its rank; RowWindow's protocol, row_window.h):
// rank 0 sizes and finishes the copy, each rank counts and copies its part.
// Every rank reads failed() only after a barrier, so all return the same:
// false when an allocation failed (kept in `errors`).
inline bool gather_together(RowWindow& window, const Dataset& data, std::span<const Index> order,
                            int rank, ThreadTeam& team, RegionErrors& errors) {
  const int ranks = team.size();
  if (rank == 0) errors.run([&] { window.begin(order.size(), ranks); });
  team.barrier();
  if (errors.failed()) return false;
  window.count_part(data.x, data.y, order, rank, ranks);
  team.barrier();
  if (rank == 0) errors.run([&] { window.allocate(); });
  team.barrier();
  if (errors.failed()) return false;
  window.copy_part(data.x, order, rank, ranks);
  team.barrier();
  if (rank == 0) errors.run([&] { window.finish(data.x.cols()); });
  team.barrier();
  return !errors.failed();
}

// for_each_window()'s passes over windows of `rows` rows (a multiple of the
// batch). In the first, the calling thread copies each window before body
// trains on it; in the second, a helper thread copies the next window into
// `ahead` meanwhile (the hand-over: window_relay.h).
template <class Body>
void for_each_window_copied(const Dataset& data, std::span<const Index> order, std::size_t rows,
                            RowWindow& window, Body& body) {
  for (std::size_t w0 = 0; w0 < order.size(); w0 += rows) {
    window.gather(data.x, data.y, order.subspan(w0, std::min(rows, order.size() - w0)));
    if (!body(window.matrix(), window.labels(), window.local_rows(), w0, false)) return;
  }
}

template <class Body>
void for_each_window_ahead(const Dataset& data, std::span<const Index> order, std::size_t rows,
                           RowWindow& window, CopyAhead& ahead, Body& body) {
  auto gather = [&](RowWindow& into, int w) {
    const std::size_t w0 = static_cast<std::size_t>(w) * rows;
    into.gather(data.x, data.y, order.subspan(w0, std::min(rows, order.size() - w0)));
  };
  RowWindow* buffers[2] = {&window, &ahead.window};
  const auto windows = static_cast<int>((order.size() + rows - 1) / rows);
  gather(window, 0);
  WindowRelay relay(windows);
  RegionErrors errors;
  ahead.team.run([&](int rank) {
    if (rank == 0) {
      for (int w = 0; w < windows; ++w) {
        RowWindow& now = *buffers[w % 2];
        errors.run([&] {
          if (relay.loop_claims(w)) {
            gather(now, w);
            relay.copied(w);
          }
        });
        if (errors.failed() || relay.stopped()) break;
        relay.loop_starts(w);
        bool more = false;
        errors.run([&] {
          more = body(now.matrix(), now.labels(), now.local_rows(), static_cast<std::size_t>(w) * rows, false);
        });
        if (!more || errors.failed()) break;
      }
      relay.stop();
    } else {
      for (int v; (v = relay.helper_claims()) >= 0;) {
        errors.run([&] { gather(*buffers[v % 2], v); });
        if (errors.failed()) {
          relay.stop();
          break;
        }
        relay.copied(v);
      }
    }
  });
  errors.rethrow();
}

// Calls body(x, y, rows, offset, in_place) over `order` in windows (rows[i]
// indexes x and y; offset is the position of rows[0] in `order`), or once
// over the data itself (in_place) when a batch is too big to copy or the
// rows are already in training order (`in_order`: a copy gathered for the
// epoch), until body returns false.
//
// With `ahead` (CopyAhead), the copying moves to a second thread: while
// body trains on one window, the helper fills the other with the next rows.
// The copy was about a fifth of a one-thread epoch on gen-binary; the rows
// and their order are the same, so the model is too. Windows are then
// kAheadWindowRows rows, so that the hand-over is rare next to the work
// between two.
template <class Body>
void for_each_window(const Dataset& data, std::span<const Index> order, int batch_size,
                     RowWindow& window, Body&& body, bool in_order = false,
                     CopyAhead* ahead = nullptr) {
  const auto batch = static_cast<std::size_t>(batch_size);
  if (in_order || !use_windows(data.x, batch)) {
    body(data.x, std::span<const std::int32_t>(data.y), order, std::size_t{0}, true);
    return;
  }
  const std::size_t per = ahead != nullptr ? kAheadWindowRows : kWindowRows;
  const std::size_t rows = batch * std::max<std::size_t>(1, per / batch);
  if (ahead != nullptr && order.size() > rows)
    for_each_window_ahead(data, order, rows, window, *ahead, body);
  else
    for_each_window_copied(data, order, rows, window, body);
}

// Numbers the updates of one thread of a team that takes turns: its i-th
// update is global step base + i * threads + rank + 1 (for the schedule).
struct StepClock {
  std::int64_t base = 0;
  int threads = 1;
  int rank = 0;
  std::int64_t taken = 0;  // updates so far
  std::int64_t next() { return base + (taken++) * threads + rank + 1; }
};

// kMaxLogitStep (trainer.h): the most a row's own update may move any of
// its logits. A step of rate eta on a batch of B rows moves output i of a
// row it learns from by (eta / B) (|x|^2 + r) g_i, r for the bias (its rate
// over the weights', OptimizerConfig::bias_rate; 1 but for small rows): with
// the rate set for the typical row, a row whose |x|^2 is thousands of times
// larger (a whole changelog among its entries: 3.6 million against a median
// of 25 on changelog-era, data/PERFORMANCE.md) would move by thousands, and, through
// the features it shares with the others, pull every other row's logits
// far off. Beyond a logit change of 10 (odds of 22,000 to 1) a step teaches
// the row nothing more, so g_i is clipped to keep it at 10. Rows of the
// usual scale never reach the limit at the rates that suit them; a rate
// too large for most rows does, which DivergenceWatch treats as divergence.
// The clip acts per output, on the gradient before the layer's step, so
// the dense and sparse layers apply it alike and a one-vs-rest model's
// classes stay independent (train/class_shards.h); and before the row's
// weight, so that a row of weight w still counts w times.

// Clips grad[0..k) so that the row's own update moves each logit at most
// kMaxLogitStep; `reach` is eta / B, the logit change per unit gradient
// and unit (|x|^2 + bias_rate). True when any output was clipped.
inline bool limit_logit_step(float* grad, Width auto k, RowView row, double reach,
                             double bias_rate) {
  const double per_unit = reach * (double(squared_norm(row)) + bias_rate);
  if (!(per_unit > 0)) return false;
  const auto limit = static_cast<float>(kMaxLogitStep / per_unit);
  // Branch-free, so that the loop vectorises: a clamp is copysign(limit, g)
  // where |g| > limit and g elsewhere (NaN included).
  unsigned limited = 0;
  for (int i = 0; i < k; ++i) {
    const float g = grad[i];
    limited |= std::abs(g) > limit;
    grad[i] = std::min(std::max(g, -limit), limit);
  }
  return limited != 0;
}

// A clipped step counts towards DivergenceWatch's share of clipped rows only
// where the row takes it: a row of weight 0 (of `weights`, the training
// set's; `row` its number there) moves nothing, whatever the rate.
inline bool counts_as_clipped(bool clipped, std::span<const float> weights, Index row) {
  return clipped && (weights.empty() || weights[static_cast<std::size_t>(row)] > 0);
}

// Divergence: a running mean loss that is not finite, or far above the loss
// at zero weights, where training starts (log K for softmax, K log 2 for
// one-vs-rest: loss_at_zero()). A rate that is too large for the scale of the rows makes the
// logits swing by hundreds, and the mean loss with them (35 seen on count
// data at rate 0.1), so the watch trips within the first thousand rows
// instead of after a useless epoch. Row weights scale the losses, so the
// limit is times their mean. With limit_logit_step() the logits no longer
// swing, so a rate too large shows instead as most rows' steps clipped: more
// than half of them trips the watch too. "optimal" sets its own rates, so no
// restart can help it: there only non-finite losses count. Shared by the
// threads of one epoch: the first one to trip it stops them all at their
// next check.
class DivergenceWatch {
 public:
  // `progress`, when given, is polled for a stop request at each check.
  // `counted_share`: the share of the rows that take steps (weight above 0,
  // counts_as_clipped), against which the clipped ones are counted.
  explicit DivergenceWatch(double limit, const Progress* progress = nullptr, double counted_share = 1)
      : limit_(limit), progress_(progress), counted_share_(counted_share) {}
  static double counted_share_of(const Dataset& d) {
    if (d.weight.empty() || d.x.rows() == 0) return 1;
    return double(weighted_rows(d.x.rows(), d.weight)) / double(d.x.rows());
  }
  static double limit_for(Head head, int classes, const Dataset& d, ScheduleKind schedule) {
    if (schedule == ScheduleKind::kOptimal) return std::numeric_limits<double>::infinity();
    double mean_weight = 1;
    if (!d.weight.empty())
      mean_weight = std::accumulate(d.weight.begin(), d.weight.end(), 0.0) / double(d.weight.size());
    return 4.0 * loss_at_zero(head, classes) * mean_weight;
  }
  // A running mean over `rows` rows, of which `limited` had their steps
  // clipped; false once any thread has tripped it or a stop was requested.
  // `whole` marks the mean of a whole epoch, which counts however few rows.
  bool ok(std::int64_t rows, double mean_loss, std::int64_t limited, bool whole = false) {
    if (progress_ != nullptr && progress_->stop_requested()) {
      stopped_.store(true, std::memory_order_relaxed);
      return false;
    }
    const bool enough = whole || rows >= kMinRows;
    const double counted = double(rows) * counted_share_;  // of them, rows that take steps
    // A high mean loss counts only with some rows clipped: a rate too large
    // clips many, where one row thousands of times longer than the rest,
    // and labelled against its words (a whole language's text under
    // another's label), can raise the mean past the limit alone while
    // training goes well (its own step is clipped); restarting at a tenth
    // of the rate, four times over, then cost 20 points of accuracy.
    if (!std::isfinite(mean_loss) || (enough && mean_loss > limit_ && kMinClippedShare * limited > counted) ||
        (enough && limit_ < std::numeric_limits<double>::infinity() && 2 * limited > counted)) {
      bool expected = false;
      if (tripped_.compare_exchange_strong(expected, true))
        rows_ = rows, loss_ = mean_loss, limited_ = limited;
    }
    return !halted();
  }
  // Diverged, or stopped: every thread leaves the epoch at its next check.
  bool halted() const { return tripped() || stopped(); }
  bool tripped() const { return tripped_.load(std::memory_order_relaxed); }
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  double limit() const { return limit_; }
  double counted_share() const { return counted_share_; }
  std::int64_t rows() const { return rows_; }
  double loss() const { return loss_; }
  std::int64_t limited() const { return limited_; }

 private:
  static constexpr std::int64_t kMinRows = 256;  // fewer rows: a mean of noise
  static constexpr std::int64_t kMinClippedShare = 16;  // 1 in 16
  const double limit_;
  const Progress* progress_;
  const double counted_share_;
  std::atomic<bool> tripped_{false};
  std::atomic<bool> stopped_{false};
  std::int64_t rows_ = 0;
  double loss_ = 0;
  std::int64_t limited_ = 0;
};

// Thrown (outside any parallel region) when a watch tripped.
struct Diverged {
  int epoch;
  std::int64_t rows;
  double loss;
  std::int64_t limited;  // of `rows`, those whose steps limit_logit_step() clipped
};

// Row weights (Dataset::weight): the row's gradient and loss times w. A
// branch per row, not per non-zero; unweighted data has no weights at all.
// Adds the row's loss to `loss_sum` (with one rounding: madd.h).
inline void weigh_row(double loss, float* grad, Width auto k, std::span<const float> weights,
                      Index row, LossSum& loss_sum) {
  if (weights.empty()) {
    loss_sum.add(loss);
    return;
  }
  const float w = weights[static_cast<std::size_t>(row)];
  for (int i = 0; i < k; ++i) grad[i] *= w;
  loss_sum.add_weighted(loss, double(w));
}

// The row's loss and gradient: unweighted, its log term is left in `sum`
// (LossSum); a weighted row's loss is its own, times its weight.
inline double row_loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k,
                                Head head, bool weighted, LossSum& sum) {
  return weighted ? head_loss_and_grad(z, y, grad, k, head) : head_loss_and_grad(z, y, grad, k, head, sum);
}

// A running report (and divergence check) every this many batches.
inline constexpr std::size_t kReportBatches = 256;

// Batch-1 training of a sparse layer with at most detail::kMaxFixedOutputs
// outputs (row_steps.cpp): run_epoch()'s loop body for one row, compiled
// once per output count, so that the forward sum, the head, the step limit
// and the update run at a constant width (row_width.h) with the kernels
// called directly. The same float operations as the general loop, row for
// row: the model is the same bit for bit (tests/test_row_steps.cpp), in
// less time (data/PERFORMANCE.md).
struct RowPass {
  EmbeddingBagLayer& layer;
  const CsrMatrix& x;
  std::span<const std::int32_t> y;
  std::span<const Index> rows;      // rows of x (and y), in training order
  std::span<const Index> original;  // rows[i] is the training set's row original[i]
  std::span<const float> weights;   // the training set's row weights (empty: none)
  bool scattered;                   // rows read where they lie, out of order: prefetch them ahead
  TouchLog* touched;                // records each step's rows (null: none)
  const Schedule& schedule;
  StepClock& clock;
  BatchScratch& scratch;
  int thread;
};
inline bool has_row_steps(int outputs) { return outputs >= 1 && outputs <= detail::kMaxFixedOutputs; }
// Trains rows[begin, end) of the pass, one step each; adds their loss to
// loss_sum and their clipped steps to `limited`, in row order.
void train_rows(const RowPass& pass, std::size_t begin, std::size_t end, double& loss_sum,
                std::int64_t& limited);

// One pass over `order`; returns the summed loss. Template over the layer so
// forward/step are direct calls; report(rows done, mean loss) is called every
// kReportBatches batches, where the pass also stops once `watch` has tripped; `thread`
// is the caller's Hogwild thread (0 otherwise); `in_order`: data's rows are
// the epoch's in order (order is 0, 1, ...), read in place.
template <class Layer, class Report>
inline double run_epoch(Layer& layer, const Dataset& data, std::span<const Index> order, int batch_size,
                 const Schedule& schedule, StepClock& clock, BatchScratch& scratch,
                 RowWindow& window, DivergenceWatch& watch, Report&& report, int thread = 0,
                 bool in_order = false, CopyAhead* ahead = nullptr) {
  const int k = layer.outputs();
  double loss_sum = 0;
  std::int64_t limited = 0;
  std::size_t seen = 0;
  for_each_window(data, order, batch_size, window,
                  [&](const CsrMatrix& x, std::span<const std::int32_t> y,
                      std::span<const Index> all, std::size_t offset, bool in_place) {
    const std::size_t n = all.size();
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer> || std::is_same_v<Layer, LoggedLayer>) {
      if (batch_size == 1 && has_row_steps(k)) {
        const RowPass pass{sparse_layer(layer), x, y, all, order.subspan(offset, n), data.weight,
                           in_place && !in_order, touch_log(layer), schedule, clock, scratch, thread};
        for (std::size_t begin = 0; begin < n;) {
          // Up to the next row whose place in the epoch is a report's, inclusive.
          const std::size_t report_at = (offset + begin + kReportBatches - 1) / kReportBatches * kReportBatches;
          const std::size_t end = std::min(n, report_at - offset + 1);
          train_rows(pass, begin, end, loss_sum, limited);
          seen = offset + end;
          if ((seen - 1) % kReportBatches == 0) {
            report(seen, loss_sum / double(seen));
            if (!watch.ok(static_cast<std::int64_t>(seen), loss_sum / double(seen), limited)) return false;
          }
          begin = end;
        }
        return true;
      }
    }
    // Folded (LossSum::total) where the fixed-width loop's row runs end, at
    // the reports and the window's end, so that both sum alike.
    LossSum sum(loss_sum);
    const bool weighted = !data.weight.empty();
    for (std::size_t begin = 0; begin < n; begin += batch_size) {
      const std::size_t count = std::min<std::size_t>(batch_size, n - begin);
      const std::span<const Index> rows = all.subspan(begin, count);
      const std::size_t next = begin + count;
      if (in_place && !in_order) prefetch_ahead(x, y, all, next, batch_size);
      if (next < n) layer.prefetch(x, all.subspan(next, std::min<std::size_t>(batch_size, n - next)));
      layer.forward(x, rows, scratch.logits.data(), thread);
      const double eta = schedule.eta(clock.next());
      for (std::size_t b = 0; b < count; ++b) {
        float* grad = scratch.grads.data() + b * k;
        const double loss = row_loss_and_grad(scratch.logits.data() + b * k, y[rows[b]], grad, k,
                                              scratch.head, weighted, sum);
        // Window row i is order[offset + i]; in place, offset is 0 and all is order.
        const Index row = order[offset + begin + b];
        limited += counts_as_clipped(
            limit_logit_step(grad, k, x.row(rows[b]), eta / double(count), layer.bias_rate()),
            data.weight, row);
        weigh_row(loss, grad, k, data.weight, row, sum);
      }
      layer.step(x, rows, scratch.grads.data(), eta, thread);
      const std::size_t done = offset + begin + count;
      seen = done;
      if (((offset + begin) / batch_size) % kReportBatches == 0) {
        loss_sum = sum.total();
        report(done, loss_sum / double(done));
        if (!watch.ok(static_cast<std::int64_t>(done), loss_sum / double(done), limited)) return false;
      }
    }
    loss_sum = sum.total();
    return true;
  }, in_order, ahead);
  // The whole pass, however few its rows (an epoch of 20 rows has no check above).
  if (seen > 0 && !watch.halted())
    watch.ok(static_cast<std::int64_t>(seen), loss_sum / double(seen), limited, true);
  return loss_sum;
}

template <class Layer>
inline double run_epoch_single(Layer& layer, const Dataset& data, std::span<const Index> order,
                        int batch_size, const Schedule& schedule, std::int64_t& step,
                        BatchScratch& scratch, RowWindow& window, DivergenceWatch& watch,
                        Progress& progress, CopyAhead* ahead = nullptr) {
  StepClock clock{step};
  const double loss = run_epoch(layer, data, order, batch_size, schedule, clock, scratch, window,
                                watch, [&](std::size_t done, double mean) {
                                  progress.update(static_cast<std::int64_t>(done), mean);
                                }, 0, false, ahead);
  step += clock.taken;
  return loss;
}

// Lock-free threads on shared weights (hogwild.cpp), one a rank of `team`.
double run_epoch_hogwild(EmbeddingBagLayer& layer, Head head, const Dataset& data,
                         std::span<const Index> order, const OptimizerConfig& c, const Schedule& schedule, std::int64_t& step,
                         ThreadTeam& team, DivergenceWatch& watch, Progress& progress);

// Each mini-batch split over the team's threads, bit for bit one thread's
// model (exact.cpp); feature_bounds from split_by_counts(), one range a rank.
double run_epoch_exact(EmbeddingBagLayer& layer, Head head, const Dataset& data,
                       std::span<const Index> order, const OptimizerConfig& c, const Schedule& schedule, std::int64_t& step,
                       std::span<const Index> feature_bounds, ThreadTeam& team,
                       DivergenceWatch& watch, Progress& progress);

}  // namespace bagel::train
