#include "bagel/row_window.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "bagel/huge_pages.h"

namespace bagel {

namespace {

// Rows ahead whose row pointers, then whose index and value arrays, are
// requested while the current row is counted or copied.
constexpr std::size_t kPointerDistance = 16;
constexpr std::size_t kRowDistance = 8;

struct Slice {
  std::size_t lo, hi;
};
Slice slice_of(std::size_t n, int part, int parts) {
  return {n * part / parts, n * (part + 1) / parts};
}

}  // namespace

void RowWindow::gather(const CsrMatrix& x, std::span<const std::int32_t> labels,
                       std::span<const Index> rows) {
  begin(rows.size(), 1);
  count_part(x, labels, rows, 0, 1);
  allocate();
  copy_part(x, rows, 0, 1);
  finish(x.cols());
}

void RowWindow::begin(std::size_t n, int parts) {
  count_ = n;
  indptr_.resize(n + 1);
  indptr_[0] = 0;
  labels_.resize(n);
  if (local_.size() < n) {
    const std::size_t old = local_.size();
    local_.resize(n);
    for (std::size_t b = old; b < n; ++b) local_[b] = static_cast<Index>(b);
  }
  part_nnz_.assign(static_cast<std::size_t>(parts), 0);
}

// indptr_[b + 1] holds the non-zeros of the part's rows up to b until
// copy_part() adds the part's offset.
void RowWindow::count_part(const CsrMatrix& x, std::span<const std::int32_t> labels,
                           std::span<const Index> rows, int part, int parts) {
  const Index* indptr = x.indptr().data();
  const Slice s = slice_of(rows.size(), part, parts);
  std::size_t nnz = 0;
  for (std::size_t b = s.lo; b < s.hi; ++b) {
    if (b + kPointerDistance < s.hi) __builtin_prefetch(indptr + rows[b + kPointerDistance], 0, 3);
    const Index r = rows[b];
    nnz += static_cast<std::size_t>(indptr[r + 1] - indptr[r]);
    indptr_[b + 1] = static_cast<Index>(nnz);
    labels_[b] = labels[static_cast<std::size_t>(r)];
  }
  part_nnz_[static_cast<std::size_t>(part)] = nnz;
}

void RowWindow::allocate() {
  std::size_t offset = 0;
  for (std::size_t& n : part_nnz_) offset += std::exchange(n, offset);
  nnz_ = offset;
  if (room_ < nnz_) {
    // Neither zero-filled nor touched here: a whole epoch's copy (the class
    // split) is tens of MB, and its pages are first touched by the threads
    // that copy the rows, in huge pages where the kernel grants them. Room
    // for half as many again as the last: windows of a fixed row count vary
    // in size, and a run should reallocate a few times, as std::vector would.
    const std::size_t room = room_ == 0 ? nnz_ : std::max(nnz_, room_ + room_ / 2);
    indices_.reset();
    data_.reset();
    room_ = 0;
    indices_ = std::make_unique_for_overwrite<Index[]>(room);
    data_ = std::make_unique_for_overwrite<float[]>(room);
    room_ = room;
    advise_huge_pages(indices_.get(), room * sizeof(Index));
    advise_huge_pages(data_.get(), room * sizeof(float));
  }
}

void RowWindow::copy_part(const CsrMatrix& x, std::span<const Index> rows, int part, int parts) {
  const Slice s = slice_of(rows.size(), part, parts);
  const auto offset = static_cast<Index>(part_nnz_[static_cast<std::size_t>(part)]);
  const Index* indptr = x.indptr().data();
  const Index* src_indices = x.indices().data();
  const float* src_data = x.data().data();
  for (std::size_t b = s.lo; b < s.hi; ++b) {
    if (b + kRowDistance < s.hi) prefetch_row_data(x.row(rows[b + kRowDistance]));
    const Index r = rows[b];
    const auto from = static_cast<std::size_t>(indptr[r]);
    const auto count = static_cast<std::size_t>(indptr[r + 1]) - from;
    indptr_[b + 1] += offset;
    const auto to = static_cast<std::size_t>(indptr_[b + 1]) - count;
    std::memcpy(indices_.get() + to, src_indices + from, count * sizeof(Index));
    std::memcpy(data_.get() + to, src_data + from, count * sizeof(float));
  }
}

void RowWindow::finish(Index cols) {
  view_ = CsrMatrix::view(static_cast<Index>(count_), cols, indptr_,
                          std::span<const Index>(indices_.get(), nnz_),
                          std::span<const float>(data_.get(), nnz_));
}

}  // namespace bagel
