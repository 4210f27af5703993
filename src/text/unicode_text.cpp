#include "bagel/text/unicode_text.h"

#include <unicode/bytestream.h>
#include <unicode/casemap.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/uniset.h>
#include <unicode/unistr.h>

#include <stdexcept>

namespace bagel {

namespace {

// Letters and anything with a numeric type, and '_' (whatever their age).
std::string python_word_chars() { return "[\\p{L}\\p{Nt=De}\\p{Nt=Di}\\p{Nt=Nu}_]"; }

// Code points Python's Unicode version assigns.
std::string python_age_set() {
  return "[\\p{Age=" + std::to_string(kPythonUnicodeMajor) + "." + std::to_string(kPythonUnicodeMinor) + "}]";
}

const icu::Normalizer2& nfkd() {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* instance = icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU NFKD: ") + u_errorName(status));
  return *instance;
}

// Calls keep(code point) for each character of NFKD(c) as Python 3.11's
// unicodedata computes it: a code point Python does not know has no
// decomposition. The canonical reordering NFKD would also do only moves
// characters of non-zero combining class, which both callers drop.
template <class Keep>
void for_each_nfkd(char32_t c, const icu::Normalizer2& normalizer, icu::UnicodeString& scratch,
                   Keep keep) {
  if (c < 0x80 || !assigned_in_python(c) ||
      !normalizer.getDecomposition(static_cast<UChar32>(c), scratch)) {
    keep(c);
    return;
  }
  for (std::int32_t i = 0; i < scratch.length();) {
    const UChar32 d = scratch.char32At(i);
    keep(static_cast<char32_t>(d));
    i += U16_LENGTH(d);
  }
}

// out = the characters of NFKD(text) (for_each_nfkd) that keep() accepts,
// in UTF-8. ASCII text, which NFKD leaves as it is and both callers keep
// whole, is copied.
template <class Keep>
void nfkd_kept(std::string_view text, std::string& out, Keep keep) {
  out.clear();
  if (is_ascii(text)) {
    out.assign(text);
    return;
  }
  const icu::Normalizer2& normalizer = nfkd();
  icu::UnicodeString scratch;
  for (std::size_t i = 0; i < text.size();)
    for_each_nfkd(next_code_point(text, i), normalizer, scratch, [&](char32_t d) {
      if (keep(d)) append_utf8(d, out);
    });
}

}  // namespace

std::string python_word_set() { return "[" + python_word_chars() + "&&" + python_age_set() + "]"; }
std::string python_digit_set() { return "[\\p{Nt=De}&&" + python_age_set() + "]"; }

WordChars::WordChars() : bits_(0x110000 / 64, 0) {
  UErrorCode status = U_ZERO_ERROR;
  // (A UnicodeSet pattern writes intersection as '&', a regular expression as "&&".)
  icu::UnicodeSet set(icu::UnicodeString::fromUTF8(python_word_chars()), status);
  set.retainAll(icu::UnicodeSet(icu::UnicodeString::fromUTF8(python_age_set()), status));
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU word set: ") + u_errorName(status));
  for (std::int32_t r = 0; r < set.getRangeCount(); ++r)
    for (auto c = static_cast<char32_t>(set.getRangeStart(r)); c <= static_cast<char32_t>(set.getRangeEnd(r)); ++c)
      bits_[c >> 6] |= std::uint64_t{1} << (c & 63);
}

const WordChars& word_chars() {
  static const WordChars table;
  return table;
}

bool assigned_in_python(char32_t c) {
  if (c >= 0x110000) return false;
  if (u_charType(static_cast<UChar32>(c)) == U_UNASSIGNED) return false;
  UVersionInfo age;
  u_charAge(static_cast<UChar32>(c), age);
  return age[0] < kPythonUnicodeMajor ||
         (age[0] == kPythonUnicodeMajor && age[1] <= kPythonUnicodeMinor);
}

bool is_python_space(char32_t c) {
  // CPython's _PyUnicode_IsWhitespace: bidirectional class WS, B or S, or
  // general category Zs. The list is that set, stable since Unicode 6.3.
  switch (c) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:
    case 0x1C: case 0x1D: case 0x1E: case 0x1F: case 0x20:
    case 0x85: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

void append_utf8(char32_t c, std::string& out) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

void python_lower(std::string_view text, std::string& out) {
  out.clear();
  if (is_ascii(text)) {
    out.resize(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
      const char ch = text[i];
      out[i] = (ch >= 'A' && ch <= 'Z') ? static_cast<char>(ch + ('a' - 'A')) : ch;
    }
    return;
  }
  UErrorCode status = U_ZERO_ERROR;
  icu::StringByteSink<std::string> sink(&out, static_cast<std::int32_t>(text.size()));
  // The root locale ("") applies the language-independent rules Python
  // applies: SpecialCasing's unconditional mappings and Final_Sigma.
  icu::CaseMap::utf8ToLower("", 0, icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size())),
                            sink, nullptr, status);
  if (U_FAILURE(status)) throw std::runtime_error(std::string("ICU lowercase: ") + u_errorName(status));
}

void strip_accents_unicode(std::string_view text, std::string& out) {
  // unicodedata.combining(d) is 0 for a code point Python does not know.
  nfkd_kept(text, out, [](char32_t d) {
    return !assigned_in_python(d) || u_getCombiningClass(static_cast<UChar32>(d)) == 0;
  });
}

void strip_accents_ascii(std::string_view text, std::string& out) {
  nfkd_kept(text, out, [](char32_t d) { return d < 0x80; });
}

}  // namespace bagel
