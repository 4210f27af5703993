#include "cli_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <system_error>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"

namespace bagel::cli {

namespace fs = std::filesystem;

namespace {
constexpr const char* kEmptyPath = "is empty, expected a path";
}  // namespace

CLI::Validator given_path() {
  return CLI::Validator([](std::string& path) -> std::string { return path.empty() ? kEmptyPath : ""; },
                        "");
}

CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty()) return kEmptyPath;
        if (path == "-") path = "/dev/stdout";
        return {};
      },
      "FILE|-");
}

CLI::Validator input_path(bool folder_allowed) {
  return CLI::Validator(
      [folder_allowed](std::string& path) -> std::string {
        if (path.empty()) return kEmptyPath;
        if (path == "-") return {};
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (!fs::exists(st)) return "no such file '" + path + "'";
        if (fs::is_directory(st) && !folder_allowed)
          return "'" + path + "' is a folder, expected a file";
        return {};
      },
      folder_allowed ? "FILE|FOLDER|-" : "FILE|-");
}

CLI::Validator existing_folder() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path.empty()) return kEmptyPath;
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (!fs::exists(st)) return "no such folder '" + path + "'";
        if (!fs::is_directory(st)) return "'" + path + "' is a file, expected a folder";
        return {};
      },
      "FOLDER");
}

void check_output_file(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(option + " " + path, "is a folder, expected a file name");
  if (path.back() == '/') throw UsageError(option + " " + path, "ends in '/', expected a file name");
  try {
    check_can_create(path);
  } catch (const FileError& e) {
    throw FileError(path, option + ": " + e.message());
  }
}

namespace {

// Whether `a` and `b` are one path by two spellings (./x and x, a link to
// its folder), where one of them does not exist yet.
bool same_new_path(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b), eb);
  if (ea || eb) return fs::absolute(a).lexically_normal() == fs::absolute(b).lexically_normal();
  return ca == cb;
}

// Whether writing `output` would replace `other`. Existing files compare by
// device and inode (links, /dev/stdout, pipes alike: fs::equivalent refuses
// two non-regular files). Against an input, only a regular file is lost by
// writing it: a pipe or terminal both read and written loses nothing. Two
// outputs on one stream of any kind would interleave, so they clash.
bool same_file(const std::string& output, const std::string& other, bool other_is_input) {
  struct stat so {}, st {};
  const bool output_exists = ::stat(output.c_str(), &so) == 0;
  const bool other_exists = ::stat(other.c_str(), &st) == 0;
  if (output_exists && other_exists)
    return so.st_dev == st.st_dev && so.st_ino == st.st_ino && (!other_is_input || S_ISREG(so.st_mode));
  // Through a folder still to be made (x/../in.txt) a path stats as
  // missing, yet leads, once made, to the file it names.
  return same_new_path(output, other);
}

}  // namespace

void check_distinct_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  const auto given = [](const NamedPath& p) { return !p.path.empty() && p.path != "-"; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (!given(outputs[i])) continue;
    for (const NamedPath& in : inputs)
      if (given(in) && same_file(outputs[i].path, in.path, true))
        throw UsageError(outputs[i].option + " " + outputs[i].path,
                         "is the same file as " + in.option + "; writing it would destroy that input");
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (given(outputs[j]) && same_file(outputs[i].path, outputs[j].path, false))
        throw UsageError(outputs[j].option + " " + outputs[j].path,
                         "is the same file as " + outputs[i].option + "; each output needs a file of its own");
  }
}

void check_one_reader_per_stream(const std::vector<NamedPath>& inputs) {
  for (std::size_t j = 1; j < inputs.size(); ++j)
    for (std::size_t i = 0; i < j; ++i) {
      if (!same_stream(inputs[i].path, inputs[j].path)) continue;
      throw UsageError(inputs[j].option,
                       is_stdin(inputs[j].path)
                           ? "is standard input, and so is " + inputs[i].option +
                                 ": both cannot be read from stdin; give one of them as a file"
                           : "is the stream " + inputs[i].option + " reads (" + inputs[j].path +
                                 "): both cannot be read from one stream; give one of them as a file");
    }
}

bool is_standard_output(const std::string& path) {
  struct stat sp {}, so {};
  return !path.empty() && ::stat(path.c_str(), &sp) == 0 && ::fstat(STDOUT_FILENO, &so) == 0 &&
         sp.st_dev == so.st_dev && sp.st_ino == so.st_ino;
}

void check_output_folder(const std::string& path, const std::string& option) {
  if (path.empty()) return;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_directory(path, ec))
    throw UsageError(option + " " + path, "is a file, expected a folder");
  try {
    check_can_create(fs::path(path) / "");
  } catch (const FileError& e) {
    throw FileError(path, option + ": " + e.message());
  }
}

NewFolders::NewFolders(const std::vector<std::string>& paths) {
  std::error_code ec;
  for (const std::string& path : paths) {
    if (path.empty() || path == "-") continue;
    for (fs::path folder = fs::absolute(path, ec).lexically_normal().parent_path();
         !folder.empty() && folder != folder.parent_path() && !fs::exists(fs::symlink_status(folder, ec));
         folder = folder.parent_path())
      if (std::find(missing_.begin(), missing_.end(), folder) == missing_.end()) missing_.push_back(folder);
  }
  // Deepest first, across all the paths: a folder goes only once those in it have.
  std::stable_sort(missing_.begin(), missing_.end(), [](const fs::path& a, const fs::path& b) {
    return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
  });
  for (const fs::path& folder : missing_)
    registered_.push_back(std::make_unique<TempRegistration>(folder, TempRegistration::Kind::kEmptyFolder));
}

NewFolders::~NewFolders() {
  std::error_code ec;
  for (const fs::path& folder : missing_)
    if (fs::is_directory(fs::symlink_status(folder, ec)) && fs::is_empty(folder, ec)) fs::remove(folder, ec);
}

void create_parent_folder(const std::string& path) {
  const fs::path parent = fs::path(path).lexically_normal().parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) throw FileError(parent.string(), "cannot create the folder: " + ec.message());
}

}  // namespace bagel::cli
