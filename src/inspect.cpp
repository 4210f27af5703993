#include "bagel/inspect.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <numeric>

#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/predict.h"
#include "bagel/text/vocabulary_file.h"

namespace bagel {

namespace {

float weight_at(const Model& model, Index feature, int output) {
  return model.weight[static_cast<std::size_t>(feature) * model.num_outputs + output];
}

// Sums of one or more columns; l2 holds the sum of squares until finish().
void add_weight(WeightStats& s, float w) {
  const double v = w;
  ++s.weights;
  s.nonzero += w != 0.0f;
  s.l1 += std::abs(v);
  s.l2 += v * v;
  s.max_abs = std::max(s.max_abs, std::abs(v));
}

WeightStats finish(WeightStats s) {
  s.l2 = std::sqrt(s.l2);
  return s;
}

// The `top` features of column `output` first by `before` (a strict order
// on features, ties already broken).
template <typename Before>
std::vector<FeatureWeight> first_features(const Model& model, int output, int top,
                                          std::vector<Index>& scratch, Before before) {
  const auto n = std::min<std::size_t>(static_cast<std::size_t>(top), scratch.size());
  std::iota(scratch.begin(), scratch.end(), Index{0});
  std::partial_sort(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n),
                    scratch.end(), before);
  std::vector<FeatureWeight> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back({scratch[i], weight_at(model, scratch[i], output)});
  return out;
}

OutputWeights inspect_output(const Model& model, int output, int top, std::vector<Index>& scratch) {
  OutputWeights o;
  o.output = output;
  const bool binary = model.num_outputs == 1;
  o.favoured = model.classes[binary ? 1 : output];
  if (binary) o.disfavoured = model.classes[0];
  o.bias = model.bias[output];
  for (Index j = 0; j < model.num_features; ++j) add_weight(o.stats, weight_at(model, j, output));
  o.stats = finish(o.stats);
  const auto w = [&](Index j) { return weight_at(model, j, output); };
  o.largest = first_features(model, output, top, scratch, [&](Index a, Index b) {
    return w(a) > w(b) || (w(a) == w(b) && a < b);
  });
  o.smallest = first_features(model, output, top, scratch, [&](Index a, Index b) {
    return w(a) < w(b) || (w(a) == w(b) && a < b);
  });
  return o;
}

// A float as the shortest decimal that reads back to it, so that JSON shows
// 0.1234 rather than the double 0.12339999526739120.
double shortest(float value) {
  char buf[32];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  double out = 0;
  std::from_chars(buf, end, out);
  return out;
}

nlohmann::ordered_json stats_to_json(const WeightStats& s) {
  return {{"weights", s.weights}, {"nonzero", s.nonzero}, {"l1", s.l1}, {"l2", s.l2},
          {"max_abs", shortest(static_cast<float>(s.max_abs))}};
}

void add_term(nlohmann::ordered_json& entry, Index feature, std::span<const std::string> names) {
  if (!names.empty()) entry["term"] = names[static_cast<std::size_t>(feature)];
}

nlohmann::ordered_json features_to_json(const std::vector<FeatureWeight>& features,
                                std::span<const std::string> names) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FeatureWeight& f : features) {
    nlohmann::ordered_json entry = {{"feature", f.feature}};
    add_term(entry, f.feature, names);
    entry["weight"] = shortest(f.weight);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

int output_of_class(const Model& model, const std::string& name, const std::string& where) {
  const auto it = std::find(model.classes.begin(), model.classes.end(), name);
  if (it == model.classes.end()) {
    std::string list;
    for (const std::string& c : model.classes) list += (list.empty() ? "" : ", ") + c;
    throw UsageError(where, "'" + name + "' is not a class of the model (classes: " + list + ")");
  }
  return model.num_outputs == 1 ? 0 : static_cast<int>(it - model.classes.begin());
}

WeightsReport inspect_weights(const Model& model, int top, std::span<const int> outputs) {
  std::vector<int> all(static_cast<std::size_t>(model.num_outputs));
  std::iota(all.begin(), all.end(), 0);
  if (outputs.empty()) outputs = all;
  std::vector<Index> scratch(static_cast<std::size_t>(model.num_features));
  WeightsReport report;
  for (const int output : outputs) report.outputs.push_back(inspect_output(model, output, top, scratch));
  for (const float w : model.weight) add_weight(report.overall, w);
  report.overall = finish(report.overall);
  return report;
}

nlohmann::ordered_json training_summary(const Model& model) {
  const nlohmann::json record = {{"config", model.config}, {"training", model.training}};
  // Output key, then where model.json keeps it: the value training ran
  // with where it records one ("auto" resolved), else the config's.
  static constexpr std::pair<const char*, const char*> kKeys[] = {
      {"train", "/config/train/features"},
      {"valid", "/config/valid/features"},
      {"layer", "/config/model/layer"},
      {"epochs", "/training/epochs"},
      {"epochs_run", "/training/epochs_run"},
      {"best_epoch", "/training/best_epoch"},
      {"stopped_early", "/training/stopped_early"},
      {"learning_rate", "/training/learning_rate"},
      {"bias_rate", "/training/bias_rate"},
      {"schedule", "/config/optimizer/schedule"},
      {"batch_size", "/config/optimizer/batch_size"},
      {"l2", "/config/optimizer/l2"},
      {"l1", "/config/optimizer/l1"},
      {"average", "/training/average"},
      {"average", "/config/optimizer/average"},  // models from before training.average
      {"train_rows", "/training/train_rows"},
      {"train_nonzeros", "/training/train_nonzeros"},
      {"train_seconds", "/training/train_seconds"},
      {"train_accuracy", "/training/train_metrics/accuracy"},
      {"train_log_loss", "/training/train_metrics/log_loss"},
      {"valid_accuracy", "/training/valid_metrics/accuracy"},
      {"valid_log_loss", "/training/valid_metrics/log_loss"},
      {"bagel_version", "/training/bagel_version"},
  };
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& [key, pointer] : kKeys) {
    const nlohmann::json::json_pointer at(pointer);
    if (!out.contains(key) && record.contains(at) && !record.at(at).is_null()) out[key] = record.at(at);
  }
  return out;
}

RowExplanation explain_row(const Model& model, const CsrMatrix& x, Index row,
                           const std::string& source, ExplainOrder order) {
  if (row < 0 || row >= x.rows())
    throw UsageError("--row", std::to_string(row) + " is not a row of " + source + " (" +
                                  std::to_string(x.rows()) + " rows, numbered from 0)");
  const int classes = model.num_classes();
  const bool binary = model.num_outputs == 1;
  std::vector<double> proba(static_cast<std::size_t>(classes));
  std::vector<double> logits(static_cast<std::size_t>(model.num_outputs));
  std::int32_t predicted = 0;
  predict_proba_rows(model, x, row, row + 1, proba.data(), &predicted);
  predict_logits_rows(model, x, row, row + 1, logits.data());

  RowExplanation e;
  e.row = row;
  // The class predict gives, and the next by logit (by probability, ties
  // and all, the order could differ: predicted_class in loss.h).
  e.predicted = predicted;
  if (binary) {
    e.runner_up = 1 - predicted;
  } else {
    e.runner_up = predicted == 0 ? 1 : 0;
    for (int k = 0; k < classes; ++k)
      if (k != predicted && logits[static_cast<std::size_t>(k)] > logits[static_cast<std::size_t>(e.runner_up)])
        e.runner_up = k;
  }
  e.probability = proba[static_cast<std::size_t>(e.predicted)];
  e.runner_up_probability = proba[static_cast<std::size_t>(e.runner_up)];
  e.output = binary ? 0 : e.predicted;
  e.logit = logits[static_cast<std::size_t>(e.output)];
  e.bias = model.bias[static_cast<std::size_t>(e.output)];
  // Binary: z[classes[0]] is 0 and z[classes[1]] the score, so the
  // difference towards the predicted class is the score, signed.
  const double sign = e.predicted == 1 ? 1.0 : -1.0;
  const auto versus = [&](Index feature) -> double {
    if (binary) return sign * weight_at(model, feature, 0);
    return static_cast<double>(weight_at(model, feature, e.predicted)) -
           static_cast<double>(weight_at(model, feature, e.runner_up));
  };
  if (binary) {
    e.margin = sign * e.logit;
    e.versus_bias = sign * e.bias;
  } else {
    e.margin = logits[static_cast<std::size_t>(e.predicted)] - logits[static_cast<std::size_t>(e.runner_up)];
    e.versus_bias = static_cast<double>(model.bias[static_cast<std::size_t>(e.predicted)]) -
                    model.bias[static_cast<std::size_t>(e.runner_up)];
  }

  const RowView r = x.row(row);
  e.contribution_sum = e.bias;
  e.contributions.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Index j = r.indices[i];
    const float w = weight_at(model, j, e.output);
    const double c = static_cast<double>(r.values[i]) * w;
    e.contributions.push_back({j, r.values[i], w, c, r.values[i] * versus(j)});
    e.contribution_sum += c;
  }
  const auto key = [order](const Contribution& c) {
    return std::abs(order == ExplainOrder::kContribution ? c.contribution : c.versus_runner_up);
  };
  std::stable_sort(e.contributions.begin(), e.contributions.end(),
                   [&](const Contribution& a, const Contribution& b) { return key(a) > key(b); });
  return e;
}

std::vector<std::string> feature_names(const Model& model, const std::string& model_dir,
                                       const std::string& vocabulary_path, std::string* found_at) {
  std::string path = vocabulary_path;
  if (path.empty()) {
    const std::filesystem::path in_model = std::filesystem::path(model_dir) / kVocabularyFileName;
    if (!std::filesystem::exists(in_model)) return {};
    path = in_model.string();
  }
  std::vector<std::string> names = read_vocabulary_file(path);
  if (names.size() != static_cast<std::size_t>(model.num_features))
    throw FileError(path, "has " + std::to_string(names.size()) + " terms but the model in " +
                              model_dir + " has " + std::to_string(model.num_features) +
                              " features; give the vocabulary the model was trained with (one "
                              "term a line, line i naming feature i)");
  if (found_at) *found_at = path;
  return names;
}

nlohmann::ordered_json training_svmlight_base_json(const Model& model) {
  switch (trained_zero_based(model)) {
    case ZeroBased::kTrue: return 0;
    case ZeroBased::kFalse: return 1;
    case ZeroBased::kAuto: break;
  }
  return nullptr;
}

nlohmann::ordered_json weights_report_to_json(const Model& model, const WeightsReport& report,
                                      std::span<const std::string> names) {
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (const OutputWeights& o : report.outputs) {
    nlohmann::ordered_json entry = {{"output", o.output},
                            {"positive_favours", o.favoured},
                            {"negative_favours", o.disfavoured.empty()
                                                     ? nlohmann::ordered_json(nullptr)
                                                     : nlohmann::ordered_json(o.disfavoured)},
                            {"bias", shortest(o.bias)}};
    entry.update(stats_to_json(o.stats));
    entry["largest"] = features_to_json(o.largest, names);
    entry["smallest"] = features_to_json(o.smallest, names);
    outputs.push_back(std::move(entry));
  }
  return {{"classes", model.classes},
          {"output", model.output_kind()},
          {"num_features", model.num_features},
          {"training_svmlight_base", training_svmlight_base_json(model)},
          {"training", training_summary(model)},
          {"overall", stats_to_json(report.overall)},
          {"outputs", std::move(outputs)}};
}

nlohmann::ordered_json explanation_to_json(const Model& model, const RowExplanation& e, int top,
                                   std::span<const std::string> names) {
  nlohmann::ordered_json contributions = nlohmann::ordered_json::array();
  const auto shown = std::min<std::size_t>(static_cast<std::size_t>(top), e.contributions.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const Contribution& c = e.contributions[i];
    nlohmann::ordered_json entry = {{"feature", c.feature}};
    add_term(entry, c.feature, names);
    entry.update({{"value", shortest(c.value)},
                  {"weight", shortest(c.weight)},
                  {"contribution", c.contribution},
                  {"versus_runner_up", c.versus_runner_up}});
    contributions.push_back(std::move(entry));
  }
  const auto name = [&](int c) { return model.classes[static_cast<std::size_t>(c)]; };
  return {{"row", e.row},
          {"predicted", name(e.predicted)},
          {"probability", e.probability},
          {"runner_up", name(e.runner_up)},
          {"runner_up_probability", e.runner_up_probability},
          {"output", e.output},
          {"logit_of", model.num_outputs == 1 ? name(1) : name(e.output)},
          {"logit", shortest(static_cast<float>(e.logit))},
          {"bias", shortest(static_cast<float>(e.bias))},
          {"contribution_sum", e.contribution_sum},
          {"margin", e.margin},
          {"versus_bias", e.versus_bias},
          {"nonzeros", e.contributions.size()},
          {"contributions", std::move(contributions)}};
}

}  // namespace bagel
