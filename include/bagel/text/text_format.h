// The names of the text layouts (text_corpus.h) in configs and on the
// command line, and "auto": telling the layout from the input itself.
#pragma once

#include <optional>
#include <string>

#include "bagel/text/text_corpus.h"

namespace bagel {

// "lines", "fasttext", "tsv", "csv", "folder"; "auto" gives nullopt. Anything else
// is a ConfigError naming `field`.
std::optional<TextFormat> parse_text_format(const std::string& name, const std::string& field);
std::string to_string(TextFormat format);

// "strict", "ignore", "replace" (scikit-learn's decode_error).
DecodeError parse_decode_error(const std::string& name, const std::string& field);
// TextInput's other named choices (text_corpus.h).
MultiLabel parse_multi_label(const std::string& name, const std::string& field);
Unlabeled parse_unlabeled(const std::string& name, const std::string& field);
Quoting parse_quoting(const std::string& name, const std::string& field);

// "auto": a folder is `folder`; with a labels file, `lines`; else the first
// line decides: fastText when it starts with "__label__", TSV when it has a
// tab; else a name ending in .csv is CSV. A stream cannot be looked at twice, so without labels it is taken
// for fastText. When nothing fits, `unlabeled` where the caller needs no
// labels (predict, vectorize: documents alone), else a FileError naming `path`.
// CSV is found by the name alone (a comma is as common in plain lines as in
// a table), so a detected `csv` always came from the name: commands say so
// (csv_by_name_note), and so do the CSV reader's errors (TextInput::format_detected).
TextFormat detect_text_format(const std::string& path, bool has_labels,
                              std::optional<TextFormat> unlabeled = std::nullopt);

// The note a command prints (unless quiet) when "auto" took `path` for a CSV
// table by its name: a file of plain lines named *.csv would otherwise be
// split at its commas without a word. `remedy` says how that command reads
// one document a line instead, in terms that work there ("--format lines
// reads each line whole as one document"; training also needs the labels).
std::string csv_by_name_note(const std::string& path, const std::string& remedy);

}  // namespace bagel
