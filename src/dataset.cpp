#include "bagel/dataset.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/model.h"
#include "bagel/npy.h"
#include "bagel/npz.h"
#include "bagel/sample_weights.h"
#include "bagel/svmlight.h"
#include "bagel/text/text_corpus.h"
#include "bagel/text/text_format.h"
#include "bagel/text/text_lines.h"
#include "bagel/text/vectorizer.h"

namespace bagel {

namespace {

// A zip's first record: a local file header, or the end record of an empty
// archive.
bool has_zip_magic(std::string_view head) {
  return head.starts_with("PK\x03\x04") || head.starts_with("PK\x05\x06");
}

// The first bytes of a regular file; empty if it cannot be read (the reader
// then reports why, naming the file).
std::string first_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(kFormatMagicBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(in ? head.size() : static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return head;
}

[[noreturn]] void refuse_npy(const std::string& name) {
  throw FileError(name, "is an .npy array: dense arrays are not supported as features; save a "
                        "sparse CSR matrix with scipy.sparse.save_npz(path, "
                        "scipy.sparse.csr_matrix(X)), or svmlight text");
}

// A regular file may be empty (an empty matrix, as ever); a stream that
// held nothing is far more often a producer that failed.
void require_rows(const CsrMatrix& x, const std::string& name) {
  if (x.rows() == 0) throw FileError(name, "no rows: the stream ended before any row");
}

}  // namespace

namespace {

// The compression of a file by its magic bytes, and the tool that undoes
// it; {} for none: bagel reads none of them, and such bytes read as
// svmlight failed on the first label with a line of binary.
std::pair<const char*, const char*> compression_of(std::string_view head) {
  if (head.starts_with("\x1f\x8b")) return {"gzip", "zcat"};
  if (head.starts_with("BZh")) return {"bzip2", "bzcat"};
  if (head.starts_with("\xfd" "7zXZ")) return {"xz", "xzcat"};
  if (head.starts_with("\x28\xb5\x2f\xfd")) return {"zstd", "zstdcat"};
  return {nullptr, nullptr};
}

}  // namespace

FeatureFormat feature_format(const std::string& path, std::string_view head) {
  if (const auto [kind, tool] = compression_of(head); kind != nullptr)
    throw FileError(input_name(path), std::string("is ") + kind + "-compressed; bagel reads .npz and "
                                      "svmlight text: decompress it (" + tool + " " + (is_stream(path) || input_name(path).starts_with('<') ? "FILE" : input_name(path)) +
                                      " | bagel ... --input -)");
  if (has_zip_magic(head)) return FeatureFormat::kNpz;
  if (has_npy_magic(head)) return FeatureFormat::kNpy;
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".npz") return FeatureFormat::kNpz;
  if (ext == ".npy") return FeatureFormat::kNpy;
  return FeatureFormat::kSvmlight;
}

FeatureFormat feature_format_of(const std::string& path) {
  return feature_format(path, first_bytes(path));
}

bool has_svmlight_name(const std::string& path) {
  // In any case: x.SVM names svmlight as x.svm does.
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".svm" || ext == ".svmlight" || ext == ".libsvm";
}

CsrMatrix read_features(InputStream& in, ZeroBased zero_based, RawLabels* labels,
                        FeatureFormat* format, ZeroBased* base) {
  const FeatureFormat f = feature_format(in.name(), in.peek(kFormatMagicBytes));
  if (format != nullptr) *format = f;
  if (f == FeatureFormat::kNpy) refuse_npy(in.name());
  if (f == FeatureFormat::kNpz) {
    CsrMatrix x = read_npz_csr(std::make_unique<MappedFile>(in));
    require_rows(x, in.name());
    return x;
  }
  SvmlightData d = read_svmlight(in, zero_based);  // refuses no rows itself
  if (labels != nullptr) *labels = std::move(d.labels);
  if (base != nullptr) *base = d.base;
  return std::move(d.features);
}

CsrMatrix read_features(const std::string& path, ZeroBased zero_based, RawLabels* labels,
                        FeatureFormat* format, ZeroBased* base) {
  if (is_stream(path)) {
    InputStream in(path);
    return read_features(in, zero_based, labels, format, base);
  }
  const FeatureFormat f = feature_format_of(path);
  if (format != nullptr) *format = f;
  if (f == FeatureFormat::kNpy) refuse_npy(path);
  if (f == FeatureFormat::kNpz) return read_npz_csr(path);
  SvmlightData d = read_svmlight(path, zero_based);
  if (labels != nullptr) *labels = std::move(d.labels);
  if (base != nullptr) *base = d.base;
  return std::move(d.features);
}

namespace {

Dataset encode(const std::string& name, LabeledData data, const Classes& classes) {
  Dataset d;
  d.name = name;
  d.y = classes.encode(data.labels);
  d.x = std::move(data.features);
  d.columns_stored = data.format == FeatureFormat::kNpz;
  return d;
}

// Row weights from the config's class weights and the rows' own weights
// (from `source`). All of them 0 would train nothing but the L2 decay.
void weigh_rows(TrainingData& data, const OptimizerConfig& optimizer,
                std::span<const float> sample_weight, const std::string& source) {
  data.class_weight = class_weights(optimizer.class_weight, data.classes, data.train.y);
  data.train.weight = row_weights(data.class_weight, data.train.y, sample_weight);
  const std::vector<float>& w = data.train.weight;
  if (w.empty() || std::any_of(w.begin(), w.end(), [](float v) { return v != 0; })) return;
  const std::string message =
      "every training row has weight 0 (its sample weight times its class's weight; one below "
      "float32's smallest normal, 1.2e-38, is 0 in training): there is nothing to learn from";
  if (sample_weight.empty()) throw ConfigError("optimizer.class_weight", message);
  throw FileError(source, message);
}

// Before training: the classes within kMaxClasses, the weights (features of
// the wider split x outputs) within memory; errors name that split's source.
void check_model_fits(const TrainingData& data, const std::string& labels_source,
                      const std::string& train_source, const std::string& valid_source) {
  const bool valid_wider = data.valid && data.valid->x.cols() > data.train.x.cols();
  check_class_count(data.classes.size(), labels_source);
  check_model_size(valid_wider ? data.valid->x.cols() : data.train.x.cols(),
                   static_cast<int>(data.classes.size()), valid_wider ? valid_source : train_source);
}

// What a file reader checks, for arrays that did not come from a file.
void check_in_memory(const Dataset& d, std::size_t num_classes) {
  d.x.validate(d.name);
  if (static_cast<std::int64_t>(d.y.size()) != d.x.rows())
    throw FileError(d.name, "has " + std::to_string(d.y.size()) + " labels but " +
                                std::to_string(d.x.rows()) + " rows");
  for (std::size_t i = 0; i < d.y.size(); ++i)
    if (d.y[i] < 0 || static_cast<std::size_t>(d.y[i]) >= num_classes)
      throw FileError(d.name, "row " + std::to_string(i + 1) + ": class id " +
                                  std::to_string(d.y[i]) + " is not in [0, " +
                                  std::to_string(num_classes) + ")");
}

}  // namespace

TrainingData in_memory_training_data(const TrainConfig& config, Classes classes, Dataset train,
                                     std::optional<Dataset> valid,
                                     std::span<const float> sample_weight) {
  check_in_memory(train, classes.size());
  if (valid) check_in_memory(*valid, classes.size());
  if (!sample_weight.empty())
    check_sample_weights(sample_weight, train.x.rows(), "sample_weight");
  TrainingData out;
  out.classes = std::move(classes);
  out.train = std::move(train);
  out.valid = std::move(valid);
  check_model_fits(out, "y", out.train.name, out.valid ? out.valid->name : "");
  weigh_rows(out, config.optimizer, sample_weight, "sample_weight");
  return out;
}

namespace {

// The remedy of a reader error that a setting lifts, naming the key of the
// config section the file came from (valid.quoting, where the reader says
// quoting: the train section's key would not apply to the valid file).
std::string config_remedy(TextSettingError::Setting setting, const TextInput& input) {
  const auto key = [&](std::string_view name) { return setting_name(input, name); };
  switch (setting) {
    case TextSettingError::Setting::decode_error:
      return "save the file as UTF-8 (or set " + key("decode_error") +
             " to \"replace\" or \"ignore\")";
    case TextSettingError::Setting::unlabeled:
      return "set " + key("unlabeled") + " to \"skip\" to drop such lines as fastText does";
    case TextSettingError::Setting::mixed_labels:
      return "with " + key("unlabeled") + " \"keep\" either every line or no line has a label";
    case TextSettingError::Setting::quoting:
      return "close the quote, or set " + key("quoting") + " to \"none\" to read quotes as text";
  }
  return "";
}

// A text split's documents and labels, in the format it names or detects.
TextCorpus read_text_split(const DataSpec& spec) {
  TextInput input = *spec.text;
  input.format = spec.text_format ? *spec.text_format
                                  : detect_text_format(input.path, !input.labels_path.empty());
  input.format_detected = !spec.text_format;
  TextCorpus corpus;
  try {
    corpus = read_text_corpus(input);
  } catch (const TextSettingError& e) {
    throw FileError(e.file(), e.problem() + "; " + config_remedy(e.setting(), input), e.line());
  }
  if (corpus.size() == 0) throw FileError(corpus.source, "no documents: expected at least one");
  if (!corpus.labels)
    throw FileError(corpus.source, "has no labels: training needs one per document (a labels "
                                   "file for one document per line, __label__ words for fastText, "
                                   "a label column for TSV/CSV, sub-folders for a folder)");
  return corpus;
}

LabeledData text_features(TextCorpus& corpus, CsrMatrix features) {
  return LabeledData{std::move(features), std::move(*corpus.labels), FeatureFormat::kNpz};
}

// The row weights of a sample-weights file times those of the text reader.
std::vector<float> combined_weights(const DataSpec& spec, Index rows, std::vector<float> text) {
  std::vector<float> w;
  if (!spec.sample_weights.empty()) w = read_sample_weights(spec.sample_weights, rows);
  if (w.empty()) return text;
  for (std::size_t i = 0; i < text.size(); ++i) w[i] *= text[i];
  return w;
}

// Every index one column up (`x` read one-based is now read zero-based).
void shift_columns_up(CsrMatrix& x) {
  std::vector<Index> up(static_cast<std::size_t>(x.cols()) + 1);
  std::iota(up.begin(), up.end(), Index{1});
  x.widen(x.cols() + 1);
  x.remap_indices(up);
}

// The valid split, its svmlight indices read with the training split's base
// (TrainingData::zero_based), as load_svmlight_files reads several files: a
// base given for one of them holds for both; with "auto" for both, they are
// zero-based where either holds an index 0 or none at all, else one-based.
// Where train, read first, must become zero-based, its columns move up by
// one. A one-based valid given against a training file holding index 0 is an
// error.
LabeledData load_valid(const TrainConfig& config, bool train_svmlight, TrainingData& out) {
  DataSpec spec = *config.valid;
  const bool train_given = config.train.zero_based != ZeroBased::kAuto;
  const bool valid_given = spec.zero_based != ZeroBased::kAuto;
  // Train's reading settles valid's: given, or zero-based by an index 0 or none.
  if (train_svmlight && !valid_given && (train_given || out.zero_based != ZeroBased::kFalse))
    spec.zero_based = train_given ? config.train.zero_based : ZeroBased::kTrue;
  LabeledData valid = load_labeled(spec);
  if (valid.format != FeatureFormat::kSvmlight) return valid;
  if (train_svmlight && train_given && valid_given && spec.zero_based != config.train.zero_based)
    throw ConfigError("valid.zero_based",
                      "is " + to_string(spec.zero_based) + " but train.zero_based is " +
                          to_string(config.train.zero_based) +
                          ": the files of one model count their indices alike; give one of them");
  if (train_svmlight && !train_given) {
    const bool valid_zero = (valid_given ? spec.zero_based : valid.base) != ZeroBased::kFalse;
    if (out.zero_based == ZeroBased::kFalse && valid_zero) {
      shift_columns_up(out.train.x);
      out.zero_based = ZeroBased::kTrue;
    } else if (out.zero_based == ZeroBased::kTrue && !valid_zero) {
      throw ConfigError("valid.zero_based",
                        "is false (one-based indices), but the training file holds an index 0 "
                        "(zero-based); give train.zero_based as well, or leave valid's out");
    } else if (out.zero_based == ZeroBased::kAuto) {  // train holds no index: either base reads it
      out.zero_based = valid_given ? spec.zero_based : ZeroBased::kTrue;
    }
  }
  out.valid_zero_based = valid.base != ZeroBased::kAuto ? valid.base : out.zero_based;
  return valid;
}

}  // namespace

TrainingData load_training_data(const TrainConfig& config, const Classes* classes,
                                std::shared_ptr<const Vectorizer> fitted) {
  const auto t0 = std::chrono::steady_clock::now();
  TrainingData out;
  LabeledData train_raw;
  std::vector<float> text_weight;
  if (config.train.text) {
    TextCorpus text = read_text_split(config.train);
    if (fitted) {
      out.vectorizer = std::move(fitted);
      train_raw = text_features(text, out.vectorizer->transform(text.documents.views(), usable_cores()).to_csr());
    } else {
      auto [vectorizer, matrix] =
          Vectorizer::fit_transform(*config.vectorizer, text, usable_cores());
      out.vectorizer = std::make_shared<const Vectorizer>(std::move(vectorizer));
      train_raw = text_features(text, matrix.to_csr());
    }
    text_weight = std::move(text.weights);
  } else {
    train_raw = load_labeled(config.train);
  }
  out.classes = classes ? *classes : Classes::fit(train_raw.labels);
  out.zero_based = train_raw.base;
  const bool train_svmlight = train_raw.format == FeatureFormat::kSvmlight && !config.train.text;
  out.train = encode("train", std::move(train_raw), out.classes);
  const std::vector<float> sample_weight =
      combined_weights(config.train, out.train.x.rows(), std::move(text_weight));
  weigh_rows(out, config.optimizer, sample_weight,
             config.train.sample_weights.empty() ? out.train.name : config.train.sample_weights);
  if (config.valid && out.vectorizer) {
    TextCorpus text = read_text_split(*config.valid);
    out.valid = encode("valid", text_features(text, out.vectorizer->transform(text.documents.views(),
                                                                               usable_cores())
                                                        .to_csr()),
                       out.classes);
  } else if (config.valid) {
    out.valid = encode("valid", load_valid(config, train_svmlight, out), out.classes);
    // Refused here, before the rate calibration and the training it would
    // otherwise follow (its metrics need rows).
    if (out.valid->x.rows() == 0)
      throw FileError(input_name(config.valid->features),
                      "has no rows; a valid set (valid.features) needs at least one labelled row");
  }
  const std::string labels_source = !config.train.labels.empty() ? config.train.labels
                                    : config.train.text            ? config.train.text->path
                                                                   : config.train.features;
  check_model_fits(out, input_name(labels_source), input_name(config.train.features),
                   config.valid ? input_name(config.valid->features) : "");
  out.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

std::vector<std::string> text_format_notes(const TrainConfig& config) {
  std::vector<std::string> notes;
  const auto note = [&](const DataSpec& spec, const std::string& split) {
    if (!spec.text || spec.text_format) return;
    // Training needs labels, and "lines" takes them from a labels file
    // alone: with one, "auto" reads lines, so that file is the remedy
    // (format "lines" without it fails for want of labels).
    const std::string remedy = "to read each line whole as one document, give its labels as " + split +
                               ".labels (a file of one label per line)";
    try {
      if (detect_text_format(spec.text->path, !spec.text->labels_path.empty()) == TextFormat::csv)
        notes.push_back(csv_by_name_note(spec.text->path, remedy));
    } catch (const Error&) {
      // load_training_data reports it, in its order.
    }
  };
  note(config.train, "train");
  if (config.valid) note(*config.valid, "valid");
  return notes;
}

ZeroBased trained_zero_based(const Model& model) {
  const auto train = model.config.find("train");
  if (train == model.config.end() || !train->is_object()) return ZeroBased::kAuto;
  const auto base = train->find("zero_based");
  if (base == train->end() || !base->is_string()) return ZeroBased::kAuto;
  const std::string text = base->get<std::string>();
  return text == "true" ? ZeroBased::kTrue : text == "false" ? ZeroBased::kFalse : ZeroBased::kAuto;
}

void align_to_trained_base(CsrMatrix& x, ZeroBased read, const Model& model,
                           const std::string& source) {
  const ZeroBased trained = trained_zero_based(model);
  if (trained == ZeroBased::kAuto || read == ZeroBased::kAuto || read == trained) return;
  if (trained == ZeroBased::kTrue) {
    shift_columns_up(x);
    return;
  }
  throw FileError(source, "holds an index 0, but the model was trained on one-based svmlight (its "
                          "training file held no index 0: model.json config.train.zero_based is "
                          "\"false\"); give --zero-based true or false to say how this file "
                          "counts its indices");
}

LabeledData load_text_for_model(const Model& model, const std::string& path, TextFormat format,
                                int threads, bool format_detected, InputStream* stream) {
  const nlohmann::json train = model.config.value("train", nlohmann::json::object());
  TextInput input;
  input.path = path;
  input.stream = stream;
  input.format = format;
  input.format_detected = format_detected;
  input.label_prefix = train.value("label_prefix", input.label_prefix);
  input.tsv_label_column = train.value("label_column", input.tsv_label_column);
  input.tsv_text_column = train.value("text_column", input.tsv_text_column);
  input.tsv_header = train.value("header", input.tsv_header);
  input.tsv_label_name = train.value("label_name", input.tsv_label_name);
  input.tsv_text_name = train.value("text_name", input.tsv_text_name);
  input.quoting = parse_quoting(train.value("quoting", "csv"), "model.json config.train.quoting");
  input.decode_error =
      parse_decode_error(train.value("decode_error", "strict"), "model.json config.train.decode_error");
  input.multi_label = MultiLabel::first;
  input.unlabeled = Unlabeled::keep;
  TextCorpus corpus = read_text_corpus(input);
  LabeledData d;
  d.features = model.vectorizer->transform(corpus.documents.views(), threads).to_csr();
  if (corpus.labels) d.labels = std::move(*corpus.labels);
  d.format = FeatureFormat::kNpz;
  return d;
}

LabeledData load_labeled(const DataSpec& spec) {
  LabeledData d;
  d.features = read_features(spec.features, spec.zero_based, &d.labels, &d.format, &d.base);
  const std::string features = input_name(spec.features);
  if (!spec.labels.empty()) {
    d.labels = read_labels(spec.labels);
    if (d.labels.size() == 0 && d.features.rows() > 0)
      throw FileError(input_name(spec.labels),
                      "the labels file is empty, expected one label per row of " + features +
                          " (" + std::to_string(d.features.rows()) + " rows)");
  }
  if (d.labels.size() == 0 && d.features.rows() > 0)
    throw FileError(features, "no labels: give a labels file for .npz features");
  if (static_cast<std::int64_t>(d.labels.size()) != d.features.rows())
    throw FileError(spec.labels.empty() ? features : input_name(spec.labels),
                    "has " + std::to_string(d.labels.size()) + " labels but " + features +
                        " has " + std::to_string(d.features.rows()) + " rows");
  return d;
}

}  // namespace bagel
