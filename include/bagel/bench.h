// bagel bench: the dense Linear path against the EmbeddingBag-sum path on the
// same data and the same weights. Each case first checks that both paths
// agree, then times inference (forward over the matrix) and one training
// epoch over several repetitions, measures each path's peak memory, and puts
// the cost model beside the measurement:
//   inference  dense ~ rows * F * K   vs  sparse ~ nnz * K          -> F / (nnz/row)
//   epoch      dense ~ steps * (2 B F K + F K)  vs  sparse ~ 2 nnz K -> F (2B + 1) / (2 B nnz/row)
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/config.h"
#include "bagel/csr.h"
#include "bagel/progress.h"

namespace bagel {

struct BenchConfig {
  // Generated data (Zipf token ids), one case per features x batch size x classes.
  std::vector<Index> features = {1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20};
  std::vector<int> batch_sizes = {1, 32};
  std::vector<int> classes = {2};
  Index rows = 2000;
  double nnz_per_row = 75;
  double zipf_exponent = 1.1;
  bool sweep = true;
  // The user's own CSR file (its first `rows` rows), timed at each batch size.
  std::optional<DataSpec> input;
  int repetitions = 5;
  // The training the two paths are timed and compared on: a constant rate,
  // so that both take the same steps (README §7).
  double learning_rate = 0.01;
  int epochs = 1;
  double l2 = 1e-4;                // exercises lazy (sparse) against eager (dense) decay
  int threads = 0;                 // 0: all cores
  double max_dense_memory_gb = 0;  // 0: half of the available memory
  std::uint64_t seed = 7;
  std::string output = "runs/bench";
};

BenchConfig load_bench_config(const std::string& path, const std::vector<std::string>& overrides);
BenchConfig parse_bench_config(const nlohmann::json& doc, const std::filesystem::path& base_dir);

struct Timing {
  std::vector<double> ms;  // one per repetition
  double median() const;
  double min() const;
  double max() const;
};

struct BenchCase {
  std::string data;                 // "zipf" or the input file
  Index rows = 0;
  Index features = 0;
  double nnz_per_row = 0;
  int classes = 2;
  int outputs = 1;
  int batch_size = 1;
  double forward_max_diff = 0;      // max |p_dense - p_sparse| over all probabilities
  double train_max_diff = 0;        // max |w_dense - w_sparse| after the epochs
  // When train_max_diff was over the tolerance: the same comparison after one
  // epoch at a rate small enough to be stable, which tells an unstable run
  // (rounding differences amplified) from paths that compute different things.
  double stable_rate = 0;
  double stable_max_diff = 0;
  bool dense_skipped = false;
  std::string skip_reason;
  Timing sparse_infer, dense_infer, sparse_train, dense_train;
  double sparse_peak_mb = 0, dense_peak_mb = 0;
  double expected_infer_ratio = 0, expected_train_ratio = 0;
};

std::vector<BenchCase> run_bench(const BenchConfig& config, Progress& progress);

// Terminal table, CSV and JSON of the results.
std::string bench_table(const std::vector<BenchCase>& cases);
std::string bench_csv(const std::vector<BenchCase>& cases);
nlohmann::json bench_json(const std::vector<BenchCase>& cases, const BenchConfig& config);

}  // namespace bagel
