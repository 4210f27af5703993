// The folder format: scikit-learn's load_files layout, FOLDER/CLASS/FILE.
// As load_files (sklearn/datasets/_base.py) reads it: the classes are the
// sub-folders of FOLDER (links followed), hidden ones included, sorted by
// name; files directly in FOLDER are ignored; every entry of a class folder,
// hidden files included, sorted by name, is one document, read whole and
// decoded as Python's bytes.decode('utf-8', decode_error) decodes it. Names
// sort by their bytes, which for UTF-8 names is Python's code point order.
// bagel keeps that order (load_files shuffles unless shuffle=False). An
// entry of a class folder that is itself a folder is an error, as it is for
// load_files (IsADirectoryError); so is a class folder whose name is not
// UTF-8, since class names go into model.json. Unlike load_files, a class
// folder with no file gives no class (bagel's classes are the labels seen).
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "bagel/error.h"
#include "bagel/mapped_file.h"
#include "bagel/text/text_lines.h"
#include "text/corpus_readers.h"

namespace bagel::detail {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kLayout =
    "the folder format expects FOLDER/CLASS/FILE, one sub-folder per class holding one file "
    "per document (scikit-learn's load_files layout)";

// Names in `folder`, sorted; only the sub-folders when `folders_only`.
std::vector<std::string> sorted_entries(const fs::path& folder, bool folders_only) {
  std::vector<std::string> names;
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    if (folders_only && !fs::is_directory(it->path())) continue;  // follows links, as isdir
    names.push_back(it->path().filename().string());
  }
  if (error) throw FileError(folder.string(), "cannot list the folder: " + error.message());
  std::sort(names.begin(), names.end());  // std::string compares as unsigned bytes
  return names;
}

}  // namespace

TextCorpus read_folder(const TextInput& input) {
  const fs::path root(input.path);
  if (!fs::is_directory(root)) throw FileError(input.path, "is not a folder; " + std::string(kLayout));
  const std::vector<std::string> classes = sorted_entries(root, true);
  if (classes.empty()) throw FileError(input.path, "has no sub-folder; " + std::string(kLayout));
  TextCorpus corpus;
  corpus.source = input.path;
  std::vector<std::string> names;
  std::string scratch;
  for (const std::string& name : classes) {
    const fs::path folder = root / name;
    if (invalid_utf8_at(name) != std::string_view::npos)
      throw FileError(folder.string(), "the folder's name is not UTF-8; class names must be text");
    for (const std::string& file : sorted_entries(folder, false)) {
      const std::string path = (folder / file).string();
      if (fs::is_directory(path))
        throw FileError(path, "is a folder inside a class folder; " + std::string(kLayout));
      const MappedFile bytes(path);
      const std::string_view raw(reinterpret_cast<const char*>(bytes.bytes().data()),
                                 bytes.bytes().size());
      corpus.documents.push_back(decode_text(raw, input.decode_error, scratch, path, 1));
      corpus.files.push_back(path);
      corpus.lines.push_back(0);
      names.push_back(name);
    }
  }
  corpus.labels = make_labels(std::move(names), corpus.source);
  return corpus;
}

}  // namespace bagel::detail
