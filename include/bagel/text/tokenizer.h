// From a document to its terms, as scikit-learn's word analyzer produces
// them (CountVectorizer(analyzer="word")._analyze): preprocess (lowercase,
// then strip accents), tokenize with token_pattern, drop stop words, then
// n-grams: all unigrams first (when ngram_range starts at 1), then every
// bigram, every trigram, ..., each joined by one space.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "bagel/text/unicode_text.h"

namespace bagel {

enum class StripAccents { none, ascii, unicode };

// scikit-learn's default token_pattern: runs of two or more `\w`.
inline constexpr const char* kDefaultTokenPattern = R"((?u)\b\w\w+\b)";

struct AnalyzerOptions {
  bool lowercase = true;
  StripAccents strip_accents = StripAccents::none;
  // A Python regular expression. The default is matched by a hand-written
  // scanner (every maximal run of `\w` of 2 code points or more); any other
  // runs on ICU's regex engine, with `\w \W \b \B \d \D \s \S` rewritten to
  // Python's meanings. With one capturing group, the group is the token.
  std::string token_pattern = kDefaultTokenPattern;
  int ngram_min = 1;
  int ngram_max = 1;
  // Tokens removed before n-grams are formed, compared exactly (scikit-learn
  // does not preprocess its stop words either).
  std::vector<std::string> stop_words;
};

// Python's pattern in ICU's syntax (see AnalyzerOptions::token_pattern).
struct TranslatedPattern {
  std::string icu;
  // source[k]: the byte of the Python pattern that icu[k] comes from, and
  // one more entry for the end (to point ICU's errors into the user's text).
  std::vector<std::size_t> source;
};
// Throws ConfigError(field) for what it cannot translate: the ASCII or
// locale flags, (?P=name) references, conditional groups and octal escapes
// over \377.
TranslatedPattern translate_python_pattern(const std::string& pattern, const std::string& field);

class Analyzer {
 public:
  // Checks the options; errors are ConfigErrors naming `field_prefix` +
  // the option ("vectorizer.token_pattern").
  Analyzer(AnalyzerOptions options, const std::string& field_prefix);
  ~Analyzer();
  Analyzer(Analyzer&&) noexcept;
  Analyzer& operator=(Analyzer&&) noexcept;

  const AnalyzerOptions& options() const { return options_; }

  // The tokens that preprocessing and tokenizing the stop words makes and
  // that are not stop words themselves, distinct and sorted: such a stop
  // word is never removed (scikit-learn's _check_stop_words_consistency).
  std::vector<std::string> inconsistent_stop_words() const;

  // Per-thread buffers, reused from document to document so that the hot
  // loop allocates nothing once they have grown.
  class Scratch {
   public:
    Scratch();
    ~Scratch();
    Scratch(Scratch&&) noexcept;

   private:
    friend class Analyzer;
    std::string lowered_;
    std::string stripped_;
    std::unique_ptr<char[]> ascii_;  // ASCII text lowered (ascii_words.h)
    std::size_t ascii_room_ = 0;
    std::vector<std::string_view> tokens_;
    std::string joined_;
    struct Matcher;  // ICU's matcher for a custom token_pattern
    std::unique_ptr<Matcher> matcher_;
  };

  // Calls emit(std::string_view term) for each term of `document` in
  // scikit-learn's order. A term's view lives until the next call.
  template <class Emit>
  void analyze(std::string_view document, Scratch& scratch, Emit&& emit) const {
    split(document, scratch);
    const std::vector<std::string_view>& tokens = scratch.tokens_;
    const std::size_t count = tokens.size();
    if (options_.ngram_max == 1) {
      for (const std::string_view token : tokens) emit(token);
      return;
    }
    std::size_t n = static_cast<std::size_t>(options_.ngram_min);
    if (n == 1) {
      for (const std::string_view token : tokens) emit(token);
      n = 2;
    }
    const std::size_t last = static_cast<std::size_t>(options_.ngram_max);
    for (; n <= last && n <= count; ++n) {
      for (std::size_t i = 0; i + n <= count; ++i) {
        std::string& joined = scratch.joined_;
        joined.assign(tokens[i]);
        for (std::size_t k = 1; k < n; ++k) {
          joined.push_back(' ');
          joined.append(tokens[i + k]);
        }
        emit(std::string_view(joined));
      }
    }
  }

 private:
  // Fills scratch.tokens_ with the document's tokens, stop words removed.
  void split(std::string_view document, Scratch& scratch) const;
  std::string_view preprocess(std::string_view document, Scratch& scratch) const;
  // Fills scratch.tokens_ (views into `text`), stop words removed.
  void tokenize(std::string_view text, Scratch& scratch) const;
  void scan_words(std::string_view text, std::vector<std::string_view>& tokens) const;
  bool scan_ascii_words(std::string_view document, Scratch& scratch) const;
  void drop_stop_words(std::vector<std::string_view>& tokens) const;
  void match_pattern(std::string_view text, Scratch& scratch) const;

  AnalyzerOptions options_;
  const WordChars* word_chars_ = nullptr;
  bool default_pattern_ = true;
  struct Pattern;  // the compiled custom token_pattern (ICU), shared by threads
  std::unique_ptr<Pattern> pattern_;
  int group_ = 0;  // the capture group that is the token (0: the match)
  std::unordered_set<std::string_view> stop_set_;  // views into options_.stop_words
};

}  // namespace bagel
