// The fuzz targets of the raw text readers (text_corpus.h). Each reads its
// input as a regular file and again as a stream (a pipe), which take
// different paths through the readers (whole text in parallel chunks, block
// by block), and requires the same documents or the same error from both.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "bagel/error.h"
#include "bagel/text/text_corpus.h"
#include "bagel/text/utf8.h"
#include "harness.h"
#include "targets.h"

namespace bagel::fuzz {

namespace fs = std::filesystem;

namespace {

constexpr DecodeError kDecodeErrors[] = {DecodeError::strict, DecodeError::ignore,
                                         DecodeError::replace};

bool is_utf8(std::string_view text) { return invalid_utf8_at(text) == std::string_view::npos; }

// What a reader promises of every corpus it returns (text_corpus.h).
void check_corpus(const TextCorpus& corpus) {
  require(corpus.lines.size() == corpus.size(), "text corpus: a line per document");
  require(corpus.weights.empty() || corpus.weights.size() == corpus.size(),
          "text corpus: a weight per document or none");
  require(!corpus.labels || corpus.labels->size() == corpus.size(),
          "text corpus: a label per document");
  require(std::all_of(corpus.documents.begin(), corpus.documents.end(), is_utf8),
          "text corpus: a document that is not UTF-8");
  if (corpus.labels)
    require(std::all_of(corpus.labels->names.begin(), corpus.labels->names.end(), is_utf8),
            "text corpus: a label that is not UTF-8");
}

bool same_corpus(const TextCorpus& a, const TextCorpus& b) {
  if (a.labels.has_value() != b.labels.has_value()) return false;
  if (a.labels && !same_labels(*a.labels, *b.labels)) return false;
  return std::ranges::equal(a.documents, b.documents) && a.weights == b.weights &&
         a.lines == b.lines;
}

// One read's result: the corpus, or the error with the input's name replaced
// by INPUT, so that a file's and a pipe's errors compare.
struct Outcome {
  std::optional<TextCorpus> corpus;
  std::string error;
};

Outcome read_outcome(const TextInput& input) {
  Outcome out;
  try {
    out.corpus = read_text_corpus(input);
    check_corpus(*out.corpus);
  } catch (const Error& e) {
    out.error = e.what();
    for (std::size_t at; (at = out.error.find(input.path)) != std::string::npos;)
      out.error.replace(at, input.path.size(), "INPUT");
  }
  return out;
}

// `text` read by `input`'s reader as a file and as a stream: the same
// corpus or the same error, except that a stream with no document is an
// error where an empty file is not.
void read_as_file_and_stream(TextInput input, std::string_view text) {
  input.path = scratch().write("corpus.txt", text);
  const Outcome file = read_outcome(input);
  const auto pipe = PipeInput::holding(text);
  if (!pipe) return;
  input.path = pipe->path();
  const Outcome stream = read_outcome(input);
  if (file.corpus && file.corpus->size() == 0) {
    require(!stream.corpus, "text stream: accepted with no document");
    return;
  }
  require(file.error == stream.error, "text stream: another error than the file's");
  if (file.corpus) require(same_corpus(*file.corpus, *stream.corpus), "text stream: other rows");
}

// `input` without its first byte, which chose the options.
std::string_view text_after_options(Bytes input) {
  return {reinterpret_cast<const char*>(input.data()) + 1, input.size() - 1};
}

}  // namespace

void text_corpus(Bytes input) {
  const std::vector<std::string> parts = split_parts(input);
  TextInput in;
  in.path = scratch().write("corpus.txt", parts[0]);
  if (parts.size() > 1) in.labels_path = scratch().write("corpus.labels", parts[1]);
  static_cast<void>(read_outcome(in));
}

// Options byte: multi_label (3 choices), unlabeled (3), decode_error (3),
// then the label prefix "__label__" or "#", in mixed radix.
void fasttext(Bytes input) {
  if (input.empty()) return;
  unsigned bits = input[0];
  TextInput in;
  in.format = TextFormat::fasttext;
  constexpr MultiLabel kMulti[] = {MultiLabel::split, MultiLabel::first, MultiLabel::error};
  constexpr Unlabeled kUnlabeled[] = {Unlabeled::error, Unlabeled::skip, Unlabeled::keep};
  in.multi_label = kMulti[bits % 3], bits /= 3;
  in.unlabeled = kUnlabeled[bits % 3], bits /= 3;
  in.decode_error = kDecodeErrors[bits % 3], bits /= 3;
  if (bits % 2 == 1) in.label_prefix = "#";
  read_as_file_and_stream(in, text_after_options(input));
}

// Options byte, from the lowest bit: csv (else tsv), no quoting, a header
// row, the label column (2 bits: -1 for none, 0, 1, 2), the text column
// (2 bits, modulo 3), replace undecodable bytes (else strict).
void delimited(Bytes input) {
  if (input.empty()) return;
  const unsigned bits = input[0];
  TextInput in;
  in.format = (bits & 1) ? TextFormat::csv : TextFormat::tsv;
  in.quoting = (bits & 2) ? Quoting::none : Quoting::csv;
  in.tsv_header = (bits & 4) != 0;
  in.tsv_label_column = static_cast<int>((bits >> 3) & 3) - 1;
  in.tsv_text_column = static_cast<int>((bits >> 5) & 3) % 3;
  in.decode_error = (bits & 128) ? DecodeError::replace : DecodeError::strict;
  read_as_file_and_stream(in, text_after_options(input));
}

namespace {

// A path of at most 3 plain names (no "", "." or ".."), relative: what the
// folder target writes, so that no input escapes its folder.
bool is_plain_relative(std::string_view name) {
  if (name.empty() || name.size() > 200 || name.find('\0') != std::string_view::npos)
    return false;
  int depth = 0;
  for (std::size_t begin = 0;; ++depth) {
    const std::size_t end = std::min(name.find('/', begin), name.size());
    const std::string_view part = name.substr(begin, end - begin);
    if (part.empty() || part == "." || part == ".." || depth == 3) return false;
    if (end == name.size()) return true;
    begin = end + 1;
  }
}

// Writes `bytes` at `root`/`name`; a part that cannot be written (a file
// where its folder should be) is left out, as a user could not make it either.
void try_write(const fs::path& root, std::string_view name, std::string_view bytes) {
  if (!is_plain_relative(name)) return;
  const fs::path path = root / fs::path(std::string(name));
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec || fs::exists(path, ec)) return;
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

// The first part's first byte is decode_error (modulo 3).
void folder(Bytes input) {
  const std::vector<std::string> parts = split_parts(input);
  const fs::path root = scratch().fresh_folder("folder");
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::size_t newline = std::min(parts[i].find('\n'), parts[i].size());
    try_write(root, std::string_view(parts[i]).substr(0, newline),
              std::string_view(parts[i]).substr(std::min(newline + 1, parts[i].size())));
  }
  TextInput in;
  in.format = TextFormat::folder;
  in.path = root.string();
  in.decode_error = parts[0].empty() ? DecodeError::strict
                                     : kDecodeErrors[static_cast<unsigned char>(parts[0][0]) % 3];
  const Outcome out = read_outcome(in);
  if (!out.corpus) return;
  const TextCorpus& corpus = *out.corpus;
  require(corpus.files.size() == corpus.size() && corpus.labels.has_value(),
          "folder: a file and a label per document");
  for (const std::string& file : corpus.files)
    require(fs::path(file).parent_path().parent_path() == root, "folder: a file outside a class");
}

}  // namespace bagel::fuzz
