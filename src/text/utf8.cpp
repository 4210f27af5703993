#include "bagel/text/utf8.h"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

namespace bagel {

namespace {

constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
// is_utf8 checks pieces of at least this size.
constexpr std::size_t kMinPieceBytes = std::size_t{256} << 10;

// Length of the UTF-8 sequence starting with `lead`, 0 if no sequence does.
std::size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// The second byte's range is narrower than 80..BF after four leads: that is
// what rules out overlong forms (E0, F0), surrogates (ED) and code points
// above U+10FFFF (F4).
bool second_byte_fits(unsigned char lead, unsigned char second) {
  switch (lead) {
    case 0xE0: return second >= 0xA0 && second <= 0xBF;
    case 0xED: return second >= 0x80 && second <= 0x9F;
    case 0xF0: return second >= 0x90 && second <= 0xBF;
    case 0xF4: return second >= 0x80 && second <= 0x8F;
    default: return (second & 0xC0) == 0x80;
  }
}

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Length of the longest prefix of `text` (at most `n`, the length its lead
// announces) that a well-formed sequence could start with.
std::size_t viable_prefix(std::string_view text, std::size_t n) {
  const auto lead = static_cast<unsigned char>(text[0]);
  if (n == 0 || text.size() < 2 || !second_byte_fits(lead, static_cast<unsigned char>(text[1])))
    return 1;
  std::size_t k = 2;
  while (k < n && k < text.size() && is_continuation(text[k])) ++k;
  return k;
}

}  // namespace

std::size_t invalid_utf8_at(std::string_view text) {
  const char* data = text.data();
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    // ASCII runs are the common case: eight bytes per test.
    while (i + 8 <= size) {
      std::uint64_t word;
      std::memcpy(&word, data + i, 8);
      if (word & kHighBits) break;
      i += 8;
    }
    if (i >= size) break;
    const auto lead = static_cast<unsigned char>(data[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(lead);
    if (n == 0 || viable_prefix(text.substr(i), n) != n) return i;
    i += n;
  }
  return std::string_view::npos;
}

bool is_utf8(std::string_view text) {
  // Pieces begin where a sequence may (not on a continuation byte), so that
  // none cuts a well-formed sequence in two, and are many more than the
  // threads: a corpus's parts differ in how much of their text is not ASCII,
  // which is what takes the time.
  const std::size_t pieces = std::max<std::size_t>(
      1, std::min(static_cast<std::size_t>(omp_get_max_threads()) * 8, text.size() / kMinPieceBytes));
  std::vector<std::size_t> bounds = {0};
  for (std::size_t k = 1; k < pieces; ++k) {
    std::size_t at = std::max(bounds.back(), text.size() / pieces * k);
    for (int step = 0; step < 3 && at < text.size() && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80; ++step)
      ++at;
    bounds.push_back(at);
  }
  bounds.push_back(text.size());
  std::atomic<bool> valid = true;
#pragma omp parallel for schedule(dynamic, 1) if (pieces > 1)
  for (std::size_t k = 0; k < pieces; ++k)
    if (valid.load(std::memory_order_relaxed) &&
        invalid_utf8_at(text.substr(bounds[k], bounds[k + 1] - bounds[k])) != std::string_view::npos)
      valid.store(false, std::memory_order_relaxed);
  return valid.load();
}

std::size_t ill_formed_length(std::string_view text) {
  return viable_prefix(text, utf8_length(static_cast<unsigned char>(text[0])));
}

void append_repaired_utf8(std::string_view text, DecodeError mode, std::string& out) {
  while (true) {
    const std::size_t bad = invalid_utf8_at(text);
    if (bad == std::string_view::npos) break;
    out.append(text.substr(0, bad));
    if (mode == DecodeError::replace) out.append(kReplacement);
    text.remove_prefix(bad + ill_formed_length(text.substr(bad)));
  }
  out.append(text);
}

}  // namespace bagel
