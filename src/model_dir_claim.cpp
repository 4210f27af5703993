#include "bagel/model_dir_claim.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "bagel/error.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

// The owner's process id, or 0 when the file is gone or not yet written.
long claim_owner(const fs::path& lock) {
  std::ifstream in(lock);
  long pid = 0;
  return in >> pid ? pid : 0;
}

bool process_alive(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM; }

// Creates `lock` holding this process's id in one step: written under a
// private name, then hard-linked, which fails when `lock` exists.
// Returns false when it exists; throws when it cannot be created at all.
bool create_claim(const fs::path& lock) {
  fs::path mine = lock;
  mine += ".tmp-" + std::to_string(::getpid()) + "-0";
  {
    std::ofstream out(mine);
    out << ::getpid() << "\n";
    if (!out) {
      std::error_code ec;
      fs::remove(mine, ec);
      throw FileError(lock.string(), "cannot create the claim file");
    }
  }
  const int linked = ::link(mine.c_str(), lock.c_str());
  const int error = errno;
  ::unlink(mine.c_str());
  if (linked == 0) return true;
  if (error == EEXIST) return false;
  throw FileError(lock.string(), std::string("cannot create the claim file: ") + std::strerror(error));
}

}  // namespace

fs::path ModelDirClaim::lock_path(const fs::path& dir) {
  fs::path folder = fs::absolute(dir).lexically_normal();
  if (!folder.has_filename()) folder = folder.parent_path();
  folder += ".bagel-lock";
  return folder;
}

ModelDirClaim::ModelDirClaim(const fs::path& dir) : lock_(lock_path(dir)) {
  std::error_code ec;
  fs::create_directories(lock_.parent_path(), ec);
  if (::access(lock_.parent_path().c_str(), W_OK) != 0) return;  // nothing can be written there
  constexpr int kAttempts = 50;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    if (create_claim(lock_)) {
      // Registered only now: the handler must never remove another's claim.
      registration_ = std::make_unique<TempRegistration>(lock_);
      owned_ = true;
      return;
    }
    const long owner = claim_owner(lock_);
    if (owner == ::getpid()) return;
    if (owner > 0 && process_alive(owner))
      throw FileError(dir.string(), "another bagel run (process " + std::to_string(owner) +
                                        ") is writing a model here; wait for it to end, or "
                                        "choose another folder (-o DIR)");
    if (owner > 0) {
      ::unlink(lock_.c_str());  // its process is gone (kill -9): the claim is stale
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // being replaced
    }
  }
  throw FileError(lock_.string(), "cannot claim the model folder (the claim file keeps changing)");
}

ModelDirClaim::~ModelDirClaim() {
  if (owned_) ::unlink(lock_.c_str());
}

}  // namespace bagel
