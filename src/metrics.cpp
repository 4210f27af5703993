#include "bagel/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <numeric>

#include "bagel/error.h"
#include "bagel/libm_calls.h"

namespace bagel {
// File-local helpers: an unnamed namespace, so that no other file's helper of
// the same name can collide at link time.
namespace {

// sklearn's log_loss uses eps = np.finfo(y_pred.dtype).eps; our
// probabilities are float64.
constexpr double kLogLossEps = std::numeric_limits<double>::epsilon();

void check_classes(int num_classes) {
  if (num_classes < 2) {
    throw Error("metrics: num_classes is " + std::to_string(num_classes) +
                "; expected at least 2 classes");
  }
}

// One chunk whose first row is row `first` of the whole input.
void check_metrics_input(std::span<const std::int32_t> y_true, std::span<const double> proba,
                         int num_classes, std::int64_t first) {
  const auto k = static_cast<std::size_t>(num_classes);
  if (proba.size() != y_true.size() * k) {
    throw Error("metrics: " + std::to_string(y_true.size()) + " labels and " +
                std::to_string(proba.size()) + " probabilities; expected rows x " +
                std::to_string(num_classes) + " = " + std::to_string(y_true.size() * k));
  }
  for (std::size_t r = 0; r < y_true.size(); ++r) {
    if (y_true[r] < 0 || y_true[r] >= num_classes) {
      throw Error("metrics: row " + std::to_string(first + static_cast<std::int64_t>(r)) +
                  " has class id " + std::to_string(y_true[r]) + "; expected 0.." +
                  std::to_string(num_classes - 1));
    }
  }
  for (std::size_t i = 0; i < proba.size(); ++i) {
    if (!std::isfinite(proba[i])) {
      throw Error("metrics: row " + std::to_string(first + static_cast<std::int64_t>(i / k)) +
                  " class " + std::to_string(i % k) + " has probability " +
                  std::to_string(proba[i]) + "; expected a finite number");
    }
  }
}

// First maximum, as numpy.argmax.
int arg_max(std::span<const double> row) {
  return static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
}

// sklearn's _prf_divide with zero_division=0.
double divide_or_zero(double numerator, double denominator) {
  return denominator == 0 ? 0.0 : numerator / denominator;
}

// F1 from the rounded precision and recall, in sklearn's order of operations
// ((1 + beta^2) * p * r / (beta^2 * p + r)), so the last bits agree too.
double f1_score(double precision, double recall) {
  const double denom = precision + recall;
  return denom == 0 ? 0.0 : 2.0 * precision * recall / denom;
}

// From per-class counts: rows predicted as the class, rows truly of it
// (support), and rows both (true positives).
std::vector<ClassReport> class_reports(const std::vector<std::int64_t>& predicted,
                                       const std::vector<std::int64_t>& support,
                                       const std::vector<std::int64_t>& true_positives) {
  const std::size_t k = support.size();
  std::vector<ClassReport> reports(k);
  for (std::size_t c = 0; c < k; ++c) {
    const auto tp = static_cast<double>(true_positives[c]);
    ClassReport& report = reports[c];
    report.support = support[c];
    report.precision = divide_or_zero(tp, static_cast<double>(predicted[c]));
    report.recall = divide_or_zero(tp, static_cast<double>(support[c]));
    report.f1 = f1_score(report.precision, report.recall);
  }
  return reports;
}

std::string fixed4(double value) {
  char buffer[64];
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, 4);
  return std::string(buffer, result.ptr);
}

}  // namespace

// sklearn 1.2: clip every entry to [eps, 1-eps], renormalise the row, then
// take -log of the true class's share. Clipping keeps a confident mistake
// finite (-log eps ~ 36) instead of infinite.
double row_log_loss(std::span<const double> row, int true_class) {
  const auto clip = [](double p) { return std::clamp(p, kLogLossEps, 1.0 - kLogLossEps); };
  double sum = 0;
  for (const double p : row) sum += clip(p);
  return -libm::log(clip(row[static_cast<std::size_t>(true_class)]) / sum);
}

std::optional<double> binary_roc_auc(std::span<const std::int32_t> y_true,
                                     std::span<const double> score) {
  if (score.size() != y_true.size()) {
    throw Error("roc_auc: " + std::to_string(y_true.size()) + " labels and " +
                std::to_string(score.size()) + " scores; expected one score per label");
  }
  const std::size_t n = y_true.size();
  const auto positives = static_cast<std::int64_t>(std::count(y_true.begin(), y_true.end(), 1));
  const auto negatives = static_cast<std::int64_t>(n) - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;

  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return score[a] > score[b]; });

  // Walk the thresholds from high to low; all rows with one score move the
  // ROC point together, so a tied positive/negative pair adds a triangle of
  // half a unit. Twice the area stays an integer sum, exact in double.
  double twice_area = 0;
  std::int64_t tp = 0, fp = 0;
  for (std::size_t i = 0; i < n;) {
    const std::int64_t tp_before = tp, fp_before = fp;
    const double threshold = score[order[i]];
    for (; i < n && score[order[i]] == threshold; ++i) {
      if (y_true[order[i]] == 1) {
        ++tp;
      } else {
        ++fp;
      }
    }
    twice_area += static_cast<double>(fp - fp_before) * static_cast<double>(tp + tp_before);
  }
  return twice_area / 2.0 / (static_cast<double>(positives) * static_cast<double>(negatives));
}

MetricsAccumulator::MetricsAccumulator(int num_classes) : num_classes_(num_classes) {
  check_classes(num_classes);
  const auto k = static_cast<std::size_t>(num_classes);
  predicted_.assign(k, 0);
  support_.assign(k, 0);
  true_positives_.assign(k, 0);
  if (num_classes <= kMaxConfusionClasses) confusion_.assign(k, std::vector<std::int64_t>(k, 0));
}

void MetricsAccumulator::add(std::span<const std::int32_t> y_true, std::span<const double> proba,
                             std::span<const std::int32_t> classes) {
  check_metrics_input(y_true, proba, num_classes_, rows_);
  if (!classes.empty() && classes.size() != y_true.size())
    throw Error("metrics: " + std::to_string(classes.size()) + " predicted classes for " +
                std::to_string(y_true.size()) + " rows");
  const auto k = static_cast<std::size_t>(num_classes_);
  for (std::size_t r = 0; r < y_true.size(); ++r) {
    const auto row = proba.subspan(r * k, k);
    const int predicted = classes.empty() ? arg_max(row) : classes[r];
    if (predicted < 0 || predicted >= num_classes_)
      throw Error("metrics: row " + std::to_string(rows_ + static_cast<std::int64_t>(r)) +
                  " has predicted class " + std::to_string(predicted) + "; expected 0.." +
                  std::to_string(num_classes_ - 1));
    const auto truth = static_cast<std::size_t>(y_true[r]);
    const auto guess = static_cast<std::size_t>(predicted);
    correct_ += truth == guess;
    ++predicted_[guess];
    ++support_[truth];
    true_positives_[truth] += truth == guess;
    if (!confusion_.empty()) ++confusion_[truth][guess];
    loss_sum_ += row_log_loss(row, y_true[r]);
    if (k == 2) positive_score_.push_back(row[1]);
  }
  if (k == 2) y_.insert(y_.end(), y_true.begin(), y_true.end());
  rows_ += static_cast<std::int64_t>(y_true.size());
}

Metrics MetricsAccumulator::finish() const {
  if (rows_ == 0) throw Error("metrics: no rows; expected at least one labelled row");
  const auto n = static_cast<double>(rows_);
  Metrics m;
  m.rows = rows_;
  m.confusion = confusion_;
  m.accuracy = static_cast<double>(correct_) / n;
  m.log_loss = loss_sum_ / n;
  m.per_class = class_reports(predicted_, support_, true_positives_);
  double f1_sum = 0;
  for (const ClassReport& report : m.per_class) f1_sum += report.f1;
  m.macro_f1 = f1_sum / static_cast<double>(num_classes_);
  if (num_classes_ == 2) m.roc_auc = binary_roc_auc(y_, positive_score_);
  return m;
}

Metrics compute_metrics(std::span<const std::int32_t> y_true, std::span<const double> proba,
                        int num_classes) {
  MetricsAccumulator acc(num_classes);
  acc.add(y_true, proba);
  return acc.finish();
}

nlohmann::json metrics_to_json(const Metrics& m, const std::vector<std::string>& class_names) {
  if (class_names.size() != m.per_class.size() ||
      (!m.confusion.empty() && class_names.size() != m.confusion.size())) {
    throw Error("metrics: " + std::to_string(class_names.size()) + " class names for " +
                std::to_string(m.per_class.size()) + " classes; expected one name per class");
  }
  nlohmann::json out;
  out["rows"] = m.rows;
  out["accuracy"] = m.accuracy;
  out["log_loss"] = m.log_loss;
  out["macro_f1"] = m.macro_f1;
  if (m.roc_auc) out["roc_auc"] = *m.roc_auc;

  nlohmann::json per_class = nlohmann::json::object();
  for (std::size_t c = 0; c < class_names.size(); ++c) {
    const ClassReport& report = m.per_class[c];
    per_class[class_names[c]] = {{"precision", report.precision},
                                 {"recall", report.recall},
                                 {"f1", report.f1},
                                 {"support", report.support}};
  }
  out["per_class"] = std::move(per_class);
  if (!m.confusion.empty())
    out["confusion_matrix"] = {{"labels", class_names}, {"matrix", m.confusion}};
  return out;
}

std::string metrics_summary(const Metrics& m) {
  std::string line = "accuracy " + fixed4(m.accuracy) + "  log_loss " +
                     fixed4(m.log_loss) + "  macro_f1 " + fixed4(m.macro_f1);
  if (m.roc_auc) line += "  roc_auc " + fixed4(*m.roc_auc);
  return line;
}

}  // namespace bagel
