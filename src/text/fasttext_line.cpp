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

void parse_fasttext_line(std::string_view line, std::string_view prefix, FastTextLine& out) {
  out.labels.clear();
  out.document.clear();
  std::size_t kept_from = 0;  // start of the text not yet copied into the document
  std::size_t i = skip_spaces(line, 0);
  while (i < line.size()) {
    const std::size_t end = skip_word(line, i);
    const std::string_view word = line.substr(i, end - i);
    if (word.starts_with(prefix)) {
      out.labels.push_back(word.substr(prefix.size()));
      out.document.append(line.substr(kept_from, i - kept_from));
      kept_from = skip_spaces(line, end);
      i = kept_from;
    } else {
      i = skip_spaces(line, end);
    }
  }
  out.document.append(line.substr(kept_from));
}

}  // namespace bagel
