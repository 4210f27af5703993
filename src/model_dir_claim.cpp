#include "bagel/model_dir_claim.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "bagel/error.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

// When process `pid` started (clock ticks since boot: /proc/PID/stat's
// 22nd field), or 0 when unknown. A process id is reused once its process
// is gone (after a reboot or a container restart, soon); with its start
// time a claim names one process only.
unsigned long long start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return 0;
  const std::size_t name_end = stat.rfind(')');  // the name may hold spaces and ')'
  if (name_end == std::string::npos) return 0;
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long ticks = 0;
  return fields >> ticks ? ticks : 0;
}

struct Owner {
  long pid = 0;                  // 0: the file is gone or not yet written
  unsigned long long start = 0;  // 0: not recorded (an older bagel's claim)
};

Owner claim_owner(const fs::path& lock) {
  std::ifstream in(lock);
  Owner o;
  if (!(in >> o.pid)) return {};
  if (!(in >> o.start)) o.start = 0;
  return o;
}

// Alive, and the process that wrote the claim (not a later one given its id).
bool owner_alive(const Owner& o) {
  if (::kill(static_cast<pid_t>(o.pid), 0) != 0 && errno != EPERM) return false;
  const unsigned long long now = o.start != 0 ? start_time(o.pid) : 0;
  return o.start == 0 || now == 0 || now == o.start;
}

// Creates `lock` holding this process's id in one step: written under a
// private name, then hard-linked, which fails when `lock` exists.
// Returns false when it exists; throws when it cannot be created at all.
bool create_claim(const fs::path& lock) {
  fs::path mine = lock;
  mine += ".tmp-" + std::to_string(::getpid()) + "-0";
  const TempRegistration registered(mine);
  {
    std::ofstream out(mine);
    out << ::getpid() << " " << start_time(::getpid()) << "\n";
    out.close();  // a full disk shows only when the text is written out
    if (!out) {
      const int error = errno;
      std::error_code ec;
      fs::remove(mine, ec);
      throw FileError(lock.string(), std::string("cannot create the claim file: ") + std::strerror(error));
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
  // Beside the folder the links lead to (the model is written through them,
  // atomic_file.h), so that two runs naming one folder by two paths see
  // one claim.
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(folder, ec);
  if (!ec && resolved.has_filename()) folder = resolved;
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
    const Owner owner = claim_owner(lock_);
    if (owner.pid == ::getpid()) return;
    if (owner.pid > 0 && owner_alive(owner))
      throw FileError(dir.string(), "another bagel run (process " + std::to_string(owner.pid) +
                                        ") is writing a model here; wait for it to end, or "
                                        "choose another folder (-o DIR)");
    if (owner.pid > 0) {
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
