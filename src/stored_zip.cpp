#include "stored_zip.h"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "bagel/error.h"

namespace bagel {

namespace {

constexpr std::uint64_t kAlign = 64;
constexpr std::uint64_t kLocalHeaderBytes = 30;
constexpr std::uint64_t kCentralHeaderBytes = 46;
constexpr std::uint64_t kEndRecordBytes = 22;
// The padding extra field (id 0xD935, as Android's zipalign writes it): id,
// length, the 2-byte alignment, then zeros; 6 bytes at least.
constexpr std::uint16_t kAlignmentFieldId = 0xD935;
constexpr std::uint64_t kAlignmentFieldMin = 6;
// 1980-01-01 00:00, the earliest DOS date: the archive's bytes then depend
// on its contents alone.
constexpr std::uint16_t kDosTime = 0;
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr std::uint16_t kVersion = 20;  // 2.0: stored members, no Zip64
// Pieces of this size or more have their CRC computed in parallel parts.
constexpr std::size_t kParallelCrcBytes = std::size_t{8} << 20;
// Written bytes handed to the disk in runs of this size.
constexpr std::uint64_t kEarlyFlushBytes = std::uint64_t{8} << 20;

class Record {
 public:
  void u16(std::uint16_t v) { little(v, 2); }
  void u32(std::uint32_t v) { little(v, 4); }
  void bytes(std::string_view s) {
    for (const char c : s) bytes_.push_back(static_cast<std::byte>(c));
  }
  void zeros(std::size_t n) { bytes_.insert(bytes_.end(), n, std::byte{0}); }
  std::span<const std::byte> data() const { return bytes_; }

 private:
  void little(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
  }
  std::vector<std::byte> bytes_;
};

// Bytes of alignment field that put a payload at `offset` on the next
// boundary (a short gap takes a whole extra unit: the field has a minimum).
std::uint64_t padding_for(std::uint64_t offset) {
  std::uint64_t pad = (kAlign - offset % kAlign) % kAlign;
  if (pad > 0 && pad < kAlignmentFieldMin) pad += kAlign;
  return pad;
}

}  // namespace

// (stored_zip.h)
std::uint32_t crc_of(std::uint32_t crc, std::span<const std::byte> bytes) {
  if (bytes.empty()) return crc;  // (zlib takes a null buffer as a request for the initial value)
  const auto* p = reinterpret_cast<const Bytef*>(bytes.data());
  const int parts = bytes.size() < kParallelCrcBytes ? 1 : omp_get_max_threads();
  if (parts <= 1) return static_cast<std::uint32_t>(crc32_z(crc, p, bytes.size()));
  std::vector<uLong> crcs(static_cast<std::size_t>(parts));
  std::vector<std::size_t> bounds(static_cast<std::size_t>(parts) + 1);
  for (int k = 0; k <= parts; ++k) bounds[k] = bytes.size() * static_cast<std::size_t>(k) / static_cast<std::size_t>(parts);
#pragma omp parallel for schedule(static) num_threads(parts)
  for (int k = 0; k < parts; ++k) crcs[k] = crc32_z(0, p + bounds[k], bounds[k + 1] - bounds[k]);
  uLong out = crc;
  for (int k = 0; k < parts; ++k)
    out = crc32_combine64(out, crcs[k], static_cast<z_off64_t>(bounds[k + 1] - bounds[k]));
  return static_cast<std::uint32_t>(out);
}

StoredZipWriter::StoredZipWriter(const std::string& file, std::string path) : path_(std::move(path)) {
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) throw FileError(path_, std::string("cannot create: ") + std::strerror(errno));
}

StoredZipWriter::~StoredZipWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t StoredZipWriter::archive_bytes(const std::vector<std::string>& names,
                                             const std::vector<std::uint64_t>& sizes) {
  std::uint64_t bytes = kEndRecordBytes;
  for (std::size_t i = 0; i < names.size(); ++i)
    bytes += kLocalHeaderBytes + kCentralHeaderBytes + 2 * names[i].size() + kAlign + kAlignmentFieldMin + sizes[i];
  return bytes;
}

void StoredZipWriter::put(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FileError(path_, std::string("write failed: ") + std::strerror(errno));
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    offset_ += static_cast<std::uint64_t>(n);
  }
  // The archive is flushed to the disk before it is renamed into place
  // (atomic_file.h): starting the writeback of what is written while the
  // rest is still being made leaves that fsync less to wait for.
  if (offset_ - flushed_ >= kEarlyFlushBytes) {
    ::sync_file_range(fd_, static_cast<off_t>(flushed_), static_cast<off_t>(offset_ - flushed_),
                      SYNC_FILE_RANGE_WRITE);  // a hint: its failure leaves the fsync to do it
    flushed_ = offset_;
  }
}

void StoredZipWriter::put_at(std::span<const std::byte> bytes, std::uint64_t offset) {
  while (!bytes.empty()) {
    const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw FileError(path_, std::string("write failed: ") + std::strerror(errno));
    bytes = bytes.subspan(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void StoredZipWriter::begin_member(const std::string& name, std::uint64_t size, bool align) {
  const std::uint64_t pad = align ? padding_for(offset_ + kLocalHeaderBytes + name.size()) : 0;
  if (offset_ + kLocalHeaderBytes + name.size() + pad + size > kMaxBytes)
    throw FileError(path_, "the archive would reach 4 GiB (Zip64 is written by libzip)");
  entries_.push_back({name, offset_, size, 0});
  Record r;
  r.u32(0x04034b50);
  r.u16(kVersion);
  r.u16(0);  // flags
  r.u16(0);  // stored
  r.u16(kDosTime);
  r.u16(kDosDate);
  r.u32(0);  // CRC, written by end_member
  r.u32(static_cast<std::uint32_t>(size));
  r.u32(static_cast<std::uint32_t>(size));
  r.u16(static_cast<std::uint16_t>(name.size()));
  r.u16(static_cast<std::uint16_t>(pad));
  r.bytes(name);
  if (pad > 0) {
    r.u16(kAlignmentFieldId);
    r.u16(static_cast<std::uint16_t>(pad - 4));
    r.u16(static_cast<std::uint16_t>(kAlign));
    r.zeros(pad - kAlignmentFieldMin);
  }
  put(r.data());
  written_ = 0;
  crc_ = 0;
}

void StoredZipWriter::write(std::span<const std::byte> bytes) {
  crc_ = crc_of(crc_, bytes);
  written_ += bytes.size();
  put(bytes);
}

void StoredZipWriter::write(std::span<const std::byte> bytes, std::uint32_t crc) {
  crc_ = static_cast<std::uint32_t>(crc32_combine64(crc_, crc, static_cast<z_off64_t>(bytes.size())));
  written_ += bytes.size();
  put(bytes);
}

void StoredZipWriter::end_member() {
  Entry& entry = entries_.back();
  if (written_ != entry.size)
    throw FileError(path_, "member " + entry.name + ": " + std::to_string(written_) + " bytes written, " +
                               std::to_string(entry.size) + " announced");
  entry.crc = crc_;
  Record r;
  r.u32(crc_);
  put_at(r.data(), entry.header_offset + 14);
}

void StoredZipWriter::finish() {
  const std::uint64_t directory = offset_;
  Record r;
  for (const Entry& e : entries_) {
    r.u32(0x02014b50);
    r.u16((3 << 8) | kVersion);  // made by: Unix
    r.u16(kVersion);
    r.u16(0);
    r.u16(0);
    r.u16(kDosTime);
    r.u16(kDosDate);
    r.u32(e.crc);
    r.u32(static_cast<std::uint32_t>(e.size));
    r.u32(static_cast<std::uint32_t>(e.size));
    r.u16(static_cast<std::uint16_t>(e.name.size()));
    r.u16(0);  // extra
    r.u16(0);  // comment
    r.u16(0);  // disk
    r.u16(0);  // internal attributes
    r.u32(0100644u << 16);  // a regular file, rw-r--r--
    r.u32(static_cast<std::uint32_t>(e.header_offset));
    r.bytes(e.name);
  }
  const std::uint64_t directory_bytes = r.data().size();
  if (directory + directory_bytes + kEndRecordBytes > kMaxBytes)
    throw FileError(path_, "the archive would reach 4 GiB (Zip64 is written by libzip)");
  r.u32(0x06054b50);
  r.u16(0);
  r.u16(0);
  r.u16(static_cast<std::uint16_t>(entries_.size()));
  r.u16(static_cast<std::uint16_t>(entries_.size()));
  r.u32(static_cast<std::uint32_t>(directory_bytes));
  r.u32(static_cast<std::uint32_t>(directory));
  r.u16(0);
  put(r.data());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw FileError(path_, std::string("write failed: ") + std::strerror(errno));
}

}  // namespace bagel
