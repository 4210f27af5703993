// Features numbered by frequency while training: the relabelling itself, its
// undoing on the weights, and the promise that the restored model is the one
// trained without it, bit for bit, in every training mode that is
// deterministic.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>

#include "bagel/feature_order.h"
#include "bagel/npz.h"
#include "bagel/pipeline.h"
#include "bagel/synthetic.h"
#include "bagel/train_plan.h"
#include "bagel/trainer.h"
#include "pipeline_helpers.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// Rows over 6 features; uses: f3 x4, f1 x2, f5 x2, f0 x1, f2 and f4 unused.
CsrMatrix small() {
  return CsrMatrix(4, 6, {0, 3, 5, 7, 9}, {3, 1, 5, 3, 0, 3, 5, 1, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
}

std::vector<Index> indices_of(const CsrMatrix& x) { return {x.indices().begin(), x.indices().end()}; }

TEST(FeatureOrder, MostUsedFirstTiesAndUnusedInIdOrder) {
  const FeatureOrder order = FeatureOrder::by_frequency(small(), 6);
  // Ranks: f3, f1, f5 (tie with f1, larger id), f0, then unused f2, f4.
  const std::vector<Index> expected = {3, 1, 4, 0, 5, 2};
  EXPECT_EQ(std::vector<Index>(order.new_of_old().begin(), order.new_of_old().end()), expected);
}

TEST(FeatureOrder, IsAStableSortByUseOnZipfData) {
  // Many ties (most features are used a few times) and many unused ones:
  // the order must be that of a stable sort by falling use count.
  SyntheticSpec spec;
  spec.rows = 3000;
  spec.features = 50000;
  const SyntheticData d = make_synthetic(spec);
  const std::vector<std::uint32_t> counts = feature_counts(d.x, spec.features);
  std::vector<Index> by_use(static_cast<std::size_t>(spec.features));
  std::iota(by_use.begin(), by_use.end(), 0);
  std::stable_sort(by_use.begin(), by_use.end(), [&](Index a, Index b) { return counts[a] > counts[b]; });
  ASSERT_EQ(sample_stride(d.x), 1);  // so by_frequency counts the same rows
  const FeatureOrder order = FeatureOrder::by_frequency(d.x, spec.features);
  for (std::size_t r = 0; r < by_use.size(); ++r) ASSERT_EQ(order.new_of_old()[by_use[r]], Index(r)) << r;
}

TEST(FeatureOrder, CoversFeaturesBeyondTheTrainingColumns) {
  // A validation set may be wider than the training set: its extra features
  // get the last numbers.
  const FeatureOrder order = FeatureOrder::by_frequency(small(), 8);
  ASSERT_EQ(order.size(), 8);
  EXPECT_EQ(order.new_of_old()[6], 6);
  EXPECT_EQ(order.new_of_old()[7], 7);
}

TEST(FeatureOrder, ApplyRelabelsIndicesOnlyAndInPlace) {
  CsrMatrix x = small();
  const Index* before = x.indices().data();
  FeatureOrder::by_frequency(x, 6).apply(x);
  EXPECT_EQ(x.indices().data(), before);  // owned arrays are not copied
  EXPECT_EQ(indices_of(x), (std::vector<Index>{0, 1, 2, 0, 3, 0, 2, 1, 0}));
  const CsrMatrix ref = small();
  EXPECT_TRUE(std::equal(x.indptr().begin(), x.indptr().end(), ref.indptr().begin()));
  EXPECT_TRUE(std::equal(x.data().begin(), x.data().end(), ref.data().begin()));
  EXPECT_NO_THROW(x.validate("relabelled"));
}

TEST(FeatureOrder, ApplyCopiesIndicesOfAMappedFile) {
  const auto path = std::filesystem::temp_directory_path() / "bagel_feature_order_mapped.npz";
  write_npz_csr(path.string(), small(), false);  // our writer aligns members: mapped in place
  CsrMatrix x = read_npz_csr(path.string());
  ASSERT_TRUE(x.is_mapped());
  CsrMatrix owned = small();
  const FeatureOrder order = FeatureOrder::by_frequency(owned, 6);
  order.apply(owned);
  order.apply(x);
  EXPECT_EQ(indices_of(x), indices_of(owned));
  EXPECT_TRUE(std::equal(x.data().begin(), x.data().end(), owned.data().begin()));
  // The file itself is untouched.
  EXPECT_EQ(indices_of(read_npz_csr(path.string())), indices_of(small()));
  std::filesystem::remove(path);
}

TEST(FeatureOrder, RestoreMovesEveryWeightRowBack) {
  // A random permutation (cycles of many lengths) over 1000 features, 3 outputs.
  const Index n = 1000;
  const int k = 3;
  std::vector<Index> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937 rng(4);
  std::shuffle(ids.begin(), ids.end(), rng);
  // Make a matrix whose use counts give exactly this order: feature ids[r] used n - r times.
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (Index r = 0; r < n; ++r) {
    for (Index c = 0; c < n - r; ++c) indices.push_back(ids[r]), data.push_back(1);
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  const CsrMatrix x(n, n, indptr, indices, data);
  const FeatureOrder order = FeatureOrder::by_frequency(x, n);
  for (Index r = 0; r < n; ++r) ASSERT_EQ(order.new_of_old()[ids[r]], r);

  Model m = Model::zeros({"a", "b", "c"}, false, n);
  for (Index f = 0; f < n; ++f)  // row `new` holds the weights of the feature it stands for
    for (int o = 0; o < k; ++o) m.weight[static_cast<std::size_t>(f) * k + o] = float(ids[f] * 10 + o);
  order.restore(m);
  for (Index f = 0; f < n; ++f)
    for (int o = 0; o < k; ++o) ASSERT_EQ(m.weight[static_cast<std::size_t>(f) * k + o], float(f * 10 + o));
}

TEST(FeatureOrder, CountsOnAStrideOfRows) {
  const CsrMatrix x = small();
  EXPECT_EQ(feature_counts(x, 6), (std::vector<std::uint32_t>{1, 2, 0, 4, 0, 2}));
  EXPECT_EQ(feature_counts(x, 6, 2), (std::vector<std::uint32_t>{0, 1, 0, 2, 0, 2}));  // rows 0, 2
  EXPECT_EQ(sample_stride(x), 1);
}

TEST(FeatureOrder, SplitByCountsGivesEqualSharesOfTheNonZeros) {
  // 100 features, feature j used 100 - j times: the first part must be narrow.
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (Index j = 0; j < 100; ++j) {
    for (Index c = 0; c < 100 - j; ++c) indices.push_back(j), data.push_back(1);
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  const CsrMatrix x(100, 100, indptr, indices, data);
  const std::vector<Index> b = split_by_counts(x, 100, 2);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), 100);
  // Half of the 5050 non-zeros: features 0..29 hold 100 + ... + 71 = 2565.
  EXPECT_EQ(b[1], 30);
  const std::vector<Index> four = split_by_counts(x, 100, 4);
  EXPECT_TRUE(std::is_sorted(four.begin(), four.end()));
  EXPECT_EQ(four.back(), 100);
}

TEST(FeatureOrder, PaysOffOnlyWhenEachWeightHasOneWriter) {
  OptimizerConfig c;
  EXPECT_TRUE(reorder_pays_off(c, LayerKind::kSparse, 2));  // the default: replicas
  c.deterministic = false;
  EXPECT_TRUE(reorder_pays_off(c, LayerKind::kSparse, 1));
  EXPECT_FALSE(reorder_pays_off(c, LayerKind::kDense, 1));
  EXPECT_FALSE(reorder_pays_off(c, LayerKind::kSparse, 2));  // Hogwild
  c.deterministic = true;
  c.deterministic_method = DeterministicMethod::kExact;
  EXPECT_FALSE(reorder_pays_off(c, LayerKind::kSparse, 2));
  c.deterministic_method = DeterministicMethod::kAverage;
  EXPECT_TRUE(reorder_pays_off(c, LayerKind::kSparse, 2));
  c.reorder_features = false;
  EXPECT_FALSE(reorder_pays_off(c, LayerKind::kSparse, 1));
}

struct Mode {
  const char* name;
  int threads;
  bool deterministic;
  DeterministicMethod method;
  int batch;
};

void PrintTo(const Mode& m, std::ostream* os) { *os << m.name; }

class ReorderedTraining : public ::testing::TestWithParam<std::tuple<int, Mode>> {};

TEST_P(ReorderedTraining, GivesTheSameModelBitForBit) {
  const auto [classes, mode] = GetParam();
  SyntheticSpec spec;
  spec.rows = 4000;
  spec.features = 3000;
  spec.nnz_per_row = 25;
  spec.classes = classes;
  spec.seed = 9;
  SyntheticData s = make_synthetic(spec);
  Dataset plain{"train", std::move(s.x), std::move(s.y)};
  OptimizerConfig c;
  c.epochs = 2;
  c.learning_rate = 0.05;
  c.l2 = 1e-4;
  c.l1 = 1e-5;
  c.seed = 3;
  c.threads = mode.threads;
  c.deterministic = mode.deterministic;
  c.deterministic_method = mode.method;
  c.batch_size = mode.batch;
  c.reorder_features = false;
  const Model a = train_sparse(plain, classes, c);
  c.reorder_features = true;
  const TrainResult b =
      train_by_pipeline(Dataset{"train", plain.x.clone(), plain.y}, classes, c);
  // The pipeline relabelled exactly where it pays off (else the comparison
  // proves nothing about relabelling).
  EXPECT_EQ(b.model.training["features_reordered"].get<bool>(),
            plan_training(c, LayerKind::kSparse, spec.rows).reorder_features);
  ASSERT_EQ(a.weight.size(), b.model.weight.size());
  EXPECT_EQ(std::memcmp(a.weight.data(), b.model.weight.data(), a.weight.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(a.bias.data(), b.model.bias.data(), a.bias.size() * sizeof(float)), 0);
}

TEST(ReorderedTraining, ExactThreadsWouldGiveTheSameModelIfRelabelled) {
  // The pipeline does not relabel for deterministic "exact" threads (it runs
  // slower there), but the promise holds: relabelled by hand, same bits.
  SyntheticSpec spec;
  spec.rows = 4000;
  spec.features = 3000;
  spec.nnz_per_row = 25;
  spec.classes = 5;
  spec.seed = 9;
  SyntheticData s = make_synthetic(spec);
  Dataset plain{"train", std::move(s.x), std::move(s.y)};
  Dataset relabelled{"train", plain.x.clone(), plain.y};
  OptimizerConfig c;
  c.epochs = 2;
  c.learning_rate = 0.05;
  c.l2 = 1e-4;
  c.seed = 3;
  c.threads = 2;
  c.deterministic = true;
  c.deterministic_method = DeterministicMethod::kExact;
  c.batch_size = kExactMinBatch;
  const Model a = train_sparse(plain, spec.classes, c);
  const FeatureOrder order = FeatureOrder::by_frequency(relabelled.x, relabelled.x.cols());
  order.apply(relabelled.x);
  EXPECT_FALSE(std::equal(plain.x.indices().begin(), plain.x.indices().end(),
                          relabelled.x.indices().begin()));
  Model b = train_sparse(relabelled, spec.classes, c);
  order.restore(b);
  EXPECT_EQ(std::memcmp(a.weight.data(), b.weight.data(), a.weight.size() * sizeof(float)), 0);
}

TEST(ReorderedTraining, ContinuedTrainingStartsFromTheModelsOwnWeights) {
  // partial_fit: the second call relabels its chunk, so the learnt weights
  // must be renumbered with it; else the model would forget what it learnt.
  SyntheticSpec spec;
  spec.rows = 3000;
  spec.features = 2000;
  spec.nnz_per_row = 20;
  spec.classes = 3;
  spec.seed = 5;
  SyntheticData s = make_synthetic(spec);
  Dataset d{"train", std::move(s.x), std::move(s.y)};
  OptimizerConfig c;
  c.epochs = 1;
  c.learning_rate = 0.05;
  c.seed = 3;
  c.threads = 1;
  c.reorder_features = false;
  Model a = train_sparse(d, spec.classes, c);
  train_sparse_more(a, d, c);
  c.reorder_features = true;
  TrainConfig config;
  config.optimizer = c;
  Classes names{{"0", "1", "2"}, true};
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  const TrainResult first = train(config, in_memory_training_data(config, names, Dataset{"train", d.x.clone(), d.y}, std::nullopt, {}), quiet);
  ASSERT_TRUE(first.model.training["features_reordered"].get<bool>());
  const TrainResult second = train(first.model, config, in_memory_training_data(config, names, Dataset{"train", d.x.clone(), d.y}, std::nullopt, {}), quiet);
  EXPECT_EQ(std::memcmp(a.weight.data(), second.model.weight.data(), a.weight.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, ReorderedTraining,
    ::testing::Combine(
        ::testing::Values(2, 5),
        ::testing::Values(Mode{"one_thread", 1, false, DeterministicMethod::kExact, 1},
                          Mode{"one_thread_batch8", 1, false, DeterministicMethod::kExact, 8},
                          Mode{"exact_2_threads", 2, true, DeterministicMethod::kExact, kExactMinBatch},
                          Mode{"average_2_threads", 2, true, DeterministicMethod::kAverage, 1})),
    [](const auto& info) {
      return std::string(std::get<1>(info.param).name) + "_" +
             std::to_string(std::get<0>(info.param)) + "_classes";
    });

}  // namespace
}  // namespace bagel
