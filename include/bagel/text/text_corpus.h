// Raw text in: documents (and, where the format carries them, labels) read
// from the layouts users keep text in. Everything downstream (the
// vectorizer, training, predict) sees only a TextCorpus.
//
// Formats:
//   lines     one document per line; labels, if any, in a separate file
//             (labels.h's read_labels), one per line.
//                 the cat sat on the mat        (labels.txt: pets)
//   fasttext  fastText's supervised format (fasttext_line.h):
//                 __label__pets __label__home the cat sat on the mat
//   tsv, csv  one row per record, fields split at tabs (tsv) or commas (csv);
//             one column holds the label, one the document (delimited.h):
//                 pets<TAB>the cat sat on the mat
//   folder    scikit-learn's load_files layout: FOLDER/CLASS/FILE, one
//             document per file, the class being the sub-folder's name
//             (src/text/folder_corpus.cpp states load_files' rules).
// A line is what ends at '\n'; a '\r' before it is dropped (CRLF files read
// as LF files do; a quoted tsv/csv field keeps its line breaks as written).
// A last line without '\n' is a document; the '\n' ending the file does not
// start another one. Line numbers count '\n's, also in tsv/csv, whose quoted
// fields may hold several lines.
//
// Text is UTF-8. Bytes that are not are handled as `decode_error` says, with
// Python's decoder as the reference (utf8.h). A UTF-8 byte order mark
// starting a `lines` file (or a `folder` file) is kept, as U+FEFF at the
// start of its first document, as Python's 'utf-8' codec keeps it
// (scikit-learn's load_files decodes with it); U+FEFF is not a word character, so it changes
// no token. In `fasttext`, `tsv` and `csv` the mark is dropped, as Python's
// 'utf-8-sig' and pandas drop it, because glued to the first word it would
// hide the first label or rename the first column.
//
// Inputs may be "-", pipes or FIFOs (input_stream.h) for every format but
// `folder`; they are read block by block as they arrive, never held whole
// beside the documents. A regular file in the `lines` or `fasttext` format
// is read in parallel chunks of whole lines (line_chunks.h), with the same
// result and the same first error as one piece; tsv and csv are read in one
// piece, since a quoted field may span lines. A stream that yields no document is an error (an
// empty pipe usually means the program feeding it failed); an empty regular
// file gives zero documents, and callers say what they expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bagel/labels.h"
#include "bagel/text/documents.h"
#include "bagel/text/utf8.h"

namespace bagel {

class InputStream;

enum class TextFormat { lines, fasttext, tsv, csv, folder };

// fastText lines with more than one distinct label. bagel trains one class
// per row (softmax); fastText's softmax picks one of the line's labels at
// random each time it sees the line, so each label is the target 1/L of the
// time (L: the line's label words).
enum class MultiLabel {
  // One row per distinct label, each weighted by its share of the line's
  // label words (1/L each when they differ; TextCorpus::weights): the
  // gradient fastText follows in expectation, made deterministic, and each
  // line still weighs 1 in all. The default, because fastText's own
  // multi-label data (its tutorial's cooking.stackexchange.txt) trains as
  // fastText trains it instead of failing.
  split,
  first,  // the line's first label word only; the others are dropped
  error,  // a line with two distinct labels is an error naming it
};

// fastText lines without a label word.
enum class Unlabeled {
  error,  // an error naming the line (the default; see fasttext_line.h)
  skip,   // the line is dropped, as fastText's training drops it
  // Unlabeled lines are documents. If no line has a label the corpus has no
  // labels (a file to predict); lines with and without labels in one file
  // are an error naming the first line that breaks the pattern.
  keep,
};

// How tsv/csv fields may be quoted.
enum class Quoting {
  // Python's csv module with its default dialect but the format's delimiter
  // (csv.reader(f, delimiter='\t') on a file opened with newline=''), which
  // is also what pandas.read_csv reads: a field that starts with '"' is
  // quoted, may hold delimiters and line breaks, and "" inside it is one '"';
  // after the closing quote, further characters are appended to the field
  // (Python's non-strict mode). A '\r' not followed by '\n' also ends a row.
  // Unlike Python, no field size limit (Python's is 131072 characters).
  csv,
  // No quoting: every delimiter splits and every line is a row (a '"' is
  // text), as `cut` and IANA's text/tab-separated-values read a file.
  none,
};

struct TextInput {
  std::string path;                 // a file, "-" or a pipe; a folder for `folder`
  // `path` already opened as a stream (TextLines), or null: it is opened here.
  InputStream* stream = nullptr;
  TextFormat format = TextFormat::lines;
  std::string labels_path;          // `lines` only; empty: no labels
  // `fasttext`: a word (a run of bytes between ' ', '\t', '\v', '\f', '\r',
  // '\0' and line ends) that starts with label_prefix is a label word; the
  // label is the rest of the word.
  std::string label_prefix = "__label__";
  MultiLabel multi_label = MultiLabel::split;
  Unlabeled unlabeled = Unlabeled::error;
  // `tsv`/`csv`: 0-based columns of the label and the document; a label
  // column of -1 means the rows have no label. Other columns are ignored.
  int tsv_label_column = 0;
  int tsv_text_column = 1;
  bool tsv_header = false;          // the first row names the columns (and is no document)
  // With tsv_header: the columns by name, used instead of the indices when
  // not empty. A name the header lacks, or has twice, is an error.
  std::string tsv_label_name;
  std::string tsv_text_name;
  Quoting quoting = Quoting::csv;
  DecodeError decode_error = DecodeError::strict;
  // `format` was detected, not named (a tab in line 1 made it tsv, a .csv
  // name csv): a row short of columns, an empty label or an open quote then
  // says why the file was read as a table.
  bool format_detected = false;
  // The config section these settings came from ("train", "valid"), so that
  // an error names the key to change there (valid.quoting, valid.header);
  // empty: the reader's own names (quoting, tsv_header).
  std::string config_section;
};

// How an error names the setting `key` of `input` (a TextInput field name:
// "quoting", "tsv_header"): as the config section's key ("valid.header")
// when the input came from one, else as it is.
std::string setting_name(const TextInput& input, std::string_view key);

struct TextCorpus {
  std::string source;                      // input_name(path), for errors
  Documents documents;                     // valid UTF-8 after decoding
  std::optional<RawLabels> labels;         // one per document, when the input has them
  // Per-row sample weights; empty when every row weighs 1. Only a fastText
  // line split into one row per label (MultiLabel::split) weighs less.
  std::vector<float> weights;
  // Where each document starts (1-based line; for `folder`, 0 and the file
  // in `files`), so later stages can name it in errors. The rows a fastText
  // line is split into share its line.
  std::vector<std::int64_t> lines;
  std::vector<std::string> files;
  std::size_t size() const { return documents.size(); }
  // Whether row i repeats row i - 1's document: a row after the first of a
  // fastText line split into one row per label (they share its line and
  // weigh less than 1; other rows, of any format, have lines of their own).
  bool repeats_previous(std::size_t i) const {
    return !weights.empty() && i > 0 && i < lines.size() && lines[i] > 0 && lines[i] == lines[i - 1];
  }
};

// Reads `input`. Errors (FileError) name the file and line: bytes that are
// not UTF-8 (under `strict`, with the byte's 1-based offset in its line), a
// labels file with a different number of rows, a fastText line without a
// label, a TSV row with too few columns. Options that do not fit together
// (a column given twice, an empty label prefix) are ConfigErrors naming the
// TextInput field.
TextCorpus read_text_corpus(const TextInput& input);

}  // namespace bagel
