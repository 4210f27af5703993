#include "bagel/config.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/json_parse.h"
#include "bagel/json_reader.h"
#include "bagel/override_error.h"
#include "bagel/train_plan.h"

namespace bagel {

namespace fs = std::filesystem;

std::string to_string(LayerKind kind) { return kind == LayerKind::kSparse ? "sparse" : "dense"; }

std::string to_string(DeterministicMethod method) {
  return method == DeterministicMethod::kAverage ? "average" : "exact";
}

std::string to_string(ScheduleKind kind) {
  switch (kind) {
    case ScheduleKind::kConstant: return "constant";
    case ScheduleKind::kInvScaling: return "invscaling";
    case ScheduleKind::kOptimal: return "optimal";
    case ScheduleKind::kLinear: return "linear";
  }
  return "?";
}

LayerKind parse_layer(const std::string& text, const std::string& field) {
  if (text == "sparse") return LayerKind::kSparse;
  if (text == "dense") return LayerKind::kDense;
  throw ConfigError(field, "expected \"sparse\" or \"dense\", found \"" + text + "\"");
}

Head parse_multiclass(const std::string& text, const std::string& field) {
  if (text == "softmax") return Head::kSoftmax;
  if (text == "ovr") return Head::kOneVsRest;
  throw ConfigError(field, "expected \"softmax\" or \"ovr\" (one-vs-rest), found \"" + text + "\"");
}

namespace {

ScheduleKind parse_schedule(const std::string& text, const std::string& field) {
  for (ScheduleKind k : {ScheduleKind::kConstant, ScheduleKind::kInvScaling,
                         ScheduleKind::kOptimal, ScheduleKind::kLinear})
    if (text == to_string(k)) return k;
  throw ConfigError(field, "expected one of \"constant\", \"invscaling\", \"optimal\", "
                           "\"linear\", found \"" + text + "\"");
}

DeterministicMethod parse_deterministic_method(const std::string& text, const std::string& field) {
  for (DeterministicMethod m : {DeterministicMethod::kAverage, DeterministicMethod::kExact})
    if (text == to_string(m)) return m;
  throw ConfigError(field, "expected \"average\" or \"exact\", found \"" + text + "\"");
}

std::string resolve(const std::string& path, const fs::path& base_dir) {
  if (path.empty()) return path;
  const fs::path p(path);
  return p.is_absolute() ? path : (base_dir / p).lexically_normal().string();
}

// An int key in [lo, hi] (JsonReader::get_integer: a value outside names the range).
int get_int(JsonReader& r, const std::string& key, int fallback, int lo, int hi) {
  return static_cast<int>(r.get_integer(key, fallback, lo, hi));
}

// "text" data: {"text": FILE or FOLDER, "format": ..., "labels": ..., ...}.
DataSpec parse_text_data(JsonReader& r, const fs::path& base_dir, bool weights_allowed) {
  DataSpec spec;
  TextInput in;
  in.path = resolve(r.require_string("text"), base_dir);
  in.labels_path = resolve(r.get_string("labels", ""), base_dir);
  spec.labels = in.labels_path;
  spec.text_format = parse_text_format(r.get_string("format", "auto"), r.field("format"));
  in.decode_error = parse_decode_error(r.get_string("decode_error", "strict"), r.field("decode_error"));
  in.label_prefix = r.get_string("label_prefix", in.label_prefix);
  if (in.label_prefix.empty()) throw ConfigError(r.field("label_prefix"), "must not be empty");
  in.multi_label = parse_multi_label(r.get_string("multi_label", "split"), r.field("multi_label"));
  in.unlabeled = parse_unlabeled(r.get_string("unlabeled", "error"), r.field("unlabeled"));
  in.tsv_label_column = get_int(r, "label_column", in.tsv_label_column, -1, 1 << 20);
  in.tsv_text_column = get_int(r, "text_column", in.tsv_text_column, 0, 1 << 20);
  in.tsv_header = r.get_bool("header", in.tsv_header);
  in.tsv_label_name = r.get_string("label_name", "");
  in.tsv_text_name = r.get_string("text_name", "");
  in.quoting = parse_quoting(r.get_string("quoting", "csv"), r.field("quoting"));
  in.config_section = r.path();
  if (weights_allowed) spec.sample_weights = resolve(r.get_string("sample_weights", ""), base_dir);
  r.finish();
  if (!in.labels_path.empty() && spec.text_format && *spec.text_format != TextFormat::lines)
    throw ConfigError(r.field("labels"), "a labels file goes with \"format\": \"lines\" (one "
                                         "document per line); " + to_string(*spec.text_format) +
                                         " input carries its labels");
  spec.text = in;
  return spec;
}

DataSpec parse_data(JsonReader r, const fs::path& base_dir, bool weights_allowed) {
  if (r.has("text")) {
    if (r.has("features"))
      throw ConfigError(r.field("text"), "give \"features\" (a CSR file) or \"text\" (raw text), not both");
    return parse_text_data(r, base_dir, weights_allowed);
  }
  // Read only with "text": named as such, where "unknown key" would list
  // the features keys alone and leave the user to guess.
  for (const char* key : {"format", "decode_error", "label_prefix", "multi_label", "unlabeled",
                          "label_column", "text_column", "header", "label_name", "text_name", "quoting"})
    if (r.has(key))
      throw ConfigError(r.field(key), "applies to raw text (\"text\": a file or folder of "
                                      "documents), not to \"features\" (a CSR file)");
  DataSpec spec;
  const std::string features = r.require_string("features");
  if (features.empty()) throw ConfigError(r.field("features"), "is empty, expected the features file (.npz or svmlight)");
  spec.features = resolve(features, base_dir);
  spec.labels = resolve(r.get_string("labels", ""), base_dir);
  if (weights_allowed) spec.sample_weights = resolve(r.get_string("sample_weights", ""), base_dir);
  // zero_based: "auto" | "true" | "false", and JSON true/false for the latter two.
  const nlohmann::json* zb = r.has("zero_based") ? &r.raw("zero_based") : nullptr;
  if (zb != nullptr && zb->is_boolean())
    spec.zero_based = zb->get<bool>() ? ZeroBased::kTrue : ZeroBased::kFalse;
  else if (zb != nullptr && !zb->is_string() && !zb->is_null())
    throw ConfigError(r.field("zero_based"), "expected \"auto\", true or false, found " + zb->dump());
  else
    spec.zero_based = parse_zero_based(r.get_string("zero_based", "auto"), r.field("zero_based"));
  r.finish();
  const bool is_npz = fs::path(spec.features).extension() == ".npz";
  if (is_npz && spec.labels.empty())
    throw ConfigError(r.field("labels"), "is required for .npz features (" + spec.features +
                                             "); only svmlight files carry their labels");
  return spec;
}

void require(bool ok, const std::string& field, const std::string& message) {
  if (!ok) throw ConfigError(field, message);
}

// null/absent, "balanced", or {"class name": weight >= 0, ...}.
ClassWeightSpec parse_class_weight(JsonReader& r) {
  const std::string key = "class_weight";
  ClassWeightSpec spec;
  if (!r.has(key) || r.raw(key).is_null()) return spec;
  const nlohmann::json& v = r.raw(key);
  const std::string expected = "expected \"balanced\" or an object {\"class\": weight >= 0, ...}";
  if (v.is_string()) {
    require(v.get<std::string>() == "balanced", r.field(key),
            expected + ", found \"" + v.get<std::string>() + "\"");
    spec.kind = ClassWeightSpec::Kind::kBalanced;
    return spec;
  }
  require(v.is_object(), r.field(key), expected + ", found " + std::string(v.type_name()));
  spec.kind = ClassWeightSpec::Kind::kMap;
  for (const auto& [name, weight] : v.items()) {
    const std::string field = r.field(key) + "." + name;
    require(weight.is_number(), field, "expected a number >= 0, found " + std::string(weight.type_name()));
    const double w = weight.get<double>();
    require(std::isfinite(w) && w >= 0, field, "expected a finite number >= 0, found " + weight.dump());
    spec.map.emplace_back(name, w);
  }
  return spec;
}

// "auto" (kept as 0) or an integer in [lo, hi].
int parse_auto_int(JsonReader& r, const std::string& key, int lo, int hi) {
  if (r.has(key) && r.raw(key).is_string()) {
    const std::string text = r.raw(key).get<std::string>();
    require(text == "auto", r.field(key),
            "expected an integer >= " + std::to_string(lo) + " or \"auto\", found \"" + text + "\"");
    return 0;
  }
  // Absent or null: "auto", as every key's null is its default.
  return get_int(r, key, 0, lo, hi);
}

// "auto" (kept as 0, as threads 0 means all cores) or a number > 0.
double parse_auto_positive(JsonReader& r, const std::string& key) {
  if (r.has(key) && r.raw(key).is_null()) return 0;  // null is the default, as for every key
  if (r.has(key) && r.raw(key).is_string()) {
    const std::string text = r.raw(key).get<std::string>();
    require(text == "auto", r.field(key), "expected a number > 0 or \"auto\", found \"" + text + "\"");
    return 0;
  }
  const double rate = r.get_number(key, 0);
  require(rate > 0 || !r.has(key), r.field(key), "expected a number > 0 or \"auto\"");
  return rate;
}

OptimizerConfig parse_optimizer(JsonReader r) {
  OptimizerConfig o;
  const auto lim = std::numeric_limits<int>::max();
  o.epochs = parse_auto_int(r, "epochs", 1, lim);
  o.learning_rate = parse_auto_positive(r, "learning_rate");
  if (const double bias_rate = parse_auto_positive(r, "bias_rate"); bias_rate > 0) {
    o.bias_rate = bias_rate;
    o.bias_rate_auto = false;
  }
  o.schedule = parse_schedule(r.get_string("schedule", to_string(o.schedule)), r.field("schedule"));
  o.power_t = r.get_number("power_t", o.power_t);
  require(o.power_t >= 0, r.field("power_t"), "expected a number >= 0");
  o.batch_size = get_int(r, "batch_size", o.batch_size, 1, lim);
  o.l2 = r.get_number("l2", o.l2);
  require(o.l2 >= 0, r.field("l2"), "expected a number >= 0");
  o.l1 = r.get_number("l1", o.l1);
  require(o.l1 >= 0, r.field("l1"), "expected a number >= 0");
  o.seed = static_cast<std::uint64_t>(r.get_integer("seed", static_cast<std::int64_t>(o.seed), 0,
                                                    std::numeric_limits<std::int64_t>::max()));
  o.shuffle = r.get_bool("shuffle", o.shuffle);
  o.threads = get_int(r, "threads", o.threads, 0, 1024);
  o.deterministic = r.get_bool("deterministic", o.deterministic);
  o.deterministic_method = parse_deterministic_method(
      r.get_string("deterministic_method", to_string(o.deterministic_method)),
      r.field("deterministic_method"));
  o.reorder_features = r.get_bool("reorder_features", o.reorder_features);
  if (!r.has("average") || r.raw("average").is_null() || r.raw("average") == "auto") {
    r.get_string("average", "auto");  // marks the key as known
    o.average_auto = true;
  } else {
    require(r.raw("average").is_boolean(), r.field("average"),
            "expected true, false or \"auto\", found " + r.raw("average").dump());
    o.average = r.get_bool("average", o.average);
  }
  require(!o.average || o.threads == 1 || parallel_strategy(o) == ParallelStrategy::kReplicas,
          r.field("average"),
          "averaging runs on one thread or with deterministic_method \"average\": set "
          "optimizer.threads to 1 (it is " + std::to_string(o.threads) +
              "), or deterministic to true and deterministic_method to \"average\"");
  o.average_from = get_int(r, "average_from", o.average_from, 1, o.epochs > 0 ? o.epochs : lim);
  require(o.average || o.average_from == 1, r.field("average_from"),
          o.average_auto ? "applies to averaged SGD, which \"auto\" (the default average) "
                           "chooses only after reading the data: set optimizer.average to true, or "
                           "leave average_from out"
                         : "applies to averaged SGD: set optimizer.average to true, or leave "
                           "average_from out");
  require(!o.average || o.l1 == 0, r.field("average"),
          "averaging does not combine with l1 (lazy L1 shrinkage would need its own catch-up "
          "of the average): set l1 to 0 or average to false");
  o.class_weight = parse_class_weight(r);
  o.patience = get_int(r, "patience", o.patience, 0, lim);
  o.min_delta = r.get_number("min_delta", o.min_delta);
  require(o.min_delta >= 0, r.field("min_delta"), "expected a number >= 0");
  r.finish();
  require(o.schedule != ScheduleKind::kOptimal || o.l2 + o.l1 > 0, r.field("schedule"),
          "\"optimal\" sets eta = 1 / (alpha * (t0 + t - 1)) with alpha = l2 + l1, so it needs "
          "l2 or l1 > 0");
  // With eager decay w *= (1 - eta * l2) a factor <= 0 flips or zeroes every
  // weight. Rates only fall over time, so the first one is the one to check;
  // "optimal" starts at (l2 + l1)^(-1/4) (see schedule.h).
  const double first_eta = o.schedule == ScheduleKind::kOptimal
                               ? std::pow(o.l2 + o.l1, -0.25)
                               : o.learning_rate;
  require(first_eta * o.l2 < 1, r.field("l2"),
          "the first learning rate times l2 must be < 1 (the weight decay factor 1 - eta*l2 "
          "must stay positive); it is " + std::to_string(first_eta * o.l2));
  return o;
}

nlohmann::json class_weight_json(const ClassWeightSpec& s) {
  if (s.kind == ClassWeightSpec::Kind::kNone) return nullptr;
  if (s.kind == ClassWeightSpec::Kind::kBalanced) return "balanced";
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, w] : s.map) j[name] = w;
  return j;
}

nlohmann::json data_json(const DataSpec& d) {
  if (d.text) {
    nlohmann::json j = {{"text", d.text->path},
                        {"format", d.text_format ? to_string(*d.text_format) : "auto"}};
    if (!d.labels.empty()) j["labels"] = d.labels;
    if (!d.sample_weights.empty()) j["sample_weights"] = d.sample_weights;
    const TextInput& t = *d.text;
    const DecodeError e = t.decode_error;
    j["decode_error"] = e == DecodeError::strict ? "strict" : e == DecodeError::ignore ? "ignore" : "replace";
    j["label_prefix"] = t.label_prefix;
    j["multi_label"] = t.multi_label == MultiLabel::split ? "split"
                       : t.multi_label == MultiLabel::first ? "first" : "error";
    j["unlabeled"] = t.unlabeled == Unlabeled::error ? "error"
                     : t.unlabeled == Unlabeled::skip ? "skip" : "keep";
    j.update({{"label_column", t.tsv_label_column}, {"text_column", t.tsv_text_column},
              {"header", t.tsv_header}, {"label_name", t.tsv_label_name},
              {"text_name", t.tsv_text_name},
              {"quoting", t.quoting == Quoting::csv ? "csv" : "none"}});
    return j;
  }
  nlohmann::json j = {{"features", d.features}};
  if (!d.labels.empty()) j["labels"] = d.labels;
  if (!d.sample_weights.empty()) j["sample_weights"] = d.sample_weights;
  j["zero_based"] = to_string(d.zero_based);
  return j;
}

nlohmann::json resolved_json(const TrainConfig& c) {
  const OptimizerConfig& o = c.optimizer;
  nlohmann::json j;
  j["train"] = data_json(c.train);
  if (c.valid) j["valid"] = data_json(*c.valid);
  j["model"] = {{"layer", to_string(c.layer)}};
  if (c.multiclass) j["model"]["multiclass"] = to_string(*c.multiclass);
  const nlohmann::json rate =
      o.learning_rate > 0 ? nlohmann::json(o.learning_rate) : nlohmann::json("auto");
  const nlohmann::json epochs = o.epochs > 0 ? nlohmann::json(o.epochs) : nlohmann::json("auto");
  const nlohmann::json bias_rate =
      o.bias_rate_auto ? nlohmann::json("auto") : nlohmann::json(o.bias_rate);
  j["optimizer"] = {{"epochs", epochs}, {"learning_rate", rate}, {"bias_rate", bias_rate},
                    {"schedule", to_string(o.schedule)}, {"power_t", o.power_t},
                    {"batch_size", o.batch_size}, {"l2", o.l2}, {"l1", o.l1},
                    {"seed", o.seed}, {"shuffle", o.shuffle}, {"threads", o.threads},
                    {"deterministic", o.deterministic},
                    {"deterministic_method", to_string(o.deterministic_method)},
                    {"reorder_features", o.reorder_features}, {"average", o.average_auto ? nlohmann::json("auto") : nlohmann::json(o.average)},
                    {"average_from", o.average_from},
                    {"class_weight", class_weight_json(o.class_weight)},
                    {"patience", o.patience},
                    {"min_delta", o.min_delta}};
  if (c.vectorizer) j["vectorizer"] = vectorizer_options_to_json(*c.vectorizer);
  j["output"] = c.output;
  j["init"] = c.init.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.init);
  return j;
}

}  // namespace

int auto_epochs(std::int64_t rows, std::int64_t nonzeros, std::int64_t used_features,
                bool averaged) {
  if (averaged && rows <= kAutoAverageRows) {
    const std::int64_t for_updates =
        (kAveragedRowUpdates + rows - 1) / std::max<std::int64_t>(rows, 1);
    return static_cast<int>(std::clamp<std::int64_t>(for_updates, kSmallDataEpochs, kMaxSmallDataEpochs));
  }
  constexpr std::int64_t kRowUpdates = 200000;
  constexpr std::int64_t kWeightUpdates = 300;
  const std::int64_t for_rows = (kRowUpdates + rows - 1) / std::max<std::int64_t>(rows, 1);
  // ceil(kWeightUpdates / (nonzeros / used_features)), in integers.
  const std::int64_t for_weights =
      (kWeightUpdates * used_features + nonzeros - 1) / std::max<std::int64_t>(nonzeros, 1);
  return static_cast<int>(std::clamp<std::int64_t>(std::max(for_rows, for_weights), 5, 20));
}

int auto_epochs(const CsrMatrix& x, bool averaged, std::span<const float> weights) {
  std::vector<bool> used(static_cast<std::size_t>(x.cols()), false);
  std::int64_t used_features = 0, rows = 0, nonzeros = 0;
  for (Index r = 0; r < x.rows(); ++r) {
    if (!weights.empty() && !(weights[static_cast<std::size_t>(r)] > 0)) continue;
    ++rows;
    for (const Index j : x.row(r).indices) {
      ++nonzeros;
      if (used[static_cast<std::size_t>(j)]) continue;
      used[static_cast<std::size_t>(j)] = true;
      ++used_features;
    }
  }
  return auto_epochs(rows, nonzeros, used_features, averaged);
}

std::int64_t weighted_rows(std::int64_t rows, std::span<const float> weights) {
  if (weights.empty()) return rows;
  return std::count_if(weights.begin(), weights.end(), [](float w) { return w > 0; });
}

void resolve_averaging(OptimizerConfig& c, std::int64_t rows, bool one_loop_thread) {
  if (!c.average_auto) return;
  c.average_auto = false;
  const bool allowed =
      c.l1 == 0 && (one_loop_thread || parallel_strategy(c) == ParallelStrategy::kReplicas);
  c.average = allowed && rows <= kAutoAverageRows;
}

void apply_override(nlohmann::json& doc, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError("--set " + assignment, "expected KEY.PATH=VALUE, e.g. optimizer.epochs=10");
  const std::string key = assignment.substr(0, eq);
  const std::string text = assignment.substr(eq + 1);
  // Bare words are strings: --set model.layer=dense.
  const nlohmann::json value =
      parse_json_value(text, "--set " + assignment).value_or(nlohmann::json(text));
  nlohmann::json* node = &doc;
  std::stringstream parts(key);
  std::string part;
  std::vector<std::string> names;
  while (std::getline(parts, part, '.')) names.push_back(part);
  if (key.back() == '.' || std::find(names.begin(), names.end(), "") != names.end())
    throw UsageError("--set " + assignment,
                     "expected KEY.PATH=VALUE without an empty key between dots, e.g. "
                     "optimizer.epochs=10");
  const auto not_an_object = [&] {
    return UsageError("--set " + assignment, "cannot set a key inside a value that is not an object");
  };
  for (std::size_t i = 0; i + 1 < names.size(); ++i) {
    if (!node->is_object()) throw not_an_object();
    node = &(*node)[names[i]];
    if (node->is_null()) *node = nlohmann::json::object();
  }
  if (!node->is_object()) throw not_an_object();
  (*node)[names.back()] = value;
}

namespace {

// The files a config reads, each named by its key.
std::vector<std::pair<std::string, std::string>> config_inputs(const TrainConfig& c) {
  std::vector<std::pair<std::string, std::string>> inputs;
  const auto add = [&](const std::string& split, const DataSpec& d) {
    if (d.text) inputs.emplace_back(split + ".text", d.text->path);
    inputs.emplace_back(split + ".features", d.features);
    inputs.emplace_back(split + ".labels", d.labels);
    inputs.emplace_back(split + ".sample_weights", d.sample_weights);
  };
  add("train", c.train);
  if (c.valid) add("valid", *c.valid);
  return inputs;
}

// Two inputs of the config that are one stream (/dev/stdin twice, say):
// each reader would get some of its bytes. A ConfigError naming the later
// key. `inputs` may start with the config file itself, which is read first.
void check_one_reader_per_stream(const std::vector<std::pair<std::string, std::string>>& inputs) {
  for (std::size_t j = 1; j < inputs.size(); ++j)
    for (std::size_t i = 0; i < j; ++i) {
      if (!same_stream(inputs[i].second, inputs[j].second)) continue;
      const bool stdin = is_stdin(inputs[j].second);
      throw ConfigError(inputs[j].first,
                        (stdin ? "is standard input, and so is " : "is the stream read by ") +
                            inputs[i].first + ": both cannot be read from " +
                            (stdin ? "stdin" : "one stream") + "; give one of them as a file");
    }
}

}  // namespace

TrainConfig parse_train_config(const nlohmann::json& doc, const fs::path& base_dir) {
  JsonReader root(doc, "");
  TrainConfig c;
  if (!root.has("train")) throw ConfigError("train", "is required: {\"features\": ..., \"labels\": ...}");
  c.train = parse_data(root.object("train"), base_dir, true);
  if (root.has("valid") && !doc.at("valid").is_null())
    c.valid = parse_data(root.object("valid"), base_dir, false);
  else root.get_string("valid", "");  // mark as known
  if (root.has("model")) {
    JsonReader m = root.object("model");
    c.layer = parse_layer(m.get_string("layer", "sparse"), m.field("layer"));
    if (m.has("multiclass") && !m.raw("multiclass").is_null())
      c.multiclass = parse_multiclass(m.get_string("multiclass", ""), m.field("multiclass"));
    m.finish();
  } else {
    root.get_string("model", "");
  }
  if (c.train.text) {
    const nlohmann::json section =
        root.has("vectorizer") ? root.raw("vectorizer") : nlohmann::json::object();
    c.vectorizer = vectorizer_options_from_json(section, "vectorizer", base_dir);
    for (const auto& [key, value] : section.items()) c.vectorizer_keys.push_back(key);
  } else if (root.has("vectorizer")) {
    root.raw("vectorizer");
    throw ConfigError("vectorizer", "turns raw text into features: it needs \"train\": {\"text\": ...}");
  }
  if (c.valid && static_cast<bool>(c.valid->text) != static_cast<bool>(c.train.text))
    throw ConfigError(c.train.text ? "valid.features" : "valid.text",
                      c.train.text ? "valid must be raw text (\"text\") as train is"
                                   : "valid must be features (\"features\") as train is");
  if (root.has("optimizer")) {
    c.optimizer = parse_optimizer(root.object("optimizer"));
  } else {
    root.get_string("optimizer", "");
    c.optimizer.average_auto = true;  // the config's default, as in parse_optimizer
  }
  c.output = resolve(root.get_string("output", c.output), base_dir);
  if (c.output.empty()) throw ConfigError("output", "is empty, expected the model's folder");
  if (root.has("init") && !doc.at("init").is_null())
    c.init = resolve(root.get_string("init", ""), base_dir);
  else root.get_string("init", "");  // mark as known
  root.finish();
  if (!c.valid && c.optimizer.patience > 0)
    throw ConfigError("optimizer.patience", "early stopping needs a \"valid\" set");
  check_one_reader_per_stream(config_inputs(c));
  c.resolved = resolved_json(c);
  return c;
}

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
  nlohmann::json doc = read_json_file(path, "config file");
  for (const std::string& o : overrides) apply_override(doc, o);
  try {
    TrainConfig c = parse_train_config(doc, fs::absolute(path).parent_path());
    // A config read from stdin leaves nothing there for its data.
    std::vector<std::pair<std::string, std::string>> inputs = config_inputs(c);
    inputs.insert(inputs.begin(), {"the config file", path});
    check_one_reader_per_stream(inputs);
    return c;
  } catch (const ConfigError& e) {
    // "cfg.json: optimizer.epochs: expected ...", or "--set optimizer.epochs=x: expected ..."
    rethrow_config_error(e, path, overrides);
  }
}

}  // namespace bagel
