#include <chrono>
#include <cstdio>
#include <iostream>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/feature_order.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/model_dir.h"
#include "bagel/predict.h"
#include "bagel/progress.h"
#include "bagel/sample_weights.h"
#include "bagel/trainer.h"
#include "commands.h"

namespace bagel::cli {

namespace {

using Clock = std::chrono::steady_clock;

std::string data_line(const Dataset& d) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "%s: %d rows, %d features, %lld non-zeros (%.1f per row)%s",
                d.name.c_str(), d.x.rows(), d.x.cols(), static_cast<long long>(d.x.nonZeros()),
                d.x.rows() ? double(d.x.nonZeros()) / d.x.rows() : 0.0,
                d.x.is_mapped() ? ", memory-mapped" : "");
  return buf;
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a model from a JSON config");
  cmd->add_option("-c,--config", o.config, "Config file (JSON; see configs/example.json)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides,
                  "Override one config key, e.g. --set optimizer.epochs=10 (repeatable)");
  cmd->add_option("-o,--output", o.output,
                  "Model directory (overrides the config's \"output\"): a new or empty folder, "
                  "or one holding a bagel model, whose model files are replaced (other files "
                  "are kept)");
  cmd->add_flag("--force", o.force,
                "Also write into a folder of other files, beside them (none is removed or "
                "overwritten)");
  cmd->add_flag("-q,--quiet", o.quiet, "No progress or summary on stderr");
  return cmd;
}

int run_train(const TrainOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  TrainConfig config = load_train_config(o.config, overrides);
  if (!o.output.empty()) config.output = o.output, config.resolved["output"] = o.output;
  // Before any data is read: a refused folder must not cost a training run.
  check_model_dir(config.output, o.force);
  Progress progress(Progress::detect(o.quiet), std::cerr);

  TrainingData data = load_training_data(config);
  const Classes& classes = data.classes;
  const std::vector<double>& class_weight = data.class_weight;
  Dataset& train = data.train;
  std::optional<Dataset>& valid = data.valid;
  const double load_seconds = data.load_seconds;

  progress.message(data_line(train));
  if (valid) progress.message(data_line(*valid));
  char buf[200];
  std::snprintf(buf, sizeof buf, "loaded in %.2fs; %zu classes, %s layer", load_seconds,
                classes.size(), to_string(config.layer).c_str());
  progress.message(buf);

  const Index num_features = std::max(train.x.cols(), valid ? valid->x.cols() : 0);
  // The sparse layer trains on features numbered by frequency (feature_order.h);
  // the metrics below use the same numbering, then the model gets its own back.
  const auto t_reorder = Clock::now();
  std::optional<FeatureOrder> order;
  if (reorder_pays_off(config.optimizer, config.layer,
                       training_threads(config.optimizer, train.x.rows()))) {
    order = FeatureOrder::by_frequency(train.x, num_features);
    order->apply(train.x);
    if (valid) order->apply(valid->x);
  }
  const double reorder_seconds = std::chrono::duration<double>(Clock::now() - t_reorder).count();

  Model model = Model::zeros(classes.names, classes.numeric, num_features);
  TrainingSummary summary = train_model(model, train, valid ? &*valid : nullptr,
                                        config.optimizer, config.layer, progress);
  summary.seconds += reorder_seconds;

  const Metrics train_metrics = evaluate(model, train.x, train.y);
  std::optional<Metrics> valid_metrics;
  if (valid) valid_metrics = evaluate(model, valid->x, valid->y);
  if (order) order->restore(model);

  model.config = config.resolved;
  model.training = summary_to_json(summary);
  model.training["load_seconds"] = load_seconds;
  model.training["features_reordered"] = order.has_value();
  model.training["reorder_seconds"] = reorder_seconds;  // part of train_seconds
  model.training["train_rows"] = train.x.rows();
  if (config.optimizer.class_weight.kind != ClassWeightSpec::Kind::kNone) {
    nlohmann::json weights = nlohmann::json::object();
    for (std::size_t c = 0; c < classes.size(); ++c) weights[classes.names[c]] = class_weight[c];
    model.training["class_weights"] = weights;
  }
  model.training["train_nonzeros"] = train.x.nonZeros();
  model.training["train_metrics"] = metrics_to_json(train_metrics, model.classes);
  if (valid_metrics) model.training["valid_metrics"] = metrics_to_json(*valid_metrics, model.classes);
  model.training["bagel_version"] = BAGEL_VERSION;
  save_model(model, config.output, o.force);

  std::snprintf(buf, sizeof buf, "trained %d epoch%s in %.2fs (load %.2fs)%s",
                summary.epochs_run, summary.epochs_run == 1 ? "" : "s", summary.seconds,
                load_seconds,
                summary.stopped_early
                    ? (", stopped early; kept epoch " + std::to_string(summary.best_epoch)).c_str()
                    : "");
  progress.message(buf);
  progress.message("train: " + metrics_summary(train_metrics));
  if (valid_metrics) progress.message("valid: " + metrics_summary(*valid_metrics));
  progress.message("model saved to " + config.output);
  return 0;
}

}  // namespace bagel::cli
