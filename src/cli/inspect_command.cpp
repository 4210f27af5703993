#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "bagel/cores.h"
#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/inspect.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/svmlight.h"
#include "bagel/table_writer.h"
#include "bagel/text/vocabulary_file.h"
#include "cli_numbers.h"
#include "cli_paths.h"
#include "commands.h"
#include "model_text.h"

namespace bagel::cli {

namespace {

// Numbers for people: six significant digits.
std::string g(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", value);
  return buf;
}

// One decimal, but a share that is neither none nor all never reads as
// either: 1 zero weight in 5,000 is ">99.9%" non-zero, not "100.0%".
std::string percent(std::int64_t part, std::int64_t whole) {
  const double share = whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  if (part > 0 && share < 0.05) return "<0.1%";
  if (part < whole && share >= 99.95) return ">99.9%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", share);
  return buf;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// A feature as people read it: its term (escaped, so that it stays on one
// line), or its column index when there is no vocabulary.
std::string feature_label(Index feature, const std::vector<std::string>& names) {
  if (names.empty()) return "#" + std::to_string(feature);
  return escape_vocabulary_term(names[static_cast<std::size_t>(feature)]);
}

std::string stats_line(const WeightStats& s) {
  return std::to_string(s.weights) + " weights, " + std::to_string(s.nonzero) + " non-zero (" +
         percent(s.nonzero, s.weights) + "), L1 " + g(s.l1) + ", L2 " + g(s.l2) + ", max |w| " +
         g(s.max_abs);
}

void print_training(const nlohmann::ordered_json& summary, std::ostream& out) {
  if (summary.empty()) return;
  out << "training (model.json):\n";
  TextTable table({TextTable::Align::kLeft, TextTable::Align::kLeft});
  for (const auto& [key, value] : summary.items())
    table.add_row({key, value.is_string() ? value.get<std::string>()
                        : value.is_number_float() ? g(value.get<double>())
                                                  : value.dump()});
  out << table.render("  ");
}

void print_output_weights(const OutputWeights& o, const std::vector<std::string>& names,
                          std::ostream& out) {
  if (o.disfavoured.empty())
    out << "\nclass " << o.favoured << " (its logit; bias " << g(o.bias) << ")\n";
  else
    out << "\nscore of " << o.favoured << ": positive weights favour " << o.favoured
        << ", negative ones " << o.disfavoured << " (bias " << g(o.bias) << ")\n";
  out << "  " << stats_line(o.stats) << "\n";
  if (o.largest.empty()) return;
  using A = TextTable::Align;
  TextTable table({A::kRight, A::kLeft, A::kRight, A::kLeft, A::kRight});
  table.add_row({"", "largest", "", "smallest", ""});
  for (std::size_t i = 0; i < o.largest.size(); ++i)
    table.add_row({std::to_string(i + 1), feature_label(o.largest[i].feature, names),
                   g(o.largest[i].weight), feature_label(o.smallest[i].feature, names),
                   g(o.smallest[i].weight)});
  out << table.render("  ");
}

// Features without names are shown by column (#0 first); a model trained
// on one-based svmlight calls column k feature k + 1 in its files.
std::string unnamed_features_note(const Model& model) {
  return trained_zero_based(model) == ZeroBased::kFalse
             ? "no vocabulary (features by column index from 0: #k is feature k+1 of the one-based "
               "training svmlight)"
             : "no vocabulary (features by column index)";
}

void print_weights(const Model& model, const WeightsReport& report,
                   const std::vector<std::string>& names, const std::string& vocabulary,
                   const InspectOptions& o, std::ostream& out) {
  out << "model " << o.model << ": " << model.output_kind() << ", " << model.num_classes()
      << " classes (" << join(model.classes) << "), " << model.num_features << " features; "
      << (names.empty() ? unnamed_features_note(model) : "terms from " + vocabulary)
      << "\n";
  print_training(training_summary(model), out);
  out << "all weights: " << stats_line(report.overall) << "\n";
  for (const OutputWeights& w : report.outputs) print_output_weights(w, names, out);
}

void print_explanation(const Model& model, const RowExplanation& e,
                       const std::vector<std::string>& names, const InspectOptions& o,
                       std::ostream& out) {
  const auto name = [&](int c) { return model.classes[static_cast<std::size_t>(c)]; };
  const bool binary = model.num_outputs == 1;
  out << "row " << e.row << " of " << input_name(o.input) << ": predicted " << name(e.predicted)
      << " (p " << g(e.probability) << "), runner-up " << name(e.runner_up) << " (p "
      << g(e.runner_up_probability) << ")\n";
  const std::string sum = " = bias " + g(e.bias) + " + " + std::to_string(e.contributions.size()) +
                          " contributions x * weight (their sum with the bias: " +
                          g(e.contribution_sum) + ")\n";
  if (binary) {
    out << "  score of " << name(1) << " " << g(e.logit) << sum << "  (positive favours "
        << name(1) << ", negative " << name(0) << ")\n";
  } else {
    out << "  logit of " << name(e.predicted) << " " << g(e.logit) << sum << "  margin over "
        << name(e.runner_up) << " " << g(e.margin) << " (the \"vs " << name(e.runner_up)
        << "\" column summed over every non-zero, bias included)\n";
  }
  using A = TextTable::Align;
  TextTable table(binary ? std::vector<A>{A::kLeft, A::kRight, A::kRight, A::kRight}
                         : std::vector<A>{A::kLeft, A::kRight, A::kRight, A::kRight, A::kRight});
  std::vector<std::string> header = {"feature", "x", "weight", "contribution"};
  if (!binary) header.push_back("vs " + name(e.runner_up));
  table.add_row(header);
  const auto shown = std::min<std::size_t>(static_cast<std::size_t>(o.top), e.contributions.size());
  for (std::size_t i = 0; i < shown; ++i) {
    const Contribution& c = e.contributions[i];
    std::vector<std::string> row = {feature_label(c.feature, names), g(c.value), g(c.weight),
                                    g(c.contribution)};
    if (!binary) row.push_back(g(c.versus_runner_up));
    table.add_row(std::move(row));
  }
  std::vector<std::string> bias_row = {"(bias)", "", "", g(e.bias)};
  if (!binary) bias_row.push_back(g(e.versus_bias));
  table.add_row(std::move(bias_row));
  out << table.render("  ");
  if (names.empty() && trained_zero_based(model) == ZeroBased::kFalse)
    out << "  (#k is column k from 0: feature k+1 of the one-based svmlight)\n";
  if (shown < e.contributions.size())
    out << "  (" << shown << " of " << e.contributions.size() << " non-zeros shown; --top N)\n";
}

// Paths are bytes, not always UTF-8: those are written with U+FFFD rather
// than failing after the work is done. Terms and class names are checked
// UTF-8 when read.
void print_json(const nlohmann::ordered_json& out) {
  std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

void check_options(const InspectOptions& o) {
  if (o.explain) {
    if (o.input.empty()) throw UsageError("--explain", "needs --input FILE (the rows to explain)");
    if (o.rows.empty()) throw UsageError("--explain", "needs --row R (0-based; repeatable)");
    if (!o.classes.empty())
      throw UsageError("--class", "selects the classes of the weights report, not of --explain");
    return;
  }
  if (!o.input.empty() || !o.rows.empty())
    throw UsageError(o.input.empty() ? "--row" : "--input", "needs --explain");
  if (o.text_format != "auto") throw UsageError("--text-format", "needs --explain");
  if (o.versus_runner_up) throw UsageError("--versus-runner-up", "needs --explain");
  if (o.zero_based != "auto") throw UsageError("--zero-based", "needs --explain");
}

// --explain's rows read as predict reads them (model_text.h for a text
// model's raw text): row R is the row predict writes on line R + 1.
CsrMatrix explained_rows(const Model& model, const InspectOptions& o) {
  ModelTextInput text;
  text.command = "inspect";
  text.model = o.model;
  text.input = o.input;
  text.text_format = o.text_format;
  text.zero_based = o.zero_based;
  text.threads = resolve_threads(0);
  check_text_format_applies(model, text);
  check_zero_based_applies(model, text);
  if (reads_text(model, text)) {
    CsrMatrix x = read_model_text(model, text).features;
    check_features_fit(model, x, input_name(o.input), ColumnCount::kStored);
    return x;
  }
  FeatureFormat format = FeatureFormat::kSvmlight;
  ZeroBased read_base = ZeroBased::kAuto;
  const ZeroBased zero_based = input_zero_based(model, text);
  RawLabels rows;  // svmlight's: the line of each row, for the error that names one
  // A stream reads_text peeked at is read from there on.
  CsrMatrix x = text.stream ? read_features(*text.stream, zero_based, &rows, &format, &read_base)
                            : read_features(o.input, zero_based, &rows, &format, &read_base);
  if (zero_based == ZeroBased::kAuto) align_to_trained_base(x, read_base, model, input_name(o.input));
  // As predict checks it: every row, not only those explained, so that a row
  // --explain shows is one predict would have predicted.
  if (format == FeatureFormat::kSvmlight)
    check_svmlight_fits(model, x, rows, input_name(o.input));
  else
    check_features_fit(model, x, input_name(o.input), ColumnCount::kStored);  // an .npz
  return x;
}

void run_explain(const Model& model, const std::vector<std::string>& names,
                 const InspectOptions& o) {
  const CsrMatrix x = explained_rows(model, o);
  const ExplainOrder order =
      o.versus_runner_up ? ExplainOrder::kVersusRunnerUp : ExplainOrder::kContribution;
  std::vector<RowExplanation> explanations;
  for (const int row : o.rows)
    explanations.push_back(explain_row(model, x, row, input_name(o.input), order));
  if (o.format == "json") {
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const RowExplanation& e : explanations)
      rows.push_back(explanation_to_json(model, e, o.top, names));
    const nlohmann::ordered_json out = {
        {"model", o.model},
        {"input", input_name(o.input)},
        {"training_svmlight_base", training_svmlight_base_json(model)},
        {"rows", std::move(rows)}};
    print_json(out);
    return;
  }
  for (std::size_t i = 0; i < explanations.size(); ++i) {
    if (i) std::cout << "\n";
    print_explanation(model, explanations[i], names, o, std::cout);
  }
}

}  // namespace

CLI::App* add_inspect_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "inspect", "Show what a model has learnt: the largest and smallest weights of each class "
                 "and their statistics, or (--explain) which features drove the prediction of a row");
  cmd->add_option("-m,--model", o.model, "Model directory written by bagel train")
      ->required()
      ->check(existing_folder());
  cmd->add_option("--top", o.top, "Features shown each way per class, or contributions per row")
      ->check(integer_in(0))
      ->capture_default_str();
  cmd->add_option("--vocabulary", o.vocabulary,
                  "Feature names: one term a line, line i naming column i (default: the model's "
                  "vocabulary.txt when it has one)")
      ->check(input_path());
  cmd->add_option("--class", o.classes, "Show only this class (repeatable); binary models have one "
                                        "weight vector, which either class name selects");
  cmd->add_option("--format", o.format, "Output: text (aligned, for people) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag("--explain", o.explain,
                "Explain the prediction of --row R of --input: each feature's x * weight, which "
                "with the bias sums to the logit predict computes");
  cmd->add_option("-i,--input", o.input,
                  "With --explain: features, .npz (scipy CSR) or svmlight; raw text (a file or a "
                  "folder) for a model trained on text, read as predict reads it")
      ->check(input_path(true));
  cmd->add_option("--text-format", o.text_format,
                  "With --explain, a model trained on text: how --input holds its documents, as "
                  "predict's --text-format: auto, lines, fasttext, tsv, csv or folder")
      ->check(CLI::IsMember({"auto", "lines", "fasttext", "tsv", "csv", "folder"}))
      ->capture_default_str();
  cmd->add_option("--row", o.rows, "With --explain: the row to explain, numbered from 0 (repeatable)")
      ->check(integer_in(0));
  cmd->add_option("--zero-based", o.zero_based,
                  "With --explain: svmlight indices of --input: auto (the base of the model's "
                  "training svmlight, else the file's own), true or false")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  cmd->add_flag("--versus-runner-up", o.versus_runner_up,
                "With --explain: rank features by what they add to the predicted class's logit "
                "minus the runner-up's, not to the logit itself");
  return cmd;
}

int run_inspect(const InspectOptions& o) {
  check_options(o);
  // Two readers of one stream would each get some of its bytes.
  check_one_reader_per_stream({{"--input", o.input}, {"--vocabulary", o.vocabulary}});
  const Model model = load_model(o.model);
  std::string vocabulary;
  const std::vector<std::string> names = feature_names(model, o.model, o.vocabulary, &vocabulary);
  if (o.explain) {
    run_explain(model, names, o);
    return 0;
  }
  std::vector<int> outputs;
  for (const std::string& name : o.classes) {
    const int output = output_of_class(model, name, "--class");
    if (std::find(outputs.begin(), outputs.end(), output) == outputs.end()) outputs.push_back(output);
  }
  const WeightsReport report = inspect_weights(model, o.top, outputs);
  if (o.format == "json") {
    nlohmann::ordered_json out = {
        {"model", o.model},
        {"vocabulary", vocabulary.empty() ? nlohmann::ordered_json(nullptr)
                                          : nlohmann::ordered_json(vocabulary)}};
    out.update(weights_report_to_json(model, report, names));
    print_json(out);
    return 0;
  }
  print_weights(model, report, names, vocabulary, o, std::cout);
  return 0;
}

}  // namespace bagel::cli
