#include "bagel/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>
#include <vector>

#include "bagel/error.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

fs::path parent_folder(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

constexpr int kMaxLinkHops = 40;  // the kernel's own limit (ELOOP)

std::string link_loop_message() {
  return "is a loop of symbolic links (or a chain of more than " + std::to_string(kMaxLinkHops) +
         ")";
}

// The path a chain of symbolic links ends at, whether or not that exists
// (a dangling link names the file to create); `path` itself when it is no
// link. Replacing a loop would turn one of its links into a file, so a loop
// is an error.
fs::path through_links(fs::path path) {
  const fs::path given = path;
  std::error_code ec;
  for (int hop = 0; fs::is_symlink(fs::symlink_status(path, ec)); ++hop) {
    if (hop == kMaxLinkHops) throw FileError(given.string(), link_loop_message());
    const fs::path to = fs::read_symlink(path, ec);
    if (ec) break;
    path = (to.is_absolute() ? to : path.parent_path() / to).lexically_normal();
  }
  return path;
}

// The descriptor `path` names by one of the kernel's names for this
// process's own (/dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N,
// /proc/self/fd/N, /proc/PID/fd/N), or -1.
int descriptor_name(const fs::path& path) {
  std::error_code ec;
  const std::string name = fs::absolute(path, ec).lexically_normal().string();
  if (name == "/dev/stdin") return 0;
  if (name == "/dev/stdout") return 1;
  if (name == "/dev/stderr") return 2;
  for (const std::string& folder : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"),
                                    "/proc/" + std::to_string(::getpid()) + "/fd/"}) {
    if (!name.starts_with(folder) || name.size() == folder.size()) continue;
    const char* digits = name.c_str() + folder.size();
    char* end = nullptr;
    errno = 0;
    const long fd = std::strtol(digits, &end, 10);
    if (*end == '\0' && std::isdigit(static_cast<unsigned char>(*digits)) && errno == 0 && fd <= INT_MAX)
      return static_cast<int>(fd);
  }
  return -1;
}

// The descriptor `path` names, itself or through the user's links to one
// of those names (out.txt -> /dev/stdout), or -1. Read by name, before the
// kernel follows /proc/self/fd/1 to the file it has open.
int own_descriptor(fs::path path) {
  std::error_code ec;
  for (int hop = 0; hop < 40; ++hop) {
    const int fd = descriptor_name(path);
    if (fd >= 0) return fd;
    if (!fs::is_symlink(fs::symlink_status(path, ec))) break;
    const fs::path to = fs::read_symlink(path, ec);
    if (ec) break;
    path = (to.is_absolute() ? to : path.parent_path() / to).lexically_normal();
  }
  return -1;
}

}  // namespace

bool names_own_descriptor(const std::filesystem::path& path) { return own_descriptor(path) >= 0; }

namespace {

// A descriptor whose writes go at an offset of a file (or a socket, which
// cannot be reopened by its name): only the descriptor itself writes it
// right. A pipe or a terminal reopened by its name is the same stream.
bool written_through_descriptor(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode);
}

}  // namespace


DescriptorEnd DescriptorEnd::of(int fd) {
  struct stat st {};
  DescriptorEnd end;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return end;
  end.regular_ = true;
  end.size_ = st.st_size;
  // With O_APPEND every write goes to the end, whatever the offset.
  const int flags = ::fcntl(fd, F_GETFL);
  end.offset_ = flags >= 0 && (flags & O_APPEND) != 0 ? st.st_size : ::lseek(fd, 0, SEEK_CUR);
  return end;
}

void DescriptorEnd::undo(int fd) const {
  if (!regular_ || offset_ < 0) return;
  static_cast<void>(::ftruncate(fd, std::max(size_, offset_)));
  static_cast<void>(::lseek(fd, offset_, SEEK_SET));
}

AtomicPath::AtomicPath(fs::path target) : target_(std::move(target).lexically_normal()) {
  // "runs/model/" names the folder "runs/model": the temporary must be its sibling.
  if (!target_.has_filename() && target_.has_parent_path()) target_ = target_.parent_path();
  std::error_code ec;
  if (const int fd = own_descriptor(target_); fd >= 0 && written_through_descriptor(fd)) {
    // $TMPDIR, or where it is missing, the folder of the file the
    // descriptor has open (a socket has none).
    fs::path folder = fs::temp_directory_path(ec);
    if (ec) {
      std::error_code link_ec;
      const fs::path file = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), link_ec);
      if (link_ec || !file.is_absolute() || !fs::is_directory(file.parent_path(), link_ec))
        throw FileError(target_.string(), "needs a temporary file in $TMPDIR: " + ec.message());
      folder = file.parent_path();
    }
    std::random_device rd;
    descriptor_ = fd;
    temp_ = folder / ("bagel-fd" + std::to_string(fd) + ".tmp-" + std::to_string(::getpid()) + "-" +
                      std::to_string(rd() % 1000000));
    registration_ = std::make_unique<TempRegistration>(temp_);
    return;
  }
  // What the path leads to, asked of the kernel before the links are read
  // here: /dev/stdout leads through /proc/self/fd/1, a link whose text
  // ("pipe:[123]", "socket:[45]") names no path, to the pipe itself.
  const fs::file_status st = fs::status(target_, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
    // A device, pipe or /dev/stdout: renaming over it would destroy it, and
    // there is no half-written file to protect anyway. Write straight to it,
    // by the name given (opening it reopens what the links lead to).
    temp_ = target_;
    direct_ = true;
    return;
  }
  // A symbolic link is written through, as the shell's `>` writes: the file
  // it names gets the new contents, and the link stays a link.
  target_ = through_links(target_);
  std::random_device rd;
  temp_ = target_;
  temp_ += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(rd() % 1000000);
  // Registered before anything creates it, so no moment exists at which an
  // interrupt could leave it behind.
  registration_ = std::make_unique<TempRegistration>(temp_);
}

AtomicPath::~AtomicPath() {
  if (!committed_ && !direct_) {
    std::error_code ec;
    fs::remove_all(temp_, ec);  // only ever bagel's own temporary
  }
}

void AtomicPath::commit() {
  if (direct_) {
    committed_ = true;
    return;
  }
  if (descriptor_ >= 0) {
    copy_into_descriptor();
    committed_ = true;
    std::error_code ec;
    fs::remove(temp_, ec);
    registration_.reset();
    return;
  }
  keep_target_mode();
  sync_temp();
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec == std::errc::directory_not_empty || ec == std::errc::file_exists)
    throw FileError(target_.string(), "already exists and is not empty; not replaced");
  if (ec) throw FileError(target_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
  registration_.reset();
  sync_path(parent_folder(target_));
}

void AtomicPath::copy_into_descriptor() const {
  const int in = ::open(temp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw FileError(temp_.string(), std::string("cannot open: ") + std::strerror(errno));
  // A stop waits for the copy: the descriptor gets the whole output or none.
  const DeferSignals whole;
  const DescriptorEnd start = DescriptorEnd::of(descriptor_);
  std::vector<char> buffer(std::size_t{1} << 20);
  std::string failure;
  while (failure.empty()) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failure = "cannot read back the temporary " + temp_.string() + ": " + std::strerror(errno);
    if (n <= 0) break;
    for (ssize_t done = 0; done < n && failure.empty();) {
      errno = 0;  // a write of 0 bytes sets none
      const ssize_t w = ::write(descriptor_, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) failure = write_failed_message();
      if (w > 0) done += w;
    }
  }
  ::close(in);
  if (failure.empty()) return;
  start.undo(descriptor_);
  throw FileError(target_.string(), failure);
}

void AtomicPath::keep_target_mode() const { keep_mode_of(target_, temp_); }

void keep_mode_of(const fs::path& old_file, const fs::path& new_file) {
  struct stat old_stat {};
  if (::stat(old_file.c_str(), &old_stat) != 0 || !S_ISREG(old_stat.st_mode)) return;
  // Best effort: a file the user made group-readable, or private, stays so.
  // The owner changes only where the process may give the file away (root).
  ::chmod(new_file.c_str(), old_stat.st_mode & 07777);
  if (::geteuid() == 0) static_cast<void>(::chown(new_file.c_str(), old_stat.st_uid, old_stat.st_gid));
}

void AtomicPath::sync_temp() const {
  std::error_code ec;
  if (fs::is_directory(temp_, ec))
    for (const fs::directory_entry& entry : fs::directory_iterator(temp_, ec))
      if (entry.is_regular_file(ec)) sync_path(entry.path());
  sync_path(temp_);
}

bool AtomicPath::commit_by_exchange() {
  sync_temp();
  if (!exchange_paths(temp_, target_)) return false;
  sync_path(parent_folder(target_));
  return true;
}

void AtomicOutputs::write(const fs::path& target, const std::function<void(const std::string&)>& write) {
  AtomicPath* out = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    files_.push_back(std::make_unique<AtomicPath>(target));
    out = files_.back().get();
  }
  const std::string temp = out->temp().string();
  try {
    write(temp);
  } catch (const FileError& e) {
    if (e.file() != temp) throw;
    throw FileError(out->target().string(), e.message(), e.line());
  }
}

void AtomicOutputs::commit() {
  const DeferSignals defer;
  for (const std::unique_ptr<AtomicPath>& out : files_) {
    std::error_code ec;
    if (out->is_direct() || fs::exists(fs::symlink_status(out->temp(), ec))) out->commit();
  }
}

void sync_path(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw FileError(path.string(), std::string("cannot open to flush: ") + std::strerror(errno));
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // EINVAL: a pipe or a device, which keeps nothing to flush.
  if (result != 0 && error != EINVAL)
    throw FileError(path.string(), std::string("cannot flush to the disk: ") + std::strerror(error));
}

bool exchange_paths(const fs::path& a, const fs::path& b) {
  // Any failure (no support: EINVAL; a mount point: EBUSY; EXDEV, EPERM)
  // changed nothing, and the caller has a slower way that reports its own.
  return ::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0;
}

long temp_owner(const std::string& name, const std::string& prefix) {
  const std::string head = prefix + ".tmp-";
  if (!name.starts_with(head)) return 0;
  const char* p = name.c_str() + head.size();
  char* end = nullptr;
  const long pid = std::strtol(p, &end, 10);
  if (end == p || *end != '-' || pid <= 0) return 0;
  const char* n = end + 1;
  const long number = std::strtol(n, &end, 10);
  return end != n && *end == '\0' && number >= 0 ? pid : 0;
}

void check_can_create(const fs::path& target) {
  if (const int fd = own_descriptor(target); fd >= 0) {
    // Written through the descriptor (AtomicPath), not by creating a file.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0)
      throw FileError(target.string(), "names descriptor " + std::to_string(fd) + ", which is not open");
    if ((flags & O_ACCMODE) == O_RDONLY)
      throw FileError(target.string(), "names descriptor " + std::to_string(fd) +
                                           ", which is open for reading only");
    return;
  }
  std::error_code status_ec;
  const fs::file_status st = fs::status(target, status_ec);
  if (status_ec == std::errc::too_many_symbolic_link_levels)
    throw FileError(target.string(), link_loop_message());
  if (!status_ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
    // A device or a pipe (/dev/stdout) is written in place (AtomicPath): its
    // folder (/dev) need not take new entries.
    if (::access(target.c_str(), W_OK) != 0)
      throw FileError(target.string(), std::string("cannot be written: ") + std::strerror(errno));
    return;
  }
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(target, ec)) && !fs::exists(st)) {
    // A dangling link names the file to create; its folder is not made
    // through the link (the shell's `>` does not either).
    const fs::path end = through_links(target);
    const fs::path end_folder = parent_folder(end);
    if (!fs::is_directory(end_folder, ec))
      throw FileError(target.string(), "cannot be created: it is a symbolic link to " + end.string() +
                                           ", and the folder " + end_folder.string() + " does not exist");
  }
  const fs::path full = fs::absolute(target).lexically_normal();
  fs::path folder = full.has_filename() ? full.parent_path() : full.parent_path().parent_path();
  // The nearest folder that exists: missing ones below it would be created.
  while (!fs::exists(fs::symlink_status(folder, ec)) && folder.has_parent_path() &&
         folder != folder.parent_path())
    folder = folder.parent_path();
  if (!fs::is_directory(folder, ec))
    throw FileError(target.string(), "cannot be created: " + folder.string() +
                                         " is a file, not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw FileError(target.string(), "cannot be created: the folder " + folder.string() +
                                         " is not writable (" + std::strerror(errno) + ")");
}

ErrnoKeepingBuf::int_type ErrnoKeepingBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return sync() == 0 ? traits_type::not_eof(c) : c;
  errno = 0;
  const int_type put = target_->sputc(traits_type::to_char_type(c));
  if (traits_type::eq_int_type(put, traits_type::eof())) keep_errno();
  return put;
}

std::streamsize ErrnoKeepingBuf::xsputn(const char* s, std::streamsize n) {
  errno = 0;
  const std::streamsize put = target_->sputn(s, n);
  if (put < n) keep_errno();
  return put;
}

int ErrnoKeepingBuf::sync() {
  errno = 0;
  const int result = target_->pubsync();
  if (result != 0) keep_errno();
  return result;
}

void ErrnoKeepingBuf::keep_errno() {
  if (error_ == 0) error_ = errno;
}

std::string write_failed_message() { return write_failed_message(errno); }

std::string write_failed_message(int error) {
  return error != 0 ? std::string("write failed: ") + std::strerror(error) : "write failed (disk full?)";
}

void write_file(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw FileError(path.string(), "cannot open for writing");
  errno = 0;
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  if (!out) throw FileError(path.string(), write_failed_message());
}

void write_file_atomic(const fs::path& path, const std::string& contents) {
  AtomicPath tmp(path);
  try {
    write_file(tmp.temp(), contents);
  } catch (const FileError& e) {
    throw FileError(path.string(), e.message());
  }
  tmp.commit();
}

}  // namespace bagel
