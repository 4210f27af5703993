// The subcommands: each registers its options on the CLI11 app and has a
// run function that main() calls after parsing (so errors reach main's one
// catch).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace bagel::cli {

struct TrainOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string output;
  std::string init;
  bool force = false;
  bool resume = false;
  bool quiet = false;
};
CLI::App* add_train_command(CLI::App& app, TrainOptions& options);
int run_train(const TrainOptions& options);

struct TuneOptions {
  std::string config;
  std::vector<std::string> overrides;
  double budget = 60;
  std::string output;
  int threads = 0;
  bool quiet = false;
};
CLI::App* add_tune_command(CLI::App& app, TuneOptions& options);
int run_tune(const TuneOptions& options);

struct PredictOptions {
  std::string model;
  std::string input;
  std::string labels;
  std::string output;
  std::string metrics;
  std::string format = "csv";
  std::string zero_based = "auto";
  std::string text_format = "auto";
  std::string layer = "sparse";
  bool proba = false;
  std::int64_t top_k = 0;  // 0: not asked for; above the class count: all
  double threshold = -1;  // < 0: not asked for
  bool quiet = false;
  int threads = 0;
};
CLI::App* add_predict_command(CLI::App& app, PredictOptions& options);
int run_predict(const PredictOptions& options);

struct InspectOptions {
  std::string model;
  int top = 10;
  std::string vocabulary;
  std::vector<std::string> classes;
  std::string format = "text";
  bool explain = false;
  std::string input;
  std::vector<int> rows;
  std::string zero_based = "auto";
  std::string text_format = "auto";
  bool versus_runner_up = false;
};
CLI::App* add_inspect_command(CLI::App& app, InspectOptions& options);
int run_inspect(const InspectOptions& options);

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string labels;
  std::string labels_out;
  std::string zero_based = "auto";
  bool compressed = false;
  bool one_based = false;
};
CLI::App* add_convert_command(CLI::App& app, ConvertOptions& options);
int run_convert(const ConvertOptions& options);

struct BenchOptions {
  std::string config;
  std::vector<std::string> overrides;
  std::string input;
  std::string labels;
  std::string output;
  bool quiet = false;
};
CLI::App* add_bench_command(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

struct GenerateOptions {
  std::string output;
  std::string labels_out;
  long rows = 10000;
  long features = 1 << 16;
  double nnz_per_row = 75;
  double zipf_exponent = 1.1;
  int classes = 2;
  unsigned long seed = 1;
  bool compressed = false;
};
CLI::App* add_generate_command(CLI::App& app, GenerateOptions& options);
int run_generate(const GenerateOptions& options);

struct VectorizeOptions {
  std::string input;
  std::string labels;
  std::string format = "auto";
  int tsv_label_column = 0;
  int tsv_text_column = 1;
  bool tsv_header = false;
  std::string quoting = "csv";
  std::vector<std::string> table_options;  // the --tsv-* and --quoting options given, to refuse them for other formats
  bool unlabeled_given = false;             // likewise --unlabeled, for formats other than fasttext
  std::string decode_error = "strict";
  std::string unlabeled = "error";
  std::string config;
  std::vector<std::string> overrides;
  std::string vectorizer;
  std::string output;
  bool compressed = false;
  std::string vocabulary_out;
  std::string labels_out;
  std::string weights_out;
  std::string vectorizer_out;
  int threads = 0;
  bool quiet = false;
};
CLI::App* add_vectorize_command(CLI::App& app, VectorizeOptions& options);
int run_vectorize(const VectorizeOptions& options);

}  // namespace bagel::cli
