// Labels: raw per-row labels from a file, and the class list that maps them
// to ids 0..K-1.
//
// Labels are numeric when every one of them parses as a finite number
// (svmlight labels always do); numeric classes sort by value and are named by
// the shortest decimal that round-trips ("+1" and "1.0" are the class "1").
// Otherwise labels are strings, sorted by code point (as numpy sorts them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bagel {

struct RawLabels {
  std::string source;               // file name, for errors
  std::vector<std::string> names;   // canonical name of each row's label
  std::vector<double> values;       // numeric value of each row, when numeric
  bool numeric = false;
  std::size_t size() const { return names.size(); }
};

// Builds RawLabels from strings as read (svmlight, text files): trims, decides
// numeric vs string, canonicalises numeric names. `first_line` maps row i to
// line first_line + i in errors (for text files; 0 = no line numbers).
RawLabels make_labels(std::vector<std::string> text, const std::string& source);

// Numeric labels (svmlight, numeric .npy).
RawLabels make_labels(std::vector<double> values, const std::string& source);

// Text file (one label per line; blank lines are an error naming the line) or
// .npy (integers, floats or unicode strings, 1-d).
RawLabels read_labels(const std::string& path);

// Canonical name of a number: shortest round-trip decimal, "-0" as "0".
std::string number_name(double value);

// Sorted distinct classes.
struct Classes {
  std::vector<std::string> names;
  bool numeric = false;
  std::size_t size() const { return names.size(); }
  // Sorted distinct labels of `labels`. Throws if fewer than 2 classes.
  static Classes fit(const RawLabels& labels);
  // Id of each row's label. Throws FileError naming labels.source and the row
  // (1-based) of the first label that is not a class.
  std::vector<std::int32_t> encode(const RawLabels& labels) const;
};

}  // namespace bagel
