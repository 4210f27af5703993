// numpy .npy arrays (format versions 1.0, 2.0, 3.0), little-endian, C order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bagel {

// The element types bagel reads; everything else is rejected with its descr.
enum class DType { kBool, kInt8, kUInt8, kInt16, kUInt16, kInt32, kUInt32, kInt64, kUInt64,
                   kFloat32, kFloat64, kUnicode };

struct NpyHeader {
  DType dtype = DType::kFloat32;
  std::string descr;               // as written, e.g. "<f4", "<U7"
  std::size_t item_size = 0;       // bytes per element (4 * chars for unicode)
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
  std::size_t data_offset = 0;     // bytes from the start of the .npy to the payload
  std::int64_t count() const;      // product of shape (1 for a 0-d array)
};

// Parses the magic, version and header dict. `source` names the file (and
// member) in errors. Rejects big-endian, Fortran order, object dtypes, and a
// payload shorter than the shape implies.
NpyHeader parse_npy_header(std::span<const std::byte> bytes, const std::string& source);

// Converts a numeric payload to the requested type, checking that integer
// values fit (int64 -> int32) and naming `source` on failure.
std::vector<float> npy_to_float32(const NpyHeader& h, std::span<const std::byte> payload,
                                  const std::string& source);
std::vector<std::int32_t> npy_to_int32(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source);
std::vector<std::int64_t> npy_to_int64(const NpyHeader& h, std::span<const std::byte> payload,
                                       const std::string& source);
std::vector<double> npy_to_float64(const NpyHeader& h, std::span<const std::byte> payload,
                                   const std::string& source);
// Unicode (UTF-32 in numpy) to UTF-8 strings, trailing NULs stripped.
std::vector<std::string> npy_to_strings(const NpyHeader& h, std::span<const std::byte> payload,
                                        const std::string& source);

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
NpyArray read_npy(const std::string& path);

// Atomic writers (temp file + rename).
void write_npy(const std::string& path, std::span<const float> values,
               const std::vector<std::int64_t>& shape);
void write_npy(const std::string& path, std::span<const std::int32_t> values,
               const std::vector<std::int64_t>& shape);

}  // namespace bagel
