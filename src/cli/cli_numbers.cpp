#include "cli_numbers.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <system_error>

#include "bagel/labels.h"

namespace bagel::cli {

namespace {

template <class T>
std::optional<T> parse_whole(const std::string& text, std::errc& error) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, value);
  error = ec;
  if (ec != std::errc() || stop != end) return std::nullopt;
  return value;
}

std::string found(const std::string& text) { return ", found '" + text + "'"; }

// from_chars reads "inf" and "nan" too: only finite numbers pass.
std::optional<double> parse_number(const std::string& text) {
  std::errc error{};
  const auto value = parse_whole<double>(text, error);
  if (!value || !std::isfinite(*value)) return std::nullopt;
  return value;
}

CLI::Validator number_check(double lo, bool open, const std::string& what) {
  return CLI::Validator(
      [lo, open, what](const std::string& text) -> std::string {
        const auto value = parse_number(text);
        if (value && (open ? *value > lo : *value >= lo)) return "";
        return "expected " + what + found(text);
      },
      (open ? ">" : ">=") + number_name(lo));
}

}  // namespace

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
  const bool open_top = hi == std::numeric_limits<int>::max();
  const std::string range = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  const std::string what = open_top ? "an integer >= " + std::to_string(lo) : range;
  return CLI::Validator(
      [lo, hi, what, range](const std::string& text) -> std::string {
        std::errc error{};
        const auto value = parse_whole<std::int64_t>(text, error);
        if (value && *value >= lo && *value <= hi) return "";
        // Past the top, even an open one (an int's), the whole range is the news.
        const bool too_large = value ? *value > hi : error == std::errc::result_out_of_range && text[0] != '-';
        return "expected " + (too_large ? range : what) + found(text);
      },
      open_top ? ">=" + std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi));
}

CLI::Validator at_least_one() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        std::errc error{};
        const auto value = parse_whole<std::int64_t>(text, error);
        if (value && *value >= 1) return "";
        if (error == std::errc::result_out_of_range && !text.starts_with('-')) return "";
        return "expected an integer >= 1" + found(text);
      },
      ">=1");
}

CLI::Validator unsigned_64() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        std::errc error{};
        if (parse_whole<std::uint64_t>(text, error)) return "";
        return "expected an integer in [0, 18446744073709551615]" + found(text);
      },
      "");
}

CLI::Validator number_above(double lo) {
  return number_check(lo, true, "a number > " + number_name(lo));
}

CLI::Validator number_at_least(double lo) {
  return number_check(lo, false, "a number >= " + number_name(lo));
}

CLI::Validator probability() {
  return CLI::Validator(
      [](const std::string& text) -> std::string {
        const auto value = parse_number(text);
        if (value && *value >= 0 && *value <= 1) return "";
        return "expected a probability in [0, 1]" + found(text);
      },
      "0..1");
}

}  // namespace bagel::cli
