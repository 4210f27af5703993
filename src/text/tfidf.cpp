#include "bagel/text/tfidf.h"

#include <algorithm>
#include <cmath>

#include "bagel/text/numpy_math.h"

namespace bagel {

std::vector<double> inverse_document_frequency(std::span<const std::int64_t> document_frequency,
                                               std::int64_t n_documents, bool smooth) {
  const double n = static_cast<double>(n_documents + (smooth ? 1 : 0));
  std::vector<double> idf(document_frequency.size());
  for (std::size_t j = 0; j < idf.size(); ++j) {
    const double df = static_cast<double>(document_frequency[j]) + (smooth ? 1.0 : 0.0);
    idf[j] = numpy_log(n / df) + 1.0;
  }
  return idf;
}

void apply_tfidf(std::span<const std::int64_t> indptr, std::span<std::int32_t> columns,
                 std::span<double> values, std::span<const double> idf, const TfidfOptions& options) {
  if (options.sublinear_tf)
    for (double& v : values) v = numpy_log(v) + 1.0;
  if (!idf.empty()) {
    for (std::size_t e = 0; e < values.size(); ++e) values[e] *= idf[columns[e]];
    for (std::size_t r = 0; r + 1 < indptr.size(); ++r) {
      std::reverse(columns.begin() + indptr[r], columns.begin() + indptr[r + 1]);
      std::reverse(values.begin() + indptr[r], values.begin() + indptr[r + 1]);
    }
  }
  normalize_rows(indptr, values, options.norm);
}

void normalize_rows(std::span<const std::int64_t> indptr, std::span<double> values, Norm norm) {
  if (norm == Norm::none) return;
  for (std::size_t r = 0; r + 1 < indptr.size(); ++r) {
    const auto begin = values.begin() + indptr[r];
    const auto end = values.begin() + indptr[r + 1];
    double sum = 0.0;
    if (norm == Norm::l1) {
      for (auto v = begin; v != end; ++v) sum += std::fabs(*v);
    } else {
      for (auto v = begin; v != end; ++v) sum += *v * *v;
    }
    if (sum == 0.0) continue;
    if (norm == Norm::l2) sum = std::sqrt(sum);
    for (auto v = begin; v != end; ++v) *v /= sum;
  }
}

}  // namespace bagel
