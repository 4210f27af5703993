// numpy's argsort and float64 log, compared with Debian's numpy itself.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "bagel/text/numpy_math.h"
#include "python_oracle.h"

namespace bagel {
namespace {

// Arrays with many ties (as the term counts max_features ranks), of sizes
// around the insertion-sort cutoff and well past it.
TEST(NumpyMath, ArgsortIsNumpysQuicksortOnArraysWithTies) {
  std::mt19937_64 rng(3);
  std::vector<std::vector<std::int64_t>> arrays;
  for (const int size : {2, 15, 16, 17, 18, 40, 100, 1000, 20000})
    for (const int range : {1, 2, 7, 100, 1 << 30}) {
      std::vector<std::int64_t> a(static_cast<std::size_t>(size));
      for (auto& x : a) x = -static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(range));
      arrays.push_back(a);
    }
  std::vector<std::int64_t> organ(5000);
  for (std::size_t i = 0; i < organ.size(); ++i) organ[i] = static_cast<std::int64_t>(std::min(i, organ.size() - i));
  arrays.push_back(organ);
  std::string script = "import numpy as np\narrays = [\n";
  for (const auto& a : arrays) {
    script += "[";
    for (const auto x : a) script += std::to_string(x) + ",";
    script += "],\n";
  }
  script += "]\nfor a in arrays: print(' '.join(map(str, np.argsort(np.array(a, dtype=np.int64)))))\n";
  const auto out = testing::run_python(script);
  if (!out) GTEST_SKIP() << "/usr/bin/python3 with numpy is needed";
  std::istringstream expected(*out);
  for (const auto& a : arrays) {
    std::string line;
    std::getline(expected, line);
    std::ostringstream ours;
    const std::vector<std::int64_t> order = numpy_argsort(a);
    for (std::size_t i = 0; i < order.size(); ++i) ours << (i ? " " : "") << order[i];
    EXPECT_EQ(ours.str(), line) << "size " << a.size();
  }
}

// The values tf-idf takes the log of: (n + 1) / (df + 1) and counts.
TEST(NumpyMath, LogIsNumpysLogBitForBit) {
  std::vector<double> x;
  for (int tf = 1; tf <= 5000; ++tf) x.push_back(tf);
  for (int n : {10, 999, 22801, 1000000})
    for (int df = 1; df <= n; df += 1 + n / 20000) x.push_back((n + 1.0) / (df + 1.0));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> exponent(-700, 700);
  for (int i = 0; i < 20000; ++i) x.push_back(std::exp(exponent(rng)));
  std::ostringstream script;
  script << "import numpy as np\nx = np.array([float.fromhex(s) for s in '''";
  for (const double v : x) script << std::hexfloat << v << ' ';
  script << "'''.split()])\nprint(' '.join(v.hex() for v in np.log(x)))\n";
  const auto out = testing::run_python(script.str());
  if (!out) GTEST_SKIP() << "/usr/bin/python3 with numpy is needed";
  std::istringstream expected(*out);
  int differ = 0;
  for (const double v : x) {
    std::string hex;
    expected >> hex;
    const double want = std::strtod(hex.c_str(), nullptr);
    if (numpy_log(v) != want && ++differ < 5) ADD_FAILURE() << std::hexfloat << "log(" << v << ") = " << numpy_log(v) << ", numpy " << want;
  }
  EXPECT_EQ(differ, 0) << "of " << x.size() << " (SVML path: " << numpy_log_uses_svml() << ")";
}

}  // namespace
}  // namespace bagel
