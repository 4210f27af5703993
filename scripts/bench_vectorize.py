#!/usr/bin/python3
"""bagel vectorize against scikit-learn's CountVectorizer().fit_transform on
the same text: a corpus of at least 50 MB built from text Debian ships
(fortunes, and the plain and gzipped text under /usr/share/doc), one document
per line. Runs are interleaved (sklearn, bagel 1 thread, bagel 2 threads, ...)
and repeated; the table gives the best of each. Before timing, bagel's output
is checked to be the very matrix and vocabulary scikit-learn makes.

    scripts/bench_vectorize.py [--bagel build/bagel] [--mb 50] [--repeats 3]
        [--threads 1,2] [--corpus FILE]

--corpus times the given file instead (one document per line, UTF-8), for a
machine without Debian's text.

bagel's time is the whole command (reading the file, vectorizing, writing
the .npz); scikit-learn's is fit_transform on the lines already in memory.
Both wall-clock and CPU seconds (user + system) are given: on a shared
machine the wall clock also counts the time other work held the cores.
"""

import argparse
import gzip
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.feature_extraction.text import CountVectorizer


def debian_text():
    for path in sorted(Path("/usr/share/games/fortunes").rglob("*")):
        if path.is_file() and not path.suffix:
            yield path.read_bytes()
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        try:
            if path.is_symlink() or not path.is_file():
                continue
            if path.suffix == ".gz":
                yield gzip.decompress(path.read_bytes())
            elif path.suffix in ("", ".txt", ".md") or path.name == "copyright":
                yield path.read_bytes()
        except (OSError, EOFError, gzip.BadGzipFile):
            continue


def build_corpus(target_bytes):
    lines = []
    for blob in debian_text():
        for raw in blob.split(b"\n"):
            raw = raw.rstrip(b"\r")
            if raw.strip() and raw != b"%":
                try:
                    lines.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    pass
    # The first lines that make up the size asked for, the whole repeated if short.
    corpus, size = [], 0
    while size < target_bytes:
        for line in lines:
            corpus.append(line)
            size += len(line.encode()) + 1
            if size >= target_bytes:
                break
    return corpus


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_bagel(bagel, path, out, threads):
    """(wall seconds, CPU seconds) of one bagel vectorize."""
    start, cpu = time.perf_counter(), children_cpu()
    proc = subprocess.run([bagel, "vectorize", "-q", "-i", path, "-o", out, "--threads", str(threads),
                           "--vocabulary-out", str(out) + ".vocab"], capture_output=True, text=True)
    elapsed = time.perf_counter() - start, children_cpu() - cpu
    if proc.returncode != 0:
        sys.exit(proc.stderr)
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bagel", default=os.environ.get("BAGEL", "build/bagel"))
    parser.add_argument("--mb", type=float, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", default="1,2", help="bagel's thread counts, comma-separated")
    parser.add_argument("--corpus", type=Path, help="one document per line, instead of Debian's text")
    args = parser.parse_args()
    counts = [int(t) for t in args.threads.split(",")]

    if args.corpus:
        docs = args.corpus.read_text(encoding="utf-8").split("\n")
        if docs and docs[-1] == "":
            docs.pop()
        source = args.corpus.name
    else:
        docs = build_corpus(int(args.mb * 1e6))
        source = "fortunes + /usr/share/doc"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "corpus.txt"
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
        megabytes = path.stat().st_size / 1e6
        out = Path(tmp) / "x.npz"
        best = {key: (float("inf"), float("inf")) for key in ("sklearn", *counts)}
        for repeat in range(args.repeats):
            start, cpu = time.perf_counter(), time.process_time()
            vectorizer = CountVectorizer()
            theirs = vectorizer.fit_transform(docs)
            best["sklearn"] = min(best["sklearn"], (time.perf_counter() - start, time.process_time() - cpu))
            for threads in counts:
                best[threads] = min(best[threads], run_bagel(args.bagel, path, out, threads))
                if repeat == 0:
                    ours = sp.load_npz(out)
                    vocabulary = (str(out) + ".vocab")
                    same = (ours.dtype == theirs.dtype and np.array_equal(ours.indptr, theirs.indptr)
                            and np.array_equal(ours.indices, theirs.indices)
                            and np.array_equal(ours.data, theirs.data)
                            and Path(vocabulary).read_text("utf-8").split("\n")[:-1]
                            == [t.replace("\\", "\\\\") for t in vectorizer.get_feature_names_out()])
                    if not same:
                        sys.exit(f"bagel's matrix differs from scikit-learn's ({threads} threads)")
            del theirs

    print(f"corpus: {len(docs):,} lines, {megabytes:.1f} MB ({source}); "
          f"{len(vectorizer.vocabulary_):,} terms; outputs identical; best of {args.repeats}; "
          f"scikit-learn {sklearn.__version__}, {os.cpu_count()} cores")
    print(f"| {'tool':<34} | {'wall s':>7} | {'rows/s':>10} | {'MB/s':>6} | {'speed-up':>8} "
          f"| {'CPU s':>6} | {'CPU speed-up':>12} |")
    print(f"|{'-' * 36}|{'-' * 9}|{'-' * 12}|{'-' * 8}|{'-' * 10}|{'-' * 8}|{'-' * 14}|")
    base_wall, base_cpu = best["sklearn"]
    for name, key in (("CountVectorizer().fit_transform", "sklearn"),
                      *((f"bagel vectorize --threads {t}", t) for t in counts)):
        wall, cpu = best[key]
        print(f"| {name:<34} | {wall:7.2f} | {len(docs) / wall:10,.0f} | {megabytes / wall:6.1f} "
              f"| {base_wall / wall:7.1f}x | {cpu:6.2f} | {base_cpu / cpu:11.1f}x |")


if __name__ == "__main__":
    main()
