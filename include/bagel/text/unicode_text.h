// Python's meaning of text, for a vectorizer that must split and fold words
// exactly as scikit-learn does under Debian's Python: str.lower(), the `\w`
// of Python's re for str patterns, and scikit-learn's strip_accents.
//
// The character data come from ICU (Debian's libicu, Unicode 15.0 in ICU 72);
// Python 3.11's unicodedata is Unicode 14.0. A code point assigned after
// kPythonUnicodeVersion is unassigned to Python (no letter, no digit, no
// decomposition, combining class 0), and is treated so here, which keeps
// bagel exact on every code point; tests/test_unicode_text.cpp compares all
// 0x110000 of them with /usr/bin/python3.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

// The Unicode version of the unicodedata module of the Python that bagel
// matches (Debian 12's Python 3.11: unicodedata.unidata_version == "14.0.0").
inline constexpr int kPythonUnicodeMajor = 14;
inline constexpr int kPythonUnicodeMinor = 0;

// Python's classes as ICU set patterns (UnicodeSet and regular expression
// syntax), each limited to the code points Python's Unicode version assigns:
// `\w` for Python's re on a str, ch.isalnum() or '_' (letters Lu Ll Lt Lm
// Lo, and Numeric_Type Decimal, Digit or Numeric), which is not ICU's \w
// (that adds marks, connector punctuation and join controls); and `\d`
// (Numeric_Type Decimal).
std::string python_word_set();
std::string python_digit_set();

// python_word_set() as a bit table of all code points, built once from the
// set's ranges (under a millisecond; asking ICU about each of the 1.1
// million code points took 10 ms, which every vectorizer run paid).
class WordChars {
 public:
  WordChars();
  bool contains(char32_t c) const {
    return c < 0x110000 && ((bits_[c >> 6] >> (c & 63)) & 1u) != 0;
  }

 private:
  std::vector<std::uint64_t> bits_;
};

// The table every tokenizer shares (immutable once built; thread-safe).
const WordChars& word_chars();

// Whether Python's unicodedata knows `c` (assigned in Unicode 14.0 or before).
bool assigned_in_python(char32_t c);

// Python's str.isspace(), which is re's `\s` for str patterns.
bool is_python_space(char32_t c);

// Decodes the code point starting at text[i] (well-formed UTF-8 assumed, as
// every document is checked when read) and advances i past it.
inline char32_t next_code_point(std::string_view text, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  if (b0 < 0xE0) {
    const char32_t c = ((b0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
    i += 2;
    return c;
  }
  if (b0 < 0xF0) {
    const char32_t c = ((b0 & 0x0Fu) << 12) |
                       ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 6) |
                       (static_cast<unsigned char>(text[i + 2]) & 0x3Fu);
    i += 3;
    return c;
  }
  const char32_t c = ((b0 & 0x07u) << 18) |
                     ((static_cast<unsigned char>(text[i + 1]) & 0x3Fu) << 12) |
                     ((static_cast<unsigned char>(text[i + 2]) & 0x3Fu) << 6) |
                     (static_cast<unsigned char>(text[i + 3]) & 0x3Fu);
  i += 4;
  return c;
}

// Appends the UTF-8 form of `c` to `out`.
void append_utf8(char32_t c, std::string& out);

inline bool is_ascii(std::string_view text) {
  unsigned char any = 0;
  for (const char ch : text) any |= static_cast<unsigned char>(ch);
  return any < 0x80;
}

// out = Python's text.lower(): full case mapping with SpecialCasing
// ('İ' -> "i̇", final sigma 'Σ' -> 'ς' by its context, 'ß' unchanged).
// ASCII text is folded byte by byte; other text goes through ICU's root-locale
// lowercasing, which applies the same rules.
void python_lower(std::string_view text, std::string& out);

// scikit-learn 1.2's strip_accents_unicode: ASCII text unchanged; otherwise
// NFKD, dropping every character whose canonical combining class is not 0.
void strip_accents_unicode(std::string_view text, std::string& out);

// scikit-learn's strip_accents_ascii: NFKD, keeping only ASCII characters.
void strip_accents_ascii(std::string_view text, std::string& out);

}  // namespace bagel
