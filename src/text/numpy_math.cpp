#include "bagel/text/numpy_math.h"

#include <immintrin.h>

#include <cmath>
#include <tuple>
#include <utility>

namespace bagel {

namespace {

template <class T>
bool numpy_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    return a < b || (b != b && a == a);  // NaNs sort last, as numpy's DOUBLE_LT
  else
    return a < b;
}

int floor_log2(std::int64_t n) {
  int depth = 0;
  for (auto u = static_cast<std::uint64_t>(n); u >>= 1;) ++depth;
  return depth;
}

// numpy's aheapsort on order[0..n), 1-based heap indexing.
template <class T>
void heap_argsort(const T* v, std::int64_t* order, std::int64_t n) {
  std::int64_t* a = order - 1;
  auto sift = [&](std::int64_t i, std::int64_t size, std::int64_t tmp) {
    for (std::int64_t j = i << 1; j <= size;) {
      if (j < size && numpy_less(v[a[j]], v[a[j + 1]])) ++j;
      if (!numpy_less(v[tmp], v[a[j]])) break;
      a[i] = a[j];
      i = j;
      j += j;
    }
    a[i] = tmp;
  };
  for (std::int64_t l = n >> 1; l > 0; --l) sift(l, n, a[l]);
  while (n > 1) {
    const std::int64_t tmp = a[n];
    a[n] = a[1];
    --n;
    sift(1, n, tmp);
  }
}

// numpy 1.24's aquicksort_ (npysort/quicksort.cpp), step for step: the
// same pivots, swaps and partition stack give the same order among ties.
template <class T>
std::vector<std::int64_t> introsort_argsort(std::span<const T> values) {
  constexpr std::int64_t kSmall = 15;  // npysort_common.h SMALL_QUICKSORT
  const std::int64_t num = static_cast<std::int64_t>(values.size());
  std::vector<std::int64_t> order(values.size());
  for (std::int64_t i = 0; i < num; ++i) order[i] = i;
  if (num < 2) return order;
  const T* v = values.data();
  std::int64_t* pl = order.data();
  std::int64_t* pr = pl + num - 1;
  std::vector<std::pair<std::int64_t*, std::int64_t*>> stack;
  std::vector<int> depths;
  int depth = floor_log2(num) * 2;
  for (;;) {
    if (depth < 0) {
      heap_argsort(v, pl, pr - pl + 1);
    } else {
      while (pr - pl > kSmall) {
        std::int64_t* pm = pl + ((pr - pl) >> 1);
        if (numpy_less(v[*pm], v[*pl])) std::swap(*pm, *pl);
        if (numpy_less(v[*pr], v[*pm])) std::swap(*pr, *pm);
        if (numpy_less(v[*pm], v[*pl])) std::swap(*pm, *pl);
        const T pivot = v[*pm];
        std::int64_t* pi = pl;
        std::int64_t* pj = pr - 1;
        std::swap(*pm, *pj);
        for (;;) {
          do ++pi; while (numpy_less(v[*pi], pivot));
          do --pj; while (numpy_less(pivot, v[*pj]));
          if (pi >= pj) break;
          std::swap(*pi, *pj);
        }
        std::swap(*pi, *(pr - 1));
        // The larger side waits on the stack.
        if (pi - pl < pr - pi) {
          stack.emplace_back(pi + 1, pr);
          pr = pi - 1;
        } else {
          stack.emplace_back(pl, pi - 1);
          pl = pi + 1;
        }
        depths.push_back(--depth);
      }
      for (std::int64_t* pi = pl + 1; pi <= pr; ++pi) {
        const std::int64_t vi = *pi;
        const T vp = v[vi];
        std::int64_t* pj = pi;
        std::int64_t* pk = pi - 1;
        while (pj > pl && numpy_less(vp, v[*pk])) *pj-- = *pk--;
        *pj = vi;
      }
    }
    if (stack.empty()) break;
    std::tie(pl, pr) = stack.back();
    stack.pop_back();
    depth = depths.back();
    depths.pop_back();
  }
  return order;
}

// numpy's choice (npy_cpu_features.c): AVX512_SKX needs the OS to save the
// AVX-512 state and the CPU to have F, CD, BW, DQ and VL.
bool cpu_has_avx512_skx() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

// SVML's __svml_log8 (Intel, BSD-3-Clause, as vendored in numpy) for one
// lane, from the instructions in Debian's numpy: x = 2^e * m with m in [1, 2),
// r = rcp14(m) rounded to a multiple of 1/32, t = r*m - 1 (exact, an FMA),
// log x = e*ln2 + T[r] + t + t^2*P(t), with -log(r) from a 16-entry table
// (the exponent raised by one when r < 0.75). Every step is one rounding,
// in this order, so the result is the same bits.
// GCC 12's AVX-512 headers start their masked intrinsics from an
// _mm512_undefined value, which -Wuninitialized reports once inlined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f,avx512dq,avx512vl"))) double svml_log(double x) {
  alignas(64) static constexpr double kTable[16] = {
      0x0.0p+0,                -0x1.f0a30c01162a6p-5,  -0x1.e27076e2af2e6p-4,  -0x1.5ff3070a793d4p-3,
      -0x1.c8ff7c79a9a22p-3,   -0x1.1675cababa60ep-2,  -0x1.4618bc21c5ec2p-2,  -0x1.739d7f6bbd007p-2,
      0x1.269621134db92p-2,    0x1.f991c6cb3b379p-3,   0x1.a93ed3c8ad9e3p-3,   0x1.5bf406b543db2p-3,
      0x1.1178e8227e47cp-3,    0x1.9335e5d594989p-4,   0x1.08598b59e3a07p-4,   0x1.0415d89e74444p-5};
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512d vx = _mm512_set1_pd(x);
  const __m512d m = _mm512_getmant_round_pd(vx, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_nan, _MM_FROUND_NO_EXC);
  __m512d e = _mm512_getexp_round_pd(vx, _MM_FROUND_NO_EXC);
  const __m512d r = _mm512_roundscale_round_pd(_mm512_rcp14_pd(m), 0x58, _MM_FROUND_NO_EXC);
  const __m512d t = _mm512_fmsub_round_pd(r, m, one, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __mmask8 small = _mm512_cmp_pd_mask(r, _mm512_set1_pd(0.75), _CMP_LT_OQ);
  constexpr int kRn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  __m512d a = _mm512_fmadd_round_pd(_mm512_set1_pd(0x1.249229cee81efp-3), t, _mm512_set1_pd(-0x1.55553fb28db06p-3), kRn);
  __m512d b = _mm512_fmadd_round_pd(_mm512_set1_pd(0x1.c81cd309d7c70p-4), t, _mm512_set1_pd(-0x1.007357e93af62p-3), kRn);
  __m512d c = _mm512_fmadd_round_pd(_mm512_set1_pd(0x1.5555555555466p-2), t, _mm512_set1_pd(-0x1.fffffffffffc6p-2), kRn);
  const __m512d t2 = _mm512_mul_round_pd(t, t, kRn);
  __m512d d = _mm512_fmadd_round_pd(_mm512_set1_pd(0x1.9999999cc9f5cp-3), t, _mm512_set1_pd(-0x1.00000000c05bdp-2), kRn);
  const __m512i index = _mm512_srli_epi64(_mm512_castpd_si512(r), 48);
  e = _mm512_mask_add_round_pd(e, small, e, one, kRn);
  const __m512d t4 = _mm512_mul_round_pd(t2, t2, kRn);
  b = _mm512_fmadd_round_pd(t2, b, a, kRn);
  d = _mm512_fmadd_round_pd(t2, d, c, kRn);
  const __m512d table = _mm512_permutex2var_pd(_mm512_load_pd(kTable), index, _mm512_load_pd(kTable + 8));
  __m512d p = _mm512_fmadd_round_pd(t4, b, d, kRn);
  p = _mm512_fmadd_round_pd(t2, p, t, kRn);
  const __m512d s = _mm512_add_round_pd(table, p, kRn);
  const __m512d result = _mm512_fmadd_round_pd(_mm512_set1_pd(0x1.62e42fefa39efp-1), e, s, kRn);
  return _mm512_cvtsd_f64(result);
}
#pragma GCC diagnostic pop

}  // namespace

std::vector<std::int64_t> numpy_argsort(std::span<const std::int64_t> values) {
  return introsort_argsort(values);
}

std::vector<std::int64_t> numpy_argsort(std::span<const double> values) {
  return introsort_argsort(values);
}

bool numpy_log_uses_svml() {
  static const bool svml = cpu_has_avx512_skx();
  return svml;
}

double numpy_log(double x) {
  // SVML sends zeros, infinities, negatives and NaNs to a scalar path.
  if (numpy_log_uses_svml() && std::isfinite(x) && x > 0) return svml_log(x);
  return std::log(x);
}

}  // namespace bagel
