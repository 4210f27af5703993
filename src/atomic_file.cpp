#include "bagel/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <system_error>

#include "bagel/error.h"

namespace bagel {

namespace fs = std::filesystem;

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
  std::error_code ec;
  fs::rename(temp_, target_, ec);
  if (ec == std::errc::directory_not_empty || ec == std::errc::file_exists)
    throw FileError(target_.string(), "already exists and is not empty; not replaced");
  if (ec) throw FileError(target_.string(), "cannot rename into place: " + ec.message());
  committed_ = true;
  registration_.reset();
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
