// A zip archive of STORED (uncompressed) members written with plain writes,
// for the .npz files bagel writes uncompressed: each member's payload
// starts on a 64-byte boundary (a zipalign-style extra field in its local
// header) so that readers can map the arrays in place, and a member's bytes
// may be produced piece by piece (converted on the fly, never held whole).
//
// Archives below 4 GiB only (no Zip64 records) into a regular file, since
// each member's CRC is written back into its local header once its bytes
// are out; npz.cpp uses libzip for anything else.
//
//   StoredZipWriter zip(temp_file, "x.npz");
//   zip.begin_member("indices.npy", header.size() + payload.size(), true);
//   zip.write(header_bytes); zip.write(payload);
//   zip.end_member();
//   zip.finish();
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bagel {

// zlib's CRC-32 of `bytes` continuing `crc` (0 to start); spans of 8 MiB
// or more in parallel parts joined with crc32_combine.
std::uint32_t crc_of(std::uint32_t crc, std::span<const std::byte> bytes);


class StoredZipWriter {
 public:
  // The largest archive this writer makes: 32-bit sizes and offsets.
  static constexpr std::uint64_t kMaxBytes = 0xFFFFFFFEu;

  // Creates (truncates) `file`; errors name `path`, the file the user asked for.
  StoredZipWriter(const std::string& file, std::string path);
  ~StoredZipWriter();
  StoredZipWriter(const StoredZipWriter&) = delete;
  StoredZipWriter& operator=(const StoredZipWriter&) = delete;

  // Starts a member of exactly `size` bytes; `align`: its first byte on a
  // 64-byte boundary of the file.
  void begin_member(const std::string& name, std::uint64_t size, bool align);
  void write(std::span<const std::byte> bytes);
  // The same for bytes whose CRC-32 the caller computed (zlib's crc32 from 0).
  void write(std::span<const std::byte> bytes, std::uint32_t crc);
  // Checks that `size` bytes came, and writes the CRC into the local header.
  void end_member();
  // The central directory and the end record; closes the file.
  void finish();

  // Bytes of the archive whose members have these names and sizes (with
  // the worst-case alignment padding), to check against kMaxBytes first.
  static std::uint64_t archive_bytes(const std::vector<std::string>& names,
                                     const std::vector<std::uint64_t>& sizes);

 private:
  struct Entry {
    std::string name;
    std::uint64_t header_offset = 0;
    std::uint64_t size = 0;
    std::uint32_t crc = 0;
  };
  void put(std::span<const std::byte> bytes);
  void put_at(std::span<const std::byte> bytes, std::uint64_t offset);

  std::string path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::vector<Entry> entries_;
  std::uint64_t written_ = 0;  // of the open member
  std::uint32_t crc_ = 0;      // of the open member so far
  std::uint64_t flushed_ = 0;  // bytes [0, flushed_) handed to the disk early
};

}  // namespace bagel
