#include <algorithm>

#include "bagel/float_env.h"
#include "bagel/parallel_errors.h"
#include "train/epoch_loop.h"

namespace bagel::train {

// Deterministic parallel mini-batches: rows of a batch are split among the
// threads for the forward pass, features among the threads for the update
// (thread t owns [feature_bounds[t], feature_bounds[t + 1]): equal shares of
// the non-zeros),
// so each weight receives the same operations in the same order as with one
// thread: the model is bit-identical to the single-threaded one.
double run_epoch_exact(EmbeddingBagLayer& layer, Head head, const Dataset& data,
                       std::span<const Index> order, const OptimizerConfig& c, const Schedule& schedule, std::int64_t& step,
                       std::span<const Index> feature_bounds, ThreadTeam& team,
                       DivergenceWatch& watch, Progress& progress) {
  const int threads = team.size();
  const int k = layer.outputs();
  const std::size_t n = order.size();
  const auto batch = static_cast<std::size_t>(c.batch_size);
  // One window shared by the team, copied by all threads: larger than the
  // single-thread one, as each window costs three barriers.
  const bool windows = use_windows(data.x, batch);
  const std::size_t window_rows =
      windows ? batch * std::max<std::size_t>(1, kTeamWindowRows / batch) : std::max<std::size_t>(n, 1);
  RowWindow window;
  BatchScratch scratch(c.batch_size, k, head);
  std::vector<double> row_loss(batch);
  std::vector<char> row_limited(batch);
  double loss_sum = 0;
  std::int64_t limited = 0;
  float coef = 0;
  double eta = 0;
  RegionErrors errors;
  team.run([&](int tid) {
    const DenormalsAreZero flush_denormals;
    const Index f_lo = feature_bounds[tid], f_hi = feature_bounds[tid + 1];
    for (std::size_t w0 = 0; w0 < n; w0 += window_rows) {
      const std::span<const Index> part = order.subspan(w0, std::min(window_rows, n - w0));
      const CsrMatrix* x = &data.x;
      std::span<const std::int32_t> y = data.y;
      std::span<const Index> all = part;
      if (windows) {
        if (!gather_together(window, data, part, tid, team, errors)) break;
        x = &window.matrix();
        y = window.labels();
        all = window.local_rows();
      }
      for (std::size_t begin = 0; begin < all.size(); begin += batch) {
        const std::size_t count = std::min(batch, all.size() - begin);
        const std::span<const Index> rows = all.subspan(begin, count);
        if (c.l1 > 0) {
          layer.catch_up_range(*x, rows, f_lo, f_hi);
          team.barrier();
        }
        const std::size_t b_lo = count * tid / threads, b_hi = count * (tid + 1) / threads;
        layer.forward_readonly(*x, rows.subspan(b_lo, b_hi - b_lo), scratch.logits.data() + b_lo * k);
        // The rate of the coming step: `step` changes only in rank 0's part below.
        const double reach = schedule.eta(step + 1) / double(count);
        for (std::size_t b = b_lo; b < b_hi; ++b) {
          float* grad = scratch.grads.data() + b * k;
          // Window row i is part[i], as in place.
          const double loss = head_loss_and_grad(scratch.logits.data() + b * k, y[rows[b]], grad, k, scratch.head);
          row_limited[b] = counts_as_clipped(
              limit_logit_step(grad, k, x->row(rows[b]), reach, layer.bias_rate()), data.weight,
              part[begin + b]);
          LossSum one;  // the row's own, its log taken at once
          weigh_row(loss, grad, k, data.weight, part[begin + b], one);
          row_loss[b] = one.total();
        }
        team.barrier();
        if (tid == 0) {
          eta = schedule.eta(++step);
          coef = layer.begin_step(eta, count);
        }
        team.barrier();
        layer.scatter_range(*x, rows, scratch.grads.data(), coef, f_lo, f_hi);
        team.barrier();
        if (tid == 0) {
          layer.end_step(rows, scratch.grads.data(), eta);
          for (std::size_t b = 0; b < count; ++b) loss_sum += row_loss[b], limited += row_limited[b];
          if (c.l1 <= 0) layer.merge();
          const std::size_t done = w0 + begin + count;
          if (((w0 + begin) / batch) % 256 == 0)
            watch.ok(static_cast<std::int64_t>(done), loss_sum / double(done), limited);
        }
        team.barrier();
        if (c.l1 > 0) {
          layer.catch_up_range(*x, rows, f_lo, f_hi);
          team.barrier();
          if (tid == 0) layer.merge();
          team.barrier();
        }
        const std::size_t done = w0 + begin + count;
        if (tid == 0 && ((w0 + begin) / batch) % 64 == 0)
          progress.update(static_cast<std::int64_t>(done), loss_sum / double(done));
        // Set only by rank 0 above, before a barrier every thread has
        // passed since: all threads leave together.
        if (watch.halted()) break;
      }
      if (watch.halted()) break;
    }
  });
  errors.rethrow();
  if (n > 0 && !watch.halted()) watch.ok(static_cast<std::int64_t>(n), loss_sum / double(n), limited, true);
  return loss_sum;
}

}  // namespace bagel::train
