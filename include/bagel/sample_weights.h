// Per-row weights of the training loss: optimizer.class_weight times the
// rows' own weights (train.sample_weights). The loss minimised becomes
// mean_i w_i logloss_i + penalties, as scikit-learn's SGDClassifier weighs
// class_weight[y_i] * sample_weight[i]; the trainer multiplies each row's
// gradient and loss by w_i.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bagel/labels.h"

namespace bagel {

struct ClassWeightSpec {
  enum class Kind { kNone, kBalanced, kMap };
  Kind kind = Kind::kNone;
  std::vector<std::pair<std::string, double>> map;  // class name -> weight, as written
};

// The weight of each class id: 1 (kNone); n / (K * count of the class)
// ("balanced", scikit-learn's formula; a class absent from y gets 1); or the
// map's weights, 1 for classes it leaves out. Throws ConfigError naming
// optimizer.class_weight for a class name that is not a training class.
std::vector<double> class_weights(const ClassWeightSpec& spec, const Classes& classes,
                                  std::span<const std::int32_t> y);

// One finite weight >= 0 per line (text), exactly `rows` lines. Errors name
// the file and line.
std::vector<float> read_sample_weights(const std::string& path, std::int64_t rows);

// The same checks on weights already in memory: exactly `rows` of them,
// each finite and >= 0. Errors name `source` and the row.
void check_sample_weights(std::span<const float> weights, std::int64_t rows,
                          const std::string& source);

// w_i = class_weight[y_i] * sample[i] (sample empty: 1), 0 where that is
// below float32's smallest normal. Empty when every weight is 1, so that
// unweighted training takes no extra step.
std::vector<float> row_weights(std::span<const double> class_weight,
                               std::span<const std::int32_t> y, std::span<const float> sample);

}  // namespace bagel
