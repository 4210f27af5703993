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
#include "bagel/madd.h"
#include "bagel/row_width.h"

namespace bagel {

// The heads work through K outputs this many at a time: their exp values in
// a stack array, so that one loop computes them all (vectorised) and the
// sums that follow keep their order.
inline constexpr int kHeadChunk = 16;

// A sum of row losses whose log terms are taken together. Each head's log
// term is the log of a factor >= 1 (binary: 1 + e; one-vs-rest: a chunk's
// product of 1 + e; softmax: the sum of the exps, at most K), and the log of
// the product of many of them costs one libm call where a call a row was
// 8-11% of a training loop (binary and 20 classes, data/PERFORMANCE.md). The
// product is kept as a double-double (hi + lo, the rounding error of each
// multiply and of 1 + e carried in lo), so the sum is as exact as adding each
// row's log: a row's loss of 1e-12 keeps its digits. It is folded into the
// sum before it could pass double's range (a factor is at most 2^16 or K).
class LossSum {
 public:
  explicit LossSum(double start = 0) : sum_(start) {}
  void add(double loss) { sum_ += loss; }
  // sum += loss * w, in one rounding (madd.h).
  void add_weighted(double loss, double w) { sum_ = detail::madd(sum_, loss, w); }
  // Adds log(factor + residual), |residual| tiny against factor.
  void add_log_of(double factor, double residual = 0) {
    const double hi = hi_ * factor;
    lo_ = detail::madd(detail::madd(std::fma(hi_, factor, -hi), lo_, factor), hi_, residual);
    hi_ = hi;
    if (hi_ > 0x1p900) fold();
  }
  // Adds log1p(e) for e in [0, 1]: 1 + e and its exact rounding error.
  void add_log1p(double e) {
    const double f = 1.0 + e;
    add_log_of(f, e - (f - 1.0));
  }
  // The sum with every log term in it.
  double total() {
    fold();
    return sum_;
  }

 private:
  void fold() {
    if (hi_ == 1 && lo_ == 0) return;
    sum_ += libm::log(hi_) + lo_ / hi_;  // log(hi + lo), lo / hi within 1e-15
    hi_ = 1;
    lo_ = 0;
  }
  double sum_;
  double hi_ = 1, lo_ = 0;
};

namespace detail {

// The heads' log terms: computed at once (a row's own loss), or into a
// LossSum, where the head returns the rest of the row's loss.
struct LogsNow {
  static double log1p(double e) { return libm::log1p(e); }
  static double log(double x) { return libm::log(x); }
};
struct LogsInto {
  LossSum& sum;
  double log1p(double e) const {
    sum.add_log1p(e);
    return 0;
  }
  double log(double x) const {
    sum.add_log_of(x);
    return 0;
  }
};

}  // namespace detail

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
  // Writes dloss/dz into grad[0]; returns the loss (its log term through
  // `logs`: detail::LogsInto leaves it in a LossSum).
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto /*k*/,
                              const auto& logs) {
    // sigmoid(z) and softplus(z) from one exp(-|z|) (the functions above
    // compute the same with libm's exp).
    const double zd = z[0];
    const double e = exp_nonpositive(-std::abs(zd));
    grad[0] = static_cast<float>(sigmoid_from(zd, e) - y);
    return detail::madd(std::max(zd, 0.0) + logs.log1p(e), -double(y), zd);  // madd.h
  }
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k) {
    return loss_and_grad(z, y, grad, k, detail::LogsNow{});
  }
  // Class probabilities [1 - p, p] from the logit, each from exp(-|z|) on
  // its own side: 1 - p computed as a difference lost the smaller one (a
  // logit of 55.7 printed P = 0 for a true 6.4e-25).
  static void probabilities(const float* z, double* proba, int /*k*/) {
    const double zd = z[0];
    const double e = libm::exp(-std::abs(zd));
    const double large = 1.0 / (1.0 + e), small = e / (1.0 + e);
    proba[0] = zd >= 0 ? small : large;
    proba[1] = zd >= 0 ? large : small;
  }
};

// K classes: K logits.
//   loss = logsumexp(z) - z_y,  dloss/dz_k = softmax(z)_k - [k == y]
// The max is subtracted before exp so no term overflows.
struct SoftmaxCrossEntropy {
  static constexpr int outputs_for(int num_classes) { return num_classes; }
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k) {
    return loss_and_grad(z, y, grad, k, detail::LogsNow{});
  }
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k,
                              const auto& logs) {
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
    return logs.log(sum) + m - z[y];
  }
  // The exps in a loop of their own, which vectorises (as in loss_and_grad).
  static void probabilities(const float* z, double* proba, int k) {
    double m = z[0];
    for (int i = 1; i < k; ++i) m = std::max<double>(m, z[i]);
    for (int i = 0; i < k; ++i) proba[i] = exp_nonpositive(static_cast<double>(z[i]) - m);
    // exp_nonpositive stops at exp(-708); a probability below it is 0, as
    // predict's flush-to-zero makes it anyway (one-vs-rest's too), not that
    // floor, whose ties put classes 10^-100 apart in class order.
    for (int i = 0; i < k; ++i)
      if (static_cast<double>(z[i]) - m < -708.0) proba[i] = 0;
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
    return loss_and_grad(z, y, grad, k, detail::LogsNow{});
  }
  static double loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto k,
                              const auto& logs) {
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
      loss += logs.log(product);
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
    // Below -708 the sigmoid is under exp_nonpositive's floor: 0 (see
    // SoftmaxCrossEntropy::probabilities).
    for (int i = 0; i < k; ++i)
      if (static_cast<double>(z[i]) < -708.0) proba[i] = 0;
    double sum = 0;
    for (int i = 0; i < k; ++i) sum += proba[i];
    // Every z_i far below 0 (the row matches no class): each sigmoid is
    // exp(z_i) to a relative 1e-200, and exp_nonpositive stops at -708, so
    // the shares come from the logits, a softmax, not from sigmoids that
    // all reached the same floor (which read as equal chances).
    if (sum < 1e-200) return SoftmaxCrossEntropy::probabilities(z, proba, k);
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
                                 Head head, const auto& logs) {
  switch (head) {
    case Head::kSigmoid: return BinaryLogLoss::loss_and_grad(z, y, grad, 1, logs);
    case Head::kOneVsRest: return OneVsRestLogLoss::loss_and_grad(z, y, grad, outputs, logs);
    case Head::kSoftmax: break;
  }
  return SoftmaxCrossEntropy::loss_and_grad(z, y, grad, outputs, logs);
}
inline double head_loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto outputs,
                                 Head head) {
  return head_loss_and_grad(z, y, grad, outputs, head, detail::LogsNow{});
}
// The same, its log term left in `sum`: returns the rest of the row's loss.
inline double head_loss_and_grad(const float* z, std::int32_t y, float* grad, Width auto outputs,
                                 Head head, LossSum& sum) {
  return head_loss_and_grad(z, y, grad, outputs, head, detail::LogsInto{sum});
}

// The predicted class of one row: the largest logit's (the first of equal
// ones), for two classes 1 where the logit is above 0. It is the most
// probable class, and stays so where the probabilities themselves tie in
// double precision: a long row's one-vs-rest sigmoids all round to 1 from
// a logit of ~37 up, and their shares are then equal whatever the logits.
inline int predicted_class(const float* z, int outputs) {
  if (outputs == 1) return z[0] > 0 ? 1 : 0;
  return static_cast<int>(std::max_element(z, z + outputs) - z);
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
