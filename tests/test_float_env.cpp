// Flush-to-zero and denormals-are-zero in every thread that trains or
// predicts (float_env.h). A denormal result is flushed to an exact zero with
// them set and kept without, so each case below has a value that tells the
// two apart: an update of 1e-39 (below FLT_MIN, 1.18e-38) and a weight of
// 1e-39 read by predict.
#include <gtest/gtest.h>

#include <omp.h>

#include <cstring>
#include <string>
#include <vector>

#include "bagel/float_env.h"
#include "bagel/predict.h"
#include "bagel/train_plan.h"
#include "bagel/trainer.h"
#include "train_helpers.h"

namespace bagel {
namespace {

// Feature 0 holds 2e-38 in every row, so one step's update of its weight,
// 2e-38 * eta * |g| with eta 0.1 and |g| = 0.5, is 1e-39: zero under FTZ.
// Feature 1 (value 1, both signs) gives the rows something to learn.
Dataset tiny_values(Index rows) {
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  std::vector<std::int32_t> y;
  for (Index r = 0; r < rows; ++r) {
    indices.insert(indices.end(), {0, 1});
    data.insert(data.end(), {2e-38f, r % 2 ? 1.0f : -1.0f});
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(r % 2);
  }
  return Dataset{"train", CsrMatrix(rows, 2, std::move(indptr), std::move(indices), std::move(data)),
                 std::move(y)};
}

// Starts OpenMP's worker threads in the default mode. Threads copy the mode
// of the thread that creates them, so workers first started inside a
// flushing region would flush without any guard of their own and hide a
// missing one. (ctest runs each test in a process of its own.)
void start_workers_in_default_mode() {
  ASSERT_FALSE(DenormalsAreZero::active());
#pragma omp parallel num_threads(4)
  {
  }
}

// Whether every thread of a 4-thread team flushes denormals.
bool any_worker_flushes() {
  bool any = false;
#pragma omp parallel num_threads(4) reduction(|| : any)
  any = DenormalsAreZero::active();
  return any;
}

OptimizerConfig plan(int threads, bool deterministic, DeterministicMethod method) {
  OptimizerConfig c;
  c.learning_rate = 0.1;
  c.schedule = ScheduleKind::kConstant;
  c.epochs = 1;
  c.threads = threads;
  c.deterministic = deterministic;
  c.deterministic_method = method;
  return c;
}

TEST(DenormalsAreZero, SetsTheModeAndRestoresTheCallersMode) {
  ASSERT_FALSE(DenormalsAreZero::active());  // the default floating-point environment
  {
    const DenormalsAreZero on;
    EXPECT_TRUE(DenormalsAreZero::active());
    volatile float tiny = 2e-38f;
    EXPECT_EQ(tiny * 0.05f, 0.0f);
  }
  EXPECT_FALSE(DenormalsAreZero::active());
  volatile float tiny = 2e-38f;
  EXPECT_NE(tiny * 0.05f, 0.0f);
}

TEST(DenormalsAreZero, EveryTrainingModeFlushesInEveryThread) {
  start_workers_in_default_mode();
  const Dataset d = tiny_values(4000);  // 4000 rows: the plan allows 2 threads
  struct Mode {
    const char* name;
    OptimizerConfig c;
  };
  const Mode modes[] = {
      {"one thread", plan(1, false, DeterministicMethod::kExact)},
      {"hogwild", plan(2, false, DeterministicMethod::kExact)},
      {"exact", plan(2, true, DeterministicMethod::kExact)},
      {"average", plan(2, true, DeterministicMethod::kAverage)},
  };
  for (Mode m : modes) {
    if (m.c.deterministic && m.c.deterministic_method == DeterministicMethod::kExact)
      m.c.batch_size = kExactMinBatch;
    const Model model = train_sparse(d, 2, m.c);
    EXPECT_EQ(model.weight[0], 0.0f) << m.name << ": a denormal update was kept";
    EXPECT_NE(model.weight[1], 0.0f) << m.name << ": the normal feature did not learn";
    EXPECT_FALSE(DenormalsAreZero::active()) << m.name << ": the caller's mode was not restored";
  }
}

TEST(DenormalsAreZero, PredictFlushesInEveryThread) {
  // Weight 1e-39 times value 1e30 is a logit of 1e-9 when denormals are
  // kept (p = 0.5 + 2.5e-10) and exactly 0 under DAZ (p = 0.5). Enough
  // non-zeros (> 2^18) for predict to use its threads.
  start_workers_in_default_mode();
  Model m = Model::zeros({"a", "b"}, false, 1);
  m.weight[0] = 1e-39f;
  const Index rows = 3000;
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  for (Index r = 0; r < rows; ++r) {
    for (int p = 0; p < 100; ++p) indices.push_back(0), data.push_back(p == 0 ? 1e30f : 0.0f);
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  const CsrMatrix x(rows, 1, std::move(indptr), std::move(indices), std::move(data));
  const std::vector<double> p = predict_proba(m, x, 2);
  for (Index r = 0; r < rows; ++r) ASSERT_EQ(p[2 * r + 1], 0.5) << "row " << r;
  EXPECT_FALSE(DenormalsAreZero::active());
}

TEST(DenormalsAreZero, NoThreadKeepsTheModeAfterTrainingReturns) {
  // Here the workers are first started by training itself: those started
  // while the calling thread flushed would keep flushing in the caller's
  // own parallel code afterwards.
  const Dataset d = tiny_values(4000);
  train_sparse(d, 2, plan(2, false, DeterministicMethod::kExact));
  EXPECT_FALSE(DenormalsAreZero::active());
  EXPECT_FALSE(any_worker_flushes());
}

TEST(DenormalsAreZero, NoThreadKeepsTheModeAfterTheSplitClassesEvaluatedEachEpoch) {
  // The split classes' team ends OpenMP's pool before each of its runs
  // (train/thread_team.h), and the valid set's evaluation after each epoch
  // starts new pool threads from the flushing training thread: none of
  // them may outlive training.
  const Dataset train = synthetic(8, 4000, 1);
  const Dataset valid = synthetic(8, 9000, 2);  // over 2^18 non-zeros: predict uses its threads
  OptimizerConfig c = plan(2, true, DeterministicMethod::kAverage);
  c.epochs = 2;
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back(std::to_string(i));
  Model m = Model::zeros(names, true, train.x.cols(), Head::kOneVsRest);
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  const TrainingSummary s = train_model(m, train, &valid, c, LayerKind::kSparse, quiet);
  ASSERT_EQ(s.plan.strategy, ParallelStrategy::kClassShards) << s.plan.describe();
  ASSERT_EQ(s.history.size(), 2u);
  EXPECT_TRUE(s.history[0].valid.has_value());
  EXPECT_FALSE(DenormalsAreZero::active());
  EXPECT_FALSE(any_worker_flushes());
}

}  // namespace
}  // namespace bagel
