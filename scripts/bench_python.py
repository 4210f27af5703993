#!/usr/bin/python3
"""BagelClassifier against scikit-learn's SGDClassifier, from Python, both at
their defaults, on a real 20-class bag-of-words set; and the call overhead
of predict_proba on one row.

    PYTHONPATH=build/python /usr/bin/python3 scripts/bench_python.py
        [--data runs/bench-data] [--set fortunes-20] [--repeats 5] [--out runs/bench-python.json]

The set is fortunes-20 (scripts/make_bench_data.py: the 20 largest fortune
categories, CountVectorizer counts, stratified 70/10/20 split); it is built
into --data when missing. Both estimators get the training matrix as
scipy.sparse.load_npz gives it (int64 counts, as CountVectorizer makes them),
so bagel's one conversion to float32 is in its time. Fits alternate (bagel,
sklearn, bagel, ...) so that a busy machine slows both alike; the table
gives the median and range of the repeats, the ratio of the medians, test
accuracy and the passes each made over the data (n_iter_: bagel's epochs;
SGDClassifier's stop on its tol, per class, and n_iter_ is the most of
them), with the ratio of the time a pass. predict_proba on one row is timed
over many calls, for a row as CountVectorizer.transform gives it and for a
float32 row.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.linear_model import SGDClassifier

import bagel

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SET = "fortunes-20"


def load_split(folder: Path, part: str):
    x = sp.load_npz(folder / f"{part}.npz")
    y = np.array((folder / f"{part}.labels").read_text(encoding="utf-8").split("\n")[:-1])
    return x, y


def ensure_set(data: Path, name: str) -> Path:
    folder = data / name
    if not (folder / "info.json").exists():
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_bench_data.py"),
                        "--out", str(data), "--sets", name], check=True)
    return folder


def timed_fit(make, x, y, xte, yte) -> tuple[float, float, int]:
    """Fit seconds, test accuracy and passes over the data (n_iter_:
    SGDClassifier's, the most of its one-vs-rest fits, stops on its tol)."""
    clf = make()
    t0 = time.perf_counter()
    clf.fit(x, y)
    seconds = time.perf_counter() - t0
    return seconds, float(np.mean(clf.predict(xte) == yte)), int(np.max(clf.n_iter_))


def per_call_us(fn, calls: int, repeats: int = 5) -> float:
    """Best of `repeats` means over `calls` calls, in microseconds."""
    return min(timeit.repeat(fn, number=calls, repeat=repeats)) / calls * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "runs" / "bench-data")
    ap.add_argument("--set", default=DEFAULT_SET,
                    help="a set of scripts/make_bench_data.py (default: the 20-class fortunes-20)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-python.json")
    a = ap.parse_args()

    folder = ensure_set(a.data, a.set)
    (xtr, ytr), (xte, yte) = load_split(folder, "train"), load_split(folder, "test")
    print(f"{a.set}: {xtr.shape[0]} train rows, {xte.shape[0]} test rows, {xtr.shape[1]} features, "
          f"{xtr.nnz / xtr.shape[0]:.1f} non-zeros a row, {len(set(ytr))} classes", flush=True)

    makers = {"BagelClassifier()": bagel.BagelClassifier,
              'SGDClassifier(loss="log_loss")': lambda: SGDClassifier(loss="log_loss")}
    runs: dict[str, list[tuple[float, float, int]]] = {k: [] for k in makers}
    for r in range(a.repeats):
        for name, make in makers.items():
            runs[name].append(timed_fit(make, xtr, ytr, xte, yte))
            print(f"  repeat {r + 1}: {name}: {runs[name][-1][0]:.3f} s, "
                  f"accuracy {runs[name][-1][1]:.4f}, {runs[name][-1][2]} passes", flush=True)

    fitted = bagel.BagelClassifier().fit(xtr, ytr)
    t = fitted.training_
    split = {"rate_calibration_seconds": t.get("rate_calibration", {}).get("seconds", 0.0),
             "epochs": t["epochs_run"], "train_seconds": t["train_seconds"],
             "epoch_seconds": sum(h["seconds"] for h in t["history"]),
             "reorder_seconds": t["reorder_seconds"]}
    row = xte[:1]                                   # int64 counts, int32 indices
    row32 = row.astype(np.float32)
    sgd = SGDClassifier(loss="log_loss").fit(xtr, ytr)
    overhead = {
        "bagel, CountVectorizer row (int64 counts)": per_call_us(lambda: fitted.predict_proba(row), 20000),
        "bagel, float32 CSR row": per_call_us(lambda: fitted.predict_proba(row32), 20000),
        "SGDClassifier, CountVectorizer row": per_call_us(lambda: sgd.predict_proba(row), 2000),
    }

    summary = {}
    print()
    print("| estimator (defaults) | fit s, median | range | test accuracy | passes over the data |")
    print("|---|---:|---:|---:|---:|")
    for name, rs in runs.items():
        secs = [s for s, _, _ in rs]
        accs = [acc for _, acc, _ in rs]
        passes = [n for _, _, n in rs]
        summary[name] = {"seconds": secs, "accuracy": accs, "passes": passes,
                         "median_seconds": statistics.median(secs), "median_passes": statistics.median(passes)}
        acc_text = f"{min(accs):.4f}" if min(accs) == max(accs) else f"{min(accs):.4f}–{max(accs):.4f}"
        pass_text = f"{min(passes)}" if min(passes) == max(passes) else f"{min(passes)}–{max(passes)}"
        print(f"| `{name}` | {statistics.median(secs):.3f} | {min(secs):.3f}–{max(secs):.3f} | {acc_text} "
              f"| {pass_text} |")
    names = list(runs)
    ratio = summary[names[1]]["median_seconds"] / summary[names[0]]["median_seconds"]
    # The fit's time over its passes: what a pass costs each, calibration and set-up included.
    per_pass = (summary[names[1]]["median_seconds"] / summary[names[1]]["median_passes"]) / \
        (summary[names[0]]["median_seconds"] / summary[names[0]]["median_passes"])
    print(f"\nBagelClassifier fits {ratio:.1f}x faster (ratio of the medians, {a.repeats} repeats each); "
          f"{per_pass:.1f}x a pass over the data")
    print(f"bagel's train_seconds {split['train_seconds']:.3f}: rate calibration "
          f"{split['rate_calibration_seconds']:.3f}, {split['epochs']} epochs {split['epoch_seconds']:.3f}, "
          f"feature relabelling {split['reorder_seconds']:.3f}")
    print("\n| predict_proba on one row | µs a call |")
    print("|---|---:|")
    for name, us in overhead.items():
        print(f"| {name} | {us:.1f} |")

    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({
        "set": a.set, "info": json.loads((folder / "info.json").read_text()),
        "fits": summary, "speedup": ratio, "speedup_per_pass": per_pass, "bagel_time_split": split,
        "predict_proba_one_row_us": overhead,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "sklearn": sklearn.__version__, "bagel": bagel.__version__},
    }, indent=2) + "\n")
    print(f"\nwritten to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
