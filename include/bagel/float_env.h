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
// creates them (Linux threads inherit it), so workers started while the
// mode is set would keep it after bagel returns, in the caller's own
// parallel code. A guard under which parallel regions of up to
// `team_threads` threads may open therefore ends OpenMP's pool when it
// ends (omp_pause_resource_all), so that no thread started inside
// outlives it; the caller's next region starts new ones in its own mode.
// Each region sets and restores the mode in its own threads with a guard
// of its own.
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
  bool end_pool_;
};

}  // namespace bagel
