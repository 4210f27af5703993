#include "bagel/json_parse.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "bagel/error.h"

namespace bagel {

namespace {

using Json = nlohmann::json;

// Thrown by the parser callback; caught here and turned into the caller's
// error type, so nlohmann's own exception types never leave this file.
struct TooDeep {};
struct DuplicateKey {
  std::string path;  // dotted, "optimizer.epochs"
};

// The parser's callback: refuses a container nested deeper than
// kMaxJsonDepth when it opens, and a key that its object already holds
// (nlohmann keeps the last of the two silently, so a config that sets
// "epochs" twice would train with whichever came last).
class Checks {
 public:
  bool operator()(int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth + 1 > kMaxJsonDepth)
      throw TooDeep{};
    if (event == E::object_start) {
      keys_.emplace_back();
      path_.resize(keys_.size());
    } else if (event == E::object_end) {
      keys_.pop_back();
      path_.resize(keys_.size());
    } else if (event == E::key && !keys_.empty()) {
      const std::string key = parsed.get<std::string>();
      path_.back() = key;
      if (!keys_.back().insert(key).second) {
        std::string dotted;
        for (const std::string& k : path_) dotted += (dotted.empty() ? "" : ".") + k;
        throw DuplicateKey{dotted};
      }
    }
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;  // each open object's keys so far
  std::vector<std::string> path_;            // each open object's current key
};

std::string duplicate(const DuplicateKey& d) {
  return "the key '" + d.path + "' appears twice; give each key once";
}

std::string too_deep() {
  return "nested deeper than " + std::to_string(kMaxJsonDepth) +
         " levels of objects and arrays; bagel's JSON files nest a few levels";
}

// What to do about a --set value that opens as JSON does but does not
// parse. A quoted string: its backslashes are not JSON escapes. A value
// opening with '[' or '{' may be a string that merely starts so (a regular
// expression's class): it must then be a JSON string, and the hint spells
// the --set to type when `where` is "--set KEY=" followed by the value.
std::string not_json_hint(std::string_view text, char first, const std::string& where) {
  if (first == '"') return "in a JSON string a backslash is written \\\\, or give a string without its quotes";
  std::string hint = std::string("if it is meant as ") + (first == '[' ? "an array" : "an object") +
                     ", fix the JSON; if it is a string, give it as a JSON string";
  const std::string_view set = "--set ";
  if (!where.starts_with(set) || !where.ends_with(text) || where.size() < set.size() + text.size())
    return hint + " (in double quotes, a backslash written \\\\)";
  const std::string key = where.substr(set.size(), where.size() - set.size() - text.size());
  // (Bytes that are not UTF-8, which JSON cannot hold, shown as U+FFFD.)
  const std::string quoted =
      key + Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace);
  // For a POSIX shell: in single quotes, only a single quote needs escaping.
  std::string shell;
  for (const char c : quoted) shell += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return hint + ": --set '" + shell + "'";
}

// nlohmann's id of "number overflow parsing '1e400'".
constexpr int kNumberOverflow = 406;

// Whether `text` is one JSON number and nothing else (spaces around it
// aside): "1e400" is, "1e400x" (a string to --set) is not.
bool is_json_number(std::string_view text) {
  static const std::regex number(R"(\s*-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?\s*)");
  return std::regex_match(text.begin(), text.end(), number);
}

}  // namespace

std::string json_error_reason(const Json::exception& e) {
  std::string text = e.what();
  if (text.starts_with("[json.exception.")) {
    const auto end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  if (e.id == kNumberOverflow) text += " (a number beyond the range of a double)";
  return text;
}

Json parse_json(std::string_view text, const std::string& source, bool comments) {
  try {
    return Json::parse(text.begin(), text.end(), Checks{}, /*allow_exceptions=*/true,
                       comments);
  } catch (const TooDeep&) {
    throw FileError(source, too_deep());
  } catch (const DuplicateKey& d) {
    throw FileError(source, duplicate(d));
  } catch (const Json::exception& e) {
    throw FileError(source, "invalid JSON: " + json_error_reason(e));
  }
}

Json read_json_file(const std::string& path, const std::string& what) {
  if (path == "-") {  // standard input, as `vectorize -c -` promises
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    if (std::cin.bad()) throw FileError("<stdin>", "cannot read " + what);
    return parse_json(text, "<stdin>");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw FileError(path, "cannot open " + what);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw FileError(path, "cannot read " + what);
  return parse_json(text, path);
}

void check_json_writable(const Json& j, const std::string& source) {
  try {
    static_cast<void>(j.dump());
  } catch (const Json::type_error& e) {
    throw FileError(source, "holds text that is not UTF-8 (a file name?), which JSON cannot "
                            "hold: " + json_error_reason(e));
  }
}

std::optional<Json> parse_json_value(std::string_view text, const std::string& where) {
  try {
    return Json::parse(text.begin(), text.end(), Checks{}, /*allow_exceptions=*/true);
  } catch (const TooDeep&) {
    // The value itself may be megabytes of brackets: name its start only.
    constexpr std::size_t kShown = 60;
    throw UsageError(where.size() > kShown ? where.substr(0, kShown) + "..." : where, too_deep());
  } catch (const DuplicateKey& d) {
    throw UsageError(where, duplicate(d));
  } catch (const Json::exception& e) {
    // A number past a double's range is still a number: taken as a string,
    // its key would say "expected a number, found a string".
    if (e.id == kNumberOverflow && is_json_number(text)) throw UsageError(where, json_error_reason(e));
    // A value that opens as JSON does (a quote, a bracket) was meant as JSON:
    // taken as a bare string it would keep its quotes, and "\d+" (not a JSON
    // escape) would silently become a pattern that matches quote characters.
    const std::size_t start = text.find_first_not_of(" \t");
    if (start != std::string_view::npos && (text[start] == '"' || text[start] == '[' || text[start] == '{'))
      throw UsageError(where, "starts as JSON but is not valid JSON (" + json_error_reason(e) + "); " +
                                  not_json_hint(text, text[start], where));
    return std::nullopt;
  }
}

}  // namespace bagel
