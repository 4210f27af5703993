// Training settings from JSON, validated once with field names, before any
// work starts (as LIBLINEAR's check_parameter does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/csr.h"
#include "bagel/loss.h"
#include "bagel/sample_weights.h"
#include "bagel/svmlight.h"
#include "bagel/text/text_corpus.h"
#include "bagel/text/text_format.h"
#include "bagel/text/vectorizer.h"

namespace bagel {

enum class LayerKind { kSparse, kDense };
enum class ScheduleKind { kConstant, kInvScaling, kOptimal, kLinear };
// How threads > 1 train deterministically (see trainer.h).
enum class DeterministicMethod { kAverage, kExact };

std::string to_string(LayerKind kind);
std::string to_string(ScheduleKind kind);
std::string to_string(DeterministicMethod method);
LayerKind parse_layer(const std::string& text, const std::string& field);
// "softmax" or "ovr" (model.multiclass).
Head parse_multiclass(const std::string& text, const std::string& field);

// A features file plus its labels. `labels` is empty when the features are
// svmlight (the label is in the file).
struct DataSpec {
  std::string features;
  std::string labels;
  ZeroBased zero_based = ZeroBased::kAuto;
  std::string sample_weights;     // one weight per row (train only); "" = all 1
  // Raw text instead of `features` ("text": a file or folder): read by
  // read_text_corpus and turned into features by the config's "vectorizer".
  // `text_format` nullopt: "auto" (detect_text_format, text_format.h).
  std::optional<TextInput> text;
  std::optional<TextFormat> text_format;
};

// The defaults were chosen on the real data sets of scripts/bench_defaults.sh
// (data/PERFORMANCE.md): "auto" values are resolved from the training data by
// resolve_auto() before training.
struct OptimizerConfig {
  int epochs = 0;                 // passes; 0 = "auto": auto_epochs(train x)
  double learning_rate = 0;       // eta0; 0 = "auto": picked on a sample (rate_calibration.h)
  ScheduleKind schedule = ScheduleKind::kLinear;
  double power_t = 0.5;           // invscaling exponent
  int batch_size = 1;
  double l2 = 0.0;
  double l1 = 0.0;
  std::uint64_t seed = 42;
  bool shuffle = true;
  int threads = 0;                // 0 = usable_cores() (cores.h); the plan uses fewer on small data
  bool deterministic = true;      // false: Hogwild (train_plan.h)
  DeterministicMethod deterministic_method = DeterministicMethod::kAverage;
  bool reorder_features = true;   // number features by frequency while training (feature_order.h)
  bool average = false;           // averaged SGD: the model is the mean of every step's weights
                                  // (one thread, or the deterministic replicas; no L1)
  bool average_auto = false;      // "auto", the config file's default (parse_config sets it):
                                  // `average` is then set by resolve_averaging, from the rows
  int average_from = 1;           // first epoch whose steps enter that mean (1 = all)
  ClassWeightSpec class_weight;   // per-class loss weights (sample_weights.h)
  int patience = 0;               // epochs without valid improvement before stopping; 0 = off
  double min_delta = 1e-4;        // improvement of valid log loss that counts
  double bias_rate = 1;           // the biases' rate over learning_rate
  bool bias_rate_auto = true;     // "auto", the config's default: 1, or with learning_rate
                                  // "auto", as the rows' scale asks (rate_calibration.h)
};

// model.multiclass when the config leaves it out: one-vs-rest, LIBLINEAR's
// and SGDClassifier's scheme. On the real multiclass sets of
// data/PERFORMANCE.md it was as accurate as softmax or more (kernel-doc-20:
// +0.5 to +1.1 points over four seeds, where softmax was 0.9 under
// LIBLINEAR) at the same cost a step.
inline constexpr Head kDefaultMulticlass = Head::kOneVsRest;

struct TrainConfig {
  DataSpec train;
  std::optional<DataSpec> valid;
  LayerKind layer = LayerKind::kSparse;
  // model.multiclass: the head of K > 2 classes (loss.h). Absent:
  // kDefaultMulticlass, or the head of the `init` model when training starts
  // from one.
  std::optional<Head> multiclass;
  OptimizerConfig optimizer;
  std::string output = "runs/model";
  // Whether train() (pipeline.h) also measures the model on its training
  // split (TrainResult::train_metrics, model.json's training.train_metrics):
  // `bagel train` prints them; the Python estimator, like scikit-learn's,
  // skips that pass over the data. Not a key of the config file.
  bool train_metrics = true;
  // How "text" inputs become features (scikit-learn's CountVectorizer
  // defaults unless the "vectorizer" section says otherwise); set only when
  // the training data is text.
  std::optional<VectorizerOptions> vectorizer;
  // The keys the config's own "vectorizer" section gives (none without a
  // section): a warm start from a text model keeps that model's vectorizer,
  // and these must match it (check_init_vectorizer, pipeline.h).
  std::vector<std::string> vectorizer_keys;
  // A model directory to start from instead of zeros ("init"; `--init`):
  // scikit-learn's warm_start, Vowpal Wabbit's -i. Its classes must hold the
  // training labels and its features match the data's columns. "" = zeros.
  std::string init;
  nlohmann::json resolved;        // every key with its effective value (saved in model.json)
};

// "auto" epochs, between 5 and 20: enough passes for about 200,000 updates of
// one row (sets of ~70k rows gained nothing past 5), and for each weight row
// in use to be updated about 300 times (nonzeros / used_features a pass):
// data whose features are mostly rare, such as 75 non-zeros a row over 2^20
// features, needs more passes than its row count says. Averaged SGD on at
// most kAutoAverageRows rows (average "auto"'s case) takes kSmallDataEpochs,
// or more where that is under kAveragedRowUpdates updates (at most
// kMaxSmallDataEpochs): there the mean of the steps kept gaining past 20
// passes, where the last iterate of larger sets lost accuracy from 20
// passes on, and a set of 930 rows gained again from 40 to ~100 (data/PERFORMANCE.md).
int auto_epochs(std::int64_t rows, std::int64_t nonzeros, std::int64_t used_features,
                bool averaged);

// auto_epochs for the rows of x (counts the columns its rows use: one pass);
// with row `weights`, of the rows whose weight is above 0 (a row of weight 0
// teaches nothing, however many of them there are).
int auto_epochs(const CsrMatrix& x, bool averaged, std::span<const float> weights = {});

// Rows of weight above 0 among `rows` with these row `weights` (every row
// without weights): the rows that count for the "auto" settings.
std::int64_t weighted_rows(std::int64_t rows, std::span<const float> weights);

inline constexpr int kSmallDataEpochs = 40;
inline constexpr std::int64_t kAveragedRowUpdates = 100000;
inline constexpr int kMaxSmallDataEpochs = 200;

// average "auto": averaged SGD for training sets of at most this many rows:
// on the four such sets of data/PERFORMANCE.md it changed test accuracy by +0.4, +1.3,
// +0.8 (fortunes) and -0.1 points (changelog-era) against the last iterate;
// on larger sets it was within noise and 1.3-1.6x slower.
inline constexpr std::int64_t kAutoAverageRows = 10000;

// Resolves average "auto" for `rows` training rows (a no-op otherwise): on
// when rows <= kAutoAverageRows and the settings allow averaging (no l1; the
// loop on one thread, `one_loop_thread`, which the plan may decide on small
// data whatever `threads` asks, or the deterministic replicas).
void resolve_averaging(OptimizerConfig& c, std::int64_t rows, bool one_loop_thread);

// Applies "a.b.c=value" overrides (value parsed as JSON, else taken as a
// string) to a config document. Throws ConfigError naming the override.
void apply_override(nlohmann::json& doc, const std::string& assignment);

// Validates and converts; relative paths are resolved against `base_dir`.
// Unknown keys are errors that name the nearest valid key; wrong types name
// the key path and the expected type.
TrainConfig parse_train_config(const nlohmann::json& doc, const std::filesystem::path& base_dir);

// Reads the file, applies overrides, parses. Errors name the file.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides);

}  // namespace bagel
