#include "bagel/text/vocabulary_file.h"

#include <gtest/gtest.h>

#include "bagel/error.h"
#include "temp_dir.h"

namespace bagel {
namespace {

// The error `read_vocabulary_file` throws on `bytes`, which must name the line.
FileError error_reading(const std::string& bytes, std::int64_t line) {
  TempDir dir;
  const std::string path = dir.write("vocab.txt", bytes);
  try {
    read_vocabulary_file(path);
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_NE(std::string(e.what()).find("vocab.txt:" + std::to_string(line) + ": "),
              std::string::npos)
        << e.what();
    return e;
  }
  ADD_FAILURE() << "no error for " << bytes;
  return FileError("", "");
}

TEST(VocabularyFile, OneTermPerLineInColumnOrder) {
  TempDir dir;
  // As "\n".join(CountVectorizer().get_feature_names_out()) writes it, with
  // non-ASCII terms and no final newline.
  const auto terms = read_vocabulary_file(dir.write("v.txt", "000\nabc\n\xc3\xa9t\xc3\xa9\nzz"));
  EXPECT_EQ(terms, (std::vector<std::string>{"000", "abc", "\xc3\xa9t\xc3\xa9", "zz"}));
}

TEST(VocabularyFile, CrlfLinesAndByteOrderMark) {
  TempDir dir;
  const auto terms = read_vocabulary_file(dir.write("v.txt", "\xEF\xBB\xBF" "alpha\r\nbeta\r\n"));
  EXPECT_EQ(terms, (std::vector<std::string>{"alpha", "beta"}));
}

TEST(VocabularyFile, EscapesRoundTrip) {
  TempDir dir;
  const std::vector<std::string> terms = {"two\nlines", "cr\rhere", "back\\slash", "\\n literal",
                                          "plain"};
  write_vocabulary_file(dir.path("v.txt"), terms);
  EXPECT_EQ(read_vocabulary_file(dir.path("v.txt")), terms);
  EXPECT_EQ(escape_vocabulary_term("a\nb\\c\rd"), "a\\nb\\\\c\\rd");
}

TEST(VocabularyFile, EmptyTermIsTheLineBackslashE) {
  TempDir dir;
  const std::vector<std::string> terms = {"", "e", "\\e", "\\"};
  write_vocabulary_file(dir.path("v.txt"), terms);
  std::ifstream in(dir.path("v.txt"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bytes, "\\e\ne\n\\\\e\n\\\\\n");
  EXPECT_EQ(read_vocabulary_file(dir.path("v.txt")), terms);
  EXPECT_EQ(escape_vocabulary_term(""), "\\e");
}

TEST(VocabularyFile, BackslashEWithMoreOnItsLineIsAnError) {
  const FileError e = error_reading("a\nx\\e\n", 2);
  EXPECT_NE(std::string(e.what()).find("byte 2: \\e stands for the empty term"), std::string::npos) << e.what();
  error_reading("\\ex\n", 1);
}

TEST(VocabularyFile, WrittenFileHasOneLinePerTerm) {
  TempDir dir;
  write_vocabulary_file(dir.path("v.txt"), {"x\ny", "z"});
  std::ifstream in(dir.path("v.txt"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(bytes, "x\\ny\nz\n");
}

TEST(VocabularyFile, InvalidUtf8NamesTheLine) {
  const FileError e = error_reading("good\nb\xff" "ad\n", 2);
  EXPECT_NE(std::string(e.what()).find("byte 2 is not UTF-8"), std::string::npos) << e.what();
}

TEST(VocabularyFile, EmptyLineIsAnError) {
  const FileError e = error_reading("a\n\nb\n", 2);
  EXPECT_NE(std::string(e.what()).find("the empty term is written \\e"), std::string::npos) << e.what();
  error_reading("a\nb\n\n", 3);  // a stray blank line at the end would shift nothing but count
}

TEST(VocabularyFile, UnknownEscapeIsAnError) {
  const FileError e = error_reading("a\nc:\\temp\n", 2);
  EXPECT_NE(std::string(e.what()).find("byte 3"), std::string::npos) << e.what();
  error_reading("trailing\\\n", 1);
}

TEST(VocabularyFile, RepeatedTermNamesBothLines) {
  const FileError e = error_reading("a\nb\nc\nb\na\n", 4);
  EXPECT_NE(std::string(e.what()).find("\"b\" is already on line 2"), std::string::npos)
      << e.what();
}

TEST(VocabularyFile, EmptyFileIsAnError) {
  TempDir dir;
  EXPECT_THROW(read_vocabulary_file(dir.write("v.txt", "")), FileError);
  EXPECT_THROW(read_vocabulary_file(dir.path("missing.txt")), FileError);
}

}  // namespace
}  // namespace bagel
