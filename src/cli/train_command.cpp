#include <cstdio>
#include <iostream>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/model_dir.h"
#include "bagel/pipeline.h"
#include "bagel/progress.h"
#include "commands.h"

namespace bagel::cli {

namespace {

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
  // Before any data is read: a refused folder, or one another run is
  // writing, must not cost a training run. Held until the model is saved.
  const ModelDirClaim claim = claim_model_dir(config.output, o.force);
  Progress progress(Progress::detect(o.quiet), std::cerr);

  TrainingData data = load_training_data(config);
  progress.message(data_line(data.train));
  if (data.valid) progress.message(data_line(*data.valid));
  char buf[200];
  std::snprintf(buf, sizeof buf, "loaded in %.2fs; %zu classes, %s layer", data.load_seconds,
                data.classes.size(), to_string(config.layer).c_str());
  progress.message(buf);
  const double load_seconds = data.load_seconds;

  const TrainResult result = train(config, std::move(data), progress);
  const TrainingSummary& summary = result.summary;
  save_model(result.model, config.output, o.force);

  std::snprintf(buf, sizeof buf, "trained %d epoch%s in %.2fs (load %.2fs)%s",
                summary.epochs_run, summary.epochs_run == 1 ? "" : "s", summary.seconds,
                load_seconds,
                summary.stopped_early
                    ? (", stopped early; kept epoch " + std::to_string(summary.best_epoch)).c_str()
                    : "");
  progress.message(buf);
  progress.message("train: " + metrics_summary(result.train_metrics));
  if (result.valid_metrics) progress.message("valid: " + metrics_summary(*result.valid_metrics));
  progress.message("model saved to " + config.output);
  return 0;
}

}  // namespace bagel::cli
