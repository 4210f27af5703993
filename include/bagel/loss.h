// The logistic head: sigmoid + log loss for two classes, softmax +
// cross-entropy for more. Exact exp/log1p (no lookup tables), guarded so
// that large margins neither overflow nor lose the loss to rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace bagel {

// log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
inline double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

// 1 / (1 + exp(-z)), evaluated on the side where exp cannot overflow.
inline double sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// Binary: one logit z, label y in {0, 1}.
//   loss = -[y log s(z) + (1-y) log(1 - s(z))] = softplus(z) - y z
//   dloss/dz = s(z) - y
struct BinaryLogLoss {
  static constexpr int outputs_for(int /*num_classes*/) { return 1; }
  // Writes dloss/dz into grad[0]; returns the loss.
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, int /*k*/) {
    // sigmoid(z) and softplus(z) from one exp(-|z|), as the two functions
    // above compute them (same values, bit for bit).
    const double zd = z[0];
    const double e = std::exp(-std::abs(zd));
    grad[0] = static_cast<float>((zd >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e)) - y);
    return std::max(zd, 0.0) + std::log1p(e) - y * zd;
  }
  // Class probabilities [1 - p, p] from the logit.
  static void probabilities(const float* z, double* proba, int /*k*/) {
    const double p = sigmoid(z[0]);
    proba[0] = 1.0 - p;
    proba[1] = p;
  }
};

// K classes: K logits.
//   loss = logsumexp(z) - z_y,  dloss/dz_k = softmax(z)_k - [k == y]
// The max is subtracted before exp so no term overflows.
struct SoftmaxCrossEntropy {
  static constexpr int outputs_for(int num_classes) { return num_classes; }
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, int k) {
    double m = z[0];
    for (int i = 1; i < k; ++i) m = std::max<double>(m, z[i]);
    // One exp per class (they are most of the head's time at K = 20): grad
    // holds exp(z_i - m), in (0, 1], until the sum is known.
    double sum = 0;
    for (int i = 0; i < k; ++i) {
      const double e = std::exp(static_cast<double>(z[i]) - m);
      sum += e;
      grad[i] = static_cast<float>(e);
    }
    const double inv = 1.0 / sum;
    for (int i = 0; i < k; ++i) grad[i] = static_cast<float>(grad[i] * inv);
    grad[y] -= 1.0f;
    return std::log(sum) + m - z[y];
  }
  static void probabilities(const float* z, double* proba, int k) {
    double m = z[0];
    for (int i = 1; i < k; ++i) m = std::max<double>(m, z[i]);
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += (proba[i] = std::exp(static_cast<double>(z[i]) - m));
    for (int i = 0; i < k; ++i) proba[i] /= sum;
  }
};

// Number of logits for `num_classes` classes: 1 (sigmoid) for two, else K.
inline int num_outputs_for(int num_classes) { return num_classes == 2 ? 1 : num_classes; }

// Loss and dloss/dz of one row with the head chosen by the output count.
inline double head_loss_and_grad(const float* z, std::int32_t y, float* grad, int outputs) {
  return outputs == 1 ? BinaryLogLoss::loss_and_grad(z, y, grad, 1)
                      : SoftmaxCrossEntropy::loss_and_grad(z, y, grad, outputs);
}

// Class probabilities (num_classes values) of one row from its logits.
inline void head_probabilities(const float* z, double* proba, int outputs) {
  if (outputs == 1) BinaryLogLoss::probabilities(z, proba, 1);
  else SoftmaxCrossEntropy::probabilities(z, proba, outputs);
}

}  // namespace bagel
