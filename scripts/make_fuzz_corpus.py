#!/usr/bin/python3
"""Writes the fuzzers' seed corpora, tests/fuzz/corpus/<reader>/, from the
repository's fixtures (tests/data, data/, configs/) and small hand-made edge
cases: every seed is a valid input or one step from it, so that the fuzzer
starts inside each reader's format rather than at its magic bytes.

    BAGEL=build/bagel /usr/bin/python3 scripts/make_fuzz_corpus.py

The model seeds are trained by the bagel binary named by $BAGEL (default
build/bagel) on tiny data, so that they are models as bagel writes them.
Inputs made of several files (a model folder, a config and its --set
values, a corpus and its labels) join them with the separator of
tests/fuzz/targets.h.
"""
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import scipy.sparse
from sklearn.datasets import dump_svmlight_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
SEPARATOR = b"\n#--bagel-fuzz-part--#\n"  # kPartSeparator in tests/fuzz/targets.h
FORTUNES = pathlib.Path("/usr/share/games/fortunes")


def npy(array):
    out = io.BytesIO()
    np.save(out, array, allow_pickle=False)
    return out.getvalue()


def npy_with_header(header, payload=b"", version=1):
    """An .npy whose header dict is `header` as given (numpy would not write it)."""
    text = header.encode("latin1")
    if version == 1:
        prelude = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little")
    else:
        prelude = b"\x93NUMPY" + bytes([version, 0]) + len(text).to_bytes(4, "little")
    return prelude + text + payload


def npz(matrix, compressed):
    out = io.BytesIO()
    scipy.sparse.save_npz(out, matrix, compressed=compressed)
    return out.getvalue()


def zip_of(members, method=zipfile.ZIP_DEFLATED):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def write(reader, name, data):
    folder = CORPUS / reader
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def fixture(name):
    return (ROOT / "tests" / "data" / name).read_bytes()


def head_lines(path, count):
    return b"".join(pathlib.Path(path).read_bytes().splitlines(keepends=True)[:count])


def npy_seeds():
    for path in sorted((ROOT / "tests" / "data").glob("*.npy")):
        write("npy", path.name, path.read_bytes())
    write("npy", "float64_2d.npy", npy(np.arange(6, dtype="<f8").reshape(2, 3) / 7))
    write("npy", "uint16.npy", npy(np.array([0, 1, 65535], dtype="<u2")))
    write("npy", "empty.npy", npy(np.zeros(0, dtype="<f4")))
    write("npy", "scalar.npy", npy(np.float32(2.5)))
    write("npy", "bytes.npy", npy(np.array([b"csr", b"ab"])))
    write("npy", "nan_inf.npy", npy(np.array([np.nan, np.inf, 1e300], dtype="<f8")))
    # Claims far more than the file holds (issue 17's first finding: the
    # reader allocated the claimed size, 540 GB under ASan, before checking).
    write("npy", "claims_huge_shape.npy",
          npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (135000000000,), }\n",
                          b"\0" * 16))
    write("npy", "zero_width_unicode.npy",
          npy_with_header("{'descr': '<U0', 'fortran_order': False, 'shape': (3,), }\n"))
    write("npy", "big_endian.npy",
          npy_with_header("{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }\n", b"\0\0\0\1"))
    write("npy", "fortran.npy",
          npy_with_header("{'descr': '<i1', 'fortran_order': True, 'shape': (2, 2), }\n", b"\1\2\3\4"))
    write("npy", "version2.npy",
          npy_with_header("{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }\n", b"\1\0\2\0", 2))


def npz_seeds():
    for path in sorted((ROOT / "tests" / "data").glob("*.npz")):
        write("npz", path.name, path.read_bytes())
    for name in ("fortunes-binary", "fortunes-multi"):
        x = scipy.sparse.load_npz(ROOT / "data" / name / "valid.npz")[:6]
        x = x[:, : x.indices.max() + 1]  # a narrow matrix: a small file
        write("npz", f"{name}_compressed.npz", npz(x, True))
        write("npz", f"{name}_stored.npz", npz(x, False))
    empty = scipy.sparse.csr_matrix((0, 4), dtype=np.float32)
    write("npz", "no_rows.npz", npz(empty, False))
    # The members of a CSR .npz, stored, with a member too many and one the
    # wrong dtype: zips numpy would write too.
    x = scipy.sparse.csr_matrix(np.array([[0, 1.5], [2, 0]], dtype=np.float32))
    members = {"indices.npy": npy(x.indices.astype("<i4")),
               "indptr.npy": npy(x.indptr.astype("<i4")),
               "format.npy": npy(np.array(b"csr")), "shape.npy": npy(np.array(x.shape, "<i8")),
               "data.npy": npy(x.data.astype("<f8")), "_is_array.npy": npy(np.array(True))}
    write("npz", "handmade_stored.npz", zip_of(members, zipfile.ZIP_STORED))
    write("npz", "handmade_deflated.npz", zip_of(members))


def svmlight_seeds():
    for path in sorted((ROOT / "tests" / "data").glob("svm_*.txt")):
        write("svmlight", path.name, path.read_bytes())
    x = scipy.sparse.load_npz(ROOT / "data" / "fortunes-multi" / "valid.npz")[:5]
    y = np.arange(5) % 3
    for zero_based in (True, False):
        out = io.BytesIO()
        dump_svmlight_file(x, y, out, zero_based=zero_based)
        write("svmlight", f"fortunes_{'zero' if zero_based else 'one'}_based.svm", out.getvalue())
    write("svmlight", "qid_comments_crlf.svm", b"1 qid:3 1:0.5 7:2 # c\r\n-1 qid:3 2:1e-3\r\n\r\n")
    write("svmlight", "no_final_newline.svm", b"+1 0:1 3:4.25e+2\n0 1:-inf")
    write("svmlight", "huge_index.svm", b"1 2147483646:1\n")
    write("svmlight", "labels_only.svm", b"1\n2\n# only labels\n")
    write("svmlight", "empty.svm", b"")


def labels_seeds():
    for path in sorted((ROOT / "tests" / "data").glob("labels_*.npy")):
        write("labels", path.name, path.read_bytes())
    write("labels", "fortunes_multi.txt", head_lines(ROOT / "data/fortunes-multi/test.labels", 30))
    write("labels", "fortunes_binary.txt", head_lines(ROOT / "data/fortunes-binary/test.labels", 30))
    write("labels", "numeric.txt", b"1\n+1.0\n-1\n01\n1e-05\n\n\n")
    write("labels", "bom_crlf.txt", b"\xef\xbb\xbfspam\r\nham\r\nspam\r\n")
    write("labels", "not_utf8.txt", b"caf\xe9\nbar\n")
    write("labels", "blank_inside.txt", b"a\n\nb\n")
    write("labels", "unicode.txt", "\u00e9t\u00e9\nhiver\n\u2603\n".encode())
    write("labels", "bytes_labels.npy", npy(np.array([b"spam", b"ham", b"spam"])))
    write("labels", "zero_width_bytes.npy",
          npy_with_header("{'descr': '|S0', 'fortran_order': False, 'shape': (100000000,), }\n"))


def config_seeds():
    for path in sorted((ROOT / "configs").glob("*.json")):
        write("config", path.name, path.read_bytes())
    example = (ROOT / "configs" / "example.json").read_bytes()
    overrides = [b"optimizer.epochs=3", b"optimizer.schedule=invscaling", b"model.layer=dense",
                 b"optimizer.class_weight=\"balanced\"", b"valid=null"]
    write("config", "example_with_sets.json", SEPARATOR.join([example] + overrides))
    write("config", "set_unknown_key.json", SEPARATOR.join([example, b"optimizer.lr=0.01"]))
    minimal = {"train": {"features": "train.svm"}, "output": "out",
               "optimizer": {"epochs": "auto", "learning_rate": "auto", "threads": 0,
                             "deterministic": False, "average": True, "patience": 0}}
    write("config", "minimal_svmlight.json", json.dumps(minimal))
    write("config", "comments.json", b"// a comment\n{\"train\": {\"features\": \"a.npz\", "
                                     b"\"labels\": \"a.labels\"} /* inline */}\n")
    write("config", "nested_deep.json", b"{\"train\": " + b"[" * 70 + b"]" * 70 + b"}")
    write("config", "number_overflow.json", b"{\"optimizer\": {\"l2\": 1e999}}")


def model_seeds():
    bagel = os.environ.get("BAGEL", str(ROOT / "build" / "bagel"))
    if not os.access(bagel, os.X_OK):
        sys.exit(f"make_fuzz_corpus.py: no bagel binary at {bagel}; set BAGEL")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        rows = [b"1 1:1 2:0.5", b"2 2:1 3:1", b"1 1:2", b"3 3:1 4:1", b"2 2:2 4:1", b"3 4:3"]
        for classes in (2, 3):
            data = b"\n".join(r for r in rows if int(r[:1]) <= classes) + b"\n"
            (tmp / "train.svm").write_bytes(data)
            config = {"train": {"features": "train.svm"},
                      "optimizer": {"epochs": 2, "learning_rate": 0.1, "threads": 1},
                      "output": f"model{classes}"}
            (tmp / "c.json").write_text(json.dumps(config))
            subprocess.run([bagel, "train", "-c", str(tmp / "c.json"), "-q"], check=True)
            folder = tmp / f"model{classes}"
            parts = [(folder / name).read_bytes() for name in ("model.json", "weight.npy", "bias.npy")]
            write("model", f"trained_{classes}_classes", SEPARATOR.join(parts))
            write("model", f"no_bias_{classes}_classes", SEPARATOR.join(parts[:2]))
            j = json.loads(parts[0])
            j["num_features"] += 1  # model.json no longer describes weight.npy
            write("model", f"wrong_shape_{classes}_classes",
                  SEPARATOR.join([json.dumps(j).encode()] + parts[1:]))


def text_corpus_seeds():
    fortunes = FORTUNES / "computers"
    text = head_lines(fortunes, 25) if fortunes.exists() else b"one line\nanother\n"
    write("text_corpus", "fortunes.txt", text)
    labels = b"".join(b"%d\n" % (i % 2) for i in range(text.count(b"\n")))
    write("text_corpus", "fortunes_with_labels", text + SEPARATOR + labels)
    write("text_corpus", "crlf_no_final_newline", b"first\r\nsecond\r\nthird")
    write("text_corpus", "not_utf8", b"ok\ncaf\xe9\n")
    write("text_corpus", "fewer_labels", b"a\nb\nc\n" + SEPARATOR + b"x\ny\n")
    write("text_corpus", "empty", b"")


def main():
    if CORPUS.exists():
        shutil.rmtree(CORPUS)
    npy_seeds()
    npz_seeds()
    svmlight_seeds()
    labels_seeds()
    config_seeds()
    model_seeds()
    text_corpus_seeds()
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    count = sum(1 for f in CORPUS.rglob("*") if f.is_file())
    print(f"{count} seeds, {total} bytes in {CORPUS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
