#include <cstdio>
#include <iostream>
#include <optional>

#include "bagel/checkpoint.h"
#include "bagel/config.h"
#include "bagel/error.h"
#include "bagel/dataset.h"
#include "bagel/input_stream.h"
#include "bagel/model_dir.h"
#include "bagel/override_error.h"
#include "bagel/pipeline.h"
#include "bagel/progress.h"
#include "bagel/svmlight.h"
#include "bagel/temp_registry.h"
#include "bagel/train_plan.h"
#include "cli_paths.h"
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

// Trains with checkpoints (after the first epoch, then paced by their cost:
// train/checkpoint_pace.h): a first Ctrl-C or kill stops training within a
// few hundred rows, saves the last epoch kept beside the model folder and
// rethrows Interrupted (exit 130/143); --resume goes on from there.
TrainResult train_resumably(const TrainOptions& o, const TrainConfig& config,
                            std::optional<Model> start, TrainingData data, Progress& progress) {
  const std::string folder = checkpoint_folder(config.output);
  const std::uint64_t fingerprint = data_fingerprint(data);
  std::optional<TrainingCheckpoint> resume;
  if (o.resume) {
    resume = load_checkpoint(folder, config.resolved, fingerprint,
                             start ? start->num_features : widest_split(data),
                             start ? start->num_outputs : num_outputs_for(static_cast<int>(data.classes.size())));
    progress.message("resuming after epoch " + std::to_string(resume->epoch) + " of " +
                     std::to_string(resume->epochs) + " (" + folder + ")");
  } else if (start) {
    progress.message("starting from the model in " + config.init);
  }
  TrainingCheckpoint latest;
  const ResolvedRun run = resolve_training(config, data, start ? &*start : nullptr);
  const std::string unsupported = resume_unsupported(run.optimizer, config.layer, run.plan);
  const StopOnSignal stop(progress.stop_flag());
  try {
    const Checkpointing checkpoints{resume ? &*resume : nullptr, &latest};
    return start ? train(std::move(*start), config, std::move(data), progress, checkpoints)
                 : train(config, std::move(data), progress, checkpoints);
  } catch (const Interrupted&) {
    if (latest.epoch > 0) {
      save_checkpoint(latest, config.resolved, fingerprint, folder);
      const std::string epochs = latest.epoch == 1 ? "epoch 1 of " + std::to_string(latest.epochs) + " is"
                                                   : "epochs 1-" + std::to_string(latest.epoch) + " of " +
                                                         std::to_string(latest.epochs) + " are";
      progress.warn("stopped; " + epochs + " saved in " + folder +
                    ": add --resume to the same command to go on from there");
    } else if (!unsupported.empty()) {
      progress.warn("stopped; this run cannot be resumed: " + unsupported);
    } else if (!resume) {
      progress.warn("stopped before the first epoch ended: nothing to resume");
    } else {
      progress.warn("stopped before another epoch ended; the state saved before is kept in " + folder +
                    ": --resume goes on from it");
    }
    throw;
  }
}

}  // namespace

CLI::App* add_train_command(CLI::App& app, TrainOptions& o) {
  CLI::App* cmd = app.add_subcommand("train", "Train a model from a JSON config");
  cmd->add_option("-c,--config", o.config, "Config file (JSON; see configs/example.json)")
      ->required()
      ->check(given_path())
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides,
                  "Override one config key, e.g. --set optimizer.epochs=10 (repeatable)");
  cmd->add_option("-o,--output", o.output,
                  "Model directory (overrides the config's \"output\"): a new or empty folder, "
                  "or one holding a bagel model, whose model files are replaced (other files "
                  "are kept)")
      ->check(given_path());
  cmd->add_flag("--force", o.force,
                "Also write into a folder of other files, beside them (none is removed or "
                "overwritten)");
  cmd->add_option("--init", o.init,
                  "Start from this model directory's weights instead of zeros (overrides the "
                  "config's \"init\"); its classes must hold the labels, its features match "
                  "the columns")
      ->check(existing_folder());
  cmd->add_flag("--resume", o.resume,
                "Go on from the last epoch that a stopped run (Ctrl-C, kill) of this config and data "
                "saved in OUTPUT.bagel-resume");
  cmd->add_flag("-q,--quiet", o.quiet, "No progress or summary on stderr");
  return cmd;
}

int train_from(const TrainOptions& o, TrainConfig& config) {
  // model.json's config holds absolute paths, as the config's own are
  // resolved: -o and --init are relative to the current folder.
  const auto absolute = [](const std::string& p) {
    return std::filesystem::absolute(p).lexically_normal().string();
  };
  if (!o.output.empty()) config.output = o.output, config.resolved["output"] = absolute(o.output);
  if (!o.init.empty()) config.init = o.init, config.resolved["init"] = absolute(o.init);
  // Folders the claim creates on the way to the model's: gone again if
  // the run fails (declared first: the claim's lock in them goes before).
  NewFolders new_folders(config.output);
  // Before any data is read: a refused folder, or one another run is
  // writing, must not cost a training run. Held until the model is saved.
  const ModelDirClaim claim = claim_model_dir(
      config.output, o.force, config.vectorizer ? ModelSource::kText : ModelSource::kFeatures);
  if (o.resume) require_checkpoint(checkpoint_folder(config.output));
  Progress progress(Progress::detect(o.quiet), std::cerr);
  if (!o.resume && checkpoint_exists(checkpoint_folder(config.output)))
    progress.warn("a stopped run's state is in " + checkpoint_folder(config.output) +
                  "; this run starts afresh and replaces it (--resume goes on from it instead)");

  // A warm start's model is read before the data, so that a wrong folder
  // fails at once; its classes then encode the labels.
  std::optional<Model> start;
  std::optional<Classes> start_classes;
  bool base_from_init = false;
  if (!config.init.empty()) {
    start = load_model(config.init);
    check_init_vectorizer(config, *start, config.init);
    start_classes = Classes{start->classes, start->numeric_classes};
    // Its columns are those of its training svmlight's base: "auto" reads
    // the new files with it, as predict does.
    if (config.train.zero_based == ZeroBased::kAuto) {
      config.train.zero_based = trained_zero_based(*start);
      base_from_init = config.train.zero_based != ZeroBased::kAuto;
    }
  }
  for (const std::string& note : text_format_notes(config)) progress.message(note);
  // The vectorizer fitted on the training text (a warm start keeps its own).
  if (config.train.text && !(start && start->vectorizer))
    if (const std::string warning = stop_words_warning(*config.vectorizer); !warning.empty())
      progress.warn(warning);
  TrainingData data = [&] {
    try {
      return load_training_data(config, start_classes ? &*start_classes : nullptr,
                                start ? start->vectorizer : nullptr);
    } catch (const IndexZeroError& e) {
      // The training file, or a valid file that follows its base: read
      // one-based because of the model, not because the config said so.
      const bool valid_follows = config.valid && config.valid->zero_based == ZeroBased::kAuto &&
                                 e.file() == input_name(config.valid->features);
      if (!base_from_init || (e.file() != input_name(config.train.features) && !valid_follows))
        throw;
      throw FileError(e.file(),
                      e.message() + ": it was read one-based, as the model given as init (" +
                          config.init + ") was trained (its model.json config.train.zero_based "
                          "is \"false\"); set train.zero_based to true or false to say how this "
                          "file counts its indices",
                      e.line());
    }
  }();
  if (start) {
    check_warm_start(*start, config.init, data.train, input_name(config.train.features));
    if (data.valid)
      check_warm_start(*start, config.init, *data.valid, input_name(config.valid->features));
  }
  progress.message(data_line(data.train));
  if (data.valid) progress.message(data_line(*data.valid));
  char buf[200];
  std::snprintf(buf, sizeof buf, "loaded in %.2fs; %zu classes, %s layer", data.load_seconds,
                data.classes.size(), to_string(config.layer).c_str());
  progress.message(buf);
  const double load_seconds = data.load_seconds;

  const TrainResult result = train_resumably(o, config, std::move(start), std::move(data), progress);
  const TrainingSummary& summary = result.summary;
  save_model(result.model, config.output, o.force);
  new_folders.keep();
  remove_checkpoint(checkpoint_folder(config.output));

  std::snprintf(buf, sizeof buf, "trained %d epoch%s in %.2fs (load %.2fs)%s",
                summary.epochs_run, summary.epochs_run == 1 ? "" : "s", summary.seconds,
                load_seconds, kept_epoch_note(summary).c_str());
  progress.message(buf);
  if (result.train_metrics) progress.message("train: " + metrics_summary(*result.train_metrics));
  if (result.valid_metrics) progress.message("valid: " + metrics_summary(*result.valid_metrics));
  progress.message("model saved to " + config.output);
  return 0;
}

int run_train(const TrainOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  TrainConfig config = load_train_config(o.config, overrides);
  try {
    return train_from(o, config);
  } catch (const UsageError&) {
    throw;
  } catch (const ConfigError& e) {
    // A key that the data or the init model refuses (a class_weight naming
    // no class, a head other than the model's): named as a parse error is,
    // "cfg.json: key: ..." or "--set key=value: ..." (exit 2).
    rethrow_config_error(e, o.config, overrides);
  } catch (const FileError& e) {
    rethrow_missing_override_input(e, config.resolved, overrides);
    throw;
  }
}

}  // namespace bagel::cli
