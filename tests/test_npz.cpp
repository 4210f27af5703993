// scipy .npz reading and writing. The fixtures in tests/data were written by
// scipy.sparse.save_npz (scripts/make_npz_fixtures.py); kDense is the matrix
// that script saves.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "bagel/error.h"
#include "bagel/npz.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;
using Dense = std::vector<std::vector<float>>;

const Dense kDense = {
    {0, 3, 0, 0, 1, 0}, {0, 0, 0, 0, 0, 0}, {2, 0, 0, -5, 0, 7}, {0, 0, 4, 0, 0, 0}};

std::string fixture(const std::string& name) { return std::string(BAGEL_TEST_DATA) + "/" + name; }

// Repeated indices add up, as in scipy's toarray().
Dense densify(const CsrMatrix& m) {
  Dense out(static_cast<std::size_t>(m.rows()),
            std::vector<float>(static_cast<std::size_t>(m.cols())));
  for (Index r = 0; r < m.rows(); ++r) {
    const RowView row = m.row(r);
    for (std::size_t k = 0; k < row.size(); ++k)
      out[static_cast<std::size_t>(r)][static_cast<std::size_t>(row.indices[k])] += row.values[k];
  }
  return out;
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const FileError& e) {
    return e.what();
  }
  return "(no error)";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class NpzTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bagel_npz_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A small matrix with an empty row, unsorted and repeated indices.
  static CsrMatrix sample() {
    return CsrMatrix(3, 5, {0, 3, 3, 5}, {4, 0, 4, 2, 1}, {1.5f, -2.0f, 0.25f, 3.0f, 1e-7f});
  }
  static void expect_same(const CsrMatrix& a, const CsrMatrix& b) {
    EXPECT_EQ(a.rows(), b.rows());
    EXPECT_EQ(a.cols(), b.cols());
    EXPECT_TRUE(
        std::equal(a.indptr().begin(), a.indptr().end(), b.indptr().begin(), b.indptr().end()));
    EXPECT_TRUE(
        std::equal(a.indices().begin(), a.indices().end(), b.indices().begin(), b.indices().end()));
    EXPECT_TRUE(std::equal(a.data().begin(), a.data().end(), b.data().begin(), b.data().end()));
  }
  // Writes a matrix that validate() would reject, to check that reading does.
  std::string write_invalid(CsrMatrix m) {
    const std::string p = path("invalid.npz");
    write_npz_csr(p, m, false);
    return p;
  }

  fs::path dir_;
};

// ---- scipy's files ---------------------------------------------------------------

TEST_F(NpzTest, ReadsScipyCompressedInt64Counts) {
  const CsrMatrix m = read_npz_csr(fixture("csr_int64_compressed.npz"));
  EXPECT_EQ(densify(m), kDense);
  EXPECT_FALSE(m.is_mapped()) << "deflated members cannot be used in place";
}

TEST_F(NpzTest, ReadsScipyStoredFloat32) {
  EXPECT_EQ(densify(read_npz_csr(fixture("csr_float32_stored.npz"))), kDense);
}

TEST_F(NpzTest, ReadsScipyInt64IndexArrays) {
  EXPECT_EQ(densify(read_npz_csr(fixture("csr_int64_indices.npz"))), kDense);
}

TEST_F(NpzTest, RejectsCscWithConversionHint) {
  const std::string file = fixture("csc.npz");
  EXPECT_EQ(error_of([&] { read_npz_csr(file); }),
            file + ": format is 'csc', expected 'csr' (convert with X.tocsr() before save_npz)");
}

TEST_F(NpzTest, RejectsCoo) {
  const std::string msg = error_of([&] { read_npz_csr(fixture("coo.npz")); });
  EXPECT_TRUE(contains(msg, "coo.npz: format is 'coo', expected 'csr'")) << msg;
}

TEST_F(NpzTest, MissingKeyIsNamed) {
  const std::string msg = error_of([&] { read_npz_csr(fixture("missing_indices.npz")); });
  EXPECT_TRUE(contains(msg, "missing_indices.npz: missing key 'indices'")) << msg;
}

TEST_F(NpzTest, MoreColumnsThanInt32IsAClearError) {
  const std::string msg = error_of([&] { read_npz_csr(fixture("csr_too_wide.npz")); });
  EXPECT_TRUE(contains(msg, "csr_too_wide.npz: shape: 3000000000 columns")) << msg;
  EXPECT_TRUE(contains(msg, "int32")) << msg;
}

// ---- round trips -----------------------------------------------------------------

TEST_F(NpzTest, CompressedRoundTripKeepsEveryArray) {
  const CsrMatrix m = sample();
  write_npz_csr(path("c.npz"), m, true);
  const CsrMatrix back = read_npz_csr(path("c.npz"));
  expect_same(m, back);
  EXPECT_FALSE(back.is_mapped());
}

TEST_F(NpzTest, StoredRoundTripIsMappedInPlace) {
  const CsrMatrix m = sample();
  write_npz_csr(path("s.npz"), m, false);
  const CsrMatrix back = read_npz_csr(path("s.npz"));
  expect_same(m, back);
  EXPECT_TRUE(back.is_mapped());
  // Our writer pads STORED payloads to 64 bytes (the mapping is page aligned).
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(back.data().data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(back.indices().data()) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(back.indptr().data()) % 64, 0u);
}

TEST_F(NpzTest, MappedMatrixOutlivesItsFileName) {
  write_npz_csr(path("s.npz"), sample(), false);
  CsrMatrix back = read_npz_csr(path("s.npz"));
  fs::remove(path("s.npz"));
  const CsrMatrix moved = std::move(back);
  expect_same(sample(), moved);
}

TEST_F(NpzTest, LargerStoredMatrixIsMappedAndExact) {
  // Sizes that put the later members at arbitrary offsets.
  const Index rows = 997, cols = 1009;
  std::vector<Index> indptr = {0}, indices;
  std::vector<float> data;
  for (Index r = 0; r < rows; ++r) {
    for (Index k = 0; k < r % 7; ++k) {
      indices.push_back((r * 31 + k * 17) % cols);
      data.push_back(static_cast<float>(r) - 0.5f * static_cast<float>(k));
    }
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  const CsrMatrix m(rows, cols, indptr, indices, data);
  for (const bool compressed : {false, true}) {
    write_npz_csr(path("big.npz"), m, compressed);
    const CsrMatrix back = read_npz_csr(path("big.npz"));
    expect_same(m, back);
    EXPECT_EQ(back.is_mapped(), !compressed);
  }
}

TEST_F(NpzTest, DataMadeInPiecesOnSeveralThreadsIsTheArrayWrittenWhole) {
  // 20 MB of values: pieces made a round of threads at a time, the last
  // piece short. The archive must be the one written from the whole array.
  const Index rows = 5000, cols = 1000;
  std::vector<Index> indptr = {0}, indices;
  std::vector<float> data;
  for (Index r = 0; r < rows; ++r) {
    for (Index k = 0; k < cols; ++k) {
      indices.push_back(k);
      data.push_back(static_cast<float>(r % 97) - 0.25f * static_cast<float>(k % 13));
    }
    indptr.push_back(static_cast<Index>(indices.size()));
  }
  indices.push_back(3);  // one more value: 20,000,004 bytes
  data.push_back(1.0f);
  indptr.back() += 1;
  const std::span<const std::byte> whole = std::as_bytes(std::span<const float>(data));
  std::atomic<int> calls{0};
  const ArrayBytes pieces{whole.size(), [&](std::uint64_t first, std::span<std::byte> out) {
                            ++calls;
                            std::memcpy(out.data(), whole.data() + first, out.size());
                          }};
  write_npz_csr_arrays(path("whole.npz"), rows, cols, indptr, indices, "<f4", whole, false);
  write_npz_csr_arrays(path("pieces.npz"), rows, cols, indptr, indices, "<f4", pieces, false);
  EXPECT_GT(calls.load(), 4);
  const auto bytes = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_TRUE(bytes(path("whole.npz")) == bytes(path("pieces.npz")));
  expect_same(CsrMatrix(rows, cols, indptr, indices, data), read_npz_csr(path("pieces.npz")));
}

TEST_F(NpzTest, SpareRoomAfterTheLastNonZeroIsUnusedAsInScipy) {
  // scipy may keep indices and data longer than indptr[-1]; load_npz uses
  // the first indptr[-1] entries. The spare ones here (column 99, NaN) would
  // be refused if they were read. Every reader: mapped in place (stored
  // float32), converted (float64), inflated, from a stream, in row chunks.
  const std::vector<Index> indptr = {0, 2, 2, 3};
  const std::vector<Index> indices = {4, 0, 2, 99, 1};
  const std::vector<float> f4 = {1.5f, -2.0f, 3.0f, NAN, 7.0f};
  const std::vector<double> f8(f4.begin(), f4.end());
  const CsrMatrix expected(3, 5, {0, 2, 2, 3}, {4, 0, 2}, {1.5f, -2.0f, 3.0f});
  const std::string file = path("spare.npz");
  for (const bool compressed : {false, true}) {
    for (const bool doubles : {false, true}) {
      SCOPED_TRACE(std::string(compressed ? "compressed" : "stored") + (doubles ? " <f8" : " <f4"));
      const auto bytes = doubles ? std::as_bytes(std::span<const double>(f8))
                                 : std::as_bytes(std::span<const float>(f4));
      write_npz_csr_arrays(file, 3, 5, indptr, indices, doubles ? "<f8" : "<f4", bytes,
                           compressed);
      expect_same(expected, read_npz_csr(file));
      std::ifstream in(file, std::ios::binary);
      const std::vector<char> raw((std::istreambuf_iterator<char>(in)), {});
      const auto streamed = std::as_bytes(std::span<const char>(raw));
      expect_same(expected, read_npz_csr(std::make_unique<MappedFile>(
                                std::vector<std::byte>(streamed.begin(), streamed.end()), file)));
      NpzRowChunks chunks(file);
      std::vector<Index> chunk_indptr = {0}, chunk_indices;
      std::vector<float> chunk_data;
      while (const auto chunk = chunks.next(2)) {
        for (Index r = 0; r < chunk->rows(); ++r) {
          const RowView row = chunk->row(r);
          chunk_indices.insert(chunk_indices.end(), row.indices.begin(), row.indices.end());
          chunk_data.insert(chunk_data.end(), row.values.begin(), row.values.end());
          chunk_indptr.push_back(static_cast<Index>(chunk_indices.size()));
        }
      }
      expect_same(expected, CsrMatrix(3, 5, chunk_indptr, chunk_indices, chunk_data));
    }
  }
}

TEST_F(NpzTest, IndptrBeyondTheStoredEntriesIsRejected) {
  // The other way round is no spare room: the rows need more than is there.
  const std::string file = path("short.npz");
  const std::vector<float> data = {1.0f, 2.0f};
  for (const bool compressed : {false, true}) {
    write_npz_csr_arrays(file, 2, 3, std::vector<Index>{0, 1, 3}, std::vector<Index>{0, 1},
                         "<f4", std::as_bytes(std::span<const float>(data)), compressed);
    EXPECT_EQ(error_of([&] { read_npz_csr(file); }), file + ": indptr[rows] is 3, expected nnz = 2");
    EXPECT_EQ(error_of([&] { NpzRowChunks chunks(file); }),
              file + ": indptr[rows] is 3, expected nnz = 2");
  }
}

TEST_F(NpzTest, EmptyMatricesRoundTrip) {
  for (const bool compressed : {false, true}) {
    const CsrMatrix empty(4, 3, {0, 0, 0, 0, 0}, {}, {});
    write_npz_csr(path("e.npz"), empty, compressed);
    expect_same(empty, read_npz_csr(path("e.npz")));
    const CsrMatrix none(0, 0, {0}, {}, {});
    write_npz_csr(path("n.npz"), none, compressed);
    expect_same(none, read_npz_csr(path("n.npz")));
  }
}

TEST_F(NpzTest, WriteReplacesAnExistingFileAndLeavesNoTemporary) {
  write_npz_csr(path("x.npz"), sample(), true);
  const CsrMatrix one(1, 1, {0, 1}, {0}, {42.0f});
  write_npz_csr(path("x.npz"), one, false);
  expect_same(one, read_npz_csr(path("x.npz")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(NpzTest, WriteNamesAnUnwritableFolder) {
  const std::string target = path("no/such/folder/x.npz");
  EXPECT_TRUE(contains(error_of([&] { write_npz_csr(target, sample(), true); }), "x.npz"));
}

// ---- invalid input -----------------------------------------------------------------

TEST_F(NpzTest, DecreasingIndptrIsRejected) {
  const std::string file = write_invalid(CsrMatrix(2, 3, {0, 2, 1}, {0}, {1.0f}));
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file)) << msg;
  EXPECT_TRUE(contains(msg, "indptr")) << msg;
}

TEST_F(NpzTest, IndexOutOfRangeIsRejected) {
  const std::string file = write_invalid(CsrMatrix(1, 3, {0, 2}, {1, 3}, {1.0f, 2.0f}));
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file + ": indices")) << msg;
  EXPECT_TRUE(contains(msg, "column 3")) << msg;
}

TEST_F(NpzTest, NanDataIsRejected) {
  const std::string file = write_invalid(CsrMatrix(1, 3, {0, 2}, {0, 2}, {1.0f, NAN}));
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file + ": data")) << msg;
  EXPECT_TRUE(contains(msg, "non-finite")) << msg;
}

TEST_F(NpzTest, RowChunksNameTheRowInTheFileAsTheWholeReaderDoes) {
  // A compressed file is predicted in chunks; the bad entry is in row 4, the
  // third chunk of two rows: the error names row 4, as read_npz_csr does.
  const std::vector<Index> indptr = {0, 1, 2, 3, 4, 5};
  const std::vector<Index> indices = {0, 1, 2, 0, 1};
  const std::vector<float> data = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f};
  std::vector<Index> out_of_range = indices;
  out_of_range.back() = 3;
  std::vector<float> non_finite = data;
  non_finite.back() = INFINITY;
  const auto check = [&](const CsrMatrix& bad, const std::string& expected) {
    const std::string file = path("bad.npz");
    write_npz_csr(file, bad, true);
    ASSERT_TRUE(NpzRowChunks::is_compressed(file));
    const std::string msg = error_of([&] {
      NpzRowChunks chunks(file);
      while (chunks.next(2)) {
      }
    });
    EXPECT_EQ(msg, file + expected);
    EXPECT_EQ(msg, error_of([&] { read_npz_csr(file); }));
  };
  check(CsrMatrix(5, 3, indptr, out_of_range, data),
        ": indices: column 3 in row 4 is out of range [0, 3)");
  check(CsrMatrix(5, 3, indptr, indices, non_finite), ": data: non-finite value in row 4, column 1");
}

TEST_F(NpzTest, TruncatedFileIsRejected) {
  for (const char* name : {"csr_int64_compressed.npz", "csr_float32_stored.npz"}) {
    std::ifstream in(fixture(name), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 10, std::size_t{5}}) {
      const std::string file = path("cut.npz");
      std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
      const std::string msg = error_of([&] { read_npz_csr(file); });
      EXPECT_TRUE(contains(msg, file + ": ")) << name << " cut to " << keep << ": " << msg;
    }
  }
}

TEST_F(NpzTest, CorruptDeflatedMemberIsRejectedNamingTheKey) {
  // data.npy is the last member scipy writes: flip a byte of its deflate
  // stream, just before the central directory.
  std::ifstream in(fixture("csr_int64_compressed.npz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t directory = bytes.find("PK\x01\x02");
  ASSERT_NE(directory, std::string::npos);
  bytes[directory - 20] = static_cast<char>(bytes[directory - 20] ^ 0x5A);
  const std::string file = path("corrupt.npz");
  std::ofstream(file, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file + ": data: ")) << msg;
}

TEST_F(NpzTest, CorruptStoredMemberIsRejectedByItsCrc) {
  // A STORED member read in place never passes through libzip's CRC check.
  // One bit of a value flipped: without the check it read as another number.
  const CsrMatrix m(1, 3, {0, 2}, {0, 2}, {1234.5f, 2.0f});
  write_npz_csr(path("s.npz"), m, false);
  std::ifstream in(path("s.npz"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const float v = 1234.5f;
  const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(&v), sizeof v));
  ASSERT_NE(at, std::string::npos);
  bytes[at] = static_cast<char>(bytes[at] ^ 0x01);
  const std::string file = path("bad.npz");
  std::ofstream(file, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_EQ(error_of([&] { read_npz_csr(file); }),
            file + ": data: corrupt zip entry: its bytes do not match the CRC-32 the zip records "
                   "for data.npy");
}

TEST_F(NpzTest, CooIsNotTakenForACompressedCsrAndGetsItsFormatsHint) {
  // is_compressed is asked first (predict's choice of reader): a COO file,
  // without indices, must reach the reader that names its format.
  EXPECT_FALSE(NpzRowChunks::is_compressed(fixture("coo.npz")));
}

TEST_F(NpzTest, NotAZipIsRejected) {
  const std::string file = path("text.npz");
  std::ofstream(file) << "1 1:2 3:4\n0 2:1\n";
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file + ": not a readable zip archive")) << msg;
}

TEST_F(NpzTest, MissingFileIsNamed) {
  const std::string file = path("absent.npz");
  const std::string msg = error_of([&] { read_npz_csr(file); });
  EXPECT_TRUE(contains(msg, file + ": cannot open")) << msg;
}

}  // namespace
}  // namespace bagel
