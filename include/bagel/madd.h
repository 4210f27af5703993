// a + x * b rounded once where the CPU has fused multiply-adds (and twice,
// as written, where it has none). GCC contracts a*b+c into an FMA by itself
// under -march=native, but per instance of the code: the same expression,
// inlined into a loop at one row width and into another at a constant
// width (row_width.h), or vectorised in one place and not in another, can
// round once in one and twice in the other. The paths that must train the
// same model bit for bit (the batch-1 row steps and the general loop, a
// one-vs-rest model's classes split over threads and one thread) therefore
// spell out every multiply-add of the training arithmetic with madd(), and
// write the rest so that nothing is left to contract.
#pragma once

namespace bagel::detail {

#if defined(__FMA__)
inline float madd(float a, float x, float b) { return __builtin_fmaf(x, b, a); }
inline double madd(double a, double x, double b) { return __builtin_fma(x, b, a); }
#else
inline float madd(float a, float x, float b) { return a + x * b; }
inline double madd(double a, double x, double b) { return a + x * b; }
#endif

}  // namespace bagel::detail
