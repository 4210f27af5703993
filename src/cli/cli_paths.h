// Paths on the command line: inputs that may be "-" (standard input) or a
// pipe, and output files whose folder is created when missing, the same for
// every command (train -o has always created its folder).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bagel/temp_registry.h"

namespace bagel::cli {

// Refuses an empty value ("-o ''"), which would otherwise read as the option
// not given (a config's output, stdout, the default file): a usage error,
// exit 2, "--output: is empty, expected a path". Every path option has it,
// before its other checks; input_path() and existing_folder() include it.
CLI::Validator given_path();

// An output file: given_path(), and "-" for standard output, as inputs take
// "-" for standard input. Used with ->transform(): "-" becomes /dev/stdout,
// which every output already writes as the shell's descriptor 1 (a file
// named "-" would be a trap). Not for folders (train -o, --vectorizer-out).
CLI::Validator output_path();

// Accepts "-" and any existing path that is not a folder (a FIFO, /dev/stdin
// and /dev/fd/N exist as paths); CLI11's ExistingFile refuses "-".
// An existing file or "-"; with folder_allowed, a folder too (text in folders).
CLI::Validator input_path(bool folder_allowed = false);
// An input folder that must exist (a model, a fitted vectorizer): a usage
// error, exit 2, as a missing input file is.
CLI::Validator existing_folder();

// Throws FileError naming `path` and `option` ("--metrics") when an output
// file could not be written there: it is a folder, or its folder cannot be
// created or written (atomic_file.h's check_can_create). Commands call it
// for every output before reading any input.
void check_output_file(const std::string& path, const std::string& option);
// The same for an output folder (created when missing): an error where it
// is a file, or where it cannot be created or written.
void check_output_folder(const std::string& path, const std::string& option);

// A path given for an option ("--labels-out", path).
struct NamedPath {
  std::string option;
  std::string path;
};

// Throws UsageError when an output is the same file as an input or as
// another output (`predict -i x.npz -o x.npz`, `-o MODEL/model.json`,
// `generate x.npz --labels-out x.npz`): writing it would destroy the input,
// or one output would replace the other after the work. Empty paths and
// "-" are skipped; existing files are compared by device and inode (links,
// /dev/stdout and pipes included). An output on a pipe or device that an
// input also reads (`-i /dev/stdin -o /dev/stdout` on one terminal)
// destroys nothing: only a regular file input is refused.
void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// Throws UsageError, naming the later option, when two inputs are one
// stream (same_stream, input_stream.h): `-i - --labels -` would give the
// labels reader whatever the text reader left, or nothing.
void check_one_reader_per_stream(const std::vector<NamedPath>& inputs);

// Whether `path` is the file standard output is open on (/dev/stdout, the
// terminal's device, the file `> out` made): what a command prints there
// would be mixed into that output.
bool is_standard_output(const std::string& path);

// Creates the folder that will hold the file `path`, when it is missing.
// Throws FileError naming the folder if it cannot be created.
void create_parent_folder(const std::string& path);

// The folders on the way to `path` (a file or a model folder) that do not
// exist yet, noted before a command creates any: unless keep() is called,
// the destructor removes those still empty, deepest first, so that a
// command that fails leaves no folder of its own making behind.
class NewFolders {
 public:
  explicit NewFolders(const std::string& path) : NewFolders(std::vector<std::string>{path}) {}
  // The folders on the way to each of `paths` (empty ones are skipped).
  explicit NewFolders(const std::vector<std::string>& paths);
  ~NewFolders();
  NewFolders(const NewFolders&) = delete;
  NewFolders& operator=(const NewFolders&) = delete;
  void keep() {
    missing_.clear();
    registered_.clear();
  }

 private:
  std::vector<std::filesystem::path> missing_;  // deepest first
  // The same, for SIGINT/SIGTERM, which end the run without the destructor.
  std::vector<std::unique_ptr<TempRegistration>> registered_;
};

}  // namespace bagel::cli
