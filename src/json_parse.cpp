#include "bagel/json_parse.h"

#include <fstream>
#include <iterator>

#include "bagel/error.h"

namespace bagel {

namespace {

using Json = nlohmann::json;

// Thrown by the parser callback; caught here and turned into the caller's
// error type, so nlohmann's own exception types never leave this file.
struct TooDeep {};

// Called at the start of every object and array with the number of
// containers already open around it.
bool limit_depth(int depth, Json::parse_event_t event, Json& /*parsed*/) {
  if ((event == Json::parse_event_t::object_start || event == Json::parse_event_t::array_start) &&
      depth + 1 > kMaxJsonDepth)
    throw TooDeep{};
  return true;
}

std::string too_deep() {
  return "nested deeper than " + std::to_string(kMaxJsonDepth) +
         " levels of objects and arrays; bagel's JSON files nest a few levels";
}

}  // namespace

std::string json_error_reason(const Json::exception& e) {
  std::string text = e.what();
  if (text.starts_with("[json.exception.")) {
    const auto end = text.find("] ");
    if (end != std::string::npos) text.erase(0, end + 2);
  }
  if (e.id == 406) text += " (a number beyond the range of a double)";
  return text;
}

Json parse_json(std::string_view text, const std::string& source, bool comments) {
  try {
    return Json::parse(text.begin(), text.end(), limit_depth, /*allow_exceptions=*/true,
                       comments);
  } catch (const TooDeep&) {
    throw FileError(source, too_deep());
  } catch (const Json::exception& e) {
    throw FileError(source, "invalid JSON: " + json_error_reason(e));
  }
}

Json read_json_file(const std::string& path, const std::string& what) {
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
    return Json::parse(text.begin(), text.end(), limit_depth, /*allow_exceptions=*/true);
  } catch (const TooDeep&) {
    // The value itself may be megabytes of brackets: name its start only.
    constexpr std::size_t kShown = 60;
    throw UsageError(where.size() > kShown ? where.substr(0, kShown) + "..." : where, too_deep());
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

}  // namespace bagel
