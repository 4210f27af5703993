// Generated bag-of-words data for benchmarks: Zipf-distributed token ids,
// like words in real text, counted per row (so a row has unique indices
// with count values, as CountVectorizer makes them, and sorted, which
// CountVectorizer does not promise), and labels from
// a random linear model so the task is learnable.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bagel/csr.h"

namespace bagel {

struct SyntheticSpec {
  Index rows = 10000;
  Index features = 1 << 16;
  double nnz_per_row = 75;     // mean distinct features per row
  double zipf_exponent = 1.1;  // p(rank r) ~ 1 / r^s
  int classes = 2;
  double label_noise = 0.5;    // std of the logistic-ish noise added to the scores
  std::uint64_t seed = 1;
};

struct SyntheticData {
  CsrMatrix x;
  std::vector<std::int32_t> y;  // class ids 0..classes-1
  // The mean of the distinct counts drawn for the rows (about nnz_per_row).
  // A row holds fewer where its draws of Zipf ids, capped at 20 times its
  // count, repeat the frequent ids (a high exponent) or the vocabulary is
  // smaller, and 1 where it drew 0: x's mean then differs from this.
  double wanted_mean_distinct = 0;
};

// Deterministic for a given spec (rows are generated in parallel, each from
// its own seeded stream).
SyntheticData make_synthetic(const SyntheticSpec& spec);

}  // namespace bagel
