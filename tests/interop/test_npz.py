"""bagel's .npz reader and writer against scipy.sparse.save_npz / load_npz.

Each case writes a matrix with scipy, runs `$BAGEL convert in.npz out.npz`
(stored, and with --compressed), and loads the result back with scipy: the
arrays must come back exactly, with data cast to float32 as numpy casts it.
Broken inputs must fail with a message on stderr naming the file and key.

Run by ctest with BAGEL=<bagel executable>; by hand:
  cd tests/interop && BAGEL=../../build/bagel /usr/bin/python3 -m unittest -v test_npz
"""
import os
import struct
import subprocess
import tempfile
import unittest
import zipfile

import numpy as np
import scipy.sparse as sp

BAGEL = os.environ.get("BAGEL")


def csr(data, indices, indptr, shape):
    """A CSR matrix kept exactly as given (no sorting, no summing of repeats)."""
    return sp.csr_matrix((np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=shape)


def random_csr(rng, rows, cols, density, dtype):
    x = sp.random(rows, cols, density=density, format="csr", random_state=rng)
    x.data = (x.data * 200 - 100)  # negative values too
    if np.issubdtype(np.dtype(dtype), np.integer):
        x.data = np.round(x.data)
    return x.astype(dtype)


def payload_offsets(path):
    """Byte offset of each member's array payload inside the zip (STORED only)."""
    offsets = {}
    with open(path, "rb") as f:
        raw = f.read()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            o = info.header_offset
            name_len, extra_len = struct.unpack("<HH", raw[o + 26:o + 30])
            npy = o + 30 + name_len + extra_len
            major = raw[npy + 6]
            if major == 1:
                header_len = 10 + struct.unpack("<H", raw[npy + 8:npy + 10])[0]
            else:
                header_len = 12 + struct.unpack("<I", raw[npy + 8:npy + 12])[0]
            offsets[info.filename] = npy + header_len
    return offsets


class NpzInterop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not BAGEL:
            raise RuntimeError("set BAGEL to the path of the bagel executable")

    def setUp(self):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        self.dir = tmp.name

    def path(self, name):
        return os.path.join(self.dir, name)

    def convert(self, src, dst, *args):
        return subprocess.run([BAGEL, "convert", src, dst, *args],
                              capture_output=True, text=True, timeout=120)

    def assert_converts(self, x, compressed_in):
        """scipy -> bagel (stored and compressed) -> scipy keeps every array."""
        src = self.path("in.npz")
        sp.save_npz(src, x, compressed=compressed_in)
        for flags, method in (((), zipfile.ZIP_STORED), (("--compressed",), zipfile.ZIP_DEFLATED)):
            dst = self.path("out.npz")
            run = self.convert(src, dst, *flags)
            self.assertEqual(run.returncode, 0, run.stderr)
            y = sp.load_npz(dst)
            self.assertEqual(y.format, "csr")
            self.assertEqual(y.shape, x.shape)
            self.assertEqual(y.data.dtype, np.float32)
            self.assertEqual(y.indices.dtype, np.int32)
            self.assertEqual(y.indptr.dtype, np.int32)
            np.testing.assert_array_equal(y.indptr, x.indptr)
            np.testing.assert_array_equal(y.indices, x.indices)
            np.testing.assert_array_equal(y.data, x.data.astype(np.float32))
            with zipfile.ZipFile(dst) as z:
                self.assertEqual(sorted(z.namelist()),
                                 ["data.npy", "format.npy", "indices.npy", "indptr.npy",
                                  "shape.npy"])
                self.assertTrue(all(i.compress_type == method for i in z.infolist()))
                self.assertIsNone(z.testzip())  # CRCs

    def test_data_dtypes_compressed_and_stored(self):
        rng = np.random.RandomState(0)
        for dtype in (np.int32, np.int64, np.float32, np.float64, np.int8, np.uint16, np.bool_):
            for compressed in (True, False):
                with self.subTest(dtype=np.dtype(dtype).name, compressed=compressed):
                    self.assert_converts(random_csr(rng, 40, 30, 0.2, dtype), compressed)

    def test_int64_index_arrays(self):
        x = random_csr(np.random.RandomState(1), 50, 70, 0.1, np.float64)
        x.indices = x.indices.astype(np.int64)
        x.indptr = x.indptr.astype(np.int64)
        for compressed in (True, False):
            with self.subTest(compressed=compressed):
                self.assert_converts(x, compressed)

    def test_empty_rows_unsorted_and_repeated_indices(self):
        # Row 0 unsorted, row 1 empty, row 2 repeats column 3, last row empty.
        x = csr([5, -1, 2, 7, 7, 0.5], [4, 0, 2, 3, 3, 1], [0, 3, 3, 6, 6], (4, 5))
        self.assertFalse(x.has_sorted_indices)
        for compressed in (True, False):
            with self.subTest(compressed=compressed):
                self.assert_converts(x, compressed)

    def test_all_empty_and_tiny_matrices(self):
        for x in (sp.csr_matrix((6, 9), dtype=np.float64),
                  sp.csr_matrix((0, 4), dtype=np.float32),
                  sp.csr_matrix(np.array([[3]], dtype=np.int64)),
                  sp.csr_matrix(np.array([[0]], dtype=np.int64))):
            for compressed in (True, False):
                with self.subTest(shape=x.shape, nnz=x.nnz, compressed=compressed):
                    self.assert_converts(x, compressed)

    def test_extra_members_such_as_is_array_are_ignored(self):
        # scipy >= 1.11 adds _is_array.npy for sparse arrays (csr_array).
        x = random_csr(np.random.RandomState(5), 10, 12, 0.3, np.float64)
        src = self.path("array.npz")
        np.savez(src, indices=x.indices, indptr=x.indptr, format=b"csr", shape=np.array(x.shape),
                 data=x.data, _is_array=True)
        run = self.convert(src, self.path("out.npz"))
        self.assertEqual(run.returncode, 0, run.stderr)
        y = sp.load_npz(self.path("out.npz"))
        np.testing.assert_array_equal(y.toarray(), x.toarray().astype(np.float32))

    def test_spare_room_after_the_last_nonzero_is_unused_as_in_scipy(self):
        # data and indices longer than indptr[-1]: load_npz uses the first
        # indptr[-1] entries, and so does bagel.
        x = random_csr(np.random.RandomState(6), 20, 15, 0.3, np.float32)
        spare = x.copy()
        spare.data = np.r_[x.data, [9, 9]].astype(np.float32)
        spare.indices = np.r_[x.indices, [0, 0]].astype(np.int32)
        for compressed in (True, False):
            with self.subTest(compressed=compressed):
                src = self.path("spare.npz")
                sp.save_npz(src, spare, compressed=compressed)
                self.assertEqual((sp.load_npz(src) != x).nnz, 0)
                run = self.convert(src, self.path("out.npz"))
                self.assertEqual(run.returncode, 0, run.stderr)
                y = sp.load_npz(self.path("out.npz"))
                np.testing.assert_array_equal(y.indptr, x.indptr)
                np.testing.assert_array_equal(y.indices, x.indices)
                np.testing.assert_array_equal(y.data, x.data)

    def test_large_matrix_spanning_many_conversion_chunks(self):
        x = random_csr(np.random.RandomState(2), 3000, 20000, 0.005, np.int64)
        self.assertGreater(x.nnz, 200000)
        for compressed in (True, False):
            with self.subTest(compressed=compressed):
                self.assert_converts(x, compressed)

    def test_bagel_reads_its_own_output_and_aligns_stored_payloads(self):
        x = random_csr(np.random.RandomState(3), 123, 457, 0.05, np.float32)
        sp.save_npz(self.path("a.npz"), x)
        chain = ["a.npz", "b.npz", "c.npz", "d.npz"]
        flags = [(), ("--compressed",), ()]
        for (src, dst), flag in zip(zip(chain, chain[1:]), flags):
            run = self.convert(self.path(src), self.path(dst), *flag)
            self.assertEqual(run.returncode, 0, run.stderr)
        y = sp.load_npz(self.path("d.npz"))
        self.assertEqual((y != x).nnz, 0)
        # Stored output is laid out so the reader can map the arrays in place.
        for name, offset in payload_offsets(self.path("d.npz")).items():
            if name in ("data.npy", "indices.npy", "indptr.npy"):
                self.assertEqual(offset % 64, 0, name)

    # ---- errors: non-zero exit, stderr names the file (and the key) ------------

    def assert_fails(self, path, *needles):
        run = self.convert(path, self.path("out.npz"))
        self.assertNotEqual(run.returncode, 0, "converted a bad file: " + path)
        self.assertIn(path, run.stderr)
        for needle in needles:
            self.assertIn(needle, run.stderr)
        self.assertFalse(os.path.exists(self.path("out.npz")))

    def test_csc_file_is_rejected_with_hint(self):
        src = self.path("csc.npz")
        sp.save_npz(src, sp.csc_matrix(np.eye(3)))
        self.assert_fails(src, "format is 'csc', expected 'csr'", "tocsr()")

    def test_coo_file_is_rejected(self):
        src = self.path("coo.npz")
        sp.save_npz(src, sp.coo_matrix(np.eye(3)))
        self.assert_fails(src, "format is 'coo', expected 'csr'")

    def test_missing_indices_is_named(self):
        x = sp.csr_matrix(np.eye(3))
        src = self.path("missing.npz")
        np.savez(src, data=x.data, indptr=x.indptr, format=b"csr", shape=np.array(x.shape))
        self.assert_fails(src, "missing key 'indices'")

    def test_truncated_file_is_rejected(self):
        src = self.path("cut.npz")
        sp.save_npz(src, sp.random(30, 30, density=0.3, format="csr", random_state=4))
        with open(src, "rb") as f:
            raw = f.read()
        for keep in (len(raw) // 2, len(raw) - 1, 0):
            with self.subTest(keep=keep):
                with open(src, "wb") as f:
                    f.write(raw[:keep])
                self.assert_fails(src)

    def test_truncated_array_inside_a_valid_zip_is_named(self):
        x = sp.csr_matrix(np.eye(4))
        src = self.path("short.npz")
        np.savez(src, data=x.data, indices=x.indices, indptr=x.indptr, format=b"csr",
                 shape=np.array(x.shape))
        with zipfile.ZipFile(src) as z:
            members = {name: z.read(name) for name in z.namelist()}
        members["data.npy"] = members["data.npy"][:-8]  # one float64 short
        with zipfile.ZipFile(src, "w") as z:
            for name, raw in members.items():
                z.writestr(name, raw)
        self.assert_fails(src, "data", "truncated")

    def test_not_a_zip_is_rejected(self):
        src = self.path("text.npz")
        with open(src, "w") as f:
            f.write("1 3:1 5:2\n")
        self.assert_fails(src, "zip")

    def test_empty_file_is_named_as_such(self):
        src = self.path("empty.npz")
        open(src, "wb").close()
        self.assert_fails(src, f"{src}: empty file (0 bytes), not a zip archive")

    def test_bytes_appended_after_the_zip_are_ignored_as_by_numpy(self):
        x = random_csr(np.random.RandomState(7), 12, 9, 0.3, np.float32)
        for compressed in (True, False):
            with self.subTest(compressed=compressed):
                src = self.path("trailing.npz")
                sp.save_npz(src, x, compressed=compressed)
                with open(src, "ab") as f:
                    f.write(b"\n")
                self.assertEqual((sp.load_npz(src) != x).nnz, 0)
                run = self.convert(src, self.path("out.npz"))
                self.assertEqual(run.returncode, 0, run.stderr)
                self.assertEqual((sp.load_npz(self.path("out.npz")) != x).nnz, 0)

    def test_shape_of_another_form_is_described(self):
        x = sp.csr_matrix(np.eye(3))
        src = self.path("shape.npz")
        np.savez(src, data=x.data, indices=x.indices, indptr=x.indptr, format=b"csr",
                 shape=np.array([x.shape]))
        self.assert_fails(src, f"{src}: shape: expected 2 integers (rows, columns), "
                               "found an array of shape (1, 2)")

    def test_data_of_an_unread_dtype_lists_the_dtypes_read(self):
        # Strings are not listed: data must be numbers.
        x = sp.csr_matrix(np.eye(3))
        for dtype, descr in ((np.float16, "<f2"), (np.complex128, "<c16")):
            with self.subTest(dtype=descr):
                src = self.path("dtype.npz")
                sp.save_npz(src, x.astype(dtype))
                self.assert_fails(src, f"{src}: data: dtype '{descr}' is not a dtype bagel reads "
                                       "(expected bool, int8..int64, uint8..uint64, float32 or "
                                       "float64)")

    def test_index_out_of_range_is_rejected(self):
        x = sp.csr_matrix(np.eye(3))
        x.indices[1] = 3
        src = self.path("range.npz")
        sp.save_npz(src, x)
        self.assert_fails(src, "indices", "column 3")

    def test_nan_is_rejected(self):
        x = sp.csr_matrix(np.eye(3))
        x.data[2] = np.nan
        src = self.path("nan.npz")
        sp.save_npz(src, x, compressed=False)
        self.assert_fails(src, "data", "non-finite")

    def test_float64_beyond_float32_range_is_rejected(self):
        x = sp.csr_matrix(np.eye(2))
        x.data[0] = 1e300
        src = self.path("huge.npz")
        sp.save_npz(src, x)
        self.assert_fails(src, "data", "1e+300", "float32")

    def test_int64_index_beyond_int32_is_rejected(self):
        x = csr([1.0], np.array([3000000000], dtype=np.int64), np.array([0, 1], dtype=np.int64),
                (1, 4000000000))
        src = self.path("wide.npz")
        sp.save_npz(src, x)
        self.assert_fails(src, "shape", "4000000000")
        # The same index with a shape that fits: the index itself is named.
        np.savez(src, data=x.data, indices=x.indices, indptr=x.indptr, format=b"csr",
                 shape=np.array([1, 5]))
        self.assert_fails(src, "indices", "3000000000")

    def test_fractional_indices_are_rejected(self):
        src = self.path("frac.npz")
        np.savez(src, data=np.array([1.0]), indices=np.array([0.5]), indptr=np.array([0, 1]),
                 format=b"csr", shape=np.array([1, 2]))
        self.assert_fails(src, "indices", "0.5")

    def test_big_endian_data_is_rejected(self):
        x = sp.csr_matrix(np.eye(3))
        x.data = x.data.astype(">f8")
        src = self.path("big_endian.npz")
        sp.save_npz(src, x)
        self.assert_fails(src, "data", "big-endian")


if __name__ == "__main__":
    unittest.main()
