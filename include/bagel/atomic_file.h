// Write-to-temporary-then-rename, so a crash or an error never leaves a
// half-written file or folder under the final name.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bagel/temp_registry.h"

namespace bagel {

// A temporary path beside `target` (same folder, so rename is atomic).
// If commit() is never called the temporary is removed on destruction, and
// it is registered for removal on SIGINT/SIGTERM (temp_registry.h) meanwhile.
// A target that exists and is neither a file nor a folder (/dev/null, a
// pipe) is written directly: rename would replace the device itself.
class AtomicPath {
 public:
  explicit AtomicPath(std::filesystem::path target);
  ~AtomicPath();
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::filesystem::path& temp() const { return temp_; }
  const std::filesystem::path& target() const { return target_; }
  // Renames temp over target. An existing file, or an empty folder, is
  // replaced; a folder that holds anything is not (the rename fails and
  // commit throws): bagel never deletes what it did not write.
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
  bool direct_ = false;
  std::unique_ptr<TempRegistration> registration_;
};

// Throws FileError naming `target` when nothing could be created there: a
// parent on the way is a file, or the nearest existing folder (the one its
// missing parents would be created in) cannot be written. Cheap, so callers
// check every output before hours of work rather than after.
void check_can_create(const std::filesystem::path& target);

// Writes `contents` to `path` atomically; throws FileError on failure.
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);

}  // namespace bagel
