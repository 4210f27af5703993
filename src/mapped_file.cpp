#include "bagel/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <omp.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "bagel/error.h"
#include "bagel/input_stream.h"

namespace bagel {

namespace {

// Parts of a file populated by one thread each are at least this large.
constexpr std::size_t kPopulatePartBytes = std::size_t{4} << 20;

std::vector<std::byte> read_to_end(int fd, const std::string& path) {
  std::vector<std::byte> bytes;
  std::size_t filled = 0;
  while (true) {
    if (bytes.size() - filled < 4096) bytes.resize(std::max<std::size_t>(2 * bytes.size(), filled + 4096));
    const ssize_t n = ::read(fd, bytes.data() + filled, bytes.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError(path, std::string("cannot read: ") + std::strerror(errno));
    if (n == 0) break;
    filled += static_cast<std::size_t>(n);
  }
  bytes.resize(filled);
  return bytes;
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(input_name(path)) {
  if (is_stream(path)) {
    InputStream stream(path);
    read_in_ = stream.read_all();
    data_ = read_in_.data();
    size_ = read_in_.size();
    return;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path, std::string("cannot open: ") + std::strerror(errno));
  try {
    map(fd, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // the mapping stays valid after close
}

MappedFile::MappedFile(InputStream& stream) : path_(stream.name()), read_in_(stream.read_all()) {
  data_ = read_in_.data();
  size_ = read_in_.size();
}

MappedFile::MappedFile(std::vector<std::byte> bytes, std::string name)
    : path_(std::move(name)), read_in_(std::move(bytes)) {
  data_ = read_in_.data();
  size_ = read_in_.size();
}

void MappedFile::map(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw FileError(path, std::string("cannot stat: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw FileError(path, "is a directory, expected a file");
  // Only a regular file's size is its content's: anything else reached here
  // (it changed since is_stream looked) would map as nothing at all.
  if (!S_ISREG(st.st_mode)) throw FileError(path, "is not a regular file; cannot be mapped");
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ == 0) {
    // A size of 0 need not be empty: /proc and /sys files say 0 and hold
    // what read() gives them.
    read_in_ = read_to_end(fd, path);
    data_ = read_in_.data();
    size_ = read_in_.size();
    return;
  }
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) throw FileError(path, std::string("cannot map: ") + std::strerror(errno));
  data_ = static_cast<const std::byte*>(p);
  mapped_ = true;
}

void MappedFile::release(std::span<const std::byte> range) const {
  if (!mapped_) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(range.data()) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(range.data() + range.size())) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

void MappedFile::populate() const {
#ifdef MADV_POPULATE_READ
  if (!mapped_) return;
  // In page-aligned parts, one a thread: mapping a large file's pages one
  // thread at a time took longer than the parallel scan that follows it.
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = (size_ + page - 1) / page;
  const int parts = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(omp_get_max_threads()),
                                                           std::max<std::size_t>(1, size_ / kPopulatePartBytes)));
#pragma omp parallel for schedule(static) num_threads(parts) if (parts > 1)
  for (int k = 0; k < parts; ++k) {
    const std::size_t first = pages * static_cast<std::size_t>(k) / static_cast<std::size_t>(parts) * page;
    const std::size_t last = std::min(size_, pages * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(parts) * page);
    if (last > first) ::madvise(const_cast<std::byte*>(data_) + first, last - first, MADV_POPULATE_READ);
  }
#endif
}

MappedFile::~MappedFile() {
  if (mapped_) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace bagel
