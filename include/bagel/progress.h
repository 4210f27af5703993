// Training progress on stderr: redrawn in place on a terminal, plain lines
// (at most every few seconds) when stderr is a file or a pipe (logs, CI).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>

namespace bagel {

class Progress {
 public:
  enum class Mode { kQuiet, kTerminal, kLines };
  // kTerminal when stderr is a tty, kLines otherwise, kQuiet if `quiet`.
  static Mode detect(bool quiet);

  Progress(Mode mode, std::ostream& out);

  void start_epoch(int epoch, int epochs, std::int64_t rows);
  // Cheap to call often: draws only when enough time has passed.
  void update(std::int64_t done_rows, double mean_loss);
  // Ends the epoch's line with `summary` (always printed unless quiet).
  void end_epoch(const std::string& summary);
  // A whole line (unless quiet).
  void message(const std::string& line);
  // "bagel: warning: <line>", printed even when quiet.
  void warn(const std::string& line);

  // Asks the work reporting here to stop (a signal handler's or another
  // thread's request: Ctrl-C in Python, say). Training polls it where it
  // reports progress and throws Interrupted (error.h) once out of its
  // parallel regions, within a few hundred rows.
  void request_stop() { stop_.store(true, std::memory_order_relaxed); }
  bool stop_requested() const { return stop_.load(std::memory_order_relaxed); }
  // The flag itself, for a signal handler (StopOnSignal, temp_registry.h).
  std::atomic<bool>& stop_flag() { return stop_; }

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::int64_t done_rows, double mean_loss);

  Mode mode_;
  std::ostream& out_;
  int epoch_ = 0, epochs_ = 0;
  std::int64_t rows_ = 0;
  Clock::time_point epoch_start_, last_draw_;
  // The epoch's first report, where its rate is measured from: the time
  // before it went to setting the epoch up (a parallel copy of its rows),
  // and one row over that time had printed "3 samples/s, ETA 34h".
  Clock::time_point first_report_;
  std::int64_t first_rows_ = -1;
  bool drawn_ = false;
  std::atomic<bool> stop_{false};
};

}  // namespace bagel
