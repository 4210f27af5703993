// Classification metrics, defined as scikit-learn 1.2 defines them, so that the
// numbers bagel prints equal sklearn.metrics on the same predictions:
//
//   accuracy   accuracy_score(y, argmax(p))
//   log_loss   log_loss(y, p, labels=range(K)): each probability clipped to
//              [eps, 1-eps] with eps = DBL_EPSILON, each row then divided by
//              its sum again (1.2 renormalises after clipping), mean of
//              -log p[true class]
//   per_class  precision_recall_fscore_support(y, argmax(p), labels=range(K),
//              zero_division=0): every one of the K model classes is reported,
//              so a class absent from both y and the predictions has
//              precision = recall = F1 = 0 (and support 0), and still counts
//   macro_f1   f1_score(..., labels=range(K), average="macro"): the plain mean
//              of those K F1 values, absent classes included as 0
//   confusion  confusion_matrix(y, argmax(p), labels=range(K)), [true][pred]
//   roc_auc    roc_auc_score(y, p[:, 1]) for K == 2: the trapezoid under the
//              ROC curve over distinct thresholds, i.e. the Mann-Whitney U
//              statistic with tied scores counted 1/2; absent when y holds only
//              one class (sklearn raises there) or when K != 2
//
// argmax(p) is the predicted class predict gives (MetricsAccumulator::add's
// `predicted`, the largest logit's): the same as argmax of the probabilities
// except where probabilities tie in double (long rows' one-vs-rest sigmoids
// all rounding to 1), where the logits still differ.
//
// The predicted class is the first arg-max of a row (numpy.argmax on ties).
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
  std::int64_t support = 0;                  // rows whose true class is this one
};

struct Metrics {
  std::int64_t rows = 0;
  double accuracy = 0;
  double log_loss = 0;           // mean cross-entropy, probabilities clipped to [eps, 1-eps]
  double macro_f1 = 0;           // unweighted mean of per-class F1 over all model classes
  std::optional<double> roc_auc; // two classes only, and only if both are present
  std::vector<ClassReport> per_class;
  // [true][predicted]; empty above kMaxConfusionClasses classes.
  std::vector<std::vector<std::int64_t>> confusion;
};

// K x K counts grow as K^2: 5,000 classes made a 376 MB model.json of
// training metrics. Above this many classes the confusion matrix is not
// kept (the per-class precision, recall and F1 still are).
inline constexpr int kMaxConfusionClasses = 100;

// One row's log loss as log_loss computes it: -log of the true class's
// probability, every probability clipped to [eps, 1 - eps] and the row
// renormalised.
double row_log_loss(std::span<const double> row, int true_class);

// `proba` is rows x num_classes, row-major, each row summing to 1; `y_true`
// holds class ids in [0, num_classes). The predicted class is the arg-max
// (first on ties, like numpy.argmax).
// Throws Error when num_classes < 2, there are no rows, the sizes disagree, a
// class id is out of range or a probability is not finite: metrics of such
// input would be meaningless, and sklearn refuses it too.
Metrics compute_metrics(std::span<const std::int32_t> y_true, std::span<const double> proba,
                        int num_classes);

// The same metrics fed chunk by chunk (prediction streams its rows): keeps
// the K x K confusion counts, the summed log loss and, for two classes, one
// score per row for the ROC AUC; not the probabilities. add() checks each
// chunk as compute_metrics() does (row numbers count from the first chunk);
// finish() throws when no row was added.
class MetricsAccumulator {
 public:
  explicit MetricsAccumulator(int num_classes);
  // Rows of true class ids and probabilities; `predicted` holds each row's
  // predicted class (predict.h: from the logits), or is empty for the first
  // largest probability.
  void add(std::span<const std::int32_t> y_true, std::span<const double> proba,
           std::span<const std::int32_t> predicted = {});
  Metrics finish() const;

 private:
  int num_classes_;
  std::int64_t rows_ = 0;
  std::int64_t correct_ = 0;
  double loss_sum_ = 0;
  std::vector<std::int64_t> predicted_, support_, true_positives_;  // per class
  std::vector<std::vector<std::int64_t>> confusion_;  // up to kMaxConfusionClasses
  std::vector<std::int32_t> y_;          // two classes only: for the ROC AUC
  std::vector<double> positive_score_;
};

// sklearn's roc_auc_score for binary ids (0 negative, 1 positive) and the
// positive-class scores; nullopt when only one class is present. O(n log n).
// Expects ids in {0, 1} and finite scores (compute_metrics checks both);
// throws Error when the sizes differ.
std::optional<double> binary_roc_auc(std::span<const std::int32_t> y_true,
                                     std::span<const double> score);

// {"rows", "accuracy", "log_loss", "macro_f1", "roc_auc" (only when present),
//  "per_class": {name: {"precision", "recall", "f1", "support"}},
//  "confusion_matrix": {"labels": [names...], "matrix": [[...], ...]}} (the
//  last only up to kMaxConfusionClasses classes).
// Doubles are written so that they round-trip. Throws Error when the number of
// names differs from the number of classes in `m`.
nlohmann::json metrics_to_json(const Metrics& m, const std::vector<std::string>& class_names);

// One line for logs, four decimals, locale-independent:
// "accuracy 0.9123  log_loss 0.2345  macro_f1 0.9001  roc_auc 0.9700".
std::string metrics_summary(const Metrics& m);

}  // namespace bagel
