#include "bagel/svmlight.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>

#include "bagel/atomic_file.h"
#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/parallel_errors.h"
#include "bagel/huge_pages.h"
#include "bagel/mapped_file.h"

namespace bagel {

namespace {

// The largest index a file may hold: the column count (index + 1) must fit
// in the int32 Index whatever the shift.
constexpr std::uint64_t kMaxIndex = std::numeric_limits<Index>::max() - 1;
constexpr std::int64_t kMaxNonZeros = std::numeric_limits<Index>::max();
// Below this a file is parsed in one piece; threads would cost more than
// they save.
constexpr std::size_t kMinChunkBytes = std::size_t{4} << 20;
constexpr std::size_t kTokenShownInErrors = 40;
// "12:3 " is 5 bytes; bag-of-words counts average about 8 per entry.
constexpr std::size_t kBytesPerEntryGuess = 6;
constexpr std::size_t kWriteBufferBytes = std::size_t{1} << 20;

// The parser reads a line's content [p, end) where *end is always readable
// and is '\n' or '#' (a sentinel: neither a digit, a space, '.', ':' nor a
// sign), so the hot loops need no bounds checks. The last line of a file
// without a final newline is copied to give it one.

// Python's bytes.split() whitespace, less '\n' (lines are split on it first).
constexpr std::array<bool, 256> kSpace = [] {
  std::array<bool, 256> table{};
  for (unsigned char c : {' ', '\t', '\r', '\v', '\f'}) table[c] = true;
  return table;
}();

bool is_space(char c) { return kSpace[static_cast<unsigned char>(c)]; }
bool is_digit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

const char* skip_space(const char* p) {
  while (is_space(*p)) ++p;
  return p;
}

const char* token_end(const char* p, const char* end) {
  while (p != end && !is_space(*p)) ++p;
  return p;
}

// Powers of ten that a double holds exactly.
constexpr double kExactPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                        1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr int kMaxExactPowerOfTen = 22;
constexpr std::uint64_t kMaxExactMantissa = std::uint64_t{1} << 53;
constexpr std::ptrdiff_t kMaxMantissaDigits = 19;  // 10^19 - 1 fits in uint64

// Clinger's fast path for the plain decimals that make up nearly every
// svmlight file ("3", "-0.25", "0.4004861358623457"): when the digits form an
// integer m <= 2^53 and there are f <= 22 of them after the point, m and 10^f
// are exact doubles, so the one rounding of m / 10^f is the correctly rounded
// value, the same double from_chars gives. Needs the sentinel. Returns
// nullptr for anything else (exponents, long mantissas, "nan", errors, a
// number not followed by a space), which parse_number then handles.
[[gnu::always_inline]] inline const char* parse_plain_decimal(const char* p, double& value) {
  const bool negative = *p == '-';
  if (*p == '-' || *p == '+') ++p;
  const char* const first = p;
  std::uint64_t mantissa = 0;  // wraps past 19 digits, which are then refused
  for (; is_digit(*p); ++p) mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
  std::ptrdiff_t digits = p - first;
  std::ptrdiff_t fraction = 0;
  if (*p == '.') {
    const char* const first_decimal = ++p;
    for (; is_digit(*p); ++p) mantissa = mantissa * 10 + static_cast<unsigned>(*p - '0');
    fraction = p - first_decimal;
    digits += fraction;
  }
  if (digits <= 0 || digits > kMaxMantissaDigits || mantissa > kMaxExactMantissa ||
      fraction > kMaxExactPowerOfTen || !(is_space(*p) || *p == '\n' || *p == '#'))
    return nullptr;
  double magnitude = static_cast<double>(mantissa);
  if (fraction > 0) magnitude /= kExactPowersOfTen[fraction];  // counts skip the division
  value = negative ? -magnitude : magnitude;
  return p;
}

// The token at `p` for an error message: quoted, cut short, control bytes
// replaced so a binary file does not garble the terminal.
std::string shown_token(const char* p, const char* end) {
  const char* stop = token_end(p, end);
  std::string token(p, std::min<std::size_t>(static_cast<std::size_t>(stop - p),
                                             kTokenShownInErrors));
  for (char& c : token)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  if (static_cast<std::size_t>(stop - p) > kTokenShownInErrors) token += "...";
  return "'" + token + "'";
}

// A problem at a line of a chunk; the line is made absolute after all chunks
// are parsed, since only then is it known how many lines came before.
struct ChunkError {
  std::int64_t line;
  std::string message;
  bool index_zero = false;  // an index 0 read one-based: IndexZeroError
};

// One byte range of the file parsed on its own. Indices are kept as written;
// the one-based shift is only known once every chunk has been seen.
struct Chunk {
  std::span<const char> text;
  std::vector<std::int64_t> row_ends;  // chunk-local end of each row in indices
  std::vector<Index> indices;
  std::vector<float> data;
  std::vector<double> labels;
  std::vector<std::int64_t> lines;  // chunk-local line of each row, 1-based
  std::int64_t line_count = 0;
  Index max_index = -1;
  bool has_zero_index = false;
  std::optional<ChunkError> error;
  std::exception_ptr failure;  // anything else (bad_alloc); no throw may leave OpenMP
};

class ChunkParser {
 public:
  ChunkParser(Chunk& chunk, ZeroBased zero_based) : out_(chunk), zero_based_(zero_based) {}

  void parse() {
    // Growing by doubling would copy (and page-fault) the arrays over and
    // over; a generous guess costs only address space until it is touched.
    const std::size_t entries_guess = out_.text.size() / kBytesPerEntryGuess;
    out_.indices.reserve(entries_guess);
    out_.data.reserve(entries_guess);
    const char* p = out_.text.data();
    const char* const end = p + out_.text.size();
    while (p != end) {
      ++line_;
      const auto* eol = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (eol == nullptr) {
        const std::string last = std::string(p, end) + '\n';
        parse_line(last.data(), last.data() + last.size() - 1);
        break;
      }
      parse_line(p, eol);
      p = eol + 1;
    }
    out_.line_count = line_;
  }

 private:
  [[gnu::cold, gnu::noinline, noreturn]] void fail(std::string message,
                                                    bool index_zero = false) const {
    throw ChunkError{line_, std::move(message), index_zero};
  }

  // [p, eol) is one line and *eol == '\n'.
  void parse_line(const char* p, const char* eol) {
    // Like sklearn, '#' ends the line's content wherever it appears.
    const auto* hash = static_cast<const char*>(std::memchr(p, '#', eol - p));
    const char* const end = hash != nullptr ? hash : eol;
    p = skip_space(p);
    if (p == end) return;  // blank or comment-only
    p = skip_space(parse_label(p, end));
    // sklearn takes a first feature starting with "qid" as the query id and
    // ignores its value.
    if (end - p >= 3 && std::memcmp(p, "qid", 3) == 0) p = skip_space(skip_qid(p, end));
    const std::size_t row_start = out_.indices.size();
    // Index 0 in a one-based file fails the "increasing" test like a repeat.
    std::int64_t previous = zero_based_ == ZeroBased::kFalse ? 0 : -1;
    while (p != end) p = skip_space(parse_feature(p, end, previous));
    // Indices increase along the row: its first is its smallest, its last
    // its largest.
    if (out_.indices.size() > row_start) {
      out_.max_index = std::max(out_.max_index, out_.indices.back());
      out_.has_zero_index |= out_.indices[row_start] == 0;
    }
    out_.row_ends.push_back(static_cast<std::int64_t>(out_.indices.size()));
    out_.lines.push_back(line_);
  }

  const char* parse_label(const char* p, const char* end) {
    double value = 0;
    const char* q = parse_plain_decimal(p, value);
    if (q == nullptr) [[unlikely]] q = parse_other_number(p, end, value, p, &ChunkParser::bad_label);
    if (!std::isfinite(value)) [[unlikely]]
      fail("label " + shown_token(p, end) + " is not a finite number");
    out_.labels.push_back(value);
    return q;
  }

  const char* skip_qid(const char* p, const char* end) {
    const char* stop = token_end(p, end);
    if (std::find(p, stop, ':') == stop)
      fail("expected qid:<number>, found " + shown_token(p, end));
    return stop;
  }

  // The common case inline: up to 10 digits, ':', a plain decimal. Anything
  // else (signs, leading zeros beyond 10 digits, errors) goes to the cold
  // functions below.
  const char* parse_feature(const char* p, const char* end, std::int64_t& previous) {
    const char* const start = p;
    std::uint64_t index = 0;  // 10 digits cannot overflow it; more go the slow way
    for (; is_digit(*p); ++p) index = index * 10 + static_cast<unsigned>(*p - '0');
    if (p == start || p - start > 10 || *p != ':' || index > kMaxIndex) [[unlikely]]
      p = parse_unusual_index(start, end, index);
    if (static_cast<std::int64_t>(index) <= previous) [[unlikely]]
      bad_index(start, end, index, previous);
    double value = 0;
    const char* q = parse_plain_decimal(p + 1, value);
    if (q == nullptr) [[unlikely]]
      q = parse_other_number(p + 1, end, value, start, &ChunkParser::bad_value_text);
    // Through double, as sklearn parses, so float32 rounding matches it.
    const auto stored = static_cast<float>(value);
    if (!std::isfinite(stored)) [[unlikely]] bad_value(start, end, value);
    out_.indices.push_back(static_cast<Index>(index));
    out_.data.push_back(stored);
    previous = static_cast<std::int64_t>(index);
    return q;
  }

  using TokenError = void (ChunkParser::*)(const char*, const char*) const;

  // Exponents, long mantissas, "nan", and errors: the full number parser.
  [[gnu::cold, gnu::noinline]] const char* parse_other_number(const char* p, const char* end,
                                                              double& value, const char* token,
                                                              TokenError on_error) const {
    const char* q = detail::parse_number(p, end, value);
    if (q == nullptr || (q != end && !is_space(*q))) (this->*on_error)(token, end);
    return q;
  }

  // A signed index ("+3", "-0" are what Python's int() reads), one with many
  // leading zeros, or an error.
  [[gnu::cold, gnu::noinline]] const char* parse_unusual_index(const char* start, const char* end,
                                                               std::uint64_t& index) const {
    const char* p = start;
    const bool negative = *p == '-';
    if (*p == '+' || *p == '-') ++p;
    const char* const digits = p;
    index = 0;
    // Stops growing once past kMaxIndex, so it cannot overflow.
    for (; is_digit(*p); ++p)
      if (index <= kMaxIndex) index = index * 10 + static_cast<unsigned>(*p - '0');
    if (p == digits || *p != ':') {
      const char* stop = token_end(start, end);
      if (std::find(start, stop, ':') == stop)
        fail("expected index:value, found " + shown_token(start, end));
      fail("expected an integer index before ':', found " + shown_token(start, end));
    }
    if (negative && index != 0)
      fail("negative index in " + shown_token(start, end) + ", expected indices >= 0");
    if (index > kMaxIndex)
      fail("index in " + shown_token(start, end) + " is too large, expected at most " +
           std::to_string(kMaxIndex));
    return p;
  }

  [[gnu::cold, gnu::noinline, noreturn]] void bad_index(const char* start, const char* end,
                                                        std::uint64_t index,
                                                        std::int64_t previous) const {
    if (index == 0 && zero_based_ == ZeroBased::kFalse)
      fail("index 0 in " + shown_token(start, end) +
               " but zero_based is false (one-based indices), expected indices >= 1",
           true);
    fail("indices must be strictly increasing within a line, found " + std::to_string(index) +
         " after " + std::to_string(previous) + " in " + shown_token(start, end));
  }

  [[gnu::cold, gnu::noinline, noreturn]] void bad_value(const char* start, const char* end,
                                                        double value) const {
    fail(std::isfinite(value) ? "value in " + shown_token(start, end) + " is beyond float32 range"
                              : "value in " + shown_token(start, end) + " is not finite");
  }

  [[gnu::cold, gnu::noinline, noreturn]] void bad_value_text(const char* start,
                                                             const char* end) const {
    fail("expected a number after ':', found " + shown_token(start, end));
  }

  [[gnu::cold, gnu::noinline, noreturn]] void bad_label(const char* p, const char* end) const {
    const char* stop = token_end(p, end);
    if (std::find(p, stop, ',') != stop)
      fail("multilabel labels (" + shown_token(p, end) +
           ") are not supported; expected one numeric label per line");
    fail("expected a numeric label first on the line, found " + shown_token(p, end));
  }

  Chunk& out_;
  ZeroBased zero_based_;
  std::int64_t line_ = 0;
};

void parse_chunk(Chunk& chunk, ZeroBased zero_based) {
  try {
    ChunkParser(chunk, zero_based).parse();
  } catch (ChunkError& e) {
    chunk.error = std::move(e);
  } catch (...) {
    chunk.failure = std::current_exception();
  }
}

// Byte ranges of about equal size, each ending just after a '\n' (or at the
// end of the text), so every line lies in exactly one chunk.
std::vector<Chunk> split_chunks(std::span<const char> text, int count) {
  std::vector<Chunk> chunks(static_cast<std::size_t>(count));
  std::size_t begin = 0;
  for (int k = 0; k < count; ++k) {
    std::size_t stop = text.size();
    if (k + 1 < count) {
      const std::size_t target =
          std::max(begin, text.size() / static_cast<std::size_t>(count) * (k + 1));
      const void* newline =
          target < text.size() ? std::memchr(text.data() + target, '\n', text.size() - target)
                               : nullptr;
      stop = newline != nullptr ? static_cast<const char*>(newline) - text.data() + 1
                                : text.size();
    }
    chunks[k].text = text.subspan(begin, stop - begin);
    begin = stop;
  }
  return chunks;
}

int chunk_count(std::size_t bytes, int requested) {
  if (requested > 0) return requested;
  const auto by_size = static_cast<int>(std::min<std::size_t>(bytes / kMinChunkBytes, 1 << 16));
  // A stream's blocks are mostly a pipe's 64 KiB: one chunk, without
  // reading the cgroup files that usable_cores() reads for every block.
  if (by_size <= 1) return 1;
  return std::min(usable_cores(), by_size);
}

// `text` split at line ends into chunk_count(requested) chunks, parsed in
// parallel; each chunk keeps its own error (rethrow_first_error).
std::vector<Chunk> parse_chunks(std::span<const char> text, ZeroBased zero_based, int requested) {
  std::vector<Chunk> parts = split_chunks(text, chunk_count(text.size(), requested));
  const auto count = static_cast<std::int64_t>(parts.size());
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (std::int64_t k = 0; k < count; ++k) parse_chunk(parts[k], zero_based);
  return parts;
}

// Throws the first error in file order, with its absolute line number
// (`lines_before`: lines of the input before the first chunk).
void rethrow_first_error(const std::vector<Chunk>& chunks, const std::string& source,
                         std::int64_t lines_before = 0) {
  for (const Chunk& chunk : chunks) {
    if (chunk.failure) std::rethrow_exception(chunk.failure);
    if (chunk.error) {
      const std::int64_t line = lines_before + chunk.error->line;
      if (chunk.error->index_zero) throw IndexZeroError(source, chunk.error->message, line);
      throw FileError(source, chunk.error->message, line);
    }
    lines_before += chunk.line_count;
  }
}

// Where each chunk's rows, non-zeros and lines start in the whole file.
struct ChunkOffsets {
  std::vector<std::int64_t> row, nnz, line;
};

ChunkOffsets chunk_offsets(const std::vector<Chunk>& chunks, std::int64_t lines_before) {
  ChunkOffsets at;
  std::int64_t rows = 0, nnz = 0, lines = lines_before;
  for (const Chunk& chunk : chunks) {
    at.row.push_back(rows);
    at.nnz.push_back(nnz);
    at.line.push_back(lines);
    rows += static_cast<std::int64_t>(chunk.labels.size());
    nnz += static_cast<std::int64_t>(chunk.indices.size());
    lines += chunk.line_count;
  }
  at.row.push_back(rows);
  at.nnz.push_back(nnz);
  return at;
}

// sklearn's rule: "auto" shifts one-based files down by one, and a file is
// one-based unless it holds an index 0 (or no index at all).
Index index_shift(const std::vector<Chunk>& chunks, ZeroBased zero_based, std::int64_t nnz) {
  if (zero_based == ZeroBased::kTrue) return 0;
  if (zero_based == ZeroBased::kFalse) return 1;
  const bool has_zero = std::any_of(chunks.begin(), chunks.end(),
                                    [](const Chunk& c) { return c.has_zero_index; });
  return nnz > 0 && !has_zero ? 1 : 0;
}

SvmlightData concatenate(std::vector<Chunk>& chunks, const std::string& source,
                         ZeroBased zero_based, std::int64_t lines_before = 0) {
  const ChunkOffsets at = chunk_offsets(chunks, lines_before);
  const std::int64_t rows = at.row.back();
  const std::int64_t nnz = at.nnz.back();
  if (rows >= std::numeric_limits<Index>::max())
    throw FileError(source, std::to_string(rows) + " rows, expected fewer than 2^31 - 1");
  if (nnz > kMaxNonZeros)
    throw FileError(source, std::to_string(nnz) + " non-zeros, expected at most 2^31 - 1 " +
                                "(int32 row pointers)");
  const Index shift = index_shift(chunks, zero_based, nnz);
  Index max_index = -1;
  for (const Chunk& chunk : chunks) max_index = std::max(max_index, chunk.max_index);
  // No features at all still gives one column, as in sklearn.
  const Index cols = nnz > 0 ? max_index - shift + 1 : 1;

  std::vector<Index> indptr(static_cast<std::size_t>(rows) + 1, 0);
  std::vector<Index> indices;
  std::vector<float> data;
  RawLabels labels;
  labels.source = source;
  labels.numeric = true;
  labels.names.resize(static_cast<std::size_t>(rows));
  labels.values.resize(static_cast<std::size_t>(rows));
  labels.lines.resize(static_cast<std::size_t>(rows));
  // One chunk (small files, one thread): its arrays become the matrix's.
  const bool take = chunks.size() == 1;
  if (take) {
    indices = std::move(chunks[0].indices);
    data = std::move(chunks[0].data);
    if (shift != 0)
      for (Index& j : indices) j -= shift;
  } else {
    indices = huge_vector<Index>(static_cast<std::size_t>(nnz));
    data = huge_vector<float>(static_cast<std::size_t>(nnz));
  }

  const auto count = static_cast<std::int64_t>(chunks.size());
  RegionErrors errors;  // naming the labels allocates
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (std::int64_t k = 0; k < count; ++k) errors.run([&] {
    Chunk& chunk = chunks[k];
    const std::size_t row0 = at.row[k], nnz0 = at.nnz[k];
    if (!take) {
      for (std::size_t j = 0; j < chunk.indices.size(); ++j)
        indices[nnz0 + j] = chunk.indices[j] - shift;
      std::copy(chunk.data.begin(), chunk.data.end(), data.begin() + nnz0);
    }
    for (std::size_t r = 0; r < chunk.labels.size(); ++r) {
      indptr[row0 + r + 1] = static_cast<Index>(nnz0 + chunk.row_ends[r]);
      labels.values[row0 + r] = chunk.labels[r];
      labels.names[row0 + r] = number_name(chunk.labels[r]);
      labels.lines[row0 + r] = at.line[k] + chunk.lines[r];
    }
    chunk = Chunk{};  // free as we go: the whole matrix is held twice otherwise
  });
  errors.rethrow();

  CsrMatrix features(static_cast<Index>(rows), cols, std::move(indptr), std::move(indices),
                     std::move(data));
  features.validate(source);
  const ZeroBased base = zero_based != ZeroBased::kAuto ? zero_based
                        : nnz == 0                        ? ZeroBased::kAuto
                        : shift == 0                      ? ZeroBased::kTrue
                                                          : ZeroBased::kFalse;
  return SvmlightData{std::move(features), std::move(labels), base};
}

// One block of whole lines from a stream, parsed; its text is not kept.
Chunk parse_block(std::span<const char> text, ZeroBased zero_based) {
  Chunk chunk;
  chunk.text = text;
  parse_chunk(chunk, zero_based);
  chunk.text = {};
  return chunk;
}

[[noreturn]] void no_rows(const std::string& source) {
  throw FileError(source, "no rows: the stream ended before any svmlight line");
}

// Shortest text that reads back (as sklearn reads it: to double, then to
// float32) as the same float. The float's own shortest form nearly always
// does; when double rounding would move it, the double's form is exact.
char* format_value(char* first, char* last, float value) {
  char* end = std::to_chars(first, last, value).ptr;
  double reread = 0;
  std::from_chars(first, end, reread);
  if (static_cast<float>(reread) == value) return end;
  return std::to_chars(first, last, static_cast<double>(value)).ptr;
}

void check_labels_writable(const std::string& path, const CsrMatrix& matrix,
                           const std::vector<std::string>& labels) {
  if (labels.size() != static_cast<std::size_t>(matrix.rows()))
    throw FileError(path, std::to_string(labels.size()) + " labels for " +
                              std::to_string(matrix.rows()) + " rows, expected one per row");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    double value = 0;
    if (!detail::parse_finite(labels[i], value))
      throw FileError(path, "row " + std::to_string(i + 1) + ": label '" + labels[i] +
                                "' is not a finite number, which svmlight labels must be");
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class BufferedWriter {
 public:
  BufferedWriter(const std::string& path, const std::string& temp)
      : path_(path), file_(std::fopen(temp.c_str(), "wb")) {
    if (!file_) throw FileError(path_, "cannot open for writing: " + std::string(std::strerror(errno)));
    buffer_.reserve(kWriteBufferBytes + 256);
  }
  std::string& buffer() { return buffer_; }
  void flush_if_full() {
    if (buffer_.size() >= kWriteBufferBytes) flush();
  }
  void close() {
    flush();
    if (std::fclose(file_.release()) != 0)
      throw FileError(path_, "write failed: " + std::string(std::strerror(errno)));
  }

 private:
  void flush() {
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_.get()) != buffer_.size())
      throw FileError(path_, "write failed: " + std::string(std::strerror(errno)));
    buffer_.clear();
  }
  std::string path_;
  std::unique_ptr<std::FILE, FileCloser> file_;
  std::string buffer_;
};

void append_row(std::string& out, const std::string& label, const RowView& row,
                std::int64_t base, std::vector<std::pair<Index, float>>& scratch) {
  out += label;
  char buf[64];
  auto append_entry = [&](Index index, float value) {
    char* p = buf;
    *p++ = ' ';
    p = std::to_chars(p, buf + sizeof buf, base + index).ptr;
    *p++ = ':';
    p = format_value(p, buf + sizeof buf, value);
    out.append(buf, p);
  };
  if (strictly_increasing(row.indices)) {
    for (std::size_t j = 0; j < row.size(); ++j) append_entry(row.indices[j], row.values[j]);
  } else {
    canonical_row(row, scratch);
    for (const auto& [index, value] : scratch) append_entry(index, value);
  }
  out += '\n';
}

}  // namespace

std::string to_string(ZeroBased base) {
  return base == ZeroBased::kTrue ? "true" : base == ZeroBased::kFalse ? "false" : "auto";
}

ZeroBased parse_zero_based(const std::string& text, const std::string& field) {
  if (text == "auto") return ZeroBased::kAuto;
  if (text == "true") return ZeroBased::kTrue;
  if (text == "false") return ZeroBased::kFalse;
  throw ConfigError(field, "expected auto, true or false, found '" + text + "'");
}

namespace detail {

SvmlightData parse_svmlight(std::span<const char> text, const std::string& source,
                            ZeroBased zero_based, int chunks) {
  std::vector<Chunk> parts = parse_chunks(text, zero_based, chunks);
  rethrow_first_error(parts, source);
  return concatenate(parts, source, zero_based);
}

}  // namespace detail

SvmlightData read_svmlight(const std::string& path, ZeroBased zero_based) {
  if (is_stream(path)) {
    InputStream in(path);
    return read_svmlight(in, zero_based);
  }
  const MappedFile file(path);
  const auto bytes = file.bytes();
  return detail::parse_svmlight(
      std::span<const char>(reinterpret_cast<const char*>(bytes.data()), bytes.size()), path,
      zero_based);
}

SvmlightData read_svmlight(InputStream& in, ZeroBased zero_based) {
  LineBlocks blocks(in, kMinChunkBytes);
  std::vector<Chunk> chunks;
  for (auto text = blocks.next(); !text.empty(); text = blocks.next()) {
    chunks.push_back(parse_block(text, zero_based));
    if (chunks.back().error || chunks.back().failure) break;  // nothing after it is reported
  }
  rethrow_first_error(chunks, in.name());
  SvmlightData d = concatenate(chunks, in.name(), zero_based);
  if (d.features.rows() == 0) no_rows(in.name());
  return d;
}

namespace {

// Bytes a block of a regular file holds: one chunk a core, as a whole file
// read at once would be split.
std::size_t file_block_bytes() { return kMinChunkBytes * static_cast<std::size_t>(usable_cores()); }

std::int64_t line_count(const std::vector<Chunk>& chunks) {
  std::int64_t lines = 0;
  for (const Chunk& chunk : chunks) lines += chunk.line_count;
  return lines;
}

bool holds_rows(const std::vector<Chunk>& chunks) {
  return std::any_of(chunks.begin(), chunks.end(), [](const Chunk& c) { return !c.labels.empty(); });
}

}  // namespace

SvmlightStream::SvmlightStream(InputStream& in, ZeroBased zero_based)
    : blocks_(in, in.regular() ? file_block_bytes() : 1),
      zero_based_(zero_based),
      source_(in.name()),
      empty_allowed_(in.named_file()) {
  if (zero_based == ZeroBased::kAuto)
    throw Error(source_ + ": streaming svmlight needs zero_based true or false; \"auto\" "
                          "depends on every line");
}

std::optional<SvmlightData> SvmlightStream::next() {
  for (auto text = blocks_.next(); !text.empty(); text = blocks_.next()) {
    std::vector<Chunk> parts = parse_chunks(text, zero_based_, 0);
    rethrow_first_error(parts, source_, lines_before_);
    const std::int64_t lines = line_count(parts);
    if (!holds_rows(parts)) {  // only blank or comment lines
      lines_before_ += lines;
      continue;
    }
    SvmlightData d = concatenate(parts, source_, zero_based_, lines_before_);
    lines_before_ += lines;
    rows_ += d.features.rows();
    return d;
  }
  if (rows_ == 0 && !empty_allowed_) no_rows(source_);
  return std::nullopt;
}

void write_svmlight(const std::string& path, const CsrMatrix& matrix,
                    const std::vector<std::string>& labels, bool zero_based) {
  check_labels_writable(path, matrix, labels);
  for (float v : matrix.data())
    if (!std::isfinite(v))
      throw FileError(path, "cannot write a non-finite value (svmlight readers reject it)");
  AtomicPath temp(path);
  BufferedWriter writer(path, temp.temp().string());
  std::vector<std::pair<Index, float>> scratch;
  const std::int64_t base = zero_based ? 0 : 1;
  for (Index r = 0; r < matrix.rows(); ++r) {
    append_row(writer.buffer(), labels[static_cast<std::size_t>(r)], matrix.row(r), base,
               scratch);
    writer.flush_if_full();
  }
  writer.close();
  temp.commit();
}

}  // namespace bagel
