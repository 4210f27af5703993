// Shared by the training tests: one quiet sparse-layer training run on a
// fresh all-zero model with classes named "0".."classes-1", and the
// generated rows they train on.
#pragma once

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "bagel/synthetic.h"
#include "bagel/trainer.h"

namespace bagel {

// Trains `m` further, from its current weights.
inline void train_sparse_more(Model& m, const Dataset& d, const OptimizerConfig& c) {
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  train_model(m, d, nullptr, c, LayerKind::kSparse, quiet);
}

// A model of `classes` classes with the head `bagel train` gives it by
// default (or `head`), trained on d.
inline Model train_sparse(const Dataset& d, int classes, const OptimizerConfig& c,
                          Head head = kDefaultMulticlass) {
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  Model m = Model::zeros(names, true, d.x.cols(), head);
  train_sparse_more(m, d, c);
  return m;
}

// Generated Zipf count rows (synthetic.h), as a training set.
inline Dataset synthetic(int classes, Index rows, std::uint64_t seed, Index features = 5000,
                         double nnz_per_row = 30) {
  SyntheticSpec spec;
  spec.rows = rows;
  spec.features = features;
  spec.nnz_per_row = nnz_per_row;
  spec.classes = classes;
  spec.seed = seed;
  SyntheticData d = make_synthetic(spec);
  return Dataset{"train", std::move(d.x), std::move(d.y)};
}

// OMP_NUM_THREADS for the scope of a test (usable_cores() reads it).
class CoresForTest {
 public:
  explicit CoresForTest(const char* cores) {
    if (const char* old = std::getenv("OMP_NUM_THREADS")) saved_ = old;
    ::setenv("OMP_NUM_THREADS", cores, 1);
  }
  ~CoresForTest() {
    if (saved_) ::setenv("OMP_NUM_THREADS", saved_->c_str(), 1);
    else ::unsetenv("OMP_NUM_THREADS");
  }
  CoresForTest(const CoresForTest&) = delete;
  CoresForTest& operator=(const CoresForTest&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace bagel
