// Terms and their columns: counting the terms of a corpus in parallel
// chunks, choosing the vocabulary as CountVectorizer does (min_df, max_df,
// max_features; columns in code point order), and vocabulary.txt.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bagel/csr.h"
#include "bagel/text/tokenizer.h"

namespace bagel {

// An insert-only set of terms, each with a dense id in order of first
// insertion; the terms live in one arena (no allocation per term). Open
// addressing with linear probing. A slot holds the hash, the term's first 8
// bytes and where the rest lies, so that finding a short term (most words)
// reads one slot and nothing else: the table of a large corpus is far larger
// than the caches, and each read of it is a likely miss.
class TermTable {
 public:
  TermTable() : TermTable(0) {}
  // Room for `expected_terms` before the table first grows.
  explicit TermTable(std::size_t expected_terms);
  // The id of `term`, inserting it when new.
  std::int32_t intern(std::string_view term);
  // The id of `term`, or -1.
  std::int32_t find(std::string_view term) const;
  // Appends `terms`, which must be distinct and none of them in the table,
  // with the next ids in their order; on `threads` threads (the table
  // must not be read meanwhile).
  void append_distinct(std::span<const std::string_view> terms, int threads);
  std::string_view term(std::int32_t id) const {
    return {arena_.data() + ends_[id], ends_[id + 1] - ends_[id]};
  }
  std::int32_t size() const { return static_cast<std::int32_t>(ends_.size() - 1); }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint64_t head = 0;    // the term's first 8 bytes, zero-padded
    std::uint64_t begin = 0;   // the term is arena_[begin, begin + length)
    std::uint32_t length = 0;  // (terms of 4 GiB or more are compared through ends_)
    std::uint32_t id1 = 0;     // id + 1; 0: empty
  };
  std::size_t slot_of(std::string_view term, std::uint64_t hash, std::uint64_t head) const;
  void grow();
  // Puts `slot` into the first empty slot from its hash on, claiming it
  // atomically, so that threads can place distinct terms at once.
  static void place_concurrently(std::vector<Slot>& slots, const Slot& slot);

  std::vector<Slot> slots_;
  std::vector<std::size_t> ends_;    // term i is arena_[ends_[i], ends_[i + 1])
  std::string arena_;
};

// How many documents a term may be in: scikit-learn's int (a count) or
// float (a fraction of the documents) min_df / max_df.
struct DocumentLimit {
  bool fraction = false;
  double value = 1;
  double documents(std::int64_t n_documents) const {
    return fraction ? value * static_cast<double>(n_documents) : value;
  }
};

struct VocabularyLimits {
  DocumentLimit min_df{false, 1};
  DocumentLimit max_df{true, 1.0};
  std::optional<std::int64_t> max_features;
  bool binary = false;  // counts become 1 before max_features ranks terms
};

// One entry per (document, term) in a CountVectorizer row's order, with
// its count (a double: the matrix's values start as these).
struct TermEntries {
  std::vector<std::int64_t> indptr;  // rows + 1
  std::vector<std::int32_t> columns;
  std::vector<double> values;
};

// A fitted vocabulary: terms by column, and a table to find a term's column.
class Vocabulary {
 public:
  Vocabulary() = default;
  explicit Vocabulary(const std::vector<std::string>& terms_by_column);
  // The terms of `table` that have a column: column_of[id] is term id's
  // column, or -1; the columns used are 0, 1, ... each once (empty: the ids
  // are the columns). The table is kept as it is (a fitted vocabulary is not
  // hashed a second time).
  Vocabulary(TermTable table, std::vector<std::int32_t> column_of);
  std::int32_t size() const { return id_of_.empty() ? table_.size() : static_cast<std::int32_t>(id_of_.size()); }
  std::string_view term(std::int32_t column) const { return table_.term(id_of_.empty() ? column : id_of_[column]); }
  std::int32_t column(std::string_view term) const {
    const std::int32_t id = table_.find(term);
    return id < 0 || column_of_.empty() ? id : column_of_[id];
  }

  // The vocabulary file (vocabulary_file.h: line i holds column i's term,
  // escaped), written and read by that header's functions.
  void write(const std::string& path) const;
  static Vocabulary read(const std::string& path);

 private:
  TermTable table_;
  std::vector<std::int32_t> column_of_;  // by table id; empty when ids are the columns
  std::vector<std::int32_t> id_of_;      // by column; empty when ids are the columns
};

// CountVectorizer.fit_transform's counting and vocabulary: documents split
// into chunks counted in parallel, merged in document order (so a term's
// first-seen id is the one a sequential pass gives), then pruned and sorted
// by code point. Rows list their terms as scikit-learn's do (ascending
// first-seen id, see vectorizer.cpp). Throws ConfigError(field_prefix...) for
// limits no term passes, with scikit-learn's messages.
struct FittedCounts {
  Vocabulary vocabulary;
  TermEntries entries;                  // columns of the fitted vocabulary
  std::vector<std::int64_t> document_frequency;  // by column
};
FittedCounts fit_counts(const Analyzer& analyzer, std::span<const std::string_view> documents,
                        const VocabularyLimits& limits, int threads,
                        const std::string& field_prefix);

// CountVectorizer.transform: terms not in the vocabulary are ignored; rows
// in ascending column order (X.sort_indices()).
TermEntries count_known_terms(const Analyzer& analyzer, const Vocabulary& vocabulary,
                              std::span<const std::string_view> documents, int threads);

// Fewer documents than this are one chunk, read on the calling thread
// whatever the thread count.
inline constexpr std::size_t kParallelDocuments = 1024;

// How the documents are split for `threads` threads: the bounds of
// contiguous chunks (several per thread, for balance; one when single
// threaded or fewer than kParallelDocuments), chunk c being
// [bounds[c], bounds[c + 1]).
std::vector<std::size_t> document_chunks(std::size_t documents, int threads);

}  // namespace bagel
