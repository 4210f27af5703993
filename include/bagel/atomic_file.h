// Write-to-temporary-then-rename, so a crash or an error never leaves a
// half-written file or folder under the final name.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <streambuf>
#include <string>
#include <vector>

#include "bagel/temp_registry.h"

namespace bagel {

// A temporary path beside `target` (same folder, so rename is atomic).
// If commit() is never called the temporary is removed on destruction, and
// it is registered for removal on SIGINT/SIGTERM (temp_registry.h) meanwhile.
// A target that exists and is neither a file nor a folder (/dev/null, a
// pipe) is written directly: rename would replace the device itself. A
// target that is a symbolic link is written through: the file it points to
// is replaced and the link kept. A file replaced keeps its permissions.
// A target that names one of the process's own open descriptors
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) leading to a file
// (the shell's `>> log` or `{ ...; } > out`) is written through that
// descriptor: temp() is a file under $TMPDIR, copied into the descriptor at
// commit, at its offset and with its O_APPEND. Renaming over the file, or
// reopening it (at offset 0, or truncated), would lose what the shell wrote.
class AtomicPath {
 public:
  explicit AtomicPath(std::filesystem::path target);
  ~AtomicPath();
  AtomicPath(const AtomicPath&) = delete;
  AtomicPath& operator=(const AtomicPath&) = delete;

  const std::filesystem::path& temp() const { return temp_; }
  // Whether temp() is the target itself (a device or a pipe: written in place).
  bool is_direct() const { return direct_; }
  const std::filesystem::path& target() const { return target_; }
  // Flushes temp (a file, or a folder and the files in it) to the disk,
  // renames it over target and flushes the folder holding both, so that
  // after a crash the target is the old one or the whole new one. An
  // existing file, or an empty folder, is replaced; a folder that holds
  // anything is not (the rename fails and commit throws): bagel never
  // deletes what it did not write.
  void commit();
  // For a target that exists: flushes temp, then swaps it with target in one
  // step (exchange_paths), so that target is never missing. temp then holds
  // what target held, and is removed with the AtomicPath. Returns false when
  // the file system cannot swap (nothing changed).
  bool commit_by_exchange();

 private:
  void sync_temp() const;
  void copy_into_descriptor() const;
  // An existing file's permission bits (and, as root, its owner) go to the
  // temporary that replaces it.
  void keep_target_mode() const;

  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
  bool direct_ = false;
  int descriptor_ = -1;  // the open descriptor target_ names, written at commit
  std::unique_ptr<TempRegistration> registration_;
};

// Where a regular file open on a descriptor ends and is written at, so that
// an output that fails partway can be taken back out: a run that fails adds
// nothing. Pipes and terminals cannot take bytes back (nothing is kept).
class DescriptorEnd {
 public:
  static DescriptorEnd of(int fd);
  // Cuts what was added past the old end, and moves the offset back. Bytes
  // the output wrote over inside the old end (a shell's `1<>`) stay written.
  void undo(int fd) const;

 private:
  bool regular_ = false;
  off_t size_ = 0;
  off_t offset_ = 0;
};

// Several files that belong together (a matrix and its labels), written as
// one: each to a temporary of its own beside its target, then commit()
// renames them all with SIGINT, SIGTERM and SIGHUP deferred. A signal, an
// error or a full disk before commit() leaves every target as it was, never
// a new matrix beside old labels. write() may be called from several threads.
class AtomicOutputs {
 public:
  // Writes `target` by calling `write` with the temporary's path; an error
  // that names the temporary is rethrown naming `target`. A `write` that
  // creates nothing (a hashing vectorizer's vocabulary) leaves the target alone.
  void write(const std::filesystem::path& target, const std::function<void(const std::string&)>& write);
  void commit();

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<AtomicPath>> files_;
};

// Gives `new_file` the permission bits (and, as root, the owner) of
// `old_file`, the regular file it is to replace; nothing where there is none.
void keep_mode_of(const std::filesystem::path& old_file, const std::filesystem::path& new_file);

// Flushes a file's or a folder's contents to the disk (fsync). A renamed
// or created entry is durable only once its folder is flushed too.
void sync_path(const std::filesystem::path& path);

// Swaps two existing entries in one step (renameat2 RENAME_EXCHANGE), so
// that no moment exists at which either name is missing. Returns false when
// it cannot (the file system, a mount point): then nothing changed.
bool exchange_paths(const std::filesystem::path& a, const std::filesystem::path& b);

// The process id in a temporary's name ("model.tmp-4242-17" -> 4242), or 0
// when `name` is not `prefix` + ".tmp-PID-N".
long temp_owner(const std::string& name, const std::string& prefix);

// Throws FileError naming `target` when nothing could be created there: a
// parent on the way is a file, or the nearest existing folder (the one its
// missing parents would be created in) cannot be written; or, for a name of
// one of the process's descriptors (/dev/stdout), when that is not open for
// writing. Cheap, so callers check every output before hours of work rather
// than after.
void check_can_create(const std::filesystem::path& target);

// Whether `path` names one of the process's own descriptors (/dev/stdout,
// /dev/fd/3, /proc/self/fd/1, or a link to one of those names): a stream
// with no file name of its own, whose name says nothing of its format.
bool names_own_descriptor(const std::filesystem::path& path);

// What to say when a stream's write failed: "write failed: " and the
// system's reason (errno: "File too large" past a `ulimit -f` limit, "No
// space left on device"), or "write failed (disk full?)" when errno says none.
std::string write_failed_message();
// The same for an errno kept at the failing write: read later, errno may
// hold the failure of some call made since.
std::string write_failed_message(int error);

// Forwards to another stream buffer, keeping errno of the first write that
// fails, read at once: by the time the stream is checked, work done since
// (predicting the next chunk, which may look up cgroup files) may have set
// errno again, and write_failed_message() would name that call's failure.
// Unbuffered itself: each write reaches the target, whose buffer stays.
class ErrnoKeepingBuf : public std::streambuf {
 public:
  explicit ErrnoKeepingBuf(std::streambuf* target) : target_(target) {}
  // errno of the first failed write or flush; 0 while none failed.
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;

 private:
  void keep_errno();

  std::streambuf* target_;
  int error_ = 0;
};

// Writes `contents` to `path` atomically; throws FileError on failure.
void write_file_atomic(const std::filesystem::path& path, const std::string& contents);
// The same in place (a temporary of AtomicOutputs, say).
void write_file(const std::filesystem::path& path, const std::string& contents);

}  // namespace bagel
