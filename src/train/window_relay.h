// The hand-over between the training loop's thread and a helper thread that
// copies the next window of shuffled rows while the loop trains on the
// current one (for_each_window, epoch_loop.h).
//
// Windows are claimed in order by whichever thread gets to one first, so the
// loop never waits for a helper that is not copying: where the helper has
// not been scheduled (other processes busy on every core), the loop copies
// the window itself, as with no helper. It waits only for a copy the helper
// has begun. Both threads sleep while they wait (std::atomic::wait): a
// barrier after each window would make the loop wait for a descheduled
// helper, and a spinning helper would take the core another process needs
// (two runs side by side on 2 cores: data/PERFORMANCE.md, "Threads with the defaults").
//
// Two buffers: window w is copied into buffer w % 2, and the helper may copy
// window v once the loop has begun window v - 1 (it is done reading v - 2).
#pragma once

#include <atomic>

namespace bagel::train {

class WindowRelay {
 public:
  // `windows` windows, of which window 0 is already copied.
  explicit WindowRelay(int windows) : windows_(windows) {}

  // The loop, before training window w: true when it must copy w itself
  // (then copied(w)); false once w is copied, or the relay stopped, after
  // waiting for a copy the helper had begun.
  bool loop_claims(int w);
  // The loop begins window w (so the buffer of w - 1 is free).
  void loop_starts(int w);

  // The helper's next window to copy, once the loop no longer reads its
  // buffer; -1 when none is left or the relay stopped.
  int helper_claims();

  // Window w is in its buffer.
  void copied(int w);
  // No more windows (the pass ended, stopped early or failed): wakes both.
  void stop();
  bool stopped() const { return stop_.load(); }

 private:
  // Every change bumps tick_, on which both threads wait.
  void changed();

  int windows_;
  std::atomic<int> claimed_{1};  // windows [0, claimed_) are claimed
  std::atomic<int> copied_{1};   // windows [0, copied_) are copied
  std::atomic<int> started_{0};  // the loop has begun windows [0, started_)
  std::atomic<int> tick_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace bagel::train
