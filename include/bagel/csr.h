// CSR sparse matrix: the one in-memory form of every input.
//
// Working dtypes are float32 values and int32 indices and row pointers, as
// scipy writes them for matrices under 2^31 non-zeros; data already in these
// dtypes can be borrowed in place from a memory-mapped file (zero copy).
// A row is an EmbeddingBag bag: indptr are the offsets, indices the ids, data
// the per-sample weights.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/SparseCore>

#include "bagel/mapped_file.h"

namespace bagel {

using Index = std::int32_t;

// One row: borrowed views, never copied.
struct RowView {
  std::span<const Index> indices;
  std::span<const float> values;
  std::size_t size() const { return indices.size(); }
};

// sum of values^2 over the row, in float with eight partial sums (so that
// it vectorises). Out of line: every caller gets the same rounding, which
// the training step's clip (train/epoch_loop.h) relies on for models that
// do not depend on the thread count.
float squared_norm(RowView row);

// Whether each index is larger than the one before it (scipy's canonical
// row: sorted, none repeated).
bool strictly_increasing(std::span<const Index> indices);

// The row's entries sorted by index with repeated indices summed in float32,
// as scipy's sum_duplicates does (with three or more repeats its summation
// order, and so the last bit, may differ: scipy's sort is not stable).
void canonical_row(const RowView& row, std::vector<std::pair<Index, float>>& out);

// Asks the cache for a row's index and value arrays (a hint). Shuffled
// epochs visit rows in random order, so each row's arrays are a cache miss
// unless they are requested a sample or two ahead. Always inlined, as every
// function of ours that only prefetches: GCC takes such a function for one
// without side effects, and deletes the calls it does not inline.
[[gnu::always_inline]] inline void prefetch_row_data(RowView row) {
  const char* i = reinterpret_cast<const char*>(row.indices.data());
  const char* v = reinterpret_cast<const char*>(row.values.data());
  const std::size_t bytes = row.size() * sizeof(float);
  for (std::size_t off = 0; off < bytes; off += 64) {
    __builtin_prefetch(i + off, 0, 3);
    __builtin_prefetch(v + off, 0, 3);
  }
}

using CsrEigenMap = Eigen::Map<const Eigen::SparseMatrix<float, Eigen::RowMajor, Index>>;

class CsrMatrix {
 public:
  CsrMatrix() = default;
  // Owning: takes the arrays. Does not validate; call validate().
  CsrMatrix(Index rows, Index cols, std::vector<Index> indptr, std::vector<Index> indices,
            std::vector<float> data);

  // Any array left empty in `owned_*` is taken from the matching span, which
  // must point into `mapping` (kept alive by this object).
  CsrMatrix(Index rows, Index cols, std::span<const Index> indptr,
            std::span<const Index> indices, std::span<const float> data,
            std::vector<Index> owned_indptr, std::vector<Index> owned_indices,
            std::vector<float> owned_data, std::unique_ptr<MappedFile> mapping);

  // Non-owning view of arrays the caller keeps alive (and unchanged) for the
  // view's lifetime. Not validated.
  static CsrMatrix view(Index rows, Index cols, std::span<const Index> indptr,
                        std::span<const Index> indices, std::span<const float> data) {
    return CsrMatrix(rows, cols, indptr, indices, data, {}, {}, {}, nullptr);
  }

  CsrMatrix(CsrMatrix&&) noexcept = default;
  CsrMatrix& operator=(CsrMatrix&&) noexcept = default;
  CsrMatrix(const CsrMatrix&) = delete;  // views would point at the source
  CsrMatrix& operator=(const CsrMatrix&) = delete;
  CsrMatrix clone() const;               // deep, owning copy

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  std::int64_t nonZeros() const { return static_cast<std::int64_t>(indices_.size()); }

  RowView row(Index r) const {
    const auto begin = static_cast<std::size_t>(indptr_[r]);
    const auto count = static_cast<std::size_t>(indptr_[r + 1] - indptr_[r]);
    return {indices_.subspan(begin, count), data_.subspan(begin, count)};
  }

  std::span<const Index> indptr() const { return indptr_; }
  std::span<const Index> indices() const { return indices_; }
  std::span<const float> data() const { return data_; }

  // True when some array is used in place from a mapped file.
  bool is_mapped() const { return mapping_ != nullptr; }

  // Zero-copy Eigen view (for the dense reference path and cross-checks).
  CsrEigenMap eigen() const;

  // Checks the CSR invariants once, at the boundary: indptr[0] == 0,
  // non-decreasing, indptr[rows] == nnz, 0 <= index < cols, finite values.
  // Unsorted or repeated indices inside a row are valid (scipy allows them).
  // Throws FileError naming `source`, the offending array and the row,
  // counted from `first_row`: a chunk of a larger file names the row there.
  void validate(const std::string& source, std::int64_t first_row = 0) const;

  // Rows that repeat an index get it once, its values summed (canonical_row);
  // returns how many entries that removed. A matrix that repeats none stays
  // as it is, borrowed arrays included (one pass over the indices).
  // Throws FileError naming `source` where a sum overflows float32.
  std::int64_t sum_duplicates(const std::string& source);

  // Replaces every index j by new_of_old[j] (new_of_old.size() >= cols()).
  // Owned indices change in place; borrowed ones (a mapped file, a view) are
  // copied once, and their mapped pages dropped, so memory stays the same.
  void remap_indices(std::span<const Index> new_of_old);

  // Same matrix with the column count raised to `cols` (>= cols()).
  // Used to align a test matrix with fewer columns to a model's width.
  void widen(Index cols);

 private:
  Index rows_ = 0;
  Index cols_ = 0;
  std::span<const Index> indptr_;
  std::span<const Index> indices_;
  std::span<const float> data_;
  std::vector<Index> indptr_store_;
  std::vector<Index> indices_store_;
  std::vector<float> data_store_;
  std::unique_ptr<MappedFile> mapping_;
};

// One past the largest column index of `x` (0 when it has no non-zero):
// the columns from there on are never used (one pass).
Index columns_used(const CsrMatrix& x);

}  // namespace bagel
