#include "bagel/text/vocabulary.h"

#include <omp.h>
#include <parallel/algorithm>

#include <algorithm>
#include <functional>
#include <numeric>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/mapped_file.h"
#include "bagel/parallel_errors.h"
#include "bagel/text/numpy_math.h"
#include "bagel/text/utf8.h"

namespace bagel {

namespace {

std::uint64_t hash_term(std::string_view term) { return std::hash<std::string_view>{}(term); }

// Runs body(chunk) for chunk in [0, chunks) on `threads` threads; the first
// exception is rethrown after the region.
template <class Body>
void for_each_chunk(std::size_t chunks, int threads, Body body) {
  RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t c = 0; c < chunks; ++c) errors.run([&] { body(c); });
  errors.rethrow();
}

// The terms of a run of documents, counted against a local table: each row's
// entries in the order its terms first occur in the document (a dict's
// insertion order, as CountVectorizer._count_vocab builds it).
struct ChunkCounts {
  TermTable table;
  std::vector<std::int64_t> row_ends;
  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> counts;
};

// Adds one document's terms to `out`: `lookup` gives a term's id (or -1 to
// skip it); `mark` and `slot` remember, by id, the last row holding it and
// where. No allocation once the vectors have grown.
template <class Lookup>
void count_document(const Analyzer& analyzer, std::string_view document, Analyzer::Scratch& scratch,
                    Lookup lookup, std::int64_t row, std::vector<std::int64_t>& mark,
                    std::vector<std::int64_t>& slot, std::vector<std::int32_t>& ids,
                    std::vector<std::int32_t>& counts) {
  analyzer.analyze(document, scratch, [&](std::string_view term) {
    const std::int32_t id = lookup(term);
    if (id < 0) return;
    if (static_cast<std::size_t>(id) >= mark.size()) {
      mark.resize(static_cast<std::size_t>(id) + 1, -1);
      slot.resize(static_cast<std::size_t>(id) + 1, 0);
    }
    if (mark[id] != row) {
      mark[id] = row;
      slot[id] = static_cast<std::int64_t>(ids.size());
      ids.push_back(id);
      counts.push_back(1);
    } else {
      ++counts[slot[id]];
    }
  });
}

ChunkCounts count_chunk(const Analyzer& analyzer, std::span<const std::string> documents) {
  ChunkCounts chunk;
  Analyzer::Scratch scratch;
  std::vector<std::int64_t> mark, slot;
  chunk.row_ends.reserve(documents.size());
  for (std::size_t d = 0; d < documents.size(); ++d) {
    count_document(
        analyzer, documents[d], scratch, [&](std::string_view term) { return chunk.table.intern(term); },
        static_cast<std::int64_t>(d), mark, slot, chunk.ids, chunk.counts);
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

std::string escape_term(std::string_view term) {
  std::string out;
  for (const char c : term) {
    if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out;
}

std::string unescape_term(std::string_view line, const std::string& path, std::int64_t number) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\') {
      out += line[i];
      continue;
    }
    const char e = i + 1 < line.size() ? line[++i] : '\0';
    if (e == 'n') out += '\n';
    else if (e == 'r') out += '\r';
    else if (e == '\\') out += '\\';
    else
      throw FileError(path, "unknown escape in a term (expected \\n, \\r or \\\\)", number);
  }
  return out;
}

}  // namespace

TermTable::TermTable() : slots_(1024, 0), hashes_(1024, 0), ends_{0} {}

std::size_t TermTable::slot_of(std::string_view term, std::uint64_t hash) const {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const std::int32_t entry = slots_[s];
    if (entry == 0 || (hashes_[s] == hash && this->term(entry - 1) == term)) return s;
  }
}

void TermTable::grow() {
  std::vector<std::int32_t> slots(slots_.size() * 2, 0);
  std::vector<std::uint64_t> hashes(slots.size(), 0);
  const std::size_t mask = slots.size() - 1;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (slots_[s] == 0) continue;
    std::size_t t = hashes_[s] & mask;
    while (slots[t] != 0) t = (t + 1) & mask;
    slots[t] = slots_[s];
    hashes[t] = hashes_[s];
  }
  slots_ = std::move(slots);
  hashes_ = std::move(hashes);
}

std::int32_t TermTable::intern(std::string_view term) {
  const std::uint64_t hash = hash_term(term);
  std::size_t s = slot_of(term, hash);
  if (slots_[s] != 0) return slots_[s] - 1;
  const std::int32_t id = size();
  if (id == INT32_MAX - 1) throw Error("more than 2^31 - 2 distinct terms: bagel's columns are int32");
  arena_.append(term);
  ends_.push_back(arena_.size());
  slots_[s] = id + 1;
  hashes_[s] = hash;
  if (static_cast<std::size_t>(size()) * 2 > slots_.size()) grow();
  return id;
}

std::int32_t TermTable::find(std::string_view term) const {
  const std::int32_t entry = slots_[slot_of(term, hash_term(term))];
  return entry - 1;
}

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
  std::string text;
  for (std::int32_t c = 0; c < size(); ++c) {
    text += escape_term(term(c));
    text += '\n';
  }
  write_file_atomic(path, text);
}

Vocabulary Vocabulary::read(const std::string& path) {
  const MappedFile file(path);
  std::string_view text(reinterpret_cast<const char*>(file.bytes().data()), file.bytes().size());
  Vocabulary vocabulary;
  std::int64_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    if (end == std::string_view::npos)
      throw FileError(path, "the last line has no newline (the file was cut short?)", number + 1);
    const std::string_view line = text.substr(0, end);
    ++number;
    if (invalid_utf8_at(line) != std::string_view::npos)
      throw FileError(path, "a term that is not UTF-8 text", number);
    const std::string term = unescape_term(line, path, number);
    if (vocabulary.table_.intern(term) != vocabulary.table_.size() - 1)
      throw FileError(path, "the term '" + escape_term(term) + "' is listed twice", number);
    text.remove_prefix(end + 1);
  }
  return vocabulary;
}

FittedCounts fit_counts(const Analyzer& analyzer, std::span<const std::string> documents,
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
                              std::span<const std::string> documents, int threads) {
  const std::vector<std::size_t> bounds = document_chunks(documents.size(), threads);
  std::vector<TermEntries> chunks(bounds.size() - 1);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    TermEntries& chunk = chunks[c];
    Analyzer::Scratch scratch;
    std::vector<std::int64_t> mark, slot;
    std::vector<std::int32_t> ids, counts;
    std::vector<std::pair<std::int32_t, std::int32_t>> row;
    chunk.indptr.push_back(0);
    for (std::size_t d = bounds[c]; d < bounds[c + 1]; ++d) {
      ids.clear();
      counts.clear();
      count_document(
          analyzer, documents[d], scratch, [&](std::string_view term) { return vocabulary.column(term); },
          static_cast<std::int64_t>(d), mark, slot, ids, counts);
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
