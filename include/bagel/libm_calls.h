// libm's exp, log, log1p and pow for loops whose other arithmetic is
// vectorised.
//
// Debian's glibc enters these through wrappers built for baseline x86-64:
// SSE instructions (pxor, ucomisd, movsd) before the FMA kernel. Reached
// from AVX code that left the vector registers' upper halves dirty, each of
// those pays a transition penalty on Intel CPUs, and GCC 12 does not always
// clear the state before the call: on a Sapphire Rapids Xeon the batch-1
// loop of a 6-class one-vs-rest model ran 2x slower for it (data/PERFORMANCE.md).
// Clearing the upper halves first (vzeroupper, a cycle) costs nothing where
// they were clean. The values are libm's own.
#pragma once

#include <cmath>

namespace bagel::libm {

[[gnu::always_inline]] inline void clear_upper_vector_state() {
#ifdef __AVX__
  __builtin_ia32_vzeroupper();
#endif
}

[[gnu::always_inline]] inline double exp(double x) {
  clear_upper_vector_state();
  return std::exp(x);
}

[[gnu::always_inline]] inline double log(double x) {
  clear_upper_vector_state();
  return std::log(x);
}

[[gnu::always_inline]] inline double log1p(double x) {
  clear_upper_vector_state();
  return std::log1p(x);
}

[[gnu::always_inline]] inline double pow(double x, double y) {
  clear_upper_vector_state();
  return std::pow(x, y);
}

}  // namespace bagel::libm
