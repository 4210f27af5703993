#include "bagel/text/vocabulary.h"

#include <omp.h>
#include <parallel/algorithm>

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>

#include "bagel/error.h"
#include "bagel/parallel_errors.h"
#include "bagel/text/numpy_math.h"
#include "bagel/text/vocabulary_file.h"

namespace bagel {

namespace {

// A fast 64-bit hash of short strings: 8 bytes a step (a multiply and a
// rotation), then MurmurHash3's finalizer, so that the low bits the table
// masks with depend on every byte.
std::uint64_t hash_term(std::string_view term) {
  constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = term.size() * kMultiplier;
  const char* p = term.data();
  std::size_t left = term.size();
  for (; left >= 8; left -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    h = (std::rotl(h, 23) ^ word) * kMultiplier;
  }
  if (left > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, p, left);
    h = (std::rotl(h, 23) ^ word) * kMultiplier;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h;
}

// Runs body(chunk) for chunk in [0, chunks) on `threads` threads; the first
// exception is rethrown after the region.
template <class Body>
void for_each_chunk(std::size_t chunks, int threads, Body body) {
  RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t c = 0; c < chunks; ++c) errors.run([&] { body(c); });
  errors.rethrow();
}

// Typical text: a (document, term) entry every 8 bytes or more, a new term
// every 64 bytes or more in a chunk of a few MB.
constexpr std::size_t kBytesPerEntry = 8;
constexpr std::size_t kBytesPerNewTerm = 64;

// The terms of a run of documents, counted against a local table: each row's
// entries in the order its terms first occur in the document (a dict's
// insertion order, as CountVectorizer._count_vocab builds it).
struct ChunkCounts {
  TermTable table;
  std::vector<std::int64_t> row_ends;
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> counts;
};

// By term id: the last row that holds the term, and where its entry is.
struct Seen {
  std::int64_t row = -1;
  std::int64_t at = 0;
};

// Adds one document's terms to `out`: `lookup` gives a term's id (or -1 to
// skip it). No allocation once the vectors have grown.
template <class Lookup>
void count_document(const Analyzer& analyzer, std::string_view document, Analyzer::Scratch& scratch,
                    Lookup lookup, std::int64_t row, std::vector<Seen>& seen, std::vector<std::int32_t>& ids,
                    std::vector<std::int32_t>& counts) {
  analyzer.analyze(document, scratch, [&](std::string_view term) {
    const std::int32_t id = lookup(term);
    if (id < 0) return;
    if (static_cast<std::size_t>(id) >= seen.size()) seen.resize(std::max(seen.size() * 2, static_cast<std::size_t>(id) + 1));
    Seen& s = seen[static_cast<std::size_t>(id)];
    if (s.row != row) {
      s = {row, static_cast<std::int64_t>(ids.size())};
      ids.push_back(id);
      counts.push_back(1);
    } else {
      ++counts[s.at];
    }
  });
}

ChunkCounts count_chunk(const Analyzer& analyzer, std::span<const std::string_view> documents) {
  std::size_t bytes = 0;
  for (const std::string_view d : documents) bytes += d.size();
  // Sized from the text so that the arrays seldom grow: growing copies them
  // and touches fresh pages each time. A reservation larger than what is
  // used costs no memory (the pages untouched are never mapped).
  ChunkCounts chunk{TermTable(bytes / kBytesPerNewTerm), {}, {}, {}};
  chunk.ids.reserve(bytes / kBytesPerEntry);
  chunk.counts.reserve(bytes / kBytesPerEntry);
  Analyzer::Scratch scratch;
  std::vector<Seen> seen;
  chunk.row_ends.reserve(documents.size());
  for (std::size_t d = 0; d < documents.size(); ++d) {
    count_document(
        analyzer, documents[d], scratch, [&](std::string_view term) { return chunk.table.intern(term); },
        static_cast<std::int64_t>(d), seen, chunk.ids, chunk.counts);
    chunk.row_ends.push_back(static_cast<std::int64_t>(chunk.ids.size()));
  }
  return chunk;
}

// CountVectorizer._limit_features: which first-seen ids survive, given each
// id's document frequency and total count, with `by_name` the ids in code
// point order (the column order max_features ranks in).
std::vector<bool> keep_terms(const std::vector<std::int32_t>& by_name,
                             const std::vector<std::int64_t>& df, const std::vector<std::int64_t>& tf,
                             std::int64_t n_documents, const VocabularyLimits& limits,
                             const std::string& field_prefix) {
  const double high = limits.max_df.documents(n_documents);
  const double low = limits.min_df.documents(n_documents);
  if (high < low)
    throw ConfigError(field_prefix + "max_df", "max_df corresponds to < documents than min_df");
  std::vector<bool> keep(df.size(), false);
  std::vector<std::int32_t> passing;  // ids in name order
  for (const std::int32_t id : by_name) {
    const auto d = static_cast<double>(df[id]);
    if (d <= high && d >= low) passing.push_back(id);
  }
  if (limits.max_features && static_cast<std::int64_t>(passing.size()) > *limits.max_features) {
    // (-tfs[mask]).argsort()[:limit], with numpy's own (unstable) argsort.
    std::vector<std::int64_t> negated(passing.size());
    for (std::size_t i = 0; i < passing.size(); ++i) negated[i] = -tf[passing[i]];
    const std::vector<std::int64_t> order = numpy_argsort(negated);
    for (std::int64_t i = 0; i < *limits.max_features; ++i) keep[passing[order[i]]] = true;
  } else {
    for (const std::int32_t id : passing) keep[id] = true;
  }
  if (passing.empty())
    throw ConfigError(field_prefix + "min_df",
                      "After pruning, no terms remain. Try a lower min_df or a higher max_df.");
  return keep;
}

void sort_by_name(std::vector<std::int32_t>& ids, const TermTable& table, int threads) {
  const auto by_term = [&](std::int32_t a, std::int32_t b) { return table.term(a) < table.term(b); };
  if (threads > 1 && ids.size() > 100000)
    __gnu_parallel::sort(ids.begin(), ids.end(), by_term,
                         __gnu_parallel::multiway_mergesort_tag(threads));
  else
    std::sort(ids.begin(), ids.end(), by_term);
}

std::uint32_t clamped_length(std::string_view term) {
  return static_cast<std::uint32_t>(std::min<std::size_t>(term.size(), UINT32_MAX));
}

}  // namespace

TermTable::TermTable(std::size_t expected_terms)
    : slots_(std::max<std::size_t>(1024, std::bit_ceil(expected_terms * 2))), ends_{0} {}

std::size_t TermTable::slot_of(std::string_view term, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  const std::uint32_t length = clamped_length(term);
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id < 0) return s;
    if (slot.hash == hash && slot.length == length &&
        (slot.length == UINT32_MAX ? this->term(slot.id) == term
                                   : std::memcmp(arena_.data() + slot.begin, term.data(), term.size()) == 0))
      return s;
  }
}

void TermTable::grow() {
  std::vector<Slot> slots(slots_.size() * 2);
  const std::size_t mask = slots.size() - 1;
  for (const Slot& slot : slots_) {
    if (slot.id < 0) continue;
    std::size_t t = slot.hash & mask;
    while (slots[t].id >= 0) t = (t + 1) & mask;
    slots[t] = slot;
  }
  slots_ = std::move(slots);
}

std::int32_t TermTable::intern(std::string_view term) {
  const std::uint64_t hash = hash_term(term);
  const std::size_t s = slot_of(term, hash);
  if (slots_[s].id >= 0) return slots_[s].id;
  const std::int32_t id = size();
  if (id == INT32_MAX - 1) throw Error("more than 2^31 - 2 distinct terms: bagel's columns are int32");
  slots_[s] = {hash, arena_.size(), clamped_length(term), id};
  arena_.append(term);
  ends_.push_back(arena_.size());
  if (static_cast<std::size_t>(size()) * 2 > slots_.size()) grow();
  return id;
}

std::int32_t TermTable::find(std::string_view term) const { return slots_[slot_of(term, hash_term(term))].id; }

std::vector<std::size_t> document_chunks(std::size_t documents, int threads) {
  const std::size_t parts = threads <= 1 || documents < 1024
                                ? 1
                                : std::min<std::size_t>(static_cast<std::size_t>(threads) * 4, documents / 256);
  std::vector<std::size_t> bounds;
  for (std::size_t p = 0; p <= parts; ++p) bounds.push_back(documents * p / parts);
  return bounds;
}

Vocabulary::Vocabulary(std::vector<std::string> terms_by_column) {
  for (const std::string& term : terms_by_column) {
    if (table_.intern(term) != table_.size() - 1)
      throw Error("the vocabulary holds the term '" + term + "' twice");
  }
}

void Vocabulary::write(const std::string& path) const {
  std::vector<std::string> terms;
  terms.reserve(static_cast<std::size_t>(size()));
  for (std::int32_t c = 0; c < size(); ++c) terms.emplace_back(term(c));
  write_vocabulary_file(path, terms);
}

Vocabulary Vocabulary::read(const std::string& path) { return Vocabulary(read_vocabulary_file(path)); }

FittedCounts fit_counts(const Analyzer& analyzer, std::span<const std::string_view> documents,
                        const VocabularyLimits& limits, int threads, const std::string& field_prefix) {
  const std::vector<std::size_t> bounds = document_chunks(documents.size(), threads);
  std::vector<ChunkCounts> chunks(bounds.size() - 1);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    chunks[c] = count_chunk(analyzer, documents.subspan(bounds[c], bounds[c + 1] - bounds[c]));
  });

  // First-seen ids over the whole corpus: chunk by chunk, each chunk's new
  // terms in the order it met them.
  TermTable global;
  for (ChunkCounts& chunk : chunks) {
    std::vector<std::int32_t> to_global(static_cast<std::size_t>(chunk.table.size()));
    for (std::int32_t id = 0; id < chunk.table.size(); ++id) to_global[id] = global.intern(chunk.table.term(id));
    for (std::int32_t& id : chunk.ids) id = to_global[id];
  }
  const std::size_t terms = static_cast<std::size_t>(global.size());
  if (terms == 0)
    throw ConfigError(field_prefix + "stop_words",
                      "empty vocabulary; perhaps the documents only contain stop words");

  std::vector<std::int64_t> df(terms, 0), tf(terms, 0);
  for (ChunkCounts& chunk : chunks) {
    if (limits.binary) std::fill(chunk.counts.begin(), chunk.counts.end(), 1);
    for (std::size_t e = 0; e < chunk.ids.size(); ++e) {
      ++df[chunk.ids[e]];
      tf[chunk.ids[e]] += chunk.counts[e];
    }
  }
  std::vector<std::int32_t> by_name(terms);
  std::iota(by_name.begin(), by_name.end(), 0);
  sort_by_name(by_name, global, threads);
  const std::vector<bool> keep =
      keep_terms(by_name, df, tf, static_cast<std::int64_t>(documents.size()), limits, field_prefix);

  FittedCounts fitted;
  std::vector<std::int32_t> column_of(terms, -1);
  std::vector<std::string> names;
  for (const std::int32_t id : by_name) {
    if (!keep[id]) continue;
    column_of[id] = static_cast<std::int32_t>(names.size());
    names.emplace_back(global.term(id));
    fitted.document_frequency.push_back(df[id]);
  }
  fitted.vocabulary = Vocabulary(std::move(names));

  // Rows: kept terms by ascending first-seen id (CountVectorizer sorts the
  // indices while they are first-seen ids, then renumbers the columns in
  // place), as columns of the sorted vocabulary.
  TermEntries& out = fitted.entries;
  out.indptr.assign(documents.size() + 1, 0);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    std::int64_t begin = 0;
    for (std::size_t d = 0; d < chunks[c].row_ends.size(); ++d) {
      std::int64_t kept = 0;
      for (std::int64_t e = begin; e < chunks[c].row_ends[d]; ++e) kept += column_of[chunks[c].ids[e]] >= 0;
      out.indptr[bounds[c] + d + 1] = kept;
      begin = chunks[c].row_ends[d];
    }
  });
  std::partial_sum(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  out.columns.resize(static_cast<std::size_t>(out.indptr.back()));
  out.counts.resize(out.columns.size());
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    std::vector<std::pair<std::int32_t, std::int32_t>> row;
    std::int64_t begin = 0;
    for (std::size_t d = 0; d < chunks[c].row_ends.size(); ++d) {
      row.clear();
      for (std::int64_t e = begin; e < chunks[c].row_ends[d]; ++e)
        if (column_of[chunks[c].ids[e]] >= 0) row.emplace_back(chunks[c].ids[e], chunks[c].counts[e]);
      begin = chunks[c].row_ends[d];
      std::sort(row.begin(), row.end());
      std::int64_t at = out.indptr[bounds[c] + d];
      for (const auto& [id, count] : row) {
        out.columns[at] = column_of[id];
        out.counts[at++] = count;
      }
    }
    chunks[c] = ChunkCounts{};  // its memory back early
  });
  return fitted;
}

TermEntries count_known_terms(const Analyzer& analyzer, const Vocabulary& vocabulary,
                              std::span<const std::string_view> documents, int threads) {
  const std::vector<std::size_t> bounds = document_chunks(documents.size(), threads);
  std::vector<TermEntries> chunks(bounds.size() - 1);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    TermEntries& chunk = chunks[c];
    Analyzer::Scratch scratch;
    std::vector<Seen> seen;
    std::vector<std::int32_t> ids, counts;
    std::vector<std::pair<std::int32_t, std::int32_t>> row;
    chunk.indptr.push_back(0);
    for (std::size_t d = bounds[c]; d < bounds[c + 1]; ++d) {
      ids.clear();
      counts.clear();
      count_document(
          analyzer, documents[d], scratch, [&](std::string_view term) { return vocabulary.column(term); },
          static_cast<std::int64_t>(d), seen, ids, counts);
      row.clear();
      for (std::size_t e = 0; e < ids.size(); ++e) row.emplace_back(ids[e], counts[e]);
      std::sort(row.begin(), row.end());
      for (const auto& [column, count] : row) {
        chunk.columns.push_back(column);
        chunk.counts.push_back(count);
      }
      chunk.indptr.push_back(static_cast<std::int64_t>(chunk.columns.size()));
    }
  });
  TermEntries out;
  out.indptr.push_back(0);
  for (TermEntries& chunk : chunks) {
    const std::int64_t base = out.indptr.back();
    for (std::size_t r = 1; r < chunk.indptr.size(); ++r) out.indptr.push_back(base + chunk.indptr[r]);
    out.columns.insert(out.columns.end(), chunk.columns.begin(), chunk.columns.end());
    out.counts.insert(out.counts.end(), chunk.counts.begin(), chunk.counts.end());
    chunk = TermEntries{};
  }
  return out;
}

}  // namespace bagel
