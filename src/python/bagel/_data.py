"""What scikit-learn accepts as X, as the three CSR arrays bagel reads in place.

bagel's core reads float32 values and int32 column indices and row pointers
(scipy's own dtypes for matrices under 2^31 non-zeros), each contiguous. A
CSR matrix that already has them is handed over as is: the core works on the
caller's buffers, and `bagel._core` refuses any other dtype or layout rather
than copy behind the caller's back. Everything else (another dtype, or a
strided view such as `buffer[::2]`, which scipy accepts as CSR data) is
converted here, once, by numpy.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

INDEX = np.int32
VALUE = np.float32
_INDEX_LIMIT = np.iinfo(INDEX).max
# scipy's CSR matrix and, from scipy 1.8, its array twin.
_CSR_TYPES = tuple(t for t in (getattr(sp, "csr_matrix", None), getattr(sp, "csr_array", None)) if t)


def _as_index(a: np.ndarray, what: str) -> np.ndarray:
    if a.dtype == INDEX:
        return np.ascontiguousarray(a)  # the array itself when already contiguous
    if a.size and int(a.max()) > _INDEX_LIMIT:
        raise ValueError(f"X: {what} exceed 2^31 - 1, the most bagel supports "
                         f"(rows, columns and non-zeros must each stay below 2^31)")
    return a.astype(INDEX)


def csr_arrays(X) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(indptr, indices, data, n_columns) of X: a CSR matrix (or array)
    whose data scikit-learn's check_array has already made float32, or a dense
    2-d array. The caller's buffers are returned where their dtypes and layout
    allow."""
    if X.shape[1] > _INDEX_LIMIT:
        raise ValueError(f"X: {X.shape[1]} columns exceed 2^31 - 1, the most bagel supports "
                         f"(rows, columns and non-zeros must each stay below 2^31)")
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    nnz = int(X.indptr[-1])
    indptr = _as_index(X.indptr, "row pointers")
    # Slices are views: scipy may keep spare room after the last non-zero.
    indices = _as_index(X.indices[:nnz], "column indices")
    data = X.data[:nnz]
    if data.dtype != VALUE:
        original, data = data, data.astype(VALUE)
        if original.dtype.kind == "f":  # integers and bools are within float32's range
            _check_within_float32(data, original, indptr, indices)
    return indptr, indices, np.ascontiguousarray(data), int(X.shape[1])


def _check_within_float32(converted: np.ndarray, original: np.ndarray, indptr, indices) -> None:
    """A finite value that float32 cannot hold (1e300) is an error naming its
    place, as check_array's conversion of a dense X is (NaN and inf are left
    to the core, which names them). One call on the fast path: numpy's own
    overflow warning is left to the rare error."""
    if np.isfinite(converted).all():
        return
    overflowed = np.flatnonzero(~np.isfinite(converted) & np.isfinite(original))
    if overflowed.size == 0:
        return  # NaN or inf as given: the core names them
    p = int(overflowed[0])
    row = int(np.searchsorted(indptr, p, side="right")) - 1
    raise ValueError(f"X: the value {original[p]!r} in row {row}, column {int(indices[p])} is beyond "
                     "float32's range (Input X contains infinity or a value too large for "
                     "dtype('float32')).")


def is_ready_csr(X) -> bool:
    """A scipy CSR matrix with int32 indices: predict may skip check_array
    (bagel's core validates the arrays itself) and convert only its data."""
    return isinstance(X, _CSR_TYPES) and \
        X.indices.dtype == INDEX and X.indptr.dtype == INDEX and X.data.dtype.kind in "biuf"
