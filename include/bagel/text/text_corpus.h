// Raw text in: documents (and, where the format carries them, labels) read
// from the layouts users keep text in. Everything downstream (the
// vectorizer, training, predict) sees only a TextCorpus.
//
// Formats:
//   lines     one document per line; labels, if any, in a separate file
//             (labels.h's read_labels), one per line.
//   fasttext  fastText's supervised format: each line starts with one or more
//             `__label__NAME` words, then the document.
//   tsv       tab-separated, one row per line; one column holds the label,
//             one the document.
//   folder    scikit-learn's load_files layout: FOLDER/CLASS/doc.txt, one
//             document per file, the class being the sub-folder's name.
// A line is what ends at '\n'; a '\r' before it is dropped (CRLF files read
// as LF files do). A last line without '\n' is a document; the '\n' ending
// the file does not start another one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bagel/labels.h"

namespace bagel {

enum class TextFormat { lines, fasttext, tsv, folder };

// What to do with bytes that are not UTF-8, as scikit-learn's decode_error.
enum class DecodeError {
  strict,   // an error naming the file and line (the default)
  ignore,   // the bad bytes are dropped
  replace,  // each bad sequence becomes U+FFFD, as Python's decoder does
};

struct TextInput {
  std::string path;                 // a file, "-" or a pipe; a folder for `folder`
  TextFormat format = TextFormat::lines;
  std::string labels_path;          // `lines` only; empty: no labels
  int tsv_label_column = 0;         // `tsv`: 0-based columns
  int tsv_text_column = 1;
  bool tsv_header = false;          // `tsv`: the first line names the columns
  DecodeError decode_error = DecodeError::strict;
};

struct TextCorpus {
  std::string source;                      // input_name(path), for errors
  std::vector<std::string> documents;      // valid UTF-8 after decoding
  std::optional<RawLabels> labels;         // one per document, when the input has them
  // Where each document starts (1-based line; for `folder`, 0 and the file
  // name in `files`), so later stages can name it in errors.
  std::vector<std::int64_t> lines;
  std::vector<std::string> files;
  std::size_t size() const { return documents.size(); }
};

// Reads `input`. Errors (FileError) name the file and line: bytes that are
// not UTF-8 (under `strict`), a labels file with a different number of rows,
// a fastText line without a label, a TSV row with too few columns.
TextCorpus read_text_corpus(const TextInput& input);

}  // namespace bagel
