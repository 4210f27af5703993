// Reading the lines of a text input in parallel. A regular file is cut into
// chunks of whole lines, one per core at most, each read into its own part
// by its own thread (OpenMP); a stream is read block by block into a single
// part as it arrives. Callers then join the parts in order: the result does
// not depend on the number of chunks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bagel/text/text_lines.h"

namespace bagel {

struct LineChunk {
  std::string_view text;          // whole lines: ends just after a '\n', or at the end
  std::int64_t lines_before = 0;  // lines of the input before it, for errors
  std::int64_t newlines = 0;      // the '\n's in it
};

// About equal chunks of `text`, at least a few MiB each (below that a
// thread costs more than it saves), at most one per usable core.
std::vector<LineChunk> line_chunks(std::string_view text);

// Calls read(k) for k in [0, count) in parallel. If some calls throw, the
// exception of the lowest k is rethrown: the first error in the input, as
// a serial read would report it, for errors that concern one line.
void run_chunks(std::size_t count, const std::function<void(std::size_t)>& read);

// The lines of `text` (decoded) fed to parts made by make(): one per chunk
// of a regular file, read in parallel, or one for a whole stream. A part
// has add(std::string_view line, std::int64_t number).
template <typename Make>
auto read_in_parts(TextLines& text, Make make) -> std::vector<decltype(make())> {
  std::vector<decltype(make())> parts;
  if (text.is_stream()) {
    parts.push_back(make());
    text.for_each([&](std::string_view line, std::int64_t number, bool) { parts[0].add(line, number); });
    return parts;
  }
  const std::vector<LineChunk> chunks = line_chunks(text.whole_text());
  for (std::size_t k = 0; k < chunks.size(); ++k) parts.push_back(make());
  run_chunks(chunks.size(), [&](std::size_t k) {
    std::string scratch;
    for_each_line(chunks[k].text, chunks[k].lines_before, text.decode_error(), text.source(),
                  scratch, [&](std::string_view line, std::int64_t number, bool) {
                    parts[k].add(line, number);
                  });
  });
  return parts;
}

}  // namespace bagel
