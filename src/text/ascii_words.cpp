#include "bagel/text/ascii_words.h"

#include <bit>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace bagel {

namespace detail {

std::uint32_t classify_ascii_block_portable(const char* in, bool lowercase, char* out) {
  std::uint32_t word = 0;
  for (int i = 0; i < 16; ++i) {
    const auto c = static_cast<unsigned char>(in[i]);
    if (c >= 0x80) return ~0u;
    const bool upper = c >= 'A' && c <= 'Z';
    const bool is_word = upper || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    out[i] = static_cast<char>(lowercase && upper ? c + 0x20 : c);
    word |= static_cast<std::uint32_t>(is_word) << i;
  }
  return word;
}

#ifdef __SSE2__
std::uint32_t classify_ascii_block(const char* in, bool lowercase, char* out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  if (_mm_movemask_epi8(v) != 0) return ~0u;
  // Every byte is below 0x80 here, so signed comparisons order them.
  const auto between = [&](char low, char high) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(low - 1))),
                         _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(high + 1))));
  };
  const __m128i upper = between('A', 'Z');
  const __m128i word = _mm_or_si128(_mm_or_si128(between('0', '9'), between('a', 'z')),
                                    _mm_or_si128(upper, _mm_cmpeq_epi8(v, _mm_set1_epi8('_'))));
  const __m128i result = lowercase ? _mm_add_epi8(v, _mm_and_si128(upper, _mm_set1_epi8(0x20))) : v;
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), result);
  return static_cast<std::uint32_t>(_mm_movemask_epi8(word));
}
#else
std::uint32_t classify_ascii_block(const char* in, bool lowercase, char* out) {
  return classify_ascii_block_portable(in, lowercase, out);
}
#endif

}  // namespace detail

bool ascii_words(std::string_view text, bool lowercase, char* lowered, std::vector<std::string_view>& words) {
  words.clear();
  const std::size_t size = text.size();
  std::size_t run_start = 0;
  std::uint64_t carry = 0;  // 1: the byte before this group of 64 is a word character
  for (std::size_t base = 0; base < size; base += 64) {
    // The group's word characters as bits; past the end the bits are 0.
    std::uint64_t mask = 0;
    for (std::size_t block = base; block < base + 64 && block < size; block += 16) {
      std::uint32_t bits;
      if (block + 16 <= size) {
        bits = detail::classify_ascii_block(text.data() + block, lowercase, lowered + block);
      } else {
        // The last partial block, read through a copy: the text may end at
        // the end of a mapped page.
        char tail[16] = {};
        std::memcpy(tail, text.data() + block, size - block);
        bits = detail::classify_ascii_block(tail, lowercase, lowered + block);
      }
      if (bits == ~0u) return false;
      mask |= static_cast<std::uint64_t>(bits) << (block - base);
    }
    // A run starts where a word character follows a non-word one and ends
    // (exclusive) where a non-word character follows a word one; the two
    // alternate.
    const std::uint64_t before = (mask << 1) | carry;
    const std::uint64_t starts = mask & ~before;
    std::uint64_t events = starts | (~mask & before);
    carry = mask >> 63;
    for (; events != 0; events &= events - 1) {
      const std::size_t at = base + static_cast<std::size_t>(std::countr_zero(events));
      if (starts & (events & -events)) {
        run_start = at;
      } else if (at - run_start >= 2) {
        words.emplace_back(lowered + run_start, at - run_start);
      }
    }
  }
  // A run reaching the last byte of a text whose size is a multiple of 64.
  if (carry != 0 && size - run_start >= 2) words.emplace_back(lowered + run_start, size - run_start);
  return true;
}

}  // namespace bagel
