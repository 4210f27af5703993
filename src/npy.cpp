#include "bagel/npy.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/huge_pages.h"
#include "bagel/parallel_errors.h"

// numpy's '|' and '=' mean "native", which bagel reads as little-endian.
static_assert(std::endian::native == std::endian::little, "bagel assumes a little-endian host");

namespace bagel {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kPreludeSize = 8;           // magic + major + minor
constexpr std::size_t kAlign = 64;                // numpy's ARRAY_ALIGN
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS
// Longer headers than numpy's np.load accepts by default (10000 bytes): no
// real array needs more, and a reader must not trust a 4 GB length field.
constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 16;
// Elements per OpenMP chunk: big enough to amortise the scheduling, small
// enough that a few million values spread over all cores.
constexpr std::int64_t kChunk = 1 << 16;

// Where an error happened: the file, and the array's key inside an .npz.
struct Where {
  const std::string& source;
  const std::string& key;
  [[noreturn]] void fail(const std::string& message) const {
    throw FileError(source, key.empty() ? message : key + ": " + message);
  }
};

using detail::shape_repr;

template <class T>
std::string number_text(T value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else {
    char buf[64];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    return std::string(buf, result.ptr);
  }
}

// ---- header dict ---------------------------------------------------------

struct HeaderDict {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::int64_t>> shape;
};

// A recursive-descent reader for the Python literal numpy writes, e.g.
//   {'descr': '<f4', 'fortran_order': False, 'shape': (10,), }
// Any key order, either quote, trailing commas, any whitespace, and the 'L'
// suffix of Python 2 longs are accepted; anything else is an error.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const Where& where) : text_(text), where_(where) {}

  HeaderDict parse() {
    HeaderDict dict;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      if (key == "descr") {
        skip_space();
        if (peek() == '[') where_.fail("structured dtypes (a list descr) are not supported");
        dict.descr = string_literal();
      } else if (key == "fortran_order") {
        dict.fortran_order = boolean();
      } else if (key == "shape") {
        dict.shape = tuple();
      } else {
        fail("unexpected key '" + detail::printable(key) +
             "', expected only 'descr', 'fortran_order', 'shape'");
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != '}') {
        fail("expected ',' or '}'");
      }
    }
    ++pos_;
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after '}'");
    if (!dict.descr) fail("missing key 'descr'");
    if (!dict.fortran_order) fail("missing key 'fortran_order'");
    if (!dict.shape) fail("missing key 'shape'");
    return dict;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    constexpr std::size_t kShown = 100;
    std::string shown(text_.substr(0, kShown));
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    where_.fail("bad .npy header: " + what + " at offset " + std::to_string(pos_) + " in \"" +
                detail::printable(shown) + (text_.size() > kShown ? "..." : "") + "\"");
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }

  std::string string_literal() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    ++pos_;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') ++pos_;  // an escaped character stands for itself
      if (pos_ < text_.size()) out += text_[pos_++];
    }
    if (pos_ >= text_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }

  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{"True", true}, std::pair{"False", false}}) {
      const std::string_view w(word);
      if (text_.substr(pos_, w.size()) == w) {
        pos_ += w.size();
        return value;
      }
    }
    fail("expected True or False");
  }

  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> out;
    while (true) {
      skip_space();
      if (peek() == ')') break;
      out.push_back(integer());
      skip_space();
      if (peek() == ',') {
        ++pos_;
      } else if (peek() != ')') {
        fail("expected ',' or ')' in shape");
      }
    }
    ++pos_;
    return out;
  }

  std::int64_t integer() {
    std::int64_t value = 0;
    const char* begin = text_.data() + pos_;
    const char* end = text_.data() + text_.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc() || ptr == begin) fail("expected an integer in shape");
    pos_ += static_cast<std::size_t>(ptr - begin);
    if (peek() == 'L' || peek() == 'l') ++pos_;
    return value;
  }

  std::string_view text_;
  const Where& where_;
  std::size_t pos_ = 0;
};

// ---- dtypes --------------------------------------------------------------

struct DTypeInfo {
  DType dtype;
  std::size_t item_size;
};

// The dtypes a caller takes, for the message that refuses another one.
std::string accepted_dtypes(NpyKinds kinds) {
  const std::string numbers = "bool, int8..int64, uint8..uint64, float32";
  return kinds == NpyKinds::kNumbers ? numbers + " or float64"
                                     : numbers + ", float64, unicode or bytes";
}

DTypeInfo parse_descr(const std::string& descr, NpyKinds kinds, const Where& where) {
  const auto unsupported = [&](const std::string& why) {
    where.fail("dtype '" + detail::printable(descr) + "' " + why);
  };
  const auto not_read = [&] {
    unsupported("is not a dtype bagel reads (expected " + accepted_dtypes(kinds) + ")");
  };
  std::size_t pos = 0;
  const char order = descr.empty() ? '\0' : descr[0];
  if (order == '<' || order == '>' || order == '|' || order == '=') ++pos;
  if (pos >= descr.size()) unsupported("is not a dtype");
  const char kind = descr[pos++];
  if (kind == 'O') unsupported("holds Python objects (pickles), which bagel does not read");
  if (kind == 'V') unsupported("is a structured or void dtype, which bagel does not read");

  std::size_t width = 0;
  const auto [ptr, ec] = std::from_chars(descr.data() + pos, descr.data() + descr.size(), width);
  if (ec != std::errc() || ptr != descr.data() + descr.size()) not_read();

  if ((kind == 'U' || kind == 'S') && width == 0)
    unsupported("has zero-width items, which hold nothing (numpy stores empty strings as '<U1')");
  DTypeInfo info{DType::kFloat32, width};
  std::size_t unit = width;  // the size byte order applies to
  switch (kind) {
    case 'b':
      if (width != 1) unsupported("is not a bool dtype");
      info.dtype = DType::kBool;
      break;
    case 'i':
    case 'u': {
      const bool is_signed = kind == 'i';
      if (width == 1)
        info.dtype = is_signed ? DType::kInt8 : DType::kUInt8;
      else if (width == 2)
        info.dtype = is_signed ? DType::kInt16 : DType::kUInt16;
      else if (width == 4)
        info.dtype = is_signed ? DType::kInt32 : DType::kUInt32;
      else if (width == 8)
        info.dtype = is_signed ? DType::kInt64 : DType::kUInt64;
      else
        unsupported("has an unsupported integer width");
      break;
    }
    case 'f':
      if (width == 4)
        info.dtype = DType::kFloat32;
      else if (width == 8)
        info.dtype = DType::kFloat64;
      else
        not_read();  // float16, float128
      break;
    case 'U':
      info.dtype = DType::kUnicode;
      info.item_size = 4 * width;  // UTF-32
      unit = 4;
      break;
    case 'S':
      info.dtype = DType::kBytes;
      unit = 1;
      break;
    default:
      not_read();  // complex, datetime, ...
  }
  if (order == '>' && unit > 1)
    unsupported(
        "is big-endian; bagel reads little-endian arrays (convert with "
        "arr.astype(arr.dtype.newbyteorder('<')))");
  return info;
}

// ---- conversions ---------------------------------------------------------

// numpy bools are bytes; any non-zero byte is True.
struct Bool8 {
  std::uint8_t raw;
};

template <class Src>
auto load(const std::byte* p) {
  if constexpr (std::is_same_v<Src, Bool8>) {
    return std::to_integer<std::uint8_t>(*p) != 0;
  } else {
    Src v;
    std::memcpy(&v, p, sizeof v);  // payloads need not be aligned
    return v;
  }
}

// Whether `v` converts to Dst without changing its value. Float targets take
// everything but overflow (NaN and infinities read as they are; validate()
// reports them with their row and column).
template <class Dst, class V>
bool fits(V v) {
  if constexpr (std::is_same_v<Dst, float> && std::is_same_v<V, double>) {
    // Rounding is expected; a finite value turning infinite is not (and
    // deserves a better message than validate's "non-finite value").
    return !std::isfinite(v) || std::isfinite(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<Dst> || std::is_same_v<V, bool>) {
    return true;
  } else if constexpr (std::is_integral_v<V>) {
    return std::in_range<Dst>(v);
  } else {
    // max() + 1.0 is a power of two, exact in double, unlike max() itself.
    const double d = static_cast<double>(v);
    return d >= static_cast<double>(std::numeric_limits<Dst>::min()) &&
           d < static_cast<double>(std::numeric_limits<Dst>::max()) + 1.0 && std::trunc(d) == d;
  }
}

template <class Dst>
constexpr const char* type_name() {
  if constexpr (std::is_same_v<Dst, std::int32_t>)
    return "int32";
  else if constexpr (std::is_same_v<Dst, std::int64_t>)
    return "int64";
  else if constexpr (std::is_same_v<Dst, std::uint64_t>)
    return "uint64";
  else if constexpr (std::is_same_v<Dst, float>)
    return "float32";
  else
    return "float64";
}

template <class Dst, class Src>
[[noreturn]] void report_misfit(const std::byte* src, std::int64_t begin, std::int64_t end,
                                const NpyHeader& h, const Where& where) {
  for (std::int64_t i = begin; i < end; ++i) {
    const auto v = load<Src>(src + i * static_cast<std::int64_t>(sizeof(Src)));
    if (fits<Dst>(v)) continue;
    const std::string why =
        std::is_floating_point_v<Dst> ? std::string("is beyond the range of ") + type_name<Dst>()
        : std::is_integral_v<decltype(v)>
            ? std::string("does not fit in ") + type_name<Dst>()
            : std::string("is not a whole number that fits in ") + type_name<Dst>();
    where.fail("value " + number_text(v) + " at position " + std::to_string(i) + " " + why +
               " (dtype '" + h.descr + "')");
  }
  where.fail("internal error: conversion failed without a bad value");
}

// One loop per (source, target) pair; the per-element check is a select, so
// the loop stays branch-free and vectorisable, and the bad value is looked
// for only after a chunk failed. No exception leaves the parallel region.
template <class Dst, class Src>
std::vector<Dst> convert(const NpyHeader& h, std::span<const std::byte> payload,
                         const Where& where, const ConsumedFn& consumed) {
  const std::int64_t n = h.count();
  std::vector<Dst> out = huge_vector<Dst>(static_cast<std::size_t>(n));
  const std::byte* src = payload.data();
  Dst* dst = out.data();
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  std::vector<char> failed(static_cast<std::size_t>(chunks), 0);
  RegionErrors errors;  // `consumed` is the caller's: it may throw
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    bool ok = true;
    for (std::int64_t i = c * kChunk; i < end; ++i) {
      const auto v = load<Src>(src + i * static_cast<std::int64_t>(sizeof(Src)));
      const bool good = fits<Dst>(v);
      ok &= good;
      dst[i] = good ? static_cast<Dst>(v) : Dst{};
    }
    failed[static_cast<std::size_t>(c)] = !ok;
    if (consumed && !errors.failed())
      errors.run([&] {
        consumed(payload.subspan(static_cast<std::size_t>(c * kChunk) * sizeof(Src),
                                 static_cast<std::size_t>(end - c * kChunk) * sizeof(Src)));
      });
  }
  errors.rethrow();
  for (std::int64_t c = 0; c < chunks; ++c) {
    if (failed[static_cast<std::size_t>(c)])
      report_misfit<Dst, Src>(src, c * kChunk, std::min(n, (c + 1) * kChunk), h, where);
  }
  return out;
}

void check_payload(const NpyHeader& h, std::span<const std::byte> payload, const Where& where) {
  if (payload.size() < h.payload_size())
    where.fail("truncated: payload has " + std::to_string(payload.size()) + " bytes, shape " +
               shape_repr(h.shape) + " of '" + h.descr + "' needs " +
               std::to_string(h.payload_size()));
}

// Bytes after the payload mean the header does not describe the file (or
// something was appended to it); numpy would ignore them, but a reader that
// ignores them lets a tiny array carry gigabytes of padding.
void check_exact_payload(const NpyHeader& h, std::span<const std::byte> payload,
                         const Where& where) {
  check_payload(h, payload, where);
  if (payload.size() > h.payload_size())
    where.fail(std::to_string(payload.size() - h.payload_size()) +
               " bytes follow the array's end: shape " + shape_repr(h.shape) + " of '" + h.descr +
               "' needs " + std::to_string(h.payload_size()) + " bytes after the header, found " +
               std::to_string(payload.size()));
}

template <class Dst>
std::vector<Dst> to_numeric(const NpyHeader& h, std::span<const std::byte> payload,
                            const Where& where, const ConsumedFn& consumed = {}) {
  check_payload(h, payload, where);
  switch (h.dtype) {
    case DType::kBool:
      return convert<Dst, Bool8>(h, payload, where, consumed);
    case DType::kInt8:
      return convert<Dst, std::int8_t>(h, payload, where, consumed);
    case DType::kUInt8:
      return convert<Dst, std::uint8_t>(h, payload, where, consumed);
    case DType::kInt16:
      return convert<Dst, std::int16_t>(h, payload, where, consumed);
    case DType::kUInt16:
      return convert<Dst, std::uint16_t>(h, payload, where, consumed);
    case DType::kInt32:
      return convert<Dst, std::int32_t>(h, payload, where, consumed);
    case DType::kUInt32:
      return convert<Dst, std::uint32_t>(h, payload, where, consumed);
    case DType::kInt64:
      return convert<Dst, std::int64_t>(h, payload, where, consumed);
    case DType::kUInt64:
      return convert<Dst, std::uint64_t>(h, payload, where, consumed);
    case DType::kFloat32:
      return convert<Dst, float>(h, payload, where, consumed);
    case DType::kFloat64:
      return convert<Dst, double>(h, payload, where, consumed);
    case DType::kUnicode:
    case DType::kBytes:
      break;
  }
  where.fail("dtype '" + h.descr + "' holds strings, expected numbers (" + type_name<Dst>() + ")");
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf32_item(const std::byte* p, std::size_t chars, std::int64_t index,
                       const Where& where) {
  std::vector<std::uint32_t> cps(chars);
  std::memcpy(cps.data(), p, chars * 4);
  while (!cps.empty() && cps.back() == 0) cps.pop_back();  // numpy strips trailing NULs
  std::string out;
  for (const std::uint32_t cp : cps) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      where.fail("string at position " + std::to_string(index) + " holds " + std::to_string(cp) +
                 ", which is not a Unicode code point");
    append_utf8(out, cp);
  }
  return out;
}

// Rejects negative dimensions and sizes that overflow, so that count() and
// payload_size() are safe afterwards.
void check_shape(const std::vector<std::int64_t>& shape, std::size_t item_size,
                 const Where& where) {
  std::size_t bytes = item_size;
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) {
    if (dim < 0) where.fail("shape " + shape_repr(shape) + " has a negative dimension");
    if (__builtin_mul_overflow(count, dim, &count) ||
        __builtin_mul_overflow(bytes, static_cast<std::size_t>(dim), &bytes))
      where.fail("shape " + shape_repr(shape) + " is too large");
  }
}

template <class T>
void write_npy_file(const std::string& path, std::span<const T> values,
                    const std::vector<std::int64_t>& shape, const std::string& descr) {
  std::int64_t count = 1;
  for (const std::int64_t dim : shape) count *= dim;
  if (count != static_cast<std::int64_t>(values.size()))
    throw FileError(path, "shape " + shape_repr(shape) + " holds " + std::to_string(count) +
                              " values, but " + std::to_string(values.size()) + " were given");
  AtomicPath tmp(path);
  {
    std::ofstream out(tmp.temp(), std::ios::binary);
    if (!out) throw FileError(path, "cannot open for writing");
    const std::string header = npy_header(descr, shape);
    errno = 0;
    out.write(header.data(), static_cast<std::streamsize>(header.size()));
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size_bytes()));
    out.flush();
    if (!out) throw FileError(path, write_failed_message());
  }
  tmp.commit();
}

}  // namespace

namespace detail {

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F) {
      out += c;
    } else {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xF];
    }
  }
  return out;
}

}  // namespace detail

namespace detail {

std::string shape_repr(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

}  // namespace detail

std::int64_t NpyHeader::count() const {
  std::int64_t n = 1;
  for (const std::int64_t dim : shape) n *= dim;
  return n;
}

NpyHeader parse_npy_prefix(std::span<const std::byte> bytes, const std::string& source,
                           const std::string& key, NpyKinds kinds) {
  const Where where{source, key};
  const auto byte_at = [&](std::size_t i) { return std::to_integer<std::uint32_t>(bytes[i]); };
  if (bytes.size() < kPreludeSize || std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0)
    where.fail("not a .npy array (expected the magic \"\\x93NUMPY\" at the start)");
  const std::uint32_t major = byte_at(6);
  const std::uint32_t minor = byte_at(7);
  if (minor != 0 || major < 1 || major > 3)
    where.fail(".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
               " is not supported (expected 1.0, 2.0 or 3.0)");
  // Version 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4.
  const std::size_t length_size = major == 1 ? 2 : 4;
  const std::size_t header_start = kPreludeSize + length_size;
  if (bytes.size() < header_start) where.fail("truncated: the .npy header length is missing");
  std::size_t header_len = 0;
  for (std::size_t i = 0; i < length_size; ++i) header_len |= byte_at(kPreludeSize + i) << (8 * i);
  if (header_len > kMaxHeaderBytes)
    where.fail("the .npy header says it is " + std::to_string(header_len) +
               " bytes long; numpy writes a few hundred (bagel reads at most " +
               std::to_string(kMaxHeaderBytes) + ")");
  if (bytes.size() - header_start < header_len)
    where.fail("truncated: the .npy header says " + std::to_string(header_len) +
               " bytes, but only " + std::to_string(bytes.size() - header_start) + " follow");

  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + header_start,
                              header_len);
  const HeaderDict dict = HeaderParser(text, where).parse();

  NpyHeader h;
  h.descr = *dict.descr;
  const DTypeInfo info = parse_descr(h.descr, kinds, where);
  h.dtype = info.dtype;
  h.item_size = info.item_size;
  h.fortran_order = *dict.fortran_order;
  h.shape = *dict.shape;
  h.data_offset = header_start + header_len;
  // Fortran and C order are the same bytes for 0-d and 1-d arrays.
  if (h.fortran_order && h.shape.size() > 1)
    where.fail("array is in Fortran order; bagel reads C order (save np.ascontiguousarray(a))");
  check_shape(h.shape, h.item_size, where);
  return h;
}

NpyHeader parse_npy_header(std::span<const std::byte> bytes, const std::string& source,
                           const std::string& key, NpyKinds kinds) {
  NpyHeader h = parse_npy_prefix(bytes, source, key, kinds);
  check_exact_payload(h, bytes.subspan(h.data_offset), Where{source, key});
  return h;
}

std::vector<float> npy_to_float32(const NpyHeader& h, std::span<const std::byte> payload,
                                  const std::string& source, const std::string& key,
                                  const ConsumedFn& consumed) {
  return to_numeric<float>(h, payload, Where{source, key}, consumed);
}

std::vector<std::int32_t> npy_to_int32(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source, const std::string& key,
                                       const ConsumedFn& consumed) {
  return to_numeric<std::int32_t>(h, payload, Where{source, key}, consumed);
}

std::vector<std::int64_t> npy_to_int64(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source, const std::string& key) {
  return to_numeric<std::int64_t>(h, payload, Where{source, key});
}

std::vector<std::uint64_t> npy_to_uint64(const NpyHeader& h, std::span<const std::byte> payload,
                                         const std::string& source, const std::string& key) {
  return to_numeric<std::uint64_t>(h, payload, Where{source, key});
}

std::vector<double> npy_to_float64(const NpyHeader& h, std::span<const std::byte> payload,
                                   const std::string& source, const std::string& key) {
  return to_numeric<double>(h, payload, Where{source, key});
}

std::vector<std::string> npy_to_strings(const NpyHeader& h, std::span<const std::byte> payload,
                                        const std::string& source, const std::string& key) {
  const Where where{source, key};
  if (h.is_numeric())
    where.fail("dtype '" + h.descr + "' holds numbers, expected strings ('<U' or '|S')");
  check_payload(h, payload, where);
  const std::int64_t n = h.count();
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const std::byte* item = payload.data() + static_cast<std::size_t>(i) * h.item_size;
    if (h.dtype == DType::kUnicode) {
      out.push_back(utf32_item(item, h.item_size / 4, i, where));
    } else {
      std::size_t len = h.item_size;
      while (len > 0 && item[len - 1] == std::byte{0}) --len;
      out.emplace_back(reinterpret_cast<const char*>(item), len);
    }
  }
  return out;
}

std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape) {
  std::string dict =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  // numpy leaves room for the first axis to grow to 21 digits in place.
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  // Like numpy, pad with spaces to a multiple of 64 including the final
  // newline; an already aligned header still gets a full 64 bytes of padding.
  const std::size_t hlen = dict.size() + 1;
  const std::size_t padlen = kAlign - ((kPreludeSize + 2 + hlen) % kAlign);
  const std::size_t total = hlen + padlen;
  if (total > std::numeric_limits<std::uint16_t>::max())
    throw Error("npy header for shape " + shape_repr(shape) + " is too long for version 1.0");
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(total & 0xFF);
  out += static_cast<char>(total >> 8);
  out += dict;
  out.append(padlen, ' ');
  out += '\n';
  return out;
}

std::string npy_bytes(const std::string& descr, const std::vector<std::int64_t>& shape,
                      std::span<const std::byte> payload) {
  std::string out = npy_header(descr, shape);
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return out;
}

NpyArray read_npy(const std::string& path) {
  NpyArray array;
  if (is_stream(path)) {
    // A pipe has no size to seek to: read it to its end.
    InputStream in(path);
    array.bytes = in.read_all();
    array.header = parse_npy_header(array.bytes, in.name());
    return array;
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw FileError(path, std::string("cannot open: ") + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) throw FileError(path, "cannot read (is it a directory?)");
  array.bytes.resize(static_cast<std::size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(array.bytes.data()), size);
  if (!in) throw FileError(path, "read failed");
  array.header = parse_npy_header(array.bytes, path);
  return array;
}

bool has_npy_magic(std::string_view head) { return head.starts_with(kMagic); }

void write_npy(const std::string& path, std::span<const float> values,
               const std::vector<std::int64_t>& shape) {
  write_npy_file(path, values, shape, "<f4");
}

void write_npy(const std::string& path, std::span<const std::int32_t> values,
               const std::vector<std::int64_t>& shape) {
  write_npy_file(path, values, shape, "<i4");
}

}  // namespace bagel
