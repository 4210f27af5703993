// A features file plus labels, loaded and checked against each other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/labels.h"

namespace bagel {

// Reads .npz (by extension) or svmlight text (anything else).
// For svmlight, `labels` receives the labels in the file when non-null.
CsrMatrix read_features(const std::string& path, ZeroBased zero_based, RawLabels* labels);

// Features and labels of one split. Labels come from spec.labels when given
// (also overriding an svmlight file's own), else from the svmlight file.
// The row counts must agree.
struct LabeledData {
  CsrMatrix features;
  RawLabels labels;
};
LabeledData load_labeled(const DataSpec& spec);

// Encoded split, ready for training or evaluation.
struct Dataset {
  std::string name;                 // "train", "valid", ... for messages
  CsrMatrix x;
  std::vector<std::int32_t> y;      // class ids
  std::vector<float> weight;        // per-row loss weights (sample_weights.h); empty = all 1
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
};
TrainingData load_training_data(const TrainConfig& config);

}  // namespace bagel
