#include "bagel/predict.h"

#include <omp.h>

#include <algorithm>

#include "bagel/cores.h"
#include "bagel/embedding_bag.h"
#include "bagel/error.h"
#include "bagel/float_env.h"
#include "bagel/loss.h"
#include "bagel/parallel_errors.h"
#include "bagel/train_plan.h"  // kMaxThreads

namespace bagel {

void predict_proba_rows(const Model& model, const CsrMatrix& x, Index begin, Index end,
                        double* proba, std::int32_t* classes) {
  const int k = model.num_outputs;
  const int c = model.num_classes();
  std::vector<float> logits(k);
  const detail::BagKernels kernels = detail::BagKernels::for_outputs(k);
  for (Index r = begin; r < end; ++r) {
    if (r + 1 < end) prefetch_rows(model.weight.data(), k, x.row(r + 1));
    embedding_bag_forward(kernels, model.weight.data(), model.bias.data(), k, x.row(r), logits.data());
    head_probabilities(logits.data(), proba + static_cast<std::size_t>(r - begin) * c, k, model.head());
    if (classes != nullptr) classes[r - begin] = predicted_class(logits.data(), k);
  }
}

namespace {

// Runs rows_fn(b, e, out + (b - begin) * width) over blocks of rows [begin,
// end), in parallel when the input is large enough to pay for waking threads.
template <typename RowsFn>
std::vector<double> by_row_blocks(const CsrMatrix& x, Index begin, Index end, int width,
                                  int threads, RowsFn rows_fn) {
  std::vector<double> out(static_cast<std::size_t>(end - begin) * width);
  constexpr Index kBlock = 1024;  // rows per task: enough work to amortise scheduling
  // Waking threads costs tens of microseconds, and counting the cores reads
  // /proc and /sys: small inputs (one row from Python) run on one.
  const bool parallel = x.indptr()[end] - x.indptr()[begin] > (1 << 18);
  const int nthreads = parallel ? resolve_threads(std::min(threads, kMaxThreads)) : 1;
  RegionErrors errors;  // an allocation that fails must not end in std::terminate
#pragma omp parallel num_threads(nthreads) if (parallel)
  {
    const DenormalsAreZero flush_denormals;
#pragma omp for schedule(dynamic, 1)
    for (Index b = begin; b < end; b += kBlock) {
      if (errors.failed()) continue;
      const Index e = std::min(end, b + kBlock);
      errors.run([&] { rows_fn(b, e, out.data() + static_cast<std::size_t>(b - begin) * width); });
    }
  }
  errors.rethrow();
  return out;
}

}  // namespace

std::vector<double> predict_proba_chunk(const Model& model, const CsrMatrix& x, Index begin,
                                        Index end, int threads) {
  return by_row_blocks(x, begin, end, model.num_classes(), threads,
                       [&](Index b, Index e, double* out) { predict_proba_rows(model, x, b, e, out); });
}

Predictions predict_chunk(const Model& model, const CsrMatrix& x, Index begin, Index end,
                          int threads) {
  Predictions p;
  p.classes.resize(static_cast<std::size_t>(end - begin));
  std::int32_t* classes = p.classes.data();
  p.proba = by_row_blocks(x, begin, end, model.num_classes(), threads, [&](Index b, Index e, double* out) {
    predict_proba_rows(model, x, b, e, out, classes + (b - begin));
  });
  return p;
}

void predict_logits_rows(const Model& model, const CsrMatrix& x, Index begin, Index end,
                         double* logits) {
  const int k = model.num_outputs;
  std::vector<float> z(k);
  const detail::BagKernels kernels = detail::BagKernels::for_outputs(k);
  for (Index r = begin; r < end; ++r) {
    if (r + 1 < end) prefetch_rows(model.weight.data(), k, x.row(r + 1));
    embedding_bag_forward(kernels, model.weight.data(), model.bias.data(), k, x.row(r), z.data());
    std::copy(z.begin(), z.end(), logits + static_cast<std::size_t>(r - begin) * k);
  }
}

std::vector<double> predict_logits_chunk(const Model& model, const CsrMatrix& x, Index begin,
                                         Index end, int threads) {
  return by_row_blocks(x, begin, end, model.num_outputs, threads,
                       [&](Index b, Index e, double* out) { predict_logits_rows(model, x, b, e, out); });
}

std::vector<double> predict_proba(const Model& model, const CsrMatrix& x, int threads) {
  return predict_proba_chunk(model, x, 0, x.rows(), threads);
}

Metrics evaluate(const Model& model, const CsrMatrix& x, std::span<const std::int32_t> y,
                 int threads) {
  MetricsAccumulator acc(model.num_classes());
  const Index chunk = rows_per_chunk(model.num_classes());
  for (Index begin = 0; begin < x.rows(); begin += chunk) {
    const Index end = std::min(x.rows(), begin + chunk);
    const Predictions p = predict_chunk(model, x, begin, end, threads);
    acc.add(y.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)), p.proba,
            p.classes);
  }
  return acc.finish();
}

void check_features_fit(const Model& model, const CsrMatrix& x, const std::string& source,
                        ColumnCount columns) {
  const std::string expected = std::to_string(model.num_features);
  if (columns == ColumnCount::kStored && x.cols() != model.num_features)
    throw FileError(source, "has " + std::to_string(x.cols()) + " features (columns), but the "
                            "model is expecting " + expected + "; vectorise it with the "
                            "training vocabulary (the fitted vectorizer's transform)");
  if (x.cols() > model.num_features)
    throw FileError(source, "has " + std::to_string(x.cols()) + " feature columns (as its largest "
                            "index gives them: index + 1 zero-based, the index one-based) but "
                            "the model has " + expected + " (was it vectorised "
                            "with the training vocabulary? is --zero-based right?)");
}

void check_svmlight_fits(const Model& model, const CsrMatrix& x, const RawLabels& rows,
                         const std::string& source) {
  if (x.cols() > model.num_features)
    for (Index r = 0; r < x.rows() && static_cast<std::size_t>(r) < rows.lines.size(); ++r) {
      const std::span<const Index> columns = x.row(r).indices;
      const Index width = columns.empty() ? 0 : *std::max_element(columns.begin(), columns.end()) + 1;
      if (width > model.num_features)
        throw FileError(source,
                        "this row has " + std::to_string(width) + " feature columns (as its largest "
                        "index gives them: index + 1 zero-based, the index one-based) but the model "
                        "has " + std::to_string(model.num_features) + " (was it vectorised with the "
                        "training vocabulary? is --zero-based right?)",
                        rows.lines[static_cast<std::size_t>(r)]);
    }
  check_features_fit(model, x, source, ColumnCount::kInferred);
}

}  // namespace bagel
