// Inputs that are streams (FIFOs here, as pipes and /dev/stdin behave the
// same): every reader gets the same result from a stream as from a regular
// file holding the same bytes, a stream with no rows is an error, and an
// empty regular file still reads as an empty matrix.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bagel/dataset.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/labels.h"
#include "bagel/npy.h"
#include "bagel/npz.h"
#include "bagel/svmlight.h"
#include "temp_dir.h"
#include "train_helpers.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A FIFO that a thread fills with `bytes`, `piece` bytes per write (so reads
// see the input arrive in parts), then closes. With `pause_at`, it writes
// that many bytes, then waits for release() (or 10 s) before the rest: the
// reader must make do with what has arrived.
class FilledFifo {
 public:
  FilledFifo(std::string path, std::string bytes, std::size_t piece = 1000,
             std::size_t pause_at = std::string::npos)
      : path_(std::move(path)) {
    std::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not kill the test
    if (::mkfifo(path_.c_str(), 0600) != 0) throw std::runtime_error("mkfifo " + path_);
    writer_ = std::thread([this, bytes = std::move(bytes), piece, pause_at] {
      const int fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) return;
      for (std::size_t at = 0; at < bytes.size();) {
        const std::size_t stop = at < pause_at ? std::min(pause_at, bytes.size()) : bytes.size();
        const std::size_t n = std::min(piece, stop - at);
        if (::write(fd, bytes.data() + at, n) < 0) break;
        at += n;
        if (at == pause_at) released_.get_future().wait_for(std::chrono::seconds(10));
      }
      ::close(fd);
    });
  }
  void release() { released_.set_value(); }
  ~FilledFifo() {
    // If the code under test never opened the FIFO, the writer still waits
    // in open(): a reader that comes and goes releases it.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) ::close(fd);
    writer_.join();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::promise<void> released_;
  std::thread writer_;
};

std::vector<std::string> blocks_of(const std::string& bytes, std::size_t min_bytes,
                                   std::size_t piece) {
  TempDir dir;
  FilledFifo fifo(dir.path("in"), bytes, piece);
  InputStream in(fifo.path());
  LineBlocks blocks(in, min_bytes);
  std::vector<std::string> out;
  for (auto b = blocks.next(); !b.empty(); b = blocks.next()) out.emplace_back(b.data(), b.size());
  return out;
}

// The lines of "1 0:1\n2 1:2\n..." (svmlight with numeric labels).
std::string svmlight_lines(int rows) {
  std::string text;
  for (int r = 0; r < rows; ++r)
    text += std::to_string(r % 3) + " " + std::to_string(r % 7) + ":" + std::to_string(r + 1) +
            " " + std::to_string(7 + r % 5) + ":0.5\n";
  return text;
}

void expect_same_matrix(const CsrMatrix& a, const CsrMatrix& b) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  EXPECT_TRUE(std::equal(a.indptr().begin(), a.indptr().end(), b.indptr().begin(), b.indptr().end()));
  EXPECT_TRUE(std::equal(a.indices().begin(), a.indices().end(), b.indices().begin(), b.indices().end()));
  EXPECT_TRUE(std::equal(a.data().begin(), a.data().end(), b.data().begin(), b.data().end()));
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(InputStream, DashAndNonRegularFilesAreStreamsAndFilesAreNot) {
  TempDir dir;
  EXPECT_TRUE(is_stream("-"));
  EXPECT_TRUE(is_stream("/dev/null"));
  EXPECT_FALSE(is_stream(dir.write("f", "x")));
  EXPECT_FALSE(is_stream(dir.path("")));             // a folder
  EXPECT_FALSE(is_stream(dir.path("missing")));      // "cannot open" later, not a stream
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0600), 0);
  EXPECT_TRUE(is_stream(dir.path("fifo")));
  EXPECT_EQ(input_name("-"), "<stdin>");
}

TEST(InputStream, OneStreamByTwoNamesIsTheSameStream) {
  TempDir dir;
  EXPECT_TRUE(same_stream("-", "-"));
  EXPECT_TRUE(is_stdin("-"));
  ASSERT_EQ(::mkfifo(dir.path("fifo").c_str(), 0600), 0);
  fs::create_symlink(dir.path("fifo"), dir.path("link"));
  EXPECT_TRUE(same_stream(dir.path("fifo"), dir.path("link")));
  EXPECT_FALSE(is_stdin(dir.path("fifo")));
  ASSERT_EQ(::mkfifo(dir.path("other").c_str(), 0600), 0);
  EXPECT_FALSE(same_stream(dir.path("fifo"), dir.path("other")));
  // Regular files are read by path, each from its start: never one stream.
  const std::string file = dir.write("f", "x");
  EXPECT_FALSE(same_stream(file, file));
  EXPECT_FALSE(same_stream("-", ""));
}

TEST(InputStream, PeekedBytesAreReadAgain) {
  TempDir dir;
  FilledFifo fifo(dir.path("in"), "PK\x03\x04 and the rest", 3);
  InputStream in(fifo.path());
  EXPECT_EQ(in.peek(4), "PK\x03\x04");
  EXPECT_EQ(in.peek(6), "PK\x03\x04 a");
  const std::vector<std::byte> all = in.read_all();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(all.data()), all.size()),
            "PK\x03\x04 and the rest");
}

TEST(LineBlocks, BlocksAreWholeLinesInOrder) {
  const std::string text = svmlight_lines(500);
  for (const std::size_t min_bytes : {1u, 100u, 100000u}) {
    const std::vector<std::string> blocks = blocks_of(text, min_bytes, 7);
    std::string joined;
    for (const std::string& b : blocks) {
      EXPECT_EQ(b.back(), '\n') << "min_bytes " << min_bytes;
      joined += b;
    }
    EXPECT_EQ(joined, text);
  }
}

TEST(LineBlocks, LastLineWithoutNewlineAndLongLinesStayWhole) {
  const std::string long_line(300000, 'x');
  const std::vector<std::string> blocks = blocks_of("a\n" + long_line + "\nend", 1, 4096);
  std::string joined;
  for (const std::string& b : blocks) joined += b;
  EXPECT_EQ(joined, "a\n" + long_line + "\nend");
  EXPECT_EQ(blocks.back(), "end");
  for (const std::string& b : blocks)
    EXPECT_TRUE(b == "end" || b.back() == '\n') << b.substr(0, 20);
}

// A block of an SvmlightStream holds rows first.. of the file read whole:
// the same values, labels and line numbers.
void expect_block_is_rows_of(const SvmlightData& block, const SvmlightData& file, Index first) {
  for (Index r = 0; r < block.features.rows(); ++r) {
    const RowView got = block.features.row(r);
    const RowView want = file.features.row(first + r);
    ASSERT_EQ(got.size(), want.size()) << "row " << first + r;
    EXPECT_TRUE(std::equal(got.indices.begin(), got.indices.end(), want.indices.begin()));
    EXPECT_TRUE(std::equal(got.values.begin(), got.values.end(), want.values.begin()));
    const auto at = static_cast<std::size_t>(first + r);
    ASSERT_EQ(block.labels.lines[static_cast<std::size_t>(r)], file.labels.lines[at]);
    ASSERT_EQ(block.labels.names[static_cast<std::size_t>(r)], file.labels.names[at]);
  }
}

TEST(StreamReaders, SvmlightFromAFifoEqualsTheFile) {
  TempDir dir;
  const std::string text = "# a comment\n" + svmlight_lines(3000) + "1 3:1";  // no final newline
  const SvmlightData file = read_svmlight(dir.write("x.svm", text));
  FilledFifo fifo(dir.path("fifo"), text, 777);
  const SvmlightData stream = read_svmlight(fifo.path());
  expect_same_matrix(stream.features, file.features);
  EXPECT_EQ(stream.labels.names, file.labels.names);
  EXPECT_EQ(stream.labels.lines, file.labels.lines);
}

TEST(StreamReaders, SvmlightStreamGivesTheRowsAsTheyArriveWithFileLineNumbers) {
  TempDir dir;
  const std::string text = svmlight_lines(2000);
  const std::string first_half = svmlight_lines(1000);
  const SvmlightData file = read_svmlight(dir.write("x.svm", text), ZeroBased::kTrue);
  FilledFifo fifo(dir.path("fifo"), text, 5000, first_half.size());
  InputStream in(fifo.path());
  SvmlightStream stream(in, ZeroBased::kTrue);
  Index rows = 0;
  int blocks = 0;
  while (auto block = stream.next()) {
    // Blocks before the pause hold only rows that had arrived; the writer is
    // released once they are all in, so the rest can come.
    if (rows < 1000) EXPECT_LE(rows + block->features.rows(), 1000);
    if (rows + block->features.rows() == 1000) fifo.release();
    ++blocks;
    expect_block_is_rows_of(*block, file, rows);
    rows += block->features.rows();
  }
  EXPECT_EQ(rows, file.features.rows());
  EXPECT_GT(blocks, 1);  // it did not wait for the whole input
}

TEST(StreamReaders, AnErrorInALaterBlockNamesItsLineInTheWholeStream) {
  TempDir dir;
  const std::string text = svmlight_lines(1000) + "1 5:x\n" + svmlight_lines(10);
  FilledFifo fifo(dir.path("fifo"), text, 3000);
  try {
    read_svmlight(fifo.path());
    FAIL() << "expected an error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), 1001) << e.what();
  }
}

TEST(StreamReaders, SvmlightStreamNeedsAnExplicitIndexBase) {
  TempDir dir;
  FilledFifo fifo(dir.path("fifo"), "1 1:1\n");
  InputStream in(fifo.path());
  EXPECT_THROW(SvmlightStream(in, ZeroBased::kAuto), Error);
  in.read_all();
}

TEST(StreamReaders, AStreamWithNoRowsIsAnErrorAnEmptyFileIsNot) {
  TempDir dir;
  int n = 0;
  for (const std::string text : {"", "\n\n# only a comment\n"}) {
    FilledFifo fifo(dir.path("fifo" + std::to_string(++n)), text);
    const std::string message = error_of([&] { read_features(fifo.path(), ZeroBased::kAuto, nullptr); });
    EXPECT_NE(message.find("no rows"), std::string::npos) << message;
    EXPECT_NE(message.find(fifo.path()), std::string::npos) << message;
  }
  EXPECT_EQ(read_features(dir.write("empty.svm", ""), ZeroBased::kAuto, nullptr).rows(), 0);
}

// A regular file read as a stream comes in blocks of a few MiB a core,
// each parsed in parallel chunks: the rows, their line numbers and an
// error's line are those of the file read whole, and an empty file is no
// error (a file is not a stream that came with nothing).
TEST(StreamReaders, SvmlightStreamOverAFileEqualsTheFileReadWhole) {
  const CoresForTest cores("2");  // blocks of 8 MiB, whatever the machine
  TempDir dir;
  std::string text = "# header\n";
  while (text.size() < (std::size_t{20} << 20)) text += svmlight_lines(20000) + "\n# between\n";
  const std::string path = dir.write("big.svm", text);
  const SvmlightData file = read_svmlight(path, ZeroBased::kTrue);
  InputStream in(path);
  ASSERT_TRUE(in.regular());
  SvmlightStream stream(in, ZeroBased::kTrue);
  Index rows = 0;
  int blocks = 0;
  while (auto block = stream.next()) {
    ++blocks;
    expect_block_is_rows_of(*block, file, rows);
    rows += block->features.rows();
  }
  EXPECT_EQ(rows, file.features.rows());
  EXPECT_GT(blocks, 1);  // not the whole file at once
  EXPECT_LT(blocks, 20);  // nor a pipe's 64 KiB at a time

  const std::int64_t bad_line = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
  const std::string bad = dir.write("bad.svm", text + "1 5:x\n");
  InputStream bad_in(bad);
  SvmlightStream bad_stream(bad_in, ZeroBased::kTrue);
  try {
    while (bad_stream.next()) {
    }
    FAIL() << "expected an error";
  } catch (const FileError& e) {
    EXPECT_EQ(e.line(), bad_line) << e.what();
    EXPECT_EQ(e.file(), bad);
  }

  for (const std::string empty : {"", "\n# only a comment\n"}) {
    InputStream empty_in(dir.write("empty.svm", empty));
    SvmlightStream empty_stream(empty_in, ZeroBased::kFalse);
    EXPECT_FALSE(empty_stream.next().has_value());
  }
}

TEST(StreamReaders, TextAndNpyLabelsFromAFifoEqualTheFile) {
  TempDir dir;
  std::string text = "\xEF\xBB\xBF";  // a BOM, which only the first block may strip
  for (int i = 0; i < 5000; ++i) text += (i % 3 ? "spam\r\n" : "ham\n");
  text += "\n\n";
  const RawLabels file = read_labels(dir.write("y.txt", text));
  {
    FilledFifo fifo(dir.path("text-fifo"), text, 999);
    const RawLabels stream = read_labels(fifo.path());
    EXPECT_EQ(stream.names, file.names);
    EXPECT_EQ(stream.lines, file.lines);
  }
  const std::string npy = read_bytes(std::string(BAGEL_TEST_DATA) + "/labels_int64.npy");
  FilledFifo fifo(dir.path("npy-fifo"), npy, 10);  // no .npy in the name: told by its magic
  EXPECT_EQ(read_labels(fifo.path()).names,
            read_labels(std::string(BAGEL_TEST_DATA) + "/labels_int64.npy").names);
}

TEST(StreamReaders, AnEmptyLabelsStreamIsAnError) {
  TempDir dir;
  FilledFifo fifo(dir.path("fifo"), "\n");
  const std::string message = error_of([&] { read_labels(fifo.path()); });
  EXPECT_NE(message.find("no labels"), std::string::npos) << message;
}

TEST(StreamReaders, NpzFromAFifoEqualsTheFileWhateverItsName) {
  TempDir dir;
  for (const std::string name : {"csr_int64_compressed.npz", "csr_float32_stored.npz"}) {
    const std::string path = std::string(BAGEL_TEST_DATA) + "/" + name;
    FilledFifo fifo(dir.path("fifo-" + name.substr(0, name.size() - 4)), read_bytes(path), 100);
    FeatureFormat format = FeatureFormat::kSvmlight;
    expect_same_matrix(read_features(fifo.path(), ZeroBased::kAuto, nullptr, &format),
                       read_npz_csr(path));
    EXPECT_EQ(format, FeatureFormat::kNpz) << name;
  }
}

TEST(FeatureFormat, AnNpyIsRefusedWithHowToSaveACsr) {
  TempDir dir;
  const std::string npy = read_bytes(std::string(BAGEL_TEST_DATA) + "/float32_2x3.npy");
  for (const std::string name : {"dense.npy", "dense.txt"}) {
    const std::string path = dir.write(name, npy);
    const std::string message = error_of([&] { read_features(path, ZeroBased::kAuto, nullptr); });
    EXPECT_NE(message.find(path + ": is an .npy array"), std::string::npos) << message;
    EXPECT_NE(message.find("scipy.sparse.save_npz"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace bagel
