// Relabels features by how often the training rows use them, for the length
// of training only.
//
// Vocabularies rarely number features by frequency (CountVectorizer sorts
// them alphabetically, hashing scatters them), so the few thousand features
// that make up most non-zeros lie one per cache line across the whole weight
// matrix. Numbered by frequency, they share cache lines and stay in L1/L2
// (measured: 14% less time per epoch for 2^20 features and one output, 17% for
// 20 outputs; data/PERFORMANCE.md). Only labels change: every row keeps its non-zeros
// in their order, so each weight sees the same float operations and the
// restored model is bit-identical to one trained without relabelling.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/model.h"

namespace bagel {

// Non-zeros per feature (a repeated index counts each time) in rows 0,
// stride, 2 stride, ..., for features 0..num_features-1 (>= x.cols()).
std::vector<std::uint32_t> feature_counts(const CsrMatrix& x, Index num_features,
                                          Index row_stride = 1);

// The row stride that counts about 4M non-zeros of x: enough to rank the
// features that matter for speed (every one used in more than ~1 row in a
// thousand), at a small fraction of a pass over a large x (counting is a
// random increment per non-zero, ~5 ns each at 2^20 features).
Index sample_stride(const CsrMatrix& x);

// Bounds b[0] = 0 < ... < b[parts] = num_features of `parts` feature ranges
// holding about equal numbers of x's non-zeros (the deterministic trainer's
// per-thread share of each update; with features numbered by frequency, equal
// widths would leave the whole head to the first thread).
std::vector<Index> split_by_counts(const CsrMatrix& x, Index num_features, int parts);

// reorder_pays_off() is in train_plan.h (the plan decides).

class FeatureOrder {
 public:
  // Most used feature first (counted on a sample of rows: sample_stride);
  // ties, and features the sample does not use, keep their original order.
  static FeatureOrder by_frequency(const CsrMatrix& x, Index num_features);

  Index size() const { return static_cast<Index>(new_of_old_.size()); }
  std::span<const Index> new_of_old() const { return new_of_old_; }

  // Relabels x's indices (x.cols() <= size()).
  void apply(CsrMatrix& x) const;

  // Moves the weight rows of a model trained on relabelled data back to the
  // original feature numbers.
  void restore(Model& model) const;
  // The same for a num_features x outputs row-major weight array.
  void restore(std::span<float> weight, int outputs) const;

 private:
  std::vector<Index> new_of_old_;
};

}  // namespace bagel
