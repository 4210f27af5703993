#include <filesystem>
#include <iostream>

#include "bagel/atomic_file.h"
#include "bagel/bench.h"
#include "bagel/error.h"
#include "bagel/override_error.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

CLI::App* add_bench_command(CLI::App& app, BenchOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "bench", "Time the dense Linear path against the sparse EmbeddingBag path (same data, same weights)");
  cmd->add_option("-c,--config", o.config, "Bench settings (JSON; see configs/bench.json)")
      ->check(given_path())
      ->check(CLI::ExistingFile);
  cmd->add_option("--set", o.overrides, "Override one setting, e.g. --set repetitions=3 (repeatable)");
  CLI::Option* input =
      cmd->add_option("-i,--input", o.input, "Bench on this CSR file (.npz or svmlight) instead of the sweep")
          ->check(given_path())
          ->check(CLI::ExistingFile);
  cmd->add_option("-l,--labels", o.labels, "Labels of --input (optional; used for the training epoch)")
      ->check(given_path())
      ->check(CLI::ExistingFile)
      ->needs(input);
  cmd->add_option("-o,--output", o.output, "Folder for bench.csv and bench.json")->check(given_path());
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
  // The inputs and outputs checked before the timings, which take minutes.
  const bool given = !o.input.empty();
  const std::vector<NamedPath> inputs = {
      {"--config", o.config},
      {given ? "--input" : "input.features", config.input ? config.input->features : ""},
      {given ? "--labels" : "input.labels", config.input ? config.input->labels : ""}};
  check_one_reader_per_stream(inputs);
  const std::filesystem::path dir(config.output);
  const std::string output_option = o.output.empty() ? "output" : "-o";
  if (!config.output.empty()) {
    check_output_folder(config.output, output_option);
    check_distinct_paths(
        {{output_option, (dir / "bench.csv").string()}, {output_option, (dir / "bench.json").string()}}, inputs);
  }
  Progress progress(Progress::detect(o.quiet), std::cerr);
  const std::vector<BenchCase> cases = bagel::run_bench(config, progress);
  std::cout << bench_table(cases) << std::flush;
  if (!config.output.empty()) {
    // The output folder itself too, when it is made here.
    NewFolders folders((dir / "bench.csv").string());
    std::filesystem::create_directories(config.output);
    AtomicOutputs outputs;
    outputs.write(dir / "bench.csv", [&](const std::string& to) { write_file(to, bench_csv(cases)); });
    outputs.write(dir / "bench.json",
                  [&](const std::string& to) { write_file(to, bench_json(cases, config).dump(2) + "\n"); });
    outputs.commit();
    folders.keep();
    progress.message("wrote " + (dir / "bench.csv").string() + " and bench.json");
  }
  return 0;
}

}  // namespace bagel::cli
