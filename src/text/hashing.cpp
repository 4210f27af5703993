#include "bagel/text/hashing.h"

#include <algorithm>
#include <cstring>

#include "bagel/parallel_errors.h"
#include "bagel/text/vocabulary.h"

namespace bagel {

namespace {

std::uint32_t rotl32(std::uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

}  // namespace

std::int32_t murmurhash3_32(std::string_view key, std::uint32_t seed) {
  const auto* data = reinterpret_cast<const unsigned char*>(key.data());
  const std::size_t len = key.size();
  const std::size_t blocks = len / 4;
  constexpr std::uint32_t c1 = 0xcc9e2d51, c2 = 0x1b873593;
  std::uint32_t h = seed;
  for (std::size_t i = 0; i < blocks; ++i) {
    std::uint32_t k;
    std::memcpy(&k, data + 4 * i, 4);  // little-endian, as on x86
    k *= c1;
    k = rotl32(k, 15);
    k *= c2;
    h ^= k;
    h = rotl32(h, 13);
    h = h * 5 + 0xe6546b64;
  }
  const unsigned char* tail = data + 4 * blocks;
  std::uint32_t k = 0;
  switch (len & 3) {
    case 3: k ^= static_cast<std::uint32_t>(tail[2]) << 16; [[fallthrough]];
    case 2: k ^= static_cast<std::uint32_t>(tail[1]) << 8; [[fallthrough]];
    case 1:
      k ^= tail[0];
      k *= c1;
      k = rotl32(k, 15);
      k *= c2;
      h ^= k;
  }
  h ^= static_cast<std::uint32_t>(len);
  h ^= h >> 16;
  h *= 0x85ebca6b;
  h ^= h >> 13;
  h *= 0xc2b2ae35;
  h ^= h >> 16;
  return static_cast<std::int32_t>(h);
}

HashedRows hash_documents(const Analyzer& analyzer, std::span<const std::string_view> documents,
                          const HashingOptions& options, int threads) {
  const std::vector<std::size_t> bounds = document_chunks(documents.size(), threads);
  const int parts = static_cast<int>(bounds.size() - 1);
  const auto n = static_cast<std::uint32_t>(options.n_features);
  std::vector<HashedRows> chunks(static_cast<std::size_t>(parts));
  RegionErrors errors;
  // One part (fewer than kParallelDocuments) runs on the calling thread, as
  // for_each_chunk's does: a team would only spin.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (parts > 1)
  for (int c = 0; c < parts; ++c) {
    errors.run([&] {
      HashedRows& chunk = chunks[c];
      Analyzer::Scratch scratch;
      std::vector<std::pair<std::int32_t, double>> row;
      chunk.indptr.push_back(0);
      for (std::size_t d = bounds[c]; d < bounds[c + 1]; ++d) {
        row.clear();
        analyzer.analyze(documents[d], scratch, [&](std::string_view term) {
          const std::int32_t h = murmurhash3_32(term, 0);
          // abs(h) % n, with abs(INT32_MIN) taken as 2^31 (as _hashing_fast does).
          const std::uint32_t magnitude =
              h < 0 ? static_cast<std::uint32_t>(0) - static_cast<std::uint32_t>(h) : static_cast<std::uint32_t>(h);
          const double value = options.alternate_sign && h < 0 ? -1.0 : 1.0;
          row.emplace_back(static_cast<std::int32_t>(magnitude % n), value);
        });
        std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < row.size();) {
          const std::int32_t column = row[i].first;
          double sum = 0;
          for (; i < row.size() && row[i].first == column; ++i) sum += row[i].second;
          chunk.columns.push_back(column);
          chunk.values.push_back(options.binary ? 1.0 : sum);
        }
        chunk.indptr.push_back(static_cast<std::int64_t>(chunk.columns.size()));
      }
    });
  }
  errors.rethrow();
  HashedRows out;
  out.indptr.push_back(0);
  for (HashedRows& chunk : chunks) {
    const std::int64_t base = out.indptr.back();
    for (std::size_t r = 1; r < chunk.indptr.size(); ++r) out.indptr.push_back(base + chunk.indptr[r]);
    out.columns.insert(out.columns.end(), chunk.columns.begin(), chunk.columns.end());
    out.values.insert(out.values.end(), chunk.values.begin(), chunk.values.end());
    chunk = HashedRows{};
  }
  return out;
}

}  // namespace bagel
