// UTF-8 well-formedness and repair, shared by every reader of text (labels,
// documents).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace bagel {

// What to do with bytes that are not UTF-8, as scikit-learn's decode_error
// (passed to Python's bytes.decode as `errors`).
enum class DecodeError {
  strict,   // an error naming the file, line and byte (the default)
  ignore,   // each ill-formed sequence is dropped
  replace,  // each ill-formed sequence becomes one U+FFFD
};

// Offset of the first byte of `text` that is not well-formed UTF-8 (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8_at(std::string_view text);

// Whether all of `text` is well-formed UTF-8 (invalid_utf8_at(text) ==
// npos), checked in pieces on the OpenMP threads.
bool is_utf8(std::string_view text);

// Length of the ill-formed sequence that starts `text` (text must start with
// one: invalid_utf8_at(text) == 0), as Python's UTF-8 decoder measures it:
// the longest prefix that could still begin a well-formed sequence, or 1
// when the first byte cannot begin one. This is Unicode's "maximal subpart"
// rule (U+FFFD substitution of maximal subparts, Unicode 6+, §3.9), so that
// E1 80 41 is one bad sequence and 'A', and ED A0 80 (a surrogate) is three.
std::size_t ill_formed_length(std::string_view text);

// Appends `text` to `out` with each ill-formed sequence dropped (ignore) or
// replaced by U+FFFD (replace): byte for byte what Python's
// bytes.decode('utf-8', mode) gives, encoded back as UTF-8. `mode` must not
// be strict (callers report that with their own file and line).
void append_repaired_utf8(std::string_view text, DecodeError mode, std::string& out);

}  // namespace bagel
