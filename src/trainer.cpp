#include "bagel/trainer.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "bagel/dense_linear.h"
#include "bagel/embedding_bag.h"
#include "bagel/error.h"
#include "bagel/loss.h"
#include "bagel/predict.h"
#include "bagel/schedule.h"

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

// One pass over `order`; returns the summed loss. Template over the layer so
// forward/step are direct calls.
template <class Layer>
double run_epoch(Layer& layer, const Dataset& data, std::span<const Index> order, int batch_size,
                 const Schedule& schedule, std::int64_t& step, BatchScratch& scratch,
                 Progress& progress) {
  const int k = layer.outputs();
  double loss_sum = 0;
  const std::size_t n = order.size();
  for (std::size_t begin = 0; begin < n; begin += batch_size) {
    const std::size_t count = std::min<std::size_t>(batch_size, n - begin);
    const std::span<const Index> rows = order.subspan(begin, count);
    layer.forward(data.x, rows, scratch.logits.data());
    for (std::size_t b = 0; b < count; ++b)
      loss_sum += head_loss_and_grad(scratch.logits.data() + b * k, data.y[rows[b]],
                                     scratch.grads.data() + b * k, k);
    layer.step(data.x, rows, scratch.grads.data(), schedule.eta(++step));
    if ((begin / batch_size) % 256 == 0)
      progress.update(static_cast<std::int64_t>(begin + count), loss_sum / double(begin + count));
  }
  return loss_sum;
}

void check_finite(const Model& model, double mean_loss, int epoch, const OptimizerConfig& c) {
  bool finite = std::isfinite(mean_loss);
  for (std::size_t i = 0; finite && i < model.weight.size(); ++i) finite = std::isfinite(model.weight[i]);
  for (float b : model.bias) finite = finite && std::isfinite(b);
  if (finite) return;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "training diverged in epoch %d (mean loss %g, weights not finite): lower "
                "optimizer.learning_rate (now %g), use schedule \"invscaling\" or \"optimal\", "
                "or scale the feature values",
                epoch, mean_loss, c.learning_rate);
  throw Error(buf);
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
  const std::vector<double> proba = predict_proba(model, data.x);
  return compute_metrics(data.y, proba, model.num_classes());
}

template <class Layer>
TrainingSummary train_with(Layer& layer, Model& model, const Dataset& train, const Dataset* valid,
                           const OptimizerConfig& c, Progress& progress) {
  TrainingSummary summary;
  const auto t_start = Clock::now();
  std::vector<Index> order(static_cast<std::size_t>(train.x.rows()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Index>(i);
  std::mt19937_64 rng(c.seed);
  const std::int64_t steps_per_epoch =
      (static_cast<std::int64_t>(order.size()) + c.batch_size - 1) / c.batch_size;
  const Schedule schedule(c, steps_per_epoch * c.epochs);
  BatchScratch scratch(c.batch_size, layer.outputs());
  std::int64_t step = 0;

  double best_loss = std::numeric_limits<double>::infinity();
  int bad_epochs = 0;
  int best_epoch = 0;
  std::vector<float> best_weight, best_bias;
  for (int epoch = 1; epoch <= c.epochs; ++epoch) {
    if (c.shuffle) shuffle_rows(order, rng);
    progress.start_epoch(epoch, c.epochs, static_cast<std::int64_t>(order.size()));
    const auto t_epoch = Clock::now();
    const double loss_sum = run_epoch(layer, train, order, c.batch_size, schedule, step, scratch, progress);
    layer.flush();
    EpochRecord rec;
    rec.epoch = epoch;
    rec.seconds = seconds_since(t_epoch);
    rec.train_loss = order.empty() ? 0.0 : loss_sum / double(order.size());
    rec.samples_per_second = rec.seconds > 0 ? double(order.size()) / rec.seconds : 0.0;
    rec.learning_rate = schedule.eta(std::max<std::int64_t>(step, 1));
    check_finite(model, rec.train_loss, epoch, c);
    if (valid != nullptr) rec.valid = evaluate(model, *valid);
    progress.end_epoch(epoch_line(rec, c.epochs));
    summary.history.push_back(rec);
    summary.epochs_run = epoch;
    summary.best_epoch = epoch;
    if (c.patience > 0 && valid != nullptr) {
      if (rec.valid->log_loss < best_loss - c.min_delta) {
        best_loss = rec.valid->log_loss;
        best_epoch = epoch;
        best_weight = model.weight;
        best_bias = model.bias;
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
  return {{"epochs_run", s.epochs_run}, {"best_epoch", s.best_epoch},
          {"stopped_early", s.stopped_early}, {"train_seconds", s.seconds}, {"history", history}};
}

TrainingSummary train_model(Model& model, const Dataset& train_data, const Dataset* valid,
                      const OptimizerConfig& config, LayerKind layer, Progress& progress) {
  if (layer == LayerKind::kDense) {
    DenseLinearLayer dense(model, config.l2, config.l1);
    return train_with(dense, model, train_data, valid, config, progress);
  }
  EmbeddingBagLayer sparse(model.weight, model.bias, model.num_features, model.num_outputs,
                           config.l2, config.l1);
  return train_with(sparse, model, train_data, valid, config, progress);
}

}  // namespace bagel
