// ClassShards (src/train/class_shards.h) apart from the trainer: the path
// where each group gathers its own windows of rows, which the trainer takes
// only when the epoch's shared copy would exceed 256 MiB, must train the
// model that the shared copy trains, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "bagel/schedule.h"
#include "bagel/train_plan.h"
#include "train/class_shards.h"
#include "train/epoch_loop.h"
#include "train_helpers.h"

namespace bagel {
namespace {

struct ShardRun {
  Model model;
  bool shared_copy = false;
};

// Three epochs of one-vs-rest training on `threads` class groups, through
// ClassShards as the trainer drives it, with the shared copy allowed up to
// `max_copy_bytes`.
ShardRun train_shards(const Dataset& d, int classes, const OptimizerConfig& c, int threads,
                      double max_copy_bytes) {
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  ShardRun run{Model::zeros(names, true, d.x.cols(), Head::kOneVsRest)};
  TrainPlan plan;
  plan.threads = threads;
  plan.strategy = ParallelStrategy::kClassShards;
  plan.class_starts = class_group_starts(classes, threads);
  train::ClassShards shards(run.model, c, plan, d, max_copy_bytes);
  run.shared_copy = shards.shares_epoch_copy();
  std::vector<Index> order(static_cast<std::size_t>(d.x.rows()));
  std::iota(order.begin(), order.end(), Index{0});
  std::mt19937_64 rng(c.seed);
  const std::int64_t steps_per_epoch = (d.x.rows() + c.batch_size - 1) / c.batch_size;
  const Schedule schedule(c, steps_per_epoch * c.epochs);
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  std::int64_t step = 0;
  for (int epoch = 1; epoch <= c.epochs; ++epoch) {
    shuffle_rows(order, rng);
    train::DivergenceWatch watch(
        train::DivergenceWatch::limit_for(Head::kOneVsRest, classes, d, c.schedule), &quiet);
    shards.run_epoch(order, c, schedule, step, watch, quiet);
    EXPECT_FALSE(watch.tripped()) << "epoch " << epoch;
    EXPECT_TRUE(shards.weights_finite()) << "epoch " << epoch;
  }
  shards.write_model(run.model);
  return run;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(ClassShardsRows, GroupsGatheringTheirOwnRowsTrainTheModelOfTheSharedCopy) {
  const int classes = 7;
  Dataset d = synthetic(classes, 3000, 5);
  d.weight.resize(d.y.size());
  for (std::size_t i = 0; i < d.weight.size(); ++i) d.weight[i] = 0.5f + float(i % 3);
  OptimizerConfig c;
  c.epochs = 3;
  c.learning_rate = 0.02;
  c.schedule = ScheduleKind::kLinear;
  c.l2 = 1e-4;
  c.seed = 3;
  for (const int batch : {1, 4}) {
    c.batch_size = batch;
    const ShardRun shared = train_shards(d, classes, c, 3, train::ClassShards::kMaxEpochCopyBytes);
    const ShardRun own = train_shards(d, classes, c, 3, 0.0);
    ASSERT_TRUE(shared.shared_copy);
    ASSERT_FALSE(own.shared_copy);
    EXPECT_TRUE(bit_equal(shared.model.weight, own.model.weight)) << "batch " << batch;
    EXPECT_TRUE(bit_equal(shared.model.bias, own.model.bias)) << "batch " << batch;
    // And both are the one-thread model (the trainer's, on one thread).
    OptimizerConfig one = c;
    one.threads = 1;
    const Model single = train_sparse(d, classes, one, Head::kOneVsRest);
    EXPECT_TRUE(bit_equal(single.weight, own.model.weight)) << "batch " << batch;
  }
}

}  // namespace
}  // namespace bagel
