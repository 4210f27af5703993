#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "bagel/error.h"
#include "bagel/svmlight.h"
#include "temp_dir.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

using Ints = std::vector<Index>;
using Floats = std::vector<float>;
using Names = std::vector<std::string>;

std::string data_file(const std::string& name) { return std::string(BAGEL_TEST_DATA) + "/" + name; }

// Parses a heap copy of exactly the text's size, so that a sanitizer build
// catches any read past its end (a std::string has a NUL there).
SvmlightData parse(const std::string& text, ZeroBased zero_based = ZeroBased::kAuto,
                   int chunks = 1) {
  const std::vector<char> bytes(text.begin(), text.end());
  return detail::parse_svmlight(bytes, "mem.svm", zero_based, chunks);
}

Ints indices(const CsrMatrix& m) { return {m.indices().begin(), m.indices().end()}; }
Ints indptr(const CsrMatrix& m) { return {m.indptr().begin(), m.indptr().end()}; }
Floats data(const CsrMatrix& m) { return {m.data().begin(), m.data().end()}; }

struct Failure {
  std::int64_t line = -1;
  std::string message;
};

// The line and message of the FileError parsing `text` throws.
Failure failure(const std::string& text, ZeroBased zero_based = ZeroBased::kAuto,
                int chunks = 1) {
  try {
    parse(text, zero_based, chunks);
  } catch (const FileError& e) {
    return {e.line(), e.what()};
  }
  return {};
}

#define EXPECT_FAILS_AT(text, expected_line, fragment)                                 \
  do {                                                                                 \
    const Failure f = failure(text);                                                   \
    EXPECT_EQ(f.line, expected_line) << f.message;                                     \
    EXPECT_NE(f.message.find(fragment), std::string::npos) << "message: " << f.message; \
  } while (0)

TEST(SvmlightParse, OneBasedFileIsShiftedToZeroBased) {
  const SvmlightData d = parse("1 1:0.5 3:2\n-1 2:-1.5\n");
  EXPECT_EQ(d.features.rows(), 2);
  EXPECT_EQ(d.features.cols(), 3);
  EXPECT_EQ(indptr(d.features), (Ints{0, 2, 3}));
  EXPECT_EQ(indices(d.features), (Ints{0, 2, 1}));
  EXPECT_EQ(data(d.features), (Floats{0.5f, 2.f, -1.5f}));
  EXPECT_EQ(d.labels.names, (Names{"1", "-1"}));
  EXPECT_TRUE(d.labels.numeric);
}

TEST(SvmlightParse, AutoKeepsIndicesWhenIndexZeroAppearsAnywhere) {
  const SvmlightData d = parse("1 5:1\n2 3:1\n1 0:1 1:1\n");
  EXPECT_EQ(indices(d.features), (Ints{5, 3, 0, 1}));
  EXPECT_EQ(d.features.cols(), 6);
}

TEST(SvmlightParse, ZeroBasedTrueKeepsOneBasedIndices) {
  const SvmlightData d = parse("1 1:1 2:2\n", ZeroBased::kTrue);
  EXPECT_EQ(indices(d.features), (Ints{1, 2}));
  EXPECT_EQ(d.features.cols(), 3);
}

TEST(SvmlightParse, ZeroBasedFalseShiftsIndices) {
  const SvmlightData d = parse("1 1:1 4:2\n", ZeroBased::kFalse);
  EXPECT_EQ(indices(d.features), (Ints{0, 3}));
  EXPECT_EQ(d.features.cols(), 4);
}

TEST(SvmlightParse, ZeroBasedFalseRejectsIndexZeroNamingTheLine) {
  const Failure f = failure("1 1:1\n2 0:1\n", ZeroBased::kFalse);
  EXPECT_EQ(f.line, 2) << f.message;
  EXPECT_NE(f.message.find("'0:1'"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("zero_based is false"), std::string::npos) << f.message;
}

TEST(SvmlightParse, FileWithoutFeaturesHasOneColumnInEveryMode) {
  for (ZeroBased zb : {ZeroBased::kAuto, ZeroBased::kTrue, ZeroBased::kFalse}) {
    const SvmlightData d = parse("1\n2\n", zb);
    EXPECT_EQ(d.features.rows(), 2);
    EXPECT_EQ(d.features.cols(), 1);
    EXPECT_EQ(d.features.nonZeros(), 0);
  }
}

TEST(SvmlightParse, EmptyFileHasNoRowsAndOneColumn) {
  for (const std::string text : {"", "# only a comment\n\n   \n"}) {
    const SvmlightData d = parse(text);
    EXPECT_EQ(d.features.rows(), 0);
    EXPECT_EQ(d.features.cols(), 1);
    EXPECT_EQ(indptr(d.features), (Ints{0}));
  }
}

TEST(SvmlightParse, BlankAndCommentLinesAreSkippedButCountedAsLines) {
  const std::string text = "# header\n\n1 1:1\n   # indented comment\n\t\n2 2:1\n";
  const SvmlightData d = parse(text);
  EXPECT_EQ(d.features.rows(), 2);
  EXPECT_EQ(d.labels.lines, (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(failure(text + "\n# c\n3 1:x\n").line, 9);
}

TEST(SvmlightParse, HashStartsACommentAnywhereOnALine) {
  const SvmlightData d = parse("1 1:1#2:3\n2# 1:1\n3 2:2 # tail 7:7\n");
  EXPECT_EQ(indptr(d.features), (Ints{0, 1, 1, 2}));
  EXPECT_EQ(indices(d.features), (Ints{0, 1}));
  EXPECT_EQ(d.labels.names, (Names{"1", "2", "3"}));
}

TEST(SvmlightParse, TabsCarriageReturnsAndPythonWhitespaceSeparateTokens) {
  const SvmlightData d = parse(" 1\t1:1 \v2:2\f3:3\r\n2  1:4\r\n");
  EXPECT_EQ(indptr(d.features), (Ints{0, 3, 4}));
  EXPECT_EQ(data(d.features), (Floats{1, 2, 3, 4}));
}

TEST(SvmlightParse, LoneCarriageReturnDoesNotEndALine) {
  // As in Python, '\r' is whitespace inside a line: "2" becomes a feature.
  EXPECT_FAILS_AT("1 1:1\r2 2:2\n", 1, "expected index:value, found '2'");
}

TEST(SvmlightParse, LastLineWithoutNewlineIsParsed) {
  const SvmlightData d = parse("1 1:1\n2 2:2");
  EXPECT_EQ(d.features.rows(), 2);
  EXPECT_EQ(d.labels.names, (Names{"1", "2"}));
}

TEST(SvmlightParse, LastLineWithoutNewlineMayEndInAnyToken) {
  EXPECT_EQ(data(parse("1 1:1\n2 2:2.5").features), (Floats{1.f, 2.5f}));
  EXPECT_EQ(data(parse("1 1:1\n2 2:1e2").features), (Floats{1.f, 100.f}));
  EXPECT_EQ(parse("1 1:1\n2 # comment").labels.names, (Names{"1", "2"}));
  EXPECT_EQ(parse("1 1:1\n-7").labels.names, (Names{"1", "-7"}));
  EXPECT_FAILS_AT("1 1:1\n2 2:", 2, "expected a number after ':'");
  EXPECT_FAILS_AT("1 1:1\n2 2", 2, "expected index:value");
}

TEST(SvmlightParse, QidIsAcceptedAndIgnored) {
  const SvmlightData d = parse("3 qid:1 1:1\n2 qid:abc 2:1\n1 qid:7\n");
  EXPECT_EQ(indptr(d.features), (Ints{0, 1, 2, 2}));
  EXPECT_EQ(indices(d.features), (Ints{0, 1}));
}

TEST(SvmlightParse, QidWithoutValueIsAnError) {
  EXPECT_FAILS_AT("1 1:1\n1 qid 1:1\n", 2, "expected qid:<number>");
}

TEST(SvmlightParse, QidAfterAFeatureIsAnError) {
  EXPECT_FAILS_AT("1 1:1 qid:3\n", 1, "'qid:3'");
}

TEST(SvmlightParse, LabelsAreNumbersNamedCanonically) {
  const SvmlightData d = parse("+1 1:1\n1 1:1\n1.0 1:1\n-1 1:1\n0.5 1:1\n-0 1:1\n");
  EXPECT_EQ(d.labels.names, (Names{"1", "1", "1", "-1", "0.5", "0"}));
  EXPECT_EQ(d.labels.values, (std::vector<double>{1, 1, 1, -1, 0.5, 0}));
  EXPECT_EQ(d.labels.source, "mem.svm");
}

TEST(SvmlightParse, ExplicitZerosAndNegativeValuesAreKept) {
  const SvmlightData d = parse("1 1:0 2:-0 3:-2.5e-3\n");
  EXPECT_EQ(d.features.nonZeros(), 3);
  EXPECT_EQ(data(d.features), (Floats{0.f, 0.f, -2.5e-3f}));
  EXPECT_TRUE(std::signbit(d.features.data()[1]));
}

TEST(SvmlightParse, NumbersUsePythonFloatSyntax) {
  const SvmlightData d = parse("1 +1:.5 2:5. 3:1E2 4:+7 05:-1e-2\n");
  EXPECT_EQ(data(d.features), (Floats{0.5f, 5.f, 100.f, 7.f, -0.01f}));
  EXPECT_EQ(indices(d.features), (Ints{0, 1, 2, 3, 4}));
}

TEST(SvmlightParse, ValuesRoundThroughDoubleAsSklearnDoes) {
  // Just above the midpoint of 1 and the next float: it rounds to that next
  // float when read directly, but to the double 1 + 2^-24 first (as sklearn
  // reads it), which ties to even: 1.
  const SvmlightData d = parse("1 1:1.000000059604644775390625000001\n");
  EXPECT_EQ(d.features.data()[0], 1.0f);
}

TEST(SvmlightParse, UnderflowIsAnExplicitZero) {
  const SvmlightData d = parse("1 1:1e-50 2:1e-400\n");
  EXPECT_EQ(data(d.features), (Floats{0.f, 0.f}));
}

TEST(SvmlightParse, DecreasingIndicesAreAnErrorNamingTheLine) {
  EXPECT_FAILS_AT("1 1:1\n\n1 5:2.5 2:-5.2 15:1.5\n", 3, "strictly increasing");
}

TEST(SvmlightParse, RepeatedIndexIsAnError) {
  EXPECT_FAILS_AT("1 1:2 1:3\n", 1, "found 1 after 1");
}

TEST(SvmlightParse, MissingValueIsAnError) {
  EXPECT_FAILS_AT("1 1:\n", 1, "expected a number after ':'");
  EXPECT_FAILS_AT("1 1: 2\n", 1, "expected a number after ':'");
}

TEST(SvmlightParse, NonNumericValueIsAnError) {
  EXPECT_FAILS_AT("1 2:1\n1 1:abc\n", 2, "expected a number after ':', found '1:abc'");
  EXPECT_FAILS_AT("1 1:2:3\n", 1, "'1:2:3'");
  EXPECT_FAILS_AT("1 1:0x10\n", 1, "'1:0x10'");
  EXPECT_FAILS_AT("1 1:1_0\n", 1, "'1:1_0'");
}

TEST(SvmlightParse, FeatureWithoutColonIsAnError) {
  EXPECT_FAILS_AT("1 1\n", 1, "expected index:value, found '1'");
  EXPECT_FAILS_AT("1 1 :2\n", 1, "expected index:value, found '1'");
}

TEST(SvmlightParse, NonIntegerIndexIsAnError) {
  EXPECT_FAILS_AT("1 a:1\n", 1, "expected an integer index before ':', found 'a:1'");
  EXPECT_FAILS_AT("1 :1\n", 1, "expected an integer index");
  EXPECT_FAILS_AT("1 1.5:1\n", 1, "expected an integer index");
}

TEST(SvmlightParse, NegativeIndexIsAnError) {
  EXPECT_FAILS_AT("1 -1:2\n", 1, "negative index in '-1:2'");
}

TEST(SvmlightParse, IndexTooLargeForInt32IsAnError) {
  EXPECT_FAILS_AT("1 1:1 3000000000:1\n", 1, "too large");
  EXPECT_FAILS_AT("1 99999999999999999999999:1\n", 1, "too large");
}

TEST(SvmlightParse, NonNumericLabelIsAnError) {
  EXPECT_FAILS_AT("python 2:2.5 10:-5.2\n", 1, "expected a numeric label first on the line");
  EXPECT_FAILS_AT("1 1:1\n 2:3.5 11:26\n", 2, "found '2:3.5'");
}

TEST(SvmlightParse, MultilabelLineIsNotSupported) {
  EXPECT_FAILS_AT("2 1:1\n1,2 20:27\n", 2, "multilabel labels ('1,2') are not supported");
}

TEST(SvmlightParse, NonFiniteValueIsAnError) {
  EXPECT_FAILS_AT("1 1:1\n1 1:nan\n", 2, "not finite");
  EXPECT_FAILS_AT("1 1:-inf\n", 1, "not finite");
  EXPECT_FAILS_AT("1 1:1e400\n", 1, "not finite");
}

TEST(SvmlightParse, ValueBeyondFloat32RangeIsAnError) {
  EXPECT_FAILS_AT("1 1:1e39\n", 1, "beyond float32 range");
}

TEST(SvmlightParse, NonFiniteLabelIsAnError) {
  EXPECT_FAILS_AT("nan 1:1\n", 1, "label 'nan' is not a finite number");
}

TEST(SvmlightParse, ErrorMessageShowsControlBytesSafelyAndCutsLongTokens) {
  const Failure f = failure("PK\x03\x04" + std::string(100, 'x') + " 1:1\n");
  EXPECT_NE(f.message.find("'PK??xxx"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("...'"), std::string::npos) << f.message;
  EXPECT_LT(f.message.size(), 150u);
}

// A file exercising every rule, long enough to split into many chunks.
std::string varied_file(int rows, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::ostringstream out;
  for (int r = 0; r < rows; ++r) {
    if (rng() % 7 == 0) out << "# comment " << r << "\n";
    if (rng() % 11 == 0) out << "\n";
    out << (rng() % 3 == 0 ? "+1" : rng() % 2 == 0 ? "-1" : "2.5");
    if (rng() % 5 == 0) out << " qid:" << rng() % 4;
    int index = 1 + static_cast<int>(rng() % 3);
    const int features = static_cast<int>(rng() % 6);
    for (int j = 0; j < features; ++j) {
      out << (rng() % 4 == 0 ? "\t" : " ") << index << ":" << static_cast<int>(rng() % 200) - 100
          << "." << rng() % 1000;
      index += 1 + static_cast<int>(rng() % 40);
    }
    if (rng() % 9 == 0) out << " # trailing";
    out << (rng() % 6 == 0 ? "\r\n" : "\n");
  }
  return out.str();
}

TEST(SvmlightChunks, ResultDoesNotDependOnTheChunkCount) {
  const std::string text = varied_file(500, 1);
  const SvmlightData one = parse(text, ZeroBased::kAuto, 1);
  ASSERT_EQ(one.features.rows(), 500);
  for (int chunks : {2, 3, 7, 64, 1000}) {
    const SvmlightData many = parse(text, ZeroBased::kAuto, chunks);
    EXPECT_EQ(many.features.cols(), one.features.cols()) << chunks;
    EXPECT_EQ(indptr(many.features), indptr(one.features)) << chunks;
    EXPECT_EQ(indices(many.features), indices(one.features)) << chunks;
    EXPECT_EQ(data(many.features), data(one.features)) << chunks;
    EXPECT_EQ(many.labels.names, one.labels.names) << chunks;
    EXPECT_EQ(many.labels.lines, one.labels.lines) << chunks;
  }
}

TEST(SvmlightChunks, IndexZeroInOneChunkDecidesTheShiftForAll) {
  std::string text = varied_file(300, 2);
  text += "1 0:1\n";
  for (int chunks : {1, 4}) {
    const SvmlightData d = parse(text, ZeroBased::kAuto, chunks);
    EXPECT_EQ(d.features.indices().back(), 0) << chunks;
    EXPECT_EQ(d.features.indices()[0], parse(varied_file(300, 2), ZeroBased::kTrue).features.indices()[0]);
  }
}

TEST(SvmlightChunks, ErrorLineIsTheSameForAnyChunkCount) {
  const std::string head = varied_file(400, 3);
  const auto head_lines = std::count(head.begin(), head.end(), '\n');
  const std::string text = head + "1 3:1 2:1\n" + varied_file(400, 4) + "1 x:1\n";
  for (int chunks : {1, 2, 5, 16}) {
    const Failure f = failure(text, ZeroBased::kAuto, chunks);
    EXPECT_EQ(f.line, head_lines + 1) << chunks << ": " << f.message;
    EXPECT_NE(f.message.find("strictly increasing"), std::string::npos) << f.message;
  }
}

TEST(SvmlightChunks, AutomaticChunkingMatchesOneChunk) {
  const std::string text = varied_file(2000, 5);
  const SvmlightData one = parse(text, ZeroBased::kAuto, 1);
  const SvmlightData automatic = parse(text, ZeroBased::kAuto, 0);
  EXPECT_EQ(indices(automatic.features), indices(one.features));
  EXPECT_EQ(automatic.labels.lines, one.labels.lines);
}

// tests/data/svm_sklearn_*.txt are verbatim copies of scikit-learn 1.2's
// sklearn/datasets/tests/data/svmlight_*.txt.
TEST(SvmlightRead, ReadsSklearnsClassificationFixture) {
  // sklearn's svmlight_classification.txt, read by hand: one-based indices,
  // a tab, inline comments, an empty row, an explicit zero.
  const SvmlightData d = read_svmlight(data_file("svm_sklearn_classification.txt"));
  EXPECT_EQ(d.features.rows(), 6);
  EXPECT_EQ(d.features.cols(), 21);
  EXPECT_EQ(indptr(d.features), (Ints{0, 3, 5, 6, 7, 7, 8}));
  EXPECT_EQ(indices(d.features), (Ints{2, 10, 15, 5, 12, 20, 1, 2}));
  EXPECT_EQ(data(d.features),
            (Floats{2.5f, -5.2f, 1.5f, 1.f, -3.f, 27.f, static_cast<float>(1.234567890123456e10), 0.f}));
  EXPECT_EQ(d.labels.names, (Names{"1", "2", "3", "4", "1", "2"}));
  EXPECT_EQ(d.labels.lines, (std::vector<std::int64_t>{3, 4, 6, 7, 8, 9}));
}

TEST(SvmlightRead, RejectsSklearnsInvalidFixturesNamingFileAndLine) {
  for (const auto& [name, fragment] :
       std::vector<std::pair<std::string, std::string>>{
           {"svm_sklearn_invalid.txt", "numeric label"},
           {"svm_sklearn_invalid_order.txt", "strictly increasing"},
           {"svm_sklearn_multilabel.txt", "multilabel"}}) {
    const std::string path = data_file(name);
    try {
      read_svmlight(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const FileError& e) {
      EXPECT_EQ(e.file(), path);
      EXPECT_GT(e.line(), 0) << name;
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
}

TEST(SvmlightRead, FileFillingWholePagesWithoutFinalNewlineIsRead) {
  // The mapping ends exactly at a page boundary: reading one byte past the
  // last value would fault.
  TempDir dir;
  std::string text;
  while (text.size() < 8192 - 16) text += "1 1:1 2:2\n";
  std::string last = "2 3:3";
  while (text.size() + last.size() < 8192) last += "3";
  const SvmlightData d = read_svmlight(dir.write("page.svm", text + last));
  EXPECT_EQ(d.features.rows(), static_cast<Index>(std::count(text.begin(), text.end(), '\n') + 1));
  EXPECT_EQ(d.features.data()[d.features.nonZeros() - 1], std::stof(last.substr(4)));
}

TEST(SvmlightRead, MissingFileIsAFileError) {
  EXPECT_THROW(read_svmlight("/nonexistent/x.svm"), FileError);
}

TEST(SvmlightZeroBased, ParsesTheThreeSettings) {
  EXPECT_EQ(parse_zero_based("auto", "zero_based"), ZeroBased::kAuto);
  EXPECT_EQ(parse_zero_based("true", "zero_based"), ZeroBased::kTrue);
  EXPECT_EQ(parse_zero_based("false", "zero_based"), ZeroBased::kFalse);
}

TEST(SvmlightZeroBased, OtherTextIsAConfigErrorNamingTheField) {
  try {
    parse_zero_based("yes", "data.zero_based");
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.field(), "data.zero_based");
    EXPECT_NE(std::string(e.what()).find("'yes'"), std::string::npos) << e.what();
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(SvmlightWrite, WritesLabelThenSortedPairs) {
  TempDir dir;
  const CsrMatrix m(2, 4, {0, 2, 2}, {1, 3}, {0.5f, -2.f});
  write_svmlight(dir.path("a.svm"), m, {"1", "-1"}, true);
  EXPECT_EQ(read_text(dir.path("a.svm")), "1 1:0.5 3:-2\n-1\n");
  write_svmlight(dir.path("b.svm"), m, {"1", "-1"}, false);
  EXPECT_EQ(read_text(dir.path("b.svm")), "1 2:0.5 4:-2\n-1\n");
}

TEST(SvmlightWrite, UnsortedRowIsWrittenSortedAndRepeatedIndicesSummed) {
  TempDir dir;
  const CsrMatrix m(1, 6, {0, 4}, {5, 2, 5, 0}, {1.f, 2.f, 0.25f, 3.f});
  write_svmlight(dir.path("a.svm"), m, {"0"}, true);
  EXPECT_EQ(read_text(dir.path("a.svm")), "0 0:3 2:2 5:1.25\n");
}

TEST(SvmlightWrite, RoundTripsRandomMatricesExactly) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1e6f, 1e6f);
  std::uniform_real_distribution<float> exponent(-30.f, 30.f);
  std::vector<Index> ptr{0}, idx;
  std::vector<float> vals;
  std::vector<std::string> labels;
  const Index rows = 200, cols = 1000;
  for (Index r = 0; r < rows; ++r) {
    for (Index c = static_cast<Index>(rng() % 50); c < cols; c += 1 + static_cast<Index>(rng() % 200)) {
      idx.push_back(c);
      vals.push_back(r % 2 == 0 ? value(rng) : std::pow(10.f, exponent(rng)));
    }
    ptr.push_back(static_cast<Index>(idx.size()));
    labels.push_back(r % 3 == 0 ? "-1" : "1");
  }
  const CsrMatrix m(rows, cols, ptr, idx, vals);
  TempDir dir;
  for (bool zero_based : {true, false}) {
    const std::string path = dir.path(zero_based ? "z.svm" : "o.svm");
    write_svmlight(path, m, labels, zero_based);
    const SvmlightData back =
        read_svmlight(path, zero_based ? ZeroBased::kTrue : ZeroBased::kFalse);
    EXPECT_EQ(indptr(back.features), ptr);
    EXPECT_EQ(indices(back.features), idx);
    EXPECT_EQ(data(back.features), vals);
    EXPECT_EQ(back.labels.names, labels);
  }
}

TEST(SvmlightWrite, NonNumericLabelIsAnErrorAndNothingIsWritten) {
  TempDir dir;
  const CsrMatrix m(2, 1, {0, 0, 0}, {}, {});
  EXPECT_THROW(write_svmlight(dir.path("a.svm"), m, {"1", "spam"}), FileError);
  EXPECT_EQ(dir.file_count(), 0u);
}

TEST(SvmlightWrite, LabelCountMustMatchRows) {
  TempDir dir;
  const CsrMatrix m(2, 1, {0, 0, 0}, {}, {});
  EXPECT_THROW(write_svmlight(dir.path("a.svm"), m, {"1"}), FileError);
}

TEST(SvmlightWrite, ReplacesAnExistingFileAndLeavesNoTemporary) {
  TempDir dir;
  const std::string path = dir.write("a.svm", "old contents that are longer than the new\n");
  write_svmlight(path, CsrMatrix(1, 2, {0, 1}, {1}, {4.f}), {"2"});
  EXPECT_EQ(read_text(path), "2 1:4\n");
  EXPECT_EQ(dir.file_count(), 1u);
}

}  // namespace
}  // namespace bagel
