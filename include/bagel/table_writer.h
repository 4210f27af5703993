// Delimited text output (CSV or TSV) with RFC 4180 quoting, and exact
// (shortest round-trip) number formatting independent of the locale.
#pragma once

#include <string>

namespace bagel {

// A field quoted when it holds the delimiter, a quote or a line break.
std::string quote_field(const std::string& field, char delimiter);

// Shortest decimal that reads back to exactly `value` (std::to_chars).
std::string format_number(double value);

}  // namespace bagel
