#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bagel/error.h"
#include "bagel/labels.h"
#include "bagel/npy.h"
#include "temp_dir.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

using Names = std::vector<std::string>;

std::string data_file(const std::string& name) { return std::string(BAGEL_TEST_DATA) + "/" + name; }

// A fresh folder for files whose exact bytes matter (CRLF, no final newline),
// which a checkout could rewrite if they were fixtures.
// The message of the FileError `f` throws, or "" if it throws none.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

TEST(LabelsNumberName, IntegersHaveNoFraction) {
  EXPECT_EQ(number_name(1.0), "1");
  EXPECT_EQ(number_name(-3.0), "-3");
  EXPECT_EQ(number_name(1e15), "1000000000000000");
}

TEST(LabelsNumberName, NegativeZeroIsZero) { EXPECT_EQ(number_name(-0.0), "0"); }

TEST(LabelsNumberName, FractionsUseTheShortestRoundTripDigits) {
  EXPECT_EQ(number_name(0.1), "0.1");
  EXPECT_EQ(number_name(2.5), "2.5");
  EXPECT_EQ(number_name(1.0 / 3.0), "0.3333333333333333");
}

TEST(LabelsNumberName, FollowsPythonReprForVerySmallAndLargeNumbers) {
  EXPECT_EQ(number_name(0.0001), "0.0001");
  EXPECT_EQ(number_name(1e-5), "1e-05");
  EXPECT_EQ(number_name(1e16), "1e+16");
  EXPECT_EQ(number_name(-2.5e-7), "-2.5e-07");
}

TEST(LabelsNumberName, NamesParseBackToTheSameNumber) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-30, 30);
  for (int i = 0; i < 1000; ++i) {
    const double v = std::pow(10.0, exponent(rng)) * (i % 2 == 0 ? 1 : -1);
    double back = 0;
    ASSERT_TRUE(detail::parse_finite(number_name(v), back)) << number_name(v);
    EXPECT_EQ(back, v);
  }
}

TEST(LabelsParse, AcceptsPythonFloatSyntax) {
  double v = 0;
  EXPECT_TRUE(detail::parse_finite("+1", v));
  EXPECT_EQ(v, 1.0);
  EXPECT_TRUE(detail::parse_finite(".5", v));
  EXPECT_EQ(v, 0.5);
  EXPECT_TRUE(detail::parse_finite("5.", v));
  EXPECT_EQ(v, 5.0);
  EXPECT_TRUE(detail::parse_finite("-1.5E2", v));
  EXPECT_EQ(v, -150.0);
}

TEST(LabelsParse, RejectsWhatPythonFloatRejects) {
  double v = 0;
  for (const char* text : {"", "+", "+-1", "++1", "1e", "0x10", "1,2", "1 2", "abc", "1.2.3"})
    EXPECT_FALSE(detail::parse_finite(text, v)) << text;
}

TEST(LabelsParse, NonFiniteIsNotFinite) {
  double v = 0;
  for (const char* text : {"nan", "inf", "-infinity", "1e400"})
    EXPECT_FALSE(detail::parse_finite(text, v)) << text;
}

TEST(LabelsParse, UnderflowBeyondDoubleRangeIsZeroAsInPython) {
  double v = 1;
  const std::string text = "1e-400";
  EXPECT_EQ(detail::parse_number(text.data(), text.data() + text.size(), v),
            text.data() + text.size());
  EXPECT_EQ(v, 0.0);
}

TEST(LabelsMake, AllNumbersMakeNumericLabelsWithCanonicalNames) {
  const RawLabels raw = make_labels(Names{"+1", "1.0", "01", " -1 ", "2.50"}, "y.txt");
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"1", "1", "1", "-1", "2.5"}));
  EXPECT_EQ(raw.values, (std::vector<double>{1, 1, 1, -1, 2.5}));
  EXPECT_EQ(raw.source, "y.txt");
}

TEST(LabelsMake, OneNonNumberMakesAllLabelsStringsKeptAsWritten) {
  const RawLabels raw = make_labels(Names{"+1", "1.0", "spam "}, "y.txt");
  EXPECT_FALSE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"+1", "1.0", "spam"}));
  EXPECT_TRUE(raw.values.empty());
}

TEST(LabelsMake, NanIsAStringLabel) {
  EXPECT_FALSE(make_labels(Names{"1", "nan"}, "y.txt").numeric);
}

TEST(LabelsMake, EmptyLabelIsAnErrorNamingTheRow) {
  const std::string message = error_of([] { make_labels(Names{"a", "  ", "b"}, "y.npy"); });
  EXPECT_NE(message.find("y.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("row 1:"), std::string::npos) << message;  // y[1]: rows count from 0
}

TEST(LabelsMake, NumericValuesAreNamedCanonically) {
  const RawLabels raw = make_labels(std::vector<double>{1.0, -0.0, 0.25}, "y.npy");
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"1", "0", "0.25"}));
}

TEST(LabelsMake, NonFiniteValueIsAnErrorNamingTheRow) {
  const std::string message =
      error_of([] { make_labels(std::vector<double>{1.0, NAN}, "y.npy"); });
  EXPECT_NE(message.find("row 1:"), std::string::npos) << message;
}

TEST(LabelsText, OneLabelPerLineTrimmedWithLineNumbers) {
  TempDir dir;
  const RawLabels raw = read_labels(dir.write("y.txt", "spam\n  ham\t\neggs\n"));
  EXPECT_FALSE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"spam", "ham", "eggs"}));
  EXPECT_EQ(raw.lines, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(raw.location(1), "line 2");
}

TEST(LabelsText, CrLfLineEndsAreAccepted) {
  TempDir dir;
  EXPECT_EQ(read_labels(dir.write("y.txt", "a\r\nb\r\n")).names, (Names{"a", "b"}));
}

TEST(LabelsText, MissingFinalNewlineIsAccepted) {
  TempDir dir;
  EXPECT_EQ(read_labels(dir.write("y.txt", "a\nb")).names, (Names{"a", "b"}));
}

TEST(LabelsText, BlankLinesAtTheEndAreIgnored) {
  TempDir dir;
  EXPECT_EQ(read_labels(dir.write("y.txt", "a\nb\n\n \r\n")).names, (Names{"a", "b"}));
}

TEST(LabelsText, BlankLineBeforeALabelIsAnErrorNamingTheLine) {
  TempDir dir;
  const std::string path = dir.write("y.txt", "a\nb\n\nc\n");
  try {
    read_labels(path);
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("blank line"), std::string::npos) << e.what();
  }
}

TEST(LabelsText, Utf8ByteOrderMarkIsNotPartOfTheFirstLabel) {
  TempDir dir;
  EXPECT_EQ(read_labels(dir.write("y.txt", "\xEF\xBB\xBFspam\nham\n")).names,
            (Names{"spam", "ham"}));
}

TEST(LabelsText, NumericTextLabelsAreNumeric) {
  TempDir dir;
  const RawLabels raw = read_labels(dir.write("y.txt", "+1\n-1\n1.0\n"));
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"1", "-1", "1"}));
}

TEST(LabelsText, MissingFileIsAFileError) {
  EXPECT_NE(error_of([] { read_labels("/nonexistent/y.txt"); }), "");
}

TEST(LabelsNpy, Int64LabelsAreNumeric) {
  const RawLabels raw = read_labels(data_file("labels_int64.npy"));
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"10", "-1", "2", "10", "2"}));
  EXPECT_TRUE(raw.lines.empty());
  EXPECT_EQ(raw.location(0), "row 0");
}

TEST(LabelsNpy, Float64WholeNumbersAreNamedWithoutFraction) {
  const RawLabels raw = read_labels(data_file("labels_float64.npy"));
  EXPECT_EQ(raw.names, (Names{"0.5", "3", "0.5", "0"}));
}

TEST(LabelsNpy, Float32LabelsAreNamedByTheirShortestFloat32Decimal) {
  const RawLabels raw = read_labels(data_file("labels_float32.npy"));
  EXPECT_EQ(raw.names, (Names{"0.1", "0.25", "0.1"}));
  EXPECT_EQ(raw.values[0], 0.1);
}

TEST(LabelsNpy, UnicodeLabelsAreUtf8Strings) {
  const RawLabels raw = read_labels(data_file("labels_strings.npy"));
  EXPECT_FALSE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"spam", "ham", "\xC3\xA9t\xC3\xA9", "Zebra", "ham"}));
}

TEST(LabelsNpy, UnicodeNumbersAreNumericLabels) {
  const RawLabels raw = read_labels(data_file("labels_numeric_strings.npy"));
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"1", "-1", "1"}));
}

TEST(LabelsNpy, BoolLabelsAreZeroAndOne) {
  EXPECT_EQ(read_labels(data_file("labels_bool.npy")).names, (Names{"1", "0", "1"}));
}

TEST(LabelsClasses, StringClassesMatchBoolLabelsAsPythonWritesThem) {
  // A model fitted in Python on bools has the classes "False" and "True".
  Classes classes;
  classes.names = {"False", "True"};
  EXPECT_EQ(classes.encode(read_labels(data_file("labels_bool.npy"))),
            (std::vector<std::int32_t>{1, 0, 1}));
}

TEST(LabelsNpy, TwoDimensionalArrayIsAnError) {
  const std::string message = error_of([] { read_labels(data_file("labels_2d.npy")); });
  EXPECT_NE(message.find("1-d"), std::string::npos) << message;
}

TEST(LabelsNpy, EmptyStringLabelIsAnErrorNamingTheRow) {
  // labels_unicode.npy (scripts/make_npz_fixtures.py) ends with "".
  const std::string message = error_of([] { read_labels(data_file("labels_unicode.npy")); });
  EXPECT_NE(message.find("row 3:"), std::string::npos) << message;  // the 4th of 4
}

TEST(LabelsClasses, NumericClassesSortByValueNotText) {
  const Classes classes = Classes::fit(make_labels(Names{"10", "9", "-1", "9", "1e1"}, "y"));
  EXPECT_TRUE(classes.numeric);
  EXPECT_EQ(classes.names, (Names{"-1", "9", "10"}));
}

// 2^53 + 1 has no double: parsed as one it is 2^53, and the two were one
// class (two product ids, say, trained as one).
TEST(LabelsClasses, IntegersBeyondTwoToThe53AreClassesOfTheirOwnDigits) {
  const RawLabels raw = make_labels(Names{"9007199254740993", "9007199254740992", "+0009007199254740993",
                                          "-9007199254740993", "1.5", "18446744073709551617"},
                                    "y");
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"9007199254740993", "9007199254740992", "9007199254740993",
                              "-9007199254740993", "1.5", "18446744073709551617"}));
  const Classes classes = Classes::fit(raw);
  EXPECT_EQ(classes.names, (Names{"-9007199254740993", "1.5", "9007199254740992",
                                  "9007199254740993", "18446744073709551617"}));
  EXPECT_EQ(classes.encode(raw), (std::vector<std::int32_t>{3, 2, 3, 0, 1, 4}));
  // A double's own integers keep their usual names: 2^60 is "1.152921504606847e+18".
  EXPECT_EQ(make_labels(Names{"1152921504606846976", "1e3"}, "y").names,
            (Names{"1.152921504606847e+18", "1000"}));
}

TEST(LabelsClasses, BeyondLongDoubleIntegersSortByTheirDigits) {
  // 2^64 + 1 and 2^64 + 2 share a long double too.
  const Classes classes = Classes::fit(make_labels(
      Names{"18446744073709551618", "18446744073709551617", "-18446744073709551618",
            "-18446744073709551617"}, "y"));
  EXPECT_EQ(classes.names, (Names{"-18446744073709551618", "-18446744073709551617",
                                  "18446744073709551617", "18446744073709551618"}));
}

TEST(LabelsNpy, Int64LabelsBeyondTwoToThe53KeepTheirDigits) {
  TempDir dir;
  const std::vector<std::int64_t> values{9007199254740993, 9007199254740992, -3};
  std::string bytes = npy_header("<i8", {3});
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(std::int64_t));
  const RawLabels raw = read_labels(dir.write("y.npy", bytes));
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"9007199254740993", "9007199254740992", "-3"}));
  EXPECT_EQ(Classes::fit(raw).names, (Names{"-3", "9007199254740992", "9007199254740993"}));
}

TEST(LabelsNpy, UInt64LabelsBeyondTwoToThe53KeepTheirDigits) {
  TempDir dir;
  // 2^64 - 1 and 2^64 - 2 are one double (1.8446744073709552e19), as are
  // 2^53 + 1 and 2^53; the largest exceeds int64 too.
  const std::vector<std::uint64_t> values{18446744073709551615u, 18446744073709551614u,
                                          9007199254740993u, 9007199254740992u, 7u};
  std::string bytes = npy_header("<u8", {5});
  bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(std::uint64_t));
  const RawLabels raw = read_labels(dir.write("y.npy", bytes));
  EXPECT_TRUE(raw.numeric);
  EXPECT_EQ(raw.names, (Names{"18446744073709551615", "18446744073709551614", "9007199254740993",
                              "9007199254740992", "7"}));
  EXPECT_EQ(Classes::fit(raw).names, (Names{"7", "9007199254740992", "9007199254740993",
                                            "18446744073709551614", "18446744073709551615"}));
  // Within 2^53 they stay numbers, named as before.
  const std::vector<std::uint64_t> small{9007199254740992u, 3u};
  std::string small_bytes = npy_header("<u8", {2});
  small_bytes.append(reinterpret_cast<const char*>(small.data()), small.size() * sizeof(std::uint64_t));
  EXPECT_EQ(read_labels(dir.write("small.npy", small_bytes)).names, (Names{"9007199254740992", "3"}));
}

TEST(LabelsClasses, StringClassesSortByCodePoint) {
  const Classes classes =
      Classes::fit(make_labels(Names{"b", "\xC3\xA9", "a", "B", "\xE2\x82\xAC", "b"}, "y"));
  EXPECT_FALSE(classes.numeric);
  // 'B' (66) < 'a' (97) < 'b' (98) < U+00E9 < U+20AC, as numpy.unique sorts.
  EXPECT_EQ(classes.names, (Names{"B", "a", "b", "\xC3\xA9", "\xE2\x82\xAC"}));
}

TEST(LabelsClasses, PlusOneAndOneAreOneClass) {
  const Classes classes = Classes::fit(make_labels(Names{"+1", "-1", "1"}, "y"));
  EXPECT_EQ(classes.names, (Names{"-1", "1"}));
}

TEST(LabelsClasses, ZeroAndNegativeZeroAreOneClass) {
  const Classes classes = Classes::fit(make_labels(std::vector<double>{0.0, -0.0, 1.0}, "y"));
  EXPECT_EQ(classes.names, (Names{"0", "1"}));
}

TEST(LabelsClasses, OneClassIsAnErrorNamingSourceAndClass) {
  const std::string message =
      error_of([] { Classes::fit(make_labels(Names{"spam", "spam"}, "train.txt")); });
  EXPECT_NE(message.find("train.txt"), std::string::npos) << message;
  EXPECT_NE(message.find("needs at least 2 classes, found 1 class: 'spam'"), std::string::npos)
      << message;
}

TEST(LabelsClasses, NoLabelsIsAnError) {
  EXPECT_NE(error_of([] { Classes::fit(make_labels(Names{}, "y.txt")); }).find("found 0"),
            std::string::npos);
}

TEST(LabelsClasses, EncodeGivesEachRowItsClassId) {
  const RawLabels raw = make_labels(Names{"spam", "ham", "eggs", "ham"}, "y");
  const Classes classes = Classes::fit(raw);
  ASSERT_EQ(classes.names, (Names{"eggs", "ham", "spam"}));
  EXPECT_EQ(classes.encode(raw), (std::vector<std::int32_t>{2, 1, 0, 1}));
}

TEST(LabelsClasses, StringClassesMatchNumericLabelsAsWritten) {
  // Classes fitted in Python on the strings "01" and "1" (not numbers: a
  // numeric fit makes them one class). A labels file of those strings reads
  // as numbers, both named "1"; as written they are the two classes.
  Classes classes;
  classes.names = {"01", "1"};
  const RawLabels raw = make_labels(Names{"01", " 1", "01"}, "y.txt");
  ASSERT_TRUE(raw.numeric);
  EXPECT_EQ(classes.encode(raw), (std::vector<std::int32_t>{0, 1, 0}));
  classes.names = {"007", "010"};
  EXPECT_EQ(classes.encode(make_labels(Names{"010", "007"}, "y.txt")),
            (std::vector<std::int32_t>{1, 0}));
  const std::string message =
      error_of([&] { classes.encode(make_labels(Names{"007", "10"}, "y.txt")); });
  EXPECT_NE(message.find("label '10' is not one of"), std::string::npos) << message;
  // Numeric classes still match by value.
  EXPECT_EQ(Classes::fit(make_labels(Names{"1", "2"}, "train")).encode(raw),
            (std::vector<std::int32_t>{0, 0, 0}));
}

TEST(LabelsClasses, EncodeMatchesNumericLabelsByValue) {
  const Classes classes = Classes::fit(make_labels(Names{"-1", "1"}, "train"));
  EXPECT_EQ(classes.encode(make_labels(Names{"+1", "-1.0", "1"}, "test")),
            (std::vector<std::int32_t>{1, 0, 1}));
}

TEST(LabelsClasses, UnknownLabelInTextFileNamesFileLineLabelAndClasses) {
  TempDir dir;
  const Classes classes = Classes::fit(make_labels(Names{"ham", "spam"}, "train"));
  const std::string path = dir.write("test.txt", "ham\nspam\nvikings\n");
  const RawLabels test = read_labels(path);
  try {
    classes.encode(test);
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(message.find("'vikings'"), std::string::npos) << message;
    EXPECT_NE(message.find("'ham', 'spam'"), std::string::npos) << message;
  }
}

TEST(LabelsClasses, UnknownLabelWithoutLinesNamesTheRow) {
  const Classes classes = Classes::fit(make_labels(Names{"1", "2"}, "train"));
  const std::string message =
      error_of([&] { classes.encode(make_labels(std::vector<double>{1, 3}, "y.npy")); });
  EXPECT_NE(message.find("y.npy"), std::string::npos) << message;
  EXPECT_NE(message.find("row 1:"), std::string::npos) << message;
  EXPECT_NE(message.find("'3'"), std::string::npos) << message;
}

TEST(LabelsClasses, UnknownLabelErrorListsOnlyAFewOfManyClasses) {
  Names many;
  for (int i = 0; i < 50; ++i) many.push_back("c" + std::to_string(100 + i));
  const Classes classes = Classes::fit(make_labels(many, "train"));
  const std::string message =
      error_of([&] { classes.encode(make_labels(Names{"nope"}, "test")); });
  EXPECT_NE(message.find("'c100'"), std::string::npos) << message;
  EXPECT_EQ(message.find("'c149'"), std::string::npos) << message;
  EXPECT_NE(message.find("50"), std::string::npos) << message;
}

TEST(LabelsText, ALabelThatIsNotUtf8IsAnErrorNamingTheLine) {
  // It used to train to the end and fail at save with a raw
  // json.exception.type_error.316.
  TempDir dir;
  const std::string path = dir.write("y.txt", "spam\nh\xFF" "am\n\xC3\xA9t\xC3\xA9\n");
  try {
    read_labels(path);
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("not UTF-8"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h\\xffam"), std::string::npos) << e.what();
  }
  // Well-formed multi-byte text is fine; overlong forms and surrogates are not.
  EXPECT_EQ(read_labels(dir.write("ok.txt", "\xC3\xA9t\xC3\xA9\n\xF0\x9F\x90\x88\n")).size(), 2u);
  EXPECT_NE(error_of([&] { read_labels(dir.write("o.txt", "a\n\xC0\xAF\n")); }).find("not UTF-8"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_labels(dir.write("s.txt", "a\n\xED\xA0\x80\n")); }).find("not UTF-8"),
            std::string::npos);
}

TEST(LabelsClasses, MoreThanTheClassLimitIsAnErrorNamingTheSource) {
  std::vector<double> values(kMaxClasses + 1);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const RawLabels raw = make_labels(std::move(values), "ids.txt");
  const std::string msg = error_of([&] { Classes::fit(raw); });
  EXPECT_NE(msg.find("ids.txt: has 10001 distinct classes"), std::string::npos) << msg;
  std::vector<double> fewer(kMaxClasses);
  for (std::size_t i = 0; i < fewer.size(); ++i) fewer[i] = static_cast<double>(i);
  EXPECT_EQ(Classes::fit(make_labels(std::move(fewer), "ids.txt")).size(), kMaxClasses);
}

}  // namespace
}  // namespace bagel
