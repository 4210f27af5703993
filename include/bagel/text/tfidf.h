// scikit-learn's TfidfTransformer and preprocessing.normalize on CSR rows,
// bit for bit: the same operations in the same order, each rounded once
// (this file's source is compiled with -ffp-contract=off, so that no
// multiply-add is fused where numpy and Cython round twice).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bagel {

enum class Norm { none, l1, l2 };

struct TfidfOptions {
  Norm norm = Norm::l2;
  bool use_idf = true;
  bool smooth_idf = true;
  bool sublinear_tf = false;
};

// idf = np.log(n / df) + 1, with n and every df raised by one when smooth.
std::vector<double> inverse_document_frequency(std::span<const std::int64_t> document_frequency,
                                               std::int64_t n_documents, bool smooth);

// TfidfTransformer.transform on counts already in `values`: 1 + log(tf)
// when sublinear, times idf[column] when `idf` is not empty, then the rows
// normalized. With idf, scikit-learn's product X * diag(idf) (scipy's
// csr_matmat) lists each row's entries in reverse order, and so does this.
void apply_tfidf(std::span<const std::int64_t> indptr, std::span<std::int32_t> columns,
                 std::span<double> values, std::span<const double> idf, const TfidfOptions& options);

// sklearn.preprocessing.normalize(X, norm) for CSR: each row divided by the
// sum of |x| (l1) or by sqrt of the sum of x*x (l2), summed left to right in
// float64; rows that sum to 0 unchanged.
void normalize_rows(std::span<const std::int64_t> indptr, std::span<double> values, Norm norm);

}  // namespace bagel
