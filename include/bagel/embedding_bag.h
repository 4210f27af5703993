// The sparse layer: an EmbeddingBag in sum mode over CSR rows.
//
//   z = sum_p data[p] * E[indices[p]] + b        E: (num_features, K)
//
// which is x @ W.T + b with W = E.T, computed without touching the zeros of
// x. Backward scatter-adds into only the rows of E that the sample used.
//
// Lazy regularisation (so a step costs O(nnz of the batch), not O(F K)):
// * L2. The eager update w <- (1 - eta l2) w - eta g multiplies every weight.
//   We store v with w = s * v for one scalar s (Bottou's / scikit-learn's
//   wscale): the decay is s *= (1 - eta l2), and a gradient step on the
//   touched rows is v -= eta g / s. When s gets tiny we fold it into v.
// * L1. Eager: w <- sign(w) max(0, |w| - eta l1) on every weight (clipped at
//   zero, "truncated gradient"). For a weight that no sample touches, k such
//   shrinks in a row equal one shrink by their sum, because the weight moves
//   monotonically to zero and stays there. So we keep U = sum of all shrinks
//   so far (in v units: eta l1 / s, since |w| = s |v|) and, per feature row,
//   q_j = the part of U already applied; touching row j first applies U - q_j
//   (Tsuruoka et al. 2009, cumulative penalty, made exact by applying it
//   before the row is read). This matches the dense path's eager updates.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bagel/csr.h"

namespace bagel {

namespace detail {

// z[0..k) += sum_p values[p] * E[indices[p]] (K = 0: k given at run time).
template <int K>
inline void bag_sum(const float* __restrict E, int k_dyn, RowView row, float* __restrict z) {
  const int k = K > 0 ? K : k_dyn;
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  for (std::size_t p = 0; p < n; ++p) {
    const float x = val[p];
    const float* e = E + static_cast<std::size_t>(idx[p]) * k;
    for (int i = 0; i < k; ++i) z[i] += x * e[i];
  }
}

// E[indices[p]] += (c * values[p]) * g for each p.
template <int K>
inline void bag_scatter(float* __restrict E, int k_dyn, RowView row, const float* __restrict g,
                        float c) {
  const int k = K > 0 ? K : k_dyn;
  const Index* idx = row.indices.data();
  const float* val = row.values.data();
  const std::size_t n = row.size();
  for (std::size_t p = 0; p < n; ++p) {
    const float a = c * val[p];
    float* e = E + static_cast<std::size_t>(idx[p]) * k;
    for (int i = 0; i < k; ++i) e[i] += a * g[i];
  }
}

}  // namespace detail

// Inference: logits[0..k) = sum_p values[p] * E[indices[p]] + bias.
inline void embedding_bag_forward(const float* weight, const float* bias, int outputs, RowView row,
                                  float* logits) {
  for (int i = 0; i < outputs; ++i) logits[i] = 0.0f;
  if (outputs == 1) detail::bag_sum<1>(weight, 1, row, logits);
  else detail::bag_sum<0>(weight, outputs, row, logits);
  for (int i = 0; i < outputs; ++i) logits[i] += bias[i];
}

// Trains weights in place (the model's arrays), with lazy L2 and L1.
class EmbeddingBagLayer {
 public:
  // `weight` is (num_features, outputs) row-major; `bias` has `outputs` values.
  EmbeddingBagLayer(std::span<float> weight, std::span<float> bias, Index num_features,
                    int outputs, double l2, double l1);

  int outputs() const { return outputs_; }

  // logits (rows.size() x outputs) at the current weights. With L1 it first
  // applies the pending shrinkage of the touched rows (so this writes).
  void forward(const CsrMatrix& x, std::span<const Index> rows, float* logits);

  // One SGD step on the mean loss of the batch, given dloss/dz per row
  // (rows.size() x outputs):
  //   W <- (1 - eta l2) W - eta mean_b(x_b g_b^T);  W <- shrink(W, eta l1)
  //   b <- b - eta mean_b(g_b)                       (the bias is not penalised)
  void step(const CsrMatrix& x, std::span<const Index> rows, const float* grads, double eta);

  // Folds the scale and all pending L1 into the stored weights (O(F K)).
  // Afterwards the weight span holds the true weights.
  void flush();

 private:
  void catch_up_l1(RowView row);

  std::span<float> weight_;
  std::span<float> bias_;
  Index num_features_;
  int outputs_;
  double l2_;
  double l1_;
  double scale_ = 1.0;           // true weight = scale_ * stored
  double l1_total_ = 0.0;        // U, in stored units
  std::vector<double> l1_applied_;  // q_j per feature row (only with L1)
};

}  // namespace bagel
