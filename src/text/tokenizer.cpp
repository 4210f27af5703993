#include "bagel/text/tokenizer.h"

#include <unicode/regex.h>
#include <unicode/utext.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "bagel/error.h"
#include "bagel/text/ascii_words.h"

namespace bagel {

namespace {

constexpr std::array<bool, 128> ascii_word_table() {
  std::array<bool, 128> table{};
  for (int c = 0; c < 128; ++c)
    table[c] = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  return table;
}
constexpr std::array<bool, 128> kAsciiWord = ascii_word_table();

std::string word_set() { return python_word_set(); }
std::string digit_set() { return python_digit_set(); }
std::string space_set() {
  return "[\\t\\n\\x0B\\f\\r\\x1C-\\x20\\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F"
         "\\u205F\\u3000]";
}
std::string complement(const std::string& set) { return "[^" + set + "]"; }

// `translated` that refuses to end where it starts. ICU's \G, outside a
// lookaround, holds at the start of the matcher's region, which is where
// the match starts (lookingAt); a lookaround would see the transparent
// bounds' start instead, so the test is an atomic group that leaves its
// named group unset at \G, and the reference to it then fails.
std::unique_ptr<icu::RegexPattern> compile_nonempty(const std::string& translated,
                                                    const std::string& field) {
  // In (?x) mode a trailing `#` comment would swallow the suffix: a line
  // break ends the comment (and is nothing in that mode).
  for (const char* end : {")", "\n)"}) {
    const std::string wrapped = "(?:" + translated + end + "(?>\\G|(?<bagelmoved>))\\k<bagelmoved>";
    UParseError where{};
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexPattern> regex(icu::RegexPattern::compile(
        icu::UnicodeString::fromUTF8(wrapped), UREGEX_UNIX_LINES, where, status));
    if (U_SUCCESS(status)) return regex;
  }
  throw ConfigError(field, "not a regular expression bagel can run (its end swallows what follows it, "
                           "as an unclosed \\Q does)");
}

// The token of a match: its group's text, "" when the group took no part.
void add_token(const icu::RegexMatcher& match, int group, std::string_view text,
               std::vector<std::string_view>& tokens, UErrorCode& status) {
  const std::int64_t begin = match.start64(group, status);
  const std::int64_t end = match.end64(group, status);
  if (begin < 0)
    tokens.emplace_back();
  else
    tokens.push_back(text.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)));
}

std::size_t code_points_before(std::string_view text, std::size_t end) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < end; ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++count;
  return count;
}

// A document as an error quotes it: its first 40 code points (as the
// analyzer saw them, preprocessed), JSON-escaped, "..." when there is more.
std::string document_start(std::string_view text) {
  constexpr std::size_t kShown = 40;
  std::size_t end = 0;
  for (std::size_t shown = 0; end < text.size() && shown < kShown; ++shown) next_code_point(text, end);
  std::string quoted = nlohmann::json(std::string(text.substr(0, end))).dump();
  if (end < text.size()) quoted.insert(quoted.size() - 1, "...");
  return quoted;
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// How many digits from pattern[i] (just after a backslash) Python reads as
// an octal escape, 0 for none: in a class any 1-3 octal digits; outside
// one, \0 and up to two more, or exactly three starting 1-7 (\12 is a
// group reference).
std::size_t octal_escape_length(const std::string& pattern, std::size_t i, bool in_class) {
  const auto octal_at = [&](std::size_t k) { return k < pattern.size() && is_octal(pattern[k]); };
  if (!octal_at(i)) return 0;
  if (in_class || pattern[i] == '0') return octal_at(i + 1) ? (octal_at(i + 2) ? 3 : 2) : 1;
  return octal_at(i + 1) && octal_at(i + 2) ? 3 : 0;
}

// The escape `\ddd` at pattern[backslash] as ICU's \x{hh} (ICU's own octal
// escape needs a leading 0, and in a class it reads \1 as '1').
std::string octal_escape(const std::string& pattern, std::size_t backslash, std::size_t length,
                         const std::string& field) {
  int value = 0;
  for (std::size_t k = 1; k <= length; ++k) value = value * 8 + (pattern[backslash + k] - '0');
  if (value > 0377)
    throw ConfigError(field, "octal escape value " + pattern.substr(backslash, length + 1) +
                                 " outside of range 0-0o377, as Python says");
  char hex[16];
  std::snprintf(hex, sizeof hex, "\\x{%02x}", value);
  return hex;
}

// Where a '-' in a class stands in Python's reading: after a member (and
// before anything but ']') it makes a range; first, last or right after a
// range it is a member itself.
enum class ClassPosition { kStart, kMember, kRangeDash, kRangeEnd };

ClassPosition after_member(ClassPosition p) {
  return p == ClassPosition::kRangeDash ? ClassPosition::kRangeEnd : ClassPosition::kMember;
}

// The escapes Python refuses that ICU would run: \c (ICU's control
// character \cX), and \8 or \9 in a class (no octal digit; ICU reads '8').
void refuse_bad_escape(const std::string& pattern, std::size_t backslash, bool in_class,
                       const std::string& field) {
  const char e = pattern[backslash + 1];
  if (e == 'c' || (in_class && (e == '8' || e == '9')))
    throw ConfigError(field, std::string("bad escape \\") + e + " at position " +
                                 std::to_string(code_points_before(pattern, backslash)) +
                                 ", as Python says");
}

// Python's group reference \N or \NN at pattern[backslash] (outside a class,
// no octal escape): its digits, which ICU reads as given. Python reads up to
// two digits, where ICU reads \10 as \1 then '0' when there is no group 10:
// a reference past the groups opened before it, or to one still open, is
// refused as Python refuses it.
std::string group_reference(const std::string& pattern, std::size_t backslash, int groups_before,
                            const std::vector<int>& open_groups, const std::string& field) {
  const auto digit = [&](std::size_t k) { return k < pattern.size() && pattern[k] >= '0' && pattern[k] <= '9'; };
  const std::size_t length = digit(backslash + 2) ? 2 : 1;
  const std::string digits = pattern.substr(backslash + 1, length);
  const int group = std::stoi(digits);
  if (group > groups_before)
    throw ConfigError(field, "invalid group reference " + std::to_string(group) + " at position " +
                                 std::to_string(code_points_before(pattern, backslash + 1)) +
                                 ", as Python says");
  if (std::find(open_groups.begin(), open_groups.end(), group) != open_groups.end())
    throw ConfigError(field, "cannot refer to an open group at position " +
                                 std::to_string(code_points_before(pattern, backslash)) +
                                 ", as Python says");
  return "\\" + digits;
}

// Where ICU's parse error lies in the user's pattern, in code points from
// its start as Python counts positions; empty when it cannot be told. ICU
// gives the line and the characters read on it (the last one the culprit),
// counting a line break as Python's `re` never does.
std::string error_position(const TranslatedPattern& t, const std::string& pattern, const UParseError& where) {
  if (where.line < 1 || where.offset < 0) return "";
  if (where.line == 1 && where.offset == 0) return " at position 0";
  std::int32_t line = 1, column = 0;
  char32_t last = 0;
  std::size_t i = 0;
  while (i < t.icu.size()) {
    const std::size_t start = i;
    const char32_t c = next_code_point(t.icu, i);
    if (c == U'\r' || c == 0x85 || c == 0x2028 || (c == U'\n' && last != U'\r')) {
      ++line;
      column = 0;
    } else if (c != U'\n') {
      ++column;
    }
    last = c;
    if (line == where.line && column == where.offset)
      return " at position " + std::to_string(code_points_before(pattern, t.source[start]));
  }
  return "";
}

}  // namespace

struct Analyzer::Pattern {
  std::unique_ptr<icu::RegexPattern> regex;
  // The pattern with its empty matches refused: where Python's re.findall
  // goes on after an empty match (see match_pattern).
  std::unique_ptr<icu::RegexPattern> nonempty;
  std::string field;  // how errors name the pattern ("vectorizer.token_pattern")
};

// ICU's limit on one match, in its steps ("of the order of milliseconds";
// 30,000 of them took 3 s here on (?:bx|)*?a, and no real token takes one).
constexpr std::int32_t kMatchTimeLimit = 30000;

struct Analyzer::Scratch::Matcher {
  std::unique_ptr<icu::RegexMatcher> regex;
  std::unique_ptr<icu::RegexMatcher> nonempty;
  UText text = UTEXT_INITIALIZER;

  explicit Matcher(const Pattern& pattern) {
    UErrorCode status = U_ZERO_ERROR;
    regex.reset(pattern.regex->matcher(status));
    nonempty.reset(pattern.nonempty->matcher(status));
    if (U_FAILURE(status)) throw Error(std::string("ICU regex matcher: ") + u_errorName(status));
    // A pattern ICU never finishes on (a lazy *? or +? over a group that
    // matches empty, such as (?:bx|)*?a on "b", loops in ICU 72) fails
    // instead of hanging the run.
    regex->setTimeLimit(kMatchTimeLimit, status);
    nonempty->setTimeLimit(kMatchTimeLimit, status);
    // Lookbehinds and `^` see the whole document, not the region's start.
    nonempty->useTransparentBounds(true);
    nonempty->useAnchoringBounds(false);
  }
  ~Matcher() { utext_close(&text); }
};

Analyzer::Scratch::Scratch() = default;
Analyzer::Scratch::~Scratch() = default;
Analyzer::Scratch::Scratch(Scratch&&) noexcept = default;

TranslatedPattern translate_python_pattern(const std::string& pattern, const std::string& field) {
  const std::string w = word_set();
  const std::string boundary = "(?:(?<=" + w + ")(?!" + w + ")|(?<!" + w + ")(?=" + w + "))";
  const std::string not_boundary = "(?:(?<=" + w + ")(?=" + w + ")|(?<!" + w + ")(?!" + w + "))";
  TranslatedPattern t;
  std::string& out = t.icu;
  int class_depth = 0;
  ClassPosition position = ClassPosition::kStart;  // in the innermost [...]
  int groups = 0;                // capturing groups opened so far
  std::vector<int> open_groups;  // per open '(': its group number, 0 if it captures none
  std::size_t at = 0;            // where the construct being translated starts
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    t.source.resize(out.size(), at);
    at = i;
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      if (class_depth > 0) position = after_member(position);
      if (const std::size_t length = octal_escape_length(pattern, i + 1, class_depth > 0); length > 0) {
        out += octal_escape(pattern, i, length, field);
        i += length;
        continue;
      }
      refuse_bad_escape(pattern, i, class_depth > 0, field);
      if (class_depth == 0 && pattern[i + 1] >= '1' && pattern[i + 1] <= '9') {
        const std::string reference = group_reference(pattern, i, groups, open_groups, field);
        out += reference;
        i += reference.size() - 1;
        continue;
      }
      const char e = pattern[++i];
      switch (e) {
        case 'w': out += w; break;
        case 'W': out += complement(w); break;
        case 'd': out += digit_set(); break;
        case 'D': out += complement(digit_set()); break;
        case 's': out += space_set(); break;
        case 'S': out += complement(space_set()); break;
        case 'b': out += class_depth > 0 ? "\\x08" : boundary; break;
        case 'B':
          if (class_depth > 0) throw ConfigError(field, "\\B inside [...] is not a Python escape");
          out += not_boundary;
          break;
        case 'Z': out += "\\z"; break;
        case 'v': out += "\\x0b"; break;  // Python's vertical tab; ICU's \v is a class
        default: out += '\\'; out += e;
      }
      continue;
    }
    if (class_depth > 0) {
      if (c == '-') {
        // ICU reads "--" as a set difference: a '-' Python takes as a
        // member ([+--], [--/]) is escaped.
        const bool range = position == ClassPosition::kMember && i + 1 < pattern.size() && pattern[i + 1] != ']';
        out += range ? "-" : "\\-";
        position = range ? ClassPosition::kRangeDash : after_member(position);
        continue;
      }
      // A ']' first in a class (after '[' or '[^') is a member, as in Python.
      if (c == ']' && position != ClassPosition::kStart) --class_depth;
      position = after_member(position);
      // Python's literals that ICU's sets would read as syntax (a nested
      // set, a string {ab}, an operator, a variable).
      if (std::string_view("[{}&$").find(c) != std::string_view::npos) out += '\\';
      out += c;
      continue;
    }
    if (c == '[') {
      ++class_depth;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      position = ClassPosition::kStart;
      continue;
    }
    if (c == '(') {
      const bool captures = pattern.compare(i, 2, "(?") != 0 || pattern.compare(i, 4, "(?P<") == 0;
      open_groups.push_back(captures ? ++groups : 0);
    }
    if (c == ')' && !open_groups.empty()) open_groups.pop_back();
    if (c == '{' && i + 1 < pattern.size() && pattern[i + 1] == ',') {
      // Python's {,n} is {0,n}; ICU needs the 0.
      std::size_t j = i + 2;
      while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') ++j;
      if (j > i + 2 && j < pattern.size() && pattern[j] == '}') {
        out += "{0";
        continue;
      }
    }
    if (c == '(' && pattern.compare(i, 3, "(?(") == 0)
      throw ConfigError(field, "the conditional group at position " +
                                   std::to_string(code_points_before(pattern, i)) +
                                   ", (?(1)yes|no) or (?(name)yes|no), is not supported (ICU's regex "
                                   "engine has none)");
    if (c == '(' && pattern.compare(i, 3, "(?P") == 0) {
      if (pattern.compare(i, 4, "(?P<") == 0) {
        // ICU's group names are ASCII letters and digits: a Python name
        // with '_' or other letters gets one of those (scikit-learn reads
        // the group by number, never by name).
        const std::size_t end = pattern.find('>', i + 4);
        const std::string name = pattern.substr(i + 4, end == std::string::npos ? 0 : end - i - 4);
        const bool icu_name = !name.empty() && std::isalpha(static_cast<unsigned char>(name[0])) &&
                              std::all_of(name.begin(), name.end(), [](char ch) {
                                return std::isalnum(static_cast<unsigned char>(ch)) != 0;
                              });
        out += "(?<" + (icu_name || end == std::string::npos ? name : "bagelgroup" + std::to_string(i)) + ">";
        i = end == std::string::npos ? i + 3 : end;
        continue;
      }
      throw ConfigError(field, "Python's (?P=name) back-references are not supported; use \\k<name>");
    }
    if (c == '(' && pattern.compare(i, 2, "(?") == 0) {
      // Inline flags: (?u) is Python's default for str patterns and goes;
      // (?a) and (?L) change \w's meaning in ways ICU has no switch for.
      std::size_t j = i + 2;
      std::string flags;
      while (j < pattern.size() && std::string_view("aiLmsux").find(pattern[j]) != std::string_view::npos)
        flags += pattern[j++];
      if (!flags.empty() && j < pattern.size() && (pattern[j] == ')' || pattern[j] == ':' || pattern[j] == '-')) {
        if (flags.find_first_of("aL") != std::string::npos)
          throw ConfigError(field, "the (?a) and (?L) flags are not supported (Unicode matching only)");
        std::string kept;
        for (const char f : flags)
          if (f != 'u') kept += f;
        if (kept.empty() && pattern[j] == ')') {
          i = j;
          continue;
        }
        out += "(?" + kept;
        i = j - 1;
        continue;
      }
    }
    out += c;
  }
  t.source.resize(out.size(), at);
  t.source.push_back(pattern.size());
  return t;
}

Analyzer::Analyzer(AnalyzerOptions options, const std::string& field_prefix)
    : options_(std::move(options)), word_chars_(&word_chars()) {
  if (options_.ngram_min < 1 || options_.ngram_max < options_.ngram_min)
    throw ConfigError(field_prefix + "ngram_range",
                      "expected [min_n, max_n] with 1 <= min_n <= max_n, found [" +
                          std::to_string(options_.ngram_min) + ", " +
                          std::to_string(options_.ngram_max) + "]");
  default_pattern_ = options_.token_pattern == kDefaultTokenPattern;
  if (!default_pattern_) {
    const std::string field = field_prefix + "token_pattern";
    const TranslatedPattern translation = translate_python_pattern(options_.token_pattern, field);
    const std::string& translated = translation.icu;
    UParseError where{};
    UErrorCode status = U_ZERO_ERROR;
    pattern_ = std::make_unique<Pattern>();
    pattern_->field = field;
    // UNIX_LINES: only '\n' ends a line for '.', '^' and '$', as in Python
    // (ICU also ends lines at \r, \f, \v, U+0085, U+2028 and U+2029).
    pattern_->regex.reset(icu::RegexPattern::compile(
        icu::UnicodeString::fromUTF8(translated), UREGEX_UNIX_LINES, where, status));
    if (U_FAILURE(status))
      throw ConfigError(field, "not a regular expression bagel can run (" + std::string(u_errorName(status)) +
                                   error_position(translation, options_.token_pattern, where) +
                                   "): " + options_.token_pattern);
    status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> probe(pattern_->regex->matcher(status));
    const int groups = U_SUCCESS(status) ? probe->groupCount() : 0;
    if (groups > 1)
      throw ConfigError(field, "More than 1 capturing group in token pattern. Only a single group "
                               "should be captured.");
    group_ = groups;
    pattern_->nonempty = compile_nonempty(translated, field);
  }
  for (const std::string& word : options_.stop_words) stop_set_.insert(word);
}

Analyzer::~Analyzer() = default;
Analyzer::Analyzer(Analyzer&&) noexcept = default;
Analyzer& Analyzer::operator=(Analyzer&&) noexcept = default;

void Analyzer::split(std::string_view document, Scratch& scratch) const {
  // ASCII text under the default pattern: lowering it is A-Z to a-z, and
  // stripping accents leaves it as it is.
  if (default_pattern_ && scan_ascii_words(document, scratch)) {
    drop_stop_words(scratch.tokens_);
    return;
  }
  tokenize(preprocess(document, scratch), scratch);
}

bool Analyzer::scan_ascii_words(std::string_view document, Scratch& scratch) const {
  const std::size_t room = ascii_words_room(document.size());
  if (room > scratch.ascii_room_) {
    scratch.ascii_room_ = std::max(room, 2 * scratch.ascii_room_);
    scratch.ascii_ = std::make_unique_for_overwrite<char[]>(scratch.ascii_room_);
  }
  return ascii_words(document, options_.lowercase, scratch.ascii_.get(), scratch.tokens_);
}

std::string_view Analyzer::preprocess(std::string_view document, Scratch& scratch) const {
  std::string_view text = document;
  if (options_.lowercase) {
    python_lower(text, scratch.lowered_);
    text = scratch.lowered_;
  }
  if (options_.strip_accents == StripAccents::unicode) {
    strip_accents_unicode(text, scratch.stripped_);
    text = scratch.stripped_;
  } else if (options_.strip_accents == StripAccents::ascii) {
    strip_accents_ascii(text, scratch.stripped_);
    text = scratch.stripped_;
  }
  return text;
}

void Analyzer::tokenize(std::string_view text, Scratch& scratch) const {
  if (default_pattern_)
    scan_words(text, scratch.tokens_);
  else
    match_pattern(text, scratch);
  drop_stop_words(scratch.tokens_);
}

std::vector<std::string> Analyzer::inconsistent_stop_words() const {
  Scratch scratch;
  std::set<std::string> found;
  for (const std::string& word : options_.stop_words) {
    const std::string_view text = preprocess(word, scratch);
    if (default_pattern_)
      scan_words(text, scratch.tokens_);
    else
      match_pattern(text, scratch);
    for (const std::string_view token : scratch.tokens_)
      if (!stop_set_.contains(token)) found.emplace(token);
  }
  return {found.begin(), found.end()};
}

void Analyzer::drop_stop_words(std::vector<std::string_view>& tokens) const {
  if (stop_set_.empty()) return;
  std::size_t kept = 0;
  for (const std::string_view token : tokens)
    if (!stop_set_.contains(token)) tokens[kept++] = token;
  tokens.resize(kept);
}

// `\b\w\w+\b` found by hand: every maximal run of word characters two code
// points long or longer (a match can only start where a run starts, and
// \w\w+ then takes the whole run).
void Analyzer::scan_words(std::string_view text, std::vector<std::string_view>& tokens) const {
  tokens.clear();
  const WordChars& word = *word_chars_;
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    const std::size_t start = i;
    const auto b = static_cast<unsigned char>(text[i]);
    const bool is_word = b < 0x80 ? (++i, kAsciiWord[b]) : word.contains(next_code_point(text, i));
    if (!is_word) continue;
    std::size_t length = 1;
    while (i < size) {
      const auto d = static_cast<unsigned char>(text[i]);
      if (d < 0x80) {
        if (!kAsciiWord[d]) break;
        ++i;
      } else {
        std::size_t j = i;
        if (!word.contains(next_code_point(text, j))) break;
        i = j;
      }
      ++length;
    }
    if (length >= 2) tokens.push_back(text.substr(start, i - start));
  }
}

// re.findall over ICU: non-overlapping matches left to right, empty matches
// included; with a group, the group's text ("" when it did not take part).
// An empty match may follow the previous match (as since Python 3.7), and
// after an empty match at p Python first tries for a non-empty match at p
// (the first its backtracking finds) before moving on; ICU's find() moves
// on at once, so that try is the `nonempty` pattern's.
void Analyzer::match_pattern(std::string_view text, Scratch& scratch) const {
  std::vector<std::string_view>& tokens = scratch.tokens_;
  tokens.clear();
  UErrorCode status = U_ZERO_ERROR;
  if (!scratch.matcher_) scratch.matcher_ = std::make_unique<Scratch::Matcher>(*pattern_);
  Scratch::Matcher& m = *scratch.matcher_;
  utext_openUTF8(&m.text, text.data(), static_cast<std::int64_t>(text.size()), &status);
  m.regex->reset(&m.text);
  const auto size = static_cast<std::int64_t>(text.size());
  bool nonempty_reset = false;  // m.nonempty reads this document
  std::int64_t restart = -1;    // where to search after a match the nonempty pattern found
  while (U_SUCCESS(status) && (restart < 0 ? m.regex->find(status) : m.regex->find(restart, status))) {
    restart = -1;
    add_token(*m.regex, group_, text, tokens, status);
    const std::int64_t at = m.regex->end64(status);
    if (at == size || m.regex->start64(status) != at) continue;
    if (!nonempty_reset) {
      m.nonempty->reset(&m.text);
      nonempty_reset = true;
    }
    m.nonempty->region(at, size, status);
    if (m.nonempty->lookingAt(status)) {
      add_token(*m.nonempty, group_, text, tokens, status);
      restart = m.nonempty->end64(status);
    }
  }
  if (status == U_REGEX_TIME_OUT)
    throw ConfigError(pattern_->field,
                      "a match ran past ICU's time limit on the document " + document_start(text) +
                          ": the pattern backtracks without end on it (ICU never finishes a lazy *? "
                          "or +? over a group that matches empty, such as (?:bx|)*?a); write the "
                          "repetition greedy or without the empty branch");
  if (U_FAILURE(status)) throw Error(std::string("token_pattern: ICU regex: ") + u_errorName(status));
}

}  // namespace bagel
