#include "bagel/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "bagel/error.h"
#include "bagel/parallel_errors.h"

namespace bagel {

namespace {

// splitmix64: a cheap, well-mixed per-row stream from (seed, row).
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Cumulative Zipf distribution over ranks 0..n-1.
std::vector<double> zipf_cdf(Index n, double s) {
  std::vector<double> cdf(static_cast<std::size_t>(n));
  double total = 0;
  for (Index r = 0; r < n; ++r) cdf[r] = (total += 1.0 / std::pow(r + 1.0, s));
  for (double& c : cdf) c /= total;
  return cdf;
}

}  // namespace

SyntheticData make_synthetic(const SyntheticSpec& spec) {
  if (spec.rows < 0 || spec.features < 1 || spec.nnz_per_row <= 0 || spec.classes < 2)
    throw Error("synthetic data: need rows >= 0, features >= 1, nnz_per_row > 0, classes >= 2");
  const std::vector<double> cdf = zipf_cdf(spec.features, spec.zipf_exponent);
  // Rank -> feature id: a fixed shuffle, so frequent ids are spread over the
  // vocabulary (as in an alphabetical CountVectorizer vocabulary).
  std::vector<Index> id_of_rank(static_cast<std::size_t>(spec.features));
  std::iota(id_of_rank.begin(), id_of_rank.end(), 0);
  std::mt19937_64 rng(spec.seed);
  std::shuffle(id_of_rank.begin(), id_of_rank.end(), rng);
  const int outputs = spec.classes == 2 ? 1 : spec.classes;
  std::vector<float> truth(static_cast<std::size_t>(spec.features) * outputs);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& w : truth) w = normal(rng);

  const auto rows = static_cast<std::size_t>(spec.rows);
  std::vector<std::vector<Index>> row_idx(rows);
  std::vector<std::vector<float>> row_val(rows);
  std::vector<std::int32_t> y(rows);
  std::vector<double> score(rows * outputs);
  // Tokens are drawn until the row has `target` distinct ids; a Zipf head is
  // drawn repeatedly, which gives counts > 1 as in real text. The draw count is
  // capped because a small vocabulary may not hold `target` distinct ids.
  // At least 1: a row of 1 id is the fewest (nnz_per_row below 1/3 would
  // put the upper bound under the lower).
  const double max_distinct = std::max(1.0, std::min<double>(spec.features, 3 * spec.nnz_per_row));
  std::vector<double> wanted(rows);  // each row's draw of its distinct count, before the bounds
  // Each row allocates (its ids, values and draws): a bad_alloc must reach
  // the caller as an exception, not end the process inside the region.
  RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 256)
  for (std::size_t r = 0; r < rows; ++r) errors.run([&] {
    std::mt19937_64 g(mix(spec.seed ^ mix(r)));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    wanted[r] = std::round(spec.nnz_per_row * (0.5 + u(g)));
    const auto target = static_cast<std::size_t>(std::clamp(wanted[r], 1.0, max_distinct));
    std::vector<Index> tokens;
    std::vector<Index>& idx = row_idx[r];
    for (std::size_t draws = 0; idx.size() < target && draws < 20 * target; ++draws) {
      const auto rank = std::lower_bound(cdf.begin(), cdf.end(), u(g)) - cdf.begin();
      const Index id = id_of_rank[std::min<std::size_t>(rank, cdf.size() - 1)];
      tokens.push_back(id);
      if (std::find(idx.begin(), idx.end(), id) == idx.end()) idx.push_back(id);
    }
    std::sort(idx.begin(), idx.end());
    std::vector<float>& val = row_val[r];
    val.assign(idx.size(), 0.0f);
    for (const Index t : tokens) val[std::lower_bound(idx.begin(), idx.end(), t) - idx.begin()] += 1.0f;
    // Noisy linear score of the normalised counts; labels come from it below.
    const double norm = 1.0 / std::sqrt(static_cast<double>(idx.size()));
    std::normal_distribution<double> noise(0.0, spec.label_noise);
    for (int k = 0; k < outputs; ++k) {
      double s = 0;
      for (std::size_t p = 0; p < idx.size(); ++p)
        s += norm * val[p] * truth[static_cast<std::size_t>(idx[p]) * outputs + k];
      score[r * outputs + k] = s + noise(g);
    }
  });
  errors.rethrow();
  // Every row shares the Zipf head, which shifts all scores alike; centring
  // each output on its mean (the median for two classes) keeps classes balanced.
  for (int k = 0; k < outputs; ++k) {
    std::vector<double> col(rows);
    for (std::size_t r = 0; r < rows; ++r) col[r] = score[r * outputs + k];
    double centre = 0;
    if (outputs == 1 && rows > 0) {
      std::nth_element(col.begin(), col.begin() + rows / 2, col.end());
      centre = col[rows / 2];
    } else {
      for (double v : col) centre += v / double(std::max<std::size_t>(rows, 1));
    }
    for (std::size_t r = 0; r < rows; ++r) score[r * outputs + k] -= centre;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    const double* s = score.data() + r * outputs;
    y[r] = outputs == 1 ? (s[0] > 0 ? 1 : 0)
                        : static_cast<std::int32_t>(std::max_element(s, s + outputs) - s);
  }
  std::vector<Index> indptr(rows + 1, 0);
  for (std::size_t r = 0; r < rows; ++r) indptr[r + 1] = indptr[r] + static_cast<Index>(row_idx[r].size());
  std::vector<Index> indices(static_cast<std::size_t>(indptr[rows]));
  std::vector<float> data(indices.size());
#pragma omp parallel for schedule(static)
  for (std::size_t r = 0; r < rows; ++r) {
    std::copy(row_idx[r].begin(), row_idx[r].end(), indices.begin() + indptr[r]);
    std::copy(row_val[r].begin(), row_val[r].end(), data.begin() + indptr[r]);
  }
  SyntheticData out{CsrMatrix(spec.rows, spec.features, std::move(indptr), std::move(indices),
                              std::move(data)),
                    std::move(y),
                    rows > 0 ? std::accumulate(wanted.begin(), wanted.end(), 0.0) / double(rows) : 0.0};
  return out;
}

}  // namespace bagel
