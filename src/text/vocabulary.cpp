#include "bagel/text/vocabulary.h"

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <atomic>
#include <bit>
#include <cstring>
#include <deque>
#include <mutex>
#include <tuple>
#include <numeric>

#include "bagel/error.h"
#include "bagel/huge_pages.h"
#include "bagel/parallel_errors.h"
#include "bagel/text/numpy_math.h"
#include "bagel/text/vocabulary_file.h"

namespace bagel {

namespace {

// The bytes p[0, n) as a little-endian word, zero-padded (0 < n < 8):
// two overlapping 4-byte loads, or up to three single bytes, rather than a
// memcpy of variable length.
std::uint64_t load_tail(const char* p, std::size_t n) {
  if (n >= 4) {
    std::uint32_t low, high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + n - 4, 4);
    return low | (static_cast<std::uint64_t>(high) << ((n - 4) * 8));
  }
  std::uint64_t word = static_cast<unsigned char>(p[0]);
  if (n > 1) word |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[1])) << 8;
  if (n > 2) word |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[2])) << 16;
  return word;
}

// A term's hash and its first 8 bytes (zero-padded). The hash is fast on
// short strings: 8 bytes a step (a multiply and a rotation), then
// MurmurHash3's finalizer, so that the low bits the table masks with depend
// on every byte.
struct TermKey {
  std::uint64_t hash;
  std::uint64_t head;
};

TermKey key_of(std::string_view term) {
  constexpr std::uint64_t kMultiplier = 0x9E3779B97F4A7C15ull;
  std::uint64_t h = term.size() * kMultiplier;
  const char* p = term.data();
  std::size_t left = term.size();
  std::uint64_t head = 0;
  if (left >= 8) std::memcpy(&head, p, 8);
  for (; left >= 8; left -= 8, p += 8) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    h = (std::rotl(h, 23) ^ word) * kMultiplier;
  }
  if (left > 0) {
    const std::uint64_t word = load_tail(p, left);
    if (term.size() < 8) head = word;
    h = (std::rotl(h, 23) ^ word) * kMultiplier;
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return {h, head};
}

// Runs body(chunk) for chunk in [0, chunks) on `threads` threads; the first
// exception is rethrown after the region. One chunk (fewer than
// kParallelDocuments documents) runs on the calling thread: a team would only spin
// (libgomp's wait after the region cost 0.6-8 ms of a one-document predict
// that takes 0.1-0.3 ms).
template <class Body>
void for_each_chunk(std::size_t chunks, int threads, Body body) {
  RegionErrors errors;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (chunks > 1)
  for (std::size_t c = 0; c < chunks; ++c) errors.run([&] { body(c); });
  errors.rethrow();
}

// Typical text: a (document, term) entry every 8 bytes or more; a new term
// every 256 bytes or so in a chunk of some MB (more often in a small one:
// the table then grows a few times, which costs less than zeroing a table
// far larger than needed).
constexpr std::size_t kBytesPerEntry = 8;
constexpr std::size_t kBytesPerNewTerm = 256;

// The terms of a run of documents, counted against a local table.
struct ChunkCounts {
  TermTable table;
  std::vector<std::int64_t> indptr;  // rows + 1, from 0
  std::vector<std::int32_t> ids;     // each row's distinct term ids, ascending
  std::vector<double> counts;        // how often each occurs in its row (the matrix's values)
};

// One row's entries from the ids of its terms (in any order; `ids` is
// sorted in place): each distinct id once, ascending, with its count.
void append_row(std::vector<std::int32_t>& ids, std::vector<std::int32_t>& row_ids,
                std::vector<double>& row_counts) {
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i + 1;
    while (j < ids.size() && ids[j] == ids[i]) ++j;
    row_ids.push_back(ids[i]);
    row_counts.push_back(static_cast<double>(j - i));
    i = j;
  }
}

// Documents [begin, end) being counted by one thread, from which an idle
// thread may take the second half of what is not yet claimed. Chunks of
// equal bytes can take unequal times (parts of a corpus differ in their
// documents' lengths and in how many distinct terms they hold), and without
// this the slowest chunk keeps one thread busy while the others wait.
class DocumentRun {
 public:
  DocumentRun(std::size_t begin, std::size_t end) : begin_(begin), next_(begin), end_(end) {}
  std::size_t begin() const { return begin_; }
  // The next at most `n` unclaimed documents (an empty range: none left).
  std::pair<std::size_t, std::size_t> claim(std::size_t n) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t from = next_;
    next_ = std::min(end_, next_ + n);
    return {from, next_};
  }
  std::size_t unclaimed() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return end_ - next_;
  }
  // The second half of the unclaimed documents, now no longer this run's.
  std::pair<std::size_t, std::size_t> split() {
    const std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t middle = next_ + (end_ - next_) / 2;
    const std::pair<std::size_t, std::size_t> taken{middle, end_};
    end_ = middle;
    return taken;
  }

 private:
  const std::size_t begin_;
  std::mutex mutex_;
  std::size_t next_, end_;
};

// Documents claimed at a time, and the fewest unclaimed documents worth
// splitting off (each run's distinct terms are looked up again when the
// runs are merged).
constexpr std::size_t kClaimDocuments = 256;
constexpr std::size_t kMinSplitDocuments = 4 * kClaimDocuments;

// A run's rows list their terms by ascending local id, which is the order
// the terms were first met in the run: the order of first occurrence in the
// corpus that CountVectorizer's rows follow, once local ids are global.
ChunkCounts count_run(const Analyzer& analyzer, std::span<const std::string_view> documents, DocumentRun& run) {
  const std::size_t planned = run.unclaimed();
  std::size_t bytes = 0;
  for (std::size_t d = run.begin(); d < run.begin() + planned; ++d) bytes += documents[d].size();
  // Sized from the text so that the arrays seldom grow: growing copies them
  // and touches fresh pages each time. A reservation larger than what is
  // used costs no memory (the pages untouched are never mapped).
  ChunkCounts chunk{TermTable(bytes / kBytesPerNewTerm), {}, {}, {}};
  reserve_huge(chunk.ids, bytes / kBytesPerEntry);
  reserve_huge(chunk.counts, bytes / kBytesPerEntry);
  reserve_huge(chunk.indptr, planned + 1);
  chunk.indptr.push_back(0);
  Analyzer::Scratch scratch;
  std::vector<std::int32_t> terms;
  for (auto [from, to] = run.claim(kClaimDocuments); from < to; std::tie(from, to) = run.claim(kClaimDocuments)) {
    for (std::size_t d = from; d < to; ++d) {
      terms.clear();
      analyzer.analyze(documents[d], scratch, [&](std::string_view term) { terms.push_back(chunk.table.intern(term)); });
      append_row(terms, chunk.ids, chunk.counts);
      chunk.indptr.push_back(static_cast<std::int64_t>(chunk.ids.size()));
    }
  }
  return chunk;
}

// Chunk c's local ids made global (`to_global`), each row sorted again by
// the new ids, so that rows list their terms by first occurrence in the
// corpus.
void renumber_chunk(ChunkCounts& chunk, const std::vector<std::int32_t>& to_global) {
  std::vector<std::pair<std::int32_t, double>> row;
  for (std::size_t r = 0; r + 1 < chunk.indptr.size(); ++r) {
    std::int64_t begin = chunk.indptr[r];
    const std::int64_t end = chunk.indptr[r + 1];
    row.clear();
    for (std::int64_t e = begin; e < end; ++e) row.emplace_back(to_global[chunk.ids[e]], chunk.counts[e]);
    std::sort(row.begin(), row.end());
    for (const auto& [id, count] : row) {
      chunk.ids[begin] = id;
      chunk.counts[begin++] = count;
    }
  }
}

// Bounds of `parts` runs of documents with about equal bytes each (fewer
// when there are few documents).
std::vector<std::size_t> byte_chunks(std::span<const std::string_view> documents, int parts) {
  std::size_t total = 0;
  for (const std::string_view d : documents) total += d.size() + 1;
  const std::size_t count = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(parts), documents.size() / 256));
  std::vector<std::size_t> bounds = {0};
  std::size_t bytes = 0;
  for (std::size_t d = 0; d < documents.size() && bounds.size() < count; ++d) {
    bytes += documents[d].size() + 1;
    if (bytes * count >= total * bounds.size()) bounds.push_back(d + 1);
  }
  bounds.push_back(documents.size());
  return bounds;
}

// The documents counted in runs, a first one per thread of about equal
// bytes, then halves of the unclaimed rest of the largest taken by threads
// that finish early: the runs in document order with the first document
// of each (and documents.size() last).
struct CountedRuns {
  std::vector<ChunkCounts> chunks;
  std::vector<std::size_t> bounds;
};
CountedRuns count_in_runs(const Analyzer& analyzer, std::span<const std::string_view> documents, int threads) {
  const std::vector<std::size_t> first = byte_chunks(documents, threads);
  std::deque<DocumentRun> runs;  // grows at the back only: the threads keep references
  for (std::size_t c = 0; c + 1 < first.size(); ++c) runs.emplace_back(first[c], first[c + 1]);
  std::mutex mutex;  // guards `runs`, `started` and `done`
  std::size_t started = 0;
  std::vector<std::pair<std::size_t, ChunkCounts>> done;
  // The next run a thread counts (the mutex held): a first run not yet
  // started, else the second half of the unclaimed documents of the run
  // with the most; none when every run has too few left.
  const std::size_t initial = runs.size();
  const auto next_run = [&]() -> DocumentRun* {
    if (started < initial) return &runs[started++];
    DocumentRun* largest = nullptr;
    std::size_t most = kMinSplitDocuments - 1;
    for (DocumentRun& r : runs)
      if (const std::size_t left = r.unclaimed(); left > most) most = left, largest = &r;
    if (largest == nullptr) return nullptr;
    const auto [begin, end] = largest->split();
    return &runs.emplace_back(begin, end);
  };
  RegionErrors errors;
#pragma omp parallel num_threads(static_cast<int>(initial))
  errors.run([&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (DocumentRun* run = next_run(); run != nullptr && !errors.failed(); run = next_run()) {
      lock.unlock();
      ChunkCounts counted = count_run(analyzer, documents, *run);
      lock.lock();
      done.emplace_back(run->begin(), std::move(counted));
    }
  });
  errors.rethrow();
  std::sort(done.begin(), done.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  CountedRuns out;
  for (auto& [begin, chunk] : done) {
    out.bounds.push_back(begin);
    out.chunks.push_back(std::move(chunk));
  }
  out.bounds.push_back(documents.size());
  return out;
}

// merge_run_terms()'s record of one run's terms that the first run's table
// lacks, in the run's order (its local ids ascending).
struct MissingTerms {
  std::vector<std::int32_t> local;       // the run's local id of each
  std::vector<std::uint8_t> partition;   // its partition (the hash's high bits)
  // by_partition[p]: the indices (into `local`) of those in partition p, ascending.
  std::vector<std::vector<std::int32_t>> by_partition;
  std::vector<std::int32_t> partition_id;  // its id in its partition's table
  std::vector<std::uint8_t> first;         // 1 where no earlier run had the term
};

// Looks every run's terms (but the first run's) up in `global`, which holds
// the first run's: to_global[c][l] gets the id found, and the terms not
// found go to missing[c].
void find_missing_terms(const TermTable& global, const std::vector<ChunkCounts>& chunks,
                        std::size_t partitions, int threads,
                        std::vector<std::vector<std::int32_t>>& to_global,
                        std::vector<MissingTerms>& missing) {
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    if (c == 0) return;
    const TermTable& local = chunks[c].table;
    MissingTerms& m = missing[c];
    to_global[c].resize(static_cast<std::size_t>(local.size()));
    m.by_partition.resize(partitions);
    for (std::int32_t l = 0; l < local.size(); ++l) {
      const std::string_view term = local.term(l);
      to_global[c][l] = global.find(term);
      if (to_global[c][l] >= 0) continue;
      const auto p = static_cast<std::uint8_t>((key_of(term).hash >> 32) % partitions);
      m.by_partition[p].push_back(static_cast<std::int32_t>(m.local.size()));
      m.local.push_back(l);
      m.partition.push_back(p);
    }
    m.partition_id.resize(m.local.size());
    m.first.resize(m.local.size());
  });
}

// One thread a partition, through the runs in order: each missing term's id
// in its partition's table and whether it occurs there first. Returns the
// number of distinct terms of each partition.
std::vector<std::int32_t> number_in_partitions(const std::vector<ChunkCounts>& chunks,
                                               std::vector<MissingTerms>& missing,
                                               std::size_t partitions, int threads) {
  std::vector<std::int32_t> distinct(partitions);
  for_each_chunk(partitions, threads, [&](std::size_t p) {
    std::size_t occurrences = 0;
    for (std::size_t c = 1; c < chunks.size(); ++c) occurrences += missing[c].by_partition[p].size();
    TermTable seen(occurrences / 2);
    for (std::size_t c = 1; c < chunks.size(); ++c) {
      MissingTerms& m = missing[c];
      for (const std::int32_t i : m.by_partition[p]) {
        const std::int32_t before = seen.size();
        const std::int32_t id = seen.intern(chunks[c].table.term(m.local[i]));
        m.partition_id[i] = id;
        m.first[i] = id == before;
      }
    }
    distinct[p] = seen.size();
  });
  return distinct;
}

// The global ids of the missing terms: each run numbers its first
// occurrences on from where the runs before it end, then the others take
// the id of their first occurrence. Returns the new terms in id order.
std::vector<std::string_view> number_new_terms(std::int32_t known, const std::vector<ChunkCounts>& chunks,
                                               const std::vector<MissingTerms>& missing,
                                               const std::vector<std::int32_t>& partition_terms,
                                               int threads,
                                               std::vector<std::vector<std::int32_t>>& to_global) {
  const std::size_t runs = chunks.size();
  std::vector<std::int64_t> base(runs + 1, known);
  for (std::size_t c = 1; c < runs; ++c)
    base[c + 1] = base[c] + std::count(missing[c].first.begin(), missing[c].first.end(), 1);
  if (base[runs] > INT32_MAX - 1) throw Error("more than 2^31 - 2 distinct terms: bagel's columns are int32");
  std::vector<std::vector<std::int32_t>> id_of_partition_term(partition_terms.size());
  for (std::size_t p = 0; p < partition_terms.size(); ++p) id_of_partition_term[p].resize(partition_terms[p]);
  std::vector<std::string_view> new_terms(static_cast<std::size_t>(base[runs] - known));
  for_each_chunk(runs, threads, [&](std::size_t c) {
    const MissingTerms& m = missing[c];
    auto next = static_cast<std::int32_t>(base[c]);
    for (std::size_t i = 0; i < m.local.size(); ++i) {
      if (!m.first[i]) continue;
      id_of_partition_term[m.partition[i]][m.partition_id[i]] = next;
      new_terms[static_cast<std::size_t>(next - known)] = chunks[c].table.term(m.local[i]);
      to_global[c][m.local[i]] = next++;
    }
  });
  for_each_chunk(runs, threads, [&](std::size_t c) {
    const MissingTerms& m = missing[c];
    for (std::size_t i = 0; i < m.local.size(); ++i)
      if (!m.first[i]) to_global[c][m.local[i]] = id_of_partition_term[m.partition[i]][m.partition_id[i]];
  });
  return new_terms;
}

// The runs' terms as ids of `global`, which holds the first run's terms and
// is given the other runs' new ones: first-seen ids over the whole corpus
// (the first run's, then each further run's new terms in the order it met
// them). to_global[c][l] is run c's term l (to_global[0] is empty).
//
// The terms of the first run keep their ids whatever follows, so the other
// runs look theirs up in its table in parallel (most of a run's terms, the
// common words, are there). The rest are told apart in partitions by hash,
// one thread a partition going through the runs in order, so that a term's
// first occurrence is known; each run then numbers its first occurrences
// from where the runs before it end, and the new terms join the table in
// one parallel step. (Interning them one run after another on one thread
// took 45 ms of 0.18 s on 16 threads.)
std::vector<std::vector<std::int32_t>> merge_run_terms(TermTable& global, std::vector<ChunkCounts>& chunks,
                                                       int threads) {
  const std::size_t runs = chunks.size();
  const auto partitions = static_cast<std::size_t>(std::clamp(threads, 1, 64));
  std::vector<std::vector<std::int32_t>> to_global(runs);
  std::vector<MissingTerms> missing(runs);
  find_missing_terms(global, chunks, partitions, threads, to_global, missing);
  const std::vector<std::int32_t> partition_terms = number_in_partitions(chunks, missing, partitions, threads);
  const std::vector<std::string_view> new_terms =
      number_new_terms(global.size(), chunks, missing, partition_terms, threads, to_global);
  global.append_distinct(new_terms, threads);
  for_each_chunk(runs, threads, [&](std::size_t c) {
    if (c > 0) chunks[c].table = TermTable();
  });
  return to_global;
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
  if (high < low) {
    // scikit-learn's message, under the key that left its default (min_df 1,
    // max_df 1.0): on few documents that is usually min_df.
    const bool min_set = limits.min_df.fraction || limits.min_df.value != 1;
    char counts[160];
    std::snprintf(counts, sizeof counts, " (max_df allows terms in at most %g of the %lld documents, "
                  "min_df needs at least %g)", high, static_cast<long long>(n_documents), low);
    throw ConfigError(field_prefix + (min_set ? "min_df" : "max_df"),
                      std::string("max_df corresponds to < documents than min_df") + counts);
  }
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

// The term ids in the order of their terms' bytes (UTF-8's byte order is
// code point order). Sorted by each term's first 8 bytes as one big-endian
// word first, from an array of (word, id) pairs that the caches hold, so that
// only terms sharing those bytes read the arena.
std::vector<std::int32_t> ids_by_name(const TermTable& table, int threads) {
  struct Keyed {
    std::uint64_t prefix;
    std::int32_t id;
  };
  std::vector<Keyed> keyed(static_cast<std::size_t>(table.size()));
#pragma omp parallel for schedule(static) num_threads(threads) if (keyed.size() > 100000)
  for (std::int32_t id = 0; id < table.size(); ++id) {
    const std::string_view term = table.term(id);
    std::uint64_t prefix = 0;
    for (std::size_t i = 0; i < 8; ++i)
      prefix = (prefix << 8) | (i < term.size() ? static_cast<unsigned char>(term[i]) : 0u);
    keyed[static_cast<std::size_t>(id)] = {prefix, id};
  }
  // A shorter prefix padded with zeros sorts before any longer one it
  // starts: equal words leave the order to the whole terms.
  const auto before = [&](const Keyed& a, const Keyed& b) {
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return table.term(a.id) < table.term(b.id);
  };
  // Slices sorted in parallel, then merged pairwise, the pairs of a level in
  // parallel (terms are distinct, so the order is the one std::sort gives).
  // libstdc++'s parallel mode is not used: its mergesort has every thread
  // write one shared variable, a data race ThreadSanitizer reports.
  const std::size_t parts =
      threads > 1 && keyed.size() > 100000 ? static_cast<std::size_t>(threads) : 1;
  std::vector<std::size_t> bounds(parts + 1);
  for (std::size_t p = 0; p <= parts; ++p) bounds[p] = keyed.size() * p / parts;
  const auto at = [&](std::size_t p) { return keyed.begin() + static_cast<std::ptrdiff_t>(bounds[p]); };
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts)) if (parts > 1)
  for (std::size_t p = 0; p < parts; ++p) std::sort(at(p), at(p + 1), before);
  for (std::size_t width = 1; width < parts; width *= 2) {
    // The pairs of a level merged at once (p = 0, 2 width, ... while p + width < parts).
    const auto pairs = static_cast<std::int64_t>((parts - width + 2 * width - 1) / (2 * width));
#pragma omp parallel for schedule(static) num_threads(threads) if (pairs > 1)
    for (std::int64_t q = 0; q < pairs; ++q) {
      const std::size_t p = static_cast<std::size_t>(q) * 2 * width;
      std::inplace_merge(at(p), at(p + width), at(std::min(p + 2 * width, parts)), before);
    }
  }
  std::vector<std::int32_t> ids(keyed.size());
  for (std::size_t i = 0; i < keyed.size(); ++i) ids[i] = keyed[i].id;
  return ids;
}

std::uint32_t clamped_length(std::string_view term) {
  return static_cast<std::uint32_t>(std::min<std::size_t>(term.size(), UINT32_MAX));
}

}  // namespace

TermTable::TermTable(std::size_t expected_terms)
    : slots_(huge_vector<Slot>(std::max<std::size_t>(1024, std::bit_ceil(expected_terms * 10 / 7 + 1)))),
      ends_{0} {}

std::size_t TermTable::slot_of(std::string_view term, std::uint64_t hash, std::uint64_t head) const {
  const std::size_t mask = slots_.size() - 1;
  const std::uint32_t length = clamped_length(term);
  for (std::size_t s = hash & mask;; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id1 == 0) return s;
    if (slot.hash != hash || slot.length != length || slot.head != head) continue;
    if (length <= 8) return s;
    if (length == UINT32_MAX ? this->term(static_cast<std::int32_t>(slot.id1 - 1)) == term
                             : std::memcmp(arena_.data() + slot.begin + 8, term.data() + 8, term.size() - 8) == 0)
      return s;
  }
}

void TermTable::grow() {
  std::vector<Slot> slots = huge_vector<Slot>(slots_.size() * 2);
  const std::size_t mask = slots.size() - 1;
  for (const Slot& slot : slots_) {
    if (slot.id1 == 0) continue;
    std::size_t t = slot.hash & mask;
    while (slots[t].id1 != 0) t = (t + 1) & mask;
    slots[t] = slot;
  }
  slots_ = std::move(slots);
}

std::int32_t TermTable::intern(std::string_view term) {
  const TermKey key = key_of(term);
  const std::size_t s = slot_of(term, key.hash, key.head);
  if (slots_[s].id1 != 0) return static_cast<std::int32_t>(slots_[s].id1 - 1);
  const std::int32_t id = size();
  if (id == INT32_MAX - 1) throw Error("more than 2^31 - 2 distinct terms: bagel's columns are int32");
  slots_[s] = {key.hash, key.head, arena_.size(), clamped_length(term), static_cast<std::uint32_t>(id) + 1};
  arena_.append(term);
  ends_.push_back(arena_.size());
  // Grown at 70% full: linear probing stays short, and the table half the
  // size of one grown at 50% holds more of itself in the caches.
  if (static_cast<std::size_t>(size()) * 10 > slots_.size() * 7) grow();
  return id;
}

std::int32_t TermTable::find(std::string_view term) const {
  const TermKey key = key_of(term);
  return static_cast<std::int32_t>(slots_[slot_of(term, key.hash, key.head)].id1) - 1;
}

void TermTable::place_concurrently(std::vector<Slot>& slots, const Slot& slot) {
  const std::size_t mask = slots.size() - 1;
  for (std::size_t s = slot.hash & mask;; s = (s + 1) & mask) {
    // Only id1 is shared while threads place: the thread that claims a slot
    // alone writes its other fields, and nobody reads them until all are placed.
    std::atomic_ref<std::uint32_t> id1(slots[s].id1);
    std::uint32_t empty = 0;
    if (id1.load(std::memory_order_relaxed) != 0 ||
        !id1.compare_exchange_strong(empty, slot.id1, std::memory_order_relaxed))
      continue;
    slots[s].hash = slot.hash;
    slots[s].head = slot.head;
    slots[s].begin = slot.begin;
    slots[s].length = slot.length;
    return;
  }
}

void TermTable::append_distinct(std::span<const std::string_view> terms, int threads) {
  const std::size_t old = static_cast<std::size_t>(size());
  const std::size_t total = old + terms.size();
  if (total > static_cast<std::size_t>(INT32_MAX - 1))
    throw Error("more than 2^31 - 2 distinct terms: bagel's columns are int32");
  ends_.resize(total + 1);
  for (std::size_t i = 0; i < terms.size(); ++i) ends_[old + i + 1] = ends_[old + i] + terms[i].size();
  arena_.resize(ends_[total]);
  const auto count = static_cast<std::int64_t>(terms.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (count > 10000)
  for (std::int64_t i = 0; i < count; ++i)
    if (!terms[i].empty()) std::memcpy(arena_.data() + ends_[old + i], terms[i].data(), terms[i].size());
  // Grown as intern grows it (at 70% full), the old slots placed again.
  std::size_t room = slots_.size();
  while (total * 10 > room * 7) room *= 2;
  if (room != slots_.size()) {
    std::vector<Slot> slots = huge_vector<Slot>(room);
    const auto old_slots = static_cast<std::int64_t>(slots_.size());
#pragma omp parallel for schedule(static) num_threads(threads) if (old_slots > 10000)
    for (std::int64_t s = 0; s < old_slots; ++s)
      if (slots_[s].id1 != 0) place_concurrently(slots, slots_[s]);
    slots_ = std::move(slots);
  }
#pragma omp parallel for schedule(static) num_threads(threads) if (count > 10000)
  for (std::int64_t i = 0; i < count; ++i) {
    const TermKey key = key_of(terms[i]);
    place_concurrently(slots_, {key.hash, key.head, ends_[old + i], clamped_length(terms[i]),
                                static_cast<std::uint32_t>(old + i) + 1});
  }
}

std::vector<std::size_t> document_chunks(std::size_t documents, int threads) {
  const std::size_t parts = threads <= 1 || documents < kParallelDocuments
                                ? 1
                                : std::min<std::size_t>(static_cast<std::size_t>(threads) * 4, documents / 256);
  std::vector<std::size_t> bounds;
  for (std::size_t p = 0; p <= parts; ++p) bounds.push_back(documents * p / parts);
  return bounds;
}

Vocabulary::Vocabulary(const std::vector<std::string>& terms_by_column) : table_(terms_by_column.size()) {
  for (const std::string& term : terms_by_column) {
    if (table_.intern(term) != table_.size() - 1)
      throw Error("the vocabulary holds the term '" + term + "' twice");
  }
}

Vocabulary::Vocabulary(TermTable table, std::vector<std::int32_t> column_of)
    : table_(std::move(table)), column_of_(std::move(column_of)) {
  std::int32_t columns = 0;
  for (const std::int32_t column : column_of_) columns += column >= 0;
  id_of_.assign(static_cast<std::size_t>(columns), -1);
  for (std::size_t id = 0; id < column_of_.size(); ++id)
    if (column_of_[id] >= 0) id_of_[static_cast<std::size_t>(column_of_[id])] = static_cast<std::int32_t>(id);
}

void Vocabulary::write(const std::string& path) const {
  std::vector<std::string_view> terms(static_cast<std::size_t>(size()));
  for (std::int32_t c = 0; c < size(); ++c) terms[static_cast<std::size_t>(c)] = term(c);
  write_vocabulary_file(path, terms);
}

Vocabulary Vocabulary::read(const std::string& path) { return Vocabulary(read_vocabulary_file(path)); }

namespace {

// The rows of all chunks, pruned terms left out, terms as their columns.
void assemble_rows(std::vector<ChunkCounts>& chunks, const std::vector<std::size_t>& bounds,
                   const std::vector<std::int32_t>& column_of, int threads, TermEntries& out) {
  out.indptr = huge_vector<std::int64_t>(bounds.back() + 1, 0);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    const ChunkCounts& chunk = chunks[c];
    for (std::size_t d = 0; d + 1 < chunk.indptr.size(); ++d) {
      std::int64_t kept = 0;
      for (std::int64_t e = chunk.indptr[d]; e < chunk.indptr[d + 1]; ++e) kept += column_of[chunk.ids[e]] >= 0;
      out.indptr[bounds[c] + d + 1] = kept;
    }
  });
  std::partial_sum(out.indptr.begin(), out.indptr.end(), out.indptr.begin());
  const auto entries = static_cast<std::size_t>(out.indptr.back());
  reserve_huge(out.columns, entries);
  reserve_huge(out.values, entries);
  out.columns.resize(entries);
  out.values.resize(entries);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    const ChunkCounts& chunk = chunks[c];
    auto at = static_cast<std::size_t>(out.indptr[bounds[c]]);
    for (std::size_t e = 0; e < chunk.ids.size(); ++e) {
      const std::int32_t column = column_of[chunk.ids[e]];
      if (column < 0) continue;
      out.columns[at] = column;
      out.values[at++] = chunk.counts[e];
    }
    chunks[c] = ChunkCounts{};  // its memory back early
  });
}

}  // namespace

FittedCounts fit_counts(const Analyzer& analyzer, std::span<const std::string_view> documents,
                        const VocabularyLimits& limits, int threads, const std::string& field_prefix) {
  // A few runs per thread at most: each run's distinct terms are looked up
  // again when the runs are merged.
  CountedRuns counted = count_in_runs(analyzer, documents, threads);
  std::vector<ChunkCounts>& chunks = counted.chunks;
  const std::vector<std::size_t>& bounds = counted.bounds;

  TermTable global = std::move(chunks[0].table);
  const std::vector<std::vector<std::int32_t>> to_global = merge_run_terms(global, chunks, threads);
  const std::size_t terms = static_cast<std::size_t>(global.size());
  if (terms == 0)  // scikit-learn's message, under the option that can change it
    throw ConfigError(field_prefix + (analyzer.options().stop_words.empty() ? "token_pattern" : "stop_words"),
                      "empty vocabulary; perhaps the documents only contain stop words");

  // Document frequencies (and total counts, which only max_features needs)
  // per chunk over its own terms (local ids: a run holds a fraction of the
  // corpus's terms, and an array of them all per run cost more to clear and
  // sum than the counting), then added up by global id.
  const bool need_tf = limits.max_features.has_value();
  std::vector<std::vector<std::int64_t>> chunk_df(chunks.size()), chunk_tf(chunks.size());
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    ChunkCounts& chunk = chunks[c];
    const std::size_t local_terms = c == 0 ? terms : to_global[c].size();
    chunk_df[c].assign(local_terms, 0);
    for (const std::int32_t id : chunk.ids) ++chunk_df[c][id];
    if (need_tf) {
      chunk_tf[c].assign(local_terms, 0);
      for (std::size_t e = 0; e < chunk.ids.size(); ++e)
        chunk_tf[c][chunk.ids[e]] += limits.binary ? 1 : static_cast<std::int64_t>(chunk.counts[e]);
    }
    if (c > 0) renumber_chunk(chunk, to_global[c]);
    if (limits.binary) std::fill(chunk.counts.begin(), chunk.counts.end(), 1.0);
  });
  std::vector<std::int64_t> df = std::move(chunk_df[0]), tf = std::move(chunk_tf[0]);
  for (std::size_t c = 1; c < chunks.size(); ++c)
    for (std::size_t l = 0; l < to_global[c].size(); ++l) {
      const auto id = static_cast<std::size_t>(to_global[c][l]);
      df[id] += chunk_df[c][l];
      if (need_tf) tf[id] += chunk_tf[c][l];
    }
  const std::vector<std::int32_t> by_name = ids_by_name(global, threads);
  const std::vector<bool> keep =
      keep_terms(by_name, df, tf, static_cast<std::int64_t>(documents.size()), limits, field_prefix);

  FittedCounts fitted;
  std::vector<std::int32_t> column_of(terms, -1);
  std::int32_t columns = 0;
  for (const std::int32_t id : by_name) {
    if (!keep[id]) continue;
    column_of[id] = columns++;
    fitted.document_frequency.push_back(df[id]);
  }

  // Rows: the kept terms, already by ascending first-seen id (CountVectorizer
  // sorts the indices while they are first-seen ids, then renumbers the
  // columns in place), as columns of the sorted vocabulary.
  TermEntries& out = fitted.entries;
  if (chunks.size() == 1 && static_cast<std::size_t>(columns) == terms) {
    // Every term kept: the one chunk's arrays become the matrix's.
    ChunkCounts& chunk = chunks[0];
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::size_t e = 0; e < chunk.ids.size(); ++e) chunk.ids[e] = column_of[chunk.ids[e]];
    out = {std::move(chunk.indptr), std::move(chunk.ids), std::move(chunk.counts)};
  } else {
    assemble_rows(chunks, bounds, column_of, threads, out);
  }
  if (2 * static_cast<std::size_t>(columns) >= terms) {
    fitted.vocabulary = Vocabulary(std::move(global), std::move(column_of));
  } else {
    // Most terms pruned (min_df, max_features): a table of the kept ones
    // rather than the corpus's, which the model would carry along.
    TermTable kept(static_cast<std::size_t>(columns));
    for (const std::int32_t id : by_name)
      if (keep[id]) kept.intern(global.term(id));
    fitted.vocabulary = Vocabulary(std::move(kept), {});
  }
  return fitted;
}

TermEntries count_known_terms(const Analyzer& analyzer, const Vocabulary& vocabulary,
                              std::span<const std::string_view> documents, int threads) {
  const std::vector<std::size_t> bounds = document_chunks(documents.size(), threads);
  std::vector<ChunkCounts> chunks(bounds.size() - 1);
  for_each_chunk(chunks.size(), threads, [&](std::size_t c) {
    ChunkCounts& chunk = chunks[c];
    Analyzer::Scratch scratch;
    std::vector<std::int32_t> terms;
    chunk.indptr.push_back(0);
    for (std::size_t d = bounds[c]; d < bounds[c + 1]; ++d) {
      terms.clear();
      analyzer.analyze(documents[d], scratch, [&](std::string_view term) {
        const std::int32_t column = vocabulary.column(term);
        if (column >= 0) terms.push_back(column);
      });
      append_row(terms, chunk.ids, chunk.counts);
      chunk.indptr.push_back(static_cast<std::int64_t>(chunk.ids.size()));
    }
  });
  TermEntries out;
  out.indptr.push_back(0);
  for (ChunkCounts& chunk : chunks) {
    const std::int64_t base = out.indptr.back();
    for (std::size_t r = 1; r < chunk.indptr.size(); ++r) out.indptr.push_back(base + chunk.indptr[r]);
    out.columns.insert(out.columns.end(), chunk.ids.begin(), chunk.ids.end());
    out.values.insert(out.values.end(), chunk.counts.begin(), chunk.counts.end());
    chunk = ChunkCounts{};
  }
  return out;
}

}  // namespace bagel
