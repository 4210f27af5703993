// Inference with a trained model: class probabilities per row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "bagel/csr.h"
#include "bagel/labels.h"
#include "bagel/metrics.h"
#include "bagel/model.h"

namespace bagel {

// Probabilities of rows [begin, end) into `proba` ((end-begin) x classes,
// row-major). Binary models give [1 - p, p] with p = P(classes[1]). With
// `classes`, each row's predicted class too (predicted_class, loss.h).
void predict_proba_rows(const Model& model, const CsrMatrix& x, Index begin, Index end,
                        double* proba, std::int32_t* classes = nullptr);

// Rows [begin, end) in parallel (OpenMP; `threads` <= 0: all cores).
std::vector<double> predict_proba_chunk(const Model& model, const CsrMatrix& x, Index begin,
                                        Index end, int threads = 0);

// Probabilities and predicted classes of rows [begin, end), in parallel.
struct Predictions {
  std::vector<double> proba;          // rows x classes, row-major
  std::vector<std::int32_t> classes;  // one a row
};
Predictions predict_chunk(const Model& model, const CsrMatrix& x, Index begin, Index end,
                          int threads = 0);

// The logits z = x W.T + b of rows [begin, end): (end-begin) x num_outputs,
// row-major (scikit-learn's decision_function: one column for binary
// models, the score of classes[1]). predict_proba is the sigmoid or softmax
// of these same float logits.
void predict_logits_rows(const Model& model, const CsrMatrix& x, Index begin, Index end,
                         double* logits);
std::vector<double> predict_logits_chunk(const Model& model, const CsrMatrix& x, Index begin,
                                         Index end, int threads = 0);

// All rows, in parallel.
std::vector<double> predict_proba(const Model& model, const CsrMatrix& x, int threads = 0);

// Rows predicted at a time: memory stays one chunk of probabilities, not
// rows x classes; 2^16 rows, fewer for many classes, so that a chunk holds
// at most 2^22 probabilities (32 MiB; 10,000 classes: 419 rows, where 2^16
// rows had taken 5 GiB).
inline constexpr Index kRowsPerChunk = Index{1} << 16;
inline Index rows_per_chunk(int classes) {
  return std::clamp<Index>((Index{1} << 22) / std::max(classes, 1), 64, kRowsPerChunk);
}

// Metrics of the model on labelled rows, predicted rows_per_chunk() rows at
// a time.
Metrics evaluate(const Model& model, const CsrMatrix& x, std::span<const std::int32_t> y,
                 int threads = 0);

// Where `x`'s column count came from: stored in the file (.npz: the width of
// the vocabulary it was vectorised with), or inferred from its largest index
// (svmlight: a file that never uses the last features is narrower).
enum class ColumnCount { kStored, kInferred };

// Checks that `x` fits the model and names `source` otherwise. A stored
// column count must equal the model's features, as scikit-learn requires
// ("X has 27611 features, but ... is expecting 57575"): another count means
// another vocabulary, whose columns mean other words. An inferred count may
// be smaller (the missing columns are zeros), never larger.
void check_features_fit(const Model& model, const CsrMatrix& x, const std::string& source,
                        ColumnCount columns = ColumnCount::kStored);

// check_features_fit for svmlight (an inferred count) read with `rows`'
// labels: wider than the model, the error names the line of the first row
// with an index past the model's columns, as svmlight's other errors name
// theirs (a stream may have printed thousands of predictions before it).
// Only reached once the width is known to be too large: no cost otherwise.
void check_svmlight_fits(const Model& model, const CsrMatrix& x, const RawLabels& rows,
                         const std::string& source);

}  // namespace bagel
