// Training from arrays the estimator holds, through the library's pipeline
// (pipeline.h), as `bagel train` trains from files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bagel/model.h"
#include "csr_arrays.h"

namespace bagel::python {

// One split: the CSR arrays and the class id of each row.
struct SplitArrays {
  IndexArray indptr, indices;
  FloatArray data;
  Index cols = 0;
  py::array_t<std::int32_t, py::array::c_style> y;
};

struct FitRequest {
  std::string config_json;           // {"model": ..., "optimizer": ...} as in a config file
  SplitArrays train;
  std::optional<SplitArrays> valid;  // eval_set
  std::vector<std::string> classes;  // names, in class-id order
  bool numeric_classes = false;
  std::optional<FloatArray> sample_weight;
  std::optional<Model> start;        // partial_fit: continue from this model
  bool verbose = false;              // progress lines on stderr
};

struct FitResult {
  Model model;
  std::vector<std::string> warnings;  // Progress::warn lines (divergence restarts)
};

// Trains with the GIL released, interruptible by Ctrl-C (interruptible.h).
// Config errors are ConfigErrors naming the estimator's parameter.
FitResult fit(const FitRequest& request);

// The optimizer's and the model's defaults as a config file resolves them
// ({"epochs": "auto", ..., "layer": "sparse"}): the estimator's defaults.
nlohmann::json default_parameters();

}  // namespace bagel::python
