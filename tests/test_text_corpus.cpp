#include "bagel/text/text_corpus.h"

#include <gtest/gtest.h>

#include "bagel/error.h"
#include "temp_dir.h"

namespace bagel {
namespace {

TEST(TextCorpusLines, OneDocumentPerLineCrlfAndLastLineWithoutNewline) {
  TempDir dir;
  TextInput input;
  input.path = dir.write("docs.txt", "first doc\r\n\nthird \xc3\xa9t\xc3\xa9\nlast");
  const TextCorpus corpus = read_text_corpus(input);
  ASSERT_EQ(corpus.size(), 4u);
  EXPECT_EQ(corpus.documents[0], "first doc");
  EXPECT_EQ(corpus.documents[1], "");  // an empty line is an empty document
  EXPECT_EQ(corpus.documents[2], "third \xc3\xa9t\xc3\xa9");
  EXPECT_EQ(corpus.documents[3], "last");
  EXPECT_EQ(corpus.lines, (std::vector<std::int64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(corpus.labels.has_value());
}

TEST(TextCorpusLines, FinalNewlineDoesNotStartADocument) {
  TempDir dir;
  TextInput input;
  input.path = dir.write("docs.txt", "a\nb\n");
  EXPECT_EQ(read_text_corpus(input).size(), 2u);
}

TEST(TextCorpusLines, InvalidUtf8NamesFileLineAndByte) {
  TempDir dir;
  TextInput input;
  input.path = dir.write("docs.txt", "fine\nbad \xff here\n");
  try {
    read_text_corpus(input);
    FAIL() << "no error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("docs.txt:2: byte 5 is not UTF-8"), std::string::npos)
        << e.what();
  }
}

TEST(TextCorpusLines, LabelsMustMatchTheDocuments) {
  TempDir dir;
  TextInput input;
  input.path = dir.write("docs.txt", "a b\nc d\n");
  input.labels_path = dir.write("labels.txt", "x\ny\n");
  const TextCorpus corpus = read_text_corpus(input);
  ASSERT_TRUE(corpus.labels.has_value());
  EXPECT_EQ(corpus.labels->names, (std::vector<std::string>{"x", "y"}));
  input.labels_path = dir.write("short.txt", "x\n");
  EXPECT_THROW(read_text_corpus(input), FileError);
}

}  // namespace
}  // namespace bagel
