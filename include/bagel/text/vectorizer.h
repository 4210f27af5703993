// Raw text -> CSR, exactly as scikit-learn 1.2's CountVectorizer,
// TfidfVectorizer and HashingVectorizer (word analyzer) would make it: the
// same vocabulary in the same column order, and the same data, indices and
// indptr arrays, row by row and entry by entry.
//
//   VectorizerOptions o = vectorizer_options_from_json(config["vectorizer"], "vectorizer");
//   auto [vectorizer, x] = Vectorizer::fit_transform(o, corpus.documents.views(), threads);
//   write_text_matrix("x.npz", x, false);     // what sklearn's fit_transform gives
//   CsrMatrix train = x.to_csr();             // float32, for training
//   vectorizer.save(folder) / Vectorizer::load(vectorizer.to_json(), folder)
//   TextMatrix y = vectorizer.transform(new_documents, threads);  // unknown words ignored
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/csr.h"
#include "bagel/text/tfidf.h"
#include "bagel/text/tokenizer.h"
#include "bagel/text/vocabulary.h"

namespace bagel {

enum class VectorizerKind { count, tfidf, hashing };

// The dtype of the matrix scikit-learn returns (its `dtype` argument).
enum class ValueType { int64, int32, float64, float32 };

struct VectorizerOptions {
  VectorizerKind kind = VectorizerKind::count;
  AnalyzerOptions analyzer;          // lowercase, token_pattern, ngram_range, strip_accents, stop words
  VocabularyLimits limits;           // min_df, max_df, max_features, binary
  ValueType dtype = ValueType::int64;  // float64 unless kind is count
  TfidfOptions tfidf;                // norm (also hashing's), use_idf, smooth_idf, sublinear_tf
  std::int64_t n_features = std::int64_t{1} << 20;  // hashing
  bool alternate_sign = true;                       // hashing
};

// Options from a JSON object whose keys are scikit-learn's argument names:
//   kind ("count" | "tfidf" | "hashing"), lowercase, token_pattern,
//   ngram_range ([min_n, max_n]), min_df, max_df (an integer is a number of
//   documents, a number with a point or exponent a fraction, as Python's int
//   and float), max_features (null or >= 1), binary, strip_accents (null,
//   "ascii", "unicode"), stop_words (null, a file of one word per line, or an
//   array of words), norm (null, "l1", "l2"), use_idf, smooth_idf,
//   sublinear_tf, n_features, alternate_sign, dtype ("int64", "int32",
//   "float64", "float32"; tf-idf and hashing: "float64" only).
// Unknown keys and bad values are ConfigErrors naming `path`.key. A relative
// stop_words file is read from `base_dir` (the config file's folder, as the
// config's other paths; "" for the current directory).
VectorizerOptions vectorizer_options_from_json(const nlohmann::json& section, const std::string& path,
                                               const std::filesystem::path& base_dir = {});
// scikit-learn's warning for stop words that tokenizing them with these
// options turns into tokens that are not stop words ("Your stop_words may be
// inconsistent with your preprocessing. ..."), or "" when there are none.
std::string stop_words_warning(const VectorizerOptions& options);

// The options as that JSON (stop words as an array of words).
nlohmann::json vectorizer_options_to_json(const VectorizerOptions& options);

// A vectorized corpus with its exact values: counts, or float64 tf-idf.
struct TextMatrix {
  Index rows = 0;
  Index cols = 0;
  std::vector<std::int64_t> indptr;
  std::vector<Index> indices;
  std::vector<double> values;
  ValueType dtype = ValueType::int64;

  std::int64_t nonZeros() const { return static_cast<std::int64_t>(indices.size()); }
  // bagel's working form: float32 values, each rounded to nearest (as
  // numpy's astype(np.float32), so equal to reading the scipy file).
  CsrMatrix to_csr() const;
};

// Writes the .npz that scipy.sparse.save_npz writes for scikit-learn's
// matrix: data in `dtype`, indices and indptr int32.
void write_text_matrix(const std::string& path, const TextMatrix& matrix, bool compressed);

struct TextCorpus;

class Vectorizer {
 public:
  // CountVectorizer / TfidfVectorizer .fit_transform (HashingVectorizer:
  // transform; nothing to fit). `threads` >= 1.
  static std::pair<Vectorizer, TextMatrix> fit_transform(const VectorizerOptions& options,
                                                         std::span<const std::string_view> documents,
                                                         int threads);
  // fit_transform on a corpus's documents, a fastText line split into one
  // row per label (TextCorpus::repeats_previous) counting as one document
  // to the fit, as fastText counts a line once: min_df, max_df and idf see
  // it once, and the number of documents counts it once. Each of its rows
  // gets the line's features.
  static std::pair<Vectorizer, TextMatrix> fit_transform(const VectorizerOptions& options,
                                                         const TextCorpus& corpus, int threads);
  // .transform: terms outside the vocabulary are ignored.
  TextMatrix transform(std::span<const std::string_view> documents, int threads) const;

  const VectorizerOptions& options() const { return options_; }
  Index features() const;
  // The term of a column; "" for hashing (a column is many terms).
  std::string feature_name(Index column) const;
  const std::vector<double>& idf() const { return idf_; }

  // The options and, for tf-idf, "idf" (for model.json's "vectorizer").
  nlohmann::json to_json() const;
  // FOLDER/vocabulary.txt (count and tf-idf; nothing for hashing).
  void save_vocabulary(const std::string& folder) const;
  // The same file at `path` (a model directory's temporary).
  void write_vocabulary(const std::string& path) const;
  // From to_json()'s object and FOLDER/vocabulary.txt; checks that they
  // agree (one idf per term). Errors name the file or field.
  static Vectorizer load(const nlohmann::json& settings, const std::string& folder);
  // The same with the terms given, one per column (a pickled model's).
  static Vectorizer from_terms(const nlohmann::json& settings, const std::vector<std::string>& terms);

 private:
  Vectorizer(VectorizerOptions options, const std::string& field_prefix);
  TextMatrix finish(std::vector<std::int64_t> indptr, std::vector<std::int32_t> columns,
                    std::vector<double> values) const;

  VectorizerOptions options_;
  Analyzer analyzer_;
  Vocabulary vocabulary_;
  std::vector<double> idf_;
};

}  // namespace bagel
