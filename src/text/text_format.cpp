#include "bagel/text/text_format.h"

#include <filesystem>
#include <fstream>

#include "bagel/error.h"
#include "bagel/input_stream.h"

namespace bagel {

std::optional<TextFormat> parse_text_format(const std::string& name, const std::string& field) {
  if (name == "auto") return std::nullopt;
  if (name == "lines") return TextFormat::lines;
  if (name == "fasttext") return TextFormat::fasttext;
  if (name == "tsv") return TextFormat::tsv;
  if (name == "csv") return TextFormat::csv;
  if (name == "folder") return TextFormat::folder;
  throw ConfigError(field, "expected \"auto\", \"lines\", \"fasttext\", \"tsv\", \"csv\" or "
                           "\"folder\", found \"" + name + "\"");
}

MultiLabel parse_multi_label(const std::string& name, const std::string& field) {
  if (name == "split") return MultiLabel::split;
  if (name == "first") return MultiLabel::first;
  if (name == "error") return MultiLabel::error;
  throw ConfigError(field, "expected \"split\", \"first\" or \"error\", found \"" + name + "\"");
}

Unlabeled parse_unlabeled(const std::string& name, const std::string& field) {
  if (name == "error") return Unlabeled::error;
  if (name == "skip") return Unlabeled::skip;
  if (name == "keep") return Unlabeled::keep;
  throw ConfigError(field, "expected \"error\", \"skip\" or \"keep\", found \"" + name + "\"");
}

Quoting parse_quoting(const std::string& name, const std::string& field) {
  if (name == "csv") return Quoting::csv;
  if (name == "none") return Quoting::none;
  throw ConfigError(field, "expected \"csv\" or \"none\", found \"" + name + "\"");
}

std::string to_string(TextFormat format) {
  switch (format) {
    case TextFormat::lines: return "lines";
    case TextFormat::fasttext: return "fasttext";
    case TextFormat::tsv: return "tsv";
    case TextFormat::csv: return "csv";
    case TextFormat::folder: return "folder";
  }
  return "lines";
}

DecodeError parse_decode_error(const std::string& name, const std::string& field) {
  if (name == "strict") return DecodeError::strict;
  if (name == "ignore") return DecodeError::ignore;
  if (name == "replace") return DecodeError::replace;
  throw ConfigError(field, "expected \"strict\", \"ignore\" or \"replace\", found \"" + name + "\"");
}

TextFormat detect_text_format(const std::string& path, bool has_labels,
                              std::optional<TextFormat> unlabeled) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return TextFormat::folder;
  if (has_labels) return TextFormat::lines;
  if (is_stream(path)) return TextFormat::fasttext;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open");
  std::string first;
  std::getline(in, first);
  // A byte order mark is not part of the first line's text (every reader drops it).
  if (first.starts_with("\xEF\xBB\xBF")) first.erase(0, 3);
  if (first.rfind("__label__", 0) == 0) return TextFormat::fasttext;
  if (first.find('\t') != std::string::npos) return TextFormat::tsv;
  if (std::filesystem::path(path).extension() == ".csv") return TextFormat::csv;
  if (unlabeled) return *unlabeled;
  throw FileError(path, "cannot tell how its documents are labelled: its first line neither starts "
                        "with __label__ (fastText) nor has a tab (TSV), nor is the file a .csv; give \"labels\" (a file "
                        "with one label per line) or \"format\"");
}

std::string csv_by_name_note(const std::string& path, const std::string& remedy) {
  return "note: " + input_name(path) + " is read as CSV, a label column and a text column, because "
         "its name ends in .csv; " + remedy;
}

}  // namespace bagel
