// The dense reference layer: what torch.nn.Linear computes, on densified rows.
//
//   Z = X_dense @ W.T + b        W: (K, num_features), the Linear layout (E.T)
//   dW = G.T @ X_dense / B       (a dense GEMM over every feature)
//   W <- (1 - eta l2) W - eta dW;  W <- shrink(W, eta l1)   (eager, every weight)
//
// It exists to prove that the EmbeddingBag-sum layer computes the same model
// and to measure what skipping the zeros buys; it costs O(B F K) per step
// where the sparse layer costs O(nnz K). The products use Eigen's GEMM, which
// is blocked, vectorised and multi-threaded with OpenMP, so the comparison is
// against an honest dense baseline and not a naive loop.
#pragma once

#include <cstdint>
#include <span>

#include <Eigen/Dense>

#include "bagel/csr.h"
#include "bagel/model.h"

namespace bagel {

using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows of `x` as a dense (rows.size(), width) matrix into `out`, width >=
// x.cols() (a model may be wider than the matrix; the extra columns are 0).
// Repeated indices add up, as in scipy's toarray().
void densify_rows(const CsrMatrix& x, std::span<const Index> rows, Index width,
                  RowMajorMatrix& out);

class DenseLinearLayer {
 public:
  // Copies the model's weights into the Linear layout; flush() copies back.
  // The biases step at `bias_rate` times the weights' rate (OptimizerConfig).
  DenseLinearLayer(Model& model, double l2, double l1, double bias_rate = 1);

  int outputs() const { return static_cast<int>(weight_.rows()); }
  double bias_rate() const { return bias_rate_; }

  // Nothing to prefetch: every step reads the whole matrix anyway.
  void prefetch(const CsrMatrix&, std::span<const Index>) const {}

  // logits (rows.size() x K); keeps the densified batch for step(). One
  // training loop only (Eigen threads the GEMMs): `thread` must be 0, and is
  // there so that the trainer calls both layers alike.
  void forward(const CsrMatrix& x, std::span<const Index> rows, float* logits, int thread = 0);

  // Same contract as EmbeddingBagLayer::step, computed eagerly over all weights.
  void step(const CsrMatrix& x, std::span<const Index> rows, const float* grads, double eta,
            int thread = 0);

  // Writes W.T and b back into the model (embedding layout).
  void flush();

  // Averaged SGD, eagerly: from the next step on, sums W and b (in double)
  // after every step; write_average() gives the mean in the model layout.
  void start_averaging();
  void write_average(std::span<float> weight, std::span<float> bias) const;

  const RowMajorMatrix& weight() const { return weight_; }

 private:
  Model& model_;
  double l2_;
  double l1_;
  double bias_rate_;
  RowMajorMatrix weight_;   // (K, F)
  Eigen::VectorXf bias_;
  RowMajorMatrix batch_;    // densified rows of the current batch
  RowMajorMatrix grad_w_;   // (K, F) scratch, reused
  bool averaging_ = false;
  Eigen::MatrixXd avg_sum_;     // (K, F) sum of W over the steps
  Eigen::VectorXd avg_bias_;
  std::int64_t avg_steps_ = 0;
};

// Inference through the dense path: probabilities of rows [begin, end),
// densified `block` rows at a time; with `classes`, each row's predicted
// class too (predicted_class, loss.h).
void predict_proba_dense(const Model& model, const CsrMatrix& x, Index begin, Index end,
                         double* proba, Index block = 256, std::int32_t* classes = nullptr);

}  // namespace bagel
