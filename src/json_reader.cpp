#include "bagel/json_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "bagel/error.h"

namespace bagel {

namespace {

std::string type_name(const nlohmann::json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return "null";
}

// "learning_rate" -> "lr": the first letter of each '_'-separated word.
std::string initials(const std::string& key) {
  std::string out;
  for (std::size_t i = 0; i < key.size(); ++i)
    if (key[i] != '_' && (i == 0 || key[i - 1] == '_')) out += key[i];
  return out;
}

// Whether a whole double lies in [lo, hi]. From 2^63 up, or below -2^63, it
// is past every int64 range (the cast would be undefined).
bool whole_in_range(double d, std::int64_t lo, std::int64_t hi) {
  if (d >= 0x1p63 || d < -0x1p63) return false;
  const auto i = static_cast<std::int64_t>(d);
  return i >= lo && i <= hi;
}

}  // namespace

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

JsonReader::JsonReader(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object())
    throw ConfigError(path_.empty() ? "(root)" : path_,
                      "expected an object, found " + type_name(object_));
}

std::string JsonReader::field(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

bool JsonReader::has(const std::string& key) {
  known_.insert(key);
  return object_.contains(key);
}

const nlohmann::json& JsonReader::raw(const std::string& key) {
  known_.insert(key);
  return object_.at(key);
}

const nlohmann::json* JsonReader::find(const std::string& key) {
  known_.insert(key);
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string JsonReader::get_string(const std::string& key, const std::string& fallback) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_string()) throw ConfigError(field(key), "expected a string, found " + type_name(*v));
  return v->get<std::string>();
}

std::string JsonReader::require_string(const std::string& key) {
  if (find(key) == nullptr) throw ConfigError(field(key), "is required (a string)");
  return get_string(key, "");
}

double JsonReader::get_number(const std::string& key, double fallback) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) throw ConfigError(field(key), "expected a number, found " + type_name(*v));
  return v->get<double>();
}

std::int64_t JsonReader::get_integer(const std::string& key, std::int64_t fallback, std::int64_t lo,
                                     std::int64_t hi) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  const auto out_of_range = [&] {
    return ConfigError(field(key), "expected an integer in [" + std::to_string(lo) + ", " +
                                       std::to_string(hi) + "], found " + v->dump());
  };
  // Digits past 2^63 read as unsigned: past every key's range (it had read
  // as a negative number).
  if (v->is_number_unsigned() && v->get<std::uint64_t>() > std::uint64_t{INT64_MAX}) throw out_of_range();
  if (v->is_number_integer()) {
    const auto i = v->get<std::int64_t>();
    if (i < lo || i > hi) throw out_of_range();
    return i;
  }
  // A whole double: written with a point or an exponent (1e3, 4.0), or
  // digits past 2^64, which JSON's parser keeps as a double.
  if (v->is_number_float() && std::floor(v->get<double>()) == v->get<double>()) {
    const double d = v->get<double>();
    if (!whole_in_range(d, lo, hi)) throw out_of_range();
    if (std::abs(d) < 9e15) return static_cast<std::int64_t>(d);
    // Past 2^53 a double may have rounded the number written (1e16 + 1).
    throw ConfigError(field(key), "expected an integer, found " + v->dump() +
                                      ": from 9e15 on, write it in digits alone, without a "
                                      "decimal point or an exponent");
  }
  throw ConfigError(field(key), "expected an integer, found " + type_name(*v) + " " + v->dump());
}

bool JsonReader::get_bool(const std::string& key, bool fallback) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) throw ConfigError(field(key), "expected true or false, found " + type_name(*v));
  return v->get<bool>();
}

std::vector<std::int64_t> JsonReader::get_integer_list(const std::string& key,
                                                       std::vector<std::int64_t> fallback,
                                                       std::int64_t lo, std::int64_t hi) {
  const nlohmann::json* v = find(key);
  if (v == nullptr) return fallback;
  const std::string expected = "expected a non-empty array of integers in [" + std::to_string(lo) +
                               ", " + std::to_string(hi) + "]";
  if (!v->is_array() || v->empty()) throw ConfigError(field(key), expected + ", found " + v->dump());
  std::vector<std::int64_t> out;
  for (const nlohmann::json& e : *v) {
    if (!e.is_number_integer() || e.get<std::int64_t>() < lo || e.get<std::int64_t>() > hi)
      throw ConfigError(field(key), expected + ", found " + e.dump());
    out.push_back(e.get<std::int64_t>());
  }
  return out;
}

JsonReader JsonReader::object(const std::string& key) {
  known_.insert(key);
  return JsonReader(object_.at(key), field(key));
}

void JsonReader::finish() const {
  for (const auto& [key, value] : object_.items()) {
    if (known_.count(key) != 0) continue;
    const std::string best = nearest_key(key, known_);
    std::string hint;
    if (!best.empty())
      hint = "; did you mean '" + best + "'?";
    else if (!known_.empty()) {
      hint = "; valid keys:";
      for (const std::string& k : known_) hint += " " + k;
    }
    throw ConfigError(field(key), "unknown key '" + key + "'" + hint);
  }
}

std::string nearest_key(const std::string& typed, const std::set<std::string>& keys) {
  // Abbreviations first: "lr" is learning_rate, however close it is to l1.
  for (const std::string& k : keys)
    if (typed.size() >= 2 && typed == initials(k)) return k;
  std::string best;
  std::size_t best_distance = std::numeric_limits<std::size_t>::max();
  for (const std::string& k : keys) {
    const std::size_t d = edit_distance(typed, k);
    if (d < best_distance) best_distance = d, best = k;
  }
  if (!best.empty() && best_distance <= std::max<std::size_t>(2, typed.size() / 3)) return best;
  // A truncated name ("learning" for learning_rate).
  for (const std::string& k : keys)
    if (typed.size() >= 3 && k.starts_with(typed)) return k;
  return "";
}

}  // namespace bagel
