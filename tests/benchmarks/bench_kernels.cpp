// Micro-benchmarks of the EmbeddingBag kernels (Google Benchmark): forward
// (bag sum), backward (one SGD step: the scatter into the rows) and both, per
// non-zero, for K = 1, 2, 20, 100 outputs, with the weights resident in L2
// and at a 2^20 vocabulary. Each iteration is one row, the next row's weights
// prefetched as in training.
//
//   cmake -B build -DBAGEL_BUILD_BENCHMARKS=ON && cmake --build build -t bench_kernels
//   build/bench_kernels --benchmark_counters_tabular=true
//
// "ns/nnz" is the time per non-zero (items = non-zeros processed).
#include <benchmark/benchmark.h>

#include <numeric>
#include <vector>

#include "bagel/embedding_bag.h"
#include "bagel/loss.h"
#include "bagel/synthetic.h"

namespace {

using bagel::Index;

struct Fixture {
  bagel::SyntheticData data;
  std::vector<float> weight, bias;
  std::vector<Index> order;
  Fixture(Index features, int outputs) {
    bagel::SyntheticSpec spec;
    spec.rows = 20000;
    spec.features = features;
    spec.classes = outputs == 1 ? 2 : outputs;
    data = bagel::make_synthetic(spec);
    weight.assign(static_cast<std::size_t>(features) * outputs, 0.01f);
    bias.assign(outputs, 0.0f);
    order.resize(static_cast<std::size_t>(spec.rows));
    std::iota(order.begin(), order.end(), 0);
  }
};

// Vocabulary whose K-wide weights fill about half of a 1.25 MiB L2.
Index l2_features(int outputs) { return static_cast<Index>((640 * 1024) / (4 * outputs)); }

void run(benchmark::State& state, Index features, bool with_forward, bool with_step) {
  const int k = static_cast<int>(state.range(0));
  Fixture f(features, k);
  bagel::EmbeddingBagLayer layer(f.weight, f.bias, features, k, 1e-6, 0.0);
  std::vector<float> logits(k), grads(k, 0.001f);
  std::size_t i = 0;
  std::int64_t nnz = 0;
  const std::size_t n = f.order.size();
  for (auto _ : state) {
    const std::span<const Index> row(&f.order[i], 1);
    const std::span<const Index> next(&f.order[(i + 1) % n], 1);
    layer.prefetch(f.data.x, next);
    if (with_forward) layer.forward(f.data.x, row, logits.data());
    if (with_step) layer.step(f.data.x, row, grads.data(), 1e-3);
    benchmark::DoNotOptimize(logits.data());
    nnz += static_cast<std::int64_t>(f.data.x.row(f.order[i]).size());
    i = (i + 1) % n;
  }
  state.SetItemsProcessed(nnz);
  state.counters["ns/nnz"] = benchmark::Counter(static_cast<double>(nnz) * 1e-9,
                                                benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

Index l2(const benchmark::State& s) { return l2_features(static_cast<int>(s.range(0))); }

void BM_Forward_L2(benchmark::State& s) { run(s, l2(s), true, false); }
void BM_Forward_2p20(benchmark::State& s) { run(s, 1 << 20, true, false); }
void BM_Backward_L2(benchmark::State& s) { run(s, l2(s), false, true); }
void BM_Backward_2p20(benchmark::State& s) { run(s, 1 << 20, false, true); }
void BM_ForwardStep_L2(benchmark::State& s) { run(s, l2(s), true, true); }
void BM_ForwardStep_2p20(benchmark::State& s) { run(s, 1 << 20, true, true); }

BENCHMARK(BM_Forward_L2)->Arg(1)->Arg(2)->Arg(20)->Arg(100);
BENCHMARK(BM_Forward_2p20)->Arg(1)->Arg(2)->Arg(20)->Arg(100);
BENCHMARK(BM_Backward_L2)->Arg(1)->Arg(2)->Arg(20)->Arg(100);
BENCHMARK(BM_Backward_2p20)->Arg(1)->Arg(2)->Arg(20)->Arg(100);
BENCHMARK(BM_ForwardStep_L2)->Arg(1)->Arg(2)->Arg(20)->Arg(100);
BENCHMARK(BM_ForwardStep_2p20)->Arg(1)->Arg(2)->Arg(20)->Arg(100);

}  // namespace

BENCHMARK_MAIN();
