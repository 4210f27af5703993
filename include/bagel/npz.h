// scipy.sparse CSR matrices in .npz files, as scipy.sparse.save_npz writes
// them: a zip (deflated or stored, Zip64 members) holding data.npy,
// indices.npy, indptr.npy, shape.npy, format.npy (b'csr'), optionally
// _is_array.npy.
#pragma once

#include <string>

#include "bagel/csr.h"

namespace bagel {

// Reads and validates. Stored (uncompressed) members whose dtype already is
// the working dtype (float32 data, int32 indices/indptr) are used in place
// from a memory map; others are converted once. Errors name the file and key.
CsrMatrix read_npz_csr(const std::string& path);

// Writes a file that scipy.sparse.load_npz reads (float32 data, int32
// indices and indptr), atomically.
void write_npz_csr(const std::string& path, const CsrMatrix& matrix, bool compressed);

}  // namespace bagel
