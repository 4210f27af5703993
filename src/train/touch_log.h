// Which weight rows a copy of the model stepped on: the replicas
// (replicas.h) combine only those rows when nothing else changes the
// weights. LoggedLayer is the layer of one such copy, for run_epoch().
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "bagel/csr.h"
#include "bagel/embedding_bag.h"

namespace bagel::train {

// One bit a row, so that recording costs an OR a non-zero and the
// combination walks the rows in order without sorting (sorting a log of row
// ids costs as much as the steps on 2^20 features).
class TouchLog {
 public:
  explicit TouchLog(Index features) : bits_((static_cast<std::size_t>(features) + 63) / 64, 0) {}
  void record(RowView row) {
    for (const Index j : row.indices) {
      const auto u = static_cast<std::uint32_t>(j);
      bits_[u >> 6] |= std::uint64_t{1} << (u & 63);
    }
  }
  void record(const CsrMatrix& x, std::span<const Index> rows) {
    for (const Index r : rows) record(x.row(r));
  }
  std::size_t words() const { return bits_.size(); }
  std::uint64_t word(std::size_t w) const { return bits_[w]; }
  void clear(std::size_t lo, std::size_t hi) {  // words [lo, hi)
    std::fill(bits_.begin() + static_cast<std::ptrdiff_t>(lo), bits_.begin() + static_cast<std::ptrdiff_t>(hi), 0);
  }

 private:
  std::vector<std::uint64_t> bits_;
};

// A copy's layer and its log (null: every row is combined anyway). run_epoch()
// trains it as the layer itself, recording each step's rows.
struct LoggedLayer {
  EmbeddingBagLayer& layer;
  TouchLog* log;
  int outputs() const { return layer.outputs(); }
  double bias_rate() const { return layer.bias_rate(); }
  void prefetch(const CsrMatrix& x, std::span<const Index> rows) const { layer.prefetch(x, rows); }
  void forward(const CsrMatrix& x, std::span<const Index> rows, float* logits, int thread) {
    layer.forward(x, rows, logits, thread);
  }
  void step(const CsrMatrix& x, std::span<const Index> rows, const float* grads, double eta,
            int thread) {
    layer.step(x, rows, grads, eta, thread);
    if (log != nullptr) log->record(x, rows);
  }
};

// The sparse layer that a layer argument of run_epoch() trains, and the log
// of the rows it steps on (null when none).
inline EmbeddingBagLayer& sparse_layer(EmbeddingBagLayer& l) { return l; }
inline EmbeddingBagLayer& sparse_layer(LoggedLayer& l) { return l.layer; }
inline TouchLog* touch_log(EmbeddingBagLayer&) { return nullptr; }
inline TouchLog* touch_log(LoggedLayer& l) { return l.log; }

}  // namespace bagel::train
