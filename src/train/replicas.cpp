#include "train/replicas.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "bagel/float_env.h"
#include "bagel/huge_pages.h"
#include "bagel/parallel_errors.h"

namespace bagel::train {

namespace {

// The arrays one combination works on: see replicas.h. copies[r] is copy
// r's array (true weight = scales[r] * stored), `base` the arrays at the
// last combination, `velocity` the momentum, moved[j] the block in which row
// j's velocity last moved. `sparse`: a copy whose stored row equals the base
// did not touch it and does not count; otherwise every copy counts (the
// decay or shrinkage changed every row). Built once per combination, so
// that a row costs no more than its arithmetic.
struct Combination {
  float* const* copies;
  int count;
  const float* scales;
  float* base;
  float* velocity;
  std::uint32_t* moved;
  std::uint32_t block;
  int k;
  bool sparse;
  const MomentumDecay* decay;

  void row(std::size_t j) const {
    constexpr int kMaxK = 64;
    float change[kMaxK];
    const std::size_t o = j * static_cast<std::size_t>(k);
    float* b = base + o;
    float* v = velocity + o;
    int n = 0;
    // Who touched it: decided on the whole row, before any chunk is written.
    for (int r = 0; r < count; ++r) {
      bool changed = !sparse;
      const float* w = copies[r] + o;
      for (int i = 0; i < k && !changed; ++i) changed = w[i] != b[i];
      n += changed;
    }
    if (n == 0) return;
    const float mean = decay->inverse(n);
    const float d = (*decay)(n, block - moved[j]);
    for (int i0 = 0; i0 < k; i0 += kMaxK) {  // chunks of the row, for any k
      const int m = std::min(kMaxK, k - i0);
      for (int i = 0; i < m; ++i) change[i] = 0;
      for (int r = 0; r < count; ++r) {
        const float s = scales[r];
        const float* w = copies[r] + o + i0;
        for (int i = 0; i < m; ++i) change[i] += w[i] * s - b[i0 + i];
      }
      for (int i = 0; i < m; ++i) {
        v[i0 + i] = d * v[i0 + i] + change[i] * mean;
        b[i0 + i] += v[i0 + i];
      }
      for (int r = 0; r < count; ++r) std::copy(b + i0, b + i0 + m, copies[r] + o + i0);
    }
    moved[j] = block;
  }

  // The cache lines row j's combination reads and writes: the rows a block
  // touched are scattered, and waiting on each copy's row in turn takes a
  // third of the combination's time on 20 classes.
  void prefetch(std::size_t j) const {
    const std::size_t first = j * static_cast<std::size_t>(k);
    const std::size_t last = first + static_cast<std::size_t>(k) - 1;
    for (int r = 0; r < count; ++r) {
      __builtin_prefetch(copies[r] + first, 1);
      __builtin_prefetch(copies[r] + last, 1);
    }
    __builtin_prefetch(base + first, 1);
    __builtin_prefetch(base + last, 1);
    __builtin_prefetch(velocity + first, 1);
    __builtin_prefetch(velocity + last, 1);
  }

  // row() for one value a row (binary models): the same arithmetic without
  // the loops over the row, whose copies become a memmove call each.
  inline void row_of_one(std::size_t j) const {
    const float b = base[j];
    int n = 0;
    float change = 0;
    for (int r = 0; r < count; ++r) {
      const float w = copies[r][j];
      n += !sparse || w != b;
      change += w * scales[r] - b;
    }
    if (n == 0) return;
    velocity[j] = (*decay)(n, block - moved[j]) * velocity[j] + change * decay->inverse(n);
    base[j] = b + velocity[j];
    for (int r = 0; r < count; ++r) copies[r][j] = base[j];
    moved[j] = block;
  }
};

// The rows some copy stepped on, in this rank's share of the rows, in order;
// then clears the share's bits for the next block. The share is every
// thread-th run of kRunWords words: features numbered by frequency put the
// rows touched in every block first, so halves by row number would leave one
// thread waiting a fifth of the time at the barrier (generated binary data).
template <class RowFn>
void combine_touched(const Combination& weights, std::span<TouchLog> logs, int rank,
                     RowFn&& row) {
  constexpr std::size_t kRunWords = 16;  // 1024 rows
  constexpr std::size_t kAhead = 8;      // rows prefetched ahead of the one combined
  std::size_t touched[kRunWords * 64];
  const std::size_t words = logs.front().words();
  const std::size_t stride = kRunWords * logs.size();
  for (std::size_t lo = kRunWords * static_cast<std::size_t>(rank); lo < words; lo += stride) {
    const std::size_t hi = std::min(words, lo + kRunWords);
    std::size_t count = 0;
    for (std::size_t w = lo; w < hi; ++w) {
      std::uint64_t any = 0;
      for (const TouchLog& log : logs) any |= log.word(w);
      for (; any != 0; any &= any - 1)
        touched[count++] = w * 64 + static_cast<std::size_t>(std::countr_zero(any));
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (i + kAhead < count) weights.prefetch(touched[i + kAhead]);
      row(touched[i]);
    }
    for (TouchLog& log : logs) log.clear(lo, hi);
  }
}

}  // namespace

MomentumDecay::MomentumDecay(int copies)
    : table_(static_cast<std::size_t>(copies + 1) * kAges, 0.0f),
      inverse_(static_cast<std::size_t>(copies + 1), 0.0f) {
  for (int n = 1; n <= copies; ++n) inverse_[static_cast<std::size_t>(n)] = 1.0f / static_cast<float>(n);
  for (int n = 2; n <= copies; ++n)
    for (std::uint32_t age = 0; age < kAges; ++age)
      table_[static_cast<std::size_t>(n) * kAges + age] =
          std::pow(1.0f - 1.0f / static_cast<float>(n), static_cast<float>(age));
}

Replicas::Replicas(const Model& model, const OptimizerConfig& c, const TrainPlan& plan)
    : threads_(plan.threads), blocks_(plan.blocks_per_epoch), sparse_(plan.sparse_sync),
      k_(model.num_outputs), decay_(plan.threads), team_(plan.threads) {
  const std::size_t copies = static_cast<std::size_t>(std::max(threads_ - 1, 0));
  weight_.reserve(copies);
  bias_.reserve(copies);
  layers_.reserve(copies);
  for (std::size_t r = 0; r < copies; ++r) {
    weight_.push_back(huge_vector<float>(model.weight.size()));
    bias_.push_back(std::vector<float>(model.bias.size()));
    layers_.emplace_back(weight_.back(), bias_.back(), model.num_features, model.num_outputs,
                         c.l2, c.l1, c.bias_rate);
  }
  if (sparse_)
    for (int r = 0; r < threads_; ++r) logs_.emplace_back(model.num_features);
  ones_.assign(static_cast<std::size_t>(threads_), 1.0f);
  base_weight_ = huge_vector<float>(model.weight.size());
  velocity_weight_ = huge_vector<float>(model.weight.size());
  base_bias_.resize(model.bias.size());
  velocity_bias_.resize(model.bias.size());
  moved_weight_.resize(static_cast<std::size_t>(model.num_features), 0);
}

void Replicas::start_averaging() {
  for (EmbeddingBagLayer& l : layers_) l.start_averaging();
}

void Replicas::write_average(const EmbeddingBagLayer& layer0, std::span<float> weight,
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

float* Replicas::weight_of(Model& model, int r) {
  return r == 0 ? model.weight.data() : weight_[static_cast<std::size_t>(r - 1)].data();
}

float* Replicas::bias_of(Model& model, int r) {
  return r == 0 ? model.bias.data() : bias_[static_cast<std::size_t>(r - 1)].data();
}

void Replicas::combine(Model& model, int rank, std::span<const float> scales) {
  float* weights[kMaxThreads];
  float* biases[kMaxThreads];
  for (int r = 0; r < threads_; ++r) {
    weights[r] = weight_of(model, r);
    biases[r] = bias_of(model, r);
  }
  const Combination w{weights, threads_, scales.data(), base_weight_.data(),
                      velocity_weight_.data(), moved_weight_.data(), block_, k_, sparse_, &decay_};
  if (sparse_ && k_ == 1) {
    combine_touched(w, logs_, rank, [&](std::size_t j) { w.row_of_one(j); });
  } else if (sparse_) {
    combine_touched(w, logs_, rank, [&](std::size_t j) { w.row(j); });
  } else {
    const std::size_t features = static_cast<std::size_t>(model.num_features);
    const std::size_t lo = features * rank / threads_, hi = features * (rank + 1) / threads_;
    if (k_ == 1) {
      for (std::size_t j = lo; j < hi; ++j) w.row_of_one(j);
    } else {
      for (std::size_t j = lo; j < hi; ++j) w.row(j);
    }
  }
  if (rank == 0) {  // the biases: one row of k, moved by whichever copy changed it
    const Combination b{biases, threads_, ones_.data(), base_bias_.data(), velocity_bias_.data(),
                        &moved_bias_, block_, k_, true, &decay_};
    if (k_ == 1) {
      b.row_of_one(0);
    } else {
      b.row(0);
    }
  }
}

// Every copy and the base = the model, over this rank's share of the arrays.
void Replicas::copy_model(Model& model, int rank) {
  const std::size_t m = model.weight.size();
  const std::size_t lo = m * rank / threads_, hi = m * (rank + 1) / threads_;
  for (std::vector<float>& w : weight_)
    std::copy(model.weight.begin() + lo, model.weight.begin() + hi, w.begin() + lo);
  std::copy(model.weight.begin() + lo, model.weight.begin() + hi, base_weight_.begin() + lo);
  if (rank == 0) {
    for (std::vector<float>& b : bias_) b = model.bias;
    base_bias_ = model.bias;
  }
}

double Replicas::run_epoch(EmbeddingBagLayer& layer0, Model& model, const Dataset& data,
                           std::span<const Index> order, const OptimizerConfig& c,
                           const Schedule& schedule, std::int64_t& step, DivergenceWatch& watch,
                           Progress& progress) {
  const std::size_t n = order.size();
  std::vector<double> loss(static_cast<std::size_t>(threads_), 0.0);
  std::vector<float> scales(static_cast<std::size_t>(threads_), 1.0f);
  std::vector<std::int64_t> steps(static_cast<std::size_t>(threads_), 0);
  RegionErrors errors;
  team_.run([&](int rank) {
    const DenormalsAreZero flush_denormals;
    EmbeddingBagLayer& own = rank == 0 ? layer0 : layers_[static_cast<std::size_t>(rank - 1)];
    TouchLog* log = sparse_ ? &logs_[static_cast<std::size_t>(rank)] : nullptr;
    LoggedLayer layer{own, log};
    if (!copies_current_) copy_model(model, rank);
    std::optional<BatchScratch> scratch;
    errors.run([&] { scratch.emplace(c.batch_size, k_, model.head()); });
    RowWindow window;
    StepClock clock{step, threads_, rank};
    const std::size_t lo = n * rank / threads_, hi = n * (rank + 1) / threads_;
    team_.barrier();  // rank 0 trains on the model's arrays: copies first
    for (int b = 0; b < blocks_; ++b) {
      const std::size_t a = lo + (hi - lo) * b / blocks_, e = lo + (hi - lo) * (b + 1) / blocks_;
      // Every thread takes every block's barriers, stopped or not.
      if (!watch.halted() && !errors.failed())
        errors.run([&] {
          loss[rank] += bagel::train::run_epoch(
              layer, data, order.subspan(a, e - a), c.batch_size, schedule, clock, *scratch,
              window, watch, [&](std::size_t done, double mean) {
                if (rank == 0) progress.update(static_cast<std::int64_t>(a - lo + done) * threads_, mean);
              });
        });
      scales[rank] = own.take_scale();
      team_.barrier();
      combine(model, rank, scales);
      team_.barrier();
      if (rank == 0) ++block_;
      team_.barrier();
    }
    steps[static_cast<std::size_t>(rank)] = clock.taken;
  });
  errors.rethrow();
  copies_current_ = true;
  for (const std::int64_t taken : steps) step += taken;
  double total = 0;
  for (const double l : loss) total += l;
  return total;
}

}  // namespace bagel::train
