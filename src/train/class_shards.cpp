#include "train/class_shards.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "bagel/float_env.h"
#include "bagel/huge_pages.h"
#include "bagel/parallel_errors.h"

namespace bagel::train {

namespace {

// The columns [first, first + k) of the rows [lo, hi) of `full` (rows of
// `width` values), as rows of k in `group`; and back. A plain loop: k is a
// few floats, and std::copy_n made each feature's copy a memmove call.
void take_columns(const float* full, int width, int first, int k, Index lo, Index hi,
                  float* group) {
  for (Index j = lo; j < hi; ++j) {
    const float* from = full + static_cast<std::size_t>(j) * width + first;
    float* to = group + static_cast<std::size_t>(j) * k;
    for (int i = 0; i < k; ++i) to[i] = from[i];
  }
}

void put_columns(const float* group, int width, int first, int k, Index lo, Index hi,
                 float* full) {
  for (Index j = lo; j < hi; ++j) {
    const float* from = group + static_cast<std::size_t>(j) * k;
    float* to = full + static_cast<std::size_t>(j) * width + first;
    for (int i = 0; i < k; ++i) to[i] = from[i];
  }
}

// The labels as the group of classes [first, first + k) sees them: its own
// classes numbered from 0, and -1 for a row of another group's class, a
// negative for each of the group's outputs (OneVsRestLogLoss compares the
// label with each output's).
void group_labels(std::span<const std::int32_t> labels, int first, int k,
                  std::vector<std::int32_t>& out) {
  out.resize(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::int32_t y = labels[i] - first;
    out[i] = y >= 0 && y < k ? y : -1;
  }
}

}  // namespace

ClassShards::ClassShards(const Model& model, const OptimizerConfig& c, const TrainPlan& plan,
                         const Dataset& data, double max_copy_bytes)
    : k_(model.num_outputs),
      features_(model.num_features),
      team_(static_cast<int>(plan.class_starts.size()) - 1),
      data_(&data) {
  const std::vector<int>& starts = plan.class_starts;
  const int groups = static_cast<int>(starts.size()) - 1;
  if (groups < 1 || starts.back() != k_)
    throw std::logic_error("ClassShards: the plan's class groups do not cover the model's " +
                           std::to_string(k_) + " classes");
  shards_.resize(static_cast<std::size_t>(groups));  // never moved after: the layers hold spans
  const CsrMatrix& x = data.x;
  // Each group's weights allocated, first touched and filled by the thread
  // that trains them: the copies run side by side, and on a machine with
  // several memory nodes the pages land on that thread's.
  team_.run([&](int s) {
    Shard& sh = shards_[static_cast<std::size_t>(s)];
    sh.first = starts[static_cast<std::size_t>(s)];
    sh.k = starts[static_cast<std::size_t>(s) + 1] - sh.first;
    sh.weight = huge_vector<float>(static_cast<std::size_t>(features_) * sh.k);
    sh.padded_bias.assign(static_cast<std::size_t>(sh.k) + 2 * kPad, 0.0f);
    sh.bias = std::span<float>(sh.padded_bias).subspan(kPad, static_cast<std::size_t>(sh.k));
    std::copy_n(model.bias.begin() + sh.first, sh.k, sh.bias.begin());
    sh.data.name = data.name;
    sh.data.x = CsrMatrix::view(x.rows(), x.cols(), x.indptr(), x.indices(), x.data());
    group_labels(data.y, sh.first, sh.k, sh.data.y);
    sh.data.weight = data.weight;
    take_columns(model.weight.data(), k_, sh.first, sh.k, 0, features_, sh.weight.data());
    sh.layer.emplace(sh.weight, sh.bias, features_, sh.k, c.l2, c.l1, c.bias_rate);
  });
  const double copy_bytes = double(x.nonZeros()) * (sizeof(Index) + sizeof(float)) +
                            double(x.rows()) * (sizeof(Index) + sizeof(std::int32_t));
  gathered_ = groups > 1 && copy_bytes <= max_copy_bytes;
}

bool ClassShards::gather_epoch(std::span<const Index> order, int s, RegionErrors& errors) {
  const Dataset& data = *data_;
  if (!gather_together(epoch_, data, order, s, team_, errors)) return false;
  // Each group: its labels (relative to its first class, as sh.data's) and
  // the rows' weights, in the epoch's order.
  Shard& sh = shards_[static_cast<std::size_t>(s)];
  errors.run([&] {
    const CsrMatrix& x = epoch_.matrix();
    sh.epoch.name = data.name;
    sh.epoch.x = CsrMatrix::view(x.rows(), x.cols(), x.indptr(), x.indices(), x.data());
    group_labels(epoch_.labels(), sh.first, sh.k, sh.epoch.y);
    sh.epoch.weight.resize(data.weight.empty() ? 0 : order.size());
    for (std::size_t i = 0; i < sh.epoch.weight.size(); ++i)
      sh.epoch.weight[i] = data.weight[static_cast<std::size_t>(order[i])];
  });
  return !errors.failed();
}

void ClassShards::start_averaging() {
  for (Shard& sh : shards_) sh.layer->start_averaging();
}

void ClassShards::restore_averaging(std::span<const float> weight_sum,
                                    std::span<const double> bias_sum, std::int64_t steps) {
  for (Shard& sh : shards_) {
    std::vector<float> w(sh.weight.size());
    take_columns(weight_sum.data(), k_, sh.first, sh.k, 0, features_, w.data());
    sh.layer->restore_averaging(w, bias_sum.subspan(static_cast<std::size_t>(sh.first),
                                                    static_cast<std::size_t>(sh.k)),
                                steps);
  }
}

double ClassShards::run_epoch(std::span<const Index> order, const OptimizerConfig& c,
                              const Schedule& schedule, std::int64_t& step, DivergenceWatch& watch,
                              Progress& progress) {
  std::vector<double> loss(shards_.size(), 0.0);
  // Each group's running mean loss; their sum is the model's, for progress.
  // NaN until the group's first report: the sum waits for every group
  // (one group's alone read as half the model's loss).
  std::vector<std::atomic<double>> running(shards_.size());
  for (std::atomic<double>& r : running) r.store(std::numeric_limits<double>::quiet_NaN());
  std::vector<std::unique_ptr<DivergenceWatch>> watches;
  for (const Shard& sh : shards_)
    watches.push_back(
        std::make_unique<DivergenceWatch>(watch.limit() * sh.k / k_, &progress, watch.counted_share()));
  std::int64_t taken = 0;
  RegionErrors errors;
  team_.run([&](int s) {
    const DenormalsAreZero flush_denormals;
    Shard& sh = shards_[static_cast<std::size_t>(s)];
    const bool gathered = gathered_ && gather_epoch(order, s, errors);
    if (!errors.failed())
      errors.run([&] {
        if (!sh.scratch) sh.scratch.emplace(c.batch_size, sh.k, Head::kOneVsRest);
        StepClock clock{step};
        loss[static_cast<std::size_t>(s)] = bagel::train::run_epoch(
            *sh.layer, gathered ? sh.epoch : sh.data,
            gathered ? epoch_.local_rows() : order, c.batch_size, schedule, clock, *sh.scratch,
            sh.window, *watches[static_cast<std::size_t>(s)],
            [&](std::size_t done, double mean) {
              running[static_cast<std::size_t>(s)].store(mean, std::memory_order_relaxed);
              if (s != 0) return;
              double total = 0;
              for (const std::atomic<double>& r : running) total += r.load(std::memory_order_relaxed);
              if (std::isnan(total)) return;
              progress.update(static_cast<std::int64_t>(done), total);
            },
            0, gathered);
        sh.layer->flush();
        if (s == 0) taken = clock.taken;
      });
  });
  errors.rethrow();
  step += taken;
  // A group that diverged, or a stop, halts the caller's watch too: the
  // group's mean loss over its share of the limit is the model's over all of it.
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    const DivergenceWatch& w = *watches[s];
    if (w.stopped() || w.tripped()) {
      watch.ok(w.rows(), w.stopped() ? 0.0 : w.loss() * k_ / shards_[s].k, w.limited(), true);
      break;
    }
  }
  double total = 0;
  for (const double l : loss) total += l;
  return total;
}

void ClassShards::skip_unused_rows(Index rows) {
  for (Shard& sh : shards_) sh.layer->skip_unused_rows(rows);
}

void ClassShards::write_model(Model& model) const {
  const int groups = static_cast<int>(shards_.size());
  // Each thread merges one range of features, every group's columns.
  team_.run([&](int s) {
    for (const Shard& g : shards_)
      put_columns(g.weight.data(), k_, g.first, g.k, features_ * s / groups, features_ * (s + 1) / groups,
                  model.weight.data());
  });
  for (const Shard& sh : shards_) std::copy(sh.bias.begin(), sh.bias.end(), model.bias.begin() + sh.first);
}

bool ClassShards::weights_finite() const {
  std::vector<char> finite(shards_.size(), 1);
  team_.run([&](int s) {
    const Shard& sh = shards_[static_cast<std::size_t>(s)];
    finite[static_cast<std::size_t>(s)] = all_finite(sh.weight) && all_finite(sh.bias);
  });
  return std::find(finite.begin(), finite.end(), 0) == finite.end();
}

void ClassShards::write_average(std::span<float> weight, std::span<float> bias) {
  for (Shard& sh : shards_) {
    if (sh.mean_weight.empty()) sh.mean_weight = huge_vector<float>(sh.weight.size());
    sh.mean_bias.resize(sh.bias.size());
    sh.layer->write_average(sh.mean_weight, sh.mean_bias);
    put_columns(sh.mean_weight.data(), k_, sh.first, sh.k, 0, features_, weight.data());
    std::copy(sh.mean_bias.begin(), sh.mean_bias.end(), bias.begin() + sh.first);
  }
}

void ClassShards::average_sums(std::vector<float>& weight_sum, std::vector<double>& bias_sum,
                               std::int64_t& steps) const {
  weight_sum.resize(static_cast<std::size_t>(features_) * k_);
  bias_sum.resize(static_cast<std::size_t>(k_));
  for (const Shard& sh : shards_) {
    const std::span<const float> w = sh.layer->average_weight_sum();
    const std::span<const double> b = sh.layer->average_bias_sum();
    put_columns(w.data(), k_, sh.first, sh.k, 0, features_, weight_sum.data());
    std::copy(b.begin(), b.end(), bias_sum.begin() + sh.first);
  }
  steps = shards_.front().layer->average_steps();
}

}  // namespace bagel::train
