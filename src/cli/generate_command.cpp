#include <charconv>
#include <cstdio>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/labels.h"
#include "bagel/npz.h"
#include "bagel/synthetic.h"
#include "bagel/table_writer.h"
#include "cli_numbers.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

CLI::App* add_generate_command(CLI::App& app, GenerateOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "generate", "Write a synthetic bag-of-words CSR (.npz) with Zipf token ids and learnable labels");
  cmd->add_option("output", o.output, "Output .npz (- for standard output)")->required()->transform(output_path());
  cmd->add_option("--labels-out", o.labels_out, "Labels file to write (one class id per line)")
      ->required()
      ->transform(output_path());
  cmd->add_option("--rows", o.rows, "Rows")->capture_default_str()->check(integer_in(0, 2000000000));
  cmd->add_option("--features", o.features, "Vocabulary size")->capture_default_str()->check(integer_in(1, 2000000000));
  cmd->add_option("--nnz-per-row", o.nnz_per_row, "Mean distinct features per row")->capture_default_str()->check(number_above(0));
  cmd->add_option("--zipf", o.zipf_exponent, "Zipf exponent of token frequencies")->capture_default_str()->check(number_at_least(0));
  // As many as training takes (kMaxClasses): the labels are drawn from
  // rows x classes scores held at once.
  cmd->add_option("--classes", o.classes, "Number of classes")
      ->capture_default_str()
      ->check(integer_in(2, static_cast<std::int64_t>(kMaxClasses)));
  cmd->add_option("--seed", o.seed, "Seed")->capture_default_str()->check(unsigned_64());
  cmd->add_flag("--compressed", o.compressed, "Deflate the .npz");
  return cmd;
}

namespace {

// Whether `path` is standard output ("-" reaches here as /dev/stdout),
// another descriptor, a pipe or a device: a name that says nothing of the
// format, where the .npz goes all the same (made in $TMPDIR, copied out).
bool names_a_stream(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  return names_own_descriptor(path) ||
         (std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
          !std::filesystem::is_directory(st));
}

// The rows' mean distinct count is --nnz-per-row within sampling noise,
// unless the bounds of make_synthetic (at least 1, at most the vocabulary,
// draws capped) moved it: then the user is told what they got.
void warn_if_mean_missed(const GenerateOptions& o, const SyntheticData& d) {
  if (d.x.rows() == 0) return;
  const double produced = static_cast<double>(d.x.nonZeros()) / static_cast<double>(d.x.rows());
  const double wanted = d.wanted_mean_distinct;
  if (std::abs(produced - wanted) <= 0.02 * wanted + 0.01) return;
  char mean[64];
  std::snprintf(mean, sizeof mean, "%.2f", produced);
  const std::string why =
      produced > wanted ? "every row has at least 1"
                        : "a row holds at most --features " + std::to_string(o.features) +
                              " ids, and its Zipf draws, at most 20 for each id wanted, repeat the "
                              "frequent ids, the more so the higher --zipf (" +
                              format_number(o.zipf_exponent) + ")";
  std::cerr << "bagel: warning: --nnz-per-row " << format_number(o.nnz_per_row)
            << " cannot be reached: the rows have " << mean << " distinct features on average (" << why
            << ")\n";
}

}  // namespace

int run_generate(const GenerateOptions& o) {
  check_output_file(o.output, "output");
  check_output_file(o.labels_out, "--labels-out");
  check_distinct_paths({{"output", o.output}, {"--labels-out", o.labels_out}}, {});
  if (!names_a_stream(o.output) && std::filesystem::path(o.output).extension() != ".npz")
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
  warn_if_mean_missed(o, d);
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
