// Classification metrics, defined as scikit-learn defines them, so that the
// numbers bagel prints equal sklearn.metrics on the same predictions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bagel {

struct ClassReport {
  double precision = 0, recall = 0, f1 = 0;  // 0 where undefined (sklearn's zero_division=0)
  std::int64_t support = 0;
};

struct Metrics {
  std::int64_t rows = 0;
  double accuracy = 0;
  double log_loss = 0;           // mean cross-entropy, probabilities clipped to [eps, 1-eps]
  double macro_f1 = 0;           // unweighted mean of per-class F1 over all model classes
  std::optional<double> roc_auc; // two classes only, and only if both are present
  std::vector<ClassReport> per_class;
  std::vector<std::vector<std::int64_t>> confusion;  // [true][predicted]
};

// `proba` is rows x num_classes, row-major, each row summing to 1; `y_true`
// holds class ids in [0, num_classes). The predicted class is the arg-max
// (first on ties, like numpy.argmax).
Metrics compute_metrics(std::span<const std::int32_t> y_true, std::span<const double> proba,
                        int num_classes);

nlohmann::json metrics_to_json(const Metrics& m, const std::vector<std::string>& class_names);

// One line for logs: "accuracy 0.9123  log_loss 0.2345  macro_f1 0.9001  roc_auc 0.97".
std::string metrics_summary(const Metrics& m);

}  // namespace bagel
