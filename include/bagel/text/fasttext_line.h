// One line of fastText's supervised format, split into its label words and
// its document.
//
// Which words are labels, as fastText decides (Dictionary::readWord and
// getType in its src/dictionary.cc): a word is a maximal run of bytes other
// than ' ', '\t', '\v', '\f', '\r', '\0' (and '\n', which ends the line), and
// a word whose bytes start with the label prefix (`__label__` by default) is
// a label word, wherever it stands in the line, as in fastText, which reads
// "the cat __label__pets sat" as the label "pets" and three words. The label
// is the rest of the word ("__label__pets," gives "pets,", as in fastText);
// a word that is just the prefix has no name and is an error here.
//
// The document is the line minus its label words: each label word is cut
// out together with the separators that follow it, and every other byte is
// kept as it was, so a CountVectorizer sees the same words as in the line:
//   "__label__a __label__b the cat"  -> "the cat"
//   "the __label__a cat"             -> "the cat"
//   "the cat __label__a"             -> "the cat "
// (fastText itself keeps only the words, joined by nothing it exposes.)
//
// Where bagel parts from fastText: a line without a label word, which
// fastText's training skips without a word, is an error by default
// (Unlabeled in text_corpus.h): a missing or misspelt prefix would otherwise
// drop lines, or every line, unnoticed, and `predict` could not line its
// output up with its input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace bagel {

struct FastTextLine {
  std::vector<std::string_view> labels;  // names after the prefix, in line order, repeats kept
  std::string document;
};

// Splits `line` (no '\n') with label words starting with `prefix` (not
// empty). `out`'s buffers are reused; its labels view `line`.
void parse_fasttext_line(std::string_view line, std::string_view prefix, FastTextLine& out);

// True for the bytes fastText separates words with (but '\n').
inline bool is_fasttext_space(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\0';
}

}  // namespace bagel
