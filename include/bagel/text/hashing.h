// scikit-learn's HashingVectorizer: each term's column and sign from the
// signed 32-bit MurmurHash3 (x86_32) of its UTF-8 bytes with seed 0, as
// sklearn.utils.murmurhash3_32(term, positive=False) computes it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bagel/text/tokenizer.h"

namespace bagel {

std::int32_t murmurhash3_32(std::string_view key, std::uint32_t seed);

struct HashingOptions {
  std::int64_t n_features = std::int64_t{1} << 20;
  bool alternate_sign = true;
  bool binary = false;
};

// One row per document, sorted by column, duplicates summed (FeatureHasher's
// X.sum_duplicates(), which keeps an entry whose +1s and -1s cancel as an
// explicit 0); `binary` then sets every stored value to 1.
struct HashedRows {
  std::vector<std::int64_t> indptr;
  std::vector<std::int32_t> columns;
  std::vector<double> values;
};
HashedRows hash_documents(const Analyzer& analyzer, std::span<const std::string_view> documents,
                          const HashingOptions& options, int threads);

}  // namespace bagel
