#include <cstdio>
#include <fstream>
#include <iostream>

#include "bagel/atomic_file.h"
#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/override_error.h"
#include "bagel/json_parse.h"
#include "bagel/progress.h"
#include "bagel/train_plan.h"  // kMaxThreads, parallel_strategy
#include "bagel/tune.h"
#include "cli_numbers.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

namespace {

// Held out of train for scoring when the config has no "valid" set.
constexpr double kHoldoutFraction = 0.2;

std::string trial_row(const TuneTrial& t, bool best) {
  char rate[80];
  if (t.diverged_rate > 0)  // restarted at a tenth, as train does
    std::snprintf(rate, sizeof rate, "%.4g (%.4g diverged)", t.settings.learning_rate, t.diverged_rate);
  else
    std::snprintf(rate, sizeof rate, "%.4g", t.settings.learning_rate);
  char buf[260];
  const std::string head = to_string(t.head);
  if (!t.error.empty())
    std::snprintf(buf, sizeof buf, "| %s | %s | %g | %d | failed | | %.2f |", head.c_str(), rate,
                  t.settings.l2, t.settings.epochs, t.seconds);
  else
    std::snprintf(buf, sizeof buf, "| %s | %s | %g | %d | %.4f | %.4f | %.2f |%s", head.c_str(), rate,
                  t.settings.l2, t.settings.epochs, t.valid_accuracy, t.valid_log_loss, t.seconds,
                  best ? " best" : "");
  return buf;
}

// The config as `bagel train` reads it, with the best trial's settings.
nlohmann::json tuned_config(const TrainConfig& config, const TuneTrial& trial) {
  const OptimizerConfig& best = trial.settings;
  nlohmann::json doc = config.resolved;
  if (trial.head != Head::kSigmoid) doc["model"]["multiclass"] = to_string(trial.head);
  doc["optimizer"]["learning_rate"] = best.learning_rate;
  doc["optimizer"]["bias_rate"] = best.bias_rate;
  doc["optimizer"]["l2"] = best.l2;
  doc["optimizer"]["epochs"] = best.epochs;
  doc["optimizer"]["schedule"] = to_string(best.schedule);
  // "auto" averaging resolves by row count, and the trials train on fewer rows
  // than train will without a valid set (80 %): write what they did. Averaging
  // the config cannot take (on hogwild threads) stays "auto".
  const OptimizerConfig& given = config.optimizer;
  if (given.average_auto &&
      (!best.average || given.threads == 1 || parallel_strategy(given) == ParallelStrategy::kReplicas))
    doc["optimizer"]["average"] = best.average;
  return doc;
}

// The files a config reads: the written config must replace none of them.
std::vector<NamedPath> config_inputs(const TrainConfig& config, const std::string& config_path) {
  std::vector<NamedPath> inputs = {{"--config", config_path}};
  const auto add = [&](const std::string& split, const DataSpec& d) {
    inputs.push_back({split + ".features", d.features});
    inputs.push_back({split + ".labels", d.labels});
    inputs.push_back({split + ".sample_weights", d.sample_weights});
    if (d.text) inputs.push_back({split + ".text", d.text->path});  // its labels are `labels`
  };
  add("train", config.train);
  if (config.valid) add("valid", *config.valid);
  return inputs;
}

}  // namespace

CLI::App* add_tune_command(CLI::App& app, TuneOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "tune", "Search learning rate, L2, epochs and (more than two classes) softmax or "
              "one-vs-rest on the valid set (or a held-out 20% of train) and write the best config");
  cmd->add_option("-c,--config", o.config, "Config file (JSON), as for train")
      ->required()
      ->check(given_path())
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides, "Override one config key (repeatable), as for train");
  cmd->add_option("--budget", o.budget, "Seconds the search may take (default 60): a trial starts only while one of average length would end within it; the first round, one trial per core, always runs")
      ->check(number_above(0));
  cmd->add_option("-o,--output", o.output,
                  "Where to write the best config (default: tuned.json in the current folder)")
      ->transform(output_path());
  cmd->add_option("--threads", o.threads, "Trials at once (default 0: all cores)")
      ->check(integer_in(0, kMaxThreads));
  cmd->add_flag("-q,--quiet", o.quiet, "No progress on stderr (the table is still printed)");
  return cmd;
}

int run_tune(const TuneOptions& o) {
  const std::string out = o.output.empty() ? "tuned.json" : o.output;
  check_output_file(out, "-o");
  const TrainConfig config = load_train_config(o.config, o.overrides);
  if (!config.init.empty())
    rethrow_config_error(ConfigError("init", "the config starts from a model, and the trials start "
                                             "from zeros: tune without \"init\", then add it to the "
                                             "config written"),
                         o.config, o.overrides);
  check_json_writable(config.resolved, o.config);  // the tuned config is written at the end
  check_distinct_paths({{"-o", out}}, config_inputs(config, o.config));
  Progress progress(Progress::detect(o.quiet), std::cerr);
  for (const std::string& note : text_format_notes(config)) progress.message(note);
  if (config.train.text)
    if (const std::string warning = stop_words_warning(*config.vectorizer); !warning.empty())
      progress.warn(warning);
  TrainingData data = [&] {
    try {
      return load_training_data(config);
    } catch (const FileError& e) {
      rethrow_missing_override_input(e, config.resolved, o.overrides);
      throw;
    }
  }();
  Dataset train, valid;
  std::string judged_on;
  if (data.valid) {
    train = std::move(data.train);
    valid = std::move(*data.valid);
    judged_on = "the valid set (" + std::to_string(valid.x.rows()) + " rows)";
  } else {
    std::tie(train, valid) = split_holdout(data.train, kHoldoutFraction, config.optimizer.seed);
    judged_on = "a seeded 20% of train held out (" + std::to_string(valid.x.rows()) + " rows)";
  }
  progress.message("tuning on " + std::to_string(train.x.rows()) + " rows, judged on " + judged_on);
  const TuneResult r = tune(train, valid, static_cast<int>(data.classes.size()),
                            config.multiclass, config.optimizer,
                            config.layer, o.budget, o.threads, progress);
  const TuneTrial& best = r.trials[r.best];
  if (!best.error.empty()) throw Error("every trial failed; the first: " + best.error);

  // With the config on standard output (-o -), the table and summary go to
  // stderr, so that the config alone can be piped into `bagel train`.
  const bool config_on_stdout = is_standard_output(out);
  std::ostream& report = config_on_stdout ? std::cerr : std::cout;
  report << "| head | learning_rate | l2 | epochs | valid accuracy | valid log loss | seconds |\n"
         << "|---|---:|---:|---:|---:|---:|---:|\n";
  int skipped = 0;
  for (std::size_t i = 0; i < r.trials.size(); ++i) {
    if (!r.trials[i].ran) {
      ++skipped;
      continue;
    }
    report << trial_row(r.trials[i], i == r.best) << "\n";
  }
  report << std::flush;
  NewFolders folders(out);
  create_parent_folder(out);
  write_file_atomic(out, tuned_config(config, best).dump(2) + "\n");
  folders.keep();
  const std::string written =
      config_on_stdout ? "config written to standard output (pipe it: | bagel train --config /dev/stdin)"
                       : "config written to " + out + " (bagel train --config " + out + ")";
  std::string left_out;
  if (skipped > 0) left_out += ", " + std::to_string(skipped) + " left out by the budget";
  if (r.grid_left_out > 0)
    left_out += ", " + std::to_string(r.grid_left_out) +
                " left out of the grid (learning_rate x l2 >= 1: the L2 decay would reverse the weights)";
  char buf[200];
  std::snprintf(buf, sizeof buf, "; best: %s, learning_rate %.6g, l2 %g, %d epochs (valid accuracy %.4f); ",
                to_string(best.head).c_str(), best.settings.learning_rate, best.settings.l2,
                best.settings.epochs, best.valid_accuracy);
  char count[80];
  std::snprintf(count, sizeof count, "%zu trials in %.1fs", r.trials.size() - skipped, r.seconds);
  report << count << left_out << buf << written << "\n";
  return 0;
}

}  // namespace bagel::cli
