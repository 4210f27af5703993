#include <filesystem>
#include <iostream>

#include "bagel/atomic_file.h"
#include "bagel/bench.h"
#include "bagel/error.h"
#include "bagel/override_error.h"
#include "commands.h"

namespace bagel::cli {

CLI::App* add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time the dense Linear path against the sparse EmbeddingBag path (same data, same weights)");
  cmd->add_option("-c,--config", o.config, "Bench settings (JSON; see configs/bench.json)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides, "Override one setting, e.g. --set repetitions=3 (repeatable)");
  cmd->add_option("-i,--input", o.input, "Bench on this CSR file (.npz or svmlight) instead of the sweep")
      ->check(CLI::ExistingFile);
  cmd->add_option("-l,--labels", o.labels, "Labels of --input (optional; used for the training epoch)");
  cmd->add_option("-o,--output", o.output, "Folder for bench.csv and bench.json");
  cmd->add_flag("-q,--quiet", o.quiet, "Only the table");
  return cmd;
}

int run_bench(const BenchOptions& o) {
  std::vector<std::string> overrides = o.overrides;
  if (!o.input.empty()) {
    overrides.push_back("sweep=null");
    overrides.push_back("input.features=" + nlohmann::json(std::filesystem::absolute(o.input).string()).dump());
    if (!o.labels.empty())
      overrides.push_back("input.labels=" + nlohmann::json(std::filesystem::absolute(o.labels).string()).dump());
  }
  if (!o.output.empty())
    overrides.push_back("output=" + nlohmann::json(std::filesystem::absolute(o.output).string()).dump());
  BenchConfig config;
  if (!o.config.empty()) {
    config = load_bench_config(o.config, overrides);
  } else {
    nlohmann::json doc = nlohmann::json::object();
    for (const std::string& s : overrides) apply_override(doc, s);
    try {
      config = parse_bench_config(doc, std::filesystem::current_path());
    } catch (const ConfigError& e) {
      rethrow_config_error(e, "", overrides);  // names the --set that caused it
    }
  }
  Progress progress(Progress::detect(o.quiet), std::cerr);
  const std::vector<BenchCase> cases = bagel::run_bench(config, progress);
  std::cout << bench_table(cases) << std::flush;
  if (!config.output.empty()) {
    std::filesystem::create_directories(config.output);
    const std::filesystem::path dir(config.output);
    write_file_atomic(dir / "bench.csv", bench_csv(cases));
    write_file_atomic(dir / "bench.json", bench_json(cases, config).dump(2) + "\n");
    progress.message("wrote " + (dir / "bench.csv").string() + " and bench.json");
  }
  return 0;
}

}  // namespace bagel::cli
