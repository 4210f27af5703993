#include "bagel/sample_weights.h"

#include <cmath>
#include <fstream>

#include "bagel/error.h"

namespace bagel {

namespace {

// The class id named `key`: by its name, or for numeric classes by value
// ("1.0" names the class 1).
int find_class(const Classes& classes, const std::string& key) {
  for (std::size_t i = 0; i < classes.size(); ++i)
    if (classes.names[i] == key) return static_cast<int>(i);
  double value = 0, name_value = 0;
  if (classes.numeric && detail::parse_finite(key, value))
    for (std::size_t i = 0; i < classes.size(); ++i)
      if (detail::parse_finite(classes.names[i], name_value) && name_value == value)
        return static_cast<int>(i);
  std::string known;
  for (std::size_t i = 0; i < classes.size() && i < 10; ++i)
    known += (i ? ", \"" : "\"") + classes.names[i] + "\"";
  if (classes.size() > 10) known += ", ...";
  throw ConfigError("optimizer.class_weight",
                    "\"" + key + "\" is not a training class (classes: " + known + ")");
}

}  // namespace

std::vector<double> class_weights(const ClassWeightSpec& spec, const Classes& classes,
                                  std::span<const std::int32_t> y) {
  std::vector<double> w(classes.size(), 1.0);
  if (spec.kind == ClassWeightSpec::Kind::kBalanced) {
    std::vector<std::int64_t> count(classes.size(), 0);
    for (const std::int32_t c : y) ++count[static_cast<std::size_t>(c)];
    for (std::size_t c = 0; c < w.size(); ++c)
      if (count[c] > 0)
        w[c] = static_cast<double>(y.size()) / (static_cast<double>(w.size()) * count[c]);
  } else if (spec.kind == ClassWeightSpec::Kind::kMap) {
    // Two spellings of one numeric class ("1" and "1.0") would otherwise
    // leave the weight of whichever came last, as a key given twice would.
    std::vector<const std::string*> named_by(classes.size(), nullptr);
    for (const auto& [name, weight] : spec.map) {
      const auto c = static_cast<std::size_t>(find_class(classes, name));
      if (named_by[c] != nullptr)
        throw ConfigError("optimizer.class_weight",
                          "\"" + *named_by[c] + "\" and \"" + name + "\" both name the class \"" +
                              classes.names[c] + "\"; give its weight once");
      named_by[c] = &name;
      w[c] = weight;
    }
  }
  return w;
}

std::vector<float> read_sample_weights(const std::string& path, std::int64_t rows) {
  std::ifstream in(path);
  if (!in) throw FileError(path, "cannot open the sample weights file");
  std::vector<float> w;
  std::string line;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    double v = 0;
    if (!detail::parse_finite(line, v) || v < 0 || v > 3.4e38)
      throw FileError(path, "expected a finite weight >= 0, found \"" + line + "\"", number);
    w.push_back(static_cast<float>(v));
  }
  if (static_cast<std::int64_t>(w.size()) != rows)
    throw FileError(path, "has " + std::to_string(w.size()) + " weights but the training data has " +
                              std::to_string(rows) + " rows");
  return w;
}

void check_sample_weights(std::span<const float> weights, std::int64_t rows,
                          const std::string& source) {
  if (static_cast<std::int64_t>(weights.size()) != rows)
    throw FileError(source, "has " + std::to_string(weights.size()) +
                                " weights but the training data has " + std::to_string(rows) +
                                " rows");
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (!std::isfinite(weights[i]) || weights[i] < 0)
      throw FileError(source, "row " + std::to_string(i + 1) +
                                  ": expected a finite weight >= 0, found " +
                                  std::to_string(weights[i]));
}

std::vector<float> row_weights(std::span<const double> class_weight,
                               std::span<const std::int32_t> y, std::span<const float> sample) {
  std::vector<float> w(y.size());
  bool all_one = true;
  for (std::size_t i = 0; i < y.size(); ++i) {
    w[i] = static_cast<float>(class_weight[static_cast<std::size_t>(y[i])] *
                              (sample.empty() ? 1.0 : double(sample[i])));
    // Training flushes subnormal floats to 0 (float_env.h): a weight below
    // float32's smallest normal is 0 there, so it is 0 everywhere, where the
    // rate calibration had kept such rows and then found none.
    if (std::fpclassify(w[i]) == FP_SUBNORMAL) w[i] = 0;
    all_one = all_one && w[i] == 1.0f;
  }
  if (all_one) w.clear();
  return w;
}

}  // namespace bagel
