// The default token pattern on ASCII text: lowercasing and finding the
// words in one pass, 16 bytes at a time, rather than lowering the whole
// document into a copy and then decoding it code point by code point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace bagel {

// Bytes `lowered` must have room for: the text's size rounded up to 16.
constexpr std::size_t ascii_words_room(std::size_t size) { return (size + 15) / 16 * 16; }

// The words of `text` as `(?u)\b\w\w+\b` finds them (maximal runs of two or
// more of [0-9A-Za-z_]) after str.lower() when `lowercase`: the text,
// lowered if asked, is written to `lowered` and `words` are views into it.
// Returns false, `words` then unspecified, when the text holds a byte
// >= 0x80: such text needs Unicode's rules.
bool ascii_words(std::string_view text, bool lowercase, char* lowered, std::vector<std::string_view>& words);

namespace detail {
// One 16-byte block of the scan: bit i set when byte i is a word character,
// the block written to `out` (lowered when asked); ~0u, `out` then
// unspecified, when a byte is >= 0x80. classify_ascii_block is what
// ascii_words uses: SSE2 where the compiler targets it, else the portable
// version, which the tests hold to the same results on every machine.
std::uint32_t classify_ascii_block(const char* in, bool lowercase, char* out);
std::uint32_t classify_ascii_block_portable(const char* in, bool lowercase, char* out);
}  // namespace detail

}  // namespace bagel
