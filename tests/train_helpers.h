// Shared by the training tests: one quiet sparse-layer training run on a
// fresh all-zero model with classes named "0".."classes-1".
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include "bagel/trainer.h"

namespace bagel {

// Trains `m` further, from its current weights.
inline void train_sparse_more(Model& m, const Dataset& d, const OptimizerConfig& c) {
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
}

inline Model train_sparse(const Dataset& d, int classes, const OptimizerConfig& c) {
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  Model m = Model::zeros(names, true, d.x.cols());
  train_sparse_more(m, d, c);
  return m;
}

}  // namespace bagel
