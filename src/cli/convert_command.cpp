#include <filesystem>
#include <string>

#include "bagel/atomic_file.h"
#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/labels.h"
#include "bagel/npz.h"
#include "bagel/svmlight.h"
#include "cli_paths.h"
#include "commands.h"

namespace bagel::cli {

CLI::App* add_convert_command(CLI::App& app, ConvertOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "convert", "Convert between scipy .npz CSR and svmlight text (format from the extension)");
  cmd->add_option("input", o.input, "Input: .npz or svmlight; - or a pipe is read as it arrives")
      ->required()
      ->check(input_path());
  cmd->add_option("output", o.output,
                  "Output: .npz (float32 data, int32 indices) or svmlight (its folder is created "
                  "if missing)")
      ->required()
      ->transform(output_path());
  cmd->add_option("--labels", o.labels, "Labels for the rows (text or .npy); svmlight output needs them "
                                        "unless the input is svmlight")
      ->check(input_path());
  cmd->add_option("--labels-out", o.labels_out, "Also write the labels, one per line")->transform(output_path());
  cmd->add_option("--zero-based", o.zero_based, "svmlight input indices: auto, true or false")
      ->check(CLI::IsMember({"auto", "true", "false"}))
      ->capture_default_str();
  cmd->add_flag("--compressed", o.compressed, "Deflate .npz output (default: stored, mmap-able)");
  cmd->add_flag("--one-based", o.one_based, "Write svmlight indices from 1 (LIBLINEAR's convention)");
  return cmd;
}

namespace {

// An option for the other format is an error, not silently nothing: the
// user who asked for one-based or compressed output expects to get it.
void check_options_apply(const ConvertOptions& o, bool npz_output) {
  if (npz_output && o.one_based)
    throw UsageError("--one-based", "numbers svmlight indices; the output " + o.output +
                                        " is an .npz (svmlight is written to any other name)");
  if (!npz_output && o.compressed)
    throw UsageError("--compressed", "deflates .npz output; the output " + o.output +
                                         " is svmlight (its name does not end in .npz)");
  if (o.zero_based != "auto" && std::filesystem::path(o.input).extension() == ".npz")
    throw UsageError("--zero-based", "says how svmlight input counts its indices; the input " +
                                         o.input + " is an .npz, whose indices are 0-based");
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  const bool npz_output = std::filesystem::path(o.output).extension() == ".npz";
  check_options_apply(o, npz_output);
  check_output_file(o.output, "output");
  check_output_file(o.labels_out, "--labels-out");
  check_distinct_paths({{"output", o.output}, {"--labels-out", o.labels_out}},
                       {{"input", o.input}, {"--labels", o.labels}});
  check_one_reader_per_stream({{"input", o.input}, {"--labels", o.labels}});
  RawLabels labels;
  const CsrMatrix x = read_features(o.input, parse_zero_based(o.zero_based, "--zero-based"), &labels);
  if (!o.labels.empty()) labels = read_labels(o.labels);
  if (labels.size() != 0 && static_cast<Index>(labels.size()) != x.rows())
    throw FileError(input_name(o.labels.empty() ? o.input : o.labels),
                    "has " + std::to_string(labels.size()) + " labels for " +
                        std::to_string(x.rows()) + " rows");
  if (!o.labels_out.empty() && labels.size() == 0 && x.rows() > 0)
    throw UsageError("--labels-out", "there are no labels to write: an .npz holds none; pass --labels FILE");
  // Folders made for the outputs go again if the write fails.
  NewFolders new_folders({o.output, o.labels_out});
  create_parent_folder(o.output);
  // Both files to temporaries, renamed together (AtomicOutputs).
  AtomicOutputs outputs;
  if (npz_output) {
    outputs.write(o.output, [&](const std::string& temp) { write_npz_csr(temp, x, o.compressed); });
  } else {
    if (labels.size() == 0 && x.rows() > 0)
      throw UsageError("--labels", "svmlight output needs labels: pass --labels FILE");
    if (!labels.numeric && labels.size() > 0) {
      std::size_t row = 0;
      double value = 0;
      while (row + 1 < labels.size() && detail::parse_finite(labels.names[row], value)) ++row;
      throw FileError(input_name(o.labels.empty() ? o.input : o.labels),
                      labels.location(row) + ": label '" + labels.names[row] +
                          "' is not a number, which svmlight labels must be (numbers name the "
                          "classes: 0, 1, 2, ...)");
    }
    outputs.write(o.output,
                  [&](const std::string& temp) { write_svmlight(temp, x, labels.names, !o.one_based); });
  }
  if (!o.labels_out.empty()) {
    std::string text;
    for (const std::string& name : labels.names) text += name + "\n";
    create_parent_folder(o.labels_out);
    outputs.write(o.labels_out, [&](const std::string& temp) { write_file(temp, text); });
  }
  outputs.commit();
  new_folders.keep();
  return 0;
}

}  // namespace bagel::cli
