#include "bagel/pipeline.h"

#include <cstdio>

#include <cmath>

#include <algorithm>
#include <chrono>
#include <set>

#include "bagel/error.h"
#include "bagel/feature_order.h"
#include "bagel/train_plan.h"
#include "bagel/huge_pages.h"
#include "bagel/predict.h"

namespace bagel {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void check_start(const Model& start, const TrainingData& data) {
  if (start.classes != data.classes.names)
    throw ConfigError("classes", "the data's classes differ from the model's (" +
                                     std::to_string(data.classes.size()) + " against " +
                                     std::to_string(start.num_classes()) + ")");
  const Index cols = std::max(data.train.x.cols(), data.valid ? data.valid->x.cols() : 0);
  if (cols > start.num_features)
    throw ConfigError("features", "the data has " + std::to_string(cols) +
                                      " features (columns), but the model has " +
                                      std::to_string(start.num_features));
}

// Moves weight row j to row new_of_old[j]: the inverse of FeatureOrder::restore,
// so that a model that has learnt already starts from its own weights.
void renumber_weights(std::vector<float>& weight, int outputs, const FeatureOrder& order) {
  if (weight.empty()) return;
  const auto k = static_cast<std::size_t>(outputs);
  const std::span<const Index> new_of_old = order.new_of_old();
  std::vector<float> moved = huge_vector<float>(weight.size());
  for (std::size_t j = 0; j < new_of_old.size(); ++j)
    std::copy_n(weight.begin() + j * k, k, moved.begin() + static_cast<std::size_t>(new_of_old[j]) * k);
  weight = std::move(moved);
}

// The checkpoint's weights back in the data's feature numbers.
void restore_numbering(TrainingCheckpoint& k, int outputs, const FeatureOrder& order) {
  order.restore(k.weight, outputs);
  if (!k.best_weight.empty()) order.restore(k.best_weight, outputs);
  if (!k.average_weight_sum.empty()) order.restore(k.average_weight_sum, outputs);
}

void annotate(Model& model, const TrainResult& r, const TrainConfig& config,
              const TrainingData& data, bool reordered, double reorder_seconds,
              std::int64_t summed) {
  model.config = config.resolved;
  // A warm start reads text with its model's vectorizer, not the config's
  // (check_init_vectorizer): the config saved says which was used.
  if (config.vectorizer && data.vectorizer)
    model.config["vectorizer"] = vectorizer_options_to_json(data.vectorizer->options());
  // The svmlight base "auto" read the splits with, so that predict reads
  // with it too (TrainingData::zero_based).
  // Other formats record "auto" whatever the config said: no base applied.
  if (model.config["train"].contains("zero_based"))
    model.config["train"]["zero_based"] = to_string(data.zero_based);
  if (model.config.contains("valid") && model.config["valid"].is_object() &&
      model.config["valid"].contains("zero_based"))
    model.config["valid"]["zero_based"] = to_string(data.valid_zero_based);
  model.training = summary_to_json(r.summary);
  model.training["load_seconds"] = data.load_seconds;
  model.training["features_reordered"] = reordered;
  model.training["reorder_seconds"] = reorder_seconds;  // part of train_seconds
  model.training["train_rows"] = data.train.x.rows();
  if (config.optimizer.class_weight.kind != ClassWeightSpec::Kind::kNone) {
    nlohmann::json weights = nlohmann::json::object();
    for (std::size_t c = 0; c < data.classes.size(); ++c)
      weights[data.classes.names[c]] = data.class_weight[c];
    model.training["class_weights"] = weights;
  }
  model.training["train_nonzeros"] = data.train.x.nonZeros();
  model.training["repeated_indices_summed"] = summed;
  if (r.train_metrics) model.training["train_metrics"] = metrics_to_json(*r.train_metrics, model.classes);
  if (r.valid_metrics)
    model.training["valid_metrics"] = metrics_to_json(*r.valid_metrics, model.classes);
  model.training["bagel_version"] = BAGEL_VERSION;
}

// The divergence guard restarts a run whose loss is not finite, but a
// row's weight multiplies its step after the clip: weights near float's
// limit (sample_weight 1e36) overflow the model while each loss stays
// finite. No such model is returned (a saved one would not load).
void check_finite_result(const Model& m, const Dataset& train) {
  const auto finite = [](float v) { return std::isfinite(v); };
  if (std::all_of(m.weight.begin(), m.weight.end(), finite) &&
      std::all_of(m.bias.begin(), m.bias.end(), finite))
    return;
  const float largest = train.weight.empty() ? 1.0f : *std::max_element(train.weight.begin(), train.weight.end());
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", double(largest));
  throw Error("training ended with weights beyond float32's range (the largest row weight, "
              "sample_weight times class_weight, is " + std::string(buf) +
              "; scale the row weights down, or lower the learning rate)");
}

// The training time the stopped run spent on what a resume keeps: its
// epochs up to the checkpoint and its rate calibration. train_seconds then
// counts every epoch in the history, as an unstopped run's does.
double seconds_before_stop(const TrainingCheckpoint& resume) {
  double seconds = 0;
  for (const EpochRecord& e : resume.history)
    if (e.epoch <= resume.epoch) seconds += e.seconds;
  if (resume.calibration.is_object() && resume.calibration.contains("seconds") &&
      resume.calibration["seconds"].is_number())
    seconds += resume.calibration["seconds"].get<double>();
  return seconds;
}

// `from_zeros`: start holds no learnt weights, so nothing needs renumbering.
// A resume's weights are in the data's feature numbers, as saved.
TrainResult run(Model start, bool from_zeros, const TrainConfig& config, TrainingData data,
                Progress& progress, Checkpointing checkpoints = {}) {
  std::optional<TrainingCheckpoint> resume;
  if (checkpoints.resume != nullptr && checkpoints.resume->epoch > 0) {
    resume = *checkpoints.resume;
    start.weight = resume->weight;
    start.bias = resume->bias;
    from_zeros = false;
    checkpoints.resume = &*resume;
  }
  check_start(start, data);
  // A warm start on vectorised data keeps its model's vectorizer (the same
  // vocabulary: check_start compared the widths).
  if (!data.vectorizer) data.vectorizer = start.vectorizer;
  Dataset& train = data.train;
  std::optional<Dataset>& valid = data.valid;
  // A row is a bag, whose repeated index adds up (predict sums it so). Summed
  // before training, the row's squared norm (the rate's calibration, the
  // step's clip) and the features' counts are the bag's, and a list of
  // token ids trains the model its counts would.
  const std::int64_t summed = train.x.sum_duplicates(train.name);
  // The sparse layer trains on features numbered by frequency (feature_order.h);
  // the metrics below use the same numbering, then the model gets its own back.
  const auto t_reorder = Clock::now();
  std::optional<FeatureOrder> order;
  if (resolve_training(config, data, &start).plan.reorder_features) {
    order = FeatureOrder::by_frequency(train.x, start.num_features);
    order->apply(train.x);
    if (valid) order->apply(valid->x);
    if (!from_zeros) renumber_weights(start.weight, start.num_outputs, *order);
    if (resume) {
      renumber_weights(resume->best_weight, start.num_outputs, *order);
      renumber_weights(resume->average_weight_sum, start.num_outputs, *order);
    }
  }
  const double reorder_seconds = seconds_since(t_reorder);

  TrainResult r{std::move(start), {}, {}, std::nullopt};
  try {
    r.summary = train_model(r.model, train, valid ? &*valid : nullptr, config.optimizer,
                            config.layer, progress, checkpoints);
  } catch (const Interrupted&) {
    if (order && checkpoints.latest != nullptr && checkpoints.latest->epoch > 0)
      restore_numbering(*checkpoints.latest, r.model.num_outputs, *order);
    throw;
  }
  check_finite_result(r.model, train);
  if (resume) {
    r.summary.resumed_from_epoch = resume->epoch;
    if (!resume->calibration.is_null()) r.summary.calibration_json = resume->calibration;
    r.summary.seconds += seconds_before_stop(*resume);
  }
  r.summary.seconds += reorder_seconds;
  if (config.train_metrics) r.train_metrics = evaluate(r.model, train.x, train.y);
  if (valid) r.valid_metrics = evaluate(r.model, valid->x, valid->y);
  if (order) order->restore(r.model);
  annotate(r.model, r, config, data, order.has_value(), reorder_seconds, summed);
  r.model.vectorizer = data.vectorizer;
  return r;
}

}  // namespace

Index widest_split(const TrainingData& data) {
  return std::max(data.train.x.cols(), data.valid ? data.valid->x.cols() : 0);
}

void check_warm_start(const Model& start, const std::string& start_dir, const Dataset& d,
                      const std::string& source) {
  const bool wrong_width = d.columns_stored ? d.x.cols() != start.num_features
                                            : d.x.cols() > start.num_features;
  if (!wrong_width) return;
  throw FileError(source, "has " + std::to_string(d.x.cols()) + " features (columns), but the "
                          "model in " + start_dir + " (\"init\") has " +
                          std::to_string(start.num_features) +
                          "; a warm start needs data vectorised with that model's vocabulary");
}

namespace {

// A setting as the error shows it: a long list of stop words cut short.
std::string shown(const nlohmann::json& value) {
  constexpr std::size_t kShown = 60;
  const std::string text = value.dump();
  return text.size() > kShown ? text.substr(0, kShown) + "..." : text;
}

// A setting as the vectorizer uses it. Stop words are a set (scikit-learn
// keeps a frozenset, and they are dropped before n-grams are formed): in
// another order, repeated, or read from a file sorted otherwise, they are
// the same vectorizer.
nlohmann::json as_used(const std::string& key, const nlohmann::json& value) {
  if (key != "stop_words" || !value.is_array()) return value;
  std::set<std::string> words;
  for (const nlohmann::json& word : value) words.insert(word.get<std::string>());
  return words;
}

}  // namespace

void check_init_vectorizer(const TrainConfig& config, const Model& start, const std::string& start_dir) {
  if (!config.vectorizer || !start.vectorizer || config.vectorizer_keys.empty()) return;
  const nlohmann::json asked = vectorizer_options_to_json(*config.vectorizer);
  const nlohmann::json used = vectorizer_options_to_json(start.vectorizer->options());
  // "kind" first: another kind differs in every key that follows from it.
  std::vector<std::string> keys = config.vectorizer_keys;
  std::stable_partition(keys.begin(), keys.end(), [](const std::string& k) { return k == "kind"; });
  for (const std::string& key : keys) {
    const nlohmann::json mine = asked.contains(key) ? asked[key] : nlohmann::json(nullptr);
    const nlohmann::json theirs = used.contains(key) ? used[key] : nlohmann::json(nullptr);
    if (as_used(key, mine) == as_used(key, theirs)) continue;
    throw ConfigError("vectorizer." + key,
                      "is " + shown(mine) + ", but the model training starts from (\"init\", " +
                          start_dir + ") was vectorized with " + shown(theirs) +
                          ": a warm start keeps its model's vectorizer, so that each column keeps "
                          "its word; leave the \"vectorizer\" section out, or make it match");
  }
}

ResolvedRun resolve_training(const TrainConfig& config, const TrainingData& data,
                             const Model* start) {
  ModelShape shape;
  if (start != nullptr) {
    shape = {start->head(), start->num_outputs, start->num_features};
  } else {
    shape.outputs = num_outputs_for(static_cast<int>(data.classes.size()));
    shape.head = shape.outputs == 1 ? Head::kSigmoid : config.multiclass.value_or(kDefaultMulticlass);
    shape.features = widest_split(data);
  }
  return resolve_run(config.optimizer, config.layer, data.train.x.rows(), data.train.weight, shape);
}

TrainResult train(const TrainConfig& config, TrainingData data, Progress& progress,
                  Checkpointing checkpoints) {
  Model start = Model::zeros(data.classes.names, data.classes.numeric, widest_split(data),
                             config.multiclass.value_or(kDefaultMulticlass));
  return run(std::move(start), true, config, std::move(data), progress, checkpoints);
}

TrainResult train(Model start, const TrainConfig& config, TrainingData data, Progress& progress,
                  Checkpointing checkpoints) {
  if (config.multiclass && start.num_outputs > 1 && *config.multiclass != start.head())
    throw ConfigError("model.multiclass",
                      "is \"" + to_string(*config.multiclass) + "\", but the model training starts from "
                      "(\"init\") is \"" + to_string(start.head()) + "\"; leave the key out to keep it");
  return run(std::move(start), false, config, std::move(data), progress, checkpoints);
}

}  // namespace bagel
