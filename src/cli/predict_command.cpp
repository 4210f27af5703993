#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "bagel/atomic_file.h"
#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/dense_linear.h"
#include "bagel/error.h"
#include "bagel/labels.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/table_writer.h"
#include "commands.h"

namespace bagel::cli {

namespace {

using Clock = std::chrono::steady_clock;

// Rows predicted (in parallel) and written per round: output streams out
// while memory stays bounded.

// Labels for metrics: --labels, or the svmlight file's own when they are all
// classes of the model (LIBLINEAR's predict does the same).
std::optional<std::vector<std::int32_t>> labels_for_metrics(const PredictOptions& o,
                                                            const RawLabels& in_file,
                                                            const Classes& classes,
                                                            Index rows) {
  if (!o.labels.empty()) {
    const RawLabels labels = read_labels(o.labels);
    if (static_cast<Index>(labels.size()) != rows)
      throw FileError(o.labels, "has " + std::to_string(labels.size()) + " labels but " +
                                    o.input + " has " + std::to_string(rows) + " rows");
    return classes.encode(labels);
  }
  if (in_file.size() == 0) return std::nullopt;
  try {
    return classes.encode(in_file);
  } catch (const Error&) {
    if (!o.quiet)
      std::cerr << "note: the labels in " << o.input
                << " are not all classes of the model; no metrics (pass --labels to score)\n";
    return std::nullopt;
  }
}

}  // namespace

CLI::App* add_predict_command(CLI::App& app, PredictOptions& o) {
  CLI::App* cmd = app.add_subcommand("predict", "Predict classes or probabilities for a CSR file");
  cmd->add_option("-m,--model", o.model, "Model directory written by bagel train")->required();
  cmd->add_option("-i,--input", o.input, "Features: .npz (scipy CSR) or svmlight text")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-l,--labels", o.labels,
                  "True labels (text, one per line, or .npy) to report metrics");
  cmd->add_option("-o,--output", o.output, "Write predictions here instead of stdout");
  cmd->add_flag("-p,--proba", o.proba,
                "Write class probabilities: a header of class names, then one row per input row");
  cmd->add_option("--format", o.format, "Delimiter of --proba output: csv or tsv")
      ->check(CLI::IsMember({"csv", "tsv"}))
      ->capture_default_str();
  cmd->add_option("--metrics", o.metrics, "Write metrics as JSON to this file (needs labels)");
  cmd->add_option("--zero-based", o.zero_based, "svmlight indices: auto, true or false")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  cmd->add_option("--layer", o.layer,
                  "Inference path: sparse (EmbeddingBag sum) or dense (densified rows, GEMM)")
      ->check(CLI::IsMember({"sparse", "dense"}))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No summary on stderr");
  return cmd;
}

int run_predict(const PredictOptions& o) {
  const auto t0 = Clock::now();
  const Model model = load_model(o.model);
  RawLabels in_file;
  const CsrMatrix x = read_features(o.input, parse_zero_based(o.zero_based, "--zero-based"), &in_file);
  check_features_fit(model, x, o.input);
  const Classes classes{model.classes, model.numeric_classes};
  const auto y = labels_for_metrics(o, in_file, classes, x.rows());
  if (!o.metrics.empty() && !y)
    throw Error("--metrics needs true labels: pass --labels FILE (or an svmlight input)");
  const double load_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const LayerKind layer = parse_layer(o.layer, "--layer");

  std::unique_ptr<AtomicPath> out_file;
  std::ofstream file_stream;
  if (!o.output.empty()) {
    out_file = std::make_unique<AtomicPath>(o.output);
    file_stream.open(out_file->temp(), std::ios::binary);
    if (!file_stream) throw FileError(o.output, "cannot open for writing");
  }
  std::ostream& out = o.output.empty() ? std::cout : file_stream;
  const char delim = o.format == "tsv" ? '\t' : ',';
  const int c = model.num_classes();
  if (o.proba) {
    for (int i = 0; i < c; ++i) out << (i ? std::string(1, delim) : "") << quote_field(model.classes[i], delim);
    out << '\n';
  }

  const auto t_predict = Clock::now();
  std::optional<MetricsAccumulator> metrics;
  if (y) metrics.emplace(c);
  std::string text;
  for (Index begin = 0; begin < x.rows(); begin += kRowsPerChunk) {
    const Index end = std::min(x.rows(), begin + kRowsPerChunk);
    std::vector<double> proba;
    if (layer == LayerKind::kDense) {
      proba.resize(static_cast<std::size_t>(end - begin) * c);
      predict_proba_dense(model, x, begin, end, proba.data());
    } else {
      proba = predict_proba_chunk(model, x, begin, end, o.threads);
    }
    text.clear();
    for (Index r = 0; r < end - begin; ++r) {
      const double* p = proba.data() + static_cast<std::size_t>(r) * c;
      if (o.proba) {
        for (int i = 0; i < c; ++i) {
          if (i) text += delim;
          text += format_number(p[i]);
        }
      } else {
        text += model.classes[std::max_element(p, p + c) - p];
      }
      text += '\n';
    }
    out << text;
    if (metrics)
      metrics->add(std::span<const std::int32_t>(*y).subspan(
                       static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)),
                   proba);
  }
  out.flush();
  if (!out) throw FileError(o.output.empty() ? "<stdout>" : o.output, "write failed");
  if (out_file) {
    file_stream.close();
    out_file->commit();
  }
  const double predict_seconds = std::chrono::duration<double>(Clock::now() - t_predict).count();

  if (!o.quiet) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "predicted %d rows in %.3fs (%.0f rows/s; load %.3fs)", x.rows(),
                  predict_seconds, predict_seconds > 0 ? x.rows() / predict_seconds : 0.0,
                  load_seconds);
    std::cerr << buf << "\n";
  }
  if (y) {
    const Metrics m = metrics->finish();
    if (!o.quiet) std::cerr << metrics_summary(m) << "\n";
    if (!o.metrics.empty()) {
      write_file_atomic(o.metrics, metrics_to_json(m, model.classes).dump(2) + "\n");
    }
  }
  return 0;
}

}  // namespace bagel::cli
