#include <algorithm>
#include <optional>

#include "bagel/float_env.h"
#include "bagel/parallel_errors.h"
#include "train/epoch_loop.h"

namespace bagel::train {

// Rows between Hogwild merges: at most 16k, and few enough that one
// interval's L2 decay stays under 0.1% (down to 64 rows: strong decay then
// costs more barriers rather than more disagreement between the threads).
namespace {

std::size_t hogwild_interval(const OptimizerConfig& c, const Schedule& schedule, int threads) {
  const double decay_per_step = schedule.eta(1) * c.l2 * threads;
  std::size_t rows = 16384;
  if (decay_per_step > 0)
    rows = static_cast<std::size_t>(std::clamp(1e-3 / decay_per_step * c.batch_size, 64.0, 16384.0));
  return rows;
}

}  // namespace

// Lock-free: each thread runs SGD on its own slice of the permutation, all on
// the same weights, merging the lazy scales at a barrier every `interval`
// rows. Nondeterministic: updates of different threads interleave.
double run_epoch_hogwild(EmbeddingBagLayer& layer, Head head, const Dataset& data,
                         std::span<const Index> order, const OptimizerConfig& c, const Schedule& schedule, std::int64_t& step,
                         ThreadTeam& team, DivergenceWatch& watch, Progress& progress) {
  const int threads = team.size();
  const int k = layer.outputs();
  const std::size_t n = order.size();
  const std::size_t interval = hogwild_interval(c, schedule, threads);
  const std::size_t slice = (n + threads - 1) / threads;
  const std::size_t rounds = (slice + interval - 1) / interval;
  const std::int64_t step_base = step;
  std::vector<double> partial_loss(static_cast<std::size_t>(threads), 0.0);
  std::vector<std::int64_t> steps(static_cast<std::size_t>(threads), 0);
  RegionErrors errors;
  team.run([&](int tid) {
    const DenormalsAreZero flush_denormals;
    const std::size_t lo = std::min(n, tid * slice), hi = std::min(n, lo + slice);
    std::optional<BatchScratch> scratch;
    errors.run([&] { scratch.emplace(c.batch_size, k, head); });
    RowWindow window;
    StepClock clock{step_base, threads, tid};  // global update count as if the threads took turns
    double loss_total = 0;
    for (std::size_t round = 0; round < rounds; ++round) {
      const std::size_t r0 = std::min(hi, lo + round * interval), r1 = std::min(hi, r0 + interval);
      // Every thread takes every round's barrier, tripped or not.
      if (!watch.halted() && !errors.failed())
        errors.run([&] {
          loss_total += run_epoch(layer, data, order.subspan(r0, r1 - r0), c.batch_size, schedule,
                                  clock, *scratch, window, watch, [](std::size_t, double) {}, tid);
        });
      partial_loss[tid] = loss_total;
      team.barrier();
      if (tid == 0) {
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
      team.barrier();
    }
    steps[static_cast<std::size_t>(tid)] = clock.taken;
  });
  errors.rethrow();
  for (const std::int64_t taken : steps) step += taken;
  double loss_total = 0;
  for (const double l : partial_loss) loss_total += l;
  return loss_total;
}

}  // namespace bagel::train
