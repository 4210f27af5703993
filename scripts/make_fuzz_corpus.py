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
tests/fuzz/targets.h; the text targets' inputs start with a byte of
options (tests/fuzz/text_targets.cpp).

Issue 18's hostile files are seeds, made by the same functions as the CLI
tests that reproduce them (tests/interop/hostile_files.py), smaller where
the size does not matter to the check:
  1 deep JSON          config/nested_deep.json, config/set_nested_deep,
                       config/nested_64.json (accepted) and nested_65.json,
                       model/deep_config (1000 deep; the limit is 64)
  2 predict --threads  a command-line number, no file: not a seed
  3 '<U0' memcpy UB    npy/zero_width_unicode.npy, labels/zero_width_unicode.npy
  4 npz/npy sizes      npz/claims_4_gib_stored.npz, npz/claims_beyond_deflate_ratio.npz,
                       npz/padded_member.npz (1 MiB of zeros, not 1 GB: the check is
                       exact), npz/long_format_member.npz (2,000 rows: over 4 KiB),
                       labels/zero_width_bytes.npy ('|S0' x 10^8), npy/claims_huge_shape.npy,
                       npy/trailing_bytes.npy, npy/header_claims_2_gib.npy
  5 classes and size   labels/too_many_classes.npy (10,001 int16 labels, 20 KB);
                       svmlight/index_near_2_31.svm. The weights' memory check and
                       the confusion matrix's class bound act on training, not a
                       reader; a model.json of 10,001 classes (70 KB) is left to
                       test_model.cpp
  6 kill during save   a process's fate, no file: not a seed
  7 not UTF-8          labels/not_utf8.txt, labels/overlong_and_surrogate.txt,
                       labels/not_utf8_bytes.npy, text_corpus/labels_not_utf8,
                       config/output_not_utf8.json, config/set_output_not_utf8,
                       model/config_not_utf8.
                       Unwritable outputs are paths, no file: not a seed
  8 raw messages       config/number_overflow.json, config/set_number_overflow,
                       model/number_overflow; disk full is not a file
  9 npz in row chunks  npz/compressed_zip64_streamed.npz (the chunked reader runs
                       on every npz seed)
"""
import csv
import io
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

import numpy as np
import scipy.sparse
from sklearn.datasets import dump_svmlight_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "interop"))
from hostile_files import (LATIN1_LABEL, WIDE_SVMLIGHT, compressed_csr,  # noqa: E402
                           deep_array, npy_bytes, npy_header_only, npz_claiming_size, npz_padded,
                           npz_with_long_format, with_deep_config, zip_bytes)

CORPUS = ROOT / "tests" / "fuzz" / "corpus"
SEPARATOR = b"\n#--bagel-fuzz-part--#\n"  # kPartSeparator in tests/fuzz/targets.h
FORTUNES = pathlib.Path("/usr/share/games/fortunes")


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
    write("npy", "float64_2d.npy", npy_bytes(np.arange(6, dtype="<f8").reshape(2, 3) / 7))
    write("npy", "uint16.npy", npy_bytes(np.array([0, 1, 65535], dtype="<u2")))
    write("npy", "empty.npy", npy_bytes(np.zeros(0, dtype="<f4")))
    write("npy", "scalar.npy", npy_bytes(np.float32(2.5)))
    write("npy", "bytes.npy", npy_bytes(np.array([b"csr", b"ab"])))
    write("npy", "nan_inf.npy", npy_bytes(np.array([np.nan, np.inf, 1e300], dtype="<f8")))
    # Claims far more than the file holds (issue 17's first finding: the
    # reader allocated the claimed size, 540 GB under ASan, before checking).
    write("npy", "claims_huge_shape.npy",
          npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (135000000000,), }\n",
                          b"\0" * 16))
    write("npy", "zero_width_unicode.npy", npy_header_only("<U0", (3,)))
    write("npy", "trailing_bytes.npy", npy_bytes(np.array([1, 2], dtype="<i4")) + bytes(5))
    # A version 2 header length of 2 GiB, refused before it is read.
    write("npy", "header_claims_2_gib.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{")
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
    members = {"indices.npy": npy_bytes(x.indices.astype("<i4")),
               "indptr.npy": npy_bytes(x.indptr.astype("<i4")),
               "format.npy": npy_bytes(np.array(b"csr")),
               "shape.npy": npy_bytes(np.array(x.shape, "<i8")),
               "data.npy": npy_bytes(x.data.astype("<f8")),
               "_is_array.npy": npy_bytes(np.array(True))}
    write("npz", "handmade_stored.npz", zip_bytes(members, zipfile.ZIP_STORED))
    write("npz", "handmade_deflated.npz", zip_bytes(members))
    hostile_npz_seeds()


def hostile_npz_seeds():
    x = scipy.sparse.random(5, 40, density=0.2, format="csr", random_state=1, dtype=np.float32)
    write("npz", "claims_4_gib_stored.npz",
          npz_claiming_size(x, "format.npy", 0xFFFFFFF0, zipfile.ZIP_STORED))
    write("npz", "claims_beyond_deflate_ratio.npz",
          npz_claiming_size(x, "indices.npy", 0x7FFFFFF0, zipfile.ZIP_DEFLATED))
    write("npz", "padded_member.npz", npz_padded(x, 1 << 20))
    write("npz", "long_format_member.npz", npz_with_long_format(x, 2000))
    streamed = io.BytesIO()
    compressed_csr(streamed, 40, [0, 3, 7], chunk_rows=16)
    write("npz", "compressed_zip64_streamed.npz", streamed.getvalue())


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
    write("svmlight", "index_near_2_31.svm", WIDE_SVMLIGHT)
    write("svmlight", "index_beyond_int32.svm", b"1 2147483648:1\n0 1:1\n")
    write("svmlight", "labels_only.svm", b"1\n2\n# only labels\n")
    write("svmlight", "empty.svm", b"")


def labels_seeds():
    for path in sorted((ROOT / "tests" / "data").glob("labels_*.npy")):
        write("labels", path.name, path.read_bytes())
    write("labels", "fortunes_multi.txt", head_lines(ROOT / "data/fortunes-multi/test.labels", 30))
    write("labels", "fortunes_binary.txt", head_lines(ROOT / "data/fortunes-binary/test.labels", 30))
    write("labels", "numeric.txt", b"1\n+1.0\n-1\n01\n1e-05\n\n\n")
    write("labels", "bom_crlf.txt", b"\xef\xbb\xbfspam\r\nham\r\nspam\r\n")
    write("labels", "not_utf8.txt", b"yes\n" + LATIN1_LABEL + b"\nno\n")
    write("labels", "overlong_and_surrogate.txt", b"a\n\xc0\xaf\n\xed\xa0\x80\n")
    write("labels", "not_utf8_bytes.npy", npy_bytes(np.array([b"spam", b"h\xffam"])))
    write("labels", "zero_width_unicode.npy", npy_header_only("<U0", (3,)))
    write("labels", "too_many_classes.npy", npy_bytes(np.arange(10001, dtype="<i2")))
    write("labels", "blank_inside.txt", b"a\n\nb\n")
    write("labels", "unicode.txt", "\u00e9t\u00e9\nhiver\n\u2603\n".encode())
    write("labels", "bytes_labels.npy", npy_bytes(np.array([b"spam", b"ham", b"spam"])))
    write("labels", "zero_width_bytes.npy", npy_header_only("|S0", (100000000,)))


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
    write("config", "nested_deep.json", '{"train": ' + deep_array(1000) + "}")
    write("config", "nested_64.json", deep_array(64))  # the deepest accepted
    write("config", "nested_65.json", deep_array(65))
    write("config", "set_nested_deep", SEPARATOR.join([example, b"optimizer.epochs=" +
                                                       deep_array(1000).encode()]))
    write("config", "number_overflow.json", b"{\"optimizer\": {\"l2\": 1e999}}")
    write("config", "set_number_overflow", SEPARATOR.join([example, b"optimizer.l2=1e999"]))
    write("config", "output_not_utf8.json",
          b"{\"train\": {\"features\": \"a.svm\"}, \"output\": \"runs/\xff\xfemodel\"}")
    # A --set value that is not JSON is a string as given: bytes, not text.
    write("config", "set_output_not_utf8", SEPARATOR.join([example, b"output=runs/\xff\xfemodel"]))


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
        hostile_model_seeds(parts)


def hostile_model_seeds(parts):
    """Hostile model.json files beside a real weight.npy and bias.npy."""
    text = parts[0].decode()
    write("model", "deep_config", SEPARATOR.join([with_deep_config(text, 1000).encode()] + parts[1:]))
    j = json.loads(text)
    j["config"] = {"optimizer": {"l2": "L2"}, "output": "OUTPUT"}
    hostile = json.dumps(j).encode()
    write("model", "number_overflow",
          SEPARATOR.join([hostile.replace(b'"L2"', b"1e999")] + parts[1:]))
    write("model", "config_not_utf8",
          SEPARATOR.join([hostile.replace(b"OUTPUT", b"runs/\xff\xfemodel")] + parts[1:]))


def text_corpus_seeds():
    fortunes = FORTUNES / "computers"
    text = head_lines(fortunes, 25) if fortunes.exists() else b"one line\nanother\n"
    write("text_corpus", "fortunes.txt", text)
    labels = b"".join(b"%d\n" % (i % 2) for i in range(text.count(b"\n")))
    write("text_corpus", "fortunes_with_labels", text + SEPARATOR + labels)
    write("text_corpus", "crlf_no_final_newline", b"first\r\nsecond\r\nthird")
    write("text_corpus", "not_utf8", b"ok\ncaf\xe9\n")
    write("text_corpus", "fewer_labels", b"a\nb\nc\n" + SEPARATOR + b"x\ny\n")
    write("text_corpus", "labels_not_utf8", b"a\nb\n" + SEPARATOR + b"yes\n" + LATIN1_LABEL + b"\n")
    write("text_corpus", "empty", b"")


def fortunes(category, count):
    """The first `count` fortunes of a category, each on one line."""
    path = FORTUNES / category
    if not path.exists():  # the fortunes packages are not installed
        return [f"{category} document {i}, with \"quotes\"" for i in range(count)]
    texts = path.read_text(encoding="utf-8", errors="replace").split("\n%\n")
    return [re.sub(r"\s+", " ", t).strip() for t in texts[:count]]


def labelled_fortunes(per_class):
    return [(label, text) for label in ("computers", "science", "pets", "de/wusstensie")
            for text in fortunes(label, per_class)]


def fasttext_seeds():
    """Options byte (text_targets.cpp): multi_label + 3 unlabeled + 9
    decode_error + 27 for the "#" prefix; 0 is split, error, strict."""
    docs = labelled_fortunes(3)
    lines = [f"__label__{label.split('/')[-1]} {text}" for label, text in docs]
    text = "\n".join(lines).encode() + b"\n"
    write("fasttext", "fortunes", b"\0" + text)
    two = "\n".join(f"__label__a {t} __label__b" for _, t in docs[:4]).encode()
    write("fasttext", "multi_label_split", b"\0" + two)
    write("fasttext", "multi_label_first", b"\1" + two)
    write("fasttext", "multi_label_error", b"\2" + two)
    unlabeled = "\n".join(lines[:3] + [docs[3][1]] + lines[4:6]).encode()
    write("fasttext", "unlabeled_skip", bytes([3]) + unlabeled)
    write("fasttext", "unlabeled_keep", bytes([6]) + unlabeled)
    write("fasttext", "not_utf8_replace", bytes([18]) + lines[0].encode() + b" caf\xe9\n")
    write("fasttext", "bom_crlf", b"\0\xef\xbb\xbf" + "\r\n".join(lines[:3]).encode())
    write("fasttext", "hash_prefix", bytes([27]) + "\n".join(
        f"#{label.split('/')[-1]}\t{text}" for label, text in docs[:4]).encode())


def delimited_seeds():
    """Options byte (text_targets.cpp): 1 csv, 2 no quoting, 4 header,
    8 x (label column + 1), 32 x text column, 128 replace."""
    docs = labelled_fortunes(3)
    tsv = "".join(f"{label}\t{text}\n" for label, text in docs).encode()
    write("delimited", "fortunes.tsv", bytes([8 | 32]) + tsv)
    write("delimited", "fortunes_unquoted.tsv", bytes([2 | 8 | 32]) + tsv)
    write("delimited", "text_only.tsv", b"\0" + "".join(t + "\n" for _, t in docs[:5]).encode())
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["label", "text"])
    for label, text in docs:  # quoted fields with commas, "" and a line break
        writer.writerow([label, text.replace(". ", ".\n", 1)])
    quoted = out.getvalue().encode()
    write("delimited", "fortunes_header.csv", bytes([1 | 4 | 8 | 32]) + quoted)
    write("delimited", "not_utf8_replace.csv",
          bytes([1 | 8 | 32 | 128]) + b"spam,caf\xe9 \"au\" lait\r\nham,\"x\"y\n")
    write("delimited", "three_columns.tsv",
          bytes([8 * 3 | 32 * 1]) + b"1\tthe text\tlabel\n2\tmore text\tother\n")


def folder_seeds():
    """The first part's first byte is decode_error; each other part is a
    file: its path, a line break, its bytes."""
    files = [f"{label.split('/')[-1]}/{i:04d}.txt\n{text}".encode()
             for label, docs in (("computers", fortunes("computers", 3)),
                                 ("de", fortunes("de/wusstensie", 2)),
                                 ("science", fortunes("science", 3)))
             for i, text in enumerate(docs)]
    write("folder", "fortunes", SEPARATOR.join([b"\0"] + files))
    write("folder", "hidden_and_root_files",
          SEPARATOR.join([b"\0", b".hidden/a\nx", b"top.txt\nignored", b"c/.b\ny"] + files[:2]))
    write("folder", "not_utf8_replace", SEPARATOR.join([b"\2", b"a/1\ncaf\xe9", b"b/1\nok"]))
    write("folder", "class_name_not_utf8", SEPARATOR.join([b"\0", b"caf\xe9/1\ntext"]))
    write("folder", "nested_folder", SEPARATOR.join([b"\0", b"a/b/c\ntext", b"a/d\nok"]))


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
    fasttext_seeds()
    delimited_seeds()
    folder_seeds()
    total = sum(f.stat().st_size for f in CORPUS.rglob("*") if f.is_file())
    count = sum(1 for f in CORPUS.rglob("*") if f.is_file())
    print(f"{count} seeds, {total} bytes in {CORPUS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
