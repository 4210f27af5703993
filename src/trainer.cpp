#include "bagel/trainer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "bagel/dense_linear.h"
#include "bagel/embedding_bag.h"
#include "bagel/error.h"
#include "bagel/feature_order.h"
#include "bagel/float_env.h"
#include "bagel/predict.h"
#include "bagel/rate_calibration.h"
#include "bagel/schedule.h"
#include "train/checkpoint_pace.h"
#include "train/class_shards.h"
#include "train/epoch_loop.h"
#include "train/replicas.h"

namespace bagel {

using train::Clock;
using train::Diverged;
using train::DivergenceWatch;
using train::seconds_since;

namespace {

bool weights_finite(const Model& model) {
  return train::all_finite(model.weight) && train::all_finite(model.bias);
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
                           const OptimizerConfig& config, const TrainPlan& plan,
                           Progress& progress, Checkpointing checkpoints) {
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
  train::BatchScratch scratch(c.batch_size, layer.outputs(), model.head());
  RowWindow window;
  std::optional<train::CopyAhead> ahead;  // a second core copying the rows (plan.gather_ahead)
  if (plan.gather_ahead) ahead.emplace();
  train::CopyAhead* const gather_ahead = ahead ? &*ahead : nullptr;
  std::int64_t step = 0;
  const int threads = plan.threads;
  std::optional<train::Replicas> replicas;
  // The classes split between the threads: they train their own weights,
  // and `layer` (the model's arrays) only receives the merged result.
  std::optional<train::ClassShards> shards;
  std::vector<Index> feature_bounds;  // exact: each thread's features
  std::optional<train::ThreadTeam> team;  // Hogwild's and exact's threads
  if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
    if (plan.strategy == ParallelStrategy::kHogwild || plan.strategy == ParallelStrategy::kExact)
      team.emplace(threads);
    if (plan.strategy == ParallelStrategy::kHogwild) layer.set_threads(threads);
    if (plan.strategy == ParallelStrategy::kExact)
      feature_bounds = split_by_counts(train.x, layer.num_features(), threads);
    if (plan.strategy == ParallelStrategy::kReplicas) replicas.emplace(model, c, plan);
    if (plan.strategy == ParallelStrategy::kClassShards) shards.emplace(model, c, plan, train);
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
  if (c.average && valid != nullptr) averaged = model;
  auto start_averaging = [&] {
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (shards) return shards->start_averaging();
    layer.start_averaging();
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (replicas) replicas->start_averaging();
  };
  auto write_average = [&](std::span<float> weight, std::span<float> bias) {
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
      if (replicas) return replicas->write_average(layer, weight, bias);
      if (shards) return shards->write_average(weight, bias);
    }
    layer.write_average(weight, bias);
  };

  const double watch_limit = DivergenceWatch::limit_for(model.head(), model.num_classes(), train, c.schedule);
  const double watch_share = DivergenceWatch::counted_share_of(train);
  double best_loss = std::numeric_limits<double>::infinity();
  int bad_epochs = 0;
  int best_epoch = 0;
  std::vector<float> best_weight, best_bias;
  int first_epoch = 1;
  if (const TrainingCheckpoint* r = checkpoints.resume; r != nullptr && r->epoch > 0) {
    // The weights are the caller's (the model holds them); the rest is here.
    for (int e = 1; e <= r->epoch; ++e)
      if (c.shuffle) shuffle_rows(order, rng);
    step = r->step;
    first_epoch = r->epoch + 1;
    summary.history = r->history;
    summary.epochs_run = summary.best_epoch = r->epoch;
    if (r->best_epoch > 0) {
      best_loss = r->best_loss, best_epoch = r->best_epoch, bad_epochs = r->bad_epochs;
      best_weight = r->best_weight, best_bias = r->best_bias;
    }
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (r->averaging) {
        if (shards) {
          shards->restore_averaging(r->average_weight_sum, r->average_bias_sum, r->average_steps);
        } else {
          layer.restore_averaging(r->average_weight_sum, r->average_bias_sum, r->average_steps);
        }
      }
  }
  // The model's weights after an epoch (the split classes' merged into it),
  // all finite.
  auto model_finite = [&] {
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>)
      if (shards) {
        if (!shards->weights_finite()) return false;
        shards->write_model(model);
        return true;
      }
    return weights_finite(model);
  };
  train::CheckpointPace pace;
  auto keep_checkpoint = [&](int epoch) {
    TrainingCheckpoint* k = checkpoints.latest;
    k->epoch = epoch;
    k->step = step;
    k->history = summary.history;
    k->best_loss = best_loss, k->best_epoch = best_epoch, k->bad_epochs = bad_epochs;
    k->best_weight = best_weight, k->best_bias = best_bias;
    k->weight = model.weight;  // copy-assigned: allocated once, reused every epoch
    k->bias = model.bias;
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
      k->averaging = c.average && epoch >= c.average_from;
      if (k->averaging && shards) {
        shards->average_sums(k->average_weight_sum, k->average_bias_sum, k->average_steps);
      } else if (k->averaging) {
        const auto w = layer.average_weight_sum();
        const auto b = layer.average_bias_sum();
        k->average_weight_sum.assign(w.begin(), w.end());
        k->average_bias_sum.assign(b.begin(), b.end());
        k->average_steps = layer.average_steps();
      }
    }
  };
  // Features the training rows never use (numbered last when the features
  // are numbered by frequency: every one but the first `used`) keep zero
  // weights: the end-of-epoch flush leaves them out. With averaging it
  // passed over every weight each epoch: 2^20 hashed features x 76 classes
  // on 2,000 rows, 64 ms an epoch against 4 ms of steps.
  if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
    const Index used = columns_used(train.x);
    if (shards) shards->skip_unused_rows(used);
    else layer.skip_unused_rows(used);
  }
  for (int epoch = first_epoch; epoch <= c.epochs; ++epoch) {
    if (c.average && epoch == c.average_from) start_averaging();
    if (c.shuffle) shuffle_rows(order, rng);
    progress.start_epoch(epoch, c.epochs, static_cast<std::int64_t>(order.size()));
    const auto t_epoch = Clock::now();
    double loss_sum = 0;
    DivergenceWatch watch(watch_limit, &progress, watch_share);
    if constexpr (std::is_same_v<Layer, EmbeddingBagLayer>) {
      switch (plan.strategy) {
        case ParallelStrategy::kReplicas:
          loss_sum = replicas->run_epoch(layer, model, train, order, c, schedule, step, watch, progress);
          break;
        case ParallelStrategy::kExact:
          loss_sum = train::run_epoch_exact(layer, model.head(), train, order, c, schedule, step, feature_bounds,
                                            *team, watch, progress);
          break;
        case ParallelStrategy::kHogwild:
          loss_sum = train::run_epoch_hogwild(layer, model.head(), train, order, c, schedule, step, *team,
                                              watch, progress);
          break;
        case ParallelStrategy::kClassShards:
          loss_sum = shards->run_epoch(order, c, schedule, step, watch, progress);
          break;
        case ParallelStrategy::kSingle:
          loss_sum = train::run_epoch_single(layer, train, order, c.batch_size, schedule, step,
                                             scratch, window, watch, progress, gather_ahead);
          break;
      }
    } else {
      loss_sum = train::run_epoch_single(layer, train, order, c.batch_size, schedule, step, scratch,
                                         window, watch, progress);
    }
    if (watch.stopped()) throw Interrupted();
    if (!order.empty())
      watch.ok(static_cast<std::int64_t>(order.size()), loss_sum / double(order.size()), 0, true);
    if (watch.stopped()) throw Interrupted();
    if (watch.tripped()) throw Diverged{epoch, watch.rows(), watch.loss(), watch.limited()};
    if (plan.strategy != ParallelStrategy::kClassShards) layer.flush();  // the shards flushed theirs
    EpochRecord rec;
    rec.epoch = epoch;
    rec.seconds = seconds_since(t_epoch);
    rec.train_loss = order.empty() ? 0.0 : loss_sum / double(order.size());
    rec.samples_per_second = rec.seconds > 0 ? double(order.size()) / rec.seconds : 0.0;
    rec.learning_rate = schedule.eta(std::max<std::int64_t>(step, 1));
    const bool keep = checkpoints.latest != nullptr && epoch < c.epochs && pace.due(rec.seconds);
    // The weights are read before the end only by validation and
    // checkpoints, and scanned then (and after the last epoch): a non-finite
    // loss shows most divergences, and the scan, the rest.
    const auto t_scan = Clock::now();
    if (!std::isfinite(rec.train_loss) || ((valid != nullptr || keep) && !model_finite()))
      throw Diverged{epoch, static_cast<std::int64_t>(order.size()), rec.train_loss, 0};
    const double scan_seconds = seconds_since(t_scan);
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
    if (keep) {
      const auto t_keep = Clock::now();
      keep_checkpoint(epoch);
      pace.kept(scan_seconds + seconds_since(t_keep));
    }
  }
  if (!summary.history.empty() && !model_finite()) {
    const EpochRecord& last = summary.history.back();
    throw Diverged{last.epoch, static_cast<std::int64_t>(order.size()), last.train_loss, 0};
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

nlohmann::json calibration_to_json(const RateCalibration& c) {
  nlohmann::json trials = nlohmann::json::array();
  for (const RateTrial& t : c.trials)
    trials.push_back({{"rate", t.rate},
                      {"holdout_log_loss", std::isfinite(t.holdout_log_loss)
                                               ? nlohmann::json(t.holdout_log_loss)
                                               : nlohmann::json(nullptr)},
                      {"holdout_accuracy", std::isfinite(t.holdout_log_loss)
                                               ? nlohmann::json(t.holdout_accuracy)
                                               : nlohmann::json(nullptr)}});
  return {{"rate", c.rate}, {"sample_rows", c.sample_rows}, {"folds", c.folds},
          {"mean_squared_norm", c.mean_squared_norm}, {"bias_rate", c.bias_rate},
          {"prior_log_loss", c.prior_log_loss}, {"no_signal", c.no_signal},
          {"seconds", c.seconds}, {"trials", trials}};
}

std::string kept_epoch_note(const TrainingSummary& s) {
  // Early stopping keeps the best epoch's weights, also when it ran out of
  // epochs before its patience.
  if (s.stopped_early) return ", stopped early; kept epoch " + std::to_string(s.best_epoch);
  if (s.best_epoch > 0 && s.best_epoch != s.epochs_run)
    return "; kept epoch " + std::to_string(s.best_epoch) + " (the best valid log loss)";
  return "";
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
                        {"bias_rate", s.bias_rate}, {"average", s.average},
                        {"plan", s.plan.to_json()}, {"history", history}};
  if (s.calibration) {
    out["rate_calibration"] = calibration_to_json(*s.calibration);
  } else if (!s.calibration_json.is_null()) {
    out["rate_calibration"] = s.calibration_json;
  }
  if (s.resumed_from_epoch > 0) out["resumed_from_epoch"] = s.resumed_from_epoch;
  nlohmann::json restarts = nlohmann::json::array();
  for (const RateRestart& r : s.restarts)
    restarts.push_back({{"learning_rate", r.learning_rate}, {"epoch", r.epoch}, {"rows", r.rows},
                        {"mean_loss", std::isfinite(r.mean_loss) ? nlohmann::json(r.mean_loss)
                                                                 : nlohmann::json(nullptr)},
                        {"limited_rows", r.limited_rows}});
  out["divergence_restarts"] = restarts;
  return out;
}

namespace {

TrainingSummary train_at_rate(Model& model, const Dataset& train_data, const Dataset* valid,
                              const OptimizerConfig& c, LayerKind layer, const TrainPlan& plan,
                              Progress& progress, Checkpointing checkpoints = {}) {
  TrainingSummary summary;
  if (layer == LayerKind::kDense) {
    DenseLinearLayer dense(model, c.l2, c.l1, c.bias_rate);
    summary = train_with(dense, model, train_data, valid, c, plan, progress, checkpoints);
  } else {
    EmbeddingBagLayer sparse(model.weight, model.bias, model.num_features, model.num_outputs, c.l2,
                             c.l1, c.bias_rate);
    summary = train_with(sparse, model, train_data, valid, c, plan, progress, checkpoints);
  }
  summary.plan = plan;
  return summary;
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
  if (2 * d.limited > d.rows && std::isfinite(d.loss))
    std::snprintf(buf, sizeof buf,
                  "training diverged in epoch %d at learning_rate %s (the steps of %lld of the "
                  "first %lld rows would have moved their logits by more than %g and were clipped)",
                  d.epoch, rate_text(c.learning_rate).c_str(), static_cast<long long>(d.limited),
                  static_cast<long long>(d.rows), kMaxLogitStep);
  else
    std::snprintf(buf, sizeof buf,
                  "training diverged in epoch %d (mean loss %.4g after %lld rows) at learning_rate %s",
                  d.epoch, d.loss, static_cast<long long>(d.rows), rate_text(c.learning_rate).c_str());
  return buf;
}

// "plan: 20 epochs (auto), linear schedule, learning_rate 0.0326 (auto: 14
// rates tried on 2000 rows in 0.08s), l2 0, batch 1, 1 thread": what will
// run, with the values "auto" resolved to.
std::string plan_line(const OptimizerConfig& asked, const OptimizerConfig& c,
                      const std::optional<RateCalibration>& calibration, const TrainPlan& plan) {
  char cal[240] = "";
  if (calibration)
    std::snprintf(cal, sizeof cal, " (auto: %zu rates tried on %lld rows in %.2fs%s)",
                  calibration->trials.size(), static_cast<long long>(calibration->sample_rows),
                  calibration->seconds,
                  calibration->no_signal ? "; no loss clearly beat the class shares held out, and 2^2 / "
                                           "mean |x|^2 got clearly more rows right"
                                         : "");
  char bias[120] = "";
  if (!asked.bias_rate_auto || c.bias_rate != 1)
    std::snprintf(bias, sizeof bias, ", bias_rate %s", rate_text(c.bias_rate).c_str());
  if (asked.bias_rate_auto && c.bias_rate != 1 && calibration)
    std::snprintf(bias + std::strlen(bias), sizeof bias - std::strlen(bias),
                  " (auto: mean |x|^2 %.3g times %g)", calibration->mean_squared_norm,
                  kSmallRowsBiasShare);
  char l1[64] = "";
  if (c.l1 > 0) std::snprintf(l1, sizeof l1, ", l1 %s", rate_text(c.l1).c_str());
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "plan: %s; %d epochs%s, %s schedule%s, learning_rate %s%s%s, l2 %s%s, batch %d",
                plan.describe().c_str(), c.epochs, asked.epochs <= 0 ? " (auto)" : "",
                to_string(c.schedule).c_str(),
                !c.average ? "" : asked.average_auto ? ", averaged (auto: few rows)" : ", averaged",
                c.schedule == ScheduleKind::kOptimal ? "set by \"optimal\"" : rate_text(c.learning_rate).c_str(),
                cal, bias, rate_text(c.l2).c_str(), l1, c.batch_size);
  return buf;
}

// The largest team training will open: the training threads, and all cores
// when it evaluates a valid set or calibrates the rate on several threads.
// Above 1, the guard ends OpenMP's pool when training ends (float_env.h);
// 1 when it opens none, so that a small single-threaded run leaves the
// caller's pool as it was.
int team_threads(const OptimizerConfig& c, const TrainPlan& plan, const Dataset* valid) {
  const int training = plan.threads;
  const bool all_cores = valid != nullptr || (c.learning_rate <= 0 && c.threads != 1);
  return all_cores ? std::max(plan.cores, training) : training;
}

// The settings a run trained with, as model.json records them. "optimal"
// ignores learning_rate (its placeholder is 1): its first step's rate is
// what the run began at.
void record_settings(TrainingSummary& summary, const OptimizerConfig& c) {
  summary.learning_rate =
      c.schedule == ScheduleKind::kOptimal ? Schedule(c, 1).eta(1) : c.learning_rate;
  summary.bias_rate = c.bias_rate;
  summary.epochs = c.epochs;
  summary.average = c.average;
}

}  // namespace

TrainingSummary train_fixed_rate(Model& model, const Dataset& train_data, const Dataset* valid,
                                 const OptimizerConfig& c, LayerKind layer, Progress& progress) {
  if ((c.learning_rate <= 0 && c.schedule != ScheduleKind::kOptimal) || c.epochs <= 0)
    throw Error("train_fixed_rate: learning_rate and epochs must be set");
  const TrainPlan plan = resolve_run(c, layer, train_data.x.rows(), train_data.weight, shape_of(model)).plan;
  const DenormalsAreZero flush_denormals(team_threads(c, plan, valid));
  try {
    TrainingSummary summary = train_at_rate(model, train_data, valid, c, layer, plan, progress);
    record_settings(summary, c);
    return summary;
  } catch (const Diverged& d) {
    throw Error(diverged_text(d, c));
  }
}

std::string resume_unsupported(const OptimizerConfig& c, LayerKind layer, const TrainPlan& plan) {
  if (c.average && layer == LayerKind::kDense)
    return "the dense layer's averaged SGD keeps running sums that are not saved";
  if (plan.strategy == ParallelStrategy::kReplicas)
    return "the replicas' copies and momentum are not saved (" + plan.describe() +
           "; \"threads\": 1 trains resumably)";
  return "";
}

TrainingSummary train_model(Model& model, const Dataset& train_data, const Dataset* valid,
                            const OptimizerConfig& config, LayerKind layer, Progress& progress,
                            Checkpointing checkpoints) {
  const ResolvedRun run =
      resolve_run(config, layer, train_data.x.rows(), train_data.weight, shape_of(model));
  OptimizerConfig c = run.optimizer;
  const TrainPlan& plan = run.plan;
  const DenormalsAreZero flush_denormals(team_threads(c, plan, valid));
  const auto t_start = Clock::now();
  if (!resume_unsupported(c, layer, plan).empty()) checkpoints.latest = nullptr;
  const TrainingCheckpoint* resume = checkpoints.resume;
  if (resume != nullptr && resume->epoch > 0) {
    if (const std::string why = resume_unsupported(c, layer, plan); !why.empty())
      // The stopped run trained resumably; these settings (another thread
      // count, say) would not go on from its state.
      throw ConfigError("optimizer", "the stopped run's saved state cannot go on with these settings: " + why);
    c.epochs = resume->epochs;
    c.learning_rate = resume->learning_rate;
    c.bias_rate = resume->bias_rate;
  }
  if (c.epochs <= 0) c.epochs = auto_epochs(train_data.x, c.average, train_data.weight);
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
      calibration = calibrate_learning_rate(train_data, model.num_classes(), model.head(), c);
      c.learning_rate = calibration->rate;
      c.bias_rate = calibration->bias_rate;  // bias_rate's own, or "auto" resolved
    }
  }
  progress.message(plan_line(config, c, calibration, plan));
  const StartingPoint start(model);
  std::vector<RateRestart> restarts;
  if (resume != nullptr) restarts = resume->restarts;
  for (;;) {
    if (TrainingCheckpoint* k = checkpoints.latest) {
      k->epoch = 0;  // nothing of this attempt yet (a restart drops the last one's)
      k->learning_rate = c.learning_rate;
      k->bias_rate = c.bias_rate;
      k->epochs = c.epochs;
      k->restarts = restarts;
      k->calibration = calibration       ? calibration_to_json(*calibration)
                       : resume != nullptr ? resume->calibration
                                           : nlohmann::json(nullptr);
    }
    try {
      TrainingSummary summary =
          train_at_rate(model, train_data, valid, c, layer, plan, progress, checkpoints);
      record_settings(summary, c);
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
        throw ConfigError("optimizer.learning_rate",
                          what + " after " + std::to_string(kMaxRestarts) +
                              " restarts at lower rates; check the feature values (scale them) "
                              "and set it lower, or leave it out (\"auto\")");
      restarts.push_back({c.learning_rate, d.epoch, d.rows, d.loss, d.limited});
      c.learning_rate /= kRestartFactor;
      progress.warn(what + "; restarting at learning_rate " + rate_text(c.learning_rate));
      start.restore(model);
    }
  }
}

}  // namespace bagel
