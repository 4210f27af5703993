// SVMlight / libsvm text, read with scikit-learn's load_svmlight_file rules:
//   <label> [qid:<n>] <index>:<value> ... [# comment]
// `#` starts a comment anywhere on a line; blank and comment-only lines are
// skipped; qid is accepted and ignored; indices must be strictly increasing
// within a line; the column count is the largest index + 1 after shifting,
// and 1 when the file has no features at all (as sklearn does).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bagel/csr.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/labels.h"

namespace bagel {

// kAuto: one-based (shifted down by one) unless some index 0 appears anywhere
// in the file, or the file has no features. kFalse: index 0 is an error.
enum class ZeroBased { kAuto, kTrue, kFalse };

// An index 0 in a file read one-based (zero_based false): a caller that
// chose the base for the user (a warm start takes its model's) can say why.
class IndexZeroError : public FileError {
 public:
  using FileError::FileError;
};

// Parses "auto" | "true" | "false"; throws ConfigError naming `field`.
ZeroBased parse_zero_based(const std::string& text, const std::string& field);

struct SvmlightData {
  CsrMatrix features;
  RawLabels labels;  // numeric; labels.lines holds each row's line number
  // The base the indices were read with: kTrue or kFalse as given, or as
  // "auto" decided it; kAuto where "auto" met no index (either base reads
  // the file alike).
  ZeroBased base = ZeroBased::kAuto;
};

// "true" or "false" for kTrue or kFalse, "auto" for kAuto (the config's words).
std::string to_string(ZeroBased base);

// Memory-maps `path` and parses it, in parallel chunks when the file is large
// (OpenMP threads). Errors are FileErrors naming the file and the line.
// Differences from sklearn: multilabel lines ("1,2 ...") are an error; NaN,
// infinite and out-of-float32-range values or labels are an error; Python's
// digit separators ("1_000") are not numbers.
// A stream ("-", a pipe, a FIFO: input_stream.h) is parsed block by block as
// it arrives, so its text is never held whole; one that holds no row is an
// error ("no rows"), where an empty regular file gives an empty matrix.
SvmlightData read_svmlight(const std::string& path, ZeroBased zero_based = ZeroBased::kAuto);
SvmlightData read_svmlight(InputStream& in, ZeroBased zero_based = ZeroBased::kAuto);

// A stream's rows block by block, as they arrive: for predicting while the
// input is still coming. Each block is an SvmlightData of its own: its column
// count is its own largest index + 1, and its labels' line numbers count from
// the start of the stream. Needs zero_based kTrue or kFalse (throws Error for
// kAuto): the automatic base depends on every line of the input, so no row
// could be placed before the last had arrived.
// From a pipe a block is what has arrived (at least one whole line), so rows
// come out as they come in. From a regular file, which never makes a reader
// wait, a block is several MiB, parsed in parallel chunks: the file is read
// at the speed of read_svmlight, in the memory of one block instead of the
// whole file. A file named by its path may hold no rows, as read whole.
class SvmlightStream {
 public:
  SvmlightStream(InputStream& in, ZeroBased zero_based);
  // The next block's rows; nullopt at the end. Throws "no rows" at the end of
  // a stream that held none.
  std::optional<SvmlightData> next();

 private:
  LineBlocks blocks_;
  ZeroBased zero_based_;
  std::string source_;
  bool empty_allowed_;
  std::int64_t lines_before_ = 0;
  std::int64_t rows_ = 0;
};

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
