#include "model_text.h"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/text/text_format.h"
#include "bagel/text/text_lines.h"

namespace bagel::cli {

namespace {

// A reader error that a training setting lifts, reworded: the command takes
// no such option, so the remedy names the model's setting and says to
// retrain, or what to change in the file instead.
[[noreturn]] void reword(const TextSettingError& e, const std::string& command) {
  switch (e.setting()) {
    case TextSettingError::Setting::mixed_labels:
      throw FileError(e.file(),
                      e.problem() + "; a fastText file to " + command + " labels every line or none" +
                          (command == "predict" ? " (the labels score the predictions)" : "") +
                          ": label the other lines too, or remove the labels",
                      e.line());
    case TextSettingError::Setting::quoting:
      throw FileError(e.file(),
                      e.problem() + "; close the quote: " + command + " reads a table with the "
                                    "model's train.quoting (\"csv\" in its model.json), so to have "
                                    "quotes read as text, retrain with train.quoting \"none\"",
                      e.line());
    case TextSettingError::Setting::decode_error:
      throw FileError(e.file(),
                      e.problem() + "; save the file as UTF-8: " + command + " reads text with the "
                                    "model's train.decode_error (\"strict\" in its model.json), so to "
                                    "have such bytes replaced or dropped, retrain with "
                                    "train.decode_error \"replace\" or \"ignore\"",
                      e.line());
    case TextSettingError::Setting::unlabeled:
      break;  // lines without labels are kept: not raised here
  }
  throw e;
}

}  // namespace

bool reads_text(const Model& model, ModelTextInput& in) {
  if (!model.vectorizer) return false;
  std::error_code ec;
  if (std::filesystem::is_directory(in.input, ec)) return true;
  if (!is_stream(in.input))
    return feature_format_of(in.input) == FeatureFormat::kSvmlight && !has_svmlight_name(in.input);
  if (!in.stream) in.stream = std::make_unique<InputStream>(in.input);
  return feature_format(in.input, in.stream->peek(kFormatMagicBytes)) == FeatureFormat::kSvmlight;
}

void check_text_format_applies(const Model& model, ModelTextInput& in) {
  if (in.text_format == "auto") return;
  if (!model.vectorizer)
    throw UsageError("--text-format",
                     "the model in " + in.model + " was trained on numbers (features), not text: "
                     "--text-format applies to models trained on text; give this model features "
                     "(.npz or svmlight) without it");
  if (!reads_text(model, in))
    throw UsageError("--text-format", input_name(in.input) + " is features (an .npz, or svmlight by its "
                                      "name), which a model trained on text takes as already "
                                      "vectorised: leave --text-format out");
}

void check_zero_based_applies(const Model& model, ModelTextInput& in) {
  if (in.zero_based == "auto" || !reads_text(model, in)) return;
  // A stream has no name: the remedy is a file that has one.
  const std::string remedy = is_stream(in.input)
                                 ? "leave it out, or save the svmlight to a file so named (a stream "
                                   "is read as text unless it is an .npz)"
                                 : "leave it out, or name the file so";
  throw UsageError("--zero-based",
                   "the model in " + in.model + " was trained on text, and " + input_name(in.input) +
                       " is read as text: --zero-based applies to svmlight features, which a "
                       "model trained on text reads from a file named *.svm, *.svmlight or "
                       "*.libsvm; " + remedy);
}

ZeroBased input_zero_based(const Model& model, const ModelTextInput& in) {
  const ZeroBased asked = parse_zero_based(in.zero_based, "--zero-based");
  return asked == ZeroBased::kAuto && model.vectorizer ? ZeroBased::kTrue : asked;
}

LabeledData read_model_text(const Model& model, const ModelTextInput& in) {
  const std::optional<TextFormat> asked = parse_text_format(in.text_format, "--text-format");
  // A file without label marks is read as a stream is: fastText lines,
  // those without a label kept (the rows need none).
  const TextFormat format =
      asked ? *asked : detect_text_format(in.input, in.has_labels, TextFormat::fasttext);
  // A tab on the first line makes it TSV, whose label column is then not
  // text: said, since plain lines may hold tabs too.
  if (!asked && format == TextFormat::tsv && !in.quiet)
    std::cerr << "note: " << input_name(in.input) << " is read as TSV (its first line has a tab): "
              << "labels and text in the columns of the model's training TSV; --text-format lines "
                 "reads each line whole as one document\n";
  // So is a *.csv, taken for a table by its name alone.
  if (!asked && format == TextFormat::csv && !in.quiet)
    std::cerr << csv_by_name_note(in.input, "--text-format lines reads each line whole as one document")
              << "\n";
  try {
    return load_text_for_model(model, in.input, format, in.threads, !asked, in.stream.get());
  } catch (const TextSettingError& e) {
    reword(e, in.command);
  }
}

}  // namespace bagel::cli
