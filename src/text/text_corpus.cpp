#include "bagel/text/text_corpus.h"

#include <memory>
#include <string_view>

#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/mapped_file.h"
#include "bagel/text/utf8.h"

namespace bagel {

namespace {

std::unique_ptr<MappedFile> open_bytes(const std::string& path) {
  if (is_stream(path)) {
    InputStream stream(path);
    return std::make_unique<MappedFile>(stream);
  }
  return std::make_unique<MappedFile>(path);
}

std::string_view as_text(std::span<const std::byte> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Splits `text` into lines (see text_corpus.h) and calls take(line, number).
template <typename Take>
void for_each_line(std::string_view text, Take take) {
  std::int64_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    take(line, ++number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

void check_document_utf8(std::string_view document, const std::string& source,
                         std::int64_t line) {
  const std::size_t bad = invalid_utf8_at(document);
  if (bad == std::string_view::npos) return;
  throw FileError(source,
                  "byte " + std::to_string(bad + 1) +
                      " is not UTF-8 text; save the file as UTF-8 (or set decode_error to "
                      "\"replace\" or \"ignore\")",
                  line);
}

TextCorpus read_lines(const TextInput& input) {
  TextCorpus corpus;
  corpus.source = input_name(input.path);
  const auto bytes = open_bytes(input.path);
  for_each_line(as_text(bytes->bytes()), [&](std::string_view line, std::int64_t number) {
    check_document_utf8(line, corpus.source, number);
    corpus.documents.emplace_back(line);
    corpus.lines.push_back(number);
  });
  if (corpus.documents.empty() && is_stream(input.path))
    throw FileError(corpus.source, "no documents: the stream was empty");
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

TextCorpus read_text_corpus(const TextInput& input) {
  switch (input.format) {
    case TextFormat::lines:
      if (input.decode_error == DecodeError::strict) return read_lines(input);
      break;
    default:
      break;
  }
  throw ConfigError("format", "this text format is not read yet");
}

}  // namespace bagel
