// What a trained model has learnt, for people: for each output column of the
// weights, the features with the largest and the smallest weights and summary
// statistics; for one input row, the features behind its prediction.
//
// A binary model has one column, the score of classes[1]: positive weights
// favour classes[1], negative ones classes[0]. A softmax model has one column
// per class, the logit of that class.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/csr.h"
#include "bagel/model.h"

namespace bagel {

// Statistics of a set of weights, accumulated in double.
struct WeightStats {
  std::int64_t weights = 0;   // how many values
  std::int64_t nonzero = 0;   // values that are not exactly 0 (L1 zeroes many)
  double l1 = 0;              // sum |w|
  double l2 = 0;              // sqrt(sum w^2)
  double max_abs = 0;         // largest |w|
};

struct FeatureWeight {
  Index feature;
  float weight;
};

// One output column of weight.npy.
struct OutputWeights {
  int output = 0;
  std::string favoured;     // the class positive weights favour
  std::string disfavoured;  // binary: the class negative weights favour; softmax: empty
  float bias = 0;
  WeightStats stats;
  // The `top` largest weights, largest first, and the `top` smallest,
  // smallest first; equal weights by feature index. Fewer when the model has
  // fewer features.
  std::vector<FeatureWeight> largest;
  std::vector<FeatureWeight> smallest;
};

struct WeightsReport {
  std::vector<OutputWeights> outputs;
  WeightStats overall;  // every weight of the model (the biases excluded)
};

// The output column holding `name`'s weights (binary models: 0 for either
// class). Throws UsageError naming `where` and listing the classes when
// `name` is not a class of the model.
int output_of_class(const Model& model, const std::string& name, const std::string& where);

// Summary of `outputs` (columns; all of them when empty) with `top` >= 0
// features each way.
WeightsReport inspect_weights(const Model& model, int top, std::span<const int> outputs = {});

// What model.json records about the training run, as a flat JSON object of
// the keys present, in this order: train and valid files, layer, epochs (resolved) and
// epochs_run, best_epoch, stopped_early, learning_rate (resolved), schedule,
// batch_size, l2, l1, average, train_rows, train_nonzeros, train_seconds,
// train_accuracy, train_log_loss, valid_accuracy, valid_log_loss,
// bagel_version. A model saved without a key (from Python, say) lacks it.
nlohmann::ordered_json training_summary(const Model& model);

// One stored non-zero x_j of a row and what it adds to the explained logit.
// The product of two floats is exact in double.
struct Contribution {
  Index feature;
  float value;                // x_j
  float weight;               // w[j, explained output]
  double contribution;        // x_j * w[j, output]
  double versus_runner_up;    // what it adds to z[predicted] - z[runner-up]
};

// How the order of contributions is chosen: by |contribution| to the
// explained logit, or by |versus_runner_up|.
enum class ExplainOrder { kContribution, kVersusRunnerUp };

// Why row `row` of `x` is predicted as it is. The explained logit is the
// binary score (of classes[1]) or the predicted class's softmax logit.
// Binary: the runner-up is the other class and versus_runner_up is the
// contribution signed towards the predicted class (z[classes[0]] is 0).
struct RowExplanation {
  Index row = 0;
  int predicted = 0;             // class id, the first arg-max as predict takes it
  double probability = 0;
  int runner_up = 0;             // class id: the next most probable (ties by class order)
  double runner_up_probability = 0;
  int output = 0;                // the explained column of weight.npy
  double logit = 0;              // as predict computes it (a float, from float kernels)
  double bias = 0;               // b[output] (a float)
  double versus_bias = 0;        // what the biases add to z[predicted] - z[runner-up]
  double margin = 0;             // z[predicted] - z[runner-up] as predict computes them
  double contribution_sum = 0;   // bias + every contribution, in double: `logit` to float precision
  // One entry per stored non-zero of the row (a feature stored twice is
  // listed twice, as the sum counts it twice), the largest first by `order`,
  // equal ones by position in the row.
  std::vector<Contribution> contributions;
};

// `x` must fit the model (predict.h's check_features_fit). Throws
// UsageError naming "--row" when `row` is not a row of `x` (`source` names
// the input in the message).
RowExplanation explain_row(const Model& model, const CsrMatrix& x, Index row,
                           const std::string& source,
                           ExplainOrder order = ExplainOrder::kContribution);

// The names of the model's feature columns: the vocabulary file
// `vocabulary_path` when given, else `model_dir`/vocabulary.txt when present
// (vocabulary_file.h), else none (empty). Throws FileError naming the file
// and the model when its length is not the model's num_features.
std::vector<std::string> feature_names(const Model& model, const std::string& model_dir,
                                       const std::string& vocabulary_path,
                                       std::string* found_at = nullptr);

// JSON forms of the reports, keys in a fixed order (the schema is in
// README.md, `bagel inspect`): features by index, with "term" when `names`
// is not empty. Their "feature" numbers are columns counted from 0; a
// model trained on one-based svmlight calls column k feature k + 1, which
// the reports' "training_svmlight_base" (training_svmlight_base_json) says.
// The first index of the model's training svmlight: 1 (one-based: column k
// is its feature k + 1), 0, or null (trained on another format, or saved
// before the base was recorded).
nlohmann::ordered_json training_svmlight_base_json(const Model& model);
nlohmann::ordered_json weights_report_to_json(const Model& model, const WeightsReport& report,
                                              std::span<const std::string> names);
nlohmann::ordered_json explanation_to_json(const Model& model, const RowExplanation& explanation,
                                           int top, std::span<const std::string> names);

}  // namespace bagel
