// One depth limit for every JSON bagel parses, and nlohmann's raw messages
// turned into bagel's: a file nested a million deep must be an error, not a
// stack overflow in whatever copies the value first.
#include <gtest/gtest.h>

#include <string>

#include "bagel/error.h"
#include "bagel/json_parse.h"

namespace bagel {
namespace {

std::string nested_arrays(int depth) {
  return std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']');
}

std::string error_of(const std::string& text) {
  try {
    parse_json(text, "cfg.json");
  } catch (const FileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(JsonParse, NestingUpToTheLimitIsAccepted) {
  EXPECT_NO_THROW(parse_json(nested_arrays(kMaxJsonDepth), "cfg.json"));
  EXPECT_NO_THROW(parse_json(R"({"a": {"b": [1, {"c": 2}]}})", "cfg.json"));
}

TEST(JsonParse, NestingBeyondTheLimitIsAFileErrorNamingTheFile) {
  const std::string msg = error_of(nested_arrays(kMaxJsonDepth + 1));
  EXPECT_EQ(msg.rfind("cfg.json: nested deeper than 64", 0), 0u) << msg;
  EXPECT_NE(error_of("{\"config\": " + nested_arrays(100) + "}").find("nested deeper"),
            std::string::npos);
}

TEST(JsonParse, AMillionLevelsDeepIsRefusedWithoutOverflowingTheStack) {
  const std::string msg = error_of("{\"config\": " + nested_arrays(1000000) + "}");
  EXPECT_NE(msg.find("nested deeper than 64"), std::string::npos) << msg;
}

TEST(JsonParse, NumberOverflowIsNamedWithoutTheLibraryPrefix) {
  const std::string msg = error_of(R"({"optimizer": {"l2": 1e999}})");
  EXPECT_NE(msg.find("cfg.json: invalid JSON: number overflow parsing '1e999'"), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("beyond the range of a double"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
}

TEST(JsonParse, SyntaxErrorsGiveLineAndColumn) {
  const std::string msg = error_of("{\n  \"a\": 1,\n  oops\n}");
  EXPECT_NE(msg.find("line 3"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("[json.exception"), std::string::npos) << msg;
}

TEST(JsonParse, AKeyGivenTwiceInOneObjectIsAnErrorNamingItsPath) {
  EXPECT_EQ(error_of(R"({"optimizer": {"epochs": 2, "l2": 0, "epochs": 3}})"),
            "cfg.json: the key 'optimizer.epochs' appears twice; give each key once");
  EXPECT_EQ(error_of(R"({"a": 1, "a": 1})"), "cfg.json: the key 'a' appears twice; give each key once");
  // The same key in different objects, in arrays of objects, after a closed
  // object: each once in its own object.
  EXPECT_NO_THROW(parse_json(R"({"train": {"features": "a"}, "valid": {"features": "b"},
                                 "list": [{"k": 1}, {"k": 2}], "x": {"y": {"k": 1}, "k": 2}})",
                             "cfg.json"));
  try {
    parse_json_value(R"({"epochs": 1, "epochs": 2})", "--set optimizer={...}");
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--set optimizer={...}: the key 'epochs' appears twice; give each key once");
  }
}

TEST(JsonParse, CommentsAreAllowed) {
  EXPECT_EQ(parse_json("{\"a\": 1 // one\n}", "cfg.json").at("a"), 1);
}

TEST(JsonParseValue, NotJsonIsNoValue) {
  EXPECT_FALSE(parse_json_value("dense", "--set model.layer=dense").has_value());
  EXPECT_FALSE(parse_json_value("1e999x", "--set output=1e999x").has_value());
  EXPECT_EQ(parse_json_value("[1, 2]", "--set x=[1, 2]")->size(), 2u);
  // A number past a double's range is a number all the same, not a string.
  try {
    parse_json_value("1e999", "--set optimizer.l2=1e999");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--set optimizer.l2=1e999: number overflow parsing '1e999' (a number "
                           "beyond the range of a double)");
  }
}

TEST(JsonParseValue, AStringOpeningWithABracketIsShownAsTheJsonStringToGive) {
  const auto message_of = [](const std::string& text, const std::string& where) {
    try {
      parse_json_value(text, where);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message_of("[a-z]+", "--set token_pattern=[a-z]+"),
            "--set token_pattern=[a-z]+: starts as JSON but is not valid JSON (parse error at line 1, "
            "column 2: syntax error while parsing value - invalid literal; last read: '[a'); if it is "
            "meant as an array, fix the JSON; if it is a string, give it as a JSON string: "
            "--set 'token_pattern=\"[a-z]+\"'");
  // Backslashes doubled for JSON, a single quote escaped for the shell.
  EXPECT_NE(message_of("{\\d'", "--set x={\\d'").find(R"(--set 'x="{\\d'\''"')"), std::string::npos);
  // Where the value is not the end of a --set, the rule alone.
  EXPECT_NE(message_of("[x", "value").find("give it as a JSON string (in double quotes"), std::string::npos);
  EXPECT_NE(message_of("\"\\d+\"", "--set p=\"\\d+\"").find("a backslash is written \\\\"),
            std::string::npos);
}

TEST(JsonParseValue, DeepValueIsAUsageErrorNamingTheSet) {
  const std::string deep = nested_arrays(60000);
  try {
    parse_json_value(deep, "--set optimizer.epochs=" + deep);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), "--set optimizer.epochs=" + deep.substr(0, 37) + "...");
    EXPECT_NE(std::string(e.what()).find("nested deeper than 64"), std::string::npos);
  }
}

TEST(JsonWritable, TextThatIsNotUtf8IsAFileErrorBeforeAnyWork) {
  EXPECT_NO_THROW(check_json_writable({{"output", "runs/\xC3\xA9t\xC3\xA9"}}, "cfg.json"));
  try {
    check_json_writable({{"train", {{"features", "data/\xFF.npz"}}}}, "cfg.json");
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    EXPECT_NE(std::string(e.what()).find("cfg.json: holds text that is not UTF-8"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bagel
