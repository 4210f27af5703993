#include "bagel/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

#include "bagel/error.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

fs::path parent_folder(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

}  // namespace

AtomicPath::AtomicPath(fs::path target) : target_(std::move(target).lexically_normal()) {
  // "runs/model/" names the folder "runs/model": the temporary must be its sibling.
  if (!target_.has_filename() && target_.has_parent_path()) target_ = target_.parent_path();
  std::error_code ec;
  const fs::file_status st = fs::status(target_, ec);
  if (!ec && fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
    // A device, pipe or /dev/stdout: renaming over it would destroy it, and
    // there is no half-written file to protect anyway. Write straight to it.
    temp_ = target_;
    direct_ = true;
    return;
  }
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
  const fs::path full = fs::absolute(target).lexically_normal();
  fs::path folder = full.has_filename() ? full.parent_path() : full.parent_path().parent_path();
  std::error_code ec;
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

void write_file_atomic(const fs::path& path, const std::string& contents) {
  AtomicPath tmp(path);
  {
    std::ofstream out(tmp.temp(), std::ios::binary);
    if (!out) throw FileError(path.string(), "cannot open for writing");
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.flush();
    if (!out) throw FileError(path.string(), "write failed (disk full?)");
  }
  tmp.commit();
}

}  // namespace bagel
