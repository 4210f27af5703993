// RowWindow copies shuffled rows into contiguous buffers; training over
// windows must give exactly the model that the same steps give on the
// original matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <iostream>
#include <numeric>
#include <random>
#include <vector>

#include "bagel/embedding_bag.h"
#include "bagel/loss.h"
#include "bagel/model.h"
#include "bagel/progress.h"
#include "bagel/row_window.h"
#include "bagel/schedule.h"
#include "bagel/trainer.h"
#include "train/epoch_loop.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// n rows over F features: 0 to 9 non-zeros a row (so some rows are empty),
// unsorted and sometimes repeated indices, values in [-2, 2].
CsrMatrix random_csr(int n, Index F, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> len(0, 9);
  std::uniform_int_distribution<Index> col(0, F - 1);
  std::uniform_real_distribution<float> val(-2.0f, 2.0f);
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (int r = 0; r < n; ++r) {
    const int m = len(rng);
    for (int p = 0; p < m; ++p) {
      indices.push_back(col(rng));
      data.push_back(val(rng));
    }
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  return CsrMatrix(n, F, std::move(indptr), std::move(indices), std::move(data));
}

void expect_same_row(const CsrMatrix& a, Index ra, const CsrMatrix& b, Index rb) {
  const RowView x = a.row(ra), y = b.row(rb);
  ASSERT_EQ(x.size(), y.size()) << "row " << ra;
  for (std::size_t p = 0; p < x.size(); ++p) {
    EXPECT_EQ(x.indices[p], y.indices[p]);
    EXPECT_EQ(x.values[p], y.values[p]);
  }
}

TEST(RowWindow, CopiesTheRowsAndLabelsInTheGivenOrder) {
  const CsrMatrix x = random_csr(40, 30, 1);
  std::vector<std::int32_t> y(40);
  std::iota(y.begin(), y.end(), 100);
  // Out of order, with an empty row and a row taken twice.
  Index empty = 0;
  while (x.row(empty).size() != 0) ++empty;
  const std::vector<Index> rows{17, 3, empty, 39, 3, 0};
  RowWindow w;
  w.gather(x, y, rows);
  const CsrMatrix& m = w.matrix();
  ASSERT_EQ(m.rows(), 6);
  EXPECT_EQ(m.cols(), 30);
  m.validate("window");
  for (std::size_t b = 0; b < rows.size(); ++b) {
    expect_same_row(x, rows[b], m, static_cast<Index>(b));
    EXPECT_EQ(w.labels()[b], 100 + rows[b]);
    EXPECT_EQ(w.local_rows()[b], static_cast<Index>(b));
  }
  EXPECT_EQ(w.local_rows().size(), 6u);
}

TEST(RowWindow, ReusesItsBuffersForASmallerWindow) {
  const CsrMatrix x = random_csr(300, 50, 2);
  const std::vector<std::int32_t> y(300, 1);
  std::vector<Index> big(300);
  std::iota(big.rbegin(), big.rend(), 0);  // 299, 298, ..., 0
  RowWindow w;
  w.gather(x, y, big);
  const float* storage = w.matrix().data().data();
  const std::vector<Index> small{5, 250};
  w.gather(x, y, small);
  const CsrMatrix& m = w.matrix();
  ASSERT_EQ(m.rows(), 2);
  EXPECT_EQ(m.nonZeros(), static_cast<std::int64_t>(x.row(5).size() + x.row(250).size()));
  EXPECT_EQ(m.data().data(), storage);  // no new allocation
  EXPECT_EQ(w.local_rows().size(), 2u);
  expect_same_row(x, 5, m, 0);
  expect_same_row(x, 250, m, 1);
}

// The trainer's loop written out on the original matrix: same permutation,
// same batches, same step count, straight through the layer API.
Model direct_sgd(const Dataset& d, int classes, const OptimizerConfig& c) {
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  Model m = Model::zeros(names, true, d.x.cols());
  EmbeddingBagLayer layer(m.weight, m.bias, m.num_features, m.num_outputs, c.l2, c.l1);
  const int k = m.num_outputs;
  std::vector<Index> order(static_cast<std::size_t>(d.x.rows()));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(c.seed);
  const std::int64_t steps = (d.x.rows() + c.batch_size - 1) / c.batch_size;
  const Schedule schedule(c, steps * c.epochs);
  std::vector<float> logits(static_cast<std::size_t>(c.batch_size) * k), grads(logits.size());
  std::int64_t t = 0;
  for (int e = 0; e < c.epochs; ++e) {
    shuffle_rows(order, rng);
    for (std::size_t begin = 0; begin < order.size(); begin += c.batch_size) {
      const auto rows = std::span<const Index>(order).subspan(
          begin, std::min<std::size_t>(c.batch_size, order.size() - begin));
      layer.forward(d.x, rows, logits.data());
      for (std::size_t b = 0; b < rows.size(); ++b)
        head_loss_and_grad(logits.data() + b * k, d.y[rows[b]], grads.data() + b * k, k,
                           k == 1 ? Head::kSigmoid : Head::kSoftmax);
      layer.step(d.x, rows, grads.data(), schedule.eta(++t));
    }
    layer.flush();
  }
  return m;
}

void expect_windows_change_nothing(const CsrMatrix& x, int classes, int batch, int threads = 1) {
  std::vector<std::int32_t> y(static_cast<std::size_t>(x.rows()));
  for (std::size_t r = 0; r < y.size(); ++r) y[r] = static_cast<std::int32_t>((r * 7) % classes);
  const Dataset d{"train", x.clone(), y};
  OptimizerConfig c;
  c.epochs = 2;
  c.learning_rate = 0.05;
  c.schedule = ScheduleKind::kConstant;
  c.batch_size = batch;
  c.l2 = 1e-3;
  c.l1 = 1e-4;
  c.seed = 11;
  c.threads = threads;
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  Model trained = Model::zeros(names, true, x.cols());
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  const TrainingSummary summary = train_model(trained, d, nullptr, c, LayerKind::kSparse, quiet);
  if (threads == 0) EXPECT_TRUE(summary.plan.gather_ahead) << summary.plan.describe();
  const Model direct = direct_sgd(d, classes, c);
  ASSERT_EQ(trained.weight.size(), direct.weight.size());
  EXPECT_EQ(0, std::memcmp(trained.weight.data(), direct.weight.data(),
                           trained.weight.size() * sizeof(float)))
      << classes << " classes, batch " << batch;
  EXPECT_EQ(trained.bias, direct.bias) << classes << " classes, batch " << batch;
  // Not trivially equal: training moved the weights.
  float norm = 0;
  for (float v : trained.weight) norm += std::abs(v);
  EXPECT_GT(norm, 0.1f);
}

TEST(RowWindow, TrainingOverWindowsIsBitIdenticalToStepsOnTheOriginalRows) {
  // 700 rows cross several 256-row windows (255-row ones for batch 3, one
  // 300-row window a batch for batch 300).
  const CsrMatrix x = random_csr(700, 64, 3);
  for (int classes : {2, 4})
    for (int batch : {1, 3, 7, 300}) expect_windows_change_nothing(x, classes, batch);
}

TEST(RowWindow, BatchesTooBigToCopyReadRowsInPlaceWithTheSameResult) {
  // 40 rows of 60,000 non-zeros (480 KB each): a batch of 20 is copied
  // (9.6 MB), a batch of 40 (19 MB, over the 16 MiB window limit) is not.
  std::mt19937 rng(4);
  std::uniform_int_distribution<Index> col(0, 63);
  std::uniform_real_distribution<float> val(-0.01f, 0.01f);
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (int r = 0; r < 40; ++r) {
    for (int p = 0; p < 60000; ++p) {
      indices.push_back(col(rng));
      data.push_back(val(rng));
    }
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  const CsrMatrix x(40, 64, std::move(indptr), std::move(indices), std::move(data));
  for (int batch : {20, 40}) expect_windows_change_nothing(x, 3, batch);
}

TEST(RowWindow, CopyingAheadOnASecondCoreIsBitIdenticalToo) {
  // threads 0 on 2 cores trains these models on one thread, a second one
  // filling the next window meanwhile: 5000 rows cross three such windows.
  const CoresForTest two("2");
  const CsrMatrix x = random_csr(5000, 64, 5);
  for (int classes : {2, 4})
    for (int batch : {1, 7}) expect_windows_change_nothing(x, classes, batch, 0);
}

// for_each_window's pass with a helper: the windows in order, each row once.
struct Visit {
  std::vector<std::size_t> offsets;
  std::vector<Index> first_index;  // each window row's first column (-1: empty)
};

Visit visit(const Dataset& d, std::span<const Index> order, bool ahead, std::size_t stop_after,
            bool throw_at_stop = false) {
  RowWindow window;
  train::CopyAhead second;
  Visit v;
  train::for_each_window(
      d, order, 1, window,
      [&](const CsrMatrix& x, std::span<const std::int32_t>, std::span<const Index> rows,
          std::size_t offset, bool) {
        v.offsets.push_back(offset);
        for (const Index r : rows) v.first_index.push_back(x.row(r).size() ? x.row(r).indices[0] : -1);
        if (v.offsets.size() == stop_after && throw_at_stop) throw std::runtime_error("bad row");
        return v.offsets.size() < stop_after;
      },
      false, ahead ? &second : nullptr);
  return v;
}

TEST(RowWindow, TheHelperHandsOverEveryRowInOrderAndStopsWhenAsked) {
  const Dataset d{"train", random_csr(9000, 50, 6), std::vector<std::int32_t>(9000, 0)};
  std::vector<Index> order(9000);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(3);
  shuffle_rows(order, rng);
  const Visit plain = visit(d, order, false, SIZE_MAX);
  const Visit helped = visit(d, order, true, SIZE_MAX);
  EXPECT_EQ(helped.first_index, plain.first_index);
  EXPECT_EQ(helped.offsets, (std::vector<std::size_t>{0, 2048, 4096, 6144, 8192}));
  // The body stopping the pass (a divergence, Ctrl-C) ends it there.
  EXPECT_EQ(visit(d, order, true, 2).offsets, (std::vector<std::size_t>{0, 2048}));
  // An exception in the body reaches the caller, after the region.
  EXPECT_THROW(visit(d, order, true, 3, true), std::runtime_error);
  // Inside another parallel region the helper is the team's own thread
  // all the same, with the same result.
  std::vector<Visit> nested(2);
#pragma omp parallel for num_threads(2)
  for (int t = 0; t < 2; ++t) nested[static_cast<std::size_t>(t)] = visit(d, order, true, SIZE_MAX);
  for (const Visit& v : nested) EXPECT_EQ(v.first_index, plain.first_index);
}

}  // namespace
}  // namespace bagel
