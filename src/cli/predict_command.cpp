#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <unistd.h>

#include "bagel/atomic_file.h"
#include "bagel/config.h"
#include "bagel/dataset.h"
#include "bagel/dense_linear.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/labels.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/model_dir.h"
#include "bagel/npz.h"
#include "bagel/predict.h"
#include "bagel/svmlight.h"
#include "bagel/cores.h"
#include <filesystem>
#include "bagel/table_writer.h"
#include "bagel/temp_registry.h"
#include "bagel/top_classes.h"
#include "bagel/train_plan.h"  // kMaxThreads
#include "cli_numbers.h"
#include "cli_paths.h"
#include "commands.h"
#include "model_text.h"

namespace bagel::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Standard output, or a file written atomically: it appears complete, or
// not at all when predict fails, and its folder is created when missing.
// Standard output redirected to a file (`> preds.txt`, `>> log`) gets the
// rows as they are predicted and, when predict fails partway (a bad line in
// the middle of an svmlight input), is cut back to where it ended: a run
// that fails adds nothing there either. A pipe keeps what it was sent.
class PredictionOutput {
 public:
  explicit PredictionOutput(const std::string& path) : path_(path), folders_(path) {
    if (!path.empty()) {
      create_parent_folder(path);
      file_ = std::make_unique<AtomicPath>(path);
      file_stream_.open(file_->temp(), std::ios::binary);
      if (!file_stream_) throw FileError(path, "cannot open for writing");
    } else {
      stdout_end_ = DescriptorEnd::of(STDOUT_FILENO);
    }
    buf_ = std::make_unique<ErrnoKeepingBuf>(file_ ? file_stream_.rdbuf() : std::cout.rdbuf());
    stream_.rdbuf(buf_.get());
  }
  ~PredictionOutput() {
    if (file_ || committed_) return;
    stream_.flush();  // what is still buffered lands before the cut, not after it
    stdout_end_.undo(STDOUT_FILENO);
  }
  PredictionOutput(const PredictionOutput&) = delete;
  PredictionOutput& operator=(const PredictionOutput&) = delete;

  std::ostream& stream() { return stream_; }
  // Flushed and checked; a file is closed but not yet in place.
  void finish() {
    stream_.flush();
    if (!stream_) throw FileError(path_.empty() ? "<stdout>" : path_, write_failed_message(buf_->error()));
    if (file_) file_stream_.close();
  }
  void commit() {
    committed_ = true;
    if (!file_) return;
    file_->commit();
    folders_.keep();
  }

 private:
  std::string path_;
  NewFolders folders_;  // removed again unless the output is committed
  std::unique_ptr<AtomicPath> file_;
  DescriptorEnd stdout_end_;
  bool committed_ = false;
  std::ofstream file_stream_;
  std::unique_ptr<ErrnoKeepingBuf> buf_;
  std::ostream stream_{nullptr};
};

// Predicts rows and writes one line each (a class name, or probabilities),
// gathering the metrics while labels are available for every row so far.
class PredictionWriter {
 public:
  PredictionWriter(const Model& model, const PredictOptions& o, std::ostream& out)
      : model_(model), o_(o), out_(out), layer_(parse_layer(o.layer, "--layer")) {
    if (o.proba) write_header();
    if (o.top_k > 0 || o.threshold >= 0)
      top_.emplace(model.num_classes(),
                   o.top_k > 0 ? static_cast<int>(std::min<std::int64_t>(o.top_k, model.num_classes()))
                               : model.num_classes(),
                   o.threshold >= 0 ? o.threshold : 0.0);
  }

  void expect_labels() { metrics_.emplace(model_.num_classes()); }
  // Some row had no usable label: there will be no metrics.
  void drop_metrics() { metrics_.reset(); }
  bool has_metrics() const { return metrics_.has_value(); }

  // All rows of `x`, kRowsPerChunk at a time so that memory stays one chunk
  // of probabilities; `y` holds their class ids when metrics are gathered.
  void write(const CsrMatrix& x, std::span<const std::int32_t> y) {
    const Index chunk = rows_per_chunk(model_.num_classes());
    for (Index begin = 0; begin < x.rows(); begin += chunk) {
      const Index end = std::min(x.rows(), begin + chunk);
      const Predictions p = predictions(x, begin, end);
      write_rows(p, end - begin);
      if (metrics_)
        metrics_->add(y.subspan(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)),
                      p.proba, p.classes);
    }
    rows_ += x.rows();
  }

  Index rows() const { return rows_; }
  int classes() const { return model_.num_classes(); }
  std::optional<Metrics> metrics() const {
    return metrics_ ? std::optional<Metrics>(metrics_->finish()) : std::nullopt;
  }

 private:
  char delimiter() const { return o_.format == "tsv" ? '\t' : ','; }

  void write_header() {
    const int c = model_.num_classes();
    for (int i = 0; i < c; ++i)
      out_ << (i ? std::string(1, delimiter()) : "") << quote_field(model_.classes[i], delimiter());
    out_ << '\n';
  }

  Predictions predictions(const CsrMatrix& x, Index begin, Index end) const {
    if (layer_ != LayerKind::kDense) return predict_chunk(model_, x, begin, end, o_.threads);
    Predictions p;
    p.proba.resize(static_cast<std::size_t>(end - begin) * model_.num_classes());
    p.classes.resize(static_cast<std::size_t>(end - begin));
    predict_proba_dense(model_, x, begin, end, p.proba.data(), 256, p.classes.data());
    return p;
  }

  void write_rows(const Predictions& predicted, Index rows) {
    const int c = model_.num_classes();
    text_.clear();
    for (Index r = 0; r < rows; ++r) {
      const double* p = predicted.proba.data() + static_cast<std::size_t>(r) * c;
      const int best = predicted.classes[static_cast<std::size_t>(r)];
      if (o_.proba) {
        for (int i = 0; i < c; ++i) {
          if (i) text_ += delimiter();
          text_ += format_number(p[i]);
        }
      } else if (top_) {
        write_top_classes(p, best);
      } else {
        text_ += plain_class(model_.classes[static_cast<std::size_t>(best)]);
      }
      text_ += '\n';
    }
    out_ << text_;
  }

  // A class name alone on its line: quoted as CSV quotes a field where it
  // holds a line break (or starts with a quote, which would read as one),
  // so that every input row stays one output line.
  static std::string plain_class(const std::string& name) {
    const bool quoted = name.find_first_of("\n\r") != std::string::npos || (!name.empty() && name[0] == '"');
    return quoted ? quote_field(name, '\n') : name;
  }

  // --top-k / --threshold: CLASS,PROB,CLASS,PROB,... best first; nothing
  // (an empty line) when no class reaches the threshold, as fastText does.
  void write_top_classes(const double* p, int best) {
    bool first = true;
    for (const int k : top_->of(p, best)) {
      if (!first) text_ += delimiter();
      first = false;
      text_ += quote_field(model_.classes[k], delimiter());
      text_ += delimiter();
      text_ += format_number(p[k]);
    }
  }

  const Model& model_;
  const PredictOptions& o_;
  std::ostream& out_;
  LayerKind layer_;
  std::optional<TopClasses> top_;
  std::optional<MetricsAccumulator> metrics_;
  Index rows_ = 0;
  std::string text_;
};

// Class ids of an svmlight input's own labels, or nullopt (with a note) when
// some are not classes of the model: LIBLINEAR's predict scores with them
// too, but they may be anything, so they never make predict fail.
std::optional<std::vector<std::int32_t>> own_labels(const RawLabels& labels, const Classes& classes,
                                                    const PredictOptions& o) {
  try {
    return classes.encode(labels);
  } catch (const Error&) {
    // With --metrics the error that follows says it (one line, not two).
    if (!o.quiet && o.metrics.empty())
      std::cerr << "note: the labels in " << input_name(o.input)
                << " are not all classes of the model; no metrics (pass --labels to score)\n";
    return std::nullopt;
  }
}

// --labels, read whole (a labels file is small next to the features);
// empty when not given. Encoded as class ids once their count is checked
// against the rows where the rows are known first, so that a file one line
// too long is named as such, not by the class its extra line is not.
RawLabels given_labels(const PredictOptions& o) {
  if (o.labels.empty()) return {};
  return read_labels(o.labels);
}

void check_label_count(const PredictOptions& o, std::size_t labels, Index rows) {
  if (labels == static_cast<std::size_t>(rows)) return;
  const std::string input = input_name(o.input) + " (" + std::to_string(rows) + " rows)";
  if (labels == 0)
    throw FileError(input_name(o.labels),
                    "the labels file is empty, expected one label per row of " + input);
  throw FileError(input_name(o.labels), "has " + std::to_string(labels) + " labels but " +
                                            input_name(o.input) + " has " +
                                            std::to_string(rows) + " rows");
}

// Class ids for the rows of an input read whole: --labels, else the
// svmlight file's own when they are all classes; nullopt: no metrics.
std::optional<std::vector<std::int32_t>> whole_labels(const CsrMatrix& x, const RawLabels& in_file,
                                                      const RawLabels& labels, const Model& model,
                                                      const PredictOptions& o) {
  if (!o.labels.empty()) {
    check_label_count(o, labels.size(), x.rows());
    return Classes{model.classes, model.numeric_classes}.encode(labels);
  }
  if (in_file.size() == 0) return std::nullopt;
  return own_labels(in_file, Classes{model.classes, model.numeric_classes}, o);
}

// An svmlight stream with a known index base: each block of lines is
// predicted and written as soon as it has arrived, and flushed, so that a
// consumer downstream sees the predictions as the rows come in.
void predict_streaming(SvmlightStream& rows, std::span<const std::int32_t> labels,
                       const Model& model, const PredictOptions& o, PredictionWriter& writer,
                       std::ostream& out) {
  const Classes classes{model.classes, model.numeric_classes};
  const bool given = !o.labels.empty();
  writer.expect_labels();  // until a block turns out to have no usable labels
  while (std::optional<SvmlightData> block = rows.next()) {
    const CsrMatrix& x = block->features;
    check_svmlight_fits(model, x, block->labels, input_name(o.input));
    const auto first = static_cast<std::size_t>(writer.rows());
    const auto count = static_cast<std::size_t>(x.rows());
    std::optional<std::vector<std::int32_t>> own;
    std::span<const std::int32_t> y;
    if (given) {
      if (first + count > labels.size())
        check_label_count(o, labels.size(), writer.rows() + x.rows());  // throws: too few labels
      y = labels.subspan(first, count);
    } else if (writer.has_metrics()) {
      own = own_labels(block->labels, classes, o);
      if (own)
        y = *own;
      else
        writer.drop_metrics();
    }
    writer.write(x, y);
    out.flush();
  }
  if (given) check_label_count(o, labels.size(), writer.rows());
  // An empty file (a stream with no rows is an error) has nothing to score;
  // --metrics still asks for a score and gets the error that says so.
  if (writer.rows() == 0 && o.metrics.empty()) writer.drop_metrics();
}

// A regular svmlight file whose base is known: read block by block as a
// stream is, rather than whole; with --metrics, whole, so that labels that
// are not the model's classes stop it before any prediction.
bool streams_as_file(const PredictOptions& o, ZeroBased base) {
  return o.metrics.empty() && base != ZeroBased::kAuto &&
         feature_format_of(o.input) == FeatureFormat::kSvmlight;
}

[[noreturn]] void metrics_need_labels(const std::string& why) {
  throw UsageError("--metrics", "needs true labels: " + why);
}

// Class ids of a compressed .npz's rows (--labels: an .npz has none of its
// own); nullopt: no metrics.
std::optional<std::vector<std::int32_t>> chunk_labels(const PredictOptions& o, const RawLabels& labels,
                                                      const Classes& classes, Index rows) {
  if (o.labels.empty()) {
    if (!o.metrics.empty()) metrics_need_labels("pass --labels FILE (an .npz holds no labels)");
    return std::nullopt;
  }
  check_label_count(o, labels.size(), rows);
  return classes.encode(labels);
}

// A compressed .npz, kRowsPerChunk rows at a time: memory stays one chunk
// of the matrix instead of the whole matrix inflated.
void predict_chunks(NpzRowChunks& chunks, const std::optional<std::vector<std::int32_t>>& y,
                    PredictionWriter& writer) {
  if (y) writer.expect_labels();
  while (std::optional<CsrMatrix> x = chunks.next(rows_per_chunk(writer.classes()))) {
    const auto first = static_cast<std::size_t>(writer.rows());
    writer.write(*x, y ? std::span<const std::int32_t>(*y).subspan(
                             first, static_cast<std::size_t>(x->rows()))
                       : std::span<const std::int32_t>());
  }
}

// How predict reads raw text for a text model (model_text.h).
ModelTextInput text_input(const PredictOptions& o) {
  ModelTextInput in;
  in.command = "predict";
  in.model = o.model;
  in.input = o.input;
  in.text_format = o.text_format;
  in.zero_based = o.zero_based;
  in.has_labels = !o.labels.empty();
  in.threads = resolve_threads(o.threads);
  in.quiet = o.quiet;
  return in;
}

}  // namespace

CLI::App* add_predict_command(CLI::App& app, PredictOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "predict", "Predict classes, probabilities or the top-k classes for a CSR file");
  cmd->add_option("-m,--model", o.model, "Model directory written by bagel train")
      ->required()
      ->check(existing_folder());
  cmd->add_option("-i,--input", o.input,
                  "Features: .npz (scipy CSR) or svmlight text, or - (a pipe); svmlight with a "
                  "known base (--zero-based true/false, or a model trained on svmlight) is "
                  "predicted block by block as it is read, a pipe's rows as they arrive; raw "
                  "text (a file or a folder) for a model trained on text, which takes an .npz, "
                  "*.svm, *.svmlight or *.libsvm as features")
      ->required()
      ->check(input_path(true));
  cmd->add_option("-l,--labels", o.labels,
                  "True labels (text, one per line, or .npy) to report metrics")
      ->check(input_path());
  cmd->add_option("-o,--output", o.output,
                  "Write predictions here instead of stdout (its folder is created if missing)")
      ->transform(output_path());
  CLI::Option* proba = cmd->add_flag(
      "-p,--proba", o.proba,
      "Write class probabilities: a header of class names, then one row per input row");
  CLI::Option* top_k =
      cmd->add_option("-k,--top-k", o.top_k,
                      "Write the K most probable classes of each row, best first, as "
                      "CLASS,PROB,CLASS,PROB,... (ties in class order, the predicted class "
                      "first; K above the number of classes: all)")
          ->check(at_least_one());
  CLI::Option* threshold =
      cmd->add_option("-t,--threshold", o.threshold,
                      "Write only classes with probability >= P (0..1), best first, as --top-k "
                      "does; with --top-k, the K best of those (fastText's predict-prob k t); a "
                      "row with none is an empty line")
          ->check(probability());
  proba->excludes(top_k)->excludes(threshold);
  cmd->add_option("--format", o.format, "Delimiter of --proba and --top-k output: csv or tsv")
      ->check(CLI::IsMember({"csv", "tsv"}))
      ->capture_default_str();
  cmd->add_option("--metrics", o.metrics, "Write metrics as JSON to this file (needs labels)")
      ->transform(output_path());
  cmd->add_option("--text-format", o.text_format,
                  "A model trained on text (refused for others): how --input holds its documents: auto, lines, fasttext, "
                  "tsv, csv or folder (auto: a folder, lines with --labels, TSV when the first line "
                  "has a tab, .csv by its name, else fastText lines: a line's __label__ words are "
                  "its labels, a file with none is predicted line by line)")
      ->check(CLI::IsMember({"auto", "lines", "fasttext", "tsv", "csv", "folder"}))
      ->capture_default_str();
  cmd->add_option("--zero-based", o.zero_based, "svmlight indices: auto (the base of the model's training svmlight, else the file's own; for a text model, which reads svmlight only from a *.svm, *.svmlight or *.libsvm, 0), true or false")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  cmd->add_option("--layer", o.layer,
                  "Inference path: sparse (EmbeddingBag sum) or dense (densified rows, GEMM)")
      ->check(CLI::IsMember({"sparse", "dense"}))
      ->capture_default_str();
  cmd->add_option("--threads", o.threads, "Threads (0 = all cores)")
      ->check(integer_in(0, kMaxThreads))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "No summary on stderr");
  return cmd;
}

int run_predict(const PredictOptions& o) {
  check_one_reader_per_stream({{"--input", o.input}, {"--labels", o.labels}});
  check_output_file(o.output, "-o");
  check_output_file(o.metrics, "--metrics");
  std::vector<NamedPath> inputs = {{"-i", o.input}, {"--labels", o.labels}};
  for (const char* name : kModelFiles)
    inputs.push_back({"the model's " + std::string(name), (std::filesystem::path(o.model) / name).string()});
  check_distinct_paths({{"-o", o.output}, {"--metrics", o.metrics}}, inputs);
  // Without -o the predictions go to standard output: metrics there too
  // would be a JSON object inside the lines of predictions.
  if (o.output.empty())
    check_distinct_paths({{"the predictions (standard output, with no -o)", "/dev/stdout"},
                          {"--metrics", o.metrics}},
                         {});
  const auto t0 = Clock::now();
  const Model model = load_model(o.model);
  ModelTextInput text = text_input(o);
  check_text_format_applies(model, text);
  check_zero_based_applies(model, text);
  const ZeroBased zero_based = input_zero_based(model, text);
  const Classes classes{model.classes, model.numeric_classes};
  const RawLabels labels = given_labels(o);

  // svmlight with a known base, from a stream or a file, is predicted block
  // by block as it is read (a file in blocks of a few MiB a core: memory is
  // one block, not the file and its matrix); anything else is read whole
  // first ("auto" needs every index, a zip is read from its end). "auto" knows the base before the first line where
  // the model recorded its training svmlight's: the whole input read with
  // "auto" and brought to that base (align_to_trained_base) is the input
  // read with it. With --metrics it is read whole all the same, so that
  // labels that are not the model's classes stop it before any prediction.
  const ZeroBased stream_base = zero_based != ZeroBased::kAuto || !o.metrics.empty()
                                    ? zero_based
                                    : trained_zero_based(model);
  std::unique_ptr<InputStream> stream;
  std::unique_ptr<SvmlightStream> rows;
  std::unique_ptr<NpzRowChunks> chunks;
  CsrMatrix x;
  RawLabels in_file;
  FeatureFormat format = FeatureFormat::kSvmlight;
  ZeroBased read_base = ZeroBased::kAuto;  // svmlight read whole: the base "auto" took
  if (reads_text(model, text)) {
    LabeledData d = read_model_text(model, text);
    x = std::move(d.features);
    in_file = std::move(d.labels);
    format = FeatureFormat::kNpz;  // the vectorizer's width, as stored
  } else if (is_stream(o.input) || streams_as_file(o, stream_base)) {
    // A stream reads_text peeked at is read from there on.
    stream = text.stream ? std::move(text.stream) : std::make_unique<InputStream>(o.input);
    format = feature_format(o.input, stream->peek(kFormatMagicBytes));
    if (format == FeatureFormat::kSvmlight && stream_base != ZeroBased::kAuto)
      rows = std::make_unique<SvmlightStream>(*stream, stream_base);
    else
      x = read_features(*stream, zero_based, &in_file, &format, &read_base);
  } else if (feature_format_of(o.input) == FeatureFormat::kNpz &&
             NpzRowChunks::is_compressed(o.input)) {
    chunks = std::make_unique<NpzRowChunks>(o.input);
  } else {
    x = read_features(o.input, zero_based, &in_file, &format, &read_base);
  }
  if (zero_based == ZeroBased::kAuto) align_to_trained_base(x, read_base, model, input_name(o.input));
  // Streamed rows bring their own labels: whether they are all classes of
  // the model is known only at the end (checked after predicting).
  std::optional<std::vector<std::int32_t>> y;
  if (chunks) {
    check_features_fit(model, CsrMatrix(0, chunks->cols(), std::vector<Index>{0}, {}, {}),
                       o.input, ColumnCount::kStored);
    y = chunk_labels(o, labels, classes, chunks->rows());
  } else if (!rows) {
    if (format == FeatureFormat::kSvmlight)
      check_svmlight_fits(model, x, in_file, input_name(o.input));
    else
      check_features_fit(model, x, input_name(o.input),
                         format == FeatureFormat::kNpz ? ColumnCount::kStored : ColumnCount::kInferred);
    y = whole_labels(x, in_file, labels, model, o);
    if (!o.metrics.empty() && !y)
      metrics_need_labels(in_file.size() == 0 ? "pass --labels FILE (or an svmlight input)"
                                              : "pass --labels FILE (the input's own are not "
                                                "all classes of the model)");
  }
  // Streamed rows are counted only at the end: --labels as class ids
  // before any row is predicted.
  const std::vector<std::int32_t> stream_labels = rows ? classes.encode(labels) : std::vector<std::int32_t>{};
  const double load_seconds = seconds_since(t0);

  PredictionOutput output(o.output);
  PredictionWriter writer(model, o, output.stream());
  const auto t_predict = Clock::now();
  if (rows) {
    try {
      predict_streaming(*rows, stream_labels, model, o, writer, output.stream());
    } catch (const IndexZeroError& e) {
      if (zero_based != ZeroBased::kAuto) throw;
      throw FileError(e.file(),
                      e.message() + ": it is read one-based, as the model's training svmlight was "
                                    "(model.json config.train.zero_based is \"false\"); give "
                                    "--zero-based true or false to say how it counts its indices",
                      e.line());
    }
  } else if (chunks) {
    predict_chunks(*chunks, y, writer);
  } else {
    if (y) writer.expect_labels();
    writer.write(x, y ? std::span<const std::int32_t>(*y) : std::span<const std::int32_t>());
  }
  const std::optional<Metrics> metrics = writer.metrics();
  if (!o.metrics.empty() && !metrics)
    metrics_need_labels("pass --labels FILE (the input's own are not all classes of the model)");
  output.finish();
  // The predictions and the metrics file are put in place together, with
  // signals deferred: a stop leaves both old or both new.
  AtomicOutputs metrics_file;
  std::optional<NewFolders> metrics_folders;
  if (metrics && !o.metrics.empty()) {
    metrics_folders.emplace(o.metrics);
    create_parent_folder(o.metrics);
    const std::string json = metrics_to_json(*metrics, model.classes).dump(2) + "\n";
    metrics_file.write(o.metrics, [&](const std::string& temp) { write_file(temp, json); });
  }
  {
    const DeferSignals defer;
    output.commit();
    metrics_file.commit();
  }
  if (metrics_folders) metrics_folders->keep();
  const double predict_seconds = seconds_since(t_predict);

  if (!o.quiet) {
    char buf[200];
    std::snprintf(buf, sizeof buf, "predicted %d rows in %.3fs (%.0f rows/s; load %.3fs)",
                  writer.rows(), predict_seconds,
                  predict_seconds > 0 ? writer.rows() / predict_seconds : 0.0, load_seconds);
    std::cerr << buf << "\n";
  }
  if (metrics && !o.quiet) std::cerr << metrics_summary(*metrics) << "\n";
  return 0;
}

}  // namespace bagel::cli
