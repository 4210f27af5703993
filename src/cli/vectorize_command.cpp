// bagel vectorize: raw text -> the CSR .npz scikit-learn's vectorizers make,
// with the vocabulary, the labels and the fitted vectorizer beside it.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <string>

#include "bagel/atomic_file.h"
#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/json_parse.h"
#include "bagel/npy.h"
#include "bagel/override_error.h"
#include "bagel/train_plan.h"  // kMaxThreads
#include "bagel/text/text_corpus.h"
#include "bagel/text/text_format.h"
#include "bagel/text/text_lines.h"
#include "bagel/input_stream.h"
#include "bagel/text/vectorizer.h"
#include "cli_numbers.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

namespace {

// "auto": as training detects it, except that text without any label mark,
// and a stream, is one document per line (vectorize needs no labels).
TextFormat vectorize_format(const std::string& path, bool has_labels) {
  if (is_stream(path)) return TextFormat::lines;
  return detect_text_format(path, has_labels, TextFormat::lines);
}

// The vectorizer's settings: --config's object (its "vectorizer" section
// when it is a whole bagel config), then each --set key=value on top; and
// the name of their section in errors ("vectorizer", or none for a file
// that holds the settings alone).
struct Settings {
  nlohmann::json json = nlohmann::json::object();
  std::string section = "vectorizer";
};

// A whole bagel config, which vectorize takes only for its "vectorizer"
// section: no vectorizer option is named "train" or "output".
bool is_train_config(const nlohmann::json& json) {
  return json.is_object() && (json.contains("train") || json.contains("output"));
}

Settings settings_from(const VectorizeOptions& o) {
  Settings settings;
  if (!o.config.empty()) {
    settings.json = read_json_file(o.config, "vectorizer config");
    if (settings.json.is_object() && settings.json.contains("vectorizer"))
      settings.json = settings.json["vectorizer"];
    else if (is_train_config(settings.json))
      throw FileError(o.config, "a train config without a \"vectorizer\" section (training on it fits "
                                "scikit-learn's CountVectorizer defaults, as vectorize does without "
                                "--config): expected vectorizer settings (min_df, ngram_range, ...) "
                                "or a train config with \"vectorizer\"");
    else
      settings.section.clear();
  }
  nlohmann::json& json = settings.json;
  for (const std::string& assignment : o.overrides) {
    const std::size_t eq = assignment.find('=');
    const std::string where = "--set " + assignment;
    if (eq == std::string::npos || eq == 0)
      throw UsageError(where, "expected KEY=VALUE (a vectorizer option, e.g. ngram_range=[1,2])");
    const std::string key = assignment.substr(0, eq);
    const std::string text = assignment.substr(eq + 1);
    const std::optional<nlohmann::json> value = parse_json_value(text, where);
    json[key] = value ? *value : nlohmann::json(text);
  }
  return settings;
}

// "--set min_df=x: ...", "vc.json: min_df: ..." or "cfg.json: vectorizer.min_df: ...".
VectorizerOptions parse_options(const VectorizeOptions& o, const Settings& settings) {
  try {
    return vectorizer_options_from_json(settings.json, settings.section,
                                        std::filesystem::path(o.config).parent_path());
  } catch (const ConfigError& e) {
    rethrow_config_error(e, o.config, o.overrides, settings.section);
  }
}

// Fitting's errors (no terms left after min_df and max_df) name the key as a
// train config has it ("vectorizer.min_df"); vectorize names it as its -c
// file or --set gives it, as parse_options does.
std::pair<Vectorizer, TextMatrix> fit(const VectorizerOptions& options, const TextCorpus& corpus,
                                      int threads, const VectorizeOptions& o, const std::string& section) {
  try {
    return Vectorizer::fit_transform(options, corpus, threads);
  } catch (const ConfigError& e) {
    constexpr std::string_view kTrainSection = "vectorizer.";
    std::string key = e.field();
    if (key.starts_with(kTrainSection)) key.erase(0, kTrainSection.size());
    if (!section.empty()) key = section + "." + key;
    rethrow_config_error(ConfigError(key, e.message()), o.config, o.overrides, section);
  }
}

void write_lines(const std::string& path, const std::vector<std::string>& lines, AtomicOutputs& outputs) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  create_parent_folder(path);
  outputs.write(path, [&](const std::string& temp) { write_file(temp, text); });
}

// The remedy of a reader error that a setting lifts, named as vectorize
// takes that setting: an option, where the reader names the config's key.
std::string option_remedy(TextSettingError::Setting setting) {
  switch (setting) {
    case TextSettingError::Setting::decode_error:
      return "save the file as UTF-8 (or pass --decode-error replace or ignore)";
    case TextSettingError::Setting::unlabeled:
      return "pass --unlabeled skip to drop such lines as fastText does";
    case TextSettingError::Setting::mixed_labels:
      return "with --unlabeled keep either every line or no line has a label (--unlabeled skip "
             "drops the lines without one)";
    case TextSettingError::Setting::quoting:
      return "close the quote, or pass --quoting none to read quotes as text";
  }
  return "";
}

// The reader names its settings as the config does (tsv_text_column,
// decode_error); here they are options (--tsv-text-column, --decode-error):
// a bad one is a usage error, and a remedy names the option.
TextCorpus read_corpus(const TextInput& input) {
  try {
    return read_text_corpus(input);
  } catch (const TextSettingError& e) {
    throw FileError(e.file(), e.problem() + "; " + option_remedy(e.setting()), e.line());
  } catch (const ConfigError& e) {
    if (!e.field().starts_with("tsv_")) throw;
    std::string option = "--" + e.field();
    std::replace(option.begin(), option.end(), '_', '-');
    throw UsageError(option, e.message());
  }
}

// A labels file holds one label a line: a label with a line break in it
// (a quoted CSV field may hold one) would split into two, and the file no
// longer match the matrix's rows. Checked before anything is written.
void check_one_line_labels(const std::string& path, const RawLabels& labels, const TextCorpus& corpus) {
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const std::string& name = labels.names[i];
    if (name.find_first_of("\n\r") == std::string::npos) continue;
    throw FileError(path, "cannot hold the label of document " + std::to_string(i + 1) + ", \"" +
                              detail::printable(name) + "\": it has a line break, and a labels file has "
                              "one label a line (training on the text itself keeps such labels)");
  }
}

// --labels with a format that carries its own labels: a usage error, as
// the reader's ConfigError (labels_path) names no option.
void check_labels_file(const VectorizeOptions& o, TextFormat format) {
  if (o.labels.empty() || format == TextFormat::lines) return;
  const std::string carried =
      format == TextFormat::folder   ? "a folder carries its labels (its sub-folders)"
      : format == TextFormat::fasttext ? "fasttext input carries its labels (its __label__ words)"
                                       : to_string(format) + " input carries its labels (a column: --tsv-label-column)";
  throw UsageError("--labels", "only --format lines takes a labels file (one label a line); " + carried);
}

// What the summary counts: documents and their bytes, each once. A fastText
// line of several labels is one document split into one row per label (the
// vectorizer's fit counts it once too), so rows may outnumber documents.
struct DocumentCount {
  std::size_t documents = 0;
  std::size_t bytes = 0;  // each with its line end
};

DocumentCount count_documents(const TextCorpus& corpus) {
  DocumentCount count;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (corpus.repeats_previous(i)) continue;
    ++count.documents;
    count.bytes += corpus.documents[i].size() + 1;
  }
  return count;
}

// "vectorize: 3 documents, 5 rows (one per label of a line), 6 terms, ...";
// hashing has columns, each the hash of any number of terms.
void print_summary(const TextCorpus& corpus, const TextMatrix& x, VectorizerKind kind, double seconds) {
  const DocumentCount count = count_documents(corpus);
  const std::string rows =
      corpus.size() == count.documents
          ? ""
          : ", " + std::to_string(corpus.size()) + " rows (one per label of a line)";
  const auto plural = [](long long n) { return n == 1 ? "" : "s"; };
  std::fprintf(stderr, "vectorize: %zu document%s%s, %d %s%s, %lld non-zero%s, %.2f s (%.1f MB/s, %.0f documents/s)\n",
               count.documents, plural(static_cast<long long>(count.documents)), rows.c_str(),
               static_cast<int>(x.cols), kind == VectorizerKind::hashing ? "column" : "term",
               plural(x.cols), static_cast<long long>(x.nonZeros()), plural(x.nonZeros()),
               seconds, static_cast<double>(count.bytes) / 1e6 / seconds,
               static_cast<double>(count.documents) / seconds);
}

// --vectorizer's folder: one written by --vectorizer-out, or a text model's,
// which keeps the same settings in its model.json.
Vectorizer load_fitted(const std::string& folder) {
  const std::filesystem::path dir(folder);
  std::error_code ec;
  if (std::filesystem::exists(dir / "vectorizer.json", ec) || !std::filesystem::exists(dir / "model.json", ec))
    return Vectorizer::load(read_json_file((dir / "vectorizer.json").string(), "vectorizer"), folder);
  const nlohmann::json model = read_json_file((dir / "model.json").string(), "model.json");
  if (!model.is_object() || !model.contains("vectorizer"))
    throw UsageError("--vectorizer " + folder, "holds a model trained on features, which has no "
                                               "vectorizer; give a text model's folder or one "
                                               "written by --vectorizer-out");
  return Vectorizer::load(model["vectorizer"], folder);
}

// Everything vectorize writes besides the matrix, to `outputs`' temporaries.
void write_others(const VectorizeOptions& o, const TextCorpus& corpus, const Vectorizer& fitted,
                  AtomicOutputs& outputs) {
  if (!o.vocabulary_out.empty()) {
    create_parent_folder(o.vocabulary_out);
    outputs.write(o.vocabulary_out, [&](const std::string& temp) { fitted.write_vocabulary(temp); });
  }
  if (!o.labels_out.empty())
    write_lines(o.labels_out, corpus.labels ? corpus.labels->names : std::vector<std::string>(), outputs);
  if (!o.weights_out.empty()) {
    std::vector<std::string> weights;
    weights.reserve(corpus.size());
    char buf[32];
    for (std::size_t i = 0; i < corpus.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%.9g", corpus.weights.empty() ? 1.0 : double(corpus.weights[i]));
      weights.emplace_back(buf);
    }
    write_lines(o.weights_out, weights, outputs);
  }
  if (!o.vectorizer_out.empty()) {
    const std::filesystem::path folder(o.vectorizer_out);
    create_parent_folder((folder / "vectorizer.json").string());
    const std::string settings = fitted.to_json().dump(2) + "\n";
    outputs.write(folder / "vectorizer.json",
                  [&](const std::string& temp) { write_file(temp, settings); });
    outputs.write(folder / "vocabulary.txt",
                  [&](const std::string& temp) { fitted.write_vocabulary(temp); });
  }
}

}  // namespace

CLI::App* add_vectorize_command(CLI::App& app, VectorizeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "vectorize",
      "Raw text -> CSR .npz, exactly as scikit-learn's CountVectorizer, TfidfVectorizer or "
      "HashingVectorizer would make it (same vocabulary order, same arrays)");
  cmd->add_option("--input,-i", o.input, "Text: one document per line (or see --format); - reads stdin")
      ->required()
      ->check(input_path(true));
  cmd->add_option("--labels", o.labels, "lines format: labels, one per line, one per document")
      ->check(input_path());
  cmd->add_option("--format", o.format,
                  "Input layout: auto, lines, fasttext, tsv, csv, folder (auto: a folder is folder, "
                  "lines with --labels; else fastText when the first line starts with __label__, "
                  "TSV when it has a tab, CSV when the name ends in .csv (with a note), else lines)")
      ->check(CLI::IsMember({"auto", "lines", "fasttext", "tsv", "csv", "folder"}))
      ->capture_default_str();
  const auto given = [&o](const std::string& name) {
    return [&o, name](const std::string&) { o.table_options.push_back(name); };
  };
  cmd->add_option("--tsv-label-column", o.tsv_label_column, "tsv: the label's column (0-based; -1: no label column)")
      ->check(integer_in(-1))
      ->capture_default_str()
      ->each(given("--tsv-label-column"));
  cmd->add_option("--tsv-text-column", o.tsv_text_column, "tsv: the document's column (0-based)")
      ->check(integer_in(0))
      ->capture_default_str()
      ->each(given("--tsv-text-column"));
  cmd->add_flag_callback("--tsv-header", [&o] {
    o.tsv_header = true;
    o.table_options.push_back("--tsv-header");
  }, "tsv: the first line names the columns");
  cmd->add_option("--quoting", o.quoting,
                  "tsv, csv: csv (a field may be quoted, as Python's csv module reads it) or none "
                  "(every delimiter splits, every line is a row, a '\"' is text)")
      ->check(CLI::IsMember({"csv", "none"}))
      ->capture_default_str()
      ->each(given("--quoting"));
  cmd->add_option("--decode-error", o.decode_error, "Bytes that are not UTF-8: strict, ignore, replace")
      ->check(CLI::IsMember({"strict", "ignore", "replace"}))
      ->capture_default_str();
  cmd->add_option("--unlabeled", o.unlabeled,
                  "fasttext: a line without a label: error, skip (dropped, as fastText does) or keep "
                  "(a file with a label on no line: documents without labels)")
      ->check(CLI::IsMember({"error", "skip", "keep"}))
      ->capture_default_str()
      ->each([&o](const std::string&) { o.unlabeled_given = true; });
  cmd->add_option("--config,-c", o.config,
                  "JSON object of vectorizer options (scikit-learn's argument names; a bagel config's "
                  "\"vectorizer\" section is used when it has one)")
      ->check(input_path());
  cmd->add_option("--set", o.overrides, "Set one option: KEY=VALUE (JSON value, or a bare string)");
  cmd->add_option("--vectorizer", o.vectorizer,
                  "Apply a fitted vectorizer (a folder written by --vectorizer-out, or a text model's folder) instead of fitting one")
      ->check(existing_folder());
  cmd->add_option("--output,-o", o.output, "The CSR .npz (scipy.sparse.load_npz reads it)")
      ->required()
      ->transform(output_path());
  cmd->add_flag("--compressed", o.compressed, "Deflate the .npz (default: stored, mmap-able)");
  cmd->add_option("--vocabulary-out", o.vocabulary_out, "Write the terms, one per line, in column order (count and tfidf: hashing has no vocabulary)")
      ->transform(output_path());
  cmd->add_option("--labels-out", o.labels_out, "Write the documents' labels, one per line")
      ->transform(output_path());
  cmd->add_option("--weights-out", o.weights_out,
                  "Write each row's weight, one per line, for train.sample_weights: 1, but for the rows a "
                  "fastText line of several labels is split into, each label's share of them")
      ->transform(output_path());
  cmd->add_option("--vectorizer-out", o.vectorizer_out,
                  "Write the fitted vectorizer to this folder (vectorizer.json, vocabulary.txt)")
      ->check(given_path());
  cmd->add_option("--threads", o.threads, "Threads (0 = all cores)")->check(integer_in(0, kMaxThreads));
  cmd->add_flag("--quiet,-q", o.quiet, "No summary line or notes");
  return cmd;
}

int run_vectorize(const VectorizeOptions& o) {
  check_one_reader_per_stream({{"--input", o.input}, {"--labels", o.labels}, {"--config", o.config}});
  if (!o.vectorizer.empty() && (!o.config.empty() || !o.overrides.empty()))
    throw UsageError("--vectorizer", "a fitted vectorizer takes no --config or --set");
  for (const auto& [path, option] : {std::pair{o.output, "--output"}, {o.vocabulary_out, "--vocabulary-out"},
                                     {o.labels_out, "--labels-out"}, {o.weights_out, "--weights-out"}})
    if (!path.empty()) check_output_file(path, option);
  check_output_folder(o.vectorizer_out, "--vectorizer-out");
  const auto in_folder = [](const std::string& folder, const char* name) {
    return folder.empty() ? std::string() : (std::filesystem::path(folder) / name).string();
  };
  check_distinct_paths({{"--output", o.output},
                        {"--vocabulary-out", o.vocabulary_out},
                        {"--labels-out", o.labels_out},
                        {"--weights-out", o.weights_out},
                        {"--vectorizer-out", in_folder(o.vectorizer_out, "vectorizer.json")},
                        {"--vectorizer-out", in_folder(o.vectorizer_out, "vocabulary.txt")}},
                       {{"--input", o.input},
                        {"--labels", o.labels},
                        {"--config", o.config},
                        {"--vectorizer", in_folder(o.vectorizer, "vectorizer.json")},
                        {"--vectorizer", in_folder(o.vectorizer, "vocabulary.txt")}});
  const int threads = resolve_threads(o.threads);
  // Every parallel step (reading, counting, the CRCs of the .npz) on the
  // threads asked for.
  omp_set_num_threads(threads);
  std::optional<Vectorizer> fitted;
  VectorizerOptions options;
  std::string section;  // where --config holds the options ("vectorizer" in a train config)
  if (!o.vectorizer.empty()) {
    fitted = load_fitted(o.vectorizer);
  } else {
    const Settings settings = settings_from(o);
    section = settings.section;
    options = parse_options(o, settings);
  }

  // Checked before the text is read: nothing to write, and an empty file
  // would look like a vocabulary of no terms.
  const VectorizerKind kind = fitted ? fitted->options().kind : options.kind;
  if (kind == VectorizerKind::hashing && !o.vocabulary_out.empty())
    throw UsageError("--vocabulary-out", "a hashing vectorizer has no vocabulary: each column is the "
                                         "hash of any number of terms; leave --vocabulary-out out");

  TextInput input;
  input.path = o.input;
  const std::optional<TextFormat> asked = parse_text_format(o.format, "--format");
  input.format = asked ? *asked : vectorize_format(o.input, !o.labels.empty());
  input.format_detected = !asked;
  check_labels_file(o, input.format);
  // Auto takes a *.csv for a table by its name alone: said, since a file of
  // plain lines so named would be split at its commas.
  if (!asked && input.format == TextFormat::csv && !o.quiet)
    std::fprintf(stderr, "%s\n",
                 csv_by_name_note(o.input, "--format lines reads each line whole as one document").c_str());
  // Read only from a table: an error, not silently nothing, for the others.
  if (!o.table_options.empty() && input.format != TextFormat::tsv && input.format != TextFormat::csv)
    throw UsageError(o.table_options.front(),
                     "applies to tsv and csv input; " + o.input + " is read as " + to_string(input.format) +
                         (asked ? "" : " (detected: --format tsv or csv reads it as a table)"));
  if (o.unlabeled_given && input.format != TextFormat::fasttext)
    throw UsageError("--unlabeled", "applies to fasttext input; " + o.input + " is read as " +
                                        to_string(input.format) +
                                        (asked ? "" : " (detected: --format fasttext reads it so)"));
  input.labels_path = o.labels;
  input.tsv_label_column = o.tsv_label_column;
  input.tsv_text_column = o.tsv_text_column;
  input.tsv_header = o.tsv_header;
  input.quoting = parse_quoting(o.quoting, "--quoting");
  input.decode_error = parse_decode_error(o.decode_error, "--decode-error");
  input.unlabeled = parse_unlabeled(o.unlabeled, "--unlabeled");
  const auto start = std::chrono::steady_clock::now();
  const TextCorpus corpus = read_corpus(input);
  // Fitting on nothing learns no vocabulary (scikit-learn's fit refuses it
  // too); a fitted vectorizer makes the (0, F) matrix of transform([]).
  if (corpus.size() == 0 && !fitted) throw FileError(corpus.source, "no documents to vectorize");

  TextMatrix x;
  if (fitted) {
    x = fitted->transform(corpus.documents.views(), threads);
  } else {
    // A warning, as scikit-learn's fit gives it: shown under --quiet too.
    if (const std::string warning = stop_words_warning(options); !warning.empty())
      std::fprintf(stderr, "bagel: warning: %s\n", warning.c_str());
    auto [vectorizer, matrix] = fit(options, corpus, threads, o, section);
    x = std::move(matrix);
    fitted = std::move(vectorizer);
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // No document has a label to lack: an empty input's labels file is empty.
  if (!o.labels_out.empty() && !corpus.labels && corpus.size() > 0)
    throw UsageError("--labels-out", "the input has no labels (give --labels, or a labelled format)");
  if (!o.labels_out.empty() && corpus.labels) check_one_line_labels(o.labels_out, *corpus.labels, corpus);
  // Folders made for the outputs go again if a write fails (declared before
  // the outputs, whose temporaries go first).
  NewFolders new_folders({o.output, o.vocabulary_out, o.labels_out, o.weights_out,
                          in_folder(o.vectorizer_out, "vectorizer.json")});
  create_parent_folder(o.output);
  // Every output to a temporary, then all renamed into place together: a
  // stop or a full disk leaves none of them new (AtomicOutputs).
  AtomicOutputs outputs;
  const auto write_matrix = [&] {
    outputs.write(o.output, [&](const std::string& temp) { write_text_matrix(temp, x, o.compressed); });
  };
  // With threads to spare, the other files are written while the matrix is:
  // each write ends waiting for the disk (fsync).
  if (threads > 1) {
    std::future<void> others =
        std::async(std::launch::async, [&] { write_others(o, corpus, *fitted, outputs); });
    try {
      write_matrix();
    } catch (...) {
      others.wait();
      throw;
    }
    others.get();
  } else {
    write_matrix();
    write_others(o, corpus, *fitted, outputs);
  }
  outputs.commit();
  new_folders.keep();
  if (!o.quiet) print_summary(corpus, x, fitted->options().kind, seconds);
  return 0;
}

}  // namespace bagel::cli
