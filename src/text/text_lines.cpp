#include "bagel/text/text_lines.h"

#include <algorithm>

#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/mapped_file.h"

namespace bagel {

namespace {

// A stream is taken in blocks of about this size (or what has arrived).
constexpr std::size_t kStreamBlockBytes = std::size_t{1} << 20;
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

}  // namespace

std::string_view decode_text(std::string_view text, DecodeError mode, std::string& scratch,
                             const std::string& source, std::int64_t first_line) {
  const std::size_t bad = invalid_utf8_at(text);
  if (bad == std::string_view::npos) return text;
  if (mode == DecodeError::strict) {
    const std::string_view before = text.substr(0, bad);
    const std::size_t line_start = before.rfind('\n') + 1;  // npos + 1 == 0
    const auto newlines = std::count(before.begin(), before.end(), '\n');
    throw TextSettingError(TextSettingError::Setting::decode_error, source,
                           "byte " + std::to_string(bad - line_start + 1) + " is not UTF-8 text",
                           "save the file as UTF-8 (or set decode_error to \"replace\" or \"ignore\")",
                           first_line + newlines);
  }
  scratch.clear();
  append_repaired_utf8(text, mode, scratch);
  return scratch;
}

TextLines::TextLines(const std::string& path, DecodeError decode_error, bool drop_bom,
                     InputStream* opened)
    : source_(input_name(path)), decode_error_(decode_error), drop_bom_(drop_bom) {
  if (opened != nullptr) {
    blocks_ = std::make_unique<LineBlocks>(*opened, kStreamBlockBytes);
  } else if (bagel::is_stream(path)) {
    stream_ = std::make_unique<InputStream>(path);
    blocks_ = std::make_unique<LineBlocks>(*stream_, kStreamBlockBytes);
  } else {
    file_ = std::make_shared<const MappedFile>(path);
    file_->populate();
  }
}

TextLines::~TextLines() = default;

std::string_view TextLines::whole_text() const {
  if (!file_) return {};
  const auto bytes = file_->bytes();
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return drop_bom_ && text.starts_with(kUtf8Bom) ? text.substr(kUtf8Bom.size()) : text;
}

std::string_view TextLines::next_block() {
  if (file_) {
    const bool first = !started_;
    started_ = true;
    return first ? whole_text() : std::string_view();
  }
  const auto span = blocks_->next();
  std::string_view block(span.data(), span.size());
  if (!started_ && drop_bom_ && block.starts_with(kUtf8Bom)) block.remove_prefix(kUtf8Bom.size());
  started_ = true;
  return block;
}

}  // namespace bagel
