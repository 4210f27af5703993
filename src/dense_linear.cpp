#include "bagel/dense_linear.h"

#include <algorithm>
#include <cmath>

#include "bagel/error.h"
#include "bagel/loss.h"

namespace bagel {

void densify_rows(const CsrMatrix& x, std::span<const Index> rows, Index width,
                  RowMajorMatrix& out) {
  out.setZero(static_cast<Eigen::Index>(rows.size()), width);
  for (std::size_t b = 0; b < rows.size(); ++b) {
    const RowView row = x.row(rows[b]);
    float* dst = out.data() + b * static_cast<std::size_t>(width);
    for (std::size_t p = 0; p < row.size(); ++p) dst[row.indices[p]] += row.values[p];
  }
}

DenseLinearLayer::DenseLinearLayer(Model& model, double l2, double l1, double bias_rate)
    : model_(model), l2_(l2), l1_(l1), bias_rate_(bias_rate) {
  const Eigen::Index f = model.num_features, k = model.num_outputs;
  // The model stores E (F, K) row-major; W = E.T is (K, F).
  weight_ = Eigen::Map<const RowMajorMatrix>(model.weight.data(), f, k).transpose();
  bias_ = Eigen::Map<const Eigen::VectorXf>(model.bias.data(), k);
  grad_w_.resize(k, f);
}

void DenseLinearLayer::forward(const CsrMatrix& x, std::span<const Index> rows, float* logits,
                               int /*thread*/) {
  densify_rows(x, rows, static_cast<Index>(weight_.cols()), batch_);
  const Eigen::Index b = static_cast<Eigen::Index>(rows.size());
  Eigen::Map<RowMajorMatrix> z(logits, b, weight_.rows());
  z.noalias() = batch_ * weight_.transpose();
  z.rowwise() += bias_.transpose();
}

void DenseLinearLayer::step(const CsrMatrix& /*x*/, std::span<const Index> rows,
                            const float* grads, double eta, int /*thread*/) {
  const Eigen::Index b = static_cast<Eigen::Index>(rows.size());
  const Eigen::Map<const RowMajorMatrix> g(grads, b, weight_.rows());
  grad_w_.noalias() = g.transpose() * batch_;
  const float decay = static_cast<float>(1.0 - eta * l2_);
  const float rate = static_cast<float>(eta / static_cast<double>(b));
  weight_ = decay * weight_ - rate * grad_w_;
  if (l1_ > 0) {
    const float shrink = static_cast<float>(eta * l1_);
    weight_ = weight_.unaryExpr([shrink](float w) {
      return w > 0 ? std::max(0.0f, w - shrink) : std::min(0.0f, w + shrink);
    });
  }
  const double bias_eta = eta * bias_rate_;
  for (Eigen::Index i = 0; i < weight_.rows(); ++i)
    bias_[i] = static_cast<float>(bias_[i] - bias_eta * g.col(i).cast<double>().sum() / double(b));
  if (averaging_) {
    avg_sum_ += weight_.cast<double>();
    avg_bias_ += bias_.cast<double>();
    ++avg_steps_;
  }
}

void DenseLinearLayer::start_averaging() {
  averaging_ = true;
  avg_sum_ = Eigen::MatrixXd::Zero(weight_.rows(), weight_.cols());
  avg_bias_ = Eigen::VectorXd::Zero(bias_.size());
  avg_steps_ = 0;
}

void DenseLinearLayer::write_average(std::span<float> weight, std::span<float> bias) const {
  const Eigen::Index f = weight_.cols(), k = weight_.rows();
  if (weight.size() != static_cast<std::size_t>(f * k) || bias.size() != static_cast<std::size_t>(k))
    throw Error("write_average: arrays of the wrong size");
  Eigen::Map<RowMajorMatrix> out(weight.data(), f, k);
  Eigen::Map<Eigen::VectorXf> out_bias(bias.data(), k);
  if (!averaging_ || avg_steps_ == 0) {
    out = weight_.transpose();
    out_bias = bias_;
    return;
  }
  const double inv = 1.0 / static_cast<double>(avg_steps_);
  out = (avg_sum_ * inv).transpose().cast<float>();
  out_bias = (avg_bias_ * inv).cast<float>();
}

void DenseLinearLayer::flush() {
  Eigen::Map<RowMajorMatrix>(model_.weight.data(), weight_.cols(), weight_.rows()) =
      weight_.transpose();
  Eigen::Map<Eigen::VectorXf>(model_.bias.data(), bias_.size()) = bias_;
}

void predict_proba_dense(const Model& model, const CsrMatrix& x, Index begin, Index end,
                         double* proba, Index block, std::int32_t* classes) {
  const Eigen::Index f = model.num_features, k = model.num_outputs;
  const Eigen::Map<const RowMajorMatrix> e(model.weight.data(), f, k);
  const Eigen::Map<const Eigen::VectorXf> bias(model.bias.data(), k);
  const int c = model.num_classes();
  std::vector<Index> rows;
  RowMajorMatrix dense, z;
  for (Index b0 = begin; b0 < end; b0 += block) {
    const Index b1 = std::min(end, b0 + block);
    rows.resize(static_cast<std::size_t>(b1 - b0));
    for (Index r = b0; r < b1; ++r) rows[r - b0] = r;
    densify_rows(x, rows, static_cast<Index>(f), dense);
    z.noalias() = dense * e;  // = X @ W.T
    z.rowwise() += bias.transpose();
    for (Index r = 0; r < b1 - b0; ++r) {
      const float* zr = z.data() + static_cast<std::size_t>(r) * k;
      head_probabilities(zr, proba + static_cast<std::size_t>(b0 - begin + r) * c, static_cast<int>(k),
                         model.head());
      if (classes != nullptr) classes[b0 - begin + r] = predicted_class(zr, static_cast<int>(k));
    }
  }
}

}  // namespace bagel
