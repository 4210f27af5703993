// Flush-to-zero and denormals-are-zero for the calling thread.
//
// Training drives many values towards zero: exp of very negative logits,
// weights decayed by L2 for millions of steps, tiny updates. On Intel cores
// each operation on a denormal float costs ~100 cycles through a microcode
// assist (a 16-core Xeon ran 20-class training 6.8x slower with them kept);
// AMD cores hide most of it. Numbers that small carry no information for a
// logistic model, so every thread that trains or predicts runs with FTZ/DAZ
// set, and restores the caller's mode when done (bagel is also a library).
#pragma once

namespace bagel {

//
// OpenMP worker threads copy the floating-point mode of the thread that
// creates them (Linux threads inherit it), so a team started while the mode
// is set would keep it after bagel returns. A guard that will open parallel
// regions of up to `team_threads` threads therefore first starts a team that
// large in the caller's mode; each region then sets and restores the mode in
// its own threads with a guard of its own.
class DenormalsAreZero {
 public:
  explicit DenormalsAreZero(int team_threads = 1);
  ~DenormalsAreZero();
  DenormalsAreZero(const DenormalsAreZero&) = delete;
  DenormalsAreZero& operator=(const DenormalsAreZero&) = delete;

  // Whether the calling thread flushes denormals now (for tests).
  static bool active();

 private:
  unsigned long saved_;
};

}  // namespace bagel
