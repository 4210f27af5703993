// exp(x) for x <= 0 in plain arithmetic, so that a loop over a row's logits
// vectorises: libm's exp is a call per value, and at 20 classes those calls
// were a third of a one-vs-rest training run's time. The heads only need exp
// of non-positive arguments (exp(-|z|), exp(z - max z)), which never
// overflow, so the range checks reduce to a clamp at -708. GCC vectorises the
// loops only with -fno-trapping-math (clang's default; CMakeLists.txt): a
// comparison that could raise a floating-point exception otherwise stays a
// branch.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>

#include "bagel/madd.h"

namespace bagel {

// exp(x) for x <= 0 (and NaN for NaN) within 2 ulp of the exact value;
// exp(-708) = 3.3e-308 below -708, where the exact value is smaller still:
// both are far under float's smallest normal, the precision of every value
// the heads store, and 1 + either is 1. x = n ln2 + r,
// |r| <= ln2 / 2, exp(r) by its Taylor series to r^13 / 13! (< 2e-16 on that
// interval), times 2^n built in the exponent bits.
[[gnu::always_inline]] inline double exp_nonpositive(double x) {
  x = std::max(x, -708.0);
  constexpr double kLog2e = 1.4426950408889634;
  constexpr double kLn2Hi = 0.6931471803691238;  // ln 2 = kLn2Hi + kLn2Lo, Hi with 32 bits
  constexpr double kLn2Lo = 1.9082149292705877e-10;
  // Adding 1.5 * 2^52 rounds to an integer (to nearest) and leaves it in the
  // low bits of the mantissa: n without a conversion instruction.
  constexpr double kShifter = 6755399441055744.0;
  // Every multiply-add through detail::madd: see madd.h.
  using detail::madd;
  const double t = madd(kShifter, x, kLog2e);
  const double n = t - kShifter;
  const double r = madd(madd(x, -n, kLn2Hi), -n, kLn2Lo);
  double p = 1.0 / 6227020800.0;  // 1 / 13!
  p = madd(1.0 / 479001600.0, p, r);
  p = madd(1.0 / 39916800.0, p, r);
  p = madd(1.0 / 3628800.0, p, r);
  p = madd(1.0 / 362880.0, p, r);
  p = madd(1.0 / 40320.0, p, r);
  p = madd(1.0 / 5040.0, p, r);
  p = madd(1.0 / 720.0, p, r);
  p = madd(1.0 / 120.0, p, r);
  p = madd(1.0 / 24.0, p, r);
  p = madd(1.0 / 6.0, p, r);
  p = madd(0.5, p, r);
  p = madd(1.0, p, r);
  p = madd(1.0, p, r);
  // n's two's-complement bits are those of t less those of the shifter;
  // 2^n is (n + 1023) << 52, a normal double for n >= -1022 (x >= -708).
  // Unsigned arithmetic: a NaN's bits wrap around instead of overflowing.
  const std::uint64_t n_bits = std::bit_cast<std::uint64_t>(t) - std::bit_cast<std::uint64_t>(kShifter);
  const double scale = std::bit_cast<double>((n_bits + 1023) << 52);
  return p * scale;
}

}  // namespace bagel
