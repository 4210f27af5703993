#include "bagel/text/fasttext_line.h"

namespace bagel {

namespace {

std::size_t skip_spaces(std::string_view line, std::size_t i) {
  while (i < line.size() && is_fasttext_space(line[i])) ++i;
  return i;
}

std::size_t skip_word(std::string_view line, std::size_t i) {
  while (i < line.size() && !is_fasttext_space(line[i])) ++i;
  return i;
}

}  // namespace

// A label word is an occurrence of the prefix that starts a word: found with
// find(), which skips the text between labels at memchr speed instead of
// walking it word by word.
void parse_fasttext_line(std::string_view line, std::string_view prefix, FastTextLine& out) {
  out.labels.clear();
  out.document.clear();
  std::size_t kept_from = 0;  // start of the text not yet copied into the document
  for (std::size_t at = line.find(prefix); at != std::string_view::npos;) {
    if (at > 0 && !is_fasttext_space(line[at - 1])) {  // inside a word
      at = line.find(prefix, at + 1);
      continue;
    }
    const std::size_t end = skip_word(line, at);
    out.labels.push_back(line.substr(at + prefix.size(), end - at - prefix.size()));
    out.document.append(line.substr(kept_from, at - kept_from));
    kept_from = skip_spaces(line, end);
    at = line.find(prefix, kept_from);
  }
  out.document.append(line.substr(kept_from));
}

}  // namespace bagel
