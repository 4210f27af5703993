#include "bagel/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <atomic>
#include <numeric>
#include <algorithm>
#include <type_traits>

#include <omp.h>

#include "bagel/cores.h"
#include "bagel/dense_linear.h"
#include "bagel/embedding_bag.h"
#include "bagel/error.h"
#include "bagel/feature_order.h"
#include "bagel/float_env.h"
#include "bagel/huge_pages.h"
#include "bagel/loss.h"
#include "bagel/predict.h"
#include "bagel/rate_calibration.h"
#include "bagel/row_window.h"
#include "bagel/schedule.h"
#include "bagel/table_writer.h"

namespace bagel {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Per-thread scratch for one mini-batch.
struct BatchScratch {
  std::vector<float> logits;
  std::vector<float> grads;
  BatchScratch(int batch_size, int outputs)
      : logits(static_cast<std::size_t>(batch_size) * outputs),
        grads(static_cast<std::size_t>(batch_size) * outputs) {}
};

// Shuffled rows are random accesses into the CSR arrays and the labels, each
// a cache and TLB miss. Training runs over RowWindows (rows copied in order
// first); batches too big to copy read the rows in place, requested in stages
// so that each stage's addresses are already cached when it runs: 8 batches
// ahead the row pointers and labels, 4 batches ahead the rows' index and
// value arrays (the layer asks for the weight rows 1 batch ahead).
inline void prefetch_ahead(const CsrMatrix& x, std::span<const std::int32_t> y,
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
constexpr std::size_t kWindowRows = 256;
constexpr std::size_t kTeamWindowRows = 2048;
constexpr double kMaxWindowBytes = 16.0 * (1 << 20);

bool use_windows(const CsrMatrix& x, std::size_t batch) {
  const double row_bytes =
      x.rows() > 0 ? double(x.nonZeros()) / double(x.rows()) * (sizeof(Index) + sizeof(float)) : 0;
  return double(batch) * (row_bytes + sizeof(Index)) <= kMaxWindowBytes;
}

// Calls body(x, y, rows, offset, in_place) over `order` in windows (rows[i]
// indexes x and y; offset is the position of rows[0] in `order`), or once
// over the data itself (in_place) when a batch is too big to copy, until
// body returns false.
template <class Body>
void for_each_window(const Dataset& data, std::span<const Index> order, int batch_size,
                     RowWindow& window, Body&& body) {
  const auto batch = static_cast<std::size_t>(batch_size);
  if (!use_windows(data.x, batch)) {
    body(data.x, std::span<const std::int32_t>(data.y), order, std::size_t{0}, true);
    return;
  }
  const std::size_t rows = batch * std::max<std::size_t>(1, kWindowRows / batch);
  for (std::size_t w0 = 0; w0 < order.size(); w0 += rows) {
    window.gather(data.x, data.y, order.subspan(w0, std::min(rows, order.size() - w0)));
    if (!body(window.matrix(), window.labels(), window.local_rows(), w0, false)) return;
  }
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

// Divergence: a running mean loss that is not finite, or far above log(K),
// the loss of predicting every class alike (where training starts from zero
// weights). A rate that is too large for the scale of the rows makes the
// logits swing by hundreds, and the mean loss with them (35 seen on count
// data at rate 0.1), so the watch trips within the first thousand rows
// instead of after a useless epoch. Row weights scale the losses, so the
// limit is times their mean. "optimal" sets its own rates, so no restart can
// help it: there only non-finite losses count. Shared by the threads of one
// epoch: the first one to trip it stops them all at their next check.
class DivergenceWatch {
 public:
  explicit DivergenceWatch(double limit) : limit_(limit) {}
  static double limit_for(int classes, const Dataset& d, ScheduleKind schedule) {
    if (schedule == ScheduleKind::kOptimal) return std::numeric_limits<double>::infinity();
    double mean_weight = 1;
    if (!d.weight.empty())
      mean_weight = std::accumulate(d.weight.begin(), d.weight.end(), 0.0) / double(d.weight.size());
    return 4.0 * std::log(std::max(classes, 2)) * mean_weight;
  }
  // A running mean over `rows` rows; false once any thread has tripped it.
  // `whole` marks the mean of a whole epoch, which counts however few rows.
  bool ok(std::int64_t rows, double mean_loss, bool whole = false) {
    if (!std::isfinite(mean_loss) || ((whole || rows >= kMinRows) && mean_loss > limit_)) {
      bool expected = false;
      if (tripped_.compare_exchange_strong(expected, true)) rows_ = rows, loss_ = mean_loss;
    }
    return !tripped();
  }
  bool tripped() const { return tripped_.load(std::memory_order_relaxed); }
  std::int64_t rows() const { return rows_; }
  double loss() const { return loss_; }

 private:
  static constexpr std::int64_t kMinRows = 256;  // fewer rows: a mean of noise
  const double limit_;
  std::atomic<bool> tripped_{false};
  std::int64_t rows_ = 0;
  double loss_ = 0;
};

// Thrown (outside any parallel region) when a watch tripped.
struct Diverged {
  int epoch;
  std::int64_t rows;
  double loss;
};

// Row weights (Dataset::weight): the row's gradient and loss times w. A
// branch per row, not per non-zero; unweighted data has no weights at all.
inline double weigh_row(double loss, float* grad, int k, std::span<const float> weights,
                        Index row) {
  if (weights.empty()) return loss;
  const float w = weights[static_cast<std::size_t>(row)];
  for (int i = 0; i < k; ++i) grad[i] *= w;
  return loss * w;
}

// One pass over `order`; returns the summed loss. Template over the layer so
// forward/step are direct calls; report(rows done, mean loss) is called every
// 256 batches, where the pass also stops once `watch` has tripped; `thread`
// is the caller's Hogwild thread (0 otherwise).
template <class Layer, class Report>
double run_epoch(Layer& layer, const Dataset& data, std::span<const Index> order, int batch_size,
                 const Schedule& schedule, StepClock& clock, BatchScratch& scratch,
                 RowWindow& window, DivergenceWatch& watch, Report&& report, int thread = 0) {
  const int k = layer.outputs();
  double loss_sum = 0;
  for_each_window(data, order, batch_size, window,
                  [&](const CsrMatrix& x, std::span<const std::int32_t> y,
                      std::span<const Index> all, std::size_t offset, bool in_place) {
    const std::size_t n = all.size();
    for (std::size_t begin = 0; begin < n; begin += batch_size) {
      const std::size_t count = std::min<std::size_t>(batch_size, n - begin);
      const std::span<const Index> rows = all.subspan(begin, count);
      const std::size_t next = begin + count;
      if (in_place) prefetch_ahead(x, y, all, next, batch_size);
      if (next < n) layer.prefetch(x, all.subspan(next, std::min<std::size_t>(batch_size, n - next)));
      layer.forward(x, rows, scratch.logits.data(), thread);
      for (std::size_t b = 0; b < count; ++b) {
        float* grad = scratch.grads.data() + b * k;
        const double loss = head_loss_and_grad(scratch.logits.data() + b * k, y[rows[b]], grad, k);
        // Window row i is order[offset + i]; in place, offset is 0 and all is order.
        loss_sum += weigh_row(loss, grad, k, data.weight, order[offset + begin + b]);
      }
      layer.step(x, rows, scratch.grads.data(), schedule.eta(clock.next()), thread);
      const std::size_t done = offset + begin + count;
      if (((offset + begin) / batch_size) % 256 == 0) {
        report(done, loss_sum / double(done));
        if (!watch.ok(static_cast<std::int64_t>(done), loss_sum / double(done))) return false;
      }
    }
    return true;
  });
  return loss_sum;
}

// Deterministic shards with model averaging (iterative parameter mixing,
// Mann et al. 2009): replica r trains its own copy of the weights on slice r
// of the epoch's permutation; at the end of the epoch every weight becomes
// the mean of the replicas', summed in replica order, and that mean starts
// the next epoch everywhere. No weight is shared while training, so the
// threads neither race nor wait; the same seed and thread count give the
// same model.
class Replicas {
 public:
  // Copies for ranks 1..threads-1 (rank 0 trains `layer0` on the model).
  // With averaged SGD each replica also sums its own steps' weights
  // (start_averaging()).
  Replicas(const Model& model, const OptimizerConfig& c, int threads) {
    const std::size_t copies = static_cast<std::size_t>(std::max(threads - 1, 0));
    weight_.reserve(copies);
    bias_.reserve(copies);
    layers_.reserve(copies);
    for (std::size_t r = 0; r < copies; ++r) {
      weight_.push_back(huge_vector<float>(model.weight.size()));
      bias_.push_back(std::vector<float>(model.bias.size()));
      layers_.emplace_back(weight_.back(), bias_.back(), model.num_features, model.num_outputs,
                           c.l2, c.l1);
    }
  }

  // Averaged SGD from the next step on, in every replica but rank 0's
  // (whose layer the trainer starts).
  void start_averaging() {
    for (EmbeddingBagLayer& l : layers_) l.start_averaging();
  }

  // Averaged SGD: the mean of every replica's steps' weights, all replicas
  // pooled (sum of their sums over the sum of their step counts), into
  // `weight` and `bias` (which may be layer0's own). After run_epoch.
  void write_average(const EmbeddingBagLayer& layer0, std::span<float> weight,
                     std::span<float> bias) const {
    std::vector<const EmbeddingBagLayer*> summed;  // the layers with averaged steps
    std::int64_t steps = 0;
    auto add = [&](const EmbeddingBagLayer& l) {
      if (l.average_steps() == 0) return;
      summed.push_back(&l);
      steps += l.average_steps();
    };
    add(layer0);
    for (const EmbeddingBagLayer& l : layers_) add(l);
    if (steps == 0) return layer0.write_average(weight, bias);
    const double inv = 1.0 / static_cast<double>(steps);
    for (std::size_t j = 0; j < weight.size(); ++j) {
      double sum = 0;
      for (const EmbeddingBagLayer* l : summed) sum += l->average_weight_sum()[j];
      weight[j] = static_cast<float>(sum * inv);
    }
    for (std::size_t i = 0; i < bias.size(); ++i) {
      double sum = 0;
      for (const EmbeddingBagLayer* l : summed) sum += l->average_bias_sum()[i];
      bias[i] = static_cast<float>(sum * inv);
    }
  }

  double run_epoch(EmbeddingBagLayer& layer0, Model& model, const Dataset& data,
                   std::span<const Index> order, const OptimizerConfig& c,
                   const Schedule& schedule, std::int64_t& step, DivergenceWatch& watch,
                   Progress& progress) {
    const int threads = static_cast<int>(layers_.size()) + 1;
    const std::size_t n = order.size();
    const int k = model.num_outputs;
    std::vector<double> loss(static_cast<std::size_t>(threads), 0.0);
    // What each replica's stored weights still need multiplied in (the
    // biases have no lazy scale).
    std::vector<float> scales(static_cast<std::size_t>(threads), 1.0f);
    const std::vector<float> ones(scales);
    std::int64_t steps = 0;
#pragma omp parallel num_threads(threads) reduction(+ : steps)
    {
      const DenormalsAreZero flush_denormals;
      const int rank = omp_get_thread_num();
      EmbeddingBagLayer& layer = rank == 0 ? layer0 : layers_[rank - 1];
      if (!copies_current_) {
        copy_slice(model.weight, weight_, rank, threads);
        if (rank == 0) copy_slice(model.bias, bias_, 0, 1);
      }
#pragma omp barrier  // rank 0 trains on the model's arrays: copies first
      const std::size_t lo = n * rank / threads, hi = n * (rank + 1) / threads;
      BatchScratch scratch(c.batch_size, k);
      RowWindow window;
      StepClock clock{step, threads, rank};
      loss[rank] = bagel::run_epoch(
          layer, data, order.subspan(lo, hi - lo), c.batch_size, schedule, clock, scratch, window,
          watch, [&](std::size_t done, double mean) {
            if (rank == 0) progress.update(static_cast<std::int64_t>(done) * threads, mean);
          });
      scales[rank] = layer.take_scale();
      steps += clock.taken;
#pragma omp barrier
      average(model.weight, weight_, scales, rank, threads);
      if (rank == 0) average(model.bias, bias_, ones, 0, 1);
    }
    copies_current_ = true;
    step += steps;
    double total = 0;
    for (const double l : loss) total += l;
    return total;
  }

 private:
  // Every copy = from, over this rank's slice.
  static void copy_slice(const std::vector<float>& from, std::vector<std::vector<float>>& copies,
                         int rank, int threads) {
    const std::size_t m = from.size();
    const std::size_t lo = m * rank / threads, hi = m * (rank + 1) / threads;
    for (std::vector<float>& w : copies)
      std::copy(from.begin() + lo, from.begin() + hi, w.begin() + lo);
  }

  // out = (out * scales[0] + copies[0] * scales[1] + ...) / threads over
  // this rank's slice, written into the copies too, so that the next epoch
  // needs no copy pass (at 2^20 features and 20 classes that pass took 8.6
  // ms an epoch). Each product is rounded before it is added (no FMA): the
  // model is bit for bit the one each replica's own flush() would give.
  __attribute__((optimize("fp-contract=off"))) static void average(
      std::vector<float>& out, std::vector<std::vector<float>>& copies,
      std::span<const float> scales, int rank, int threads) {
    const std::size_t m = out.size();
    const std::size_t lo = m * rank / threads, hi = m * (rank + 1) / threads;
    const float inv = 1.0f / static_cast<float>(copies.size() + 1);
    // In blocks that stay in L1, one vectorised pass per array over each.
    constexpr std::size_t kBlock = 2048;
    float* o = out.data();
    for (std::size_t b = lo; b < hi; b += kBlock) {
      const std::size_t e = std::min(hi, b + kBlock);
      for (std::size_t j = b; j < e; ++j) o[j] *= scales[0];
      for (std::size_t r = 0; r < copies.size(); ++r) {
        const float* w = copies[r].data();
        const float s = scales[r + 1];
        for (std::size_t j = b; j < e; ++j) o[j] += w[j] * s;
      }
      for (std::size_t j = b; j < e; ++j) o[j] *= inv;
      for (std::vector<float>& w : copies) std::copy(o + b, o + e, w.begin() + b);
    }
  }

  std::vector<std::vector<float>> weight_, bias_;
  std::vector<EmbeddingBagLayer> layers_;
  // The copies hold the model's weights (after an epoch: its mean). Between
  // epochs only run_epoch writes the model's arrays.
  bool copies_current_ = false;
};

template <class Layer>
double run_epoch_single(Layer& layer, const Dataset& data, std::span<const Index> order,
                        int batch_size, const Schedule& schedule, std::int64_t& step,
                        BatchScratch& scratch, RowWindow& window, DivergenceWatch& watch,
                        Progress& progress) {
  StepClock clock{step};
  const double loss = run_epoch(layer, data, order, batch_size, schedule, clock, scratch, window,
                                watch, [&](std::size_t done, double mean) {
                                  progress.update(static_cast<std::int64_t>(done), mean);
                                });
  step += clock.taken;
  return loss;
}

// Rows between Hogwild merges: at most 16k, and few enough that one
// interval's L2 decay stays under 0.1% (down to 64 rows: strong decay then
// costs more barriers rather than more disagreement between the threads).
std::size_t hogwild_interval(const OptimizerConfig& c, const Schedule& schedule, int threads) {
  const double decay_per_step = schedule.eta(1) * c.l2 * threads;
  std::size_t rows = 16384;
  if (decay_per_step > 0)
    rows = static_cast<std::size_t>(std::clamp(1e-3 / decay_per_step * c.batch_size, 64.0, 16384.0));
  return rows;
}

// Lock-free: each thread runs SGD on its own slice of the permutation, all on
// the same weights, merging the lazy scales at a barrier every `interval`
// rows. Nondeterministic: updates of different threads interleave.
double run_epoch_hogwild(EmbeddingBagLayer& layer, const Dataset& data, std::span<const Index> order,
                         const OptimizerConfig& c, const Schedule& schedule, std::int64_t& step,
                         int threads, DivergenceWatch& watch, Progress& progress) {
  const int k = layer.outputs();
  const std::size_t n = order.size();
  const std::size_t interval = hogwild_interval(c, schedule, threads);
  const std::size_t slice = (n + threads - 1) / threads;
  const std::size_t rounds = (slice + interval - 1) / interval;
  const std::int64_t step_base = step;
  std::vector<double> partial_loss(static_cast<std::size_t>(threads), 0.0);
  std::int64_t steps_total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : steps_total)
  {
    const DenormalsAreZero flush_denormals;
    const int tid = omp_get_thread_num();
    const std::size_t lo = std::min(n, tid * slice), hi = std::min(n, lo + slice);
    BatchScratch scratch(c.batch_size, k);
    RowWindow window;
    StepClock clock{step_base, threads, tid};  // global update count as if the threads took turns
    double loss_total = 0;
    for (std::size_t round = 0; round < rounds; ++round) {
      const std::size_t r0 = std::min(hi, lo + round * interval), r1 = std::min(hi, r0 + interval);
      // Every thread takes every round's barrier, tripped or not.
      if (!watch.tripped())
        loss_total += run_epoch(layer, data, order.subspan(r0, r1 - r0), c.batch_size, schedule,
                                clock, scratch, window, watch, [](std::size_t, double) {}, tid);
      partial_loss[tid] = loss_total;
#pragma omp barrier
#pragma omp single
      {
        layer.merge();
        std::size_t done = 0;  // rows every thread has finished so far
        for (std::size_t t = 0; t < static_cast<std::size_t>(threads); ++t) {
          const std::size_t t_lo = std::min(n, t * slice), t_hi = std::min(n, t_lo + slice);
          done += std::min(t_hi, t_lo + (round + 1) * interval) - t_lo;
        }
        double loss = 0;
        for (const double l : partial_loss) loss += l;
        if (done > 0) progress.update(static_cast<std::int64_t>(done), loss / double(done));
      }
    }
    steps_total += clock.taken;
  }
  step += steps_total;
  double loss_total = 0;
  for (const double l : partial_loss) loss_total += l;
  return loss_total;
}

// Deterministic parallel mini-batches: rows of a batch are split among the
// threads for the forward pass, features among the threads for the update
// (thread t owns [feature_bounds[t], feature_bounds[t + 1]): equal shares of
// the non-zeros),
// so each weight receives the same operations in the same order as with one
// thread: the model is bit-identical to the single-threaded one.
double run_epoch_deterministic(EmbeddingBagLayer& layer, const Dataset& data,
                               std::span<const Index> order, const OptimizerConfig& c,
                               const Schedule& schedule, std::int64_t& step,
                               std::span<const Index> feature_bounds, DivergenceWatch& watch,
                               Progress& progress) {
  const int threads = static_cast<int>(feature_bounds.size()) - 1;
  const int k = layer.outputs();
  const std::size_t n = order.size();
  const auto batch = static_cast<std::size_t>(c.batch_size);
  // One window shared by the team, copied by all threads: larger than the
  // single-thread one, as each window costs three barriers.
  const bool windows = use_windows(data.x, batch);
  const std::size_t window_rows =
      windows ? batch * std::max<std::size_t>(1, kTeamWindowRows / batch) : std::max<std::size_t>(n, 1);
  RowWindow window;
  BatchScratch scratch(c.batch_size, k);
  std::vector<double> row_loss(batch);
  double loss_sum = 0;
  float coef = 0;
  double eta = 0;
#pragma omp parallel num_threads(threads)
  {
    const DenormalsAreZero flush_denormals;
    const int tid = omp_get_thread_num();
    const Index f_lo = feature_bounds[tid], f_hi = feature_bounds[tid + 1];
    for (std::size_t w0 = 0; w0 < n; w0 += window_rows) {
      const std::span<const Index> part = order.subspan(w0, std::min(window_rows, n - w0));
      const CsrMatrix* x = &data.x;
      std::span<const std::int32_t> y = data.y;
      std::span<const Index> all = part;
      if (windows) {
#pragma omp single
        window.begin(part.size(), threads);
        window.count_part(data.x, data.y, part, tid, threads);
#pragma omp barrier
#pragma omp single
        window.allocate();
        window.copy_part(data.x, part, tid, threads);
#pragma omp barrier
#pragma omp single
        window.finish(data.x.cols());
        x = &window.matrix();
        y = window.labels();
        all = window.local_rows();
      }
      for (std::size_t begin = 0; begin < all.size(); begin += batch) {
        const std::size_t count = std::min(batch, all.size() - begin);
        const std::span<const Index> rows = all.subspan(begin, count);
        if (c.l1 > 0) {
          layer.catch_up_range(*x, rows, f_lo, f_hi);
#pragma omp barrier
        }
        const std::size_t b_lo = count * tid / threads, b_hi = count * (tid + 1) / threads;
        layer.forward_readonly(*x, rows.subspan(b_lo, b_hi - b_lo), scratch.logits.data() + b_lo * k);
        for (std::size_t b = b_lo; b < b_hi; ++b) {
          float* grad = scratch.grads.data() + b * k;
          // Window row i is part[i], as in place.
          row_loss[b] = weigh_row(head_loss_and_grad(scratch.logits.data() + b * k, y[rows[b]], grad, k),
                                  grad, k, data.weight, part[begin + b]);
        }
#pragma omp barrier
#pragma omp single
        {
          eta = schedule.eta(++step);
          coef = layer.begin_step(eta, count);
        }
        layer.scatter_range(*x, rows, scratch.grads.data(), coef, f_lo, f_hi);
#pragma omp barrier
#pragma omp single
        {
          layer.end_step(rows, scratch.grads.data(), eta);
          for (std::size_t b = 0; b < count; ++b) loss_sum += row_loss[b];
          if (c.l1 <= 0) layer.merge();
          const std::size_t done = w0 + begin + count;
          if (((w0 + begin) / batch) % 256 == 0)
            watch.ok(static_cast<std::int64_t>(done), loss_sum / double(done));
        }
        if (c.l1 > 0) {
          layer.catch_up_range(*x, rows, f_lo, f_hi);
#pragma omp barrier
        }
        if (c.l1 > 0) {
#pragma omp single
          layer.merge();
        }
        const std::size_t done = w0 + begin + count;
        if (tid == 0 && ((w0 + begin) / batch) % 64 == 0)
          progress.update(static_cast<std::int64_t>(done), loss_sum / double(done));
        // Set only inside the single above, whose barrier every thread has
        // passed since: all threads leave together.
        if (watch.tripped()) break;
      }
      if (watch.tripped()) break;
    }
  }
  return loss_sum;
}

bool weights_finite(const Model& model) {
  for (const float w : model.weight)
    if (!std::isfinite(w)) return false;
  for (const float b : model.bias)
    if (!std::isfinite(b)) return false;
  return true;
}

std::string epoch_line(const EpochRecord& r, int epochs) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "epoch %d/%d  loss %.6f  %.0f samples/s  %.2fs", r.epoch, epochs,
                r.train_loss, r.samples_per_second, r.seconds);
  std::string line = buf;
  if (r.valid) line += "  valid: " + metrics_summary(*r.valid);
  return line;
}

Metrics evaluate(const Model& model, const Dataset& data) {
  return bagel::evaluate(model, data.x, data.y);
}

template <class Layer>
TrainingSummary train_with(Layer& layer, Model& model, const Dataset& train, const Dataset* valid,
                           const OptimizerConfig& config, Progress& progress) {
  // A batch larger than the data is the whole data (full-batch descent), and
  // the scratch must not be sized by a huge configured batch.
  OptimizerConfig c = config;
  c.batch_size = static_cast<int>(std::clamp<std::int64_t>(
      c.batch_size, 1, std::max<std::int64_t>(train.x.rows(), 1)));
  TrainingSummary summary;
  const auto t_start = Clock::now();
  std::vector<Index> order(static_cast<std::size_t>(train.x.rows()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Index>(i);
  std::mt19937_64 rng(c.seed);
  const std::int64_t steps_per_epoch =
      (static_cast<std::int64_t>(order.size()) + c.batch_size - 1) / c.batch_size;
  const Schedule schedule(c, steps_per_epoch * c.epochs);
  BatchScratch scratch(c.batch_size, layer.outputs());
  RowWindow window;
  std::int64_t step = 0;
  const int threads = training_threads(c, train.x.rows());
  std::optional<Replicas> replicas;
  std::vector<Index> feature_bounds;  // deterministic exact: each thread's features
  if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
    if (threads > 1 && !c.deterministic) layer.set_threads(threads);
    if (threads > 1 && c.deterministic && c.deterministic_method == DeterministicMethod::kExact)
      feature_bounds = split_by_counts(train.x, layer.num_features(), threads);
    if (threads > 1 && c.deterministic && c.deterministic_method == DeterministicMethod::kAverage)
      replicas.emplace(model, c, threads);
  } else {
    Eigen::setNbThreads(std::max(threads, 1));  // the dense GEMMs
  }
  // Averaged SGD: from epoch c.average_from on, the layer sums the weights
  // of every step, and their mean is what validation, early stopping and
  // the saved model use (before that epoch, the current weights). With a
  // validation set `averaged` holds the mean after each epoch; without one
  // the mean is written over the model once, at the end (no third copy of
  // the weights: 84 MB at 2^20 features and 20 classes).
  std::optional<Model> averaged;
  if (c.average) {
    if (threads > 1 && !replicas && std::is_same_v<Layer, EmbeddingBagLayer>)
      throw Error("optimizer.average: averaging runs on one thread or with deterministic_method "
                  "\"average\"; set optimizer.threads to 1");
    if (valid != nullptr) averaged = model;
  }
  auto start_averaging = [&] {
    layer.start_averaging();
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (replicas) replicas->start_averaging();
  };
  auto write_average = [&](std::span<float> weight, std::span<float> bias) {
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (replicas) return replicas->write_average(layer, weight, bias);
    layer.write_average(weight, bias);
  };

  const double watch_limit = DivergenceWatch::limit_for(model.num_classes(), train, c.schedule);
  double best_loss = std::numeric_limits<double>::infinity();
  int bad_epochs = 0;
  int best_epoch = 0;
  std::vector<float> best_weight, best_bias;
  for (int epoch = 1; epoch <= c.epochs; ++epoch) {
    if (c.average && epoch == c.average_from) start_averaging();
    if (c.shuffle) shuffle_rows(order, rng);
    progress.start_epoch(epoch, c.epochs, static_cast<std::int64_t>(order.size()));
    const auto t_epoch = Clock::now();
    double loss_sum = 0;
    DivergenceWatch watch(watch_limit);
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
      if (replicas)
        loss_sum =
            replicas->run_epoch(layer, model, train, order, c, schedule, step, watch, progress);
      else if (threads > 1 && c.deterministic)
        loss_sum = run_epoch_deterministic(layer, train, order, c, schedule, step, feature_bounds,
                                           watch, progress);
      else if (threads > 1)
        loss_sum = run_epoch_hogwild(layer, train, order, c, schedule, step, threads, watch, progress);
      else
        loss_sum = run_epoch_single(layer, train, order, c.batch_size, schedule, step, scratch,
                                    window, watch, progress);
    } else {
      loss_sum = run_epoch_single(layer, train, order, c.batch_size, schedule, step, scratch, window,
                                  watch, progress);
    }
    if (!order.empty())
      watch.ok(static_cast<std::int64_t>(order.size()), loss_sum / double(order.size()), true);
    if (watch.tripped()) throw Diverged{epoch, watch.rows(), watch.loss()};
    layer.flush();
    EpochRecord rec;
    rec.epoch = epoch;
    rec.seconds = seconds_since(t_epoch);
    rec.train_loss = order.empty() ? 0.0 : loss_sum / double(order.size());
    rec.samples_per_second = rec.seconds > 0 ? double(order.size()) / rec.seconds : 0.0;
    rec.learning_rate = schedule.eta(std::max<std::int64_t>(step, 1));
    if (!std::isfinite(rec.train_loss) || !weights_finite(model))
      throw Diverged{epoch, static_cast<std::int64_t>(order.size()), rec.train_loss};
    if (averaged) write_average(averaged->weight, averaged->bias);
    const Model& current = averaged ? *averaged : model;
    if (valid != nullptr) rec.valid = evaluate(current, *valid);
    progress.end_epoch(epoch_line(rec, c.epochs));
    summary.history.push_back(rec);
    summary.epochs_run = epoch;
    summary.best_epoch = epoch;
    if (c.patience > 0 && valid != nullptr) {
      if (rec.valid->log_loss < best_loss - c.min_delta) {
        best_loss = rec.valid->log_loss;
        best_epoch = epoch;
        best_weight = current.weight;
        best_bias = current.bias;
        bad_epochs = 0;
      } else if (++bad_epochs >= c.patience) {
        summary.stopped_early = true;
        break;
      }
    }
  }
  if (c.patience > 0 && valid != nullptr && !best_weight.empty()) {
    // Keep the weights of the best validation epoch, as early stopping promises.
    summary.best_epoch = best_epoch;
    model.weight = std::move(best_weight);
    model.bias = std::move(best_bias);
  } else if (averaged) {
    std::copy(averaged->weight.begin(), averaged->weight.end(), model.weight.begin());
    model.bias = averaged->bias;
  } else if (c.average) {
    write_average(model.weight, model.bias);
  }
  summary.seconds = seconds_since(t_start);
  return summary;
}

}  // namespace

int training_threads(const OptimizerConfig& c, std::int64_t rows) {
  // 0 = all cores. One thread per ~1000 rows at most: small data gains
  // nothing from more and Hogwild's slices would get tiny.
  return static_cast<int>(std::clamp<std::int64_t>(c.threads > 0 ? c.threads : usable_cores(),
                                                   1, std::max<std::int64_t>(1, rows / 1000)));
}

void shuffle_rows(std::vector<Index>& rows, std::mt19937_64& rng) {
  for (std::size_t i = rows.size(); i > 1; --i) {
    // Lemire's multiply-shift: uniform in [0, i) with rejection of the biased tail.
    const std::uint64_t bound = i;
    std::uint64_t x = rng();
    __uint128_t m = static_cast<__uint128_t>(x) * bound;
    std::uint64_t low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = -bound % bound;
      while (low < threshold) {
        x = rng();
        m = static_cast<__uint128_t>(x) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    std::swap(rows[i - 1], rows[static_cast<std::size_t>(m >> 64)]);
  }
}

nlohmann::json summary_to_json(const TrainingSummary& s) {
  nlohmann::json history = nlohmann::json::array();
  for (const EpochRecord& r : s.history) {
    nlohmann::json e = {{"epoch", r.epoch}, {"train_loss", r.train_loss}, {"seconds", r.seconds},
                        {"samples_per_second", r.samples_per_second},
                        {"learning_rate", r.learning_rate}};
    if (r.valid) e["valid"] = {{"accuracy", r.valid->accuracy}, {"log_loss", r.valid->log_loss},
                               {"macro_f1", r.valid->macro_f1}};
    history.push_back(e);
  }
  nlohmann::json out = {{"epochs_run", s.epochs_run}, {"best_epoch", s.best_epoch},
                        {"stopped_early", s.stopped_early}, {"train_seconds", s.seconds},
                        {"epochs", s.epochs}, {"learning_rate", s.learning_rate},
                        {"history", history}};
  if (s.calibration) {
    nlohmann::json trials = nlohmann::json::array();
    for (const RateTrial& t : s.calibration->trials)
      trials.push_back({{"rate", t.rate},
                        {"holdout_log_loss", std::isfinite(t.holdout_log_loss)
                                                 ? nlohmann::json(t.holdout_log_loss)
                                                 : nlohmann::json(nullptr)}});
    out["rate_calibration"] = {{"rate", s.calibration->rate},
                               {"sample_rows", s.calibration->sample_rows},
                               {"mean_squared_norm", s.calibration->mean_squared_norm},
                               {"seconds", s.calibration->seconds},
                               {"trials", trials}};
  }
  nlohmann::json restarts = nlohmann::json::array();
  for (const RateRestart& r : s.restarts)
    restarts.push_back({{"learning_rate", r.learning_rate}, {"epoch", r.epoch}, {"rows", r.rows},
                        {"mean_loss", std::isfinite(r.mean_loss) ? nlohmann::json(r.mean_loss)
                                                                 : nlohmann::json(nullptr)}});
  out["divergence_restarts"] = restarts;
  return out;
}

namespace {

TrainingSummary train_at_rate(Model& model, const Dataset& train_data, const Dataset* valid,
                           const OptimizerConfig& c, LayerKind layer, Progress& progress) {
  if (layer == LayerKind::kDense) {
    DenseLinearLayer dense(model, c.l2, c.l1);
    return train_with(dense, model, train_data, valid, c, progress);
  }
  EmbeddingBagLayer sparse(model.weight, model.bias, model.num_features, model.num_outputs, c.l2,
                           c.l1);
  return train_with(sparse, model, train_data, valid, c, progress);
}

// The model's starting weights, to start again from after a divergence:
// nothing to keep when they are all zero (a new model: the usual case),
// else a copy.
class StartingPoint {
 public:
  explicit StartingPoint(const Model& m)
      : zeros_(std::all_of(m.weight.begin(), m.weight.end(), [](float w) { return w == 0; }) &&
               std::all_of(m.bias.begin(), m.bias.end(), [](float b) { return b == 0; })) {
    if (!zeros_) weight_ = m.weight, bias_ = m.bias;
  }
  void restore(Model& m) const {
    if (zeros_) {
      std::fill(m.weight.begin(), m.weight.end(), 0.0f);
      std::fill(m.bias.begin(), m.bias.end(), 0.0f);
    } else {
      std::copy(weight_.begin(), weight_.end(), m.weight.begin());
      m.bias = bias_;
    }
  }

 private:
  bool zeros_;
  std::vector<float> weight_, bias_;
};

// Each restart after a divergence divides the rate by this; after
// kMaxRestarts of them (a rate 10^8 times too large) training gives up.
constexpr double kRestartFactor = 10;
constexpr int kMaxRestarts = 8;

// Rates in messages: 6 digits, so that 1e36 / 10^2 reads 1e+34, not
// 1.0000000000000001e+34.
std::string rate_text(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", rate);
  return buf;
}

std::string diverged_text(const Diverged& d, const OptimizerConfig& c) {
  char buf[300];
  std::snprintf(buf, sizeof buf,
                "training diverged in epoch %d (mean loss %.4g after %lld rows) at learning_rate %s",
                d.epoch, d.loss, static_cast<long long>(d.rows), rate_text(c.learning_rate).c_str());
  return buf;
}

// "plan: 20 epochs (auto), linear schedule, learning_rate 0.0326 (auto: 14
// rates tried on 2000 rows in 0.08s), l2 0, batch 1, 1 thread": what will
// run, with the values "auto" resolved to.
std::string plan_line(const OptimizerConfig& asked, const OptimizerConfig& c,
                      const std::optional<RateCalibration>& calibration, int threads) {
  char cal[160] = "";
  if (calibration)
    std::snprintf(cal, sizeof cal, " (auto: %zu rates tried on %lld rows in %.2fs)",
                  calibration->trials.size(), static_cast<long long>(calibration->sample_rows),
                  calibration->seconds);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "plan: %d epochs%s, %s schedule, learning_rate %s%s, l2 %s, batch %d, %d thread%s",
                c.epochs, asked.epochs <= 0 ? " (auto)" : "", to_string(c.schedule).c_str(),
                c.schedule == ScheduleKind::kOptimal ? "set by \"optimal\"" : rate_text(c.learning_rate).c_str(),
                cal, rate_text(c.l2).c_str(), c.batch_size, threads, threads == 1 ? "" : "s");
  return buf;
}

// The largest team training will open: the training threads, and all cores
// when it evaluates a valid set or calibrates the rate on several threads.
// 1 when it opens none, so that a small single-threaded run does not wake
// every worker (under load each wake may wait for a time slice).
int team_threads(const OptimizerConfig& c, const Dataset& train, const Dataset* valid) {
  const int training = training_threads(c, train.x.rows());
  const bool all_cores = valid != nullptr || (c.learning_rate <= 0 && c.threads != 1);
  return all_cores ? std::max(usable_cores(), training) : training;
}

}  // namespace

TrainingSummary train_fixed_rate(Model& model, const Dataset& train_data, const Dataset* valid,
                                 const OptimizerConfig& c, LayerKind layer, Progress& progress) {
  if ((c.learning_rate <= 0 && c.schedule != ScheduleKind::kOptimal) || c.epochs <= 0)
    throw Error("train_fixed_rate: learning_rate and epochs must be set");
  const DenormalsAreZero flush_denormals(team_threads(c, train_data, valid));
  try {
    TrainingSummary summary = train_at_rate(model, train_data, valid, c, layer, progress);
    summary.learning_rate = c.learning_rate;
    summary.epochs = c.epochs;
    return summary;
  } catch (const Diverged& d) {
    throw Error(diverged_text(d, c));
  }
}

TrainingSummary train_model(Model& model, const Dataset& train_data, const Dataset* valid,
                            const OptimizerConfig& config, LayerKind layer, Progress& progress) {
  const DenormalsAreZero flush_denormals(team_threads(config, train_data, valid));
  const auto t_start = Clock::now();
  OptimizerConfig c = config;
  if (c.epochs <= 0) c.epochs = auto_epochs(train_data.x.rows());
  if (c.average && c.average_from > c.epochs)
    throw ConfigError("optimizer.average_from",
                      "is " + std::to_string(c.average_from) + ", past the last epoch (" +
                          std::to_string(c.epochs) + ", \"auto\" for " +
                          std::to_string(train_data.x.rows()) + " rows): set optimizer.epochs");
  std::optional<RateCalibration> calibration;
  if (c.learning_rate <= 0) {
    if (c.schedule == ScheduleKind::kOptimal) {
      c.learning_rate = 1;  // unused: "optimal" sets its own rates
    } else {
      calibration = calibrate_learning_rate(train_data, model.num_classes(), c);
      c.learning_rate = calibration->rate;
    }
  }
  progress.message(plan_line(config, c, calibration, training_threads(c, train_data.x.rows())));
  const StartingPoint start(model);
  std::vector<RateRestart> restarts;
  for (;;) {
    try {
      TrainingSummary summary = train_at_rate(model, train_data, valid, c, layer, progress);
      summary.learning_rate = c.learning_rate;
      summary.epochs = c.epochs;
      summary.calibration = std::move(calibration);
      summary.restarts = std::move(restarts);
      summary.seconds = seconds_since(t_start);  // with the calibration and any restarts
      return summary;
    } catch (const Diverged& d) {
      const std::string what = diverged_text(d, c);
      if (c.schedule == ScheduleKind::kOptimal)
        throw Error(what + ": \"optimal\" starts at rate (l2 + l1)^-0.25; raise l2 or use "
                    "another schedule");
      if (static_cast<int>(restarts.size()) == kMaxRestarts)
        throw Error(what + " after " + std::to_string(kMaxRestarts) +
                    " restarts at lower rates; check the feature values (scale them) and set "
                    "optimizer.learning_rate lower, or leave it out (\"auto\")");
      restarts.push_back({c.learning_rate, d.epoch, d.rows, d.loss});
      c.learning_rate /= kRestartFactor;
      progress.warn(what + "; restarting at learning_rate " + rate_text(c.learning_rate));
      start.restore(model);
    }
  }
}

}  // namespace bagel
