// SVMlight / libsvm text, read with scikit-learn's load_svmlight_file rules:
//   <label> [qid:<n>] <index>:<value> ... [# comment]
// `#` starts a comment anywhere on a line; blank and comment-only lines are
// skipped; qid is accepted and ignored; indices must be strictly increasing
// within a line; the column count is the largest index + 1 after shifting,
// and 1 when the file has no features at all (as sklearn does).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "bagel/csr.h"
#include "bagel/labels.h"

namespace bagel {

// kAuto: one-based (shifted down by one) unless some index 0 appears anywhere
// in the file, or the file has no features. kFalse: index 0 is an error.
enum class ZeroBased { kAuto, kTrue, kFalse };

// Parses "auto" | "true" | "false"; throws ConfigError naming `field`.
ZeroBased parse_zero_based(const std::string& text, const std::string& field);

struct SvmlightData {
  CsrMatrix features;
  RawLabels labels;  // numeric; labels.lines holds each row's line number
};

// Memory-maps `path` and parses it, in parallel chunks when the file is large
// (OpenMP threads). Errors are FileErrors naming the file and the line.
// Differences from sklearn: multilabel lines ("1,2 ...") are an error; NaN,
// infinite and out-of-float32-range values or labels are an error; Python's
// digit separators ("1_000") are not numbers.
SvmlightData read_svmlight(const std::string& path, ZeroBased zero_based = ZeroBased::kAuto);

// Writes svmlight that load_svmlight_file (with the same zero_based) reads
// back to the same arrays. Labels are written by name and must be numbers.
// Values use the shortest text that round-trips to the same float32. Rows
// with unsorted indices are written sorted, and repeated indices in a row are
// summed (svmlight needs strictly increasing indices; scipy sums duplicates
// too when it canonicalises a matrix). Atomic: temp file, then rename.
void write_svmlight(const std::string& path, const CsrMatrix& matrix,
                    const std::vector<std::string>& labels, bool zero_based = true);

namespace detail {

// Parses svmlight text held in memory; `source` names it in errors. The text
// is split into `chunks` byte ranges at line boundaries and parsed
// independently (in parallel); 0 picks a count from the size and the number
// of OpenMP threads. The result does not depend on the chunk count.
SvmlightData parse_svmlight(std::span<const char> text, const std::string& source,
                            ZeroBased zero_based, int chunks = 0);

}  // namespace detail

}  // namespace bagel
