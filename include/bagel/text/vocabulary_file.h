// The vocabulary file: the name of each feature column, as a model directory
// trained on raw text keeps it (vocabulary.txt) and as `bagel inspect
// --vocabulary` reads it.
//
// Format: UTF-8 text, one term per line, line i naming column i (0-based),
// each line ended by '\n' (a missing '\n' after the last term is accepted; a
// '\r' before the '\n' is dropped, so CRLF files read as LF files do). A term
// holding a line break or a backslash is written escaped: '\n' as `\n`, '\r'
// as `\r`, '\\' as `\\`. The empty term (a custom token_pattern such as
// `\w*` matches one) is the line `\e`, alone: an empty line is an error, since
// it cannot be told from a stray blank line. No other escape exists. So the
// file that `"\n".join(CountVectorizer().get_feature_names_out())` writes (its
// default tokens hold none of these) is a vocabulary file as it stands.
//
// Vocabulary::write and Vocabulary::read (vocabulary.h), the model
// directory's vocabulary.txt, are these functions.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

// Its name in a model directory.
inline constexpr const char* kVocabularyFileName = "vocabulary.txt";

// `term` as a line of the file: '\n', '\r' and '\\' escaped, "" as `\e`.
std::string escape_vocabulary_term(std::string_view term);

// The terms of the vocabulary file `path` ("-" and pipes too), unescaped.
// Throws FileError naming the file and line for: bytes that are not UTF-8,
// an empty line (an empty term cannot be told from a stray blank line), a
// backslash not followed by n, r or a backslash (or `\e` with more on its
// line), and a term seen on an earlier line (a vocabulary names each column
// once). A UTF-8 byte order mark at the start is skipped.
std::vector<std::string> read_vocabulary_file(const std::string& path);

// Writes `terms` in that format, atomically (atomic_file.h).
void write_vocabulary_file(const std::string& path, std::span<const std::string_view> terms);
void write_vocabulary_file(const std::string& path, const std::vector<std::string>& terms);

}  // namespace bagel
