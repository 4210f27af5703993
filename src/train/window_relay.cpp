#include "train/window_relay.h"

namespace bagel::train {

void WindowRelay::changed() {
  tick_.fetch_add(1);
  tick_.notify_all();
}

bool WindowRelay::loop_claims(int w) {
  for (;;) {
    // The tick is read before the state it guards: a change after this read
    // moves the tick, and wait() returns at once.
    const int tick = tick_.load();
    if (copied_.load() > w || stop_.load()) return false;
    int expected = w;
    if (claimed_.compare_exchange_strong(expected, w + 1)) return true;
    tick_.wait(tick);  // the helper is copying w
  }
}

void WindowRelay::loop_starts(int w) {
  started_.store(w + 1);
  changed();
}

int WindowRelay::helper_claims() {
  for (;;) {
    const int tick = tick_.load();
    if (stop_.load()) return -1;
    int v = claimed_.load();
    if (v >= windows_) return -1;
    if (started_.load() >= v) {
      if (claimed_.compare_exchange_strong(v, v + 1)) return v;
      continue;  // the loop took v: look again
    }
    tick_.wait(tick);
  }
}

void WindowRelay::copied(int w) {
  copied_.store(w + 1);
  changed();
}

void WindowRelay::stop() {
  stop_.store(true);
  changed();
}

}  // namespace bagel::train
