#include "bagel/labels.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/mapped_file.h"
#include "bagel/npy.h"
#include "bagel/text/utf8.h"

namespace bagel {

namespace {

constexpr std::size_t kClassesShownInErrors = 5;
// A stream of labels is taken in blocks of about this size (or what has
// arrived), so that it is never held twice, as text and as labels.
constexpr std::size_t kStreamBlockBytes = std::size_t{1} << 20;
// Every integer up to 2^53 in magnitude is a double; beyond, neighbours share one.
constexpr std::int64_t kExactInDouble = std::int64_t{1} << 53;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Direction of a number from_chars found out of even long double's range:
// a negative exponent means it underflows. Only reached for absurd inputs
// such as "1e-99999".
double beyond_range(std::string_view number) {
  const bool negative = !number.empty() && number.front() == '-';
  const auto e = number.find_first_of("eE");
  const bool underflow = e != std::string_view::npos && e + 1 < number.size() &&
                         number[e + 1] == '-';
  const double magnitude = underflow ? 0.0 : HUGE_VAL;
  return negative ? -magnitude : magnitude;
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

// `where` is "" when `line` says where; else "row N: ".
void check_utf8(std::string_view label, const std::string& source, const std::string& where,
                std::int64_t line) {
  const std::size_t bad = invalid_utf8_at(label);
  if (bad == std::string_view::npos) return;
  throw FileError(source,
                  where + "label '" + detail::printable(label.substr(0, 40)) +
                      "' is not UTF-8 text (byte " + std::to_string(bad + 1) +
                      "); save the labels as UTF-8",
                  line);
}

// "'a', 'b', 'c', ... (7 in all)"
std::string some_classes(const std::vector<std::string>& names) {
  std::string out;
  const std::size_t shown = std::min(names.size(), kClassesShownInErrors);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += in_quotes(names[i]);
  }
  if (shown < names.size()) out += ", ... (" + std::to_string(names.size()) + " in all)";
  return out;
}

bool has_npy_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".npy";
}

// float32 labels are named by their shortest float32 decimal (0.1f is the
// class "0.1", not "0.10000000149011612"), which is what numpy prints.
std::vector<double> float32_as_decimal(const std::vector<float>& values) {
  std::vector<double> out(values.size());
  char buf[64];
  for (std::size_t i = 0; i < values.size(); ++i) {
    const auto end = std::to_chars(buf, buf + sizeof buf, values[i]).ptr;
    std::from_chars(buf, end, out[i]);
  }
  return out;
}

// The integers' digits where one of them is beyond what a double holds
// exactly; nullopt where doubles hold them all.
template <class Int>
std::optional<std::vector<std::string>> integers_beyond_double(const std::vector<Int>& ints) {
  const auto beyond = [](Int v) {
    if constexpr (std::is_signed_v<Int>) return v > kExactInDouble || v < -kExactInDouble;
    else return v > static_cast<std::uint64_t>(kExactInDouble);
  };
  if (std::none_of(ints.begin(), ints.end(), beyond)) return std::nullopt;
  std::vector<std::string> text(ints.size());
  for (std::size_t i = 0; i < ints.size(); ++i) text[i] = std::to_string(ints[i]);
  return text;
}

RawLabels npy_labels(const NpyArray& array, const std::string& source) {
  const NpyHeader& h = array.header;
  if (h.shape.size() != 1)
    throw FileError(source, "labels must be a 1-d array, found " +
                                std::to_string(h.shape.size()) + " dimensions");
  if (h.dtype == DType::kUnicode || h.dtype == DType::kBytes) {
    std::vector<std::string> names = npy_to_strings(h, array.payload(), source);
    // UTF-32 items were checked as they were decoded; bytes may be anything.
    if (h.dtype == DType::kBytes)
      for (std::size_t i = 0; i < names.size(); ++i)
        check_utf8(names[i], source, "row " + std::to_string(i) + ": ", 0);
    return make_labels(std::move(names), source);
  }
  if (h.dtype == DType::kFloat32)
    return make_labels(float32_as_decimal(npy_to_float32(h, array.payload(), source)), source);
  // 64-bit integers beyond 2^53 by their digits (numeric_label_name), not a double.
  if (h.dtype == DType::kInt64)
    if (auto digits = integers_beyond_double(npy_to_int64(h, array.payload(), source)))
      return make_labels(std::move(*digits), source);
  if (h.dtype == DType::kUInt64)
    if (auto digits = integers_beyond_double(npy_to_uint64(h, array.payload(), source)))
      return make_labels(std::move(*digits), source);
  RawLabels raw = make_labels(npy_to_float64(h, array.payload(), source), source);
  if (h.dtype == DType::kBool)
    for (const double v : raw.values) raw.written.emplace_back(v != 0 ? "True" : "False");
  return raw;
}

// One label per line, fed as text arrives (a mapped file is a single
// block; a stream comes in blocks of whole lines). Blank lines are only
// allowed at the end (editors add them); in the middle they would shift
// every later label onto the wrong row.
class TextLabelReader {
 public:
  explicit TextLabelReader(std::string source) : source_(std::move(source)) {}

  void add(std::string_view text) {
    constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
    if (line_ == 0 && text.starts_with(kUtf8Bom)) text.remove_prefix(kUtf8Bom.size());
    while (!text.empty()) {
      ++line_;
      const auto eol = text.find('\n');
      const std::string_view label = trim(text.substr(0, eol));
      text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
      if (label.empty()) {
        if (first_blank_ == 0) first_blank_ = line_;
        continue;
      }
      if (first_blank_ != 0)
        throw FileError(source_, "blank line, expected one label per line", first_blank_);
      check_utf8(label, source_, "", line_);
      labels_.emplace_back(label);
    }
  }

  RawLabels finish() {
    RawLabels raw = make_labels(std::move(labels_), source_);
    raw.lines.resize(raw.size());
    for (std::size_t i = 0; i < raw.size(); ++i) raw.lines[i] = static_cast<std::int64_t>(i) + 1;
    return raw;
  }

 private:
  std::string source_;
  std::vector<std::string> labels_;
  std::int64_t line_ = 0;
  std::int64_t first_blank_ = 0;  // first blank line since the last label
};

RawLabels read_text_labels(const std::string& path) {
  const MappedFile file(path);
  const auto bytes = file.bytes();
  TextLabelReader reader(path);
  reader.add(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  return reader.finish();
}

// Text block by block as it arrives, or an .npy (by name or magic) whole.
RawLabels read_stream_labels(const std::string& path) {
  InputStream in(path);
  RawLabels raw;
  if (has_npy_extension(path) || has_npy_magic(in.peek(kNpyMagicSize))) {
    NpyArray array;
    array.bytes = in.read_all();  // the peeked bytes included
    array.header = parse_npy_header(array.bytes, in.name());
    raw = npy_labels(array, in.name());
  } else {
    TextLabelReader reader(in.name());
    LineBlocks blocks(in, kStreamBlockBytes);
    for (auto block = blocks.next(); !block.empty(); block = blocks.next())
      reader.add(std::string_view(block.data(), block.size()));
    raw = reader.finish();
  }
  if (raw.size() == 0)
    throw FileError(input_name(path), "no labels: the stream ended before any label");
  return raw;
}

// The digits of an integer literal ([+-]?[0-9]+) without its '+' and leading
// zeros ("-0" is "0"); nullopt for any other text.
std::optional<std::string> integer_digits(std::string_view text) {
  std::string sign;
  if (!text.empty() && (text.front() == '+' || text.front() == '-')) {
    if (text.front() == '-') sign = "-";
    text.remove_prefix(1);
  }
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const std::size_t first = std::min(text.find_first_not_of('0'), text.size() - 1);
  text.remove_prefix(first);
  return text == "0" ? std::string(text) : sign + std::string(text);
}

// The integral double `value` in full decimal digits ("%.0f" is exact in glibc).
std::string full_digits(double value) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.0f", value == 0 ? 0.0 : value);
  return buf;
}

// The name of a numeric label as written: number_name() of its value, but an
// integer that a double cannot hold (beyond 2^53, "9007199254740993") keeps
// its own digits, so that it stays a class apart from its neighbours.
std::string numeric_label_name(std::string_view text, double value) {
  if (std::fabs(value) >= static_cast<double>(kExactInDouble)) {
    const std::optional<std::string> digits = integer_digits(text);
    if (digits && *digits != full_digits(value)) return *digits;
  }
  return number_name(value);
}

// Numeric class names in order of value. The key is the name's value as a
// long double, which holds every int64 and every double exactly, so that
// integers named by their own digits sort between the doubles around them;
// names of one long double (integers beyond 2^64) by their digits.
void sort_numeric_names(std::vector<std::string>& names) {
  struct Keyed {
    long double value;
    std::string name;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(names.size());
  for (std::string& name : names) {
    long double v = 0;
    std::from_chars(name.data(), name.data() + name.size(), v);
    keyed.push_back({v, std::move(name)});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.value != b.value) return a.value < b.value;
    const bool negative = a.value < 0;  // then both are
    if (a.name.size() != b.name.size()) return (a.name.size() < b.name.size()) != negative;
    return negative ? b.name < a.name : a.name < b.name;
  });
  for (std::size_t i = 0; i < names.size(); ++i) names[i] = std::move(keyed[i].name);
}

}  // namespace

namespace detail {

const char* parse_number(const char* first, const char* last, double& value) {
  const char* start = first;
  // from_chars rejects a leading '+', Python's float() takes one.
  if (first != last && *first == '+') {
    ++first;
    if (first != last && (*first == '+' || *first == '-')) return nullptr;
  }
  auto [end, ec] = std::from_chars(first, last, value);
  if (ec == std::errc::result_out_of_range) {
    // Beyond double range Python gives inf or 0; long double tells which.
    long double wide = 0;
    const auto wide_result = std::from_chars(first, last, wide);
    value = wide_result.ec == std::errc()
                ? static_cast<double>(wide)
                : beyond_range(std::string_view(start, static_cast<std::size_t>(end - start)));
    return end;
  }
  return ec == std::errc() ? end : nullptr;
}

bool parse_finite(std::string_view text, double& value) {
  const char* last = text.data() + text.size();
  return !text.empty() && parse_number(text.data(), last, value) == last && std::isfinite(value);
}

}  // namespace detail

std::string RawLabels::location(std::size_t row) const {
  return row < lines.size() ? "line " + std::to_string(lines[row])
                            : "row " + std::to_string(row);
}

std::string number_name(double value) {
  if (value == 0) return "0";  // also -0
  char buf[64];
  // Python's repr: fixed notation when the decimal exponent is in [-4, 16).
  const double magnitude = std::fabs(value);
  const auto format = magnitude >= 1e-4 && magnitude < 1e16 ? std::chars_format::fixed
                                                            : std::chars_format::scientific;
  const auto end = std::to_chars(buf, buf + sizeof buf, value, format).ptr;
  return std::string(buf, end);
}

RawLabels make_labels(std::vector<std::string> text, const std::string& source) {
  RawLabels raw;
  raw.source = source;
  raw.values.resize(text.size());
  bool numeric = true;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::string_view label = trim(text[i]);
    if (label.empty())
      throw FileError(source, "row " + std::to_string(i) + ": empty label");
    if (label.size() != text[i].size()) text[i] = std::string(label);  // `label` now dangles
    if (numeric && !detail::parse_finite(text[i], raw.values[i])) numeric = false;
  }
  raw.numeric = numeric;
  if (numeric) {
    std::vector<std::string> names(text.size());
    bool as_written = true;
    for (std::size_t i = 0; i < text.size(); ++i) {
      names[i] = numeric_label_name(text[i], raw.values[i]);
      as_written = as_written && names[i] == text[i];
    }
    if (!as_written) raw.written = std::move(text);
    text = std::move(names);
  } else {
    raw.values.clear();
  }
  raw.names = std::move(text);
  return raw;
}

RawLabels make_labels(std::vector<double> values, const std::string& source) {
  RawLabels raw;
  raw.source = source;
  raw.numeric = true;
  raw.names.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]))
      throw FileError(source, "row " + std::to_string(i) + ": label " +
                                  std::to_string(values[i]) + " is not a finite number");
    raw.names.push_back(number_name(values[i]));
  }
  raw.values = std::move(values);
  return raw;
}

RawLabels read_labels(const std::string& path) {
  if (is_stream(path)) return read_stream_labels(path);
  return has_npy_extension(path) ? npy_labels(read_npy(path), path) : read_text_labels(path);
}

Classes Classes::fit(const RawLabels& labels) {
  Classes classes;
  classes.numeric = labels.numeric;
  if (labels.numeric) {
    // The names are canonical (one a value: -0 and 0 are "0"), but integers
    // beyond 2^53 share a double with their neighbours: one class a name.
    std::unordered_set<std::string_view> seen;
    for (const std::string& name : labels.names)
      if (seen.insert(name).second) classes.names.push_back(name);
    sort_numeric_names(classes.names);
  } else {
    classes.names = labels.names;
    // std::string compares as unsigned bytes: code point order for UTF-8.
    std::sort(classes.names.begin(), classes.names.end());
    classes.names.erase(std::unique(classes.names.begin(), classes.names.end()),
                        classes.names.end());
  }
  if (classes.size() < 2) {
    std::string found = "found " + std::to_string(classes.size());
    if (classes.size() == 1) found += " class: " + in_quotes(classes.names[0]);
    throw FileError(labels.source, "needs at least 2 classes, " + found);
  }
  check_class_count(classes.size(), labels.source);
  return classes;
}

void check_class_count(std::size_t count, const std::string& source) {
  if (count <= kMaxClasses) return;
  throw FileError(source, "has " + std::to_string(count) + " distinct classes, more than bagel's " +
                              "limit of " + std::to_string(kMaxClasses) +
                              " (each row costs one multiply-add per class and feature); "
                              "are these labels, or an id per row?");
}

std::vector<std::int32_t> Classes::encode(const RawLabels& labels) const {
  const std::vector<std::string>& keys =
      !numeric && labels.numeric && !labels.written.empty() ? labels.written : labels.names;
  std::unordered_map<std::string_view, std::int32_t> ids;
  ids.reserve(names.size());
  for (std::size_t k = 0; k < names.size(); ++k)
    ids.emplace(names[k], static_cast<std::int32_t>(k));

  std::vector<std::int32_t> out(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto it = ids.find(keys[i]);
    if (it == ids.end()) {
      const std::int64_t line = i < labels.lines.size() ? labels.lines[i] : 0;
      // A line goes into FileError's "file:line:" prefix; a row into the text.
      const std::string where = line > 0 ? "" : labels.location(i) + ": ";
      throw FileError(labels.source,
                      where + "label " + in_quotes(keys[i]) + " is not one of the " +
                          std::to_string(names.size()) + " classes " + some_classes(names),
                      line);
    }
    out[i] = it->second;
  }
  return out;
}

}  // namespace bagel
