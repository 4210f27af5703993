#include "bagel/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "bagel/error.h"

namespace bagel {

namespace {

// Bytes asked of read() at a time: a pipe holds 64 KiB by default.
constexpr std::size_t kReadSize = std::size_t{1} << 16;

}  // namespace

bool is_stream(const std::string& path) {
  if (path == "-") return true;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

namespace {

// The device and inode `path` reads from: standard input's for "-".
bool stream_identity(const std::string& path, struct stat& st) {
  if (path == "-") return ::fstat(STDIN_FILENO, &st) == 0;
  return ::stat(path.c_str(), &st) == 0;
}

// "-" or a name of descriptor 0: when standard input is a regular file,
// /dev/stdin is no stream, but two readers of it still share one input.
bool names_stdin(const std::string& path) {
  return path == "-" || path == "/dev/stdin" || path == "/dev/fd/0" || path == "/proc/self/fd/0";
}

}  // namespace

bool same_stream(const std::string& a, const std::string& b) {
  if (names_stdin(a) && names_stdin(b)) return true;
  if (a.empty() || b.empty() || !is_stream(a) || !is_stream(b)) return false;
  if (a == b) return true;
  struct stat sa {}, sb {};
  return stream_identity(a, sa) && stream_identity(b, sb) && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

bool is_stdin(const std::string& path) { return same_stream(path, "-"); }

std::string input_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

InputStream::InputStream(const std::string& path) : name_(input_name(path)) {
  if (path == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw FileError(name_, std::string("cannot open: ") + std::strerror(errno));
    owned_ = true;
  }
  struct stat st {};
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

InputStream::~InputStream() {
  if (owned_) ::close(fd_);
}

std::size_t InputStream::read_fd(char* out, std::size_t size) {
  while (true) {
    const ssize_t n = ::read(fd_, out, size);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) throw FileError(name_, std::string("read failed: ") + std::strerror(errno));
  }
}

std::string_view InputStream::peek(std::size_t count) {
  while (peeked_.size() < count) {
    const std::size_t have = peeked_.size();
    peeked_.resize(count);
    const std::size_t n = read_fd(peeked_.data() + have, count - have);
    peeked_.resize(have + n);
    if (n == 0) break;
  }
  return std::string_view(peeked_).substr(0, std::min(count, peeked_.size()));
}

std::size_t InputStream::read(std::span<char> out) {
  if (!peeked_.empty()) {
    const std::size_t n = std::min(out.size(), peeked_.size());
    std::memcpy(out.data(), peeked_.data(), n);
    peeked_.erase(0, n);
    return n;
  }
  return read_fd(out.data(), out.size());
}

std::vector<std::byte> InputStream::read_all() {
  std::vector<std::byte> bytes;
  std::size_t filled = 0;
  while (true) {
    if (bytes.size() - filled < kReadSize) bytes.resize(std::max(2 * bytes.size(), filled + kReadSize));
    const std::size_t n =
        read(std::span<char>(reinterpret_cast<char*>(bytes.data()) + filled, bytes.size() - filled));
    if (n == 0) break;
    filled += n;
  }
  bytes.resize(filled);
  bytes.shrink_to_fit();
  return bytes;
}

LineBlocks::LineBlocks(InputStream& in, std::size_t min_bytes)
    : in_(in), min_bytes_(std::max<std::size_t>(min_bytes, 1)) {
  // Grown as the data arrives (next()): a short stream costs what it holds,
  // not min_bytes (a 4 MiB block for svmlight, zero-filled per stream).
  buffer_.resize(2 * kReadSize);
}

std::span<const char> LineBlocks::next() {
  // The partial line left after the last block moves to the front.
  if (consumed_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + consumed_, filled_ - consumed_);
    filled_ -= consumed_;
    consumed_ = 0;
  }
  std::size_t searched = 0;  // bytes already known to hold no '\n' worth stopping at
  while (true) {
    if (filled_ >= min_bytes_ || ended_) {
      // The block ends after the last '\n' that has arrived.
      for (std::size_t i = filled_; i > searched; --i) {
        if (buffer_[i - 1] == '\n') {
          consumed_ = i;
          return {buffer_.data(), consumed_};
        }
      }
      searched = filled_;
      if (ended_) {
        consumed_ = filled_;  // the last line, without its '\n'; empty at the very end
        return {buffer_.data(), consumed_};
      }
    }
    if (buffer_.size() - filled_ < kReadSize) buffer_.resize(2 * buffer_.size());
    const std::size_t n = in_.read(std::span<char>(buffer_.data() + filled_, buffer_.size() - filled_));
    if (n == 0) ended_ = true;
    filled_ += n;
    bytes_read_ += n;
  }
}

}  // namespace bagel
