// numpy .npy arrays (format versions 1.0, 2.0, 3.0), little-endian, C order.
//
// Errors are FileErrors naming `source` (the file); functions that take a
// `key` (the array's name inside an .npz, e.g. "indices") put it at the start
// of the message: "x.npz: indices: value 3000000000 at position 7 ...".
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

// The element types bagel reads; everything else is rejected with its descr.
// kBytes is numpy's fixed-width bytes ('|S3'), as in scipy's format.npy.
enum class DType { kBool, kInt8, kUInt8, kInt16, kUInt16, kInt32, kUInt32, kInt64, kUInt64,
                   kFloat32, kFloat64, kUnicode, kBytes };

struct NpyHeader {
  DType dtype = DType::kFloat32;
  std::string descr;               // as written, e.g. "<f4", "<U7"
  std::size_t item_size = 0;       // bytes per element (4 * chars for unicode)
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;     // bytes from the start of the .npy to the payload
  std::int64_t count() const;      // product of shape (1 for a 0-d array)
  std::size_t payload_size() const { return static_cast<std::size_t>(count()) * item_size; }
  bool is_numeric() const { return dtype != DType::kUnicode && dtype != DType::kBytes; }
};

// The dtypes a reader goes on to convert an array to: only numbers (the
// arrays of an .npz), or numbers and strings (labels). A dtype that is
// neither is refused with the list of those the reader takes.
enum class NpyKinds { kNumbersAndStrings, kNumbers };

// Parses the magic, version and header dict. `bytes` is the whole .npy.
// Rejects big-endian, Fortran order, object, structured and zero-width
// dtypes, a header longer than 64 KiB, and a payload whose size is not
// exactly what the shape implies (shorter: truncated; longer: trailing
// bytes the header does not account for).
NpyHeader parse_npy_header(std::span<const std::byte> bytes, const std::string& source,
                           const std::string& key = {},
                           NpyKinds kinds = NpyKinds::kNumbersAndStrings);

// The same checks on the header alone: `bytes` holds at least the header
// (the payload may be missing or partial). Lets a reader learn the size an
// array needs before reading or inflating it; kNpyMaxPrefixBytes always
// cover a header bagel accepts.
NpyHeader parse_npy_prefix(std::span<const std::byte> bytes, const std::string& source,
                           const std::string& key = {},
                           NpyKinds kinds = NpyKinds::kNumbersAndStrings);
inline constexpr std::size_t kNpyMaxPrefixBytes = 12 + (std::size_t{1} << 16);

// Converts a numeric payload (the bytes after the header, any alignment) to
// the requested type. Integer targets check that each value fits (int64 ->
// int32) and that float values are whole numbers. Float targets accept every
// numeric dtype: float64 -> float32 rounds, but a finite value too large for
// float32 is an error; NaN and infinities are kept, for CsrMatrix::validate
// to report with their row.
//
// `consumed`, when given, is called (from any thread) with each stretch of
// the payload once it has been converted, so that a caller reading from a
// mapped file can drop those pages at once: peak memory is then the result
// plus a few stretches, not the result plus the whole source.
using ConsumedFn = std::function<void(std::span<const std::byte>)>;
std::vector<float> npy_to_float32(const NpyHeader& h, std::span<const std::byte> payload,
                                  const std::string& source, const std::string& key = {},
                                  const ConsumedFn& consumed = {});
std::vector<std::int32_t> npy_to_int32(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source, const std::string& key = {},
                                       const ConsumedFn& consumed = {});
std::vector<std::int64_t> npy_to_int64(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source, const std::string& key = {});
std::vector<std::uint64_t> npy_to_uint64(const NpyHeader& h, std::span<const std::byte> payload,
                                         const std::string& source, const std::string& key = {});
std::vector<double> npy_to_float64(const NpyHeader& h, std::span<const std::byte> payload,
                                   const std::string& source, const std::string& key = {});
// Unicode (UTF-32 in numpy) to UTF-8 strings, trailing NULs stripped; bytes
// ('|S') are taken as they are, trailing NULs stripped.
std::vector<std::string> npy_to_strings(const NpyHeader& h, std::span<const std::byte> payload,
                                        const std::string& source, const std::string& key = {});

// The version 1.0 header exactly as numpy writes it (keys sorted, room for
// the first axis to grow, spaces and a newline up to a multiple of 64 bytes).
std::string npy_header(const std::string& descr, const std::vector<std::int64_t>& shape);

// Serialises a header + payload for a C-order little-endian array.
std::string npy_bytes(const std::string& descr, const std::vector<std::int64_t>& shape,
                      std::span<const std::byte> payload);

// A whole .npy file read into memory.
struct NpyArray {
  NpyHeader header;
  std::vector<std::byte> bytes;    // whole file; payload at header.data_offset
  std::span<const std::byte> payload() const {
    return std::span<const std::byte>(bytes).subspan(header.data_offset);
  }
};
// A stream (input_stream.h) is read to its end.
NpyArray read_npy(const std::string& path);

// True when `head` (a file's first bytes) starts with the .npy magic
// "\x93NUMPY": tells an .npy from text whatever the file is named.
inline constexpr std::size_t kNpyMagicSize = 6;
bool has_npy_magic(std::string_view head);

// Atomic writers (temp file + rename). The shape must hold values.size()
// elements.
void write_npy(const std::string& path, std::span<const float> values,
               const std::vector<std::int64_t>& shape);
void write_npy(const std::string& path, std::span<const std::int32_t> values,
               const std::vector<std::int64_t>& shape);

namespace detail {
// Text read from a binary file, safe to put in an error message: bytes other
// than printable ASCII are shown as \xNN.
std::string printable(std::string_view text);
// A shape as Python writes a tuple: (), (5,), (2, 3).
std::string shape_repr(const std::vector<std::int64_t>& shape);
}  // namespace detail

}  // namespace bagel
