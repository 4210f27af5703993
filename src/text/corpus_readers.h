// The reader of each text format behind read_text_corpus (text_corpus.h),
// and what they share.
#pragma once

#include <string>
#include <vector>

#include "bagel/text/text_corpus.h"

namespace bagel {

class TextLines;

namespace detail {

// An empty stream is an error; an empty regular file gives zero documents.
void check_not_empty_stream(const TextCorpus& corpus, const TextLines& text);

// Labels read with the documents, one per row: canonicalised (make_labels),
// and naming the rows' lines in later errors.
void attach_labels(TextCorpus& corpus, std::vector<std::string> names);

// Moves the rows of `part` (documents, lines, weights) after those of
// `into`: parts read in parallel are joined in input order.
void append_rows(TextCorpus& into, TextCorpus&& part);

// `line` without the '\r' of a CRLF line end.
std::string_view without_cr(std::string_view line);

// "'s'", for messages.
std::string quoted(std::string_view s);

TextCorpus read_fasttext(const TextInput& input);
TextCorpus read_delimited(const TextInput& input, char delimiter);
TextCorpus read_folder(const TextInput& input);

}  // namespace detail
}  // namespace bagel
