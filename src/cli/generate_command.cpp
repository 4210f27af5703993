#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/labels.h"
#include "bagel/npz.h"
#include "bagel/synthetic.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

CLI::App* add_generate_command(CLI::App& app, GenerateOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "generate", "Write a synthetic bag-of-words CSR (.npz) with Zipf token ids and learnable labels");
  cmd->add_option("output", o.output, "Output .npz")->required()->check(given_path());
  cmd->add_option("--labels-out", o.labels_out, "Labels file to write (one class id per line)")
      ->required()
      ->check(given_path());
  cmd->add_option("--rows", o.rows, "Rows")->capture_default_str()->check(CLI::Range(0L, 2000000000L));
  cmd->add_option("--features", o.features, "Vocabulary size")->capture_default_str()->check(CLI::Range(1L, 2000000000L));
  cmd->add_option("--nnz-per-row", o.nnz_per_row, "Mean distinct features per row")->capture_default_str();
  cmd->add_option("--zipf", o.zipf_exponent, "Zipf exponent of token frequencies")->capture_default_str();
  // As many as training takes (kMaxClasses): the labels are drawn from
  // rows x classes scores held at once.
  cmd->add_option("--classes", o.classes, "Number of classes")
      ->capture_default_str()
      ->check(CLI::Range(2, static_cast<int>(kMaxClasses)));
  // CLI11 reads "-1" as 2^64 - 1 and wraps numbers past 2^64: refused here.
  const CLI::Validator unsigned_64(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc() || stop != end)
          return "expected an integer in [0, 18446744073709551615], found " + text;
        return {};
      },
      "");
  cmd->add_option("--seed", o.seed, "Seed")->capture_default_str()->check(unsigned_64);
  cmd->add_flag("--compressed", o.compressed, "Deflate the .npz");
  return cmd;
}

int run_generate(const GenerateOptions& o) {
  // CLI11 takes nan and inf for a double.
  if (!(std::isfinite(o.nnz_per_row) && o.nnz_per_row > 0))
    throw UsageError("--nnz-per-row", "expected a number > 0, found " + number_name(o.nnz_per_row));
  if (!(std::isfinite(o.zipf_exponent) && o.zipf_exponent >= 0))
    throw UsageError("--zipf", "expected a number >= 0, found " + number_name(o.zipf_exponent));
  check_output_file(o.output, "output");
  check_output_file(o.labels_out, "--labels-out");
  check_distinct_paths({{"output", o.output}, {"--labels-out", o.labels_out}}, {});
  if (std::filesystem::path(o.output).extension() != ".npz")
    throw UsageError("output " + o.output, "generate writes a scipy CSR .npz: name it *.npz (bagel "
                                           "convert turns it into svmlight)");
  SyntheticSpec spec;
  spec.rows = static_cast<Index>(o.rows);
  spec.features = static_cast<Index>(o.features);
  spec.nnz_per_row = o.nnz_per_row;
  spec.zipf_exponent = o.zipf_exponent;
  spec.classes = o.classes;
  spec.seed = o.seed;
  const SyntheticData d = make_synthetic(spec);
  // Folders made for the outputs go again if the write fails.
  NewFolders new_folders({o.output, o.labels_out});
  create_parent_folder(o.output);
  create_parent_folder(o.labels_out);
  std::string text;
  text.reserve(d.y.size() * 3);
  for (const std::int32_t y : d.y) text += std::to_string(y) + "\n";
  // Both files to temporaries, renamed together (AtomicOutputs).
  AtomicOutputs outputs;
  outputs.write(o.output, [&](const std::string& temp) { write_npz_csr(temp, d.x, o.compressed); });
  outputs.write(o.labels_out, [&](const std::string& temp) { write_file(temp, text); });
  outputs.commit();
  new_folders.keep();
  return 0;
}

}  // namespace bagel::cli
