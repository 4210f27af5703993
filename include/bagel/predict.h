// Inference with a trained model: class probabilities per row.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bagel/csr.h"
#include "bagel/metrics.h"
#include "bagel/model.h"

namespace bagel {

// Probabilities of rows [begin, end) into `proba` ((end-begin) x classes,
// row-major). Binary models give [1 - p, p] with p = P(classes[1]).
void predict_proba_rows(const Model& model, const CsrMatrix& x, Index begin, Index end,
                        double* proba);

// Rows [begin, end) in parallel (OpenMP; `threads` <= 0: all cores).
std::vector<double> predict_proba_chunk(const Model& model, const CsrMatrix& x, Index begin,
                                        Index end, int threads = 0);

// All rows, in parallel.
std::vector<double> predict_proba(const Model& model, const CsrMatrix& x, int threads = 0);

// Metrics of the model on labelled rows, predicted kRowsPerChunk rows at a
// time: memory stays one chunk of probabilities, not rows x classes.
inline constexpr Index kRowsPerChunk = Index{1} << 16;
Metrics evaluate(const Model& model, const CsrMatrix& x, std::span<const std::int32_t> y,
                 int threads = 0);

// Checks that `x` fits the model (no more columns than features) and names
// `source` otherwise.
void check_features_fit(const Model& model, const CsrMatrix& x, const std::string& source);

}  // namespace bagel
