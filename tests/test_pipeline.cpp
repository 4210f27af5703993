// What the library's training pipeline (pipeline.h) does to the rows before
// it trains on them, seen in the model it returns.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "bagel/pipeline.h"
#include "pipeline_helpers.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// Each count of `counts` (whole numbers) as that many entries of 1, in a
// shuffled order within its row: a bag of token ids, as an EmbeddingBag
// takes it.
Dataset token_lists(const Dataset& counts, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const CsrMatrix& x = counts.x;
  std::vector<Index> indptr{0}, indices;
  for (Index r = 0; r < x.rows(); ++r) {
    const RowView row = x.row(r);
    const std::size_t first = indices.size();
    for (std::size_t p = 0; p < row.size(); ++p)
      indices.insert(indices.end(), static_cast<std::size_t>(row.values[p]), row.indices[p]);
    std::shuffle(indices.begin() + static_cast<std::ptrdiff_t>(first), indices.end(), rng);
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  std::vector<float> ones(indices.size(), 1.0f);
  return Dataset{"train", CsrMatrix(x.rows(), x.cols(), std::move(indptr), std::move(indices),
                                    std::move(ones)),
                 counts.y};
}

void expect_same_model(const Model& a, const Model& b) {
  ASSERT_EQ(a.weight.size(), b.weight.size());
  EXPECT_EQ(std::memcmp(a.weight.data(), b.weight.data(), a.weight.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a.bias.data(), b.bias.data(), a.bias.size() * sizeof(float)), 0);
}

// The auto rate is set by the rows' mean squared norm, and each step's clip
// by its row's: a token list whose repeats were not summed has a smaller
// one (sum of 1s, not of squared counts), and trained another model.
TEST(Pipeline, TokenListsTrainTheModelOfTheirCounts) {
  for (const int classes : {2, 5}) {
    const Dataset counts = synthetic(classes, 3000, 21, 2000, 40);
    ASSERT_GT(*std::max_element(counts.x.data().begin(), counts.x.data().end()), 1.0f);
    Dataset tokens = token_lists(counts, 5);
    const std::int64_t repeats = tokens.x.nonZeros() - counts.x.nonZeros();
    ASSERT_GT(repeats, 0);
    OptimizerConfig c;  // the defaults: the auto rate, every core
    c.epochs = 3;
    const TrainResult a = train_by_pipeline(Dataset{"train", counts.x.clone(), counts.y}, classes, c);
    const TrainResult b = train_by_pipeline(std::move(tokens), classes, c);
    expect_same_model(a.model, b.model);
    EXPECT_EQ(b.model.training["repeated_indices_summed"].get<std::int64_t>(), repeats);
    EXPECT_EQ(b.model.training["train_nonzeros"].get<std::int64_t>(), counts.x.nonZeros());
    EXPECT_EQ(a.model.training["repeated_indices_summed"].get<std::int64_t>(), 0);
  }
}

}  // namespace
}  // namespace bagel
