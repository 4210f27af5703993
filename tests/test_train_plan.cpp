#include "bagel/train_plan.h"

#include <gtest/gtest.h>

#include <atomic>
#include <sstream>
#include <thread>

#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/pipeline.h"
#include "bagel/progress.h"
#include "bagel/synthetic.h"
#include "bagel/trainer.h"
#include "train_helpers.h"

namespace bagel {
namespace {

OptimizerConfig threads(int n) {
  OptimizerConfig c;
  c.threads = n;
  return c;
}

TEST(TrainPlan, OneVsRestSplitsItsClassesBetweenTheThreadsWhileTheWeightsStayCached) {
  const ModelShape ovr20{Head::kOneVsRest, 20, 1000};
  const TrainPlan four = plan_training(threads(4), LayerKind::kSparse, 1'000'000, ovr20);
  EXPECT_EQ(four.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(four.threads, 4);
  EXPECT_NE(four.describe().find("the classes split between them (4 + 4 + 4 + 8)"), std::string::npos)
      << four.describe();
  EXPECT_EQ(four.to_json()["strategy"], "classes");
  EXPECT_EQ(four.to_json()["class_starts"], nlohmann::json({0, 4, 8, 12, 20}));
  EXPECT_TRUE(four.reorder_features);  // each thread writes its own weights
  // At least kClassesPerThread classes a thread: five classes, two threads.
  const TrainPlan five = plan_training(threads(4), LayerKind::kSparse, 1'000'000,
                                       {Head::kOneVsRest, 5, 1000});
  EXPECT_EQ(five.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(five.threads, 2);
  // Too few classes, softmax, the dense layer, Hogwild: the other strategies.
  EXPECT_EQ(plan_training(threads(4), LayerKind::kSparse, 1'000'000, {Head::kOneVsRest, 3, 1000})
                .strategy, ParallelStrategy::kReplicas);
  EXPECT_EQ(plan_training(threads(4), LayerKind::kSparse, 1'000'000, {Head::kSoftmax, 20, 1000})
                .strategy, ParallelStrategy::kReplicas);
  // threads 0 on 16 cores: 5 groups of 4 classes, split while a group's
  // weights fit kClassesMaxGroupBytes, else one thread.
  const std::int64_t too_wide =
      static_cast<std::int64_t>(kClassesMaxGroupBytes / (4 * sizeof(float))) + 1;
  const TrainPlan wide = plan_training_on(16, OptimizerConfig{}, LayerKind::kSparse, 1'000'000,
                                          {Head::kOneVsRest, 20, too_wide});
  EXPECT_EQ(wide.strategy, ParallelStrategy::kSingle);
  EXPECT_TRUE(wide.class_starts.empty());
  EXPECT_EQ(plan_training_on(16, OptimizerConfig{}, LayerKind::kSparse, 1'000'000,
                             {Head::kOneVsRest, 20, too_wide - 1}).strategy,
            ParallelStrategy::kClassShards);
  EXPECT_EQ(plan_training(threads(4), LayerKind::kDense, 1'000'000, ovr20).strategy,
            ParallelStrategy::kSingle);
  OptimizerConfig hogwild = threads(4);
  hogwild.deterministic = false;
  EXPECT_EQ(plan_training(hogwild, LayerKind::kSparse, 1'000'000, ovr20).strategy,
            ParallelStrategy::kHogwild);
  // threads 0: every core for split classes, at most one per block of
  // kClassBlock classes (and one per kRowsPerThread rows), one thread otherwise.
  const TrainPlan all = plan_training(OptimizerConfig{}, LayerKind::kSparse, 1'000'000, ovr20);
  EXPECT_EQ(all.threads, std::min(usable_cores(), 5));
  EXPECT_EQ(plan_training_on(16, OptimizerConfig{}, LayerKind::kSparse, 1'000'000, ovr20).threads, 5);
  EXPECT_EQ(plan_training_on(16, OptimizerConfig{}, LayerKind::kSparse, 1'000'000,
                             {Head::kOneVsRest, 6, 1000}).threads, 2);
  // A single block: as many threads as kClassesPerThread allows.
  EXPECT_EQ(plan_training_on(16, OptimizerConfig{}, LayerKind::kSparse, 1'000'000,
                             {Head::kOneVsRest, 4, 1000}).threads, 2);
  EXPECT_EQ(all.strategy, usable_cores() > 1 ? ParallelStrategy::kClassShards
                                             : ParallelStrategy::kSingle);
  EXPECT_EQ(plan_training(OptimizerConfig{}, LayerKind::kSparse, 1500, ovr20).threads, 1);
  EXPECT_EQ(plan_training(OptimizerConfig{}, LayerKind::kSparse, 1'000'000,
                          {Head::kSoftmax, 20, 1000}).threads, 1);
}

TEST(TrainPlan, DefaultSplitsLargeModelsOnlyWhereEachThreadsClassesFit) {
  const OptimizerConfig all;  // threads 0
  // 2^20 features x 20 classes (80 MiB): 5 groups of 4 (16 MiB each) on 16
  // cores; on 2 cores 8 + 12 classes would take 48 MiB a thread: one thread.
  const ModelShape wide20{Head::kOneVsRest, 20, 1 << 20};
  const TrainPlan many = plan_training_on(16, all, LayerKind::kSparse, 1'000'000, wide20);
  EXPECT_EQ(many.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(many.class_starts, std::vector<int>({0, 4, 8, 12, 16, 20}));
  const TrainPlan two = plan_training_on(2, all, LayerKind::kSparse, 1'000'000, wide20);
  EXPECT_EQ(two.strategy, ParallelStrategy::kSingle);
  EXPECT_EQ(two.threads, 1);
  EXPECT_TRUE(two.class_starts.empty());
  // An asked-for count splits whatever the groups' size (4 + 4 + 4 + 8
  // classes: 32 MiB a thread; 8 + 12 on 2): replicas of 80 MiB of weights
  // ran 0.50-0.62x one thread's speed, the split 0.68-1.10x and the
  // one-thread model.
  const TrainPlan asked4 = plan_training_on(16, threads(4), LayerKind::kSparse, 1'000'000, wide20);
  EXPECT_EQ(asked4.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(asked4.class_starts, std::vector<int>({0, 4, 8, 12, 20}));
  EXPECT_EQ(plan_training_on(2, threads(2), LayerKind::kSparse, 1'000'000, wide20).class_starts,
            std::vector<int>({0, 8, 20}));
  // 2^18 features x 6 classes (man-section): 4 + 2 classes, 4 MiB a thread.
  const TrainPlan six = plan_training_on(2, all, LayerKind::kSparse, 1'000'000,
                                         {Head::kOneVsRest, 6, 1 << 18});
  EXPECT_EQ(six.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(six.class_starts, std::vector<int>({0, 4, 6}));
}

TEST(TrainPlan, ClassGroupsAreWholeBlocksOfFourWhereThereAreEnough) {
  using V = std::vector<int>;
  EXPECT_EQ(class_group_starts(20, 1), (V{0, 20}));
  EXPECT_EQ(class_group_starts(20, 2), (V{0, 8, 20}));
  EXPECT_EQ(class_group_starts(20, 5), (V{0, 4, 8, 12, 16, 20}));
  EXPECT_EQ(class_group_starts(20, 4), (V{0, 4, 8, 12, 20}));
  EXPECT_EQ(class_group_starts(6, 2), (V{0, 4, 6}));
  EXPECT_EQ(class_group_starts(7, 2), (V{0, 4, 7}));
  // More groups than blocks: an even split.
  EXPECT_EQ(class_group_starts(20, 10), (V{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20}));
  EXPECT_EQ(class_group_starts(6, 3), (V{0, 2, 4, 6}));
  // A short last block alone would be one class: an even split.
  EXPECT_EQ(class_group_starts(5, 2), (V{0, 2, 5}));
  EXPECT_EQ(class_group_starts(9, 3), (V{0, 3, 6, 9}));
  EXPECT_EQ(class_group_starts(9, 2), (V{0, 4, 9}));
  // At least kClassesPerThread classes a group at every count the plan allows.
  for (int k = 2 * kClassesPerThread; k <= 64; ++k)
    for (int g = 1; g <= k / kClassesPerThread; ++g) {
      const V s = class_group_starts(k, g);
      ASSERT_EQ(s.front(), 0);
      ASSERT_EQ(s.back(), k);
      for (int i = 0; i < g; ++i)
        ASSERT_GE(s[i + 1] - s[i], kClassesPerThread) << k << " classes, " << g << " groups";
    }
}

TEST(TrainPlan, DefaultUsesEveryCoreAroundAOneThreadLoopAndReplicasWhenAsked) {
  EXPECT_EQ(plan_training(OptimizerConfig{}, LayerKind::kSparse, 1'000'000).cores, usable_cores());
  // Fewer than kReplicasMinCores cores: a model whose classes do not split
  // trains on one thread.
  const TrainPlan p = plan_training_on(kReplicasMinCores - 1, OptimizerConfig{}, LayerKind::kSparse,
                                       1'000'000);
  EXPECT_EQ(p.cores, kReplicasMinCores - 1);
  EXPECT_EQ(p.threads, 1);
  EXPECT_EQ(p.strategy, ParallelStrategy::kSingle);
  const TrainPlan four = plan_training(threads(4), LayerKind::kSparse, 1'000'000);
  EXPECT_EQ(four.threads, 4);
  EXPECT_EQ(four.strategy, ParallelStrategy::kReplicas);
  EXPECT_EQ(four.blocks_per_epoch, 16);
  EXPECT_TRUE(four.sparse_sync);
  // One thread per kRowsPerThread rows: 2500 rows run on two of eight.
  const TrainPlan small = plan_training(threads(8), LayerKind::kSparse, 2500);
  EXPECT_EQ(small.threads, 2);
  EXPECT_EQ(plan_training(threads(8), LayerKind::kSparse, 999).threads, 1);
  EXPECT_EQ(plan_training(threads(8), LayerKind::kSparse, 999).strategy, ParallelStrategy::kSingle);
  // Blocks hold at least 128 rows per replica.
  EXPECT_EQ(plan_training(threads(4), LayerKind::kSparse, 4096).blocks_per_epoch, 8);
}

TEST(TrainPlan, DefaultTrainsReplicasOnManyCoresWhileTheWeightsAreSmall) {
  const OptimizerConfig all;  // threads 0
  const ModelShape binary{Head::kSigmoid, 1, 1 << 20};
  const TrainPlan p = plan_training_on(16, all, LayerKind::kSparse, 1'000'000, binary);
  EXPECT_EQ(p.cores, 16);
  EXPECT_EQ(p.threads, kReplicasAutoThreads);
  EXPECT_EQ(p.strategy, ParallelStrategy::kReplicas);
  EXPECT_EQ(p.blocks_per_epoch, 4 * kReplicasAutoThreads);
  EXPECT_NE(p.describe().find("8 threads (16 cores for the rate calibration and metrics), replicas"),
            std::string::npos) << p.describe();
  EXPECT_EQ(plan_training_on(kReplicasMinCores, all, LayerKind::kSparse, 1'000'000, binary).threads,
            std::min(kReplicasMinCores, kReplicasAutoThreads));
  EXPECT_EQ(plan_training_on(kReplicasMinCores - 1, all, LayerKind::kSparse, 1'000'000, binary)
                .threads, 1);
  // One replica per kRowsPerThread rows.
  EXPECT_EQ(plan_training_on(16, all, LayerKind::kSparse, 3500, binary).threads, 3);
  // Weights past kReplicasMaxWeightBytes, the dense layer, Hogwild or "exact"
  // asked for: one thread.
  const auto wide = static_cast<std::int64_t>(kReplicasMaxWeightBytes / (6 * sizeof(float))) + 1;
  const TrainPlan big = plan_training_on(16, all, LayerKind::kSparse, 1'000'000,
                                         {Head::kSoftmax, 6, wide});
  EXPECT_EQ(big.threads, 1);
  EXPECT_EQ(big.strategy, ParallelStrategy::kSingle);
  EXPECT_EQ(plan_training_on(16, all, LayerKind::kSparse, 1'000'000, {Head::kSoftmax, 6, wide - 1})
                .strategy, ParallelStrategy::kReplicas);
  EXPECT_EQ(plan_training_on(16, all, LayerKind::kDense, 1'000'000, binary).threads, 1);
  OptimizerConfig hogwild;
  hogwild.deterministic = false;
  EXPECT_EQ(plan_training_on(16, hogwild, LayerKind::kSparse, 1'000'000, binary).threads, 1);
  // Split classes take the cores, at most one per block of kClassBlock classes.
  const TrainPlan ovr = plan_training_on(16, all, LayerKind::kSparse, 1'000'000,
                                         {Head::kOneVsRest, 20, 1000});
  EXPECT_EQ(ovr.strategy, ParallelStrategy::kClassShards);
  EXPECT_EQ(ovr.threads, 5);
  // An explicit count is the count, whatever the machine.
  const TrainPlan four = plan_training_on(16, threads(4), LayerKind::kSparse, 1'000'000, binary);
  EXPECT_EQ(four.threads, 4);
  EXPECT_EQ(four.cores, 4);
}

TEST(TrainPlan, RegularisationOrAveragingCombinesEveryRow) {
  OptimizerConfig c = threads(2);
  c.l2 = 1e-5;
  EXPECT_FALSE(plan_training(c, LayerKind::kSparse, 100000).sparse_sync);
  c.l2 = 0;
  c.average = true;
  EXPECT_FALSE(plan_training(c, LayerKind::kSparse, 100000).sparse_sync);
}

TEST(TrainPlan, ExactRefusesBatchesTooSmallToPay) {
  OptimizerConfig c = threads(2);
  c.deterministic_method = DeterministicMethod::kExact;
  c.batch_size = 32;
  try {
    plan_training(c, LayerKind::kSparse, 100000);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "optimizer.deterministic_method");
    EXPECT_NE(std::string(e.what()).find(std::to_string(kExactMinBatch)), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("(batch_size is 32)"), std::string::npos) << e.what();
  }
  c.batch_size = kExactMinBatch;
  EXPECT_EQ(plan_training(c, LayerKind::kSparse, 100000).strategy, ParallelStrategy::kExact);
  c.batch_size = 1;  // one thread: nothing to split
  EXPECT_NO_THROW(plan_training(c, LayerKind::kSparse, 500));
}

TEST(TrainPlan, HogwildOnlyWhenAskedAndTheDenseLayerRunsOneLoop) {
  OptimizerConfig c = threads(2);
  c.deterministic = false;
  EXPECT_EQ(plan_training(c, LayerKind::kSparse, 100000).strategy, ParallelStrategy::kHogwild);
  EXPECT_FALSE(plan_training(c, LayerKind::kSparse, 100000).reorder_features);
  EXPECT_EQ(plan_training(threads(2), LayerKind::kDense, 100000).strategy,
            ParallelStrategy::kSingle);
}

TEST(TrainPlan, IsPrintedAndStored) {
  const Dataset d = synthetic(3, 4000, 5);
  OptimizerConfig c = threads(2);
  c.epochs = 1;
  std::ostringstream log;
  Progress lines(Progress::Mode::kLines, log);
  Model m = Model::zeros({"0", "1", "2"}, true, d.x.cols());
  const TrainingSummary s = train_model(m, d, nullptr, c, LayerKind::kSparse, lines);
  EXPECT_NE(log.str().find("plan: 2 threads, replicas combined 8 times an epoch"), std::string::npos)
      << log.str();
  const nlohmann::json j = summary_to_json(s);
  EXPECT_EQ(j["plan"]["threads"], 2);
  EXPECT_EQ(j["plan"]["strategy"], "replicas");
  EXPECT_EQ(log.str().find(", l1 "), std::string::npos) << "no l1: not named";
  // An l1 penalty is named beside l2 (it had been left out of the line).
  c.l1 = 0.001;
  std::ostringstream with_l1;
  Progress l1_lines(Progress::Mode::kLines, with_l1);
  Model m1 = Model::zeros({"0", "1", "2"}, true, d.x.cols());
  train_model(m1, d, nullptr, c, LayerKind::kSparse, l1_lines);
  EXPECT_NE(with_l1.str().find(", l1 0.001, batch 1"), std::string::npos) << with_l1.str();
}

TEST(TrainPlan, AllCoresByDefaultGiveTheOneThreadModelBitForBit) {
  // threads 0 calibrates the rate on every core and trains the loop on one:
  // the same model as threads 1, whatever the machine.
  const Dataset d = synthetic(4, 5000, 12);
  OptimizerConfig all;  // the defaults: threads 0, learning_rate and epochs "auto"
  all.threads = 0;
  OptimizerConfig one = all;
  one.threads = 1;
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  Model a = Model::zeros({"0", "1", "2", "3"}, true, d.x.cols());
  Model b = a;
  const TrainingSummary sa = train_model(a, d, nullptr, all, LayerKind::kSparse, quiet);
  const TrainingSummary sb = train_model(b, d, nullptr, one, LayerKind::kSparse, quiet);
  EXPECT_EQ(sa.learning_rate, sb.learning_rate);
  EXPECT_EQ(a.weight, b.weight);
  EXPECT_EQ(a.bias, b.bias);
  EXPECT_EQ(sa.plan.cores, usable_cores());
}

TEST(TrainPlan, OneLoopThreadWithACoreToSpareCopiesRowsAhead) {
  const ModelShape binary{Head::kSigmoid, 1, 1000};
  OptimizerConfig c;
  c.threads = 0;
  const TrainPlan two = plan_training_on(2, c, LayerKind::kSparse, 100000, binary);
  EXPECT_EQ(two.strategy, ParallelStrategy::kSingle);
  EXPECT_TRUE(two.gather_ahead);
  EXPECT_NE(two.describe().find("1 thread (2 cores for the rate calibration and metrics), "
                                "a second copying its rows ahead"),
            std::string::npos)
      << two.describe();
  EXPECT_EQ(two.to_json()["gather_ahead"], true);
  EXPECT_FALSE(plan_training_on(1, c, LayerKind::kSparse, 100000, binary).gather_ahead);
  EXPECT_FALSE(plan_training_on(2, c, LayerKind::kDense, 100000, binary).gather_ahead);
  // Where the loop has the threads (replicas on 16 cores, split classes), none.
  EXPECT_FALSE(plan_training_on(16, c, LayerKind::kSparse, 100000, binary).gather_ahead);
  const ModelShape classes{Head::kOneVsRest, 8, 1000};
  EXPECT_FALSE(plan_training_on(2, c, LayerKind::kSparse, 100000, classes).gather_ahead);
  // threads 1 asks for one core.
  c.threads = 1;
  EXPECT_FALSE(plan_training_on(2, c, LayerKind::kSparse, 100000, binary).gather_ahead);
}

// A stop requested from another thread ends training with Interrupted, in
// every strategy, however many epochs were asked for.
TEST(TrainPlan, AStopRequestEndsTrainingInEveryStrategy) {
  const Dataset d = synthetic(2, 20000, 9);
  const CoresForTest two("2");  // mode 4: one loop thread, a second copying rows ahead
  for (const int mode : {0, 1, 2, 3, 4}) {
    OptimizerConfig c = threads(mode == 0 ? 1 : mode == 4 ? 0 : 2);
    c.epochs = 100000;
    c.learning_rate = 0.01;
    c.deterministic = mode != 2;
    if (mode == 3) c.deterministic_method = DeterministicMethod::kExact, c.batch_size = kExactMinBatch;
    Progress quiet(Progress::Mode::kQuiet, std::cerr);
    Model m = Model::zeros({"0", "1"}, true, d.x.cols());
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      quiet.request_stop();
    });
    EXPECT_THROW(train_model(m, d, nullptr, c, LayerKind::kSparse, quiet), Interrupted) << mode;
    stopper.join();
  }
}

// The settings and plan the pipeline resolves before training (for the
// feature order, and the CLI for resuming) are those the trainer runs with.
TrainingData training_data(int classes, Index rows, Index valid_columns) {
  TrainingData data;
  for (int i = 0; i < classes; ++i) data.classes.names.push_back("c" + std::to_string(i));
  data.train = synthetic(classes, rows, 3, 2000);
  Dataset valid = synthetic(classes, 200, 4, valid_columns);
  data.valid = std::move(valid);
  data.class_weight.assign(static_cast<std::size_t>(classes), 1.0);
  return data;
}

TEST(TrainPlan, ThePipelineResolvesTheRunTheTrainerRuns) {
  struct Case {
    int classes;
    std::optional<Head> multiclass;
    ParallelStrategy strategy;
  };
  for (const Case& k : {Case{2, std::nullopt, ParallelStrategy::kReplicas},
                        Case{5, std::nullopt, ParallelStrategy::kClassShards},
                        Case{5, Head::kSoftmax, ParallelStrategy::kReplicas}}) {
    TrainConfig config;
    config.multiclass = k.multiclass;
    config.optimizer.threads = 2;
    config.optimizer.average_auto = true;
    config.optimizer.epochs = 1;
    TrainingData data = training_data(k.classes, 3000, 2500);
    const ResolvedRun run = resolve_training(config, data);
    EXPECT_EQ(run.plan.strategy, k.strategy) << k.classes << " classes";
    EXPECT_TRUE(run.optimizer.average);  // "auto", 3000 rows: averaged
    EXPECT_FALSE(run.optimizer.average_auto);
    Progress quiet(Progress::Mode::kQuiet, std::cerr);
    const TrainResult r = train(config, std::move(data), quiet);
    EXPECT_EQ(r.model.num_features, 2500);  // the wider split, as the plan saw it
    EXPECT_EQ(r.summary.plan.to_json(), run.plan.to_json()) << k.classes << " classes";
    EXPECT_TRUE(r.summary.average);
    // From that model (a warm start), its own head and width.
    const ResolvedRun again = resolve_training(config, training_data(k.classes, 3000, 2500), &r.model);
    EXPECT_EQ(again.plan.to_json(), run.plan.to_json());
  }
}

// "auto" averaging follows the loop the plan runs, not the threads asked
// for: deterministic_method "exact" on 2 threads trains 1,500 rows on one
// (kRowsPerThread), averaged, and so gives one thread's model; on 3,000
// rows it splits each batch over the two, which cannot average.
TEST(TrainPlan, AutoAveragingFollowsTheLoopThePlanRuns) {
  for (const Index rows : {Index{1500}, Index{3000}}) {
    TrainConfig config;
    config.optimizer.threads = 2;
    config.optimizer.deterministic_method = DeterministicMethod::kExact;
    config.optimizer.batch_size = kExactMinBatch;
    config.optimizer.average_auto = true;
    config.optimizer.epochs = 2;
    config.optimizer.learning_rate = 0.05;
    const ResolvedRun run = resolve_training(config, training_data(2, rows, 2000));
    const bool one = rows < 2 * kRowsPerThread;
    EXPECT_EQ(run.plan.threads, one ? 1 : 2) << rows;
    EXPECT_EQ(run.optimizer.average, one) << rows;
    Progress quiet(Progress::Mode::kQuiet, std::cerr);
    const TrainResult asked = train(config, training_data(2, rows, 2000), quiet);
    EXPECT_EQ(asked.summary.average, one) << rows;
    if (!one) continue;
    config.optimizer.threads = 1;
    const TrainResult single = train(config, training_data(2, rows, 2000), quiet);
    EXPECT_TRUE(single.summary.average);
    EXPECT_EQ(asked.model.weight, single.model.weight);
    EXPECT_EQ(asked.model.bias, single.model.bias);
  }
}

}  // namespace
}  // namespace bagel
