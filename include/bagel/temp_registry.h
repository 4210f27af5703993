// Temporary files and folders that must not outlive an interrupted run.
//
// Destructors remove bagel's temporaries when an error unwinds the stack, but
// Ctrl-C or `kill` end the process without unwinding. So every temporary is
// also registered here, and the handlers installed by
// remove_temporaries_on_signal() remove what is registered, then exit with
// 128 + the signal number (130 for SIGINT, 143 for SIGTERM), as a shell
// reports a process killed by that signal.
//
// The registry is the one piece of process-wide state in bagel: a signal
// handler cannot be given an argument. It is a fixed array of slots written
// without allocation, so that the handler only makes async-signal-safe calls
// (unlink, rmdir, open, getdents64, _exit). A registered folder is removed
// with the files directly inside it, which is all a temporary model folder
// holds; nothing deeper is touched.
#pragma once

#include <atomic>
#include <filesystem>

namespace bagel {

// Registers `path` (made absolute) for the lifetime of the object. When all
// slots are taken the path is not registered: error paths still remove it,
// only an interrupt would leave it behind (bagel never holds more than a few).
class TempRegistration {
 public:
  // kPath: a file, or a folder removed with the files directly in it.
  // kEmptyFolder: a folder this run created on the way to its outputs,
  // removed only if empty, after every kPath (registered deepest first).
  enum class Kind { kPath, kEmptyFolder };
  explicit TempRegistration(const std::filesystem::path& path, Kind kind = Kind::kPath);
  ~TempRegistration();
  TempRegistration(const TempRegistration&) = delete;
  TempRegistration& operator=(const TempRegistration&) = delete;

 private:
  int slot_ = -1;
};

// While one is alive, the first SIGINT, SIGTERM or SIGHUP sets `flag`
// instead of ending the process: training polls it (Progress::stop_flag),
// stops within a few hundred rows and saves what lets the run resume. A
// second signal ends the process as without one. At most one is alive.
class StopOnSignal {
 public:
  explicit StopOnSignal(std::atomic<bool>& flag);
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  // The signal that set the flag; 0 if none did.
  static int signal_received();
};

// While one is alive, SIGINT, SIGTERM and SIGHUP wait: a step that puts
// several files in place (a model folder filled file by file, between
// removing the old model.json and renaming the new one in) must not be
// cut in the middle, or it leaves neither model. The first signal that came
// meanwhile ends the process when the last one ends, as it would have
// (temporaries removed, exit 128 + the signal). kill -9 is not deferred.
class DeferSignals {
 public:
  DeferSignals();
  ~DeferSignals();
  DeferSignals(const DeferSignals&) = delete;
  DeferSignals& operator=(const DeferSignals&) = delete;
};

// Installs the handlers for SIGINT, SIGTERM and SIGHUP. Call once, early in
// main().
void remove_temporaries_on_signal();

}  // namespace bagel
