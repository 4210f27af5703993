#include "bagel/csr.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "bagel/error.h"
#include "bagel/huge_pages.h"

namespace bagel {

CsrMatrix::CsrMatrix(Index rows, Index cols, std::vector<Index> indptr,
                     std::vector<Index> indices, std::vector<float> data)
    : rows_(rows),
      cols_(cols),
      indptr_store_(std::move(indptr)),
      indices_store_(std::move(indices)),
      data_store_(std::move(data)) {
  indptr_ = indptr_store_;
  indices_ = indices_store_;
  data_ = data_store_;
}

CsrMatrix::CsrMatrix(Index rows, Index cols, std::span<const Index> indptr,
                     std::span<const Index> indices, std::span<const float> data,
                     std::vector<Index> owned_indptr, std::vector<Index> owned_indices,
                     std::vector<float> owned_data, std::unique_ptr<MappedFile> mapping)
    : rows_(rows),
      cols_(cols),
      indptr_store_(std::move(owned_indptr)),
      indices_store_(std::move(owned_indices)),
      data_store_(std::move(owned_data)),
      mapping_(std::move(mapping)) {
  indptr_ = indptr_store_.empty() ? indptr : std::span<const Index>(indptr_store_);
  indices_ = indices_store_.empty() ? indices : std::span<const Index>(indices_store_);
  data_ = data_store_.empty() ? data : std::span<const float>(data_store_);
}

CsrMatrix CsrMatrix::clone() const {
  return CsrMatrix(rows_, cols_, std::vector<Index>(indptr_.begin(), indptr_.end()),
                   std::vector<Index>(indices_.begin(), indices_.end()),
                   std::vector<float>(data_.begin(), data_.end()));
}

CsrEigenMap CsrMatrix::eigen() const {
  return CsrEigenMap(rows_, cols_, static_cast<Index>(nonZeros()), indptr_.data(),
                     indices_.data(), data_.data());
}

void CsrMatrix::remap_indices(std::span<const Index> new_of_old) {
  if (new_of_old.size() < static_cast<std::size_t>(cols_))
    throw Error("CsrMatrix::remap_indices: mapping shorter than the column count");
  const auto n = static_cast<std::int64_t>(indices_.size());
  const bool owned = !indices_store_.empty() && indices_.data() == indices_store_.data();
  if (!owned) {
    std::vector<Index> copy = huge_vector<Index>(indices_.size());
    const Index* src = indices_.data();
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < n; ++p) copy[p] = new_of_old[src[p]];
    if (mapping_ != nullptr) mapping_->release(std::as_bytes(indices_));
    indices_store_ = std::move(copy);
    indices_ = indices_store_;
    return;
  }
  Index* idx = indices_store_.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < n; ++p) idx[p] = new_of_old[idx[p]];
}

std::int64_t CsrMatrix::sum_duplicates(const std::string& source) {
  // One thread: an OpenMP team's workers would spin on after it, into the
  // training that follows, and take a core from its threads.
  bool all_increasing = true;
  for (Index r = 0; r < rows_ && all_increasing; ++r) all_increasing = strictly_increasing(row(r).indices);
  if (all_increasing) return 0;
  std::vector<Index> indptr(static_cast<std::size_t>(rows_) + 1, 0);
  std::vector<Index> indices;
  std::vector<float> data;
  indices.reserve(indices_.size());
  data.reserve(data_.size());
  std::vector<std::pair<Index, float>> entries;
  for (Index r = 0; r < rows_; ++r) {
    const RowView bag = row(r);
    if (strictly_increasing(bag.indices)) {
      indices.insert(indices.end(), bag.indices.begin(), bag.indices.end());
      data.insert(data.end(), bag.values.begin(), bag.values.end());
    } else {
      canonical_row(bag, entries);
      for (const auto& [j, v] : entries) {
        if (!std::isfinite(v))
          throw FileError(source, "data: the repeated column " + std::to_string(j) + " of row " +
                                      std::to_string(r) + " sums to " + std::to_string(v) +
                                      ", beyond float32's range");
        indices.push_back(j);
        data.push_back(v);
      }
    }
    indptr[static_cast<std::size_t>(r) + 1] = static_cast<Index>(indices.size());
  }
  const std::int64_t removed = nonZeros() - static_cast<std::int64_t>(indices.size());
  if (removed == 0) return 0;  // rows out of order, none repeated: they train alike
  *this = CsrMatrix(rows_, cols_, std::move(indptr), std::move(indices), std::move(data));
  return removed;
}

void CsrMatrix::widen(Index cols) {
  if (cols < cols_) throw Error("CsrMatrix::widen: cannot shrink columns");
  cols_ = cols;
}

void CsrMatrix::validate(const std::string& source, std::int64_t first_row) const {
  if (rows_ < 0 || cols_ < 0) throw FileError(source, "shape: negative dimension");
  if (indptr_.size() != static_cast<std::size_t>(rows_) + 1)
    throw FileError(source, "indptr: length " + std::to_string(indptr_.size()) +
                                ", expected rows + 1 = " + std::to_string(std::int64_t{rows_} + 1));
  if (data_.size() != indices_.size())
    throw FileError(source, "data has " + std::to_string(data_.size()) +
                                " values but indices has " + std::to_string(indices_.size()));
  if (indptr_[0] != 0)
    throw FileError(source, "indptr[0] is " + std::to_string(indptr_[0]) + ", expected 0");
  for (Index r = 0; r < rows_; ++r) {
    if (indptr_[r + 1] < indptr_[r])
      throw FileError(source, "indptr decreases at row " + std::to_string(first_row + r) + " (" +
                                  std::to_string(indptr_[r]) + " -> " +
                                  std::to_string(indptr_[r + 1]) + ")");
  }
  if (static_cast<std::int64_t>(indptr_[rows_]) != nonZeros())
    throw FileError(source, "indptr[rows] is " + std::to_string(indptr_[rows_]) +
                                ", expected nnz = " + std::to_string(nonZeros()));
  for (Index r = 0; r < rows_; ++r) {
    for (Index p = indptr_[r]; p < indptr_[r + 1]; ++p) {
      const Index j = indices_[p];
      if (j < 0 || j >= cols_)
        throw FileError(source, "indices: column " + std::to_string(j) + " in row " +
                                    std::to_string(first_row + r) + " is out of range [0, " +
                                    std::to_string(cols_) + ")");
      if (!std::isfinite(data_[p]))
        throw FileError(source, "data: non-finite value in row " + std::to_string(first_row + r) +
                                    ", column " + std::to_string(j));
    }
  }
}

Index columns_used(const CsrMatrix& x) {
  const std::span<const Index> indices = x.indices();
  return indices.empty() ? 0 : *std::max_element(indices.begin(), indices.end()) + 1;
}

bool strictly_increasing(std::span<const Index> indices) {
  return std::adjacent_find(indices.begin(), indices.end(), std::greater_equal<>()) ==
         indices.end();
}

void canonical_row(const RowView& row, std::vector<std::pair<Index, float>>& out) {
  out.clear();
  for (std::size_t j = 0; j < row.size(); ++j) out.emplace_back(row.indices[j], row.values[j]);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t kept = 0;
  for (std::size_t j = 0; j < out.size(); ++j) {
    if (kept > 0 && out[kept - 1].first == out[j].first) {
      out[kept - 1].second += out[j].second;
    } else {
      out[kept++] = out[j];
    }
  }
  out.resize(kept);
}

float squared_norm(RowView row) {
  const float* v = row.values.data();
  const std::size_t n = row.size();
  float acc[8] = {};
  std::size_t p = 0;
  for (; p + 8 <= n; p += 8)
    for (int j = 0; j < 8; ++j) acc[j] += v[p + j] * v[p + j];
  for (int j = 0; p < n; ++p, ++j) acc[j] += v[p] * v[p];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace bagel
