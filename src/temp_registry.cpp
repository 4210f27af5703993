#include "bagel/temp_registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstring>
#include <string>

namespace bagel {

namespace {

constexpr int kSlots = 32;
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
// A slot is written while kWriting, so the handler never reads half a path.
enum SlotState : int { kFree = 0, kWriting = 1, kActive = 2, kActiveEmptyFolder = 3 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX]{};
};
static_assert(std::atomic<int>::is_always_lock_free, "the handler needs lock-free atomics");

// Constant-initialised (no constructor runs), so the handler may read it at
// any moment; see the header for why it has to be static at all.
Slot registry[kSlots];

bool is_dot_or_dot_dot(const char* name) {
  return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

// Removes the files directly inside `path`, then the folder. Only
// async-signal-safe calls. Entries unlinked while the folder is being read
// can make getdents skip others, so it reads again until a pass removes
// nothing.
void remove_flat_folder(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  alignas(dirent64) char buffer[4096];
  for (int pass = 0; pass < 8; ++pass) {
    ::lseek(fd, 0, SEEK_SET);
    bool removed = false;
    ssize_t n = 0;
    while ((n = ::getdents64(fd, buffer, sizeof buffer)) > 0) {
      for (ssize_t offset = 0; offset < n;) {
        const auto* entry = reinterpret_cast<const dirent64*>(buffer + offset);
        offset += entry->d_reclen;
        if (!is_dot_or_dot_dot(entry->d_name) && ::unlinkat(fd, entry->d_name, 0) == 0)
          removed = true;
      }
    }
    if (!removed) break;
  }
  ::close(fd);
  ::rmdir(path);
}

// The flag a StopOnSignal registered, and the signal that set it.
std::atomic<std::atomic<bool>*> stop_flag{nullptr};
std::atomic<int> stop_signal{0};

// While a DeferSignals is alive: how many are, and the first signal that
// came meanwhile.
std::atomic<int> deferring{0};
std::atomic<int> deferred_signal{0};

[[noreturn]] void remove_registered_and_exit(int signal_number) {
  for (Slot& slot : registry) {
    if (slot.state.load(std::memory_order_acquire) != kActive) continue;
    if (::unlink(slot.path) != 0 && errno == EISDIR) remove_flat_folder(slot.path);
  }
  for (Slot& slot : registry)
    if (slot.state.load(std::memory_order_acquire) == kActiveEmptyFolder) ::rmdir(slot.path);
  ::_exit(128 + signal_number);
}

extern "C" void remove_temporaries_and_exit(int signal_number) {
  std::atomic<bool>* flag = stop_flag.load(std::memory_order_acquire);
  int none = 0;
  if (flag != nullptr && stop_signal.compare_exchange_strong(none, signal_number)) {
    flag->store(true, std::memory_order_relaxed);
    return;  // the run stops itself; a second signal comes back here and exits
  }
  if (deferring.load(std::memory_order_acquire) > 0) {
    none = 0;
    deferred_signal.compare_exchange_strong(none, signal_number);
    return;  // ~DeferSignals exits once the outputs are whole
  }
  remove_registered_and_exit(signal_number);
}

}  // namespace

TempRegistration::TempRegistration(const std::filesystem::path& path, Kind kind) {
  std::error_code ec;
  std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  const std::string text = ec ? path.string() : absolute.string();
  if (text.size() >= PATH_MAX) return;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!registry[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel))
      continue;
    std::memcpy(registry[i].path, text.c_str(), text.size() + 1);
    registry[i].state.store(kind == Kind::kEmptyFolder ? kActiveEmptyFolder : kActive,
                            std::memory_order_release);
    slot_ = i;
    return;
  }
}

TempRegistration::~TempRegistration() {
  if (slot_ >= 0) registry[slot_].state.store(kFree, std::memory_order_release);
}

StopOnSignal::StopOnSignal(std::atomic<bool>& flag) {
  stop_signal.store(0, std::memory_order_relaxed);
  stop_flag.store(&flag, std::memory_order_release);
}

StopOnSignal::~StopOnSignal() { stop_flag.store(nullptr, std::memory_order_release); }

int StopOnSignal::signal_received() { return stop_signal.load(std::memory_order_relaxed); }

DeferSignals::DeferSignals() { deferring.fetch_add(1, std::memory_order_acq_rel); }

DeferSignals::~DeferSignals() {
  if (deferring.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
  if (const int signal_number = deferred_signal.exchange(0, std::memory_order_acq_rel))
    remove_registered_and_exit(signal_number);
}

void remove_temporaries_on_signal() {
  struct sigaction action {};
  action.sa_handler = remove_temporaries_and_exit;
  sigemptyset(&action.sa_mask);
  for (int s : kSignals) sigaddset(&action.sa_mask, s);  // one cleanup at a time
  for (int s : kSignals) {
    // A signal the parent set to be ignored (nohup, `cmd &` in a script)
    // stays ignored: the user asked for the run to survive it.
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(s, &action, nullptr);
  }
}

}  // namespace bagel
