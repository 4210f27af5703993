// The batch-1 row steps (train_rows(), src/train/row_steps.cpp) against
// run_epoch()'s general loop, which a layer other than EmbeddingBagLayer
// takes: the same epochs must give the same weights, biases, summed loss
// and running reports, bit for bit, at every fixed output count's head and
// with the layer's options (L1, averaging, row weights), over windows and in
// place.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "bagel/embedding_bag.h"
#include "bagel/loss.h"
#include "bagel/schedule.h"
#include "train/epoch_loop.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// A replica's layer (train::LoggedLayer, without or with its log) under
// another type: run_epoch() then runs its general loop.
struct GeneralLoop : train::LoggedLayer {};

struct Options {
  double l2 = 1e-4;
  double l1 = 0;
  bool average = false;
  bool in_order = false;
};

struct Run {
  std::vector<float> weight, bias;
  std::vector<double> losses;                             // each epoch's summed loss
  std::vector<std::pair<std::size_t, double>> reports;  // (rows done, mean loss)
};

// Two epochs of batch-1 SGD through run_epoch(), on the layer itself
// (`general` false: the row steps) or behind GeneralLoop.
Run train(const Dataset& d, int outputs, Head head, const Options& o, bool general) {
  Run run;
  run.weight.assign(static_cast<std::size_t>(d.x.cols()) * outputs, 0.0f);
  run.bias.assign(static_cast<std::size_t>(outputs), 0.0f);
  EmbeddingBagLayer layer(run.weight, run.bias, d.x.cols(), outputs, o.l2, o.l1);
  if (o.average) layer.start_averaging();
  OptimizerConfig c;
  c.epochs = 2;
  c.batch_size = 1;
  c.learning_rate = 0.05;
  c.schedule = ScheduleKind::kLinear;
  const Schedule schedule(c, d.x.rows() * c.epochs);
  train::BatchScratch scratch(1, outputs, head);
  RowWindow window;
  train::StepClock clock;
  std::vector<Index> order(static_cast<std::size_t>(d.x.rows()));
  std::iota(order.begin(), order.end(), Index{0});
  std::mt19937_64 rng(7);
  for (int epoch = 0; epoch < c.epochs; ++epoch) {
    // In place, the rows must already be in the epoch's order: keep 0, 1, ...
    if (!o.in_order) shuffle_rows(order, rng);
    train::DivergenceWatch watch(1e300);
    auto report = [&](std::size_t done, double mean) { run.reports.emplace_back(done, mean); };
    double loss = 0;
    if (general) {
      GeneralLoop wrapped{{layer, nullptr}};
      loss = train::run_epoch(wrapped, d, order, 1, schedule, clock, scratch, window, watch, report,
                              0, o.in_order);
    } else {
      loss = train::run_epoch(layer, d, order, 1, schedule, clock, scratch, window, watch, report, 0,
                              o.in_order);
    }
    run.losses.push_back(loss);
  }
  layer.flush();
  if (o.average) layer.write_average(run.weight, run.bias);
  return run;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void expect_same(const Dataset& d, int outputs, Head head, const Options& o, const std::string& what) {
  const Run rows = train(d, outputs, head, o, false);
  const Run general = train(d, outputs, head, o, true);
  EXPECT_TRUE(bit_equal(rows.weight, general.weight)) << what;
  EXPECT_TRUE(bit_equal(rows.bias, general.bias)) << what;
  EXPECT_EQ(rows.losses, general.losses) << what;
  EXPECT_EQ(rows.reports, general.reports) << what;
  // The layer learnt something (an all-zero pair would compare equal too).
  EXPECT_GT(std::count_if(rows.weight.begin(), rows.weight.end(), [](float w) { return w != 0; }), 0)
      << what;
}

// 1,100 rows: four reports an epoch, the last window partly filled.
Dataset rows_of(int classes) { return synthetic(classes, 1100, 11, 3000, 20); }

TEST(RowSteps, TrainTheGeneralLoopsModelAtEveryHead) {
  const Dataset binary = rows_of(2);
  expect_same(binary, 1, Head::kSigmoid, {}, "sigmoid, 1 output");
  for (const int k : {3, 10, 20, 32}) {
    const Dataset d = rows_of(k);
    expect_same(d, k, Head::kOneVsRest, {}, "one-vs-rest, " + std::to_string(k) + " outputs");
    expect_same(d, k, Head::kSoftmax, {}, "softmax, " + std::to_string(k) + " outputs");
  }
}

TEST(RowSteps, TrainTheGeneralLoopsModelWithTheLayersOptions) {
  Dataset d = rows_of(10);
  Options l1;
  l1.l1 = 1e-4;
  expect_same(d, 10, Head::kOneVsRest, l1, "l1 and l2");
  Options avg;
  avg.average = true;
  expect_same(d, 10, Head::kOneVsRest, avg, "averaged");
  Options in_place;
  in_place.in_order = true;
  expect_same(d, 10, Head::kOneVsRest, in_place, "rows read in place");
  d.weight.resize(d.y.size());
  for (std::size_t i = 0; i < d.weight.size(); ++i) d.weight[i] = 0.25f + float(i % 4);
  expect_same(d, 10, Head::kOneVsRest, {}, "row weights");
}

// The heads at a constant width against the same heads at a run-time one,
// on logits across the range where exp and the float roundings matter.
// Each in a function of its own, as train_rows() and run_epoch() compile
// them: so compiled, GCC 12 once dropped a float rounding from softmax's
// gradient at 3 outputs (loss.h).
template <int K>
[[gnu::noinline]] double head_at_constant_width(const float* z, std::int32_t y, float* grad, Head head) {
  return head_loss_and_grad(z, y, grad, kWidth<K>, head);
}
[[gnu::noinline]] double head_at_run_time_width(const float* z, std::int32_t y, float* grad, int k,
                                                Head head) {
  return head_loss_and_grad(z, y, grad, k, head);
}

template <int K>
void expect_heads_agree(std::mt19937& rng) {
  std::normal_distribution<float> logit(0.0f, 4.0f);
  for (int trial = 0; trial < 2000; ++trial) {
    float z[K], fixed[K], any[K];
    for (float& v : z) v = logit(rng);
    const auto y = static_cast<std::int32_t>(trial % K);
    for (const Head head : {Head::kOneVsRest, Head::kSoftmax}) {
      const double a = head_at_constant_width<K>(z, y, fixed, head);
      const double b = head_at_run_time_width(z, y, any, K, head);
      ASSERT_EQ(a, b) << K << " outputs, " << to_string(head) << ", trial " << trial;
      ASSERT_EQ(std::memcmp(fixed, any, sizeof fixed), 0)
          << K << " outputs, " << to_string(head) << ", trial " << trial;
    }
  }
}

TEST(RowSteps, HeadsAtAConstantWidthComputeTheRunTimeWidthsValues) {
  std::mt19937 rng(5);
  expect_heads_agree<3>(rng);
  expect_heads_agree<5>(rng);
  expect_heads_agree<8>(rng);
  expect_heads_agree<10>(rng);
  expect_heads_agree<16>(rng);
  expect_heads_agree<17>(rng);
  expect_heads_agree<20>(rng);
  expect_heads_agree<32>(rng);
}

// A replica's copy (train::LoggedLayer) trains through the row steps and
// marks the weight rows it steps on, which its combination then visits: it
// must mark every feature of every row it trained, as the general loop
// does, and train the same weights.
TEST(RowSteps, LogTheRowsEachStepTouches) {
  const Dataset d = rows_of(10);
  const int k = 10;
  // 300 shuffled rows of 1,100: a window and a part of one, and features left untouched.
  std::vector<Index> order(static_cast<std::size_t>(d.x.rows()));
  std::iota(order.begin(), order.end(), Index{0});
  std::mt19937_64 rng(3);
  shuffle_rows(order, rng);
  order.resize(300);
  std::vector<bool> expected(static_cast<std::size_t>(d.x.cols()), false);
  for (const Index r : order)
    for (const Index j : d.x.row(r).indices) expected[static_cast<std::size_t>(j)] = true;
  ASSERT_LT(std::count(expected.begin(), expected.end(), true), d.x.cols());

  OptimizerConfig c;
  c.batch_size = 1;
  c.learning_rate = 0.05;
  const Schedule schedule(c, static_cast<std::int64_t>(order.size()));
  std::vector<float> weights[2];
  for (const bool general : {false, true}) {
    std::vector<float>& weight = weights[general];
    weight.assign(static_cast<std::size_t>(d.x.cols()) * k, 0.0f);
    std::vector<float> bias(static_cast<std::size_t>(k), 0.0f);
    EmbeddingBagLayer layer(weight, bias, d.x.cols(), k, 0, 0);
    train::TouchLog log(d.x.cols());
    train::BatchScratch scratch(1, k, Head::kOneVsRest);
    RowWindow window;
    train::StepClock clock;
    train::DivergenceWatch watch(1e300);
    auto report = [](std::size_t, double) {};
    if (general) {
      GeneralLoop wrapped{{layer, &log}};
      train::run_epoch(wrapped, d, order, 1, schedule, clock, scratch, window, watch, report);
    } else {
      train::LoggedLayer logged{layer, &log};
      train::run_epoch(logged, d, order, 1, schedule, clock, scratch, window, watch, report);
    }
    layer.flush();
    for (std::size_t j = 0; j < expected.size(); ++j)
      ASSERT_EQ((log.word(j / 64) >> (j % 64)) & 1, expected[j] ? 1u : 0u)
          << "feature " << j << (general ? ", general loop" : ", row steps");
  }
  EXPECT_TRUE(bit_equal(weights[0], weights[1]));
}

TEST(RowSteps, CoverTheFixedOutputCountsOnly) {
  EXPECT_FALSE(train::has_row_steps(0));
  EXPECT_TRUE(train::has_row_steps(1));
  EXPECT_TRUE(train::has_row_steps(detail::kMaxFixedOutputs));
  EXPECT_FALSE(train::has_row_steps(detail::kMaxFixedOutputs + 1));
}

// The watch counts clipped steps against the rows that take steps: with a
// tenth of the rows weighted above 0, 60 clipped of 1,000 rows seen is 60
// of about 100, divergence; with every row weighted, it is not.
TEST(DivergenceWatch, CountsClippedStepsAgainstTheRowsThatTakeSteps) {
  train::DivergenceWatch all(1.0);
  EXPECT_TRUE(all.ok(1000, 0.5, 60));
  train::DivergenceWatch tenth(1.0, nullptr, 0.1);
  EXPECT_FALSE(tenth.ok(1000, 0.5, 60));
  EXPECT_TRUE(tenth.tripped());
  Dataset d;
  d.x = CsrMatrix(4, 1, std::vector<Index>{0, 0, 0, 0, 0}, {}, {});
  EXPECT_EQ(train::DivergenceWatch::counted_share_of(d), 1.0);
  d.weight = {1, 0, 0, 2};
  EXPECT_EQ(train::DivergenceWatch::counted_share_of(d), 0.5);
}

}  // namespace
}  // namespace bagel
