// scipy.sparse CSR matrices in .npz files, as scipy.sparse.save_npz writes
// them: a zip (deflated or stored, Zip64 members) holding data.npy,
// indices.npy, indptr.npy, shape.npy, format.npy (b'csr'), optionally
// _is_array.npy (ignored, like any other extra member).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "bagel/csr.h"
#include "bagel/mapped_file.h"

namespace bagel {

// Reads and validates. Stored (uncompressed) members whose dtype already is
// the working dtype (float32 data, int32 indices/indptr) and whose payload is
// aligned are used in place from a memory map (is_mapped()); others are
// converted once, in parallel. Deflated members are inflated in parallel
// threads and CRC-checked; members used in place are not CRC-checked (that
// would read every page), but validate() still checks the CSR invariants.
// Note that scipy's own stored files are rarely aligned (zip headers shift
// the payload), so they are copied; files from write_npz_csr are aligned.
// Entries of indices and data past indptr[rows] (spare room scipy may
// leave) are not used, as in scipy.sparse.load_npz.
// Errors name the file and the key. A stream ("-", a pipe: input_stream.h)
// is read whole into memory first, since a zip is read from its end.
CsrMatrix read_npz_csr(const std::string& path);
// The same from a file already opened (or a stream already read in).
CsrMatrix read_npz_csr(std::unique_ptr<MappedFile> file);

// The rows of a CSR .npz a chunk at a time, for predicting a compressed file
// without inflating it whole (a 543 MB file took 2.73 GB): indptr is read
// whole (rows + 1 integers) and checked, then indices and data are inflated
// as far as each chunk needs, so that memory is one chunk. Each chunk is
// checked as read_npz_csr checks the whole (columns in range, finite
// values), with errors naming the row in the whole file; the CRCs are
// checked when the last chunk has been read.
class NpzRowChunks {
 public:
  explicit NpzRowChunks(const std::string& path);
  ~NpzRowChunks();
  NpzRowChunks(const NpzRowChunks&) = delete;
  NpzRowChunks& operator=(const NpzRowChunks&) = delete;

  Index rows() const;
  Index cols() const;
  // The next rows, at most `max_rows` and 4M non-zeros (one row at least);
  // nullopt after the last.
  std::optional<CsrMatrix> next(Index max_rows);

  // Whether `path`'s indices or data are deflated (a compressed .npz): its
  // matrix is then worth reading in chunks; a stored one is mapped in place.
  static bool is_compressed(const std::string& path);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes a file that scipy.sparse.load_npz reads (float32 data, int32
// indices and indptr), atomically. Deflates at zlib level 6 (numpy's) when
// `compressed`; otherwise stores, with the array payloads padded to 64 bytes
// (a zipalign-style extra field in the local headers) so that read_npz_csr
// can map them in place.
void write_npz_csr(const std::string& path, const CsrMatrix& matrix, bool compressed);

// The same layout for data of another numpy dtype: `data_descr` is its
// descr ("<i8", "<f8", "<i4", "<f4") and `data` its little-endian bytes, one
// value per index (scikit-learn's CountVectorizer makes int64 data,
// TfidfVectorizer float64).
void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, std::span<const std::byte> data,
                          bool compressed);

// An array's little-endian bytes made a piece at a time, so that a
// converted copy of a large array is never held whole (stored files):
// fill(first, out) writes bytes [first, first + out.size()) of the `size`;
// `first` is a multiple of every element size. fill is called from several
// threads at once, for ranges that do not overlap.
struct ArrayBytes {
  std::uint64_t size = 0;
  std::function<void(std::uint64_t first, std::span<std::byte> out)> fill;
};
void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, const ArrayBytes& data, bool compressed);
// The same; `data_in_memory`, when it holds data's bytes, is written as it is.
void write_npz_csr_arrays(const std::string& path, Index rows, Index cols,
                          std::span<const Index> indptr, std::span<const Index> indices,
                          const std::string& data_descr, const ArrayBytes& data, bool compressed,
                          std::span<const std::byte> data_in_memory);

}  // namespace bagel
