// Every JSON bagel reads (a config, a --set value, a model.json) goes through
// here, so that one depth limit holds for all of them. nlohmann's parser is
// iterative, but copying, comparing or dumping a value recurses once per
// level: a 2 MB file nested a million deep overflows the stack in whatever
// touches it first. A depth of kMaxJsonDepth is far beyond any config or
// model.json bagel writes (they nest 4 deep) and far below what a stack holds.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace bagel {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text` (with // and /* */ comments when `comments`), refusing a
// container nested deeper than kMaxJsonDepth as soon as the parser opens it,
// before any deeper value exists, and a key given twice in one object. Throws FileError naming `source` with
// nlohmann's position ("line 3, column 7") and reason without its
// "[json.exception...]" prefix; a number beyond double range is named as
// such.
nlohmann::json parse_json(std::string_view text, const std::string& source,
                          bool comments = true);

// The file at `path`, read whole and parsed as above; `what` names it in
// the error when it cannot be opened ("config file").
nlohmann::json read_json_file(const std::string& path, const std::string& what);

// nlohmann's message for `e` without its "[json.exception.type_error.302] "
// prefix, which means nothing to a user.
std::string json_error_reason(const nlohmann::json::exception& e);

// Throws FileError naming `source` when `j` holds a string that is not
// UTF-8 (a file name is bytes, JSON is text), so that a value that could
// never be written is refused before the work, not when it is saved.
void check_json_writable(const nlohmann::json& j, const std::string& source);

// A `--set KEY=VALUE` value: the JSON it spells, or nullopt when it is not
// valid JSON (the caller takes it as a string). Nesting beyond the limit,
// and a value that starts as JSON does ('"', '[' or '{') but does not parse,
// are a UsageError naming `where` ("--set optimizer.epochs=[[[...").
std::optional<nlohmann::json> parse_json_value(std::string_view text, const std::string& where);

}  // namespace bagel
