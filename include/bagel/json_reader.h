// Strict reading of one JSON object: typed getters that name the key path on
// a type error, and a finish() that rejects keys nobody asked for (with the
// nearest valid key as a hint, since typos are the usual cause).
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bagel {

class JsonReader {
 public:
  // `path` is the dotted location of `object` ("" for the root).
  JsonReader(const nlohmann::json& object, std::string path);

  // Whether the object holds `key`; marks it as known, since a key the
  // reader asks about is one of its section's (finish()'s list of valid keys
  // then names it even where it is absent).
  bool has(const std::string& key);
  // The value as it is (marks the key as known); the key must exist.
  const nlohmann::json& raw(const std::string& key);
  std::string get_string(const std::string& key, const std::string& fallback);
  std::string require_string(const std::string& key);
  double get_number(const std::string& key, double fallback);
  // An integer in [lo, hi], the key's own range. A value outside it is
  // "expected an integer in [lo, hi], found ..." however it is written
  // (4294967296, digits past 2^63 or 2^64, 1e30): the range is what the user
  // can act on. A whole number written with a point or an exponent is read
  // where a double holds it exactly (below 9e15); from there on, in range,
  // it is asked in digits, which are read exactly.
  std::int64_t get_integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                           std::int64_t hi);
  bool get_bool(const std::string& key, bool fallback);
  // A non-empty array of integers, each in [lo, hi].
  std::vector<std::int64_t> get_integer_list(const std::string& key,
                                             std::vector<std::int64_t> fallback, std::int64_t lo,
                                             std::int64_t hi);
  // A nested object; marks the key as known.
  JsonReader object(const std::string& key);
  // Throws ConfigError for the first key that was never asked for.
  void finish() const;

  std::string field(const std::string& key) const;
  // The dotted location of the object ("valid"; "" for the root).
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json* find(const std::string& key);
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string> known_;
};

// Levenshtein distance; small helper for "did you mean" hints.
std::size_t edit_distance(const std::string& a, const std::string& b);

// The key of `keys` that `typed` most likely meant, or "" if none is close:
// one whose initials it is ("lr" -> learning_rate, "bs" -> batch_size), else
// the nearest by edit distance (at most max(2, a third of its length)), else
// one it begins ("learning" -> learning_rate).
std::string nearest_key(const std::string& typed, const std::set<std::string>& keys);

}  // namespace bagel
