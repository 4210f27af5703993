#include "bagel/text/text_corpus.h"

#include <algorithm>
#include <iterator>
#include <span>
#include <string_view>

#include "bagel/error.h"
#include "bagel/huge_pages.h"
#include "bagel/text/line_chunks.h"
#include "bagel/text/text_lines.h"
#include "bagel/text/utf8.h"
#include "text/corpus_readers.h"

namespace bagel {

namespace detail {

std::string_view without_cr(std::string_view line) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  return line;
}

std::string quoted(std::string_view s) {
  std::string out = "'";
  out.append(s);
  out.push_back('\'');
  return out;
}

void check_not_empty_stream(const TextCorpus& corpus, const TextLines& text) {
  if (corpus.documents.empty() && text.is_stream())
    throw FileError(corpus.source, "no documents: the stream ended before any document");
}

void append_rows(TextCorpus& into, TextCorpus&& part) {
  // Weights are kept only when some row weighs other than 1 (text_corpus.h);
  // a side without them weighs 1 throughout.
  if (!into.weights.empty() || !part.weights.empty()) {
    into.weights.resize(into.size(), 1.0f);
    part.weights.resize(part.size(), 1.0f);
    into.weights.insert(into.weights.end(), part.weights.begin(), part.weights.end());
  }
  into.documents.append(std::move(part.documents));
  into.lines.insert(into.lines.end(), part.lines.begin(), part.lines.end());
}

void attach_labels(TextCorpus& corpus, std::vector<std::string> names) {
  corpus.labels = make_labels(std::move(names), corpus.source);
  corpus.labels->lines = corpus.lines;
}

}  // namespace detail

namespace {

using detail::check_not_empty_stream;
using detail::without_cr;

// The lines of one chunk (or of a whole stream). A line of a mapped file
// that needed no repair is a view into the file; others are copied (a
// stream's blocks are reused).
struct LinesPart {
  TextCorpus rows;
  std::string_view file;  // the mapped file's text; empty for a stream
  void add(std::string_view line, std::int64_t number) {
    const std::string_view document = without_cr(line);
    if (document.data() >= file.data() && document.data() + document.size() <= file.data() + file.size())
      rows.documents.push_view(document);
    else
      rows.documents.push_back(document);
    rows.lines.push_back(number);
  }
};

// A mapped file whose every chunk is UTF-8 (the common case): each line a
// view into the mapping, each chunk filling its own range of the one array
// of documents in parallel. False, with nothing done, when some byte is not
// UTF-8: the line-by-line reader then repairs or reports it.
bool read_valid_lines(std::string_view file, TextCorpus& corpus) {
  const std::vector<LineChunk> chunks = line_chunks(file);
  std::vector<std::size_t> first(chunks.size() + 1, 0);
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    // A last line without its '\n' is a document too.
    const std::string_view text = chunks[k].text;
    first[k + 1] = first[k] + static_cast<std::size_t>(chunks[k].newlines) + (!text.empty() && text.back() != '\n');
  }
  if (!is_utf8(file)) return false;
  const std::span<std::string_view> documents = corpus.documents.extend(first.back());
  corpus.lines = huge_vector<std::int64_t>(first.back());
#pragma omp parallel for schedule(static) if (chunks.size() > 1)
  for (std::size_t k = 0; k < chunks.size(); ++k) {
    std::string_view text = chunks[k].text;
    for (std::size_t d = first[k]; d < first[k + 1]; ++d) {
      const std::size_t end = std::min(text.find('\n'), text.size());
      documents[d] = without_cr(text.substr(0, end));
      corpus.lines[d] = static_cast<std::int64_t>(d) + 1;
      text.remove_prefix(std::min(end + 1, text.size()));
    }
  }
  return true;
}

TextCorpus read_lines(const TextInput& input) {
  TextLines text(input.path, input.decode_error, /*drop_bom=*/false, input.stream);
  TextCorpus corpus;
  corpus.source = text.source();
  const std::string_view file = text.whole_text();
  if (!file.empty()) corpus.documents.keep_alive(text.mapped_file());
  if (file.empty() || !read_valid_lines(file, corpus))
    for (LinesPart& part : read_in_parts(text, [&] { return LinesPart{{}, file}; }))
      detail::append_rows(corpus, std::move(part.rows));
  check_not_empty_stream(corpus, text);
  if (!input.labels_path.empty()) {
    RawLabels labels = read_labels(input.labels_path);
    if (labels.size() != corpus.size())
      throw FileError(labels.source, std::to_string(labels.size()) + " labels for " +
                                         std::to_string(corpus.size()) + " documents in " +
                                         corpus.source + "; give one label per document");
    corpus.labels = std::move(labels);
  }
  return corpus;
}

}  // namespace

std::string setting_name(const TextInput& input, std::string_view key) {
  if (input.config_section.empty()) return std::string(key);
  if (key.starts_with("tsv_")) key.remove_prefix(4);  // the config's keys are "header", "text_column"
  return input.config_section + "." + std::string(key);
}

TextCorpus read_text_corpus(const TextInput& input) {
  if (!input.labels_path.empty() && input.format != TextFormat::lines)
    throw ConfigError("labels_path",
                      "only the lines format takes a labels file; the other formats carry "
                      "their labels");
  switch (input.format) {
    case TextFormat::lines:
      return read_lines(input);
    case TextFormat::fasttext:
      return detail::read_fasttext(input);
    case TextFormat::tsv:
      return detail::read_delimited(input, '\t');
    case TextFormat::csv:
      return detail::read_delimited(input, ',');
    case TextFormat::folder:
      return detail::read_folder(input);
  }
  throw ConfigError("format", "unknown text format");
}

}  // namespace bagel
