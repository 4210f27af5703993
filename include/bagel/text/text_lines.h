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

#include "bagel/text/utf8.h"

namespace bagel {

class InputStream;
class LineBlocks;
class MappedFile;

// `text` as valid UTF-8: `text` itself when it is (the common case, no
// copy), else repaired into `scratch` (DecodeError::ignore or replace). Under
// strict, a FileError naming `source`, the line (`first_line` plus the '\n's
// before the bad byte) and the bad byte's 1-based offset in that line.
std::string_view decode_text(std::string_view text, DecodeError mode, std::string& scratch,
                             const std::string& source, std::int64_t first_line);

class TextLines {
 public:
  // `drop_bom`: a UTF-8 byte order mark starting the input is skipped.
  TextLines(const std::string& path, DecodeError decode_error, bool drop_bom);
  ~TextLines();
  TextLines(const TextLines&) = delete;
  TextLines& operator=(const TextLines&) = delete;

  const std::string& source() const { return source_; }
  bool is_stream() const { return stream_ != nullptr; }

  // Calls take(line, number, newline) for each line: `line` without its
  // '\n' (a '\r' before it is kept: csv keeps it inside quoted fields), valid
  // UTF-8, valid until take returns; `number` 1-based; `newline` false only
  // for a last line that lacks its '\n'.
  template <typename Take>
  void for_each(Take take) {
    std::int64_t number = 0;
    for (std::string_view block = next_block(); !block.empty(); block = next_block()) {
      while (!block.empty()) {
        const std::size_t end = block.find('\n');
        const bool newline = end != std::string_view::npos;
        const std::string_view line = block.substr(0, end);
        block.remove_prefix(newline ? end + 1 : block.size());
        ++number;
        take(decode_text(line, decode_error_, scratch_, source_, number), number, newline);
      }
    }
  }

 private:
  std::string_view next_block();

  std::string source_;
  DecodeError decode_error_;
  bool drop_bom_;
  bool started_ = false;
  std::unique_ptr<MappedFile> file_;  // a regular file: one block
  std::unique_ptr<InputStream> stream_;
  std::unique_ptr<LineBlocks> blocks_;
  std::string scratch_;
};

}  // namespace bagel
