#include "bagel/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

namespace bagel {

namespace {

// "59.9s", then "1m00s" (59.95 s would print "60.0s"), then "1h00m".
std::string format_seconds(double s) {
  char buf[32];
  if (s < 59.95) {
    std::snprintf(buf, sizeof buf, "%.1fs", s);
    return buf;
  }
  const long t = std::lround(s);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
  return buf;
}

}  // namespace

Progress::Mode Progress::detect(bool quiet) {
  if (quiet) return Mode::kQuiet;
  return ::isatty(STDERR_FILENO) ? Mode::kTerminal : Mode::kLines;
}

Progress::Progress(Mode mode, std::ostream& out) : mode_(mode), out_(out) {}

void Progress::start_epoch(int epoch, int epochs, std::int64_t rows) {
  epoch_ = epoch;
  epochs_ = epochs;
  rows_ = rows;
  epoch_start_ = last_draw_ = Clock::now();
  first_rows_ = -1;
  drawn_ = false;
}

void Progress::update(std::int64_t done_rows, double mean_loss) {
  if (mode_ == Mode::kQuiet) return;
  const auto now = Clock::now();
  if (first_rows_ < 0) {
    first_report_ = now;
    first_rows_ = done_rows;
    return;
  }
  const auto interval = mode_ == Mode::kTerminal ? std::chrono::milliseconds(200)
                                                 : std::chrono::milliseconds(5000);
  if (now - last_draw_ < interval) return;
  last_draw_ = now;
  draw(done_rows, mean_loss);
}

void Progress::draw(std::int64_t done_rows, double mean_loss) {
  const double elapsed = std::chrono::duration<double>(Clock::now() - first_report_).count();
  const double rate = elapsed > 0 ? double(done_rows - first_rows_) / elapsed : 0.0;
  // An epoch not yet done never shows "100.0%".
  const double pct = rows_ > 0 ? std::min(100.0 * done_rows / rows_, done_rows < rows_ ? 99.9 : 100.0) : 100.0;
  // ETA of the whole run: the rest of this epoch plus the epochs after it.
  const double left_rows = (rows_ - done_rows) + double(epochs_ - epoch_) * rows_;
  const double eta = rate > 0 ? left_rows / rate : 0.0;
  char buf[200];
  std::snprintf(buf, sizeof buf, "epoch %d/%d %5.1f%%  %.0f samples/s  loss %.6f  ETA %s", epoch_,
                epochs_, pct, rate, mean_loss, format_seconds(eta).c_str());
  if (mode_ == Mode::kTerminal) out_ << "\r\033[K" << buf << std::flush;
  else out_ << buf << "\n" << std::flush;
  drawn_ = true;
}

void Progress::end_epoch(const std::string& summary) {
  if (mode_ == Mode::kQuiet) return;
  if (mode_ == Mode::kTerminal && drawn_) out_ << "\r\033[K";
  out_ << summary << "\n" << std::flush;
}

void Progress::warn(const std::string& line) {
  if (mode_ == Mode::kTerminal && drawn_) out_ << "\r\033[K";
  drawn_ = false;
  out_ << "bagel: warning: " << line << "\n" << std::flush;
}

void Progress::message(const std::string& line) {
  if (mode_ == Mode::kQuiet) return;
  out_ << line << "\n" << std::flush;
}

}  // namespace bagel
