#include "bagel/row_window.h"

#include <algorithm>
#include <cstring>

namespace bagel {

namespace {

// Rows ahead whose row pointers, then whose index and value arrays, are
// requested while the current row is copied.
constexpr std::size_t kPointerDistance = 16;
constexpr std::size_t kRowDistance = 8;

}  // namespace

void RowWindow::gather(const CsrMatrix& x, std::span<const std::int32_t> labels,
                       std::span<const Index> rows) {
  const std::size_t n = rows.size();
  const Index* indptr = x.indptr().data();
  std::size_t nnz = 0;
  indptr_.resize(n + 1);
  labels_.resize(n);
  if (local_.size() < n) {
    local_.resize(n);
    for (std::size_t b = 0; b < n; ++b) local_[b] = static_cast<Index>(b);
  }
  // Pass 1: sizes (touches only the row pointers, prefetched ahead).
  for (std::size_t b = 0; b < n; ++b) {
    if (b + kPointerDistance < n) __builtin_prefetch(indptr + rows[b + kPointerDistance], 0, 3);
    const Index r = rows[b];
    nnz += static_cast<std::size_t>(indptr[r + 1] - indptr[r]);
    indptr_[b + 1] = static_cast<Index>(nnz);
    labels_[b] = labels[static_cast<std::size_t>(r)];
  }
  if (indices_.size() < nnz) {
    indices_.resize(nnz);
    data_.resize(nnz);
  }
  // Pass 2: the rows, each a contiguous copy.
  const Index* src_indices = x.indices().data();
  const float* src_data = x.data().data();
  for (std::size_t b = 0; b < n; ++b) {
    if (b + kRowDistance < n) prefetch_row_data(x.row(rows[b + kRowDistance]));
    const Index r = rows[b];
    const auto begin = static_cast<std::size_t>(indptr[r]);
    const auto count = static_cast<std::size_t>(indptr[r + 1]) - begin;
    std::memcpy(indices_.data() + indptr_[b], src_indices + begin, count * sizeof(Index));
    std::memcpy(data_.data() + indptr_[b], src_data + begin, count * sizeof(float));
  }
  count_ = n;
  view_ = CsrMatrix::view(static_cast<Index>(n), x.cols(), indptr_,
                          std::span<const Index>(indices_).first(nnz),
                          std::span<const float>(data_).first(nnz));
}

}  // namespace bagel
