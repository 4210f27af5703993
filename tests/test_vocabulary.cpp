#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "bagel/error.h"
#include "bagel/text/hashing.h"
#include "bagel/text/vectorizer.h"
#include "bagel/text/vocabulary.h"
#include "python_oracle.h"

namespace bagel {
namespace {

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("bagel_vocab_" + std::to_string(getpid()) + name);
}

TEST(Vocabulary, TermsWithNewlinesAndBackslashesRoundTrip) {
  const std::vector<std::string> terms = {"a", "line\nbreak", "carriage\rreturn", "back\\slash", "\\n", "",
                                          "\\e", "e", "日本語", "é"};
  const auto path = temp_file("roundtrip.txt");
  Vocabulary(terms).write(path.string());
  const Vocabulary read = Vocabulary::read(path.string());
  ASSERT_EQ(read.size(), static_cast<std::int32_t>(terms.size()));
  for (std::int32_t c = 0; c < read.size(); ++c) {
    EXPECT_EQ(read.term(c), terms[c]);
    EXPECT_EQ(read.column(terms[c]), c);
  }
  EXPECT_EQ(read.column("absent"), -1);
  std::filesystem::remove(path);
}

// Vocabulary::read is read_vocabulary_file: the same errors as bagel inspect's.
TEST(Vocabulary, BadFilesAreErrorsNamingTheLine) {
  const auto path = temp_file("bad.txt");
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"a\nb\na\n", ":3: the term \"a\" is already on line 1"},
           {"a\nb\\t\n", ":2: byte 2: a backslash must start"},
           {"a\n\xff\n", ":2: byte 1 is not UTF-8"},
           {"a\n\nb\n", ":2: empty line"},
           {"a\nb\\e\n", ":2: byte 2: \\e stands for the empty term"}}) {
    std::ofstream(path, std::ios::binary) << text;
    try {
      Vocabulary::read(path.string());
      ADD_FAILURE() << "no error for " << text;
    } catch (const FileError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  std::filesystem::remove(path);
}

TEST(Vocabulary, TermTableKeepsIdsThroughGrowth) {
  TermTable table;
  for (int i = 0; i < 100000; ++i) EXPECT_EQ(table.intern("t" + std::to_string(i)), i);
  for (int i = 0; i < 100000; i += 997) EXPECT_EQ(table.find("t" + std::to_string(i)), i);
  EXPECT_EQ(table.find("t100000"), -1);
}

// The runs' new terms join the corpus's table in one step on several
// threads: ids in the order given, after the table's own, and the table
// grown past its size finds every term, old and new, as interning would.
TEST(Vocabulary, TermTableAppendsDistinctTermsWithTheNextIds) {
  TermTable table;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(table.intern("old" + std::to_string(i)), i);
  std::vector<std::string> added = {"", "x", "exactly8", "nine char"};
  for (int i = 0; i < 60000; ++i) added.push_back((i % 2 ? "w" : "a longer term, past 8 bytes ") + std::to_string(i));
  const std::vector<std::string_view> views(added.begin(), added.end());
  table.append_distinct(views, 3);
  ASSERT_EQ(table.size(), 1000 + static_cast<std::int32_t>(added.size()));
  for (std::size_t i = 0; i < added.size(); ++i) {
    const auto id = static_cast<std::int32_t>(1000 + i);
    ASSERT_EQ(table.term(id), added[i]) << i;
    ASSERT_EQ(table.find(added[i]), id) << added[i];
  }
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(table.find("old" + std::to_string(i)), i);
  EXPECT_EQ(table.find("absent"), -1);
  EXPECT_EQ(table.intern("w1"), 1000 + 5);
  EXPECT_EQ(table.intern("new after"), 1000 + static_cast<std::int32_t>(added.size()));
}

// Chunks of equal bytes that take unequal times: the first quarter of the
// documents long and full of distinct terms, the rest short and repetitive,
// so that threads finishing early split the unclaimed documents of others.
// The counts, vocabulary and rows must not depend on how the work was cut.
TEST(Vocabulary, AnyThreadCountCountsTheCorpusAsOneThreadDoes) {
  std::mt19937 rng(5);
  std::vector<std::string> texts;
  for (int d = 0; d < 20000; ++d) {
    std::string text;
    const bool heavy = d < 5000;
    const int words = heavy ? 40 : 4;
    for (int w = 0; w < words; ++w)
      text += (heavy ? "t" + std::to_string(rng() % 200000) : "w" + std::to_string(rng() % 50)) + " ";
    texts.push_back(text);
  }
  const std::vector<std::string_view> documents(texts.begin(), texts.end());
  // min_df prunes by the document frequencies summed over the runs;
  // max_features ranks by the total counts too (binary: counts of 1).
  std::vector<VectorizerOptions> variants(3);
  variants[0].limits.min_df = {false, 2};
  variants[1].limits.max_features = 3000;
  variants[2].limits.max_features = 1000;
  variants[2].limits.binary = true;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const auto [one_vectorizer, one] = Vectorizer::fit_transform(variants[v], documents, 1);
    // At most 3 threads, as the suite's other tests: LLVM 14's libomp (the
    // sanitizer builds') leaks the thread data of a team of 2 when it next
    // makes a team of more than 4 (2,880 bytes, in a ten-line program too),
    // and LeakSanitizer fails the run for it.
    for (const int threads : {2, 3}) {
      const auto [vectorizer, many] = Vectorizer::fit_transform(variants[v], documents, threads);
      const std::string what = "options " + std::to_string(v) + ", " + std::to_string(threads) + " threads";
      ASSERT_EQ(vectorizer.features(), one_vectorizer.features()) << what;
      for (Index c = 0; c < one_vectorizer.features(); c += 97)
        EXPECT_EQ(vectorizer.feature_name(c), one_vectorizer.feature_name(c)) << what;
      EXPECT_EQ(many.indptr, one.indptr) << what;
      EXPECT_EQ(many.indices, one.indices) << what;
      EXPECT_EQ(many.values, one.values) << what;
    }
  }
}

TEST(Hashing, MurmurHashIsScikitLearnsSigned32BitHash) {
  const std::vector<std::string> keys = {"", "a", "ab", "abc", "abcd", "abcde", "the", "été", "日本語",
                                         "\xF0\x9F\x98\x80", "hello world", std::string(1000, 'x')};
  std::string script = "from sklearn.utils import murmurhash3_32\nkeys = [";
  for (const std::string& k : keys) {
    script += "bytes([";
    for (const unsigned char ch : k) script += std::to_string(ch) + ",";
    script += "]).decode(),";
  }
  script += "]\nfor k in keys: print(murmurhash3_32(k, seed=0, positive=False))\n";
  const auto out = testing::run_python(script);
  if (!out) GTEST_SKIP() << "/usr/bin/python3 with scikit-learn is needed";
  std::istringstream expected(*out);
  for (const std::string& k : keys) {
    std::int64_t want = 0;
    expected >> want;
    EXPECT_EQ(murmurhash3_32(k, 0), want) << k;
  }
}

}  // namespace
}  // namespace bagel
