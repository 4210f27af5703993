#include "bagel/dataset.h"

#include <chrono>

#include <filesystem>

#include "bagel/error.h"
#include "bagel/npz.h"
#include "bagel/sample_weights.h"
#include "bagel/svmlight.h"

namespace bagel {

CsrMatrix read_features(const std::string& path, ZeroBased zero_based, RawLabels* labels) {
  if (std::filesystem::path(path).extension() == ".npz") return read_npz_csr(path);
  SvmlightData d = read_svmlight(path, zero_based);
  if (labels != nullptr) *labels = std::move(d.labels);
  return std::move(d.features);
}

namespace {

Dataset encode(const std::string& name, LabeledData data, const Classes& classes) {
  Dataset d;
  d.name = name;
  d.y = classes.encode(data.labels);
  d.x = std::move(data.features);
  return d;
}

}  // namespace

TrainingData load_training_data(const TrainConfig& config) {
  const auto t0 = std::chrono::steady_clock::now();
  TrainingData out;
  LabeledData train_raw = load_labeled(config.train);
  out.classes = Classes::fit(train_raw.labels);
  out.train = encode("train", std::move(train_raw), out.classes);
  out.class_weight = class_weights(config.optimizer.class_weight, out.classes, out.train.y);
  std::vector<float> sample_weight;
  if (!config.train.sample_weights.empty())
    sample_weight = read_sample_weights(config.train.sample_weights, out.train.x.rows());
  out.train.weight = row_weights(out.class_weight, out.train.y, sample_weight);
  if (config.valid) out.valid = encode("valid", load_labeled(*config.valid), out.classes);
  out.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

LabeledData load_labeled(const DataSpec& spec) {
  LabeledData d;
  d.features = read_features(spec.features, spec.zero_based, &d.labels);
  if (!spec.labels.empty()) d.labels = read_labels(spec.labels);
  if (d.labels.size() == 0 && d.features.rows() > 0)
    throw FileError(spec.features, "no labels: give a labels file for .npz features");
  if (static_cast<std::int64_t>(d.labels.size()) != d.features.rows())
    throw FileError(spec.labels.empty() ? spec.features : spec.labels,
                    "has " + std::to_string(d.labels.size()) + " labels but " + spec.features +
                        " has " + std::to_string(d.features.rows()) + " rows");
  return d;
}

}  // namespace bagel
