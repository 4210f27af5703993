// The text formats read_text_corpus reads, and each of its errors with its
// message. The comparisons with Python's own readers (bytes.decode, csv,
// scikit-learn's load_files) and with fastText on real text are in
// tests/interop/test_text_formats.py.
#include "bagel/text/text_corpus.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "bagel/error.h"
#include "bagel/text/fasttext_line.h"
#include "bagel/text/utf8.h"
#include "temp_dir.h"

namespace bagel {
namespace {

using Strings = std::vector<std::string>;

Strings texts(const Documents& documents) { return Strings(documents.begin(), documents.end()); }
using namespace std::string_view_literals;

// The message of the error `read` throws ("" if none).
std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

#define EXPECT_ERROR(statement, text)                                       \
  do {                                                                      \
    const std::string message_ = error_of([&] { (void)(statement); });      \
    EXPECT_NE(message_.find(text), std::string::npos) << "got: " << message_; \
  } while (0)

TextInput input_of(TextFormat format, const std::string& path) {
  TextInput input;
  input.format = format;
  input.path = path;
  return input;
}

// --- lines -----------------------------------------------------------------

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
  EXPECT_TRUE(corpus.weights.empty());
}

TEST(TextCorpusLines, FinalNewlineDoesNotStartADocumentAndAnEmptyFileHasNone) {
  TempDir dir;
  EXPECT_EQ(read_text_corpus(input_of(TextFormat::lines, dir.write("a.txt", "a\nb\n"))).size(), 2u);
  EXPECT_EQ(read_text_corpus(input_of(TextFormat::lines, dir.write("e.txt", ""))).size(), 0u);
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
  EXPECT_EQ(corpus.labels->names, (Strings{"x", "y"}));
  input.labels_path = dir.write("short.txt", "x\n");
  EXPECT_ERROR(read_text_corpus(input), "short.txt: 1 labels for 2 documents in ");
}

TEST(TextCorpusLines, ByteOrderMarkIsKeptAsPythonsUtf8CodecKeepsIt) {
  TempDir dir;
  const TextCorpus corpus =
      read_text_corpus(input_of(TextFormat::lines, dir.write("bom.txt", "\xEF\xBB\xBFhello\n")));
  EXPECT_EQ(texts(corpus.documents), (Strings{"\xEF\xBB\xBFhello"}));
}

TEST(TextCorpus, LabelsFileOnlyForTheLinesFormat) {
  TempDir dir;
  TextInput input = input_of(TextFormat::fasttext, dir.write("a.txt", "__label__x a\n"));
  input.labels_path = dir.write("l.txt", "x\n");
  EXPECT_ERROR(read_text_corpus(input), "labels_path: only the lines format takes a labels file");
}

// --- decode_error ----------------------------------------------------------

TEST(Utf8Repair, MaximalSubpartsBecomeOneReplacementEach) {
  const auto repaired = [](std::string_view bytes, DecodeError mode) {
    std::string out;
    append_repaired_utf8(bytes, mode, out);
    return out;
  };
  const std::string r = "\xEF\xBF\xBD";
  // A truncated sequence is one bad run; its next byte starts afresh.
  EXPECT_EQ(repaired("\xE1\x80" "A", DecodeError::replace), r + "A");
  // A surrogate (ED A0 80) is three: ED cannot be followed by A0.
  EXPECT_EQ(repaired("\xED\xA0\x80", DecodeError::replace), r + r + r);
  // An overlong form (C0 80) is two: C0 never starts a sequence.
  EXPECT_EQ(repaired("\xC0\x80", DecodeError::replace), r + r);
  // Truncated at the end of the text: one.
  EXPECT_EQ(repaired("ok\xF0\x9F\x98", DecodeError::replace), "ok" + r);
  EXPECT_EQ(repaired("a\xF0\x9F\x98" "b\xFF" "c", DecodeError::ignore), "abc");
  EXPECT_EQ(repaired("caf\xC3\xA9", DecodeError::replace), "caf\xC3\xA9");  // valid: as is
}

TEST(Utf8Repair, InvalidUtf8AtFindsTheFirstBadByteBehindLongAsciiRuns) {
  std::string text(1000, 'a');
  EXPECT_EQ(invalid_utf8_at(text), std::string_view::npos);
  text[997] = '\x80';
  EXPECT_EQ(invalid_utf8_at(text), 997u);
  EXPECT_EQ(invalid_utf8_at("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(invalid_utf8_at("\xF4\x8F\xBF\xBF"), std::string_view::npos);
}

// is_utf8 checks pieces on threads: a text of multi-byte characters that
// straddle every possible piece boundary is valid, and one bad byte (or one
// truncated sequence) anywhere in it is found.
TEST(Utf8Repair, IsUtf8InPiecesAgreesWithTheWholeCheck) {
  std::string text;
  const std::vector<std::string> characters = {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\n"};
  for (std::size_t i = 0; text.size() < (std::size_t{3} << 20); ++i) text += characters[(i * 7 + i / 3) % characters.size()];
  ASSERT_EQ(invalid_utf8_at(text), std::string_view::npos);
  EXPECT_TRUE(is_utf8(text));
  for (const std::size_t at : {std::size_t{0}, std::size_t{262143}, std::size_t{262144}, std::size_t{1} << 20,
                               text.size() / 2 + 1, text.size() - 1}) {
    std::string bad = text;
    bad[at] = '\xFF';
    EXPECT_FALSE(is_utf8(bad)) << at;
    std::string truncated = text.substr(0, at) + "\xF0\x9F" + text.substr(at);
    EXPECT_EQ(is_utf8(truncated), invalid_utf8_at(truncated) == std::string_view::npos) << at;
    EXPECT_FALSE(is_utf8(truncated)) << at;
  }
}

TEST(TextCorpusDecode, ReplaceAndIgnoreRepairEveryFormat) {
  TempDir dir;
  TextInput input = input_of(TextFormat::lines, dir.write("l.txt", "a\xFF" "b\n"));
  input.decode_error = DecodeError::replace;
  EXPECT_EQ(texts(read_text_corpus(input).documents), (Strings{"a\xEF\xBF\xBD" "b"}));
  input.decode_error = DecodeError::ignore;
  EXPECT_EQ(texts(read_text_corpus(input).documents), (Strings{"ab"}));
  input = input_of(TextFormat::fasttext, dir.write("f.txt", "__label__x\xFF y\xC3 z\n"));
  input.decode_error = DecodeError::ignore;
  const TextCorpus fast = read_text_corpus(input);
  EXPECT_EQ(texts(fast.documents), (Strings{"y z"}));
  EXPECT_EQ(fast.labels->names, (Strings{"x"}));
  input = input_of(TextFormat::tsv, dir.write("t.tsv", "x\xFF\ty\xFF\n"));
  input.decode_error = DecodeError::replace;
  const TextCorpus tsv = read_text_corpus(input);
  EXPECT_EQ(texts(tsv.documents), (Strings{"y\xEF\xBF\xBD"}));
  EXPECT_EQ(tsv.labels->names, (Strings{"x\xEF\xBF\xBD"}));
}

TEST(TextCorpusDecode, StrictErrorNamesTheLineAndByteInEveryFormat) {
  TempDir dir;
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::fasttext,
                                         dir.write("f.txt", "__label__a ok\n__label__b \xE9t\xE9\n"))),
               "f.txt:2: byte 12 is not UTF-8 text");
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::tsv, dir.write("t.tsv", "a\tb\n\"x\ny\xFF\"\tz\n"))),
               "t.tsv:3: byte 2 is not UTF-8 text");
  std::filesystem::create_directories(dir.path() / "f" / "c");
  dir.write("f/c/doc", "line one\nline \xC3(two)\n");
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::folder, dir.path("f"))),
               "doc:2: byte 6 is not UTF-8 text");
}

// --- fasttext --------------------------------------------------------------

TEST(FastTextLine, LabelWordsAnywhereAreCutWithTheSeparatorsAfterThem) {
  FastTextLine line;
  parse_fasttext_line("__label__a __label__b the cat", "__label__", line);
  EXPECT_EQ(line.labels, (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(line.document, "the cat");
  parse_fasttext_line("the\t__label__a  cat __label__b", "__label__", line);
  EXPECT_EQ(line.labels, (std::vector<std::string_view>{"a", "b"}));
  EXPECT_EQ(line.document, "the\tcat ");
  // Only a word that starts with the prefix: "x__label__a" is a word.
  parse_fasttext_line("x__label__a __label__a,\v\0b"sv, "__label__", line);
  EXPECT_EQ(line.labels, (std::vector<std::string_view>{"a,"}));
  EXPECT_EQ(line.document, "x__label__a b");
  parse_fasttext_line("  no labels ", "#", line);
  EXPECT_TRUE(line.labels.empty());
  EXPECT_EQ(line.document, "  no labels ");
}

TEST(TextCorpusFastText, MultiLabelSplitGivesOneRowPerLabelWeightedByItsShare) {
  TempDir dir;
  const TextInput input = input_of(
      TextFormat::fasttext,
      dir.write("f.txt", "\xEF\xBB\xBF__label__1 one\n__label__b __label__c __label__b two\n__label__01 three"));
  const TextCorpus corpus = read_text_corpus(input);
  EXPECT_EQ(texts(corpus.documents), (Strings{"one", "two", "two", "three"}));
  ASSERT_TRUE(corpus.labels);
  // The BOM is dropped (glued to the first word it would hide its label);
  // string labels stay as written ("01" is not "1" among strings).
  EXPECT_EQ(corpus.labels->names, (Strings{"1", "b", "c", "01"}));
  EXPECT_FALSE(corpus.labels->numeric);
  EXPECT_EQ(corpus.weights, (std::vector<float>{1.0f, 2.0f / 3.0f, 1.0f / 3.0f, 1.0f}));
  EXPECT_EQ(corpus.lines, (std::vector<std::int64_t>{1, 2, 2, 3}));
  EXPECT_EQ(corpus.labels->lines, corpus.lines);
}

TEST(TextCorpusFastText, WeightsFromTheFirstLineOn) {
  TempDir dir;
  const TextCorpus corpus = read_text_corpus(
      input_of(TextFormat::fasttext, dir.write("f.txt", "__label__a __label__b x\n__label__a y\n")));
  EXPECT_EQ(corpus.weights, (std::vector<float>{0.5f, 0.5f, 1.0f}));
}

TEST(TextCorpusFastText, NumericLabelsAreCanonicalAsEveryBagelLabel) {
  TempDir dir;
  const TextCorpus corpus = read_text_corpus(
      input_of(TextFormat::fasttext, dir.write("f.txt", "__label__1 a\n__label__01 b\n__label__+2.0 c\n")));
  EXPECT_TRUE(corpus.labels->numeric);
  EXPECT_EQ(corpus.labels->names, (Strings{"1", "1", "2"}));
  EXPECT_TRUE(corpus.weights.empty());
}

TEST(TextCorpusFastText, MultiLabelFirstAndError) {
  TempDir dir;
  TextInput input = input_of(TextFormat::fasttext, dir.write("f.txt", "__label__a x\n__label__b __label__c y\n"));
  input.multi_label = MultiLabel::first;
  const TextCorpus first = read_text_corpus(input);
  EXPECT_EQ(first.labels->names, (Strings{"a", "b"}));
  EXPECT_TRUE(first.weights.empty());
  input.multi_label = MultiLabel::error;
  EXPECT_ERROR(read_text_corpus(input),
               "f.txt:2: 2 different labels ('b', 'c'), expected one; set multi_label");
  // A label repeated is still one label.
  input.path = dir.write("g.txt", "__label__a __label__a x\n");
  EXPECT_EQ(read_text_corpus(input).labels->names, (Strings{"a"}));
}

TEST(TextCorpusFastText, UnlabeledLinesErrSkipOrKeep) {
  TempDir dir;
  TextInput input = input_of(TextFormat::fasttext, dir.write("f.txt", "__label__a x\n\nno label\n"));
  EXPECT_ERROR(read_text_corpus(input),
               "f.txt:2: no label: expected a word starting with '__label__'");
  input.unlabeled = Unlabeled::skip;
  const TextCorpus skipped = read_text_corpus(input);
  EXPECT_EQ(texts(skipped.documents), (Strings{"x"}));
  input.unlabeled = Unlabeled::keep;
  EXPECT_ERROR(read_text_corpus(input), "f.txt:2: has no label, but line 1 has one");
  input.path = dir.write("g.txt", "plain\nmore text\n");
  const TextCorpus kept = read_text_corpus(input);
  EXPECT_EQ(texts(kept.documents), (Strings{"plain", "more text"}));
  EXPECT_FALSE(kept.labels.has_value());
  input.path = dir.write("h.txt", "plain\n__label__a text\n");
  EXPECT_ERROR(read_text_corpus(input), "h.txt:2: has a label, but line 1 has none");
}

TEST(TextCorpusFastText, PrefixErrors) {
  TempDir dir;
  TextInput input = input_of(TextFormat::fasttext, dir.write("f.txt", "__label__ x\n"));
  EXPECT_ERROR(read_text_corpus(input), "f.txt:1: the word '__label__' names no label");
  input.label_prefix = "";
  EXPECT_ERROR(read_text_corpus(input), "label_prefix: must not be empty");
  input.label_prefix = "la bel";
  EXPECT_ERROR(read_text_corpus(input), "label_prefix: must not contain spaces");
  input.label_prefix = "#";
  input.path = dir.write("g.txt", "#spam buy now\n#ham hello\n");
  EXPECT_EQ(read_text_corpus(input).labels->names, (Strings{"spam", "ham"}));
}

// A file large enough to be read in several chunks (line_chunks.h) reads as
// it would in one piece: rows in order, line numbers and errors counted from
// the start of the file.
TEST(TextCorpusFastText, LargeFileReadInChunksKeepsOrderLinesAndFirstError) {
  TempDir dir;
  std::string text;
  Strings documents, labels;
  std::vector<std::int64_t> lines;
  std::vector<float> weights;
  for (int i = 1; text.size() < (std::size_t{10} << 20); ++i) {
    const std::string document = "word" + std::to_string(i) + " and some more text to make it long";
    const std::string label = "c" + std::to_string(i % 7);
    if (i % 1000 == 0) {  // a second label now and then
      text += "__label__" + label + " __label__extra " + document + "\n";
      for (const char* name : {label.c_str(), "extra"}) {
        documents.push_back(document);
        labels.push_back(name);
        lines.push_back(i);
        weights.push_back(0.5f);
      }
    } else {
      text += "__label__" + label + " " + document + "\n";
      documents.push_back(document);
      labels.push_back(label);
      lines.push_back(i);
      weights.push_back(1.0f);
    }
  }
  TextInput input = input_of(TextFormat::fasttext, dir.write("big.txt", text));
  const TextCorpus corpus = read_text_corpus(input);
  EXPECT_EQ(texts(corpus.documents), documents);
  EXPECT_EQ(corpus.labels->names, labels);
  EXPECT_EQ(corpus.lines, lines);
  EXPECT_EQ(corpus.weights, weights);

  // Errors in the last chunk and in the first: the first in the file is named.
  const std::int64_t last = lines.back();
  std::string bad = text;
  bad[bad.size() - 3] = '\xFF';
  input.path = dir.write("bad.txt", bad);
  EXPECT_ERROR(read_text_corpus(input), "bad.txt:" + std::to_string(last) + ": byte ");
  bad.replace(0, 9, "_________");  // line 1 loses its label
  input.path = dir.write("bad2.txt", bad);
  EXPECT_ERROR(read_text_corpus(input), "bad2.txt:1: no label");
  // unlabeled "keep" compares lines across chunks.
  input.unlabeled = Unlabeled::keep;
  input.path = dir.write("keep.txt", "no label here\n" + std::string(text.size(), ' ') + "\n" + text);
  EXPECT_ERROR(read_text_corpus(input), "keep.txt:3: has a label, but line 1 has none");
}

// --- tsv / csv -------------------------------------------------------------

TEST(TextCorpusTsv, QuotedFieldsHoldTabsNewlinesAndDoubledQuotes) {
  TempDir dir;
  const TextInput input = input_of(
      TextFormat::tsv,
      dir.write("t.tsv", "\xEF\xBB\xBFpos\t\"say \"\"hi\"\"\tthere\nfriend\"\textra\r\n\nneg\tplain \"q\"\r\n"
                         "neg\t\"closed\" and more\n"));
  const TextCorpus corpus = read_text_corpus(input);
  EXPECT_EQ(texts(corpus.documents),
            (Strings{"say \"hi\"\tthere\nfriend", "plain \"q\"", "closed and more"}));
  EXPECT_EQ(corpus.labels->names, (Strings{"pos", "neg", "neg"}));
  EXPECT_EQ(corpus.lines, (std::vector<std::int64_t>{1, 4, 5}));
}

TEST(TextCorpusTsv, QuotingNoneTakesQuotesAsText) {
  TempDir dir;
  TextInput input = input_of(TextFormat::tsv, dir.write("t.tsv", "a\t\"x\ty\"\r\nb\t\"\n"));
  input.quoting = Quoting::none;
  const TextCorpus corpus = read_text_corpus(input);
  EXPECT_EQ(texts(corpus.documents), (Strings{"\"x", "\""}));
}

TEST(TextCorpusTsv, AnUnclosedQuoteIsAnErrorNamingItsRow) {
  // It would take the rest of the input as one document (Python's csv, not
  // strict, reads it so; pandas refuses it).
  TempDir dir;
  try {
    read_text_corpus(input_of(TextFormat::csv, dir.write("t.csv", "x,fine\na,\"open\nb,c\n")));
    FAIL() << "expected bagel::FileError";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("never closes"), std::string::npos) << e.what();
  }
  // Closed on the last line without a newline: a whole field.
  const TextCorpus corpus =
      read_text_corpus(input_of(TextFormat::csv, dir.write("u.csv", "a,\"open\nb,c\"")));
  EXPECT_EQ(texts(corpus.documents), (Strings{"open\nb,c"}));
}

TEST(TextCorpusTsv, HeaderNamesTheColumnsAndNoLabelColumnMeansNoLabels) {
  TempDir dir;
  TextInput input = input_of(TextFormat::csv, dir.write("t.csv", "id,text,label\n1,hello,x\n2,bye,y\n"));
  input.tsv_header = true;
  input.tsv_label_name = "label";
  input.tsv_text_name = "text";
  const TextCorpus corpus = read_text_corpus(input);
  EXPECT_EQ(texts(corpus.documents), (Strings{"hello", "bye"}));
  EXPECT_EQ(corpus.labels->names, (Strings{"x", "y"}));
  EXPECT_EQ(corpus.lines, (std::vector<std::int64_t>{2, 3}));
  input.tsv_label_name = "";
  input.tsv_label_column = -1;
  EXPECT_FALSE(read_text_corpus(input).labels.has_value());
}

TEST(TextCorpusTsv, ColumnErrors) {
  TempDir dir;
  TextInput input = input_of(TextFormat::tsv, dir.write("t.tsv", "a\tb\nonly one\n"));
  EXPECT_ERROR(read_text_corpus(input),
               "t.tsv:2: 1 column, expected at least 2 columns (the label in column 0 and the "
               "text in column 1, counting from 0)");
  input.path = dir.write("u.tsv", "a\tb\n \tx\n");
  EXPECT_ERROR(read_text_corpus(input), "u.tsv:2: empty label in column 0");
  input.tsv_text_column = 0;
  EXPECT_ERROR(read_text_corpus(input), "tsv_text_column: column 0 is also the label column");
  input.tsv_text_column = -2;
  EXPECT_ERROR(read_text_corpus(input), "tsv_text_column: must be a 0-based column");
  input.tsv_text_column = 1;
  input.tsv_label_name = "label";
  EXPECT_ERROR(read_text_corpus(input), "tsv_label_name: columns are named by a header");
  input.tsv_header = true;
  input.path = dir.write("h.tsv", "lab\ttext\nx\ty\n");
  EXPECT_ERROR(read_text_corpus(input),
               "h.tsv:1: the header has no column 'label' (it has 'lab', 'text')");
  input.path = dir.write("d.tsv", "label\tlabel\nx\ty\n");
  EXPECT_ERROR(read_text_corpus(input), "d.tsv:1: the header names two columns 'label'");
}

// --- folder ----------------------------------------------------------------

TEST(TextCorpusFolder, SortedClassesAndFilesHiddenOnesIncludedRootFilesIgnored) {
  TempDir dir;
  namespace fs = std::filesystem;
  for (const char* sub : {"root/spam", "root/ham", "root/.hidden", "root/empty"})
    fs::create_directories(dir.path() / sub);
  dir.write("root/README", "not a document");
  dir.write("root/spam/b.txt", "buy\r\nnow\n");
  dir.write("root/spam/a.txt", "\xEF\xBB\xBF" "cheap");
  dir.write("root/ham/.dot", "hidden file");
  dir.write("root/.hidden/x", "in a hidden class");
  const TextCorpus corpus = read_text_corpus(input_of(TextFormat::folder, dir.path("root")));
  EXPECT_EQ(texts(corpus.documents),
            (Strings{"in a hidden class", "hidden file", "\xEF\xBB\xBF" "cheap", "buy\r\nnow\n"}));
  EXPECT_EQ(corpus.labels->names, (Strings{".hidden", "ham", "spam", "spam"}));
  EXPECT_EQ(fs::path(corpus.files[2]).filename(), "a.txt");
  EXPECT_EQ(corpus.lines, (std::vector<std::int64_t>{0, 0, 0, 0}));
}

TEST(TextCorpusFolder, LayoutErrorsNameThePath) {
  TempDir dir;
  namespace fs = std::filesystem;
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::folder, dir.write("file", "x"))),
               "file: is not a folder; the folder format expects FOLDER/CLASS/FILE");
  fs::create_directories(dir.path() / "flat");
  dir.write("flat/doc.txt", "x");
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::folder, dir.path("flat"))),
               "flat: has no sub-folder;");
  fs::create_directories(dir.path() / "deep/a/b");
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::folder, dir.path("deep"))),
               "b: is a folder inside a class folder");
  fs::create_directories(dir.path() / "bad/\xFF");
  dir.write("bad/\xFF/doc", "x");
  EXPECT_ERROR(read_text_corpus(input_of(TextFormat::folder, dir.path("bad"))),
               "the folder's name is not UTF-8");
}

}  // namespace
}  // namespace bagel
