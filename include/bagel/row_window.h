// A window of shuffled rows copied into contiguous buffers before SGD runs
// over it.
//
// Shuffled rows are random reads into the CSR arrays (a cache miss or two per
// row, and with 4 KiB pages a TLB miss). Interleaved with the SGD arithmetic
// those misses are served a few at a time; a copy loop that does nothing but
// fetch rows keeps many more in flight. SGD then reads the window's rows in
// order, from cache. The rows, their order and every float operation stay
// the same, so results are bit-identical with and without windows.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "bagel/csr.h"

namespace bagel {

class RowWindow {
 public:
  // Copies rows `rows` of `x` (and their labels) in that order. Reuses the
  // buffers: after the first windows, no allocation.
  void gather(const CsrMatrix& x, std::span<const std::int32_t> labels,
              std::span<const Index> rows);

  // The same copy shared by a team of `parts` threads, each taking a slice
  // of the rows: every thread calls the steps in this order, each step after
  // a barrier, with begin() and finish() called by one thread only:
  //   begin(n); count_part(..., part, parts); allocate(); copy_part(...); finish(cols)
  void begin(std::size_t n, int parts);
  void count_part(const CsrMatrix& x, std::span<const std::int32_t> labels,
                  std::span<const Index> rows, int part, int parts);
  void allocate();
  void copy_part(const CsrMatrix& x, std::span<const Index> rows, int part, int parts);
  void finish(Index cols);

  // Window row b is source row rows[b]: matrix() has rows.size() rows.
  const CsrMatrix& matrix() const { return view_; }
  std::span<const std::int32_t> labels() const { return labels_; }
  // 0, 1, ..., rows.size() - 1: the row list to hand to a layer.
  std::span<const Index> local_rows() const { return std::span<const Index>(local_).first(count_); }

 private:
  std::vector<Index> indptr_{0};
  // Not value-initialised (copy_part writes every element): the threads that
  // copy the rows first touch their pages.
  std::unique_ptr<Index[]> indices_;
  std::unique_ptr<float[]> data_;
  std::size_t room_ = 0;  // the non-zeros indices_ and data_ hold
  std::vector<std::int32_t> labels_;
  std::vector<Index> local_;
  std::vector<std::size_t> part_nnz_;  // non-zeros of each part, then each part's offset
  std::size_t count_ = 0;
  std::size_t nnz_ = 0;
  CsrMatrix view_;
};

}  // namespace bagel
