#include "bagel/text/line_chunks.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "bagel/cores.h"

namespace bagel {

namespace {

constexpr std::size_t kMinChunkBytes = std::size_t{4} << 20;

}  // namespace

std::vector<LineChunk> line_chunks(std::string_view text) {
  const std::size_t count =
      std::max<std::size_t>(1, std::min<std::size_t>(static_cast<std::size_t>(usable_cores()),
                                                      text.size() / kMinChunkBytes));
  std::vector<LineChunk> chunks;
  std::size_t begin = 0;
  for (std::size_t k = 1; k <= count && begin < text.size(); ++k) {
    std::size_t stop = text.size();
    const std::size_t target = std::max(begin, text.size() / count * k);
    if (k < count && target < text.size()) {
      const void* newline = std::memchr(text.data() + target, '\n', text.size() - target);
      if (newline != nullptr) stop = static_cast<std::size_t>(static_cast<const char*>(newline) - text.data()) + 1;
    }
    chunks.push_back({text.substr(begin, stop - begin), 0, 0});
    begin = stop;
  }
#pragma omp parallel for schedule(static) if (chunks.size() > 1)
  for (std::size_t k = 0; k < chunks.size(); ++k)
    chunks[k].newlines = std::count(chunks[k].text.begin(), chunks[k].text.end(), '\n');
  for (std::size_t k = 1; k < chunks.size(); ++k)
    chunks[k].lines_before = chunks[k - 1].lines_before + chunks[k - 1].newlines;
  return chunks;
}

void run_chunks(std::size_t count, const std::function<void(std::size_t)>& read) {
  std::vector<std::exception_ptr> errors(count);
#pragma omp parallel for schedule(dynamic, 1) if (count > 1)
  for (std::size_t k = 0; k < count; ++k) {
    try {
      read(k);
    } catch (...) {  // no exception may leave the region (parallel_errors.h)
      errors[k] = std::current_exception();
    }
  }
  for (const std::exception_ptr& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace bagel
