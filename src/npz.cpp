#include "bagel/npz.h"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/npy.h"
#include "bagel/parallel_errors.h"
#include "stored_zip.h"

namespace bagel {

namespace {

constexpr std::int64_t kMaxIndex = std::numeric_limits<Index>::max();
// Payloads of members written STORED start on this boundary, so that
// read_npz_csr can use them in place (any SIMD load width is then aligned).
constexpr std::uint64_t kPayloadAlign = 64;
// Zip end of central directory record: 22 fixed bytes, then the comment.
constexpr std::uint64_t kEndRecordSize = 22;
// Zip local header: 30 fixed bytes, then the name and the extra fields.
constexpr std::uint64_t kLocalHeaderSize = 30;
// The extra field Android's zipalign uses for padding: id, length, then a
// 2-byte alignment and zeros. Zip readers skip extra fields they do not know.
constexpr zip_uint16_t kAlignmentFieldId = 0xD935;
constexpr std::uint64_t kAlignmentFieldMin = 6;
// zlib's default level, as numpy's savez_compressed uses (libzip's own
// default is 9: much slower for a few percent).
constexpr zip_uint32_t kDeflateLevel = 6;
// Deflate's own limit: 258 bytes from about a quarter of a byte (zlib's
// technical note); a member claiming more per compressed byte is corrupt.
constexpr zip_uint64_t kMaxInflateRatio = 1032;
// Non-zeros per chunk of NpzRowChunks: 32 MiB of indices and data.
constexpr std::int64_t kChunkNonZeros = std::int64_t{1} << 22;
// format.npy ('|S3') and shape.npy (two int64) take about 150 bytes.
constexpr zip_uint64_t kSmallMemberBytes = 4096;
// Data converted as it is written goes through a buffer of this size (a
// multiple of every element size).
constexpr std::uint64_t kPieceBytes = std::uint64_t{4} << 20;

// ---- libzip handles ----------------------------------------------------------

struct ZipDiscard {
  void operator()(zip_t* za) const { zip_discard(za); }
};
struct ZipFileClose {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};
using ZipHandle = std::unique_ptr<zip_t, ZipDiscard>;
using ZipFileHandle = std::unique_ptr<zip_file_t, ZipFileClose>;

std::string libzip_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

// ---- the archive: its end, opening it, where a STORED member's bytes are ----

// Little-endian reads from the mapped archive, bounds-checked so that a
// corrupt file is an error, never a crash.
class ZipBytes {
 public:
  ZipBytes(std::span<const std::byte> bytes, const std::string& path)
      : bytes_(bytes), path_(path) {}
  std::uint64_t le(std::uint64_t offset, int width) const {
    if (offset > bytes_.size() || bytes_.size() - offset < static_cast<std::uint64_t>(width))
      corrupt("a zip record at offset " + std::to_string(offset) + " runs past the end");
    std::uint64_t value = 0;
    for (int i = 0; i < width; ++i)
      value |= std::to_integer<std::uint64_t>(bytes_[offset + i]) << (8 * i);
    return value;
  }
  std::string_view text(std::uint64_t offset, std::uint64_t length) const {
    if (offset > bytes_.size() || bytes_.size() - offset < length)
      corrupt("a zip record at offset " + std::to_string(offset) + " runs past the end");
    return {reinterpret_cast<const char*>(bytes_.data()) + offset, length};
  }
  std::uint64_t size() const { return bytes_.size(); }
  [[noreturn]] void corrupt(const std::string& what) const {
    throw FileError(path_, "corrupt zip archive: " + what);
  }

 private:
  std::span<const std::byte> bytes_;
  const std::string& path_;
};

// Where the end of central directory record starts: the last one that a
// comment of at most 64 KiB could separate from the file's end.
std::optional<std::uint64_t> end_record(const ZipBytes& zip) {
  constexpr std::uint64_t kMaxComment = 0xFFFF;
  if (zip.size() < kEndRecordSize) return std::nullopt;
  const std::uint64_t lowest =
      zip.size() > kEndRecordSize + kMaxComment ? zip.size() - kEndRecordSize - kMaxComment : 0;
  for (std::uint64_t end = zip.size() - kEndRecordSize + 1; end-- > lowest;)
    if (zip.le(end, 4) == 0x06054b50) return end;
  return std::nullopt;
}

// Offset of the central directory, from the end record (or its Zip64
// version, which numpy's zipfile writes for large archives).
std::uint64_t central_directory_offset(const ZipBytes& zip) {
  if (zip.size() < kEndRecordSize) zip.corrupt("too short for an end of central directory record");
  const std::optional<std::uint64_t> end = end_record(zip);
  if (!end) zip.corrupt("end of central directory record not found");
  const std::uint64_t offset = zip.le(*end + 16, 4);
  if (offset != 0xFFFFFFFF) return offset;
  constexpr std::uint64_t kLocatorSize = 20;
  if (*end < kLocatorSize || zip.le(*end - kLocatorSize, 4) != 0x07064b50)
    zip.corrupt("Zip64 end of central directory locator missing");
  const std::uint64_t zip64_end = zip.le(*end - kLocatorSize + 8, 8);
  if (zip.le(zip64_end, 4) != 0x06064b50) zip.corrupt("Zip64 end of central directory missing");
  return zip.le(zip64_end + 48, 8);
}

// The archive without what follows its end record and comment: bytes
// appended to a zip (a stray newline) are ignored, as Python's zipfile, and
// so np.load and scipy.sparse.load_npz, ignore them; libzip refuses them.
// Bytes with no end record are all given to libzip, to name what is wrong.
std::span<const std::byte> archive_bytes(std::span<const std::byte> bytes,
                                         const std::string& path) {
  const ZipBytes zip(bytes, path);
  const std::optional<std::uint64_t> end = end_record(zip);
  if (!end) return bytes;
  const std::uint64_t archive_end = *end + kEndRecordSize + zip.le(*end + 20, 2);
  return archive_end < bytes.size() ? bytes.first(archive_end) : bytes;
}

// Opens the archive from its bytes in memory (a mapped file, or a stream
// read whole): libzip would otherwise seek in the file itself, which a pipe
// cannot do, and every handle shares the one mapping.
ZipHandle open_zip(const MappedFile& file, int flags) {
  const std::string& path = file.path();
  // libzip would open no bytes as an archive without members.
  if (file.bytes().empty())
    throw FileError(path, "empty file (0 bytes), not a zip archive; an .npz from "
                          "scipy.sparse.save_npz is a zip");
  zip_error_t error;
  zip_error_init(&error);
  const std::span<const std::byte> bytes = archive_bytes(file.bytes(), path);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* za = source != nullptr ? zip_open_from_source(source, flags, &error) : nullptr;
  if (za == nullptr) {
    const std::string message = zip_error_strerror(&error);
    if (source != nullptr) zip_source_free(source);
    zip_error_fini(&error);
    throw FileError(path, "not a readable zip archive (" + message +
                              "); an .npz from scipy.sparse.save_npz is a zip. Is it truncated?");
  }
  zip_error_fini(&error);
  return ZipHandle(za);  // owns the source from here
}

// Local header offset of the central directory entry at `pos`, taking the
// Zip64 extra field into account when the 32-bit field overflows.
std::uint64_t local_header_offset(const ZipBytes& zip, std::uint64_t pos) {
  const std::uint64_t offset = zip.le(pos + 42, 4);
  if (offset != 0xFFFFFFFF) return offset;
  const std::uint64_t name_len = zip.le(pos + 28, 2);
  const std::uint64_t extra_len = zip.le(pos + 30, 2);
  // Zip64 extra: uncompressed size, compressed size, offset, each present
  // only when its 32-bit field is 0xFFFFFFFF.
  for (std::uint64_t e = pos + 46 + name_len; e + 4 <= pos + 46 + name_len + extra_len;) {
    const std::uint64_t id = zip.le(e, 2);
    const std::uint64_t len = zip.le(e + 2, 2);
    if (id == 0x0001) {
      std::uint64_t field = e + 4;
      if (zip.le(pos + 24, 4) == 0xFFFFFFFF) field += 8;
      if (zip.le(pos + 20, 4) == 0xFFFFFFFF) field += 8;
      return zip.le(field, 8);
    }
    e += 4 + len;
  }
  zip.corrupt("Zip64 local header offset missing");
}

// Offset of the data of the archive's `index`-th member (central directory
// order, which is libzip's index order). The name and extra lengths are
// read from the local header itself: they may differ from the central
// directory's (numpy writes its Zip64 extra field only locally).
std::uint64_t member_data_offset(const ZipBytes& zip, zip_uint64_t index, std::string_view name) {
  std::uint64_t pos = central_directory_offset(zip);
  for (zip_uint64_t i = 0;; ++i) {
    if (zip.le(pos, 4) != 0x02014b50)
      zip.corrupt("central directory entry " + std::to_string(i) + " not found");
    if (i == index) break;
    pos += 46 + zip.le(pos + 28, 2) + zip.le(pos + 30, 2) + zip.le(pos + 32, 2);
  }
  if (zip.text(pos + 46, zip.le(pos + 28, 2)) != name)
    zip.corrupt("central directory entry " + std::to_string(index) + " is not '" +
                std::string(name) + "'");
  const std::uint64_t local = local_header_offset(zip, pos);
  if (zip.le(local, 4) != 0x04034b50)
    zip.corrupt("no local header at offset " + std::to_string(local));
  return local + kLocalHeaderSize + zip.le(local + 26, 2) + zip.le(local + 28, 2);
}

// ---- reading -------------------------------------------------------------------

// One array of the .npz. `npy` spans the whole .npy: inside the mapping for
// STORED members, inside `inflated` for deflated ones (a vector's buffer
// does not move when the vector is moved, so the span stays valid).
struct Member {
  std::string key;   // "data"
  std::string name;  // "data.npy"
  zip_uint64_t index = 0;
  zip_uint64_t size = 0;
  bool stored = false;
  std::optional<std::uint32_t> crc;  // as the zip records it
  std::vector<std::byte> inflated;
  std::span<const std::byte> npy;
  NpyHeader header;
  std::span<const std::byte> payload() const { return npy.subspan(header.data_offset); }
};

std::string member_names(zip_t* za) {
  std::string names;
  const zip_int64_t count = zip_get_num_entries(za, 0);
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(za, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr) continue;
    names += (names.empty() ? "" : ", ") + detail::printable(name);
  }
  return names.empty() ? "none" : names;
}

// numpy's np.load finds an array under "key.npy", or under "key" itself.
// The sizes the zip entry claims are checked against the archive's own
// size here, before anything is allocated for them.
Member locate(zip_t* za, const std::string& path, const std::string& key,
              std::uint64_t archive_size) {
  zip_int64_t index = zip_name_locate(za, (key + ".npy").c_str(), 0);
  if (index < 0) index = zip_name_locate(za, key.c_str(), 0);
  if (index < 0)
    throw FileError(path, "missing key '" + key + "' (members: " + member_names(za) +
                              "); expected a CSR matrix saved by scipy.sparse.save_npz");
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(za, static_cast<zip_uint64_t>(index), 0, &st) != 0)
    throw FileError(path, key + ": cannot read the member: " + zip_strerror(za));
  Member m;
  m.key = key;
  m.index = static_cast<zip_uint64_t>(index);
  const char* name = zip_get_name(za, m.index, ZIP_FL_ENC_RAW);
  m.name = name != nullptr ? name : "";
  m.size = st.size;
  m.stored = (st.valid & ZIP_STAT_COMP_METHOD) && st.comp_method == ZIP_CM_STORE;
  if (st.valid & ZIP_STAT_CRC) m.crc = st.crc;
  const auto corrupt = [&](const std::string& what) {
    throw FileError(path, key + ": corrupt zip entry: " + what);
  };
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE))
    corrupt("its sizes are not recorded");
  if (st.comp_size > archive_size)
    corrupt(std::to_string(st.comp_size) + " compressed bytes claimed in a file of " +
            std::to_string(archive_size));
  if (m.stored && st.comp_size != m.size)
    corrupt("stored (not compressed), but " + std::to_string(m.size) + " bytes claimed from " +
            std::to_string(st.comp_size));
  // Deflate expands at most ~1032:1; a larger claim is a corrupt header, and
  // allocating for it would only fail later with a worse message.
  if (!m.stored && m.size / kMaxInflateRatio > st.comp_size + 1024)
    corrupt(std::to_string(m.size) + " bytes claimed from " + std::to_string(st.comp_size) +
            " compressed, beyond deflate's limit of " + std::to_string(kMaxInflateRatio) + ":1");
  return m;
}

// The dtypes a member may have: format holds scipy's b'csr', every other
// array numbers.
NpyKinds kinds_of(const std::string& key) {
  return key == "format" ? NpyKinds::kNumbersAndStrings : NpyKinds::kNumbers;
}

// Reads up to `size` bytes of the member; fewer only at its end.
std::size_t read_some(zip_file_t* file, std::byte* dst, zip_uint64_t size,
                      const std::function<void(const std::string&)>& fail) {
  zip_uint64_t done = 0;
  while (done < size) {
    const zip_int64_t n = zip_fread(file, dst + done, size - done);
    if (n < 0) fail(zip_file_strerror(file));
    if (n == 0) break;
    done += static_cast<zip_uint64_t>(n);
  }
  return static_cast<std::size_t>(done);
}

// Decompresses (or copies) a member with libzip, which also checks its CRC
// once the end is read. The .npy header is inflated first: the member must
// be exactly as long as the array it describes (and at most `max_size`),
// which is known before the rest is allocated.
void inflate(zip_t* za, Member& m, const std::string& path,
             zip_uint64_t max_size = std::numeric_limits<zip_uint64_t>::max()) {
  const std::function<void(const std::string&)> fail = [&](const std::string& what) {
    throw FileError(path, m.key + ": cannot read the member: " + what);
  };
  ZipFileHandle file(zip_fopen_index(za, m.index, 0));
  if (!file) fail(zip_strerror(za));
  m.inflated.resize(std::min<zip_uint64_t>(m.size, kNpyMaxPrefixBytes));
  std::size_t done = read_some(file.get(), m.inflated.data(), m.inflated.size(), fail);
  if (done != m.inflated.size())
    fail("truncated: " + std::to_string(done) + " of " + std::to_string(m.size) + " bytes");
  const NpyHeader header = parse_npy_prefix(m.inflated, path, m.key, kinds_of(m.key));
  const std::uint64_t needed = header.data_offset + header.payload_size();
  if (needed != m.size)
    throw FileError(path, m.key + ": the zip entry holds " + std::to_string(m.size) +
                              " bytes, but its .npy header (shape of " +
                              std::to_string(header.count()) + " '" + header.descr +
                              "') needs " + std::to_string(needed) +
                              "; the member is corrupt or padded");
  if (m.size > max_size)
    throw FileError(path, m.key + ": expected a small array (at most " +
                              std::to_string(max_size) + " bytes), found " +
                              std::to_string(m.size));
  m.inflated.resize(m.size);
  done += read_some(file.get(), m.inflated.data() + done, m.size - done, fail);
  if (done != m.size)
    fail("truncated: " + std::to_string(done) + " of " + std::to_string(m.size) + " bytes");
  std::byte spare;  // reading past the stated size reaches EOF and the CRC check
  if (read_some(file.get(), &spare, 1, fail) != 0)
    fail("longer than the " + std::to_string(m.size) + " bytes stated");
  m.npy = m.inflated;
}

void parse_member(Member& m, const std::string& path) {
  m.header = parse_npy_header(m.npy, path, m.key, kinds_of(m.key));
}

// Finds the member's bytes inside the mapping; used for STORED members.
void locate_in_mapping(const MappedFile& mapping, Member& m, const std::string& path) {
  const ZipBytes zip(mapping.bytes(), path);
  const std::uint64_t offset = member_data_offset(zip, m.index, m.name);
  if (offset > zip.size() || zip.size() - offset < m.size)
    throw FileError(path, m.key + ": truncated: the member needs " + std::to_string(m.size) +
                              " bytes at offset " + std::to_string(offset) + ", file has " +
                              std::to_string(zip.size()));
  m.npy = mapping.bytes().subspan(offset, m.size);
  // Read in place, the member never passes through libzip, which checks
  // the CRC of what it reads: check it here, as numpy's np.load does, so
  // that a flipped bit is an error and not a silently different matrix.
  if (m.crc && crc_of(0, m.npy) != *m.crc)
    throw FileError(path, m.key + ": corrupt zip entry: its bytes do not match the CRC-32 the zip "
                              "records for " + m.name);
}

std::string read_format(zip_t* za, const MappedFile& file) {
  const std::string& path = file.path();
  Member m = locate(za, path, "format", file.bytes().size());
  inflate(za, m, path, kSmallMemberBytes);
  parse_member(m, path);
  const std::vector<std::string> value = npy_to_strings(m.header, m.payload(), path, m.key);
  if (value.size() != 1)
    throw FileError(path, "format: expected one string, found " + std::to_string(value.size()));
  return value[0];
}

std::array<Index, 2> read_shape(zip_t* za, const MappedFile& file) {
  const std::string& path = file.path();
  Member m = locate(za, path, "shape", file.bytes().size());
  inflate(za, m, path, kSmallMemberBytes);
  parse_member(m, path);
  const std::vector<std::int64_t> shape = npy_to_int64(m.header, m.payload(), path, m.key);
  if (m.header.shape.size() != 1 || shape.size() != 2)
    throw FileError(path, "shape: expected 2 integers (rows, columns), found an array of shape " +
                              detail::shape_repr(m.header.shape));
  std::array<Index, 2> out{};
  const char* names[] = {"rows", "columns"};
  for (int i = 0; i < 2; ++i) {
    if (shape[i] < 0 || shape[i] > kMaxIndex)
      throw FileError(path, "shape: " + std::to_string(shape[i]) + " " + names[i] +
                                " is outside bagel's range [0, " + std::to_string(kMaxIndex) +
                                "] (int32 indices)");
    out[i] = static_cast<Index>(shape[i]);
  }
  return out;
}

// Reads the deflated members in parallel, each thread with its own libzip
// handle (a zip_t is not safe to share between threads).
void inflate_all(std::vector<Member*> members, const MappedFile& file) {
  const std::string& path = file.path();
  std::vector<std::future<void>> jobs;
  for (Member* m : members) {
    jobs.push_back(std::async(std::launch::async, [m, &file, &path] {
      const ZipHandle za = open_zip(file, ZIP_RDONLY);
      inflate(za.get(), *m, path);
    }));
  }
  for (auto& job : jobs) job.wait();
  for (auto& job : jobs) job.get();  // re-throws the first failure
}

void check_vector(const Member& m, const std::string& path) {
  if (m.header.shape.size() != 1)
    throw FileError(path, m.key + ": expected a 1-d array, found " +
                              std::to_string(m.header.shape.size()) + " dimensions");
}

// The payload viewed as T in place, when it already is T and aligned for it.
template <class T>
std::optional<std::span<const T>> borrow(const Member& m, DType working) {
  const std::span<const std::byte> payload = m.payload();
  if (!m.stored || m.header.dtype != working ||
      reinterpret_cast<std::uintptr_t>(payload.data()) % alignof(T) != 0)
    return std::nullopt;
  return std::span<const T>(reinterpret_cast<const T*>(payload.data()),
                            static_cast<std::size_t>(m.header.count()));
}

// indptr, indices and data, located and with parsed headers.
struct CsrArrays {
  std::array<Member, 3> members;
  std::unique_ptr<MappedFile> mapping;  // the whole file, which STORED members point into
};

CsrArrays load_arrays(zip_t* za, const MappedFile& file) {
  const std::string& path = file.path();
  const std::uint64_t size = file.bytes().size();
  CsrArrays out{{locate(za, path, "indptr", size), locate(za, path, "indices", size),
                 locate(za, path, "data", size)},
                nullptr};
  std::vector<Member*> deflated;
  for (Member& m : out.members) {
    if (m.stored)
      locate_in_mapping(file, m, path);
    else
      deflated.push_back(&m);
  }
  inflate_all(deflated, file);
  // libzip read the deflated bytes through the mapping, which left them
  // resident: drop them. A STORED member used in place is read back from
  // the page cache when touched.
  if (!deflated.empty()) file.release(file.bytes());
  for (Member& m : out.members) {
    parse_member(m, path);
    check_vector(m, path);
  }
  const std::int64_t nnz = out.members[1].header.count();
  const std::int64_t values = out.members[2].header.count();
  if (nnz > kMaxIndex)
    throw FileError(path, "indices: " + std::to_string(nnz) +
                              " non-zeros exceed bagel's limit of " + std::to_string(kMaxIndex) +
                              " (int32 indices)");
  if (values != nnz)
    throw FileError(path, "data has " + std::to_string(values) + " values but indices has " +
                              std::to_string(nnz));
  return out;
}

// How many entries of indices and data the rows use: indptr[rows]. scipy
// may keep spare room after the last non-zero (len(data) > indptr[-1]), and
// load_npz accepts it and uses the first indptr[-1] entries; so does bagel,
// without looking at the rest. A count the file cannot hold (more than it
// stores, or negative) keeps every entry, for validate() to name.
std::int64_t entries_in_use(std::span<const Index> indptr, std::int64_t stored) {
  const bool spare = !indptr.empty() && indptr.back() >= 0 && indptr.back() < stored;
  return spare ? indptr.back() : stored;
}

// The header of an array's first `count` elements: for converting only those.
NpyHeader first_entries(const NpyHeader& h, std::int64_t count) {
  NpyHeader first = h;
  first.shape = {count};
  return first;
}

// Borrows what already is in the working dtype from the mapping; converts
// the rest once.
CsrMatrix assemble(Index rows, Index cols, CsrArrays arrays, const std::string& path) {
  auto& [indptr, indices, data] = arrays.members;
  const auto indptr_view = borrow<Index>(indptr, DType::kInt32);
  const auto indices_view = borrow<Index>(indices, DType::kInt32);
  const auto data_view = borrow<float>(data, DType::kFloat32);
  // Once a member is converted its source bytes are dropped, so that peak
  // memory is the owned arrays plus one member, not twice the matrix.
  const auto done_with = [&](Member& m) {
    if (m.stored && arrays.mapping) arrays.mapping->release(m.npy);
    std::vector<std::byte>().swap(m.inflated);
  };
  // Members read in place from the mapping are dropped as they convert.
  const auto release_of = [&](const Member& m) -> ConsumedFn {
    if (!m.stored || !arrays.mapping) return {};
    const MappedFile* file = arrays.mapping.get();
    return [file](std::span<const std::byte> done) { file->release(done); };
  };
  std::vector<Index> indptr_own, indices_own;
  std::vector<float> data_own;
  if (!indptr_view) {
    indptr_own = npy_to_int32(indptr.header, indptr.payload(), path, "indptr", release_of(indptr));
    done_with(indptr);
  }
  const std::int64_t used =
      entries_in_use(indptr_view.value_or(std::span<const Index>(indptr_own)),
                     indices.header.count());
  if (!indices_view) {
    indices_own = npy_to_int32(first_entries(indices.header, used), indices.payload(), path,
                               "indices", release_of(indices));
    done_with(indices);
  }
  if (!data_view) {
    data_own = npy_to_float32(first_entries(data.header, used), data.payload(), path, "data",
                              release_of(data));
    done_with(data);
  }
  if (!indptr_view && !indices_view && !data_view)
    return CsrMatrix(rows, cols, std::move(indptr_own), std::move(indices_own),
                     std::move(data_own));
  const auto first = [used](auto view) { return view.first(static_cast<std::size_t>(used)); };
  return CsrMatrix(rows, cols, indptr_view.value_or(std::span<const Index>{}),
                   indices_view ? first(*indices_view) : std::span<const Index>{},
                   data_view ? first(*data_view) : std::span<const float>{}, std::move(indptr_own),
                   std::move(indices_own), std::move(data_own), std::move(arrays.mapping));
}

// ---- reading in row chunks -----------------------------------------------------

// One member read from its start to its end, a stretch of elements at a
// time, through its own libzip handle.
class MemberStream {
 public:
  MemberStream(const MappedFile& file, const std::string& key)
      : path_(file.path()), za_(open_zip(file, ZIP_RDONLY)) {
    member_ = locate(za_.get(), path_, key, file.bytes().size());
    stream_.reset(zip_fopen_index(za_.get(), member_.index, 0));
    if (!stream_) fail(zip_strerror(za_.get()));
    std::vector<std::byte> head(std::min<zip_uint64_t>(member_.size, kNpyMaxPrefixBytes));
    if (read_into(head.data(), head.size()) != head.size()) fail("truncated");
    header_ = parse_npy_prefix(head, path_, key, kinds_of(key));
    if (header_.shape.size() != 1)
      throw FileError(path_, key + ": expected a 1-d array, found " +
                                 std::to_string(header_.shape.size()) + " dimensions");
    const std::uint64_t needed = header_.data_offset + header_.payload_size();
    if (needed != member_.size)
      throw FileError(path_, key + ": the zip entry holds " + std::to_string(member_.size) +
                                 " bytes, but its .npy header needs " + std::to_string(needed));
    // What the header read took of the payload is served first.
    pending_.assign(head.begin() + static_cast<std::ptrdiff_t>(header_.data_offset), head.end());
  }

  const NpyHeader& header() const { return header_; }

  // The next `count` elements as the .npy dtype's bytes.
  std::vector<std::byte> read(std::int64_t count) {
    read_elements_ += count;
    const std::size_t bytes = static_cast<std::size_t>(count) * header_.item_size;
    std::vector<std::byte> out(bytes);
    const std::size_t from_pending = std::min(bytes, pending_.size() - pending_used_);
    std::copy_n(pending_.begin() + static_cast<std::ptrdiff_t>(pending_used_), from_pending,
                out.begin());
    pending_used_ += from_pending;
    if (read_into(out.data() + from_pending, bytes - from_pending) != bytes - from_pending)
      fail("truncated");
    return out;
  }

  // After the last row: the entries past indptr[rows] (spare room, which
  // is not used) are read and dropped, so that reading on reaches the end
  // and the CRC check.
  void finish() {
    while (read_elements_ < header_.count())
      read(std::min(header_.count() - read_elements_, kChunkNonZeros));
    std::byte spare;
    if (pending_used_ != pending_.size() || read_into(&spare, 1) != 0)
      fail("longer than its array");
  }

  // The header of `count` elements of this array's dtype: for converting
  // what read(count) returned.
  NpyHeader stretch_header(std::int64_t count) const { return first_entries(header_, count); }

 private:
  std::size_t read_into(std::byte* dst, std::size_t size) {
    std::size_t done = 0;
    while (done < size) {
      const zip_int64_t n = zip_fread(stream_.get(), dst + done, size - done);
      if (n < 0) fail(zip_file_strerror(stream_.get()));
      if (n == 0) break;
      done += static_cast<std::size_t>(n);
    }
    return done;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw FileError(path_, member_.key + ": cannot read the member: " + what);
  }

  std::string path_;
  ZipHandle za_;
  Member member_;
  ZipFileHandle stream_;
  NpyHeader header_;
  std::vector<std::byte> pending_;
  std::size_t pending_used_ = 0;
  std::int64_t read_elements_ = 0;
};

void check_indptr(std::span<const Index> indptr, std::int64_t nnz, const std::string& path) {
  if (indptr.empty() || indptr.front() != 0)
    throw FileError(path, "indptr[0] is not 0");
  for (std::size_t r = 0; r + 1 < indptr.size(); ++r)
    if (indptr[r + 1] < indptr[r])
      throw FileError(path, "indptr decreases at row " + std::to_string(r));
  // Fewer is spare room after the last non-zero (entries_in_use).
  if (indptr.back() > nnz)
    throw FileError(path, "indptr[rows] is " + std::to_string(indptr.back()) + ", expected nnz = " +
                              std::to_string(nnz));
}

}  // namespace

struct NpzRowChunks::State {
  std::unique_ptr<MappedFile> file;
  Index rows = 0, cols = 0;
  std::vector<Index> indptr;
  std::optional<MemberStream> indices, data;
  Index next_row = 0;
};

NpzRowChunks::NpzRowChunks(const std::string& path) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.file = std::make_unique<MappedFile>(path);
  const ZipHandle za = open_zip(*s.file, ZIP_RDONLY | ZIP_CHECKCONS);
  const std::string format = read_format(za.get(), *s.file);
  if (format != "csr")
    throw FileError(path, "format is '" + detail::printable(format) +
                              "', expected 'csr' (convert with X.tocsr() before save_npz)");
  const std::array<Index, 2> shape = read_shape(za.get(), *s.file);
  s.rows = shape[0];
  s.cols = shape[1];
  Member indptr = locate(za.get(), path, "indptr", s.file->bytes().size());
  if (indptr.stored)
    locate_in_mapping(*s.file, indptr, path);
  else
    inflate(za.get(), indptr, path);
  parse_member(indptr, path);
  check_vector(indptr, path);
  s.indptr = npy_to_int32(indptr.header, indptr.payload(), path, "indptr");
  if (s.indptr.size() != static_cast<std::size_t>(s.rows) + 1)
    throw FileError(path, "indptr: length " + std::to_string(s.indptr.size()) +
                              ", expected rows + 1 = " + std::to_string(std::int64_t{s.rows} + 1));
  s.indices.emplace(*s.file, "indices");
  s.data.emplace(*s.file, "data");
  const std::int64_t nnz = s.indices->header().count();
  if (s.data->header().count() != nnz)
    throw FileError(path, "data has " + std::to_string(s.data->header().count()) +
                              " values but indices has " + std::to_string(nnz));
  check_indptr(s.indptr, nnz, path);
}

NpzRowChunks::~NpzRowChunks() = default;

Index NpzRowChunks::rows() const { return state_->rows; }
Index NpzRowChunks::cols() const { return state_->cols; }

std::optional<CsrMatrix> NpzRowChunks::next(Index max_rows) {
  State& s = *state_;
  if (s.next_row >= s.rows) {
    if (s.indices) {
      s.indices->finish();
      s.data->finish();
      s.indices.reset();
      s.data.reset();
    }
    return std::nullopt;
  }
  const std::string& path = s.file->path();
  const Index begin = s.next_row;
  const Index first = s.indptr[static_cast<std::size_t>(begin)];
  // At most max_rows rows and kChunkNonZeros non-zeros (but one row at least).
  const auto row_limit = s.indptr.begin() + begin + std::min(max_rows, s.rows - begin);
  const auto past = std::upper_bound(s.indptr.begin() + begin + 1, row_limit + 1,
                                     static_cast<std::int64_t>(first) + kChunkNonZeros);
  const Index end = std::max<Index>(begin + 1, static_cast<Index>(past - s.indptr.begin()) - 1);
  const std::int64_t count = s.indptr[static_cast<std::size_t>(end)] - first;
  std::vector<Index> indptr(static_cast<std::size_t>(end - begin) + 1);
  for (Index r = begin; r <= end; ++r)
    indptr[static_cast<std::size_t>(r - begin)] = s.indptr[static_cast<std::size_t>(r)] - first;
  std::vector<Index> indices = npy_to_int32(s.indices->stretch_header(count), s.indices->read(count),
                                            path, "indices");
  std::vector<float> data =
      npy_to_float32(s.data->stretch_header(count), s.data->read(count), path, "data");
  CsrMatrix chunk(end - begin, s.cols, std::move(indptr), std::move(indices), std::move(data));
  // Rows named as in the file, so that the error is the one read_npz_csr gives.
  chunk.validate(path, begin);
  s.next_row = end;
  return chunk;
}

bool NpzRowChunks::is_compressed(const std::string& path) {
  const MappedFile file(path);
  const ZipHandle za = open_zip(file, ZIP_RDONLY);
  for (const char* key : {"indices", "data"}) {
    // A matrix without them (COO's row and col, say) is not read in chunks:
    // the whole reader names its format.
    if (zip_name_locate(za.get(), (std::string(key) + ".npy").c_str(), 0) < 0 &&
        zip_name_locate(za.get(), key, 0) < 0)
      return false;
    const Member m = locate(za.get(), path, key, file.bytes().size());
    if (!m.stored) return true;
  }
  return false;
}

namespace {

// ---- writing -------------------------------------------------------------------

struct MemberSpec {
  const char* name;
  std::string header;  // .npy header
  std::span<const std::byte> payload;
  bool align;  // worth mapping in place: pad when STORED
};

void close_zip(ZipHandle za, const std::string& path) {
  if (zip_close(za.get()) != 0)
    throw FileError(path, std::string("cannot write the zip archive: ") + zip_strerror(za.get()));
  za.release();  // zip_close freed it
}

// Writes the archive; pads[i] bytes of alignment extra field go into member
// i's local header (0, or at least kAlignmentFieldMin).
void write_zip(const std::string& file, const std::string& path,
               const std::vector<MemberSpec>& members, const std::vector<std::uint64_t>& pads,
               bool compressed) {
  int code = 0;
  ZipHandle za(zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!za) throw FileError(path, "cannot create: " + libzip_message(code));
  const auto fail = [&](const std::string& what) {
    throw FileError(path, what + ": " + zip_strerror(za.get()));
  };
  // The fragments point into the caller's arrays: nothing is copied.
  std::vector<std::array<zip_buffer_fragment_t, 2>> fragments(members.size());
  std::vector<std::vector<zip_uint8_t>> padding(members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberSpec& spec = members[i];
    auto& frag = fragments[i];
    frag[0] = {reinterpret_cast<zip_uint8_t*>(const_cast<char*>(spec.header.data())),
               spec.header.size()};
    frag[1] = {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(spec.payload.data())),
               spec.payload.size()};
    zip_source_t* source =
        zip_source_buffer_fragment(za.get(), frag.data(), spec.payload.empty() ? 1 : 2, 0);
    if (source == nullptr) fail(std::string("cannot add ") + spec.name);
    const zip_int64_t index = zip_file_add(za.get(), spec.name, source, ZIP_FL_OVERWRITE);
    if (index < 0) {
      zip_source_free(source);
      fail(std::string("cannot add ") + spec.name);
    }
    const auto idx = static_cast<zip_uint64_t>(index);
    if (zip_set_file_compression(za.get(), idx, compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE,
                                 compressed ? kDeflateLevel : 0) != 0)
      fail(std::string("cannot set the compression of ") + spec.name);
    if (pads[i] > 0) {
      padding[i].assign(pads[i] - 4, 0);
      padding[i][0] = static_cast<zip_uint8_t>(kPayloadAlign);
      if (zip_file_extra_field_set(za.get(), idx, kAlignmentFieldId, ZIP_EXTRA_FIELD_NEW,
                                   padding[i].data(), static_cast<zip_uint16_t>(padding[i].size()),
                                   ZIP_FL_LOCAL) != 0)
        fail(std::string("cannot pad ") + spec.name);
    }
  }
  close_zip(std::move(za), path);
}

// Padding that moves a payload at `offset` to the next aligned boundary: an
// extra field is at least kAlignmentFieldMin bytes, so a short gap takes a
// whole extra alignment unit.
std::uint64_t padding_for(std::uint64_t offset) {
  std::uint64_t pad = (kPayloadAlign - offset % kPayloadAlign) % kPayloadAlign;
  if (pad > 0 && pad < kAlignmentFieldMin) pad += kPayloadAlign;
  return pad;
}

// Chooses pads given where each member's data starts without padding.
std::vector<std::uint64_t> choose_pads(const std::vector<MemberSpec>& members,
                                       const std::vector<std::uint64_t>& unpadded) {
  std::vector<std::uint64_t> pads(members.size(), 0);
  std::uint64_t shift = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].align) pads[i] = padding_for(unpadded[i] + shift + members[i].header.size());
    shift += pads[i];
  }
  return pads;
}

// Where libzip will put each member's data without padding: after a local
// header of 30 bytes, the name, and a Zip64 extra field (20 bytes) for
// members of 4 GiB or more. write_npz_csr checks this guess afterwards.
std::vector<std::uint64_t> predicted_offsets(const std::vector<MemberSpec>& members) {
  std::vector<std::uint64_t> offsets;
  std::uint64_t pos = 0;
  for (const MemberSpec& spec : members) {
    const std::uint64_t size = spec.header.size() + spec.payload.size();
    pos += kLocalHeaderSize + std::strlen(spec.name) + (size >= 0xFFFFFFFFu ? 20 : 0);
    offsets.push_back(pos);
    pos += size;
  }
  return offsets;
}

// Where each member's data really starts in the written file, less the
// padding that was put before it.
std::vector<std::uint64_t> measured_offsets(const std::string& file, const std::string& path,
                                            const std::vector<MemberSpec>& members,
                                            const std::vector<std::uint64_t>& pads) {
  const MappedFile mapping(file);
  const ZipBytes zip(mapping.bytes(), path);
  std::vector<std::uint64_t> offsets;
  std::uint64_t shift = 0;
  for (std::size_t i = 0; i < pads.size(); ++i) {
    shift += pads[i];
    offsets.push_back(member_data_offset(zip, i, members[i].name) - shift);
  }
  return offsets;
}

template <class T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

// Whether StoredZipWriter can write these members: an archive below 4 GiB,
// into a file of its own (a device or a pipe named as the output cannot
// have its headers written back into).
bool fits_stored_writer(const std::vector<MemberSpec>& members, const ArrayBytes& data, const AtomicPath& tmp) {
  if (tmp.is_direct()) return false;
  std::vector<std::string> names;
  std::vector<std::uint64_t> sizes;
  for (const MemberSpec& spec : members) {
    names.emplace_back(spec.name);
    sizes.push_back(spec.header.size() + spec.payload.size());
  }
  sizes.back() = members.back().header.size() + data.size;
  return StoredZipWriter::archive_bytes(names, sizes) <= StoredZipWriter::kMaxBytes;
}

// The made member's bytes: a round of pieces (one a thread) converted and
// their CRCs computed in parallel, then written in order.
void write_made(StoredZipWriter& zip, const ArrayBytes& data) {
  const std::uint64_t size = data.size;
  const std::uint64_t pieces = (size + kPieceBytes - 1) / kPieceBytes;
  if (pieces == 0) return;
  const auto threads = static_cast<std::uint64_t>(std::clamp<std::uint64_t>(omp_get_max_threads(), 1, pieces));
  std::vector<std::vector<std::byte>> buffers(threads);
  std::vector<std::uint32_t> crcs(threads);
  const auto piece = [&](std::uint64_t p) {
    const std::uint64_t first = p * kPieceBytes;
    return std::span<std::byte>(buffers[p % threads]).first(std::min(kPieceBytes, size - first));
  };
  for (std::uint64_t round = 0; round < pieces; round += threads) {
    const std::uint64_t count = std::min(threads, pieces - round);
    RegionErrors errors;
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(count)) if (count > 1)
    for (std::uint64_t t = 0; t < count; ++t)
      errors.run([&] {
        const std::uint64_t p = round + t;
        buffers[t].resize(std::min(kPieceBytes, size));
        const std::span<std::byte> out = piece(p);
        data.fill(p * kPieceBytes, out);
        crcs[t] = static_cast<std::uint32_t>(
            crc32_z(0, reinterpret_cast<const Bytef*>(out.data()), out.size()));
      });
    errors.rethrow();
    for (std::uint64_t t = 0; t < count; ++t) zip.write(piece(round + t), crcs[t]);
  }
}

// The stored archive, the data member converted a piece at a time.
void write_stored(const std::string& file, const std::string& path, const std::vector<MemberSpec>& members,
                  const ArrayBytes& data) {
  StoredZipWriter zip(file, path);
  for (std::size_t i = 0; i < members.size(); ++i) {
    const MemberSpec& spec = members[i];
    const bool made = i + 1 == members.size();
    const std::uint64_t size = made ? data.size : spec.payload.size();
    zip.begin_member(spec.name, spec.header.size() + size, spec.align);
    zip.write(std::as_bytes(std::span<const char>(spec.header)));
    if (made && spec.payload.size() != data.size) {
      write_made(zip, data);
    } else {
      zip.write(spec.payload);
    }
    zip.end_member();
  }
  zip.finish();
}

// Copies the file `from` into `to`, a pipe or a device, as it is.
void copy_into(const std::string& from, const std::string& to) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw FileError(from, std::string("cannot open: ") + std::strerror(errno));
  const int out = ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (out < 0) {
    const int error = errno;
    ::close(in);
    throw FileError(to, std::string("cannot open for writing: ") + std::strerror(error));
  }
  std::vector<char> buffer(1 << 20);
  std::string failure;
  for (;;) {
    const ssize_t n = ::read(in, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failure = std::string("cannot read back the archive: ") + std::strerror(errno);
    if (n <= 0) break;
    for (ssize_t done = 0; done < n && failure.empty();) {
      const ssize_t w = ::write(out, buffer.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) failure = std::string("write failed: ") + std::strerror(errno);
      if (w > 0) done += w;
    }
    if (!failure.empty()) break;
  }
  ::close(in);
  ::close(out);
  if (!failure.empty()) throw FileError(to, failure);
}

}  // namespace

CsrMatrix read_npz_csr(const std::string& path) {
  return read_npz_csr(std::make_unique<MappedFile>(path));
}

CsrMatrix read_npz_csr(std::unique_ptr<MappedFile> file) {
  const std::string path = file->path();
  Index rows = 0, cols = 0;
  CsrArrays arrays;
  {
    // The handle reads from `file`'s bytes: it is closed before the bytes
    // move on with the arrays.
    const ZipHandle za = open_zip(*file, ZIP_RDONLY | ZIP_CHECKCONS);
    const std::string format = read_format(za.get(), *file);
    if (format != "csr")
      throw FileError(path, "format is '" + detail::printable(format) +
                                "', expected 'csr' (convert with X.tocsr() before save_npz)");
    const std::array<Index, 2> shape = read_shape(za.get(), *file);
    rows = shape[0];
    cols = shape[1];
    arrays = load_arrays(za.get(), *file);
  }
  arrays.mapping = std::move(file);
  CsrMatrix matrix = assemble(rows, cols, std::move(arrays), path);
  matrix.validate(path);
  return matrix;
}

void write_npz_csr(const std::string& path, const CsrMatrix& matrix, bool compressed) {
  write_npz_csr_arrays(path, matrix.rows(), matrix.cols(), matrix.indptr(), matrix.indices(), "<f4",
                       bytes_of(matrix.data()), compressed);
}

void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, std::span<const std::byte> data,
                          bool compressed) {
  ArrayBytes pieces{data.size(), [&](std::uint64_t first, std::span<std::byte> out) {
                      std::memcpy(out.data(), data.data() + first, out.size());
                    }};
  write_npz_csr_arrays(path, rows, cols, indptr, indices, data_descr, pieces, compressed, data);
}

void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, const ArrayBytes& data, bool compressed) {
  write_npz_csr_arrays(path, rows, cols, indptr, indices, data_descr, data, compressed, {});
}

void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, const ArrayBytes& data, bool compressed,
                          std::span<const std::byte> data_in_memory) {
  if (indptr.size() != static_cast<std::size_t>(rows) + 1)
    throw FileError(path, "cannot write a CSR matrix whose indptr has " +
                              std::to_string(indptr.size()) + " entries for " +
                              std::to_string(rows) + " rows");
  const auto nnz = static_cast<std::int64_t>(indices.size());
  const std::array<std::int64_t, 2> shape = {rows, cols};
  static constexpr std::array<char, 3> kCsr = {'c', 's', 'r'};
  // scipy.sparse.save_npz's member order.
  std::vector<MemberSpec> members = {
      {"indices.npy", npy_header("<i4", {nnz}), bytes_of(indices), true},
      {"indptr.npy", npy_header("<i4", {rows + 1}), bytes_of(indptr), true},
      {"format.npy", npy_header("|S3", {}), bytes_of(std::span<const char>(kCsr)), false},
      {"shape.npy", npy_header("<i8", {2}), bytes_of(std::span<const std::int64_t>(shape)), false},
      {"data.npy", npy_header(data_descr, {nnz}), data_in_memory, true},
  };
  AtomicPath tmp(path);
  if (tmp.is_direct()) {
    // A pipe or a device (/dev/stdout): a zip is written with seeks, and
    // libzip renames a file of its own into place. The archive is made in a
    // temporary file first, then copied into it.
    namespace fs = std::filesystem;
    std::random_device rd;
    const fs::path spool = fs::temp_directory_path() / ("bagel-" + std::to_string(::getpid()) + "-" +
                                                        std::to_string(rd() % 1000000) + ".npz");
    const TempRegistration registered(spool);
    try {
      write_npz_csr_arrays(spool.string(), rows, cols, indptr, indices, data_descr, data, compressed,
                           data_in_memory);
      copy_into(spool.string(), path);
    } catch (const FileError& e) {
      std::error_code ec;
      fs::remove(spool, ec);
      if (e.file() != spool.string()) throw;
      throw FileError(path, e.message() + " (in the temporary " + spool.string() +
                                " the archive is made in before it is copied out)");
    }
    std::error_code ec;
    fs::remove(spool, ec);
    return;
  }
  const std::string file = tmp.temp().string();
  if (!compressed && fits_stored_writer(members, data, tmp)) {
    write_stored(file, path, members, data);
    tmp.commit();
    return;
  }
  // libzip takes the payloads whole: the data made in pieces is put together.
  std::vector<std::byte> whole;
  if (data_in_memory.size() != data.size) {
    whole.resize(data.size);
    data.fill(0, whole);
    members.back().payload = whole;
  }
  std::vector<std::uint64_t> pads(members.size(), 0);
  if (!compressed) pads = choose_pads(members, predicted_offsets(members));
  write_zip(file, path, members, pads, compressed);
  if (!compressed) {
    // If libzip laid the file out other than predicted, pad again from what
    // it really did; the layout does not depend on the padding chosen.
    const std::vector<std::uint64_t> better =
        choose_pads(members, measured_offsets(file, path, members, pads));
    if (better != pads) write_zip(file, path, members, better, compressed);
  }
  tmp.commit();
}

}  // namespace bagel
