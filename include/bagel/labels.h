// Labels: raw per-row labels from a file, and the class list that maps them
// to ids 0..K-1.
//
// Labels are numeric when every one of them parses fully as a finite number
// (svmlight labels always do); numeric classes sort by value and are named by
// the shortest decimal that round-trips ("+1", "1.0" and "01" are the class
// "1"), written as Python's repr writes floats but without a trailing ".0".
// Otherwise labels are strings, kept as written (trimmed), sorted by byte
// order, which for UTF-8 is code point order (as numpy sorts them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

struct RawLabels {
  std::string source;               // file name, for errors
  std::vector<std::string> names;   // canonical name of each row's label
  std::vector<double> values;       // numeric value of each row, when numeric
  bool numeric = false;
  // Each row's label as written, where some numeric label's differs from
  // its name: text ("01", "1.0" for the class "1"), or an .npy of bools
  // ("False", "True", as Python's str writes them). A model whose classes
  // are strings (fitted in Python on "01" and "1") matches these; empty
  // when the names are as written.
  std::vector<std::string> written;
  // Line of each row in `source` (text files); empty: errors name the row.
  std::vector<std::int64_t> lines;
  std::size_t size() const { return names.size(); }
  // "line 12" (lines count from 1) or "row 3" (rows count from 0, as
  // numpy indexes them and bagel's other row numbers do), for error messages.
  std::string location(std::size_t row) const;
};

// Builds RawLabels from strings as read (text files, unicode .npy): trims
// ASCII whitespace, decides numeric vs string, canonicalises numeric names.
// An empty label is an error naming its row.
RawLabels make_labels(std::vector<std::string> text, const std::string& source);

// Numeric labels (svmlight, numeric .npy). A non-finite value is an error.
RawLabels make_labels(std::vector<double> values, const std::string& source);

// `.npy` (1-d: integers, floats, bools or unicode strings) or a text file: one
// label per line, trimmed, CRLF accepted; a blank line before the last label
// is an error naming the line, blank lines at the end are ignored. A label
// that is not UTF-8 is an error naming its line (or row): class names go into
// model.json, which is JSON and so UTF-8.
// A stream ("-", a pipe: input_stream.h) is an .npy when named so or when it
// starts with the .npy magic, and is then read whole; text is read block by
// block as it arrives. A stream with no label is an error ("no labels"); an
// empty regular file gives no labels (callers say what they expected).
RawLabels read_labels(const std::string& path);

// Canonical name of a number: shortest round-trip digits, fixed notation for
// 1e-4 <= |v| < 1e16 and scientific otherwise (Python's repr rule), no ".0"
// on integers, "-0" as "0". Examples: 1 -> "1", 0.1 -> "0.1", 1e-5 -> "1e-05".
std::string number_name(double value);

// The most classes bagel trains or loads. Each row costs K multiply-adds
// per feature and an epoch over a million classes takes hours, where a
// K-way softmax is the wrong tool anyway (hierarchical or sampled softmax).
inline constexpr std::size_t kMaxClasses = 10000;

// Throws FileError naming `source` when `count` exceeds kMaxClasses.
void check_class_count(std::size_t count, const std::string& source);

// Sorted distinct classes.
struct Classes {
  std::vector<std::string> names;
  bool numeric = false;
  std::size_t size() const { return names.size(); }
  // Sorted distinct labels of `labels`. Throws FileError naming
  // labels.source if there are fewer than 2 classes or more than kMaxClasses.
  static Classes fit(const RawLabels& labels);
  // Id of each row's label. Throws FileError naming labels.source, the row
  // (or line) and the label of the first one that is not a class. String
  // classes match numeric labels as written (RawLabels::written).
  std::vector<std::int32_t> encode(const RawLabels& labels) const;
};

namespace detail {

// Parses a number as Python's float() does for plain decimals: an optional
// sign ('+' too), digits with optional '.', optional exponent; "nan" and
// "inf" are parsed (callers reject them). Locale independent. Values beyond
// double range become +-inf or +-0 as in Python. Returns the end of the
// number, or nullptr if [first, last) does not start with one.
const char* parse_number(const char* first, const char* last, double& value);

// True when the whole of `text` is a finite number.
bool parse_finite(std::string_view text, double& value);

}  // namespace detail

}  // namespace bagel
