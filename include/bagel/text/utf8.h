// UTF-8 well-formedness, shared by every reader of text (labels, documents).
#pragma once

#include <cstddef>
#include <string_view>

namespace bagel {

// Offset of the first byte of `text` that is not well-formed UTF-8 (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8_at(std::string_view text);

}  // namespace bagel
