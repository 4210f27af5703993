#!/usr/bin/env python3
"""Benchmarks bagel against its peers on the same data, in the same run.

Peers: scikit-learn SGDClassifier, LIBLINEAR (-s 0), PyTorch EmbeddingBag
(two update rules) and fastText (supervised). Datasets: the shipped fortunes
examples and a generated set (``bagel generate``, one binary, one 20-class),
split into train/test rows with scipy so that both halves share the labelling
model.

Every timed command runs under ``/usr/bin/time -v`` (peak RSS) and is repeated;
the repeats are interleaved across tools so that load on a shared machine hits
every tool alike. Metrics are computed here, with sklearn.metrics, from each
tool's own test-set probabilities.

Normally run through scripts/bench_peers.sh, which installs the peers and
builds bagel first. ``bench_peers.py worker-sklearn|worker-torch ...`` are the
internal per-run workers.
"""
from __future__ import annotations

import argparse
import csv
import datetime as _dt
import hashlib
import json
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent
TIME = "/usr/bin/time"
SKIP_EXIT = 3  # a worker's "estimated over the time limit, not run" exit status
PROBE_SECONDS = 3.0  # PyTorch: steps timed before extrapolating the training time


# ----------------------------------------------------------------------------
# Workers (run as separate processes, so that each is timed from process start)
# ----------------------------------------------------------------------------

def _load_split(npz_path: str, y_path: str):
    x = sp.load_npz(npz_path).tocsr()
    y = np.load(y_path)
    return x, y


def worker_sklearn(a) -> int:
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier

    t0 = time.perf_counter()
    xtr, ytr = _load_split(a.train, a.ytrain)
    xte, _ = _load_split(a.test, a.ytest)
    load_s = time.perf_counter() - t0
    clf = SGDClassifier(loss="log_loss", penalty="l2", alpha=a.l2, learning_rate="constant",
                        eta0=a.lr, max_iter=a.epochs, tol=None, shuffle=True,
                        random_state=a.seed, n_jobs=a.threads, average=a.average)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t1 = time.perf_counter()
        clf.fit(xtr, ytr)
        fit_s = time.perf_counter() - t1
    t2 = time.perf_counter()
    part = clf.predict_proba(xte)
    proba = np.zeros((xte.shape[0], a.classes))
    proba[:, clf.classes_.astype(int)] = part
    predict_s = time.perf_counter() - t2
    np.save(a.proba_out, proba)
    with open(a.report, "w") as f:
        json.dump({"train_seconds": fit_s, "load_seconds": load_s, "predict_seconds": predict_s,
                   "n_iter": int(np.max(clf.n_iter_))}, f)
    return 0


def worker_torch(a) -> int:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(a.threads)
    t0 = time.perf_counter()
    xtr, ytr = _load_split(a.train, a.ytrain)
    xte, _ = _load_split(a.test, a.ytest)
    load_s = time.perf_counter() - t0
    n = xtr.shape[0]
    nfeat = max(xtr.shape[1], xte.shape[1])
    k = a.classes
    out = 1 if k == 2 else k
    sparse = a.variant == "sparse"
    torch.manual_seed(a.seed)
    emb = nn.EmbeddingBag(nfeat, out, mode="sum", sparse=sparse)
    nn.init.zeros_(emb.weight)  # bagel starts from zeros too
    bias = nn.Parameter(torch.zeros(out))
    lr, l2, bsz = a.lr, a.l2, a.batch
    if sparse:
        # torch.optim.SGD refuses weight_decay with sparse gradients (add(sparse,
        # dense)), so L2 is applied exactly but lazily: effective weight = s * W,
        # each step s *= (1 - lr*l2) and W's step size is rescaled to match.
        opt_w = torch.optim.SGD([emb.weight], lr=lr)
        opt_b = torch.optim.SGD([bias], lr=lr)
    else:
        opt = torch.optim.SGD([{"params": [emb.weight], "weight_decay": l2},
                               {"params": [bias], "weight_decay": 0.0}], lr=lr)
    scale = 1.0
    decay = 1.0 - lr * l2
    y_all = ytr.astype(np.int64)
    rng = np.random.default_rng(a.seed)
    steps_per_epoch = (n + bsz - 1) // bsz
    total_steps = steps_per_epoch * a.epochs
    step = 0
    estimate_s = None
    t_train = time.perf_counter()
    t_probe = None
    for _epoch in range(a.epochs):
        perm = rng.permutation(n)
        xp = xtr[perm]
        ind = torch.from_numpy(xp.indices.astype(np.int64))
        val = torch.from_numpy(xp.data.astype(np.float32))
        ip = xp.indptr.astype(np.int64)
        ipt = torch.from_numpy(ip)
        yp = torch.from_numpy(y_all[perm])
        for s in range(0, n, bsz):
            e = min(s + bsz, n)
            a0, a1 = int(ip[s]), int(ip[e])
            z = emb(ind[a0:a1], ipt[s:e] - a0, per_sample_weights=val[a0:a1])
            if sparse and scale != 1.0:
                z = z * scale
            z = z + bias
            if out == 1:
                loss = F.binary_cross_entropy_with_logits(z[:, 0], yp[s:e].to(torch.float32))
            else:
                loss = F.cross_entropy(z, yp[s:e])
            loss.backward()
            if sparse:
                new_scale = scale * decay
                opt_w.param_groups[0]["lr"] = lr / (new_scale * scale)
                opt_w.step()
                opt_b.step()
                emb.weight.grad = None
                bias.grad = None
                scale = new_scale
                if scale < 1e-3:
                    with torch.no_grad():
                        emb.weight.mul_(scale)
                    scale = 1.0
            else:
                opt.step()
                opt.zero_grad(set_to_none=True)
            step += 1
            # Probe: after a warm-up, extrapolate; give up early past the limit.
            if step == 20:
                t_probe = time.perf_counter()
            if t_probe is not None and estimate_s is None and step >= 20 and (
                    step == total_steps or time.perf_counter() - t_probe > PROBE_SECONDS):
                per_step = (time.perf_counter() - t_probe) / max(1, step - 20)
                estimate_s = (time.perf_counter() - t_train) + per_step * (total_steps - step)
                if a.max_seconds > 0 and estimate_s > a.max_seconds:
                    with open(a.report, "w") as f:
                        json.dump({"skipped": True, "estimate_seconds": estimate_s,
                                   "steps": total_steps, "load_seconds": load_s}, f)
                    return SKIP_EXIT
    if sparse and scale != 1.0:
        with torch.no_grad():
            emb.weight.mul_(scale)
    train_s = time.perf_counter() - t_train
    t2 = time.perf_counter()
    probs = []
    ind = torch.from_numpy(xte.indices.astype(np.int64))
    val = torch.from_numpy(xte.data.astype(np.float32))
    ip = xte.indptr.astype(np.int64)
    ipt = torch.from_numpy(ip)
    with torch.no_grad():
        for s in range(0, xte.shape[0], 65536):
            e = min(s + 65536, xte.shape[0])
            a0, a1 = int(ip[s]), int(ip[e])
            z = emb(ind[a0:a1], ipt[s:e] - a0, per_sample_weights=val[a0:a1]) + bias
            if out == 1:
                p1 = torch.sigmoid(z[:, 0].double())
                probs.append(torch.stack([1 - p1, p1], dim=1).numpy())
            else:
                probs.append(torch.softmax(z.double(), dim=1).numpy())
    proba = np.concatenate(probs) if probs else np.zeros((0, k))
    predict_s = time.perf_counter() - t2
    np.save(a.proba_out, proba)
    with open(a.report, "w") as f:
        json.dump({"train_seconds": train_s, "load_seconds": load_s, "predict_seconds": predict_s,
                   "steps": total_steps, "estimate_seconds": estimate_s}, f)
    return 0


# ----------------------------------------------------------------------------
# Running and timing commands
# ----------------------------------------------------------------------------

class RunError(RuntimeError):
    pass


@dataclass
class Proc:
    wall: float
    user: float
    sys: float
    rss_kib: int
    rc: int
    timed_out: bool = False
    estimate: float | None = None  # set when stopped early on a watcher's estimate


class Watch:
    """Reads a tool's progress output while it runs and estimates its total
    time, so that a tool that would blow the time limit is stopped early."""

    def estimate(self, line: str, elapsed: float) -> float | None:
        return None


class FastTextWatch(Watch):
    # "Progress:  12.3% words/sec/thread: ..." (carriage-return updates), which
    # starts once the input is read; extrapolate from the training part only.
    def __init__(self):
        self.first: tuple[float, float] | None = None  # (elapsed, percent) at the first update
        self.read_done: float | None = None   # "Number of labels: K": input read
        self.train_done: float | None = None  # "Progress: 100.0%": before saving .bin/.vec

    def estimate(self, line, elapsed):
        if line.startswith("Number of labels"):
            self.read_done = elapsed
        m = re.search(r"Progress:\s*([\d.]+)%", line)
        if not m:
            return None
        done = float(m.group(1))
        if done >= 100.0 and self.train_done is None:
            self.train_done = elapsed
        if self.first is None:
            self.first = (elapsed, done)
            return None
        t0, d0 = self.first
        if elapsed - t0 < 10.0 or done - d0 < 1.0:
            return None
        return elapsed + (elapsed - t0) * (100.0 - done) / (done - d0)


class LiblinearWatch(Watch):
    # One-vs-rest trains one class after another, each starting at "iter  1".
    def __init__(self, classes: int):
        self.classes = classes
        self.starts: list[float] = []

    def estimate(self, line, elapsed):
        if self.classes <= 2 or not re.match(r"iter\s+1\s", line):
            return None
        self.starts.append(elapsed)
        if len(self.starts) < 2:
            return None
        per_class = (self.starts[-1] - self.starts[0]) / (len(self.starts) - 1)
        return self.starts[0] + (self.classes - 1) * per_class


def timed(cmd: list, log: Path, timeout: float, threads: int, cwd: Path | None = None,
          ok_codes: tuple[int, ...] = (0,), watch: Watch | None = None) -> Proc:
    """Runs cmd under /usr/bin/time -v; the log gets its output (progress-bar
    updates dropped). Stops it past `timeout` seconds, or as soon as `watch`
    estimates it will take longer than that."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    fd, time_file = tempfile.mkstemp(prefix="bench-time-", suffix=".txt")
    os.close(fd)
    full = [TIME, "-v", "-o", time_file] + [str(c) for c in cmd]
    estimate = None
    with open(log, "ab") as lf:
        lf.write(("$ " + shlex.join([str(c) for c in cmd]) + "\n").encode())
        lf.flush()
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=cwd,
                             env=env, start_new_session=True)
        state = {"estimate": None, "last_progress": b""}

        def reader():
            buf = b""
            while True:
                chunk = p.stdout.read1(65536)
                if not chunk:
                    break
                buf += chunk
                parts = re.split(rb"[\r\n]", buf)
                buf = parts.pop()
                for part in parts:
                    if part.startswith(b"Progress:"):
                        state["last_progress"] = part
                    elif part.strip():
                        lf.write(part + b"\n")
                    if watch is not None:
                        est = watch.estimate(part.decode(errors="replace"),
                                             time.perf_counter() - t0)
                        if est is not None:
                            state["estimate"] = est
            if buf.strip():
                lf.write(buf + b"\n")
            if state["last_progress"]:
                lf.write(state["last_progress"] + b"\n")

        import threading
        th = threading.Thread(target=reader, daemon=True)
        th.start()
        killed = False
        while True:
            try:
                rc = p.wait(timeout=0.2)
                break
            except subprocess.TimeoutExpired:
                elapsed = time.perf_counter() - t0
                est = state["estimate"]
                over_est = est is not None and timeout > 0 and est > timeout
                if (timeout > 0 and elapsed > timeout) or over_est:
                    os.killpg(p.pid, signal.SIGKILL)  # our own child's process group
                    p.wait()
                    killed = True
                    estimate = est if over_est else None
                    rc = -9
                    break
        th.join(timeout=5)
        wall = time.perf_counter() - t0
        lf.flush()
    text = Path(time_file).read_text(errors="replace")
    os.unlink(time_file)
    if killed:
        return Proc(wall, 0, 0, 0, rc, timed_out=True, estimate=estimate)

    def grab(pattern: str, cast=float, default=0):
        m = re.search(pattern, text)
        return cast(m.group(1)) if m else default

    proc = Proc(wall, grab(r"User time \(seconds\): ([\d.]+)"),
                grab(r"System time \(seconds\): ([\d.]+)"),
                grab(r"Maximum resident set size \(kbytes\): (\d+)", int), rc)
    if rc not in ok_codes:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-15:])
        raise RunError(f"command failed (exit {rc}): {shlex.join([str(c) for c in cmd])}\n"
                       f"--- last lines of {log} ---\n{tail}")
    return proc


def run_plain(cmd: list[str], what: str, cwd: Path | None = None) -> None:
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RunError(f"{what} failed (exit {p.returncode}): {shlex.join([str(c) for c in cmd])}\n"
                       f"{p.stderr.strip()[-2000:]}")


# ----------------------------------------------------------------------------
# Data preparation
# ----------------------------------------------------------------------------

@dataclass
class Dataset:
    name: str
    dir: Path
    source: str
    classes: list[str]
    n_train: int
    n_test: int
    features: int
    nnz_train: int
    nnz_test: int
    lr: float
    l2: float
    big: bool
    repeats: int = 0

    def p(self, name: str) -> Path:
        return self.dir / name


def class_order(labels: list[str]) -> list[str]:
    uniq = sorted(set(labels))
    try:
        return sorted(uniq, key=lambda s: (float(s), s))
    except ValueError:
        return uniq


def safe_label(name: str) -> str:
    return re.sub(r"\s", "_", name)


def write_fasttext(x: sp.csr_matrix, y: np.ndarray, tokens: list[str], classes: list[str],
                   path: Path) -> None:
    """One line per row: each column's token repeated by its count, in column
    order, then "__label__<class>". Vectorised over chunks of rows."""
    x = x.tocsr()
    x.sort_indices()
    counts = np.rint(x.data).astype(np.int64)
    if np.any(counts < 0) or np.any(np.abs(x.data - counts) > 1e-6):
        raise RunError(f"{path}: fastText input needs non-negative integer counts")
    nf = len(tokens)
    # Byte table: feature tokens (+ ' '), then labels (+ '\n').
    entries = [t.encode() + b" " for t in tokens] + \
              [b"__label__" + safe_label(c).encode() + b"\n" for c in classes]
    lens = np.array([len(e) for e in entries], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    table = np.frombuffer(b"".join(entries), dtype=np.uint8)
    rows = x.shape[0]
    with open(path, "wb") as f:
        chunk = 20000
        for r0 in range(0, rows, chunk):
            r1 = min(rows, r0 + chunk)
            a0, a1 = x.indptr[r0], x.indptr[r1]
            cols = x.indices[a0:a1].astype(np.int64)
            reps = counts[a0:a1]
            row_of_nz = np.repeat(np.arange(r0, r1), np.diff(x.indptr[r0:r1 + 1]))
            tok = np.repeat(cols, reps)
            tok_row = np.repeat(row_of_nz, reps)
            # Append each row's label token after its words (stable merge by row).
            lab = nf + y[r0:r1].astype(np.int64)
            ids = np.concatenate([tok, lab])
            key = np.concatenate([tok_row * 2, np.arange(r0, r1) * 2 + 1])
            ids = ids[np.argsort(key, kind="stable")]
            l = lens[ids]
            total = int(l.sum())
            base = np.repeat(starts[ids] - (np.cumsum(l) - l), l)
            f.write(table[base + np.arange(total)].tobytes())


def write_common(ds: Dataset, xtr, ytr_names: list[str], xte, yte_names: list[str],
                 tokens: list[str] | None, bagel: Path) -> None:
    """Writes the int-coded labels, svmlight files and fastText text."""
    classes = ds.classes
    index = {c: i for i, c in enumerate(classes)}
    ytr = np.array([index[v] for v in ytr_names], dtype=np.int64)
    yte = np.array([index.get(v, -1) for v in yte_names], dtype=np.int64)
    if np.any(yte < 0):
        raise RunError(f"{ds.name}: the test labels hold classes not in the training labels")
    np.save(ds.p("y_train.npy"), ytr)
    np.save(ds.p("y_test.npy"), yte)
    ds.p("train.ids").write_text("".join(f"{v}\n" for v in ytr))
    ds.p("test.ids").write_text("".join(f"{v}\n" for v in yte))
    for split in ("train", "test"):
        run_plain([bagel, "convert", ds.p(f"{split}.npz"), ds.p(f"{split}.svm"),
                   "--labels", ds.p(f"{split}.ids"), "--one-based"], f"bagel convert ({split})")
    if tokens is None:
        tokens = [f"f{j}" for j in range(ds.features)]
    tokens = [re.sub(r"\s", "_", t) or "_" for t in tokens]
    write_fasttext(xtr, ytr, tokens, classes, ds.p("train.txt"))
    write_fasttext(xte, yte, tokens, classes, ds.p("test.txt"))


def finish_dataset(ds: Dataset, stamp: dict) -> Dataset:
    meta = {"stamp": stamp, "classes": ds.classes, "n_train": ds.n_train, "n_test": ds.n_test,
            "features": ds.features, "nnz_train": ds.nnz_train, "nnz_test": ds.nnz_test,
            "source": ds.source}
    ds.p("meta.json").write_text(json.dumps(meta, indent=1))
    return ds


def cached(dir_: Path, stamp: dict) -> dict | None:
    meta = dir_ / "meta.json"
    if not meta.exists():
        return None
    m = json.loads(meta.read_text())
    return m if m.get("stamp") == stamp else None


def prepare_fortunes(name: str, out: Path, bagel: Path, lr: float, l2: float) -> Dataset:
    src = ROOT / "data" / name
    for f in ("train.npz", "train.labels", "test.npz", "test.labels", "vocab.txt"):
        if not (src / f).exists():
            raise RunError(f"missing {src / f} (the shipped example data)")
    d = out / name
    stamp = {"kind": "fortunes", "mtimes": [int((src / f).stat().st_mtime) for f in
                                            ("train.npz", "test.npz", "train.labels",
                                             "test.labels", "vocab.txt")], "v": 2}
    m = cached(d, stamp)
    if m is None:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        for f in ("train.npz", "train.labels", "test.npz", "test.labels"):
            shutil.copyfile(src / f, d / f)
        xtr = sp.load_npz(d / "train.npz").tocsr()
        xte = sp.load_npz(d / "test.npz").tocsr()
        ytr = (d / "train.labels").read_text().split("\n")[:xtr.shape[0]]
        yte = (d / "test.labels").read_text().split("\n")[:xte.shape[0]]
        tokens = (src / "vocab.txt").read_text().split("\n")[:xtr.shape[1]]
        ds = Dataset(name, d, f"data/{name} (shipped)", class_order(ytr), xtr.shape[0],
                     xte.shape[0], xtr.shape[1], xtr.nnz, xte.nnz, lr, l2, False)
        write_common(ds, xtr, ytr, xte, yte, tokens, bagel)
        finish_dataset(ds, stamp)
        m = cached(d, stamp)
    return Dataset(name, d, m["source"], m["classes"], m["n_train"], m["n_test"], m["features"],
                   m["nnz_train"], m["nnz_test"], lr, l2, False)


def prepare_generated(name: str, out: Path, bagel: Path, rows: int, features: int,
                      nnz_per_row: float, classes: int, test_rows: int, seed: int, lr: float,
                      l2: float, big: bool, version: str = "") -> Dataset:
    d = out / name
    stamp = {"kind": "generated", "rows": rows, "features": features, "nnz_per_row": nnz_per_row,
             "classes": classes, "test_rows": test_rows, "seed": seed, "bagel": version, "v": 2}
    m = cached(d, stamp)
    if m is None:
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
        print(f"  generating {name}: {rows} rows, {features} features, {classes} classes ...",
              flush=True)
        run_plain([bagel, "generate", d / "all.npz", "--labels-out", d / "all.labels",
                   "--rows", rows, "--features", features, "--nnz-per-row", nnz_per_row,
                   "--classes", classes, "--seed", seed], "bagel generate")
        x = sp.load_npz(d / "all.npz").tocsr()
        y = (d / "all.labels").read_text().split("\n")[:rows]
        perm = np.random.default_rng(seed).permutation(rows)
        tr, te = np.sort(perm[test_rows:]), np.sort(perm[:test_rows])
        xtr, xte = x[tr], x[te]
        ytr, yte = [y[i] for i in tr], [y[i] for i in te]
        del x
        sp.save_npz(d / "train.npz", xtr, compressed=False)
        sp.save_npz(d / "test.npz", xte, compressed=False)
        (d / "train.labels").write_text("".join(v + "\n" for v in ytr))
        (d / "test.labels").write_text("".join(v + "\n" for v in yte))
        (d / "all.npz").unlink()
        (d / "all.labels").unlink()
        ds = Dataset(name, d, f"bagel generate --rows {rows} --features {features} "
                     f"--nnz-per-row {nnz_per_row:g} --classes {classes} --seed {seed}; "
                     f"random row split {rows - test_rows}/{test_rows}",
                     class_order(ytr), xtr.shape[0], xte.shape[0], features, xtr.nnz, xte.nnz,
                     lr, l2, big)
        write_common(ds, xtr, ytr, xte, yte, None, bagel)
        finish_dataset(ds, stamp)
        m = cached(d, stamp)
    return Dataset(name, d, m["source"], m["classes"], m["n_train"], m["n_test"], m["features"],
                   m["nnz_train"], m["nnz_test"], lr, l2, big)


# ----------------------------------------------------------------------------
# Tools
# ----------------------------------------------------------------------------

@dataclass
class Config:
    tool: str           # label in the table
    kind: str           # bagel | sklearn | liblinear | torch | fasttext
    threads: int
    batch: int | None   # None: not an SGD mini-batch method
    epochs: int | None  # None: no epochs (batch solver)
    lr: float | None = None
    variant: str = ""
    runs: list = field(default_factory=list)
    skipped: str = ""
    weight_sha: str = ""
    train_cpu: list = field(default_factory=list)
    cost: float = 0.0       # seconds one run took here (tool + scoring)
    budget_note: str = ""

    @property
    def key(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "-", f"{self.tool}-t{self.threads}-b{self.batch}").strip("-")


def read_proba_csv(path: Path, classes: list[str]) -> np.ndarray:
    with open(path) as f:
        header = f.readline().rstrip("\n").split(",")
    data = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    index = {c: i for i, c in enumerate(classes)}
    out = np.zeros((data.shape[0], len(classes)))
    for j, name in enumerate(header):
        out[:, index[name]] = data[:, j]
    return out


def read_liblinear(path: Path, k: int) -> np.ndarray:
    with open(path) as f:
        header = f.readline().split()
        if not header or header[0] != "labels":
            raise RunError(f"{path}: expected a 'labels ...' header (liblinear-predict -b 1)")
        cols = [int(float(v)) for v in header[1:]]
        data = np.loadtxt(f, ndmin=2)
    out = np.zeros((data.shape[0], k))
    for j, c in enumerate(cols):
        out[:, c] = data[:, 1 + j]
    return out


def read_fasttext(path: Path, classes: list[str]) -> np.ndarray:
    index = {"__label__" + safe_label(c): i for i, c in enumerate(classes)}
    lines = path.read_text().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = np.zeros((len(lines), len(classes)))
    for r, line in enumerate(lines):
        parts = line.split()
        for j in range(0, len(parts) - 1, 2):
            out[r, index[parts[j]]] = float(parts[j + 1])
    return out


def score(proba: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.metrics import accuracy_score, log_loss
    if proba.shape[0] != y.shape[0]:
        raise RunError(f"got {proba.shape[0]} prediction rows for {y.shape[0]} test rows")
    p = np.clip(proba, 1e-15, 1.0)
    p = p / p.sum(axis=1, keepdims=True)
    acc = accuracy_score(y, np.argmax(p, axis=1))
    ll = log_loss(y, p, labels=list(range(p.shape[1])))
    return float(acc), float(ll)


def run_once(cfg: Config, ds: Dataset, a, work: Path, bagel: Path, seed: int) -> dict | None:
    """One repetition with its own seed: train, predict the test split, score.
    Returns a record, or None (and sets cfg.skipped) when the tool is over the
    time limit."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    log = work / "log.txt"
    k = len(ds.classes)
    y = np.load(ds.p("y_test.npy"))
    procs: list[Proc] = []
    rec: dict = {}
    limit = a.timeout
    me = [sys.executable, str(Path(__file__).resolve())]

    def stopped(proc: Proc, what: str) -> None:
        if proc.estimate is not None:
            cfg.skipped = (f"skipped: {what} was stopped after {proc.wall:.0f} s, its progress "
                           f"extrapolating to {proc.estimate:.0f} s (> {limit:.0f} s)")
        else:
            cfg.skipped = f"skipped: {what} ran past the {limit:.0f} s limit and was stopped"
        return None
    if cfg.kind == "bagel":
        conf = {"train": {"features": str(ds.p("train.npz")), "labels": str(ds.p("train.labels"))},
                "model": {"layer": "sparse"},
                "optimizer": {"epochs": cfg.epochs, "learning_rate": cfg.lr,
                              "schedule": "constant", "batch_size": cfg.batch, "l2": ds.l2,
                              "l1": 0.0, "seed": seed, "shuffle": True,
                              "threads": cfg.threads},
                "output": str(work / "model")}
        if cfg.variant == "sgd-average":  # averaged SGD (optimizer.average)
            conf["optimizer"]["average"] = True
        elif cfg.variant == "sgd-average-late":  # the mean of the last two epochs only
            conf["optimizer"].update({"average": True, "average_from": max(1, cfg.epochs - 1)})
        elif cfg.variant == "linear":  # the rate decays linearly to ~0 over the run
            conf["optimizer"]["schedule"] = "linear"
        elif cfg.variant == "average-linear":  # averaging replicas, linear schedule
            conf["optimizer"].update({"schedule": "linear", "deterministic": True,
                                      "deterministic_method": "average"})
        elif cfg.variant:  # "average" or "exact": the deterministic parallel modes
            conf["optimizer"].update({"deterministic": True, "deterministic_method": cfg.variant})
        (work / "config.json").write_text(json.dumps(conf, indent=1))
        pt = timed([bagel, "train", "-c", work / "config.json", "-q"], log, limit, cfg.threads)
        if pt.timed_out:
            return stopped(pt, "bagel train")
        mj = json.loads((work / "model" / "model.json").read_text())["training"]
        rec["train_s"] = float(mj["train_seconds"])
        rec["load_s"] = float(mj.get("load_seconds", 0.0))
        cfg.train_cpu.append((pt.user + pt.sys) / max(pt.wall, 1e-9))
        if not cfg.weight_sha:
            cfg.weight_sha = hashlib.sha1((work / "model" / "weight.npy").read_bytes()).hexdigest()
        pp = timed([bagel, "predict", "-m", work / "model", "-i", ds.p("test.npz"),
                    "-l", ds.p("test.labels"), "--proba", "-o", work / "proba.csv",
                    "--metrics", work / "metrics.json", "--threads", cfg.threads, "-q"],
                   log, limit, cfg.threads)
        if pp.timed_out:
            return stopped(pp, "bagel predict")
        procs = [pt, pp]
        proba = read_proba_csv(work / "proba.csv", ds.classes)
        bm = json.loads((work / "metrics.json").read_text())
        rec["bagel_accuracy"] = bm.get("accuracy")
        rec["bagel_log_loss"] = bm.get("log_loss")
    elif cfg.kind in ("sklearn", "torch"):
        cmd = me + [f"worker-{cfg.kind}", "--train", ds.p("train.npz"), "--ytrain",
                    ds.p("y_train.npy"), "--test", ds.p("test.npz"), "--ytest", ds.p("y_test.npy"),
                    "--classes", k, "--epochs", cfg.epochs, "--lr", cfg.lr, "--l2", ds.l2,
                    "--seed", seed, "--threads", cfg.threads, "--proba-out",
                    work / "proba.npy", "--report", work / "report.json"]
        if cfg.kind == "torch":
            cmd += ["--variant", cfg.variant, "--batch", cfg.batch, "--max-seconds", a.timeout]
        if cfg.kind == "sklearn" and cfg.variant == "average":
            cmd += ["--average"]
        p = timed(cmd, log, limit, cfg.threads, ok_codes=(0, SKIP_EXIT))
        if p.timed_out:
            return stopped(p, f"the {cfg.kind} run")
        rep = json.loads((work / "report.json").read_text())
        if p.rc == SKIP_EXIT:
            cfg.skipped = (f"skipped: its first {PROBE_SECONDS:.0f} s of steps extrapolate to "
                           f"{rep['estimate_seconds']:.0f} s of training (> {limit:.0f} s)")
            return None
        rec["train_s"] = rep["train_seconds"]
        rec["load_s"] = rep["load_seconds"]
        procs = [p]
        proba = np.load(work / "proba.npy")
    elif cfg.kind == "liblinear":
        c = 1.0 / (ds.l2 * ds.n_train)
        pt = timed(["liblinear-train", "-s", "0", "-c", f"{c:.10g}", "-B", "1",
                    ds.p("train.svm"), work / "model"], log, limit, cfg.threads,
                   watch=LiblinearWatch(k))
        if pt.timed_out:
            return stopped(pt, "liblinear-train")
        rec["train_s"] = pt.wall
        pp = timed(["liblinear-predict", "-b", "1", "-q", ds.p("test.svm"), work / "model",
                    work / "pred.txt"], log, limit, cfg.threads)
        if pp.timed_out:
            return stopped(pp, "liblinear-predict")
        procs = [pt, pp]
        proba = read_liblinear(work / "pred.txt", k)
    elif cfg.kind == "fasttext":
        fw = FastTextWatch()
        pt = timed(["fasttext", "supervised", "-input", ds.p("train.txt"), "-output",
                    work / "model", "-epoch", cfg.epochs, "-thread", cfg.threads, "-loss",
                    "softmax", "-minCount", "1", "-wordNgrams", "1", "-seed", seed,
                    "-verbose", "2"], log, limit, cfg.threads, watch=fw)
        if pt.timed_out:
            return stopped(pt, "fasttext supervised")
        if fw.read_done is not None and fw.train_done is not None:
            rec["train_s"] = fw.train_done - fw.read_done
            rec["load_s"] = fw.read_done
        else:
            rec["train_s"] = pt.wall
        pp = timed(["sh", "-c", 'exec fasttext predict-prob "$1" "$2" "$3" > "$4"', "sh",
                    work / "model.bin", ds.p("test.txt"), k, work / "pred.txt"],
                   log, limit, cfg.threads)
        if pp.timed_out:
            return stopped(pp, "fasttext predict-prob")
        procs = [pt, pp]
        proba = read_fasttext(work / "pred.txt", ds.classes)
    else:
        raise AssertionError(cfg.kind)
    rec["e2e_s"] = sum(p.wall for p in procs)
    rec["rss_mib"] = max(p.rss_kib for p in procs) / 1024.0
    rec["accuracy"], rec["log_loss"] = score(proba, y)
    if not a.keep:
        for f in work.iterdir():
            if f.name not in ("log.txt", "config.json", "metrics.json", "report.json"):
                shutil.rmtree(f) if f.is_dir() else f.unlink()
    return rec


def configs_for(ds: Dataset, a) -> list[Config]:
    e, lr, b = a.epochs, ds.lr, a.batch
    scale = {"none": 1.0, "sqrt": math.sqrt(b), "linear": float(b)}[a.batch_lr_scaling]
    lrb = lr * scale
    multi = len(ds.classes) > 2
    out = [
        Config("bagel", "bagel", 1, 1, e, lr),
        Config("bagel", "bagel", 2, 1, e, lr),
        Config("bagel", "bagel", 1, b, e, lrb),
        Config("bagel, linear schedule", "bagel", 1, 1, e, lr, "linear"),
        Config("bagel, averaged SGD", "bagel", 1, 1, e, lr, "sgd-average"),
        Config("bagel, averaged SGD, last 2 epochs", "bagel", 1, 1, e, lr, "sgd-average-late"),
        Config("bagel, deterministic average", "bagel", 2, 1, e, lr, "average"),
        # Averaging R replicas moves the model like one thread at rate / R, so
        # the rate is doubled to compare with the one-thread linear row.
        Config("bagel, deterministic average, linear schedule, rate x 2", "bagel", 2, 1, e,
               2 * lr, "average-linear"),
        Config("bagel, deterministic exact", "bagel", 2, b, e, lrb, "exact"),
        Config("sklearn SGDClassifier", "sklearn", 1, 1, e, lr),
        Config("sklearn SGDClassifier, average=True", "sklearn", 1, 1, e, lr, "average"),
    ]
    if multi:
        out.append(Config("sklearn SGDClassifier", "sklearn", 2, 1, e, lr))
    out += [
        Config("LIBLINEAR -s 0", "liblinear", 1, None, None),
        Config("PyTorch EmbeddingBag, sparse grad", "torch", 1, 1, e, lr, "sparse"),
        Config("PyTorch EmbeddingBag, sparse grad", "torch", 1, b, e, lrb, "sparse"),
    ]
    if a.all_configs:
        out += [Config("PyTorch EmbeddingBag, sparse grad", "torch", 2, b, e, lrb, "sparse"),
                Config("PyTorch EmbeddingBag, dense grad", "torch", 1, 1, e, lr, "dense")]
    out += [
        Config("PyTorch EmbeddingBag, dense grad", "torch", 1, b, e, lrb, "dense"),
        Config("fastText", "fasttext", 1, 1, e),
        Config("fastText", "fasttext", 2, 1, e),
    ]
    if a.quick and not a.all_configs:
        # The smoke test: one row per code path, no per-sample PyTorch loop.
        out = [c for c in out if not (c.kind == "torch" and c.batch == 1)
               and not (c.kind in ("fasttext", "sklearn") and c.threads > 1)]
    if a.tools:
        wanted = set(a.tools.split(","))
        unknown = wanted - {"bagel", "sklearn", "liblinear", "torch", "fasttext"}
        if unknown:
            raise RunError(f"--tools: unknown {', '.join(sorted(unknown))}")
        out = [c for c in out if c.kind in wanted]
    return out


# ----------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------

def med(values: list[float]) -> float:
    return statistics.median(values)


def fmt_s(values: list[float]) -> str:
    if not values:
        return "—"
    m = med(values)
    if len(values) == 1:
        return f"{m:.3g}"
    return f"{m:.3g} ({min(values):.3g}–{max(values):.3g})"


def summarise(ds: Dataset, cfg: Config) -> dict:
    runs = cfg.runs
    row = {"dataset": ds.name, "tool": cfg.tool, "threads": cfg.threads,
           "batch": cfg.batch if cfg.batch is not None else "",
           "epochs": cfg.epochs if cfg.epochs is not None else "", "runs": len(runs),
           "status": cfg.skipped or "ok"}
    if not runs:
        return row
    tr = [r["train_s"] for r in runs]
    e2e = [r["e2e_s"] for r in runs]
    row.update({
        "train_s_median": med(tr), "train_s_min": min(tr), "train_s_max": max(tr),
        "e2e_s_median": med(e2e), "e2e_s_min": min(e2e), "e2e_s_max": max(e2e),
        "ns_per_nnz_epoch": (med(tr) * 1e9 / (cfg.epochs * ds.nnz_train)
                             if cfg.epochs else ""),
        "peak_rss_mib": max(r["rss_mib"] for r in runs),
        "test_accuracy": med([r["accuracy"] for r in runs]),
        "test_log_loss": med([r["log_loss"] for r in runs]),
        "test_accuracy_min": min(r["accuracy"] for r in runs),
        "test_accuracy_max": max(r["accuracy"] for r in runs),
        "load_s_median": med([r.get("load_s", 0.0) for r in runs]) if "load_s" in runs[0] else "",
        "train_cpu_util": med(cfg.train_cpu) if cfg.train_cpu else "",
        "learning_rate": cfg.lr if cfg.lr is not None else "",
        "l2": ds.l2,
        "train_s_all": " ".join(f"{v:.4f}" for v in tr),
        "e2e_s_all": " ".join(f"{v:.4f}" for v in e2e),
    })
    return row


def md_table(rows: list[dict], fmt_rows: list[tuple[Config, dict]]) -> str:
    head = ["dataset", "tool", "threads", "batch", "epochs", "runs", "train s median (min–max)",
            "end-to-end s median (min–max)", "ns/nnz/epoch", "peak RSS MiB", "test accuracy",
            "test log loss"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cfg, r in fmt_rows:
        if not cfg.runs:
            cells = [r["dataset"], r["tool"], str(r["threads"]), str(r["batch"]), str(r["epochs"]),
                     "0", cfg.skipped or "not run", "", "", "", "", ""]
        else:
            tr = [x["train_s"] for x in cfg.runs]
            e2e = [x["e2e_s"] for x in cfg.runs]
            ns = r["ns_per_nnz_epoch"]
            cells = [r["dataset"], r["tool"], str(r["threads"]), str(r["batch"]) or "—",
                     str(r["epochs"]) or "—", str(len(cfg.runs)), fmt_s(tr), fmt_s(e2e),
                     f"{ns:.1f}" if ns != "" else "—", f"{r['peak_rss_mib']:.0f}",
                     f"{r['test_accuracy']:.4f}", f"{r['test_log_loss']:.4f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def machine_info() -> dict:
    model = ""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"Model name:\s*(.+)", out)
        model = m.group(1).strip() if m else ""
    except OSError:
        pass
    def pkg(name: str) -> str:
        p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True,
                           text=True)
        return p.stdout.strip() if p.returncode == 0 else "?"
    import sklearn
    try:
        import torch
        torch_v = torch.__version__
    except ImportError:
        torch_v = "missing"
    git = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "python": platform.python_version(), "numpy": np.__version__,
            "scipy": __import__("scipy").__version__, "sklearn": sklearn.__version__,
            "torch": torch_v, "liblinear": pkg("liblinear-tools"), "fasttext": pkg("fasttext"),
            "bagel_git": git + ("+uncommitted" if dirty else "")}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


# ----------------------------------------------------------------------------
# Main
# ----------------------------------------------------------------------------

def main_run(a) -> int:
    t_start = time.perf_counter()
    bagel = Path(a.bagel).resolve()
    if not bagel.exists():
        raise RunError(f"no bagel binary at {bagel} (build it, or pass --bagel)")
    for tool in (TIME, "liblinear-train", "liblinear-predict", "fasttext"):
        if shutil.which(tool) is None:
            raise RunError(f"{tool} not found (scripts/bench_peers.sh installs the peers)")
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    data_dir = out / "data"
    tag = "peers-quick" if a.quick else "peers"
    work_root = out / "work" / tag
    started = _dt.datetime.now().astimezone()
    load_start = loadavg()
    cmdline = a.cmdline or shlex.join(sys.argv)
    rows = a.rows or (6000 if a.quick else 600000)
    test_rows = rows // 6
    if not a.features:
        a.features = (1 << 16) if a.quick else (1 << 20)
    repeats = a.repeats or (2 if a.quick else 3)
    big_repeats = a.big_repeats or (1 if a.quick else 3)
    if not a.timeout:
        a.timeout = 60.0 if a.quick else 300.0
    if not a.budget_minutes:
        a.budget_minutes = 2.0 if a.quick else 25.0
    if rows < 60 or a.features < 1 or a.epochs < 1 or a.batch < 1:
        raise RunError("need --rows >= 60, --features >= 1, --epochs >= 1, --batch >= 1")
    print(f"bench_peers: {tag}, output in {out}", flush=True)

    print("== data", flush=True)
    datasets: list[Dataset] = []
    sets = set(a.datasets.split(",")) if a.datasets else None
    known = {"fortunes-binary", "fortunes-multi", "gen-binary", "gen-20class"}
    if sets is not None and not sets <= known:
        raise RunError(f"--datasets: unknown {', '.join(sorted(sets - known))} "
                       f"(choose from {', '.join(sorted(known))})")
    gen_version = subprocess.run([str(bagel), "--version"], capture_output=True,
                                 text=True).stdout.strip()
    for name in ("fortunes-binary", "fortunes-multi"):
        if sets is None or name in sets:
            datasets.append(prepare_fortunes(name, data_dir, bagel, a.lr_fortunes, a.l2_fortunes))
    for classes in (2, 20):
        name = (f"gen-{'binary' if classes == 2 else str(classes) + 'class'}-"
                f"{rows // 1000}k-{a.features // 1024}kf")
        if sets is None or "-".join(name.split("-")[:2]) in sets or name in sets:
            datasets.append(prepare_generated(name, data_dir, bagel, rows, a.features,
                                              a.nnz_per_row, classes, test_rows, a.seed,
                                              a.lr_generated, a.l2_generated, True,
                                              gen_version))
    for ds in datasets:
        ds.repeats = big_repeats if ds.big else repeats
        print(f"  {ds.name}: train {ds.n_train} x {ds.features}, {ds.nnz_train} nnz "
              f"({ds.nnz_train / max(ds.n_train, 1):.1f}/row); test {ds.n_test}; "
              f"{len(ds.classes)} classes", flush=True)
    if a.prepare_only:
        return 0

    # Phase 1: every configuration once, dataset by dataset. Phase 2: further
    # repeats, round-robin across configurations (so that load on a shared
    # machine hits every tool alike), as far as the time budget allows: the
    # cheapest runs are planned first, and runs of at most --cheap seconds are
    # always done.
    plan_cfgs: list[tuple[Dataset, list[Config]]] = [(ds, configs_for(ds, a)) for ds in datasets]
    all_rows = [(ds, c) for ds, cfgs in plan_cfgs for c in cfgs]
    deadline = t_start + a.budget_minutes * 60.0

    def do_run(ds: Dataset, c: Config, rep: int) -> None:
        work = work_root / ds.name / c.key / f"r{rep}"
        label = f"{c.tool} t{c.threads}" + (f" b{c.batch}" if c.batch else "")
        t0 = time.perf_counter()
        try:
            rec = run_once(c, ds, a, work, bagel, a.seed + rep)
        except RunError as ex:
            if not a.keep_going:
                raise
            c.skipped = f"failed: {str(ex).splitlines()[0][:160]}"
            print(f"  [{rep + 1}/{ds.repeats}] {label}: {c.skipped}", flush=True)
            return
        c.cost = max(c.cost, time.perf_counter() - t0)
        if rec is None:
            if not c.skipped:
                c.skipped = f"skipped: a run exceeded the {a.timeout:.0f} s limit"
            print(f"  [{rep + 1}/{ds.repeats}] {label}: {c.skipped}", flush=True)
            return
        c.runs.append(rec)
        print(f"  [{rep + 1}/{ds.repeats}] {ds.name} | {label}: train {rec['train_s']:.3f}s, "
              f"end-to-end {rec['e2e_s']:.3f}s, acc {rec['accuracy']:.4f}, "
              f"log loss {rec['log_loss']:.4f}, {rec['rss_mib']:.0f} MiB", flush=True)

    for ds, cfgs in plan_cfgs:
        print(f"== {ds.name}: first run of each tool", flush=True)
        for c in cfgs:
            do_run(ds, c, 0)
    # Plan the repeats: cheapest first until the budget is spent.
    candidates = sorted(((c.cost, rep, di, ci) for di, (ds, cfgs) in enumerate(plan_cfgs)
                         for ci, c in enumerate(cfgs) if c.runs and not c.skipped
                         for rep in range(1, ds.repeats)))
    left = deadline - time.perf_counter()
    chosen = set()
    for cost, rep, di, ci in candidates:
        if cost <= a.cheap or cost <= left:
            chosen.add((rep, di, ci))
            left -= cost
    max_rep = max((ds.repeats for ds in datasets), default=1)
    if chosen:
        print(f"== repeats ({len(chosen)} runs planned, "
              f"{max(0.0, deadline - time.perf_counter()) / 60:.1f} min of budget left)", flush=True)
    for rep in range(1, max_rep):
        for di, (ds, cfgs) in enumerate(plan_cfgs):
            for ci, c in enumerate(cfgs):
                if (rep, di, ci) not in chosen or c.skipped:
                    continue
                # Re-check against the clock: estimates drift on a noisy machine.
                if c.cost > a.cheap and time.perf_counter() + c.cost > deadline + 60.0:
                    continue
                do_run(ds, c, rep)
    for ds, cfgs in plan_cfgs:
        for c in cfgs:
            if c.runs and not c.skipped and len(c.runs) < ds.repeats:
                c.budget_note = f"{len(c.runs)} of {ds.repeats} runs (time budget)"

    # -- report ---------------------------------------------------------------
    info = machine_info()
    summaries = [(c, summarise(ds, c)) for ds, c in all_rows]
    notes = build_notes(datasets, all_rows, a, repeats, big_repeats)
    header = [
        f"# bagel vs peers{' (quick)' if a.quick else ''}",
        "",
        f"- date: {started.strftime('%Y-%m-%d %H:%M %Z')} (took "
        f"{(time.perf_counter() - t_start) / 60:.1f} min)",
        f"- machine: {info['nproc']} cores (nproc), {info['cpu']}, Linux {info['kernel']}; "
        f"load average at start {load_start}, at end {loadavg()} (shared machine)",
        f"- command: `{cmdline}`",
        f"- bagel: {bagel} (git {info['bagel_git']}); Python {info['python']}, numpy "
        f"{info['numpy']}, scipy {info['scipy']}, scikit-learn {info['sklearn']}, PyTorch "
        f"{info['torch']}, LIBLINEAR {info['liblinear']}, fastText {info['fasttext']}",
        "",
        "## Datasets",
        "",
        "| dataset | source | train rows | test rows | features | train nnz | nnz/row | classes |"
        " lr (batch 1) | l2 | repeats |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for ds in datasets:
        header.append(f"| {ds.name} | {ds.source} | {ds.n_train} | {ds.n_test} | {ds.features} | "
                      f"{ds.nnz_train} | {ds.nnz_train / max(ds.n_train, 1):.1f} | "
                      f"{len(ds.classes)} | {ds.lr:g} | {ds.l2:g} | {ds.repeats} |")
    table = md_table([r for _, r in summaries], summaries)
    md = "\n".join(header) + "\n\n## Results\n\n" + table + "\n\n## Notes\n\n" + \
        "\n".join(f"- {n}" for n in notes) + "\n"
    md_path = out / f"{tag}.md"
    csv_path = out / f"{tag}.csv"
    md_path.write_text(md)
    keys: list[str] = []
    for _, r in summaries:
        for key in r:
            if key not in keys:
                keys.append(key)
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for _, r in summaries:
            w.writerow(r)
    raw = [{"dataset": ds.name, "tool": c.tool, "kind": c.kind, "threads": c.threads,
            "batch": c.batch, "epochs": c.epochs, "learning_rate": c.lr, "l2": ds.l2,
            "status": c.skipped or "ok", "runs": c.runs} for ds, c in all_rows]
    (out / f"{tag}-runs.json").write_text(json.dumps(raw, indent=1))
    print()
    print(md)
    print(f"wrote {md_path}, {csv_path} and {out / (tag + '-runs.json')} (every run)")
    return 0


def build_notes(datasets: list[Dataset], rows: list[tuple[Dataset, Config]], a, repeats: int,
                big_repeats: int) -> list[str]:
    notes = [
        "Timing: every tool is measured in this same run; repeats are interleaved across tools "
        "(repeat 1 of every tool, then repeat 2, ...). Times are medians with (min–max) over "
        f"the runs column. Run r (0, 1, ...) of every tool uses seed {a.seed} + r, so "
        "accuracy and log loss are medians over seeds (constant-rate SGD ends at a noisy "
        "iterate: on the generated binary set one bagel thread's test accuracy ranged "
        "0.774-0.830 over seeds 1-6), computed with sklearn.metrics from each tool's own test "
        "probabilities (rows renormalised, clipped at 1e-15).",
        "train s: bagel = model.json training.train_seconds (excludes loading; "
        "load_seconds is in the CSV); scikit-learn = SGDClassifier.fit() (includes sklearn's "
        "float32 -> float64 CSR conversion and validation); PyTorch = the training loop "
        "(includes the per-epoch row shuffle); fastText = from the end of reading its input ('Number "
        "of labels' on stderr) to its 'Progress: 100.0%' line, both timestamped live (excludes "
        "reading the text and saving model.bin/model.vec, which end-to-end includes); LIBLINEAR "
        "reports no time, so its train s is the wall time of liblinear-train, which includes "
        "parsing the svmlight text.",
        "end-to-end s: the wall time of every process from its start to test predictions on "
        "disk (bagel: train + predict; LIBLINEAR and fastText: train + predict processes; "
        "scikit-learn and PyTorch: one Python process that loads the .npz, trains and predicts). "
        "Preparing inputs (svmlight files, fastText text) is not timed. Peak RSS is the "
        "largest 'Maximum resident set size' of those processes (/usr/bin/time -v).",
        "ns/nnz/epoch = train s / (epochs x non-zeros of the training CSR); for fastText the "
        "CSR non-zeros are used too, although it reads each count as that many repeated "
        "tokens (plus an end-of-line token); LIBLINEAR is a batch solver with no epochs "
        "(—).",
        "Objective: logistic regression, L2 penalty l2/2 ||w||^2 added to the mean loss, bias "
        "not penalised, weights start at zero, constant learning rate, shuffled each epoch "
        f"(seeds as above). bagel: sigmoid for 2 classes, softmax for more. scikit-learn "
        "SGDClassifier(loss='log_loss', alpha=l2, learning_rate='constant', eta0=lr, "
        "max_iter=epochs, tol=None) is one-vs-rest for more than 2 classes (its probabilities "
        "are the normalised OvR sigmoids); on sparse input it updates the intercept with a "
        "100x smaller step (its SPARSE_INTERCEPT_DECAY = 0.01); its n_jobs parallelises over "
        "classes only, so its 2-thread row appears only for multiclass sets.",
        "LIBLINEAR: liblinear-train -s 0 -B 1 -c C with C = 1/(l2 * n_train), the same "
        "objective up to scaling; it is a batch (trust-region Newton) solver run to its "
        "default tolerance, not SGD; one-vs-rest for more than 2 classes, and its bias "
        "feature is penalised like the weights. Input: svmlight written by `bagel convert "
        "X.npz X.svm --labels y --one-based`.",
        "PyTorch: nn.EmbeddingBag(F, K, mode='sum') with per_sample_weights = CSR data and "
        "offsets from indptr, plus a bias; K = 1 with BCE-with-logits for 2 classes, "
        "cross-entropy otherwise (both the batch mean, like bagel). 'dense grad' is the "
        "textbook torch.optim.SGD(weight_decay=l2 on the weight only): every step touches all "
        "F x K weights. 'sparse grad' uses EmbeddingBag(sparse=True) and torch.optim.SGD on "
        "the sparse gradient; torch.optim.SGD rejects weight_decay with sparse gradients, so "
        "the same L2 decay is applied exactly but lazily (effective weight = s * W, s *= "
        "1 - lr*l2 per step). torch.set_num_threads(threads).",
        "fastText is a different model: it averages learned d=100 word vectors and "
        "applies a softmax classifier on them, with its own linearly decaying learning rate "
        "(default 0.1). It gets the same rows as tokens: each column's token repeated by its "
        "count, in column order (fortunes: the tokens of vocab.txt; generated: 'f<column>'). "
        "Options: defaults except -epoch, -thread, -loss softmax, -minCount 1, -wordNgrams 1 "
        f"(-seed as above). Probabilities from `fasttext predict-prob model.bin test.txt K`. A "
        "reference point, not a like-for-like comparison.",
        f"Batch size: batch 1 is per-sample SGD (what scikit-learn does); batch-{a.batch} "
        f"rows use lr x {a.batch_lr_scaling} scaling ({a.batch_lr_scaling}"
        f"({a.batch}) = "
        f"{ {'none': 1.0, 'sqrt': math.sqrt(a.batch), 'linear': float(a.batch)}[a.batch_lr_scaling]:.3g}"
        "), identical for bagel and PyTorch.",
        "Threads: every process of a T-thread row runs with OMP_NUM_THREADS=T; bagel gets "
        "optimizer.threads=T and predict --threads T. A plain 'bagel' row with 2 threads is "
        "Hogwild (lock-free, nondeterministic). 'deterministic average': replicas train on "
        "halves of each epoch and are averaged at its end (same seed and threads, same "
        "model). 'deterministic exact': each mini-batch split between the threads, the model "
        "bit-identical to one thread at that batch size. bagel caps threads at one per 1000 "
        "training rows, so the fortunes sets train on one thread.",
        "Averaged rows: 'bagel, averaged SGD' sets optimizer.average (the model is the mean of "
        "every step's weights) and 'SGDClassifier, average=True' is scikit-learn's same option; "
        "'last 2 epochs' sets optimizer.average_from to epochs - 1, so the mean covers the last "
        "two epochs' steps only; other settings as the plain rows.",
        "Schedule rows: 'linear schedule' sets optimizer.schedule to linear (the rate falls "
        "from the table's rate to ~0 over the run, as in fastText); every other row keeps the "
        "rate constant. The deterministic-average row with 'rate x 2' starts at twice the "
        "rate: the mean of 2 replicas, each on half the rows, moves the model as far as one "
        "thread at half the rate.",
        f"Repeats: up to {repeats} for the fortunes sets and {big_repeats} for the generated "
        f"sets. Every configuration runs once first; further repeats run round-robin across "
        f"tools, cheapest first, within a {a.budget_minutes:g}-minute budget for the whole "
        f"run (runs of <= {a.cheap:g} s always get all repeats); the runs column says how "
        f"many there were. A tool is skipped on a dataset when one training run would exceed "
        f"{a.timeout:.0f} s: PyTorch extrapolates from its first {PROBE_SECONDS:g} s of steps, "
        "fastText from its progress line, multiclass LIBLINEAR from the time of its first "
        "one-vs-rest class, and stops early; otherwise the run is stopped at the limit.",
    ]
    # bagel threads: does training honour optimizer.threads?
    for ds in datasets:
        b = {(c.threads, c.batch): c for d, c in rows
             if d is ds and c.kind == "bagel" and not c.variant and c.runs}
        c1, c2 = b.get((1, 1)), b.get((2, 1))
        if c1 and c2 and c1.train_cpu and c2.train_cpu:
            same = c1.weight_sha == c2.weight_sha
            u1, u2 = med(c1.train_cpu), med(c2.train_cpu)
            t1 = med([r["train_s"] for r in c1.runs])
            t2 = med([r["train_s"] for r in c2.runs])
            # CPU use (user+sys over wall of the whole train process) only means
            # something when the process runs long enough for the 10 ms ticks.
            long_enough = t1 >= 1.0
            more_cpu = long_enough and u2 > 1.3 * u1 + 0.1
            if not same:
                verdict = "training uses it (the weights differ, as with Hogwild-style threads)"
            elif more_cpu:
                verdict = "training uses more CPU but gives bit-identical weights"
            else:
                verdict = ("training appears to ignore it: bit-identical weights" +
                           (", no extra CPU use" if long_enough else "") +
                           "; predict was given --threads 2")
            notes.append(f"bagel optimizer.threads=2 on {ds.name}: train process CPU use "
                         f"{u2:.2f} cores vs {u1:.2f} at threads=1, weights "
                         f"{'identical' if same else 'different'}, train s {t2:.3g} vs "
                         f"{t1:.3g}: {verdict}.")
    for ds, c in rows:
        if c.skipped:
            notes.append(f"{ds.name}, {c.tool} (threads {c.threads}"
                         f"{f', batch {c.batch}' if c.batch else ''}): {c.skipped}.")
    cut = [f"{ds.name} {c.tool} t{c.threads}{f' b{c.batch}' if c.batch else ''}: "
           f"{c.budget_note}"
           for ds, c in rows if c.budget_note]
    if cut:
        notes.append("Fewer runs than asked, for the time budget: " + "; ".join(cut) + ".")
    return notes


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("run", help="run the benchmark (default)")
    r.add_argument("--quick", action="store_true",
                   help="smoke test: fortunes + a small generated set (6000 rows, 2^16 features), "
                        "fewer repeats and configurations, 60 s limit per tool")
    r.add_argument("--rows", type=int, default=0,
                   help="rows of each generated set, train + test (default 600000; --quick 6000); "
                        "1/6 become the test split")
    r.add_argument("--features", type=int, default=0,
                   help="features of the generated sets (default 2^20; --quick 2^18)")
    r.add_argument("--nnz-per-row", type=float, default=75.0)
    r.add_argument("--repeats", type=int, default=0,
                   help="runs per tool on the fortunes sets (default 3; --quick 2)")
    r.add_argument("--big-repeats", type=int, default=0,
                   help="runs per tool on the generated sets (default 3; --quick 1)")
    r.add_argument("--epochs", type=int, default=5)
    r.add_argument("--batch", type=int, default=32, help="the mini-batch size of the batch rows")
    r.add_argument("--batch-lr-scaling", choices=["none", "sqrt", "linear"], default="sqrt")
    r.add_argument("--lr-fortunes", type=float, default=0.1)
    r.add_argument("--l2-fortunes", type=float, default=1e-4)
    r.add_argument("--lr-generated", type=float, default=0.003)
    r.add_argument("--l2-generated", type=float, default=1e-5)
    r.add_argument("--seed", type=int, default=7)
    r.add_argument("--timeout", type=float, default=0,
                   help="seconds one training may take before the tool is skipped on that set "
                        "(default 300; --quick 60)")
    r.add_argument("--budget-minutes", type=float, default=0,
                   help="time budget: after one run of everything, repeats are added cheapest "
                        "first while they fit (default 25; --quick 2)")
    r.add_argument("--cheap", type=float, default=20.0,
                   help="runs that take at most this many seconds get all their repeats "
                        "whatever the budget")
    r.add_argument("--all-configs", action="store_true",
                   help="also PyTorch with 2 threads and the dense-gradient PyTorch at batch 1")
    r.add_argument("--prepare-only", action="store_true", help="only build the datasets")
    r.add_argument("--datasets", default="", help="comma list: fortunes-binary,fortunes-multi,gen-binary,gen-20class")
    r.add_argument("--tools", default="", help="comma list of: bagel,sklearn,liblinear,torch,fasttext")
    r.add_argument("--bagel", default=str(ROOT / "build" / "bagel"))
    r.add_argument("--out", default=str(ROOT / "runs" / "peers"))
    r.add_argument("--keep", action="store_true", help="keep models and predictions")
    r.add_argument("--keep-going", action="store_true", help="a failing tool is reported, not fatal")
    r.add_argument("--cmdline", default="", help=argparse.SUPPRESS)
    for name in ("worker-sklearn", "worker-torch"):
        w = sub.add_parser(name)
        for opt in ("--train", "--ytrain", "--test", "--ytest", "--proba-out", "--report"):
            w.add_argument(opt, required=True)
        w.add_argument("--classes", type=int, required=True)
        w.add_argument("--epochs", type=int, required=True)
        w.add_argument("--lr", type=float, required=True)
        w.add_argument("--l2", type=float, required=True)
        w.add_argument("--seed", type=int, default=0)
        w.add_argument("--threads", type=int, default=1)
        w.add_argument("--variant", choices=["sparse", "dense"], default="sparse")
        w.add_argument("--batch", type=int, default=1)
        w.add_argument("--max-seconds", type=float, default=0)
        w.add_argument("--average", action="store_true", help="sklearn: average=True")
    if not argv or argv[0] not in ("run", "worker-sklearn", "worker-torch", "-h", "--help"):
        argv = ["run"] + argv
    return p.parse_args(argv)


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    try:
        if a.cmd == "worker-sklearn":
            return worker_sklearn(a)
        if a.cmd == "worker-torch":
            return worker_torch(a)
        return main_run(a)
    except RunError as ex:
        print(f"bench_peers: error: {ex}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
