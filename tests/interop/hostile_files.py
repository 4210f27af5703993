"""The hostile files of issue 18, made by one function each: the CLI tests
(test_hostile_inputs.py) write them at the size that broke bagel, and
scripts/make_fuzz_corpus.py writes small versions of the same files as the
fuzzers' seeds (a size parameter where the size matters)."""

import io
import struct
import zipfile

import numpy as np


def npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def npy_header_only(descr, shape):
    """An .npy that claims `shape` of `descr` and holds no payload."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(shape))
    header += " " * (117 - len(header)) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode()


def csr_members(x):
    return {"indices.npy": npy_bytes(x.indices), "indptr.npy": npy_bytes(x.indptr),
            "format.npy": npy_bytes(np.array(b"csr")),
            "shape.npy": npy_bytes(np.array(x.shape, dtype=np.int64)),
            "data.npy": npy_bytes(x.data)}


def zip_entry(name, compression):
    """A member dated 1980-01-01, so that a zip made twice has the same bytes."""
    entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    entry.compress_type = compression
    entry.external_attr = 0o600 << 16
    return entry


def zip_bytes(members, compression=zipfile.ZIP_DEFLATED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(zip_entry(name, compression), data)
    return out.getvalue()


def with_claimed_size(blob, member, size):
    """The zip `blob` with the uncompressed size of `member` rewritten in both
    its local header and its central directory entry; its compressed size
    stays true."""
    blob = bytearray(blob)
    name = member.encode()
    # (signature, offset of the name length, of the name, of the uncompressed size)
    for signature, length_at, name_at, size_at in ((b"PK\x03\x04", 26, 30, 22),
                                                   (b"PK\x01\x02", 28, 46, 24)):
        at = blob.find(signature)
        while at >= 0:
            name_len = struct.unpack_from("<H", blob, at + length_at)[0]
            if blob[at + name_at:at + name_at + name_len] == name:
                struct.pack_into("<I", blob, at + size_at, size)
            at = blob.find(signature, at + 4)
    return bytes(blob)


def npz_claiming_size(x, member, size, compression):
    """A CSR .npz of `x` whose `member` claims `size` bytes (point 4: a 1.2 KB
    stored file claiming 4 GiB cost 4.2 GB; deflated, a claim beyond
    deflate's 1032:1 is the ratio bound)."""
    return with_claimed_size(zip_bytes(csr_members(x), compression), member, size)


def npz_padded(x, padding):
    """A deflated CSR .npz whose data member carries `padding` zero bytes
    after its array (point 4: 1 GB of deflated zeros was inflated, then
    ignored)."""
    members = csr_members(x)
    members["data.npy"] += bytes(padding)
    return zip_bytes(members)


def npz_with_long_format(x, rows):
    """A deflated CSR .npz whose format member is a '|S3' array of `rows`
    zeroed strings, header and payload consistent (point 4: 10^8 rows were
    inflated; format must be a small array)."""
    members = csr_members(x)
    members["format.npy"] = npy_header_only("|S3", (rows,)) + bytes(3 * rows)
    return zip_bytes(members)


def compressed_csr(file, rows, row_indices, chunk_rows=8192):
    """Writes to `file` (a path or a binary file) a deflated CSR .npz whose
    every row holds `row_indices` with value 1; the big members are streamed
    a block of rows at a time (zip64, as numpy writes large members), so that
    Python never holds the whole, possibly large, matrix (point 9)."""
    nnz_per_row = len(row_indices)
    nnz = rows * nnz_per_row

    def stream(z, name, header, block):
        with z.open(zip_entry(name, zipfile.ZIP_DEFLATED), "w", force_zip64=True) as out:
            out.write(header)
            for start in range(0, rows, chunk_rows):
                out.write(block[:min(chunk_rows, rows - start) * nnz_per_row].tobytes())

    small = {"format.npy": npy_bytes(np.array(b"csr")),
             "shape.npy": npy_bytes(np.array([rows, max(row_indices) + 1], dtype=np.int64)),
             "indptr.npy": npy_bytes(np.arange(rows + 1, dtype=np.int32) * nnz_per_row)}
    with zipfile.ZipFile(file, "w") as z:
        for name, data in small.items():
            z.writestr(zip_entry(name, zipfile.ZIP_DEFLATED), data)
        stream(z, "indices.npy", npy_header_only("<i4", (nnz,)),
               np.tile(np.asarray(row_indices, dtype=np.int32), chunk_rows))
        stream(z, "data.npy", npy_header_only("<f4", (nnz,)),
               np.ones(chunk_rows * nnz_per_row, dtype=np.float32))


def deep_array(depth):
    """A JSON array nested `depth` deep (point 1; the limit is 64)."""
    return "[" * depth + "]" * depth


def with_deep_config(model_json, depth):
    """model.json's text with its "config" replaced by an array nested `depth`
    deep (point 1: 10^6 deep overflowed the stack in load_model)."""
    start = model_json.index('"config"')
    end = model_json.index('"training"')
    return model_json[:start] + '"config": ' + deep_array(depth) + ",\n  " + model_json[end:]


# A label that is not UTF-8 (point 7: it trained to the end and failed at save).
LATIN1_LABEL = "café".encode("latin-1")

# A 2^31-column svmlight file in 4 short lines (point 5).
WIDE_SVMLIGHT = "1 2147483646:1\n0 1:1\n1 2:1\n0 3:1\n"
