// A features file plus labels, loaded and checked against each other.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/input_stream.h"
#include "bagel/labels.h"
#include "bagel/model.h"

namespace bagel {

class Vectorizer;

// How a features input is read. By its first bytes when they say (a zip is
// an .npz, "\x93NUMPY" an .npy), else by its name (.npz, .npy), else
// svmlight text. Streams have no useful name, so the bytes must decide.
enum class FeatureFormat { kNpz, kNpy, kSvmlight };
inline constexpr std::size_t kFormatMagicBytes = 6;
// `head`: the input's first kFormatMagicBytes bytes (fewer if it is shorter).
FeatureFormat feature_format(const std::string& path, std::string_view head);

// feature_format() of a regular file, by its first bytes and name.
FeatureFormat feature_format_of(const std::string& path);

// Whether `path`'s name marks it as svmlight: *.svm, *.svmlight or *.libsvm,
// in any case.
// Any file not .npz/.npy reads as svmlight where features are expected; a
// model trained on text reads raw text unless the name says features.
bool has_svmlight_name(const std::string& path);

// Reads .npz (scipy CSR) or svmlight text, by feature_format(). An .npy is an
// error that says how to save a CSR instead. For svmlight, `labels` receives
// the labels in the file when non-null. `format`, when non-null, receives the
// format read: an .npz stores its column count, svmlight's is inferred from
// its largest index (check_features_fit treats them differently).
// A stream (input_stream.h) is read as it arrives, or whole for .npz; one
// that yields no row is an error ("no rows"), while an empty regular file
// gives an empty matrix, as it always has. `base`, when non-null, receives
// the base svmlight indices were read with (SvmlightData::base; kAuto for
// other formats).
CsrMatrix read_features(const std::string& path, ZeroBased zero_based, RawLabels* labels,
                        FeatureFormat* format = nullptr, ZeroBased* base = nullptr);
// The same from a stream already opened (and perhaps peeked at).
CsrMatrix read_features(InputStream& in, ZeroBased zero_based, RawLabels* labels,
                        FeatureFormat* format = nullptr, ZeroBased* base = nullptr);

// Features and labels of one split. Labels come from spec.labels when given
// (also overriding an svmlight file's own), else from the svmlight file.
// The row counts must agree.
struct LabeledData {
  CsrMatrix features;
  RawLabels labels;
  FeatureFormat format = FeatureFormat::kNpz;
  ZeroBased base = ZeroBased::kAuto;  // svmlight: the base read (SvmlightData::base)
};
LabeledData load_labeled(const DataSpec& spec);

// Encoded split, ready for training or evaluation.
struct Dataset {
  std::string name;                 // "train", "valid", ... for messages
  CsrMatrix x;
  std::vector<std::int32_t> y;      // class ids
  std::vector<float> weight;        // per-row loss weights (sample_weights.h); empty = all 1
  // x.cols() was stored in the file (.npz: its vocabulary's width) rather
  // than inferred from the largest index (svmlight); see check_features_fit.
  bool columns_stored = false;
};

// What training needs from a config's data: the classes (from the training
// labels), the encoded splits, the row weights set from train.sample_weights
// and optimizer.class_weight (whose resolved per-class values are kept), and
// the loading time. Errors name the file, line or key.
struct TrainingData {
  Classes classes;
  Dataset train;
  std::optional<Dataset> valid;
  std::vector<double> class_weight;  // per class id
  double load_seconds = 0;
  // Text data: the vectorizer fitted on the training documents (the model
  // keeps it, so that predict reads text the same way); null otherwise.
  std::shared_ptr<const Vectorizer> vectorizer;
  // svmlight splits: the index base they were read with (LabeledData::base),
  // one for both where valid's is "auto": train's where it held an index 0 or
  // was given, else zero-based when valid holds an index 0 (train's columns
  // then move up by one), as scikit-learn's load_svmlight_files decides for
  // several files; valid alone could decide otherwise and shift every column
  // by one. kAuto: no svmlight index read. The model records them (its
  // config's zero_based), and predict's "auto" follows train's.
  ZeroBased zero_based = ZeroBased::kAuto;
  ZeroBased valid_zero_based = ZeroBased::kAuto;
};
// Text splits ("text" in the config) are read by read_text_corpus and
// turned into features by the vectorizer fitted on the training documents
// (config.vectorizer): the valid documents go through its transform; a
// multi-label fastText line's row weights multiply the sample weights.
// `classes`, when given (a warm start: the starting model's classes), are
// used instead of the training labels' own: every label must be one of them.
// `fitted`, when given (a warm start from a model trained on text), turns
// text into features instead of a vectorizer fitted here: the columns must
// mean what they meant to that model.
TrainingData load_training_data(const TrainConfig& config, const Classes* classes = nullptr,
                                std::shared_ptr<const Vectorizer> fitted = nullptr);

// What `bagel train` and `tune` note before reading a config's text: each
// split whose "auto" format takes a *.csv for a table by its name alone
// (csv_by_name_note, text_format.h). Looks at each text file's first line;
// a file that cannot be read gives no note (reading it says why).
std::vector<std::string> text_format_notes(const TrainConfig& config);

// The base `model`'s training svmlight was read with (model.config's
// train.zero_based, TrainingData::zero_based): kTrue or kFalse, or kAuto
// where unknown (other formats, models saved before it was recorded).
ZeroBased trained_zero_based(const Model& model);

// Rows of svmlight `x` read from `source` with "auto" (as base `read`),
// brought to the base `model` trained with, as its two files read together
// would be: a file without index 0 is read zero-based after a zero-based
// training file (its columns move up by one). A file holding an index 0
// after a one-based training file is an error that says which option to
// give (FileError). A no-op where either base is unknown.
void align_to_trained_base(CsrMatrix& x, ZeroBased read, const Model& model,
                           const std::string& source);

// Raw text for `model` (trained on text): read with the settings its
// training text was read with (model.config's "train": label prefix,
// columns, quoting, decode_error) in `format`, vectorised by the model's
// vectorizer. One row per document: a fastText line's first label is its
// label, and lines without labels are kept (the result then has no labels).
// `format_detected`: "auto" chose `format` (TextInput::format_detected: a
// table's errors then say why the file was read as one). `stream`: `path`
// already opened (TextInput::stream), or null.
LabeledData load_text_for_model(const Model& model, const std::string& path, TextFormat format,
                                int threads, bool format_detected = false,
                                InputStream* stream = nullptr);

// The same from data already in memory (the Python estimator's arrays):
// `train` and `valid` hold encoded labels for `classes`; `sample_weight` is
// one weight per training row, or empty for all 1. Checks what a file
// reader would (the CSR invariants, a label id per row within the classes,
// finite weights >= 0), naming each split by its name; the row weights are
// set as load_training_data sets them.
TrainingData in_memory_training_data(const TrainConfig& config, Classes classes, Dataset train,
                                     std::optional<Dataset> valid,
                                     std::span<const float> sample_weight);

}  // namespace bagel
