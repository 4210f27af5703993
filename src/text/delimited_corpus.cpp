// The tsv and csv formats: a label column and a text column per record.
#include <algorithm>
#include <string_view>

#include "bagel/error.h"
#include "bagel/text/delimited.h"
#include "bagel/text/text_lines.h"
#include "text/corpus_readers.h"

namespace bagel::detail {

namespace {

constexpr int kNoColumn = -1;

bool is_blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  });
}

std::string columns_word(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " column" : " columns");
}

// Where the label and the text are, from the options or the header.
class Columns {
 public:
  explicit Columns(const TextInput& input)
      : input_(&input),
        label_(input.tsv_label_column),
        text_(input.tsv_text_column),
        label_name_(input.tsv_label_name),
        text_name_(input.tsv_text_name) {
    if (!input.tsv_header && !(label_name_.empty() && text_name_.empty()))
      throw ConfigError(key_name(label_name_.empty() ? "tsv_text_name" : "tsv_label_name"),
                        "columns are named by a header: set " + key_name("tsv_header") +
                            " to true, or give the column's 0-based index instead");
    if (label_ < kNoColumn)
      throw ConfigError(key_name("tsv_label_column"), "must be a 0-based column, or -1 for no label");
    if (text_ < 0) throw ConfigError(key_name("tsv_text_column"), "must be a 0-based column");
    check_distinct();
  }

  // The header row: names become indices.
  void name(std::span<std::string> header, const std::string& source, std::int64_t line) {
    if (!label_name_.empty()) label_ = find(header, label_name_, source, line);
    if (!text_name_.empty()) text_ = find(header, text_name_, source, line);
    check_distinct();
  }

  int label() const { return label_; }
  int text() const { return text_; }
  std::size_t needed() const { return static_cast<std::size_t>(std::max(label_, text_)) + 1; }

  // "(the label in column 0 and the text in column 1, counting from 0)"
  std::string describe() const {
    std::string s = "(";
    if (label_ != kNoColumn) s += "the label in column " + std::to_string(label_) + " and ";
    return s + "the text in column " + std::to_string(text_) + ", counting from 0)";
  }

 private:
  std::string key_name(std::string_view key) const { return setting_name(*input_, key); }

  void check_distinct() const {
    if (label_ == text_)
      throw ConfigError(key_name("tsv_text_column"), "column " + std::to_string(text_) +
                                                " is also the label column; give two columns");
  }

  static int find(std::span<std::string> header, const std::string& name,
                  const std::string& source, std::int64_t line) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      std::string names;
      for (const std::string& column : header) names += (names.empty() ? "" : ", ") + quoted(column);
      throw FileError(source, "the header has no column " + quoted(name) + " (it has " + names + ")",
                      line);
    }
    if (std::find(it + 1, header.end(), name) != header.end())
      throw FileError(source, "the header names two columns " + quoted(name) +
                                  "; rename one, or give the column's 0-based index", line);
    return static_cast<int>(it - header.begin());
  }

  const TextInput* input_;
  int label_;
  int text_;
  std::string label_name_;
  std::string text_name_;
};

// Why the reader took the file for a table when the user named no format:
// a file of plain lines read as one fails in its first rows, and the error
// must say where the guess came from (text_format.h: a tab in line 1 for
// TSV, the .csv name for CSV).
std::string detected_why(const TextInput& input, char delimiter) {
  if (!input.format_detected) return "";
  return std::string("; it was read as ") +
         (delimiter == '\t' ? "TSV because its first line has a tab"
                             : "CSV because its name ends in .csv") +
         ": name the format" +
         (input.config_section.empty() ? "" : " in " + setting_name(input, "format")) +
         " (\"lines\": one document a line, any labels in a file of one a line) if it is not a "
         "table";
}

}  // namespace

TextCorpus read_delimited(const TextInput& input, char delimiter) {
  Columns columns(input);
  bool header_pending = input.tsv_header;
  TextLines text(input.path, input.decode_error, /*drop_bom=*/true, input.stream);
  TextCorpus corpus;
  corpus.source = text.source();
  std::vector<std::string> names;
  DelimitedParser parser(delimiter, input.quoting, [&](std::span<std::string> fields,
                                                       std::int64_t line) {
    if (header_pending) {
      columns.name(fields, corpus.source, line);
      header_pending = false;
      return;
    }
    if (fields.size() < columns.needed())
      throw FileError(corpus.source,
                      columns_word(fields.size()) + ", expected at least " +
                          columns_word(columns.needed()) + " " + columns.describe() +
                          detected_why(input, delimiter),
                      line);
    if (columns.label() != kNoColumn) {
      std::string& label = fields[static_cast<std::size_t>(columns.label())];
      if (is_blank(label))
        throw FileError(corpus.source,
                        "empty label in column " + std::to_string(columns.label()) +
                            detected_why(input, delimiter),
                        line);
      names.push_back(std::move(label));
    }
    corpus.documents.push_back(fields[static_cast<std::size_t>(columns.text())]);
    corpus.lines.push_back(line);
  });
  text.for_each([&](std::string_view line, std::int64_t number, bool newline) {
    parser.feed(line, number, newline);
  });
  // One stray quote would make every line after it one document's text,
  // silently; pandas refuses it too ("EOF inside string").
  if (parser.open_quote())
    throw TextSettingError(TextSettingError::Setting::quoting, corpus.source,
                           "a quoted field in the row that starts here never closes: the rest of "
                           "the file would be its text" + detected_why(input, delimiter),
                           "close the quote, or set quoting to \"none\" to read quotes as text",
                           parser.record_line());
  parser.finish();
  check_not_empty_stream(corpus, text);
  if (columns.label() != kNoColumn) attach_labels(corpus, std::move(names));
  return corpus;
}

}  // namespace bagel::detail
