#include "bagel/text/vocabulary_file.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/mapped_file.h"
#include "bagel/text/utf8.h"

namespace bagel {

namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
// The line that stands for the empty term.
constexpr std::string_view kEmptyTerm = "\\e";

std::string unescape_term(std::string_view line, const std::string& source, std::int64_t number) {
  if (line == kEmptyTerm) return "";
  std::string term;
  term.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      term += line[i];
      continue;
    }
    const char next = i + 1 < line.size() ? line[i + 1] : '\0';
    if (next == 'e')
      throw FileError(source,
                      "byte " + std::to_string(i + 1) +
                          ": \\e stands for the empty term and must be alone on its line",
                      number);
    if (next != 'n' && next != 'r' && next != '\\')
      throw FileError(source,
                      "byte " + std::to_string(i + 1) +
                          ": a backslash must start \\n, \\r or \\\\ (a term's line feed, carriage "
                          "return or backslash), or be the \\e of an empty term alone on its line; "
                          "write a backslash in a term as \\\\",
                      number);
    term += next == 'n' ? '\n' : next == 'r' ? '\r' : '\\';
    ++i;
  }
  return term;
}

// A term on two lines: the vocabulary would name two columns alike, and the
// second is usually a sign of a file that is not one term per column.
void check_unique(const std::vector<std::string>& terms, const std::string& source) {
  std::vector<std::size_t> order(terms.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return terms[a] < terms[b]; });
  std::size_t first_repeat = terms.size();
  std::size_t its_original = 0;
  for (std::size_t i = 1; i < order.size(); ++i)
    if (terms[order[i]] == terms[order[i - 1]] && order[i] < first_repeat) {
      first_repeat = order[i];
      its_original = order[i - 1];
    }
  if (first_repeat == terms.size()) return;
  throw FileError(source,
                  "the term \"" + escape_vocabulary_term(terms[first_repeat]) +
                      "\" is already on line " + std::to_string(its_original + 1) +
                      "; a vocabulary names each column once",
                  static_cast<std::int64_t>(first_repeat + 1));
}

}  // namespace

std::string escape_vocabulary_term(std::string_view term) {
  if (term.empty()) return std::string(kEmptyTerm);
  std::string out;
  out.reserve(term.size());
  for (const char c : term) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\\')
      out += "\\\\";
    else
      out += c;
  }
  return out;
}

std::vector<std::string> read_vocabulary_file(const std::string& path) {
  const std::string source = input_name(path);
  const std::unique_ptr<InputStream> stream =
      is_stream(path) ? std::make_unique<InputStream>(path) : nullptr;
  const MappedFile file = stream ? MappedFile(*stream) : MappedFile(path);
  std::string_view text(reinterpret_cast<const char*>(file.bytes().data()), file.bytes().size());
  if (text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
  std::vector<std::string> terms;
  std::int64_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++number;
    if (const std::size_t bad = invalid_utf8_at(line); bad != std::string_view::npos)
      throw FileError(source, "byte " + std::to_string(bad + 1) +
                                  " is not UTF-8 text; a vocabulary file is UTF-8, one term a line",
                      number);
    if (line.empty())
      throw FileError(source, "empty line; a vocabulary file holds one term a line, line i naming "
                              "feature column i (the empty term is written \\e)",
                      number);
    terms.push_back(unescape_term(line, source, number));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  if (terms.empty()) throw FileError(source, "holds no term; expected one term a line");
  check_unique(terms, source);
  return terms;
}

void write_vocabulary_file(const std::string& path, std::span<const std::string_view> terms) {
  std::size_t bytes = 0;
  for (const std::string_view term : terms) bytes += term.size() + 1;
  std::string text;
  text.reserve(bytes);
  for (const std::string_view term : terms) {
    if (!term.empty() && term.find_first_of("\n\r\\") == std::string_view::npos)
      text += term;
    else
      text += escape_vocabulary_term(term);
    text += '\n';
  }
  write_file_atomic(path, text);
}

void write_vocabulary_file(const std::string& path, const std::vector<std::string>& terms) {
  write_vocabulary_file(path, std::vector<std::string_view>(terms.begin(), terms.end()));
}

}  // namespace bagel
