#include "fit.h"

#include <cctype>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/json_parse.h"
#include "bagel/pipeline.h"
#include "interruptible.h"

namespace bagel::python {

namespace {

// A config file's key path ("optimizer.l2", "model.layer") as the
// estimator's parameter ("l2", "layer").
std::string parameter_of(const std::string& field) {
  for (const std::string prefix : {"optimizer.", "model."})
    if (field.starts_with(prefix)) return field.substr(prefix.size());
  return field;
}

// A config error as the estimator's: the field and the keys its message
// names ("set optimizer.epochs") are parameters here. A key is named after a
// space or a parenthesis; a quoted "optimizer.x" is a value and stays.
ConfigError as_parameter_error(const ConfigError& e) {
  std::string message = e.message();
  for (const std::string key : {"optimizer.", "model.multiclass", "model.layer"}) {
    const std::size_t prefix = key.find('.') + 1;
    for (std::size_t at = message.find(key); at != std::string::npos; at = message.find(key, at + 1)) {
      const bool named = at == 0 || message[at - 1] == ' ' || message[at - 1] == '(';
      const bool whole = at + key.size() < message.size() &&
                         (std::islower(static_cast<unsigned char>(message[at + prefix])) != 0);
      if (named && whole) message.erase(at, prefix);
    }
  }
  return ConfigError(parameter_of(e.field()), message);
}

// In-memory splits have no files: the config names them so, and so does the
// model.json a saved model keeps.
constexpr const char* kInMemory = "<in-memory>";

TrainConfig parse_config(const FitRequest& r) {
  nlohmann::json doc = parse_json(r.config_json, "estimator parameters", false);
  doc["train"] = {{"features", kInMemory}};
  if (r.valid) doc["valid"] = {{"features", kInMemory}};
  try {
    TrainConfig c = parse_train_config(doc, "/");
    c.resolved["train"]["features"] = kInMemory;  // not a path: no folder to resolve against
    if (r.valid) c.resolved["valid"]["features"] = kInMemory;
    return c;
  } catch (const ConfigError& e) {
    // The config's "needs a valid set" in the estimator's words (a value out
    // of range keeps its own message).
    if (e.field() == "optimizer.patience" && !r.valid && e.message().starts_with("early stopping needs"))
      throw ConfigError("patience", "early stopping needs an eval_set=(X_valid, y_valid)");
    throw as_parameter_error(e);
  }
}

Dataset dataset(const SplitArrays& s, const std::string& name) {
  Dataset d;
  d.name = name;
  d.x = csr_view(s.indptr, s.indices, s.data, s.cols, name);
  d.y.assign(s.y.data(), s.y.data() + s.y.size());
  return d;
}

}  // namespace

FitResult fit(const FitRequest& r) {
  TrainConfig config = parse_config(r);
  config.train_metrics = false;  // scikit-learn's estimators measure nothing they are not asked for
  Classes classes{r.classes, r.numeric_classes};
  std::optional<Dataset> valid;
  if (r.valid) valid = dataset(*r.valid, "eval_set");
  std::span<const float> sample_weight;
  if (r.sample_weight) sample_weight = {r.sample_weight->data(), static_cast<std::size_t>(r.sample_weight->size())};
  TrainingData data = [&] {
    try {  // class_weight is checked against the classes here
      return in_memory_training_data(config, std::move(classes), dataset(r.train, "X"),
                                     std::move(valid), sample_weight);
    } catch (const ConfigError& e) {
      throw as_parameter_error(e);
    }
  }();

  std::ostringstream warnings;
  Progress progress(r.verbose ? Progress::Mode::kLines : Progress::Mode::kQuiet,
                    r.verbose ? std::cerr : warnings);
  std::function<Model()> work = [&] {
    try {
      TrainResult result = r.start ? train(*r.start, config, std::move(data), progress)
                                   : train(config, std::move(data), progress);
      if (r.verbose) {  // the CLI's closing line, without its load time
        const TrainingSummary& s = result.summary;
        char line[160];
        std::snprintf(line, sizeof line, "trained %d epoch%s in %.2fs%s", s.epochs_run,
                      s.epochs_run == 1 ? "" : "s", s.seconds, kept_epoch_note(s).c_str());
        progress.message(line);
      }
      return std::move(result.model);
    } catch (const ConfigError& e) {  // "optimizer.learning_rate: ..." names a parameter here
      throw as_parameter_error(e);
    }
  };
  FitResult out{run_interruptible<Model>(progress, work), {}};
  std::istringstream lines(warnings.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) out.warnings.push_back(line);
  return out;
}

nlohmann::json default_parameters() {
  const TrainConfig defaults = parse_train_config({{"train", {{"features", kInMemory}}}}, "/");
  nlohmann::json params = defaults.resolved["optimizer"];
  params["layer"] = defaults.resolved["model"]["layer"];
  params["multiclass"] = to_string(defaults.multiclass.value_or(kDefaultMulticlass));
  return params;
}

}  // namespace bagel::python
