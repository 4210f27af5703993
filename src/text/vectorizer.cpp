#include "bagel/text/vectorizer.h"

#include <cstdio>
#include <filesystem>
#include <limits>

#include "bagel/error.h"
#include "bagel/json_reader.h"
#include "bagel/labels.h"
#include "bagel/mapped_file.h"
#include "bagel/npz.h"
#include "bagel/text/hashing.h"
#include "bagel/text/text_corpus.h"
#include "bagel/text/utf8.h"

namespace bagel {

namespace {

template <class Enum>
struct Named {
  const char* name;
  Enum value;
};

constexpr Named<VectorizerKind> kKinds[] = {
    {"count", VectorizerKind::count}, {"tfidf", VectorizerKind::tfidf}, {"hashing", VectorizerKind::hashing}};
constexpr Named<ValueType> kTypes[] = {{"int64", ValueType::int64},
                                       {"int32", ValueType::int32},
                                       {"float64", ValueType::float64},
                                       {"float32", ValueType::float32}};
constexpr Named<Norm> kNorms[] = {{"l1", Norm::l1}, {"l2", Norm::l2}};
constexpr Named<StripAccents> kAccents[] = {{"ascii", StripAccents::ascii},
                                            {"unicode", StripAccents::unicode}};

template <class Enum, std::size_t N>
std::string choices(const Named<Enum> (&names)[N]) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "\"" : ", \"") + std::string(n.name) + "\"";
  return text;
}

template <class Enum, std::size_t N>
Enum parse_name(const nlohmann::json& value, const Named<Enum> (&names)[N], const std::string& field) {
  if (value.is_string())
    for (const auto& n : names)
      if (value.get<std::string>() == n.name) return n.value;
  throw ConfigError(field, "expected one of " + choices(names) + ", found " + value.dump());
}

template <class Enum, std::size_t N>
std::string name_of(Enum value, const Named<Enum> (&names)[N]) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "";
}

// None-or-name: null (scikit-learn's None) gives `none`.
template <class Enum, std::size_t N>
Enum parse_optional_name(JsonReader& reader, const std::string& key, const Named<Enum> (&names)[N],
                         Enum none, Enum fallback) {
  if (!reader.has(key)) return fallback;
  const nlohmann::json& value = reader.raw(key);
  if (value.is_null()) return none;
  return parse_name(value, names, reader.field(key));
}

// scikit-learn's min_df / max_df: an int >= 0 is a document count, a float
// in [0, 1] a fraction of the documents.
DocumentLimit parse_limit(JsonReader& reader, const std::string& key, DocumentLimit fallback) {
  if (!reader.has(key)) return fallback;
  const nlohmann::json& value = reader.raw(key);
  if (value.is_number_integer() && value.get<std::int64_t>() >= 0)
    return {false, static_cast<double>(value.get<std::int64_t>())};
  if (value.is_number_float() && value.get<double>() >= 0 && value.get<double>() <= 1)
    return {true, value.get<double>()};
  throw ConfigError(reader.field(key),
                    "expected an integer >= 0 (a number of documents) or a number in [0.0, 1.0] written "
                    "with a point (a fraction of them), found " + value.dump());
}

nlohmann::json limit_json(const DocumentLimit& limit) {
  if (limit.fraction) return limit.value;
  return static_cast<std::int64_t>(limit.value);
}

std::vector<std::string> read_stop_words(const std::string& path, const std::string& field) {
  std::vector<std::string> words;
  std::unique_ptr<MappedFile> file;
  try {
    file = std::make_unique<MappedFile>(path);
  } catch (const Error& e) {
    throw ConfigError(field, e.what());
  }
  std::string_view text(reinterpret_cast<const char*>(file->bytes().data()), file->bytes().size());
  // A UTF-8 byte order mark (editors on Windows write one) is not part of
  // the first word, as in labels files.
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::int64_t number = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    ++number;
    // Spaces and tabs around a word are not part of it (a token never holds
    // them): "the " had silently removed nothing.
    const std::size_t first = line.find_first_not_of(" \t\r");
    line = first == std::string_view::npos ? std::string_view{} : line.substr(first);
    line = line.substr(0, line.find_last_not_of(" \t\r") + 1);
    if (invalid_utf8_at(line) != std::string_view::npos)
      throw FileError(path, "a stop word that is not UTF-8 text", number);
    if (!line.empty()) words.emplace_back(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return words;
}

std::vector<std::string> parse_stop_words(JsonReader& reader, const std::filesystem::path& base_dir) {
  if (!reader.has("stop_words")) return {};
  const nlohmann::json& value = reader.raw("stop_words");
  const std::string field = reader.field("stop_words");
  if (value.is_null()) return {};
  if (value.is_string()) {
    if (value.get<std::string>() == "english")
      throw ConfigError(field, "scikit-learn's built-in \"english\" list is not included; give a file "
                               "of one stop word per line");
    const std::filesystem::path file(value.get<std::string>());
    return read_stop_words(file.is_absolute() ? file.string() : (base_dir / file).lexically_normal().string(),
                           field);
  }
  if (value.is_array()) {
    std::vector<std::string> words;
    for (const nlohmann::json& w : value) {
      if (!w.is_string()) throw ConfigError(field, "expected an array of strings, found " + w.dump());
      words.push_back(w.get<std::string>());
    }
    return words;
  }
  throw ConfigError(field, "expected null, a file name or an array of words, found " + value.dump());
}

}  // namespace

VectorizerOptions vectorizer_options_from_json(const nlohmann::json& section, const std::string& path,
                                               const std::filesystem::path& base_dir) {
  if (!section.is_object()) throw ConfigError(path, "expected an object, found " + section.dump());
  JsonReader reader(section, path);
  VectorizerOptions o;
  if (reader.has("kind")) o.kind = parse_name(reader.raw("kind"), kKinds, reader.field("kind"));
  AnalyzerOptions& a = o.analyzer;
  a.lowercase = reader.get_bool("lowercase", a.lowercase);
  a.token_pattern = reader.get_string("token_pattern", a.token_pattern);
  const std::vector<std::int64_t> range = reader.get_integer_list("ngram_range", {1, 1}, 1, 1000);
  if (range.size() != 2 || range[0] > range[1])
    throw ConfigError(reader.field("ngram_range"), "expected [min_n, max_n] with 1 <= min_n <= max_n");
  a.ngram_min = static_cast<int>(range[0]);
  a.ngram_max = static_cast<int>(range[1]);
  a.strip_accents = parse_optional_name(reader, "strip_accents", kAccents, StripAccents::none, StripAccents::none);
  a.stop_words = parse_stop_words(reader, base_dir);
  o.limits.min_df = parse_limit(reader, "min_df", o.limits.min_df);
  o.limits.max_df = parse_limit(reader, "max_df", o.limits.max_df);
  if (reader.has("max_features") && !reader.raw("max_features").is_null()) {
    // A count, never a fraction: where min_df and max_df read 1.0 as all the
    // documents, 1.0 here had silently kept one term (scikit-learn refuses it).
    if (reader.raw("max_features").is_number_float())
      throw ConfigError(reader.field("max_features"),
                        "expected null or an integer >= 1 (a count of terms, not a fraction), found " +
                            reader.raw("max_features").dump());
    o.limits.max_features =
        reader.get_integer("max_features", 0, 1, std::numeric_limits<std::int64_t>::max());
  }
  o.limits.binary = reader.get_bool("binary", false);
  const bool count = o.kind == VectorizerKind::count;
  o.dtype = reader.has("dtype") ? parse_name(reader.raw("dtype"), kTypes, reader.field("dtype"))
                                : (count ? ValueType::int64 : ValueType::float64);
  if (!count && o.dtype != ValueType::float64)
    throw ConfigError(reader.field("dtype"), "tf-idf and hashing values are written as \"float64\" only "
                                             "(the float32 arithmetic of numpy is not reproduced)");
  o.tfidf.norm = parse_optional_name(reader, "norm", kNorms, Norm::none, count ? Norm::none : Norm::l2);
  o.tfidf.use_idf = reader.get_bool("use_idf", true);
  o.tfidf.smooth_idf = reader.get_bool("smooth_idf", true);
  o.tfidf.sublinear_tf = reader.get_bool("sublinear_tf", false);
  o.n_features = reader.get_integer("n_features", o.n_features, 1, INT32_MAX - 1);  // scikit-learn's [1, 2^31 - 1)
  o.alternate_sign = reader.get_bool("alternate_sign", true);
  const char* wrong = nullptr;
  if (count && section.contains("norm")) wrong = "norm";
  for (const char* key : {"use_idf", "smooth_idf", "sublinear_tf"})
    if (o.kind != VectorizerKind::tfidf && section.contains(key)) wrong = key;
  for (const char* key : {"n_features", "alternate_sign"})
    if (o.kind != VectorizerKind::hashing && section.contains(key)) wrong = key;
  for (const char* key : {"min_df", "max_df", "max_features"})
    if (o.kind == VectorizerKind::hashing && section.contains(key)) wrong = key;
  if (wrong != nullptr)
    throw ConfigError(reader.field(wrong), std::string("not an option of the \"") +
                                               name_of(o.kind, kKinds) + "\" vectorizer");
  reader.finish();
  // The token pattern compiles now, so that a bad one is the config's (or
  // the --set's) error before any text is read.
  if (section.contains("token_pattern")) Analyzer(o.analyzer, path.empty() ? "" : path + ".");
  return o;
}

namespace {

// Python's repr() of a str, as scikit-learn's %r shows a token: single
// quotes unless it holds one and no double quote; backslash escapes for the
// quote, the backslash and ASCII control characters (other characters that
// Python would escape are shown as they are).
std::string python_repr(std::string_view s) {
  const char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (b < 0x20 || b == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + quote;
}

}  // namespace

std::string stop_words_warning(const VectorizerOptions& options) {
  const std::vector<std::string> tokens = Analyzer(options.analyzer, "vectorizer.").inconsistent_stop_words();
  if (tokens.empty()) return "";
  std::string list;
  for (const std::string& token : tokens) list += (list.empty() ? "" : ", ") + python_repr(token);
  return "Your stop_words may be inconsistent with your preprocessing. Tokenizing the stop words "
         "generated tokens [" + list + "] not in stop_words.";
}

nlohmann::json vectorizer_options_to_json(const VectorizerOptions& o) {
  const AnalyzerOptions& a = o.analyzer;
  nlohmann::json j = {{"kind", name_of(o.kind, kKinds)},
                      {"lowercase", a.lowercase},
                      {"token_pattern", a.token_pattern},
                      {"ngram_range", {a.ngram_min, a.ngram_max}},
                      {"strip_accents", a.strip_accents == StripAccents::none
                                            ? nlohmann::json(nullptr)
                                            : nlohmann::json(name_of(a.strip_accents, kAccents))},
                      {"stop_words", a.stop_words.empty() ? nlohmann::json(nullptr) : nlohmann::json(a.stop_words)},
                      {"binary", o.limits.binary},
                      {"dtype", name_of(o.dtype, kTypes)}};
  if (o.kind != VectorizerKind::hashing) {
    j["min_df"] = limit_json(o.limits.min_df);
    j["max_df"] = limit_json(o.limits.max_df);
    j["max_features"] = o.limits.max_features ? nlohmann::json(*o.limits.max_features) : nlohmann::json(nullptr);
  }
  if (o.kind != VectorizerKind::count)
    j["norm"] = o.tfidf.norm == Norm::none ? nlohmann::json(nullptr) : nlohmann::json(name_of(o.tfidf.norm, kNorms));
  if (o.kind == VectorizerKind::tfidf) {
    j["use_idf"] = o.tfidf.use_idf;
    j["smooth_idf"] = o.tfidf.smooth_idf;
    j["sublinear_tf"] = o.tfidf.sublinear_tf;
  }
  if (o.kind == VectorizerKind::hashing) {
    j["n_features"] = o.n_features;
    j["alternate_sign"] = o.alternate_sign;
  }
  return j;
}

CsrMatrix TextMatrix::to_csr() const {
  if (nonZeros() > INT32_MAX)
    throw Error("the matrix has " + std::to_string(nonZeros()) +
                " non-zeros; bagel's CSR holds at most 2^31 - 1");
  std::vector<Index> ptr(indptr.begin(), indptr.end());
  std::vector<float> data(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) data[i] = static_cast<float>(values[i]);
  return CsrMatrix(rows, cols, std::move(ptr), indices, std::move(data));
}

void write_text_matrix(const std::string& path, const TextMatrix& m, bool compressed) {
  if (m.nonZeros() > INT32_MAX)
    throw FileError(path, "more than 2^31 - 1 non-zeros (scipy would use int64 indices)");
  const std::vector<Index> indptr(m.indptr.begin(), m.indptr.end());
  // The values converted to the dtype as they are written.
  const auto as = [&](auto typed) {
    using T = decltype(typed);
    return ArrayBytes{m.values.size() * sizeof(T), [&m](std::uint64_t first, std::span<std::byte> out) {
                        const std::size_t begin = first / sizeof(T);
                        for (std::size_t i = 0; i < out.size() / sizeof(T); ++i) {
                          const T v = static_cast<T>(m.values[begin + i]);
                          std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
                        }
                      }};
  };
  switch (m.dtype) {
    case ValueType::int64: return write_npz_csr_arrays(path, m.rows, m.cols, indptr, m.indices, "<i8", as(std::int64_t{}), compressed);
    case ValueType::int32: return write_npz_csr_arrays(path, m.rows, m.cols, indptr, m.indices, "<i4", as(std::int32_t{}), compressed);
    case ValueType::float64:
      return write_npz_csr_arrays(path, m.rows, m.cols, indptr, m.indices, "<f8", as(double{}), compressed,
                                  std::as_bytes(std::span<const double>(m.values)));
    case ValueType::float32: return write_npz_csr_arrays(path, m.rows, m.cols, indptr, m.indices, "<f4", as(float{}), compressed);
  }
}

Vectorizer::Vectorizer(VectorizerOptions options, const std::string& field_prefix)
    : options_(std::move(options)), analyzer_(options_.analyzer, field_prefix) {}

std::pair<Vectorizer, TextMatrix> Vectorizer::fit_transform(const VectorizerOptions& options,
                                                            std::span<const std::string_view> documents,
                                                            int threads) {
  Vectorizer v(options, "vectorizer.");
  if (documents.empty()) throw Error("no documents to vectorize");
  if (options.kind == VectorizerKind::hashing) {
    TextMatrix m = v.transform(documents, threads);
    return {std::move(v), std::move(m)};
  }
  FittedCounts fitted = fit_counts(v.analyzer_, documents, options.limits, threads, "vectorizer.");
  v.vocabulary_ = std::move(fitted.vocabulary);
  if (options.kind == VectorizerKind::tfidf && options.tfidf.use_idf)
    v.idf_ = inverse_document_frequency(fitted.document_frequency,
                                        static_cast<std::int64_t>(documents.size()), options.tfidf.smooth_idf);
  TextMatrix m = v.finish(std::move(fitted.entries.indptr), std::move(fitted.entries.columns),
                          std::move(fitted.entries.values));
  return {std::move(v), std::move(m)};
}

std::pair<Vectorizer, TextMatrix> Vectorizer::fit_transform(const VectorizerOptions& options,
                                                            const TextCorpus& corpus, int threads) {
  std::vector<std::string_view> distinct;
  std::vector<std::size_t> source;  // each row's index in `distinct`
  distinct.reserve(corpus.size());
  source.reserve(corpus.size());
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    if (!corpus.repeats_previous(i)) distinct.push_back(corpus.documents[i]);
    source.push_back(distinct.size() - 1);
  }
  auto fitted = fit_transform(options, distinct, threads);
  if (distinct.size() == corpus.size()) return fitted;
  const TextMatrix& m = fitted.second;
  TextMatrix rows;
  rows.rows = static_cast<Index>(source.size());
  rows.cols = m.cols;
  rows.dtype = m.dtype;
  rows.indptr.reserve(source.size() + 1);
  rows.indptr.push_back(0);
  for (const std::size_t r : source) {
    const auto begin = static_cast<std::size_t>(m.indptr[r]), end = static_cast<std::size_t>(m.indptr[r + 1]);
    rows.indices.insert(rows.indices.end(), m.indices.begin() + begin, m.indices.begin() + end);
    rows.values.insert(rows.values.end(), m.values.begin() + begin, m.values.begin() + end);
    rows.indptr.push_back(static_cast<std::int64_t>(rows.indices.size()));
  }
  return {std::move(fitted.first), std::move(rows)};
}

TextMatrix Vectorizer::transform(std::span<const std::string_view> documents, int threads) const {
  if (options_.kind == VectorizerKind::hashing) {
    HashedRows rows = hash_documents(analyzer_, documents,
                                     {options_.n_features, options_.alternate_sign, options_.limits.binary}, threads);
    return finish(std::move(rows.indptr), std::move(rows.columns), std::move(rows.values));
  }
  TermEntries entries = count_known_terms(analyzer_, vocabulary_, documents, threads);
  return finish(std::move(entries.indptr), std::move(entries.columns), std::move(entries.values));
}

// The counts (or hashed values) become the matrix scikit-learn returns.
TextMatrix Vectorizer::finish(std::vector<std::int64_t> indptr, std::vector<std::int32_t> columns,
                              std::vector<double> values) const {
  if (options_.kind != VectorizerKind::hashing && options_.limits.binary)
    std::fill(values.begin(), values.end(), 1.0);
  if (options_.kind == VectorizerKind::tfidf)
    apply_tfidf(indptr, columns, values, idf_, options_.tfidf);
  else if (options_.kind == VectorizerKind::hashing)
    normalize_rows(indptr, values, options_.tfidf.norm);
  TextMatrix m;
  m.rows = static_cast<Index>(indptr.size() - 1);
  m.cols = features();
  m.indptr = std::move(indptr);
  m.indices = std::move(columns);
  m.values = std::move(values);
  m.dtype = options_.dtype;
  return m;
}

Index Vectorizer::features() const {
  return options_.kind == VectorizerKind::hashing ? static_cast<Index>(options_.n_features)
                                                  : vocabulary_.size();
}

std::string Vectorizer::feature_name(Index column) const {
  if (options_.kind == VectorizerKind::hashing) return "";
  return std::string(vocabulary_.term(column));
}

nlohmann::json Vectorizer::to_json() const {
  nlohmann::json j = vectorizer_options_to_json(options_);
  if (!idf_.empty()) j["idf"] = idf_;
  if (options_.kind != VectorizerKind::hashing) j["features"] = vocabulary_.size();
  return j;
}

void Vectorizer::save_vocabulary(const std::string& folder) const {
  write_vocabulary((std::filesystem::path(folder) / "vocabulary.txt").string());
}

void Vectorizer::write_vocabulary(const std::string& path) const {
  if (options_.kind == VectorizerKind::hashing) return;
  vocabulary_.write(path);
}

namespace {

// What Vectorizer::load and from_terms read: the options, the idf and the
// term count of model.json's "vectorizer".
struct SavedSettings {
  nlohmann::json options;
  std::vector<double> idf;
  std::int64_t features = -1;
};

SavedSettings saved_settings(const nlohmann::json& settings) {
  nlohmann::json options = settings;
  std::vector<double> idf;
  std::int64_t features = -1;
  if (options.is_object() && options.contains("idf")) {
    if (!options["idf"].is_array()) throw ConfigError("vectorizer.idf", "expected an array of numbers");
    for (const nlohmann::json& x : options["idf"]) {
      if (!x.is_number()) throw ConfigError("vectorizer.idf", "expected an array of numbers, found " + x.dump());
      idf.push_back(x.get<double>());
    }
    options.erase("idf");
  }
  if (options.is_object() && options.contains("features")) {
    if (!options["features"].is_number_integer()) throw ConfigError("vectorizer.features", "expected an integer");
    features = options["features"].get<std::int64_t>();
    options.erase("features");
  }
  return {std::move(options), std::move(idf), features};
}

}  // namespace

Vectorizer Vectorizer::from_terms(const nlohmann::json& settings, const std::vector<std::string>& terms) {
  SavedSettings saved = saved_settings(settings);
  Vectorizer v(vectorizer_options_from_json(saved.options, "vectorizer"), "vectorizer.");
  if (v.options_.kind == VectorizerKind::hashing) return v;
  v.vocabulary_ = Vocabulary(terms);
  const bool needs_idf = v.options_.kind == VectorizerKind::tfidf && v.options_.tfidf.use_idf;
  if (needs_idf && saved.idf.size() != terms.size())
    throw ConfigError("vectorizer.idf", "has " + std::to_string(saved.idf.size()) + " values for " +
                                            std::to_string(terms.size()) + " terms");
  if (needs_idf) v.idf_ = std::move(saved.idf);
  return v;
}

Vectorizer Vectorizer::load(const nlohmann::json& settings, const std::string& folder) {
  SavedSettings saved = saved_settings(settings);
  const std::int64_t features = saved.features;
  std::vector<double>& idf = saved.idf;
  Vectorizer v(vectorizer_options_from_json(saved.options, "vectorizer"), "vectorizer.");
  if (v.options_.kind == VectorizerKind::hashing) return v;
  const std::string path = (std::filesystem::path(folder) / "vocabulary.txt").string();
  v.vocabulary_ = Vocabulary::read(path);
  if (features >= 0 && features != v.vocabulary_.size())
    throw FileError(path, "has " + std::to_string(v.vocabulary_.size()) + " terms; the settings say " +
                              std::to_string(features));
  const bool needs_idf = v.options_.kind == VectorizerKind::tfidf && v.options_.tfidf.use_idf;
  if (needs_idf && static_cast<std::int64_t>(idf.size()) != v.vocabulary_.size())
    throw ConfigError("vectorizer.idf", "has " + std::to_string(idf.size()) + " values for " +
                                            std::to_string(v.vocabulary_.size()) + " terms in " + path);
  if (needs_idf) v.idf_ = std::move(idf);
  return v;
}

}  // namespace bagel
