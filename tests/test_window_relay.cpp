// WindowRelay (train/window_relay.h): every window is copied exactly once,
// before the loop reads it and never into a buffer the loop still reads,
// whether the helper keeps up, lags, or never runs.
#include "train/window_relay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace bagel::train {
namespace {

struct Pass {
  std::vector<int> copies;       // per window, how many times it was copied
  std::vector<int> copied_by;    // 0 the loop, 1 the helper
  int wrong_buffer = 0;          // copies into a buffer the loop was reading
  int unready = 0;               // windows the loop read before their copy
};

// The loop trains `windows` windows of `work` each; the helper (when
// `helper`) copies windows, taking `copy` each, after `helper_delay`.
Pass relay_run(int windows, bool helper, std::chrono::microseconds work, std::chrono::microseconds copy,
              int helper_after = 0, int stop_after = -1) {
  Pass r;
  r.copies.assign(static_cast<std::size_t>(windows), 0);
  r.copied_by.assign(static_cast<std::size_t>(windows), -1);
  std::vector<std::atomic<int>> in_buffer(2);  // the window each buffer holds
  std::vector<std::atomic<int>> done(static_cast<std::size_t>(windows));
  in_buffer[0] = 0;
  in_buffer[1] = -1;
  done[0] = 1;
  r.copies[0] = 1;
  r.copied_by[0] = 0;
  std::atomic<int> reading{-1};  // the window the loop reads now
  std::atomic<bool> helper_go{helper_after == 0};
  WindowRelay relay(windows);
  auto copy_window = [&](int w, int who) {
    if (reading.load() >= 0 && reading.load() % 2 == w % 2) ++r.wrong_buffer;
    std::this_thread::sleep_for(copy);
    in_buffer[static_cast<std::size_t>(w % 2)] = w;
    ++r.copies[static_cast<std::size_t>(w)];
    r.copied_by[static_cast<std::size_t>(w)] = who;
    done[static_cast<std::size_t>(w)] = 1;
  };
  std::thread h;
  if (helper)
    h = std::thread([&] {
      helper_go.wait(false);
      for (int v; (v = relay.helper_claims()) >= 0;) {
        copy_window(v, 1);
        relay.copied(v);
      }
    });
  for (int w = 0; w < windows; ++w) {
    if (relay.loop_claims(w)) {
      copy_window(w, 0);
      relay.copied(w);
    }
    if (relay.stopped()) break;
    relay.loop_starts(w);
    if (w == helper_after) {
      helper_go = true;
      helper_go.notify_all();
    }
    reading = w;
    if (!done[static_cast<std::size_t>(w)] || in_buffer[static_cast<std::size_t>(w % 2)] != w) ++r.unready;
    std::this_thread::sleep_for(work);
    reading = -1;
    if (w == stop_after) break;
  }
  relay.stop();
  helper_go = true;
  helper_go.notify_all();
  if (h.joinable()) h.join();
  return r;
}

TEST(WindowRelay, AHelperThatKeepsUpCopiesEveryWindowAfterTheFirst) {
  const Pass r = relay_run(40, true, std::chrono::microseconds(300), std::chrono::microseconds(50));
  for (std::size_t w = 0; w < r.copies.size(); ++w) EXPECT_EQ(r.copies[w], 1) << w;
  EXPECT_EQ(r.wrong_buffer, 0);
  EXPECT_EQ(r.unready, 0);
}

TEST(WindowRelay, TheLoopCopiesWhatAnAbsentOrLateHelperHasNotClaimed) {
  const Pass alone = relay_run(20, false, std::chrono::microseconds(10), std::chrono::microseconds(10));
  for (std::size_t w = 0; w < alone.copies.size(); ++w) {
    EXPECT_EQ(alone.copies[w], 1) << w;
    EXPECT_EQ(alone.copied_by[w], 0) << w;
  }
  // A helper that starts late (descheduled) only once the loop has begun
  // window 10: the loop has copied windows 1-10 itself, and each window is
  // copied once.
  const Pass late = relay_run(60, true, std::chrono::microseconds(200), std::chrono::microseconds(20), 10);
  for (std::size_t w = 0; w < late.copies.size(); ++w) EXPECT_EQ(late.copies[w], 1) << w;
  for (std::size_t w = 1; w <= 10; ++w) EXPECT_EQ(late.copied_by[w], 0) << w;
  EXPECT_EQ(late.wrong_buffer, 0);
  EXPECT_EQ(late.unready, 0);
}

TEST(WindowRelay, ASlowHelperMakesTheLoopWaitForItsCopyNotCopyTwice) {
  const Pass r = relay_run(30, true, std::chrono::microseconds(10), std::chrono::microseconds(200));
  for (std::size_t w = 0; w < r.copies.size(); ++w) EXPECT_EQ(r.copies[w], 1) << w;
  EXPECT_EQ(r.wrong_buffer, 0);
  EXPECT_EQ(r.unready, 0);
}

TEST(WindowRelay, StoppingEarlyReleasesAWaitingHelper) {
  // The loop stops after window 2 of 50; the helper, waiting for a buffer,
  // must return (the join in relay_run would hang otherwise).
  const Pass r = relay_run(50, true, std::chrono::microseconds(100), std::chrono::microseconds(10), 0, 2);
  int copied = 0;
  for (const int c : r.copies) copied += c;
  EXPECT_LE(copied, 4);  // windows 0-2 and at most the one after
  EXPECT_EQ(r.wrong_buffer, 0);
}

}  // namespace
}  // namespace bagel::train
