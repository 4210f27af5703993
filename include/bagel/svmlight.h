// SVMlight / libsvm text, with scikit-learn's load_svmlight_file rules:
//   <label> [qid:<n>] <index>:<value> ... [# comment]
// Blank and comment-only lines are skipped; qid is accepted and ignored;
// indices must be strictly increasing within a line; zero_based "auto"
// treats the file as one-based when no index 0 appears anywhere.
#pragma once

#include <string>

#include "bagel/csr.h"
#include "bagel/labels.h"

namespace bagel {

enum class ZeroBased { kAuto, kTrue, kFalse };

// Parses "auto" | "true" | "false"; throws ConfigError naming `field`.
ZeroBased parse_zero_based(const std::string& text, const std::string& field);

struct SvmlightData {
  CsrMatrix features;
  RawLabels labels;
};

// Errors name the file and the line. `min_features` raises the column count
// (like load_svmlight_file's n_features) when the file's largest index is
// smaller; a larger index than a non-zero `max_features` is an error.
SvmlightData read_svmlight(const std::string& path, ZeroBased zero_based = ZeroBased::kAuto);

// Writes zero-based (or one-based) svmlight that load_svmlight_file reads
// back to the same arrays; labels written by name. Atomic.
void write_svmlight(const std::string& path, const CsrMatrix& matrix,
                    const std::vector<std::string>& labels, bool zero_based = true);

}  // namespace bagel
