// .npy headers, dtype conversions and writing, checked against files numpy
// wrote (tests/data, made by scripts/make_npz_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "bagel/error.h"
#include "bagel/npy.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) { return std::string(BAGEL_TEST_DATA) + "/" + name; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::span<const std::byte> as_span(const std::string& s) {
  return std::as_bytes(std::span<const char>(s.data(), s.size()));
}

// An .npy built by hand: any header text, any version, any payload.
std::string make_npy(const std::string& dict, const std::string& payload, int major = 1) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const std::size_t len = dict.size();
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out += static_cast<char>((len >> (8 * i)) & 0xFF);
  return out + dict + payload;
}

template <class T>
std::string raw(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Parses and checks that parsing fails with a FileError whose message names
// the source and contains `expected`.
void expect_header_error(const std::string& npy, const std::string& expected) {
  try {
    parse_npy_header(as_span(npy), "arr.npy");
    FAIL() << "expected an error containing: " << expected;
  } catch (const FileError& e) {
    EXPECT_EQ(e.file(), "arr.npy");
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
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

// ---- headers -------------------------------------------------------------------

TEST(NpyHeader, ReadsNumpyVersion1FileWithShapeAndOffset) {
  const NpyArray a = read_npy(fixture("float32_2x3.npy"));
  EXPECT_EQ(a.header.dtype, DType::kFloat32);
  EXPECT_EQ(a.header.descr, "<f4");
  EXPECT_EQ(a.header.shape, (std::vector<std::int64_t>{2, 3}));
  EXPECT_FALSE(a.header.fortran_order);
  EXPECT_EQ(a.header.data_offset % 64, 0u) << "numpy aligns payloads to 64 bytes";
  EXPECT_EQ(npy_to_float32(a.header, a.payload(), "f"),
            (std::vector<float>{1.5f, -2.0f, 0.0f, 3.25f, 1e-3f, 7.0f}));
}

TEST(NpyHeader, ReadsVersion2And3Headers) {
  for (const char* name : {"int64_4_v2.npy", "int64_4_v3.npy"}) {
    const NpyArray a = read_npy(fixture(name));
    EXPECT_EQ(a.header.dtype, DType::kInt64) << name;
    EXPECT_EQ(npy_to_int64(a.header, a.payload(), name),
              (std::vector<std::int64_t>{0, 1000000000, 2000000000, 3000000000}))
        << name;
  }
}

TEST(NpyHeader, AcceptsAnyKeyOrderQuotesSpacingAndTrailingComma) {
  const std::string payload = raw(std::vector<std::int32_t>{7, 8});
  for (const std::string dict : {
           "{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}\n",
           "{\"descr\":\"<i4\",\"fortran_order\":False,\"shape\":(2,)}",
           "{ 'fortran_order' : False ,\n 'descr' : '<i4' , 'shape' : ( 2 , ) , }      \n",
           "{'descr': '<i4', 'fortran_order': False, 'shape': (2L,), }\n",  // Python 2 long
       }) {
    const std::string npy = make_npy(dict, payload);
    const NpyHeader h = parse_npy_header(as_span(npy), "arr.npy");
    EXPECT_EQ(h.dtype, DType::kInt32) << dict;
    EXPECT_EQ(h.shape, (std::vector<std::int64_t>{2})) << dict;
    EXPECT_EQ(h.data_offset, 10 + dict.size()) << dict;
  }
}

TEST(NpyHeader, ReadsNativeAndNotApplicableByteOrders) {
  const std::string dict = "{'descr': '=u2', 'fortran_order': False, 'shape': (1,), }";
  const std::string npy = make_npy(dict, raw(std::vector<std::uint16_t>{513}));
  const NpyHeader h = parse_npy_header(as_span(npy), "arr.npy");
  EXPECT_EQ(h.dtype, DType::kUInt16);
  EXPECT_EQ(npy_to_int32(h, as_span(npy).subspan(h.data_offset), "arr.npy")[0], 513);

  const std::string bools = make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,)}",
                                     std::string("\x01\x00", 2));
  EXPECT_EQ(parse_npy_header(as_span(bools), "arr.npy").dtype, DType::kBool);
}

TEST(NpyHeader, ZeroDimensionalArrayHasOneElement) {
  const std::string npy =
      make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': ()}", raw(std::vector{2.5}));
  const NpyHeader h = parse_npy_header(as_span(npy), "arr.npy");
  EXPECT_TRUE(h.shape.empty());
  EXPECT_EQ(h.count(), 1);
}

TEST(NpyHeader, RejectsBadMagic) {
  expect_header_error("PK\x03\x04 not an npy at all", "magic");
  expect_header_error("", "magic");
}

TEST(NpyHeader, RejectsUnknownVersion) {
  std::string npy = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}", "");
  npy[6] = 4;
  expect_header_error(npy, "version 4.0");
}

TEST(NpyHeader, RejectsBigEndianWithConversionHint) {
  const std::string npy = make_npy("{'descr': '>i4', 'fortran_order': False, 'shape': (1,)}",
                                   std::string("\0\0\0\1", 4));
  expect_header_error(npy, "'>i4' is big-endian");
}

TEST(NpyHeader, AcceptsBigEndianMarkOnSingleBytes) {
  const std::string npy =
      make_npy("{'descr': '>i1', 'fortran_order': False, 'shape': (1,)}", "\xff");
  const NpyHeader h = parse_npy_header(as_span(npy), "arr.npy");
  EXPECT_EQ(npy_to_int32(h, as_span(npy).subspan(h.data_offset), "arr.npy")[0], -1);
}

TEST(NpyHeader, RejectsFortranOrderOnlyForMatrices) {
  const std::string payload(16, '\0');
  expect_header_error(make_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 2)}", payload),
                      "Fortran order");
  const std::string vector =
      make_npy("{'descr': '<i4', 'fortran_order': True, 'shape': (4,)}", payload);
  EXPECT_EQ(parse_npy_header(as_span(vector), "arr.npy").count(), 4);
}

TEST(NpyHeader, RejectsObjectStructuredAndUnknownDtypes) {
  expect_header_error(
      make_npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,)}", std::string(8, '\0')),
      "Python objects");
  expect_header_error(make_npy("{'descr': [('a', '<i4')], 'fortran_order': False, "
                               "'shape': (1,)}",
                               std::string(4, '\0')),
                      "structured");
  expect_header_error(
      make_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", std::string(8, '\0')),
      "'<c8'");
  expect_header_error(
      make_npy("{'descr': '<f2', 'fortran_order': False, 'shape': (1,)}", std::string(2, '\0')),
      "'<f2'");
}

TEST(NpyHeader, AnUnreadDtypeIsRefusedWithTheDtypesTheReaderTakes) {
  // float16 and complex alike; strings are listed only where they are read.
  for (const char* descr : {"<f2", "<c16"}) {
    const std::string npy = make_npy(std::string("{'descr': '") + descr +
                                         "', 'fortran_order': False, 'shape': (0,)}",
                                     "");
    const std::string dtype = std::string("dtype '") + descr + "' is not a dtype bagel reads ";
    EXPECT_EQ(error_of([&] { parse_npy_header(as_span(npy), "arr.npy"); }),
              "arr.npy: " + dtype +
                  "(expected bool, int8..int64, uint8..uint64, float32, float64, unicode or bytes)");
    EXPECT_EQ(error_of([&] { parse_npy_header(as_span(npy), "x.npz", "data", NpyKinds::kNumbers); }),
              "x.npz: data: " + dtype +
                  "(expected bool, int8..int64, uint8..uint64, float32 or float64)");
  }
}

TEST(NpyHeader, RejectsTruncatedPayloadAndHeader) {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}";
  expect_header_error(make_npy(dict, std::string(23, '\0')), "truncated");
  const std::string whole = make_npy(dict, std::string(24, '\0'));
  expect_header_error(whole.substr(0, 30), "truncated");
  expect_header_error(whole.substr(0, 9), "truncated");
}

TEST(NpyHeader, RejectsMissingUnknownAndMalformedKeys) {
  expect_header_error(make_npy("{'descr': '<f4', 'shape': (1,)}", "abcd"),
                      "missing key 'fortran_order'");
  expect_header_error(
      make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "abcd"),
      "unexpected key 'x'");
  expect_header_error(make_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,)}", "abcd"),
                      "True or False");
  expect_header_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", ""),
                      "negative");
}

TEST(NpyHeader, ShowsGarbageBytesEscapedInMessages) {
  expect_header_error(
      make_npy("{'d\x87scr': '<f4', 'fortran_order': False, 'shape': (1,)}", "abcd"),
      "unexpected key 'd\\x87scr'");
}

TEST(NpyHeader, NamesTheKeyInsideAnArchive) {
  try {
    parse_npy_header(as_span(std::string("junk")), "x.npz", "indices");
    FAIL();
  } catch (const FileError& e) {
    EXPECT_EQ(e.file(), "x.npz");
    EXPECT_EQ(std::string(e.what()).rfind("x.npz: indices: ", 0), 0u) << e.what();
  }
}

// ---- conversions ---------------------------------------------------------------

NpyHeader header_for(const std::string& descr, std::size_t item, std::int64_t n, DType t) {
  NpyHeader h;
  h.descr = descr;
  h.dtype = t;
  h.item_size = item;
  h.shape = {n};
  return h;
}

TEST(NpyConvert, Int64ToInt32KeepsValuesInRange) {
  const std::vector<std::int64_t> v = {0, -1, std::numeric_limits<std::int32_t>::max(),
                                       std::numeric_limits<std::int32_t>::min()};
  const std::string bytes = raw(v);
  const auto out = npy_to_int32(header_for("<i8", 8, 4, DType::kInt64), as_span(bytes), "a");
  EXPECT_EQ(out, (std::vector<std::int32_t>{0, -1, std::numeric_limits<std::int32_t>::max(),
                                            std::numeric_limits<std::int32_t>::min()}));
}

TEST(NpyConvert, ReportsEveryConvertedStretchOfThePayloadOnce) {
  // 200,000 int64 values: several conversion chunks, run in parallel.
  std::vector<std::int64_t> v(200000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int64_t>(i % 1000) - 500;
  const std::string bytes = raw(v);
  const auto payload = as_span(bytes);
  std::mutex m;
  std::vector<std::pair<std::size_t, std::size_t>> seen;  // (offset, size)
  const auto out = npy_to_int32(header_for("<i8", 8, 200000, DType::kInt64), payload, "a", "k",
                                [&](std::span<const std::byte> done) {
                                  std::lock_guard<std::mutex> lock(m);
                                  seen.emplace_back(done.data() - payload.data(), done.size());
                                });
  ASSERT_EQ(out.size(), v.size());
  EXPECT_EQ(out[123457], static_cast<std::int32_t>(v[123457]));
  ASSERT_GT(seen.size(), 1u);
  std::sort(seen.begin(), seen.end());
  std::size_t next = 0;
  for (const auto& [offset, size] : seen) {
    EXPECT_EQ(offset, next);  // no gap, no overlap
    next = offset + size;
  }
  EXPECT_EQ(next, payload.size());
}

TEST(NpyConvert, Int64ToInt32RejectsOverflowNamingValueAndPosition) {
  const std::string bytes = raw(std::vector<std::int64_t>{1, 2, 2147483648LL});
  const std::string msg = error_of([&] {
    npy_to_int32(header_for("<i8", 8, 3, DType::kInt64), as_span(bytes), "x.npz", "indices");
  });
  EXPECT_NE(msg.find("x.npz: indices: value 2147483648 at position 2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("int32"), std::string::npos) << msg;
}

TEST(NpyConvert, UnsignedAboveSignedRangeIsRejected) {
  const std::string bytes = raw(std::vector<std::uint64_t>{1ULL << 63});
  EXPECT_THROW(npy_to_int64(header_for("<u8", 8, 1, DType::kUInt64), as_span(bytes), "a"),
               FileError);
  const std::string small = raw(std::vector<std::uint32_t>{4000000000u});
  EXPECT_THROW(npy_to_int32(header_for("<u4", 4, 1, DType::kUInt32), as_span(small), "a"),
               FileError);
  EXPECT_EQ(npy_to_int64(header_for("<u4", 4, 1, DType::kUInt32), as_span(small), "a")[0],
            4000000000LL);
}

TEST(NpyConvert, FloatToIntAcceptsWholeNumbersOnly) {
  const std::string whole = raw(std::vector<double>{0.0, -3.0, 2147483647.0});
  EXPECT_EQ(npy_to_int32(header_for("<f8", 8, 3, DType::kFloat64), as_span(whole), "a"),
            (std::vector<std::int32_t>{0, -3, 2147483647}));
  for (const double bad : {1.5, 2147483648.0, -2147483649.0, std::nan(""), HUGE_VAL}) {
    const std::string bytes = raw(std::vector<double>{0.0, bad});
    const std::string msg = error_of(
        [&] { npy_to_int32(header_for("<f8", 8, 2, DType::kFloat64), as_span(bytes), "a"); });
    EXPECT_NE(msg.find("at position 1 is not a whole number"), std::string::npos) << msg;
  }
  const std::string f32 = raw(std::vector<float>{16777216.0f, 0.25f});
  EXPECT_THROW(npy_to_int64(header_for("<f4", 4, 2, DType::kFloat32), as_span(f32), "a"),
               FileError);
}

TEST(NpyConvert, ToFloat32ConvertsEveryNumericDtype) {
  const std::string f64 = raw(std::vector<double>{0.1, -HUGE_VAL, NAN, 3.4028234e38});
  const auto a = npy_to_float32(header_for("<f8", 8, 4, DType::kFloat64), as_span(f64), "a");
  EXPECT_EQ(a[0], static_cast<float>(0.1));
  EXPECT_TRUE(std::isinf(a[1]) && a[1] < 0) << "non-finite values are left for validate()";
  EXPECT_TRUE(std::isnan(a[2]));
  EXPECT_EQ(a[3], std::numeric_limits<float>::max());

  const std::string i64 = raw(std::vector<std::int64_t>{-7, 1LL << 40});
  EXPECT_EQ(npy_to_float32(header_for("<i8", 8, 2, DType::kInt64), as_span(i64), "a"),
            (std::vector<float>{-7.0f, 1099511627776.0f}));

  const std::string i8 = raw(std::vector<std::int8_t>{-128, 127});
  EXPECT_EQ(npy_to_float32(header_for("|i1", 1, 2, DType::kInt8), as_span(i8), "a"),
            (std::vector<float>{-128.0f, 127.0f}));

  // Any non-zero byte is True in numpy.
  const std::string b = std::string("\x00\x01\x02", 3);
  EXPECT_EQ(npy_to_float64(header_for("|b1", 1, 3, DType::kBool), as_span(b), "a"),
            (std::vector<double>{0.0, 1.0, 1.0}));
}

TEST(NpyConvert, Float64BeyondFloat32RangeIsRejected) {
  const std::string f64 = raw(std::vector<double>{1.0, -1e300});
  const std::string msg = error_of([&] {
    npy_to_float32(header_for("<f8", 8, 2, DType::kFloat64), as_span(f64), "x.npz", "data");
  });
  EXPECT_NE(msg.find("x.npz: data: value -1e+300 at position 1 is beyond the range of float32"),
            std::string::npos)
      << msg;
}

TEST(NpyConvert, ReadsUnalignedPayloads) {
  const std::string bytes = "x" + raw(std::vector<std::int32_t>{11, -12, 13});
  const auto out =
      npy_to_int64(header_for("<i4", 4, 3, DType::kInt32), as_span(bytes).subspan(1), "a");
  EXPECT_EQ(out, (std::vector<std::int64_t>{11, -12, 13}));
}

TEST(NpyConvert, RejectsPayloadShorterThanShape) {
  const std::string bytes = raw(std::vector<std::int32_t>{1, 2});
  const std::string msg =
      error_of([&] { npy_to_int32(header_for("<i4", 4, 3, DType::kInt32), as_span(bytes), "a"); });
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(NpyConvert, LargeArraysConvertInParallelAndReportTheFirstBadValue) {
  // Several OpenMP chunks; bad values in two of them: the earliest is named.
  const std::int64_t n = 1'000'003;
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] = (i * 7919) % 1000000 - 500000;
  const std::string good = raw(v);
  const auto out = npy_to_int32(header_for("<i8", 8, n, DType::kInt64), as_span(good), "a");
  ASSERT_EQ(out.size(), v.size());
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(out[i], v[i]) << i;

  v[900'000] = -(1LL << 40);
  v[700'001] = 1LL << 33;
  const std::string bad = raw(v);
  const std::string msg =
      error_of([&] { npy_to_int32(header_for("<i8", 8, n, DType::kInt64), as_span(bad), "a"); });
  EXPECT_NE(msg.find("value 8589934592 at position 700001"), std::string::npos) << msg;
}

TEST(NpyConvert, StringsFromUnicodeFile) {
  const NpyArray a = read_npy(fixture("labels_unicode.npy"));
  EXPECT_EQ(a.header.dtype, DType::kUnicode);
  EXPECT_EQ(npy_to_strings(a.header, a.payload(), "l"),
            (std::vector<std::string>{"spam", "ham", "\xc3\xa9t\xc3\xa9", ""}));
}

TEST(NpyConvert, StringsFromBytesStripTrailingNuls) {
  const std::string npy = make_npy("{'descr': '|S3', 'fortran_order': False, 'shape': (2,)}",
                                   std::string("ab\0xyz", 6));
  const NpyHeader h = parse_npy_header(as_span(npy), "s.npy");
  EXPECT_EQ(h.dtype, DType::kBytes);
  EXPECT_EQ(npy_to_strings(h, as_span(npy).subspan(h.data_offset), "s.npy"),
            (std::vector<std::string>{"ab", "xyz"}));
}

TEST(NpyConvert, NumbersAndStringsDoNotMix) {
  const NpyArray labels = read_npy(fixture("labels_unicode.npy"));
  EXPECT_THROW(npy_to_float32(labels.header, labels.payload(), "l"), FileError);
  const NpyArray numbers = read_npy(fixture("int32_5.npy"));
  EXPECT_THROW(npy_to_strings(numbers.header, numbers.payload(), "n"), FileError);
}

// ---- writing -------------------------------------------------------------------

class NpyWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bagel_npy_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(NpyWrite, Float32FileIsByteIdenticalToNumpys) {
  const std::vector<float> v = {1.5f, -2.0f, 0.0f, 3.25f, 1e-3f, 7.0f};
  write_npy(path("w.npy"), std::span<const float>(v), {2, 3});
  EXPECT_EQ(slurp(path("w.npy")), slurp(fixture("float32_2x3.npy")));
}

TEST_F(NpyWrite, Int32FileIsByteIdenticalToNumpys) {
  const std::vector<std::int32_t> v = {0, -1, 2, 2147483647, -2147483647 - 1};
  write_npy(path("w.npy"), std::span<const std::int32_t>(v), {5});
  EXPECT_EQ(slurp(path("w.npy")), slurp(fixture("int32_5.npy")));
}

TEST_F(NpyWrite, ZeroDimensionalBytesHeaderMatchesScipysFormatMember) {
  // csr_float32_stored.npz is uncompressed, so its format.npy lies in it verbatim.
  const std::string ours = npy_bytes("|S3", {}, as_span(std::string("csr")));
  EXPECT_NE(slurp(fixture("csr_float32_stored.npz")).find(ours), std::string::npos);
}

TEST_F(NpyWrite, RoundTripsThroughReadNpy) {
  std::vector<float> v(1000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i) * 0.5f - 3.0f;
  write_npy(path("r.npy"), std::span<const float>(v), {10, 100});
  const NpyArray a = read_npy(path("r.npy"));
  EXPECT_EQ(a.header.shape, (std::vector<std::int64_t>{10, 100}));
  EXPECT_EQ(npy_to_float32(a.header, a.payload(), "r"), v);
}

TEST_F(NpyWrite, ShapeThatDoesNotMatchTheValuesIsRejectedAndNothingIsLeft) {
  const std::vector<float> v = {1, 2, 3};
  EXPECT_THROW(write_npy(path("bad.npy"), std::span<const float>(v), {2, 2}), FileError);
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NpyWrite, ReadNpyNamesAMissingFile) {
  const std::string msg = error_of([&] { read_npy(path("nope.npy")); });
  EXPECT_NE(msg.find("nope.npy"), std::string::npos) << msg;
}

// ---- hostile headers (issue 18) --------------------------------------------------

TEST(NpyHostile, ZeroWidthStringDtypesAreRefusedNotUndefined) {
  // '<U0' passed a null pointer to memcpy; '|S0' claiming 10^8 rows
  // allocated 3.9 GB of empty strings from a 128-byte file.
  expect_header_error(make_npy("{'descr': '<U0', 'fortran_order': False, 'shape': (3,), }", ""),
                      "zero-width");
  expect_header_error(
      make_npy("{'descr': '|S0', 'fortran_order': False, 'shape': (100000000,), }", ""),
      "zero-width");
}

TEST(NpyHostile, BytesAfterThePayloadAreRefused) {
  const std::string npy =
      make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
               raw(std::vector<std::int32_t>{1, 2}) + std::string(5, '\0'));
  expect_header_error(npy, "5 bytes follow the array's end");
}

TEST(NpyHostile, AHeaderLongerThan64KiBIsRefusedBeforeReadingIt) {
  std::string npy = make_npy("{", "", 2);
  npy[8] = '\xFF', npy[9] = '\xFF', npy[10] = '\xFF', npy[11] = '\x7F';  // 2 GB header
  expect_header_error(npy, "numpy writes a few hundred");
}

TEST(NpyHostile, PrefixParsesTheHeaderWithoutThePayload) {
  const std::string npy = make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }", "");
  const NpyHeader h = parse_npy_prefix(as_span(npy), "arr.npy");
  EXPECT_EQ(h.payload_size(), 8000u);
  expect_header_error(npy, "truncated");  // the whole-file check still wants the payload
}

TEST(NpyHostile, AnExceptionInsideTheParallelConversionBecomesAnError) {
  // Several chunks, so that the conversion runs as an OpenMP region; a
  // throwing callback used to reach std::terminate.
  const std::vector<std::int32_t> values(1 << 20, 7);
  const std::string npy = make_npy(
      "{'descr': '<i4', 'fortran_order': False, 'shape': (1048576,), }", raw(values));
  const NpyHeader h = parse_npy_header(as_span(npy), "arr.npy");
  const ConsumedFn throwing = [](std::span<const std::byte>) { throw Error("release failed"); };
  EXPECT_THROW(npy_to_float32(h, as_span(npy).subspan(h.data_offset), "arr.npy", "", throwing),
               Error);
}

}  // namespace
}  // namespace bagel
