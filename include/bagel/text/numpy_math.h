// Two numpy results that scikit-learn's vectorizers depend on, reproduced
// bit for bit, because the vectorizer must give the very matrix
// scikit-learn gives:
//   - np.argsort(kind="quicksort"), numpy's introsort, which is not stable:
//     CountVectorizer(max_features=...) keeps the terms its first entries
//     name, so ties between equal counts fall where numpy's partitioning
//     puts them.
//   - np.log on a float64 array, which in Debian's numpy 1.24 on a CPU with
//     AVX-512 (F, CD, BW, DQ, VL) is Intel SVML's __svml_log8 (linked into
//     numpy), not libm's log: the two differ in the last bit on about a
//     quarter of inputs. TfidfTransformer's idf and sublinear_tf use it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace bagel {

// The permutation np.argsort(values) returns (numpy 1.24's aquicksort:
// median-of-3 quicksort, insertion sort at 16 elements or fewer, heapsort past
// 2*floor(log2 n) levels).
std::vector<std::int64_t> numpy_argsort(std::span<const std::int64_t> values);
std::vector<std::int64_t> numpy_argsort(std::span<const double> values);

// np.log(x) for one float64 of an array, as numpy computes it on this CPU:
// SVML's algorithm where numpy would dispatch to it (AVX-512 SKX), otherwise
// libm's log. Inputs here are finite and positive; others go to libm.
double numpy_log(double x);

// Whether numpy_log takes the SVML path on this CPU (for tests and reports).
bool numpy_log_uses_svml();

}  // namespace bagel
