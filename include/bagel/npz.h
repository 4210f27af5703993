// scipy.sparse CSR matrices in .npz files, as scipy.sparse.save_npz writes
// them: a zip (deflated or stored, Zip64 members) holding data.npy,
// indices.npy, indptr.npy, shape.npy, format.npy (b'csr'), optionally
// _is_array.npy (ignored, like any other extra member).
#pragma once

#include <memory>
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
// Errors name the file and the key. A stream ("-", a pipe: input_stream.h)
// is read whole into memory first, since a zip is read from its end.
CsrMatrix read_npz_csr(const std::string& path);
// The same from a file already opened (or a stream already read in).
CsrMatrix read_npz_csr(std::unique_ptr<MappedFile> file);

// Writes a file that scipy.sparse.load_npz reads (float32 data, int32
// indices and indptr), atomically. Deflates at zlib level 6 (numpy's) when
// `compressed`; otherwise stores, with the array payloads padded to 64 bytes
// (a zipalign-style extra field in the local headers) so that read_npz_csr
// can map them in place.
void write_npz_csr(const std::string& path, const CsrMatrix& matrix, bool compressed);

}  // namespace bagel
