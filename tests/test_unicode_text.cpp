// Python's meaning of characters, checked on every code point against
// /usr/bin/python3 (Debian's Python 3.11, Unicode 14.0), with bagel's ICU
// (Unicode 15.0) limited to what Python knows.
#include <gtest/gtest.h>
#include <array>
#include <cctype>
#include <cstdint>

#include <random>
#include <sstream>

#include "bagel/error.h"
#include "bagel/text/ascii_words.h"
#include "bagel/text/tokenizer.h"
#include "bagel/text/unicode_text.h"
#include "python_oracle.h"

namespace bagel {
namespace {

bool is_surrogate(char32_t c) { return c >= 0xD800 && c <= 0xDFFF; }

std::string utf8(char32_t c) {
  std::string s;
  append_utf8(c, s);
  return s;
}

// Python's per-code-point answers: one line per code point whose answer is
// not the trivial one, "HEX" or "HEX MAPPED-HEX...".
std::string python_table(const std::string& mode) {
  const auto out = testing::run_python(R"(
import sys, unicodedata
assert unicodedata.unidata_version == "14.0.0", unicodedata.unidata_version
mode = ")" + mode + R"("
lines = []
for c in range(0x110000):
    if 0xD800 <= c <= 0xDFFF: continue
    ch = chr(c)
    if mode == "w":
        if ch.isalnum() or ch == "_": lines.append("%X" % c)
        continue
    if mode == "space":
        if ch.isspace(): lines.append("%X" % c)
        continue
    if mode == "lower": r = ch.lower()
    elif mode == "unicode":
        r = ch if c < 128 else "".join(x for x in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(x))
    else: r = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
    if r != ch: lines.append("%X" % c + "".join(" %X" % ord(x) for x in r))
print("\n".join(lines))
)");
  return out ? *out : "";
}

template <class Answer>
std::string bagel_table(Answer answer) {
  std::ostringstream lines;
  for (char32_t c = 0; c < 0x110000; ++c)
    if (!is_surrogate(c)) answer(c, lines);
  return lines.str();
}

std::string mapping_line(char32_t c, const std::string& mapped) {
  std::ostringstream line;
  line << std::hex << std::uppercase << static_cast<unsigned>(c);
  for (std::size_t i = 0; i < mapped.size();) line << ' ' << static_cast<unsigned>(next_code_point(mapped, i));
  line << '\n';
  return line.str();
}

template <class Map>
std::string mapped_table(Map map) {
  std::string out;
  return bagel_table([&](char32_t c, std::ostringstream& lines) {
    const std::string in = utf8(c);
    map(in, out);
    if (out != in) lines << mapping_line(c, out);
  });
}

#define REQUIRE_PYTHON(table) \
  if ((table).empty()) GTEST_SKIP() << "/usr/bin/python3 with unicodedata 14.0 is needed"

TEST(UnicodeText, WordCharactersAreRegexWordOfPythonOnEveryCodePoint) {
  const std::string expected = python_table("w");
  REQUIRE_PYTHON(expected);
  const WordChars& word = word_chars();
  const std::string ours = bagel_table([&](char32_t c, std::ostringstream& lines) {
    if (word.contains(c)) lines << std::hex << std::uppercase << static_cast<unsigned>(c) << '\n';
  });
  EXPECT_EQ(ours, expected);
}

TEST(UnicodeText, LowercaseIsPythonStrLowerOnEveryCodePoint) {
  const std::string expected = python_table("lower");
  REQUIRE_PYTHON(expected);
  // Code points below 0x80 take the ASCII path, the rest ICU's.
  EXPECT_EQ(mapped_table(python_lower), expected);
}

TEST(UnicodeText, StripAccentsIsScikitLearnsOnEveryCodePoint) {
  const std::string unicode = python_table("unicode");
  REQUIRE_PYTHON(unicode);
  EXPECT_EQ(mapped_table(strip_accents_unicode), unicode);
  EXPECT_EQ(mapped_table(strip_accents_ascii), python_table("ascii"));
}

TEST(UnicodeText, SpaceIsPythonIsspaceOnEveryCodePoint) {
  const std::string expected = python_table("space");
  REQUIRE_PYTHON(expected);
  const std::string ours = bagel_table([&](char32_t c, std::ostringstream& lines) {
    if (is_python_space(c)) lines << std::hex << std::uppercase << static_cast<unsigned>(c) << '\n';
  });
  EXPECT_EQ(ours, expected);
}

// Final sigma and the other context-dependent mappings depend on the
// neighbours: random strings of cased, case-ignorable and other characters.
TEST(UnicodeText, LowercaseOfRandomStringsWithSigmaIsPythons) {
  const std::vector<std::string> pool = {"Σ", "σ", "A", "a", "'", ".", " ", "\u0301", "\u00AD", "İ", "ß",
                                         "ẞ", "ǅ", "1", "\u02B0", "\u0345", "ΐ", "Ω", "\u200D", ":"};
  std::mt19937 rng(7);
  std::vector<std::string> inputs;
  for (int i = 0; i < 4000; ++i) {
    std::string s;
    const int length = 1 + static_cast<int>(rng() % 8);
    for (int k = 0; k < length; ++k) s += pool[rng() % pool.size()];
    inputs.push_back(s);
  }
  std::string literal = "docs = [";
  for (const std::string& s : inputs) {
    literal += "bytes([";
    for (const unsigned char ch : s) literal += std::to_string(ch) + ",";
    literal += "]).decode(),";
  }
  const auto out = testing::run_python(literal + "]\nprint('\\n'.join(d.lower() for d in docs))\n");
  if (!out) GTEST_SKIP() << "/usr/bin/python3 is needed";
  std::istringstream expected(*out);
  std::string line, ours;
  for (const std::string& s : inputs) {
    std::getline(expected, line);
    python_lower(s, ours);
    EXPECT_EQ(ours, line) << "input: " << s;
  }
}

// A custom token pattern goes through ICU's regex engine with Python's \w:
// r"\w" over every code point finds exactly the word characters.
TEST(UnicodeText, CustomPatternWordClassIsPythonsOnEveryCodePoint) {
  AnalyzerOptions options;
  options.lowercase = false;
  options.token_pattern = R"(\w)";
  const Analyzer analyzer(options, "vectorizer.");
  std::string document;
  for (char32_t c = 1; c < 0x110000; ++c)
    if (!is_surrogate(c)) append_utf8(c, document);
  Analyzer::Scratch scratch;
  std::vector<char32_t> found;
  analyzer.analyze(document, scratch, [&](std::string_view token) {
    std::size_t i = 0;
    found.push_back(next_code_point(token, i));
    EXPECT_EQ(i, token.size());
  });
  std::vector<char32_t> expected;
  for (char32_t c = 1; c < 0x110000; ++c)
    if (word_chars().contains(c)) expected.push_back(c);
  EXPECT_EQ(found, expected);
}

TEST(UnicodeText, DefaultPatternTakesRunsOfTwoOrMoreWordCharacters) {
  const Analyzer analyzer(AnalyzerOptions{}, "vectorizer.");
  Analyzer::Scratch scratch;
  std::vector<std::string> tokens;
  analyzer.analyze("a bc İSTANBUL x_1 日本語 é\u0301t ΟΔΟΣ.", scratch,
                   [&](std::string_view t) { tokens.emplace_back(t); });
  // 'İ' lowers to "i" + U+0307 (a mark, not \w): "i" alone is too short.
  const std::vector<std::string> expected = {"bc", "stanbul", "x_1", "日本語", "\u03bf\u03b4\u03bf\u03c2"};
  EXPECT_EQ(tokens, expected);
}

// Random ASCII text, mostly word characters so that runs cross the 16- and
// 64-byte blocks the fast scanner works in, with every byte 0-127 possible.
std::string random_ascii(std::mt19937& rng, std::size_t size) {
  const std::string word = "abcXYZ019_Qq";
  std::string text;
  for (std::size_t i = 0; i < size; ++i)
    text += rng() % 4 != 0 ? word[rng() % word.size()] : static_cast<char>(rng() % 128);
  return text;
}

std::vector<std::string> terms_of(const Analyzer& analyzer, std::string_view text) {
  Analyzer::Scratch scratch;
  std::vector<std::string> terms;
  analyzer.analyze(text, scratch, [&](std::string_view t) { terms.emplace_back(t); });
  return terms;
}

TEST(UnicodeText, AsciiScannerFindsWhatTheRegexFindsOnRandomAsciiText) {
  // The same pattern spelled without "(?u)" is not the default string, so
  // it runs on ICU's regex engine: the reference for the fast scanner.
  for (const bool lowercase : {true, false}) {
    AnalyzerOptions fast_options, regex_options;
    fast_options.lowercase = regex_options.lowercase = lowercase;
    regex_options.token_pattern = R"(\b\w\w+\b)";
    const Analyzer fast(fast_options, "vectorizer."), regex(regex_options, "vectorizer.");
    std::mt19937 rng(lowercase ? 1 : 2);
    for (std::size_t size = 0; size < 300; ++size) {
      for (int repeat = 0; repeat < 8; ++repeat) {
        const std::string text = random_ascii(rng, size);
        ASSERT_EQ(terms_of(fast, text), terms_of(regex, text)) << "size " << size << ": " << text;
      }
    }
    // A word that fills the text up to a 64-byte boundary.
    for (const std::size_t size : {63, 64, 65, 127, 128, 129}) {
      const std::string text = "x " + std::string(size - 2, 'W');
      EXPECT_EQ(terms_of(fast, text), terms_of(regex, text)) << "size " << size;
    }
  }
}

TEST(UnicodeText, AsciiScannerLeavesTextWithOtherBytesToTheUnicodePath) {
  std::vector<std::string_view> words;
  for (const std::size_t at : {0, 5, 15, 16, 31, 63, 64, 70, 99}) {
    std::string text(100, 'a');
    text[at] = '\xC3';
    std::vector<char> lowered(ascii_words_room(text.size()));
    EXPECT_FALSE(ascii_words(text, true, lowered.data(), words)) << "byte at " << at;
    text.resize(at + 1);  // the byte in the last, partial block
    EXPECT_FALSE(ascii_words(text, true, lowered.data(), words)) << "byte last, at " << at;
  }
  const Analyzer analyzer(AnalyzerOptions{}, "vectorizer.");
  const std::vector<std::string> expected = {"ab", "\u00e9t\u00e9", "cd"};
  EXPECT_EQ(terms_of(analyzer, "AB \u00c9t\u00c9 CD"), expected);
}

TEST(UnicodeText, AsciiBlockClassifierAndItsPortableVersionAgree) {
  // Every byte value at every position of a block, then random blocks (a
  // byte >= 0x80 in one of four), lowering on and off.
  std::vector<std::array<char, 16>> blocks;
  for (int value = 0; value < 256; ++value)
    for (int at = 0; at < 16; ++at) {
      std::array<char, 16> b;
      b.fill('a');
      b[static_cast<std::size_t>(at)] = static_cast<char>(value);
      blocks.push_back(b);
    }
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> ascii(0, 127), any(0, 255);
  for (int i = 0; i < 20000; ++i) {
    std::array<char, 16> b;
    for (char& c : b) c = static_cast<char>(i % 4 == 0 ? any(rng) : ascii(rng));
    blocks.push_back(b);
  }
  int refused = 0;
  for (const auto& b : blocks)
    for (const bool lowercase : {false, true}) {
      std::array<char, 16> fast{}, portable{};
      const std::uint32_t bits = detail::classify_ascii_block(b.data(), lowercase, fast.data());
      ASSERT_EQ(bits, detail::classify_ascii_block_portable(b.data(), lowercase, portable.data()))
          << std::string(b.data(), 16);
      if (bits == ~0u) {
        ++refused;
        continue;
      }
      ASSERT_EQ(fast, portable) << std::string(b.data(), 16);
      for (int i = 0; i < 16; ++i) {  // and what the bits mean, byte by byte
        const auto c = static_cast<unsigned char>(b[static_cast<std::size_t>(i)]);
        EXPECT_EQ((bits >> i) & 1u, std::isalnum(c) || c == '_' ? 1u : 0u) << int(c);
      }
    }
  EXPECT_GT(refused, 0);
}

// After an empty match at p, Python's re.findall (3.7+) first tries for a
// non-empty match at p, then moves on; the expected lists are Python's.
TEST(UnicodeText, CustomPatternTakesANonEmptyMatchWhereAnEmptyOneWas) {
  const auto findall = [](const std::string& pattern, std::string_view text) {
    AnalyzerOptions options;
    options.lowercase = false;
    options.token_pattern = pattern;
    return terms_of(Analyzer(options, "vectorizer."), text);
  };
  using Terms = std::vector<std::string>;
  EXPECT_EQ(findall(R"([a-z]*|\d+)", "version 10 of 2007"),
            (Terms{"version", "", "", "10", "", "of", "", "", "2007", ""}));
  EXPECT_EQ(findall(R"(\b|\w+)", "hello world"), (Terms{"", "hello", "", "", "world", ""}));
  EXPECT_EQ(findall(R"(\w*?)", "ab c"), (Terms{"", "a", "", "b", "", "", "c", ""}));
  EXPECT_EQ(findall(R"(.??)", "\U0001F600\u00e9"), (Terms{"", "\U0001F600", "", "\u00e9", ""}));
  EXPECT_EQ(findall(R"((\w)?\d|)", "a1 2"), (Terms{"a", "", "", ""}));
  // A comment of verbose mode runs to the end of the pattern.
  EXPECT_EQ(findall("(?x) \\w??  # c", "ab"), (Terms{"", "a", "", "b", ""}));
}

TEST(UnicodeText, PatternWithTwoGroupsIsRefusedAsScikitLearnDoes) {
  AnalyzerOptions options;
  options.token_pattern = "(a)(b)";
  EXPECT_THROW(Analyzer(options, "vectorizer."), ConfigError);
  options.token_pattern = "(?a)\\w+";
  EXPECT_THROW(Analyzer(options, "vectorizer."), ConfigError);
}

}  // namespace
}  // namespace bagel
