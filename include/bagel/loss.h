// The logistic heads: sigmoid + log loss for two classes; for more, softmax +
// cross-entropy (one multinomial model) or one-vs-rest (K binary models, class
// k against the rest, as LIBLINEAR's -s 0 and scikit-learn's SGDClassifier).
// Exact exp/log1p (no lookup tables), guarded so that large margins neither
// overflow nor lose the loss to rounding; training's loss and gradient take
// exp of non-positive values from exp_nonpositive.h (vectorised, within 2 ulp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "bagel/exp_nonpositive.h"
#include "bagel/libm_calls.h"
#include "bagel/row_width.h"

namespace bagel {

// The heads work through K outputs this many at a time: their exp values in
// a stack array, so that one loop computes them all (vectorised) and the
// sums that follow keep their order.
inline constexpr int kHeadChunk = 16;

// How a model turns its logits into class probabilities and a loss.
enum class Head { kSigmoid, kSoftmax, kOneVsRest };

// "sigmoid", "softmax", "ovr": model.json's "output" and model.multiclass.
inline std::string to_string(Head head) {
  switch (head) {
    case Head::kSigmoid: return "sigmoid";
    case Head::kOneVsRest: return "ovr";
    case Head::kSoftmax: break;
  }
  return "softmax";
}

// log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
inline double softplus(double x) { return std::max(x, 0.0) + libm::log1p(libm::exp(-std::abs(x))); }

// 1 / (1 + exp(-z)), evaluated on the side where exp cannot overflow.
inline double sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + libm::exp(-z));
  const double e = libm::exp(z);
  return e / (1.0 + e);
}

// sigmoid(z) from e = exp(-|z|): 1 / (1 + e) for z >= 0, e / (1 + e)
// below. The heads compute e once for the gradient and the loss (and in
// loops that vectorise), so they all take the sigmoid from it.
inline double sigmoid_from(double z, double e) { return (z >= 0 ? 1.0 : e) / (1.0 + e); }

// Binary: one logit z, label y in {0, 1}.
//   loss = -[y log s(z) + (1-y) log(1 - s(z))] = softplus(z) - y z
//   dloss/dz = s(z) - y
struct BinaryLogLoss {
  static constexpr int outputs_for(int /*num_classes*/) { return 1; }
  // Writes dloss/dz into grad[0]; returns the loss.
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto /*k*/) {
    // sigmoid(z) and softplus(z) from one exp(-|z|) (the functions above
    // compute the same with libm's exp).
    const double zd = z[0];
    const double e = exp_nonpositive(-std::abs(zd));
    grad[0] = static_cast<float>(sigmoid_from(zd, e) - y);
    return detail::madd(std::max(zd, 0.0) + libm::log1p(e), -double(y), zd);  // madd.h
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
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k) {
    double m = z[0];
    for (int i = 1; i < k; ++i) m = std::max<double>(m, z[i]);
    // One exp per class (they were most of the head's time at K = 20): grad
    // holds exp(z_i - m), in (0, 1], until the sum is known.
    double sum = 0;
    for_output_chunks<kHeadChunk>(k, [&](int i0, Width auto n) {
      double e[kHeadChunk];
      for (int j = 0; j < n; ++j) e[j] = exp_nonpositive(static_cast<double>(z[i0 + j]) - m);
      for (int j = 0; j < n; ++j) {
        sum += e[j];
        grad[i0 + j] = static_cast<float>(e[j]);
      }
    });
    // GCC 12 at -O3, where k is a constant (row_width.h), forwards the
    // stores above to the loads below and then drops the float rounding
    // in between (SLP vectorisation after value numbering): some gradients
    // came out an ulp off the other paths'. A compiler barrier makes it
    // read the floats stored.
    asm volatile("" ::: "memory");
    const double inv = 1.0 / sum;
    for (int i = 0; i < k; ++i) grad[i] = static_cast<float>(grad[i] * inv);
    grad[y] -= 1.0f;
    return libm::log(sum) + m - z[y];
  }
  // The exps in a loop of their own, which vectorises (as in loss_and_grad).
  static void probabilities(const float* z, double* proba, int k) {
    double m = z[0];
    for (int i = 1; i < k; ++i) m = std::max<double>(m, z[i]);
    for (int i = 0; i < k; ++i) proba[i] = exp_nonpositive(static_cast<double>(z[i]) - m);
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += proba[i];
    for (int i = 0; i < k; ++i) proba[i] /= sum;
  }
};

// K classes: K logits, each the score of one binary problem (class k or not).
//   loss = sum_k softplus(z_k) - z_y,  dloss/dz_k = s(z_k) - [k == y]
// Each output's gradient depends on its own logit only, so training the K
// outputs together is training K binary models on the same row order. The
// probabilities are the sigmoids normalised to sum to 1 (LIBLINEAR's and
// scikit-learn's one-vs-rest predict_proba).
struct OneVsRestLogLoss {
  static constexpr int outputs_for(int num_classes) { return num_classes; }
  // The K log1p(e_i) terms are summed as one log of the product of the
  // (1 + e_i), each in (1, 2] (a log a chunk of kHeadChunk outputs): a log1p
  // an output was a fifth of the training time on 20 classes. The sum is off
  // by at most ~K * 1e-16. The exp values, then the gradients, are loops
  // without a sum in them, which the compiler vectorises.
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k) {
    double loss = 0;
    for_output_chunks<kHeadChunk>(k, [&](int i0, Width auto n) {
      double e[kHeadChunk];
      for (int j = 0; j < n; ++j) e[j] = exp_nonpositive(-std::abs(static_cast<double>(z[i0 + j])));
      for (int j = 0; j < n; ++j) grad[i0 + j] = static_cast<float>(sigmoid_from(z[i0 + j], e[j]));
      double product = 1;
      for (int j = 0; j < n; ++j) {
        loss += std::max(static_cast<double>(z[i0 + j]), 0.0);
        product *= 1.0 + e[j];
      }
      loss += libm::log(product);
      if (y >= i0 && y < i0 + n) {
        const double zy = z[y];
        const double ey = e[y - i0];
        grad[y] = static_cast<float>(sigmoid_from(zy, ey) - 1.0);
        loss -= zy;
      }
    });
    return loss;
  }
  // sigmoid(z_i) from exp(-|z_i|), as loss_and_grad computes it, in a loop
  // that vectorises (std::exp a class was most of predict --proba's time).
  static void probabilities(const float* z, double* proba, int k) {
    for (int i = 0; i < k; ++i) {
      const double zi = z[i];
      proba[i] = sigmoid_from(zi, exp_nonpositive(-std::abs(zi)));
    }
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += proba[i];
    for (int i = 0; i < k; ++i) proba[i] /= sum;
  }
};

// Number of logits for `num_classes` classes: 1 (sigmoid) for two, else K.
inline int num_outputs_for(int num_classes) { return num_classes == 2 ? 1 : num_classes; }

// The loss of one row at all-zero logits, where training starts: log K for
// softmax (and log 2 for the sigmoid), K log 2 for one-vs-rest.
inline double loss_at_zero(Head head, int num_classes) {
  return head == Head::kOneVsRest ? num_classes * std::log(2.0)
                                  : std::log(static_cast<double>(std::max(num_classes, 2)));
}

// Loss and dloss/dz of one row.
inline double head_loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto outputs,
                                 Head head) {
  switch (head) {
    case Head::kSigmoid: return BinaryLogLoss::loss_and_grad(z, y, grad, 1);
    case Head::kOneVsRest: return OneVsRestLogLoss::loss_and_grad(z, y, grad, outputs);
    case Head::kSoftmax: break;
  }
  return SoftmaxCrossEntropy::loss_and_grad(z, y, grad, outputs);
}

// Class probabilities (num_classes values) of one row from its logits.
inline void head_probabilities(const float* z, double* proba, int outputs, Head head) {
  switch (head) {
    case Head::kSigmoid: BinaryLogLoss::probabilities(z, proba, 1); return;
    case Head::kOneVsRest: OneVsRestLogLoss::probabilities(z, proba, outputs); return;
    case Head::kSoftmax: break;
  }
  SoftmaxCrossEntropy::probabilities(z, proba, outputs);
}

}  // namespace bagel
