#!/usr/bin/python3
"""Regenerates the .npz / .npy fixtures in tests/data/ with real numpy and scipy.

The C++ tests (tests/test_npy.cpp, tests/test_npz.cpp) read these files, so
they check bagel against what numpy and scipy actually write, without needing
Python at test time. The matrices are small literals; the tests hold the same
literals. Run with the Debian interpreter:  /usr/bin/python3 scripts/make_npz_fixtures.py
"""
import os

import numpy as np
import scipy.sparse as sp

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")

# The one matrix most fixtures hold: an empty row, a negative value, counts.
DENSE = np.array([[0, 3, 0, 0, 1, 0],
                  [0, 0, 0, 0, 0, 0],
                  [2, 0, 0, -5, 0, 7],
                  [0, 0, 4, 0, 0, 0]], dtype=np.int64)


def path(name):
    return os.path.join(DATA, name)


def save_npz_fixtures():
    x = sp.csr_matrix(DENSE)
    # CountVectorizer's output: int64 counts, deflated (save_npz's default).
    sp.save_npz(path("csr_int64_compressed.npz"), x)
    # The working dtypes, stored: the zero-copy candidate.
    sp.save_npz(path("csr_float32_stored.npz"), x.astype(np.float32), compressed=False)
    # int64 index arrays, as scipy produces for large matrices.
    big = x.astype(np.float64)
    big.indices = big.indices.astype(np.int64)
    big.indptr = big.indptr.astype(np.int64)
    sp.save_npz(path("csr_int64_indices.npz"), big, compressed=False)
    # Wrong formats.
    sp.save_npz(path("csc.npz"), sp.csc_matrix(DENSE))
    sp.save_npz(path("coo.npz"), sp.coo_matrix(DENSE))
    # More columns than int32 indices can address.
    wide = sp.csr_matrix((np.array([1.0, 2.0]), np.array([5, 2999999999], dtype=np.int64),
                          np.array([0, 1, 2], dtype=np.int64)), shape=(2, 3000000000))
    sp.save_npz(path("csr_too_wide.npz"), wide)
    # A csr file without 'indices'.
    np.savez(path("missing_indices.npz"), data=x.data, indptr=x.indptr,
             format=b"csr", shape=np.array(x.shape))


def save_npy_fixtures():
    # np.save's exact bytes, for byte-for-byte comparison with write_npy.
    np.save(path("float32_2x3.npy"),
            np.array([[1.5, -2.0, 0.0], [3.25, 1e-3, 7.0]], dtype=np.float32))
    np.save(path("int32_5.npy"), np.array([0, -1, 2, 2147483647, -2147483648], dtype=np.int32))
    np.save(path("labels_unicode.npy"), np.array(["spam", "ham", "\u00e9t\u00e9", ""]))
    np.save(path("bool_3.npy"), np.array([True, False, True]))
    # Versions 2.0 and 3.0 of the header (numpy picks them only when needed).
    values = np.arange(4, dtype=np.int64) * 1000000000
    for version in ((2, 0), (3, 0)):
        with open(path("int64_4_v%d.npy" % version[0]), "wb") as f:
            np.lib.format.write_array(f, values, version=version)


if __name__ == "__main__":
    os.makedirs(DATA, exist_ok=True)
    save_npz_fixtures()
    save_npy_fixtures()
