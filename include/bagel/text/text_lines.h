// The lines of a text input (a regular file, "-", a pipe, a FIFO), decoded
// as UTF-8: what the line-based text formats (lines, fasttext, tsv, csv)
// read. A regular file is memory-mapped and read as one block; a stream
// comes in blocks of whole lines as it arrives (input_stream.h's
// LineBlocks), so it is never held whole beside the documents made of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "bagel/error.h"
#include "bagel/text/utf8.h"

namespace bagel {

// A file error that a setting of the text reader lifts or rules: bytes that
// are not UTF-8 (TextInput::decode_error), a fastText line without a label
// (TextInput::unlabeled), lines with and without labels in one file under
// unlabeled "keep" (mixed_labels), a tsv/csv quote that never closes
// (TextInput::quoting). Its message ends with the remedy or rule
// as a config names the setting ("set decode_error to ..."); a command that
// takes the setting as an option, or not at all, rewords it from problem()
// so that it names something that command accepts.
class TextSettingError : public FileError {
 public:
  enum class Setting { decode_error, unlabeled, mixed_labels, quoting };
  TextSettingError(Setting setting, const std::string& file, const std::string& problem,
                   const std::string& remedy, std::int64_t line)
      : FileError(file, problem + "; " + remedy, line), setting_(setting), problem_(problem) {}
  Setting setting() const { return setting_; }
  // The message up to its remedy ("byte 4 is not UTF-8 text").
  const std::string& problem() const { return problem_; }

 private:
  Setting setting_;
  std::string problem_;
};

class InputStream;
class LineBlocks;
class MappedFile;

// `text` as valid UTF-8: `text` itself when it is (the common case, no
// copy), else repaired into `scratch` (DecodeError::ignore or replace). Under
// strict, a TextSettingError naming `source`, the line (`first_line` plus the '\n's
// before the bad byte) and the bad byte's 1-based offset in that line.
std::string_view decode_text(std::string_view text, DecodeError mode, std::string& scratch,
                             const std::string& source, std::int64_t first_line);

// Calls take(line, number, newline) for each line of `text`: `line` without
// its '\n' (a '\r' before it is kept: csv keeps it inside quoted fields),
// valid UTF-8 (decoded into `scratch` when repaired), valid until take
// returns; `number` 1-based, counting on from `lines_before`; `newline`
// false only for a last line that lacks its '\n'. Returns the lines seen.
template <typename Take>
std::int64_t for_each_line(std::string_view text, std::int64_t lines_before, DecodeError mode,
                           const std::string& source, std::string& scratch, Take take) {
  std::int64_t number = lines_before;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const bool newline = end != std::string_view::npos;
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(newline ? end + 1 : text.size());
    ++number;
    take(decode_text(line, mode, scratch, source, number), number, newline);
  }
  return number - lines_before;
}

class TextLines {
 public:
  // `drop_bom`: a UTF-8 byte order mark starting the input is skipped.
  // `opened`: `path` already opened as a stream (its first bytes peeked to
  // tell its format), read from instead of opening `path` again: a pipe can
  // be read only once. Borrowed: it must outlive this reader.
  TextLines(const std::string& path, DecodeError decode_error, bool drop_bom,
            InputStream* opened = nullptr);
  ~TextLines();
  TextLines(const TextLines&) = delete;
  TextLines& operator=(const TextLines&) = delete;

  const std::string& source() const { return source_; }
  DecodeError decode_error() const { return decode_error_; }
  bool is_stream() const { return blocks_ != nullptr; }
  // A regular file's whole text (readers split it into chunks read in
  // parallel: line_chunks.h); empty for a stream.
  std::string_view whole_text() const;
  // The mapping whole_text() lies in, for views that outlive this reader;
  // null for a stream.
  std::shared_ptr<const MappedFile> mapped_file() const { return file_; }

  // for_each_line over the whole input, block by block.
  template <typename Take>
  void for_each(Take take) {
    std::int64_t lines = 0;
    for (std::string_view block = next_block(); !block.empty(); block = next_block())
      lines += for_each_line(block, lines, decode_error_, source_, scratch_, take);
  }

 private:
  std::string_view next_block();

  std::string source_;
  DecodeError decode_error_;
  bool drop_bom_;
  bool started_ = false;
  std::shared_ptr<const MappedFile> file_;  // a regular file: one block
  std::unique_ptr<InputStream> stream_;    // a stream this reader opened
  std::unique_ptr<LineBlocks> blocks_;
  std::string scratch_;
};

}  // namespace bagel
