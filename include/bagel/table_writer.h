// Delimited text output (CSV or TSV) with RFC 4180 quoting, exact
// (shortest round-trip) number formatting independent of the locale, and
// aligned plain-text tables for reports read by people.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace bagel {

// A field quoted when it holds the delimiter, a quote or a line break.
std::string quote_field(const std::string& field, char delimiter);

// Shortest decimal that reads back to exactly `value` (std::to_chars).
std::string format_number(double value);

// Columns of text, each padded to its widest cell. Width counts code points,
// so accented and other non-ASCII UTF-8 names line up (East Asian wide
// characters, two terminal cells each, are the exception).
class TextTable {
 public:
  enum class Align { kLeft, kRight };
  explicit TextTable(std::vector<Align> columns) : align_(std::move(columns)) {}

  // A row of at most as many cells as columns (missing cells are blank).
  void add_row(std::vector<std::string> cells);

  // Each row on its own line after `indent`, cells two spaces apart, no
  // trailing blanks.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace bagel
