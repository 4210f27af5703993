#!/usr/bin/python3
"""How accurate is bagel with its defaults? Compares, on each data set of
scripts/make_bench_data.py:

  * bagel defaults: a config naming only `train` and `output`, which is what a
    new user writes, so whatever the defaults of the binary are at run time
    (--config-extra KEY=VALUE adds --set overrides to this run only, to try
    candidate defaults without rebuilding);
  * the best point of a small grid of bagel settings (GRID below), chosen on
    the valid split's accuracy and reported on test;
  * LIBLINEAR -s 0 -c 1 -B 1 (L2-regularised logistic regression, solved to
    convergence: the level SGD should reach);
  * scikit-learn's SGDClassifier(loss="log_loss") with its defaults.

Every model is scored on the same test split: accuracy, log loss, training
seconds. A test split of a few thousand rows moves by half a point with the
shuffle seed alone, so the defaults, the grid's chosen point and
SGDClassifier are also trained at --extra-seeds (LIBLINEAR is deterministic):
the table gives the mean test accuracy and log loss over the seeds, with the
range, and the median seconds; the differences are between the means. The
grid point is chosen at bagel's default seed (42) only. Writes OUT/defaults.md (a Markdown table, also printed),
OUT/defaults.csv, OUT/results.json and one folder per set with every run's
config, stderr and metrics (and grid.csv, all grid points).

Normally run through scripts/bench_defaults.sh, which installs the packages,
builds bagel and makes the data first.
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import itertools
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import scipy.sparse as sp

ROOT = Path(__file__).resolve().parent.parent

# The grid: every combination of these optimizer settings, with GRID_FIXED.
# Rates are absolute, so the range is wide: tf-idf and hashed rows have norm
# 1, count rows norms in the tens. The linear schedule tolerates large rates
# (README §3), which is why the grid uses it.
GRID = {
    "learning_rate": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3],
    "l2": [0, 1e-6, 1e-5, 1e-4],
    "epochs": [5, 20],
}
# threads 1: grid points run JOBS at a time, one core each.
GRID_FIXED = {"schedule": "linear", "threads": 1}
# --quick: enough to exercise the code path, not to find the best setting.
QUICK_GRID = {"learning_rate": [0.01, 0.3], "l2": [0], "epochs": [5]}
# Sets on which --quick skips the grid and LIBLINEAR: 2^20 features, 140k
# training rows each; LIBLINEAR alone took 4 min on the 20-class one.
GENERATED_PREFIX = "gen-"

LIBLINEAR_ARGS = ["-s", "0", "-c", "1", "-B", "1"]
DIVERGENCE = re.compile("diverg", re.IGNORECASE)


# ----------------------------------------------------------------------------
# Data
# ----------------------------------------------------------------------------

class DataSet:
    def __init__(self, folder: Path):
        self.folder = folder
        self.name = folder.name
        self.info = json.loads((folder / "info.json").read_text())

    def path(self, part: str, ext: str) -> Path:
        return self.folder / f"{part}.{ext}"

    def labels(self, part: str) -> list[str]:
        return self.path(part, "labels").read_text(encoding="utf-8").split("\n")[:-1]

    @property
    def rows(self) -> int:
        return sum(self.info[p]["rows"] for p in ("train", "valid", "test"))


# ----------------------------------------------------------------------------
# bagel
# ----------------------------------------------------------------------------

def run_logged(cmd: list[str], stderr_path: Path, cpu: list[float] | None = None) -> tuple[int, float]:
    """Runs cmd with stderr to a file and stdout discarded; (status, wall s).
    Appends its CPU seconds (user + system, of this child alone: runs may
    overlap in --jobs) to `cpu` when given."""
    t0 = time.perf_counter()
    with open(stderr_path, "w") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    return proc.returncode, time.perf_counter() - t0


def first_error(stderr_path: Path) -> str:
    lines = [l for l in stderr_path.read_text(errors="replace").splitlines() if "error" in l.lower()]
    return lines[0].strip() if lines else ""


def bagel_run(bagel: str, data: DataSet, folder: Path, overrides: list[str],
              eval_parts: tuple[str, ...], keep_model: bool) -> dict:
    """Trains with a config naming only train and output, plus --set
    overrides, then scores the model on eval_parts with `bagel predict`."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    config = {"train": {"features": str(data.path("train", "npz").resolve()),
                        "labels": str(data.path("train", "labels").resolve())},
              "output": "model"}
    (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    cmd = [bagel, "train", "--config", str(folder / "config.json")]
    for o in overrides:
        cmd += ["--set", o]
    (folder / "command.txt").write_text(shlex.join(cmd) + "\n")
    cpu: list[float] = []
    rc, wall = run_logged(cmd, folder / "train.stderr", cpu)
    stderr = (folder / "train.stderr").read_text(errors="replace")
    res = {"status": "ok", "overrides": overrides, "train_wall_s": wall, "train_cpu_s": cpu[0],
           "divergence_warning": bool(DIVERGENCE.search(stderr))}
    model = folder / "model"
    if rc != 0 or not (model / "model.json").exists():
        res.update(status="failed", error=first_error(folder / "train.stderr") or f"exit status {rc}")
        return res
    meta = json.loads((model / "model.json").read_text())
    res["train_s"] = meta["training"]["train_seconds"]
    res["epochs_run"] = meta["training"].get("epochs_run")
    res["optimizer"] = meta["config"]["optimizer"]
    for part in eval_parts:
        mpath = folder / f"{part}-metrics.json"
        prc, _ = run_logged([bagel, "predict", "--model", str(model), "--input", str(data.path(part, "npz")),
                             "--labels", str(data.path(part, "labels")), "--metrics", str(mpath)],
                            folder / f"predict-{part}.stderr")
        if prc != 0:
            res.update(status="failed", error=first_error(folder / f"predict-{part}.stderr")
                       or f"predict exit status {prc}")
            return res
        m = json.loads(mpath.read_text())
        res[f"{part}_accuracy"] = m["accuracy"]
        res[f"{part}_log_loss"] = m["log_loss"]
    if not keep_model:
        # The 2^20-feature, 20-class weights are 80 MB a model; the metrics,
        # model.json (history, resolved config) and stderr stay.
        for f in ("weight.npy", "bias.npy"):
            (model / f).unlink(missing_ok=True)
    return res


def grid_points(grid: dict) -> list[dict]:
    keys = list(grid)
    return [dict(zip(keys, vals)) for vals in itertools.product(*(grid[k] for k in keys))]


def point_tag(point: dict) -> str:
    return "_".join(f"{k}={v}" for k, v in point.items())


def point_label(point: dict) -> str:
    short = {"learning_rate": "lr", "epochs": "ep"}
    return " ".join(f"{short.get(k, k)}={v:g}" if isinstance(v, (int, float)) else f"{short.get(k, k)}={v}"
                    for k, v in {**point, **{k: v for k, v in GRID_FIXED.items() if k != "threads"}}.items())


def run_grid(bagel: str, data: DataSet, folder: Path, grid: dict, jobs: int, keep_models: bool,
             resume: bool) -> tuple[dict | None, list[dict]]:
    points = grid_points(grid)

    def one(point: dict) -> dict:
        sub = folder / point_tag(point)
        done = sub / "result.json"
        if resume and done.exists():
            return json.loads(done.read_text())
        overrides = [f"optimizer.{k}={json.dumps(v)}" for k, v in {**point, **GRID_FIXED}.items()]
        res = bagel_run(bagel, data, sub, overrides, ("valid", "test"), keep_models)
        res["point"] = point
        done.write_text(json.dumps(res, indent=2) + "\n")
        return res

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, points))
    ok = [r for r in results if r["status"] == "ok"]
    # Chosen on valid: accuracy first, valid log loss breaks ties.
    best = min(ok, key=lambda r: (-r["valid_accuracy"], r["valid_log_loss"])) if ok else None
    with open(folder / "grid.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow([*grid, "status", "divergence_warning", "valid_accuracy", "valid_log_loss",
                    "test_accuracy", "test_log_loss", "train_s", "error"])
        for r in results:
            w.writerow([*(r["point"][k] for k in grid), r["status"], r["divergence_warning"],
                        r.get("valid_accuracy", ""), r.get("valid_log_loss", ""), r.get("test_accuracy", ""),
                        r.get("test_log_loss", ""), r.get("train_s", ""), r.get("error", "")])
    return best, results


# ----------------------------------------------------------------------------
# Peers
# ----------------------------------------------------------------------------

def class_ids(data: DataSet) -> tuple[list[str], dict[str, np.ndarray]]:
    classes = sorted(set(data.labels("train")))
    index = {c: i for i, c in enumerate(classes)}
    return classes, {p: np.array([index[c] for c in data.labels(p)]) for p in ("train", "test")}


def scores(y: np.ndarray, proba: np.ndarray, pred: np.ndarray, k: int) -> dict:
    from sklearn.metrics import accuracy_score, log_loss
    # float64 probabilities: sklearn then clips at DBL_EPSILON, as bagel does.
    return {"test_accuracy": float(accuracy_score(y, pred)),
            "test_log_loss": float(log_loss(y, proba.astype(np.float64), labels=list(range(k))))}


def run_liblinear(data: DataSet, folder: Path) -> dict:
    from sklearn.datasets import dump_svmlight_file
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    classes, y = class_ids(data)
    for part in ("train", "test"):
        x = sp.load_npz(data.path(part, "npz")).tocsr()
        dump_svmlight_file(x, y[part], folder / f"{part}.svm", zero_based=False)
    model = folder / "model.txt"
    cmd = ["liblinear-train", *LIBLINEAR_ARGS, str(folder / "train.svm"), str(model)]
    (folder / "command.txt").write_text(shlex.join(cmd) + "\n")
    # Wall clock of the whole command: it includes parsing the svmlight text,
    # which bagel's train_seconds (from the loaded matrix) does not.
    rc, wall = run_logged(cmd, folder / "train.stderr")
    res = {"status": "ok", "train_s": wall}
    if rc != 0:
        return {**res, "status": "failed", "error": f"liblinear-train exit status {rc}"}
    out = folder / "test.pred"
    rc, _ = run_logged(["liblinear-predict", "-b", "1", str(folder / "test.svm"), str(model), str(out)],
                       folder / "predict.stderr")
    if rc != 0:
        return {**res, "status": "failed", "error": f"liblinear-predict exit status {rc}"}
    lines = out.read_text().split("\n")
    order = [int(c) for c in lines[0].split()[1:]]  # "labels 1 0 2 ...": LIBLINEAR's column order
    body = np.loadtxt(lines[1:], ndmin=2)
    proba = np.zeros((body.shape[0], len(classes)))
    proba[:, order] = body[:, 1:]
    for f in ("train.svm", "test.svm", "model.txt", "test.pred"):
        (folder / f).unlink()  # large and reproducible
    return {**res, **scores(y["test"], proba, body[:, 0].astype(int), len(classes))}


def run_sgd(data: DataSet, seed: int = 0) -> dict:
    import warnings
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier
    classes, y = class_ids(data)
    xtr = sp.load_npz(data.path("train", "npz")).tocsr()
    xte = sp.load_npz(data.path("test", "npz")).tocsr()
    clf = SGDClassifier(loss="log_loss", random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        clf.fit(xtr, y["train"])
        fit_s = time.perf_counter() - t0
    proba = np.zeros((xte.shape[0], len(classes)))
    proba[:, clf.classes_] = clf.predict_proba(xte)
    return {"status": "ok", "train_s": fit_s, "n_iter": int(np.max(clf.n_iter_)),
            **scores(y["test"], proba, clf.predict(xte), len(classes))}


# ----------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------

def fmt(v, spec: str) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)


def points_diff(a: dict | None, b: dict | None) -> float | None:
    if not a or not b or a.get("status") != "ok" or b.get("status") != "ok":
        return None
    return 100.0 * (a["test_accuracy"] - b["test_accuracy"])


def over_seeds(runs: list[dict]) -> dict:
    """The runs of one setting at several seeds as one result: mean test
    accuracy and log loss, their range, the median seconds. The first run
    (the default seed) stands for them all when any failed."""
    runs = [r for r in runs if r]
    if not runs or any(r.get("status") != "ok" for r in runs):
        return next((r for r in runs if r.get("status") != "ok"), {})
    acc = [r["test_accuracy"] for r in runs]
    return {**runs[0], "test_accuracy": float(np.mean(acc)),
            "test_log_loss": float(np.mean([r["test_log_loss"] for r in runs])),
            "train_s": float(np.median([r["train_s"] for r in runs])),
            "acc_min": min(acc), "acc_max": max(acc), "acc_first": acc[0], "seeds": len(runs),
            "divergence_warning": any(r.get("divergence_warning") for r in runs)}


COLUMNS = ["set", "rows", "features", "kind", "classes", "seeds",
           "defaults_acc", "defaults_acc_min", "defaults_acc_max", "defaults_acc_seed42",
           "defaults_log_loss", "defaults_s", "defaults_status",
           "grid_acc", "grid_acc_min", "grid_acc_max", "grid_acc_seed42",
           "grid_log_loss", "grid_s", "grid_setting", "grid_valid_acc",
           "liblinear_acc", "liblinear_log_loss", "liblinear_s",
           "sgd_acc", "sgd_acc_min", "sgd_acc_max", "sgd_log_loss", "sgd_s",
           "defaults_minus_grid_pts", "defaults_minus_liblinear_pts"]


def summary_row(data: DataSet, r: dict) -> dict:
    d = over_seeds([r.get("defaults"), *r.get("defaults_seeds", [])])
    g = over_seeds([r.get("grid_best"), *r.get("grid_best_seeds", [])])
    s = over_seeds([r.get("sgd"), *r.get("sgd_seeds", [])])
    l = r.get("liblinear") or {}

    def ok(x, key):
        return x.get(key) if x.get("status") == "ok" else None

    status = d.get("status", "")
    if d.get("divergence_warning"):
        status += " (divergence warning)"
    if d.get("status") == "failed":
        status += ": " + d.get("error", "")
    return {"set": data.name, "rows": data.rows, "features": data.info["features"], "kind": data.info["kind"],
            "classes": len(data.info["classes"]), "seeds": d.get("seeds", 1),
            "defaults_acc": ok(d, "test_accuracy"), "defaults_acc_min": ok(d, "acc_min"),
            "defaults_acc_max": ok(d, "acc_max"), "defaults_acc_seed42": ok(d, "acc_first"),
            "defaults_log_loss": ok(d, "test_log_loss"),
            "defaults_s": ok(d, "train_s"), "defaults_status": status,
            "grid_acc": ok(g, "test_accuracy"), "grid_acc_min": ok(g, "acc_min"),
            "grid_acc_max": ok(g, "acc_max"), "grid_acc_seed42": ok(g, "acc_first"),
            "grid_log_loss": ok(g, "test_log_loss"),
            "grid_s": ok(g, "train_s"), "grid_setting": point_label(g["point"]) if g.get("point") else "",
            "grid_valid_acc": ok(g, "valid_accuracy"),
            "liblinear_acc": ok(l, "test_accuracy"), "liblinear_log_loss": ok(l, "test_log_loss"),
            "liblinear_s": ok(l, "train_s"),
            "sgd_acc": ok(s, "test_accuracy"), "sgd_acc_min": ok(s, "acc_min"), "sgd_acc_max": ok(s, "acc_max"),
            "sgd_log_loss": ok(s, "test_log_loss"), "sgd_s": ok(s, "train_s"),
            "defaults_minus_grid_pts": points_diff(d, g), "defaults_minus_liblinear_pts": points_diff(d, l)}


def markdown(rows: list[dict]) -> str:
    head = ["data set", "rows", "features", "kind", "classes",
            "defaults acc", "defaults log loss", "defaults s",
            "best grid acc", "best grid log loss", "best grid setting",
            "LIBLINEAR acc", "LIBLINEAR log loss", "LIBLINEAR s",
            "SGDClassifier acc", "SGDClassifier log loss", "SGDClassifier s",
            "defaults − grid (pts)", "defaults − LIBLINEAR (pts)"]
    lines = ["| " + " | ".join(head) + " |",
             "|" + "|".join(["---"] * 4 + ["---:"] * 6 + ["---"] + ["---:"] * 8) + "|"]
    def spread(r: dict, key: str) -> str:
        lo, hi = r.get(key + "_min"), r.get(key + "_max")
        return "" if lo is None or hi is None or lo == hi else f" ({lo:.4f}–{hi:.4f})"

    for r in rows:
        acc = fmt(r["defaults_acc"], ".4f") + spread(r, "defaults_acc")
        # The whole error is in the notes under the table and in the CSV.
        marks = [m for m, on in (("failed", r["defaults_status"].startswith("failed")),
                                 ("divergence warning", "divergence" in r["defaults_status"])) if on]
        if marks:
            acc = (acc + " " if acc else "") + f"({', '.join(marks)})"
        cells = [r["set"], f"{r['rows']:,}", f"{r['features']:,}", r["kind"], str(r["classes"]),
                 acc, fmt(r["defaults_log_loss"], ".4f"), fmt(r["defaults_s"], ".3g"),
                 fmt(r["grid_acc"], ".4f") + spread(r, "grid_acc"), fmt(r["grid_log_loss"], ".4f"),
                 r["grid_setting"],
                 fmt(r["liblinear_acc"], ".4f"), fmt(r["liblinear_log_loss"], ".4f"), fmt(r["liblinear_s"], ".3g"),
                 fmt(r["sgd_acc"], ".4f") + spread(r, "sgd_acc"), fmt(r["sgd_log_loss"], ".4f"),
                 fmt(r["sgd_s"], ".3g"),
                 fmt(r["defaults_minus_grid_pts"], "+.2f"), fmt(r["defaults_minus_liblinear_pts"], "+.2f")]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def git_describe() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "unknown"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_report(out: Path, rows: list[dict], results: dict, header: dict) -> str:
    with open(out / "defaults.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if v is None else v) for k, v in r.items()})
    (out / "results.json").write_text(json.dumps({"run": header, "sets": results}, indent=2, default=str) + "\n")
    opt = header.get("bagel_defaults_optimizer") or {}
    shown = ", ".join(f"{k}={json.dumps(opt[k])}" for k in
                      ("learning_rate", "schedule", "epochs", "l2", "l1", "batch_size", "average", "threads")
                      if k in opt)
    text = ["# bagel with its defaults against a grid, LIBLINEAR and SGDClassifier", "",
            f"- run: {header['started']} to {header['finished']} ({header['minutes']:.1f} min), "
            f"`{header['cmdline']}`",
            f"- bagel: `{header['bagel']}` ({header['bagel_version']}, source {header['source']}); "
            f"defaults run with a config of `train` and `output` only"
            + (", plus " + ", ".join(f"`--set {s}`" for s in header["config_extra"]) if header["config_extra"]
               else ""),
            f"- bagel's resolved optimizer settings in that run: {shown or 'unknown (no defaults run succeeded)'}",
            f"- grid ({len(grid_points(header['grid']))} points, best on valid accuracy, reported on test): "
            + ", ".join(f"{k} in {v}" for k, v in header["grid"].items())
            + ", " + ", ".join(f"{k}={v}" for k, v in GRID_FIXED.items())
            + ("" if not header["grid_skipped"] else f"; skipped on {', '.join(header['grid_skipped'])}"),
            f"- LIBLINEAR: `liblinear-train {' '.join(LIBLINEAR_ARGS)}`, probabilities from "
            f"`liblinear-predict -b 1`; seconds are the wall clock of liblinear-train, parsing included"
            + ("" if not header["liblinear_skipped"] else f"; skipped on {', '.join(header['liblinear_skipped'])}"),
            f"- seeds: bagel's default (42) and {', '.join(map(str, header['extra_seeds'])) or 'no other'} "
            "(`--set optimizer.seed=N`) for the defaults and the grid's chosen point, random_state 0 and the "
            "same for SGDClassifier: accuracy and log loss are means over the seeds (range in brackets), "
            "seconds medians",
            "- SGDClassifier(loss=\"log_loss\"), all else scikit-learn "
            f"{header['sklearn']} defaults; seconds of fit()",
            "- bagel seconds: `training.train_seconds` of model.json (loading excluded)",
            f"- machine: {header['cpu']}, {header['cores']} cores (shared; timings are indicative)",
            "- rows: train + valid + test (70/10/20); accuracy and log loss on test; "
            "differences in accuracy points", "", ""]
    notes = []
    for name, r in results.items():
        d = r.get("defaults") or {}
        if d.get("status") == "failed":
            notes.append(f"- {name}: the defaults run failed: {d.get('error', '')}")
        elif d.get("divergence_warning"):
            notes.append(f"- {name}: the defaults run warned of divergence (see {name}/defaults/train.stderr)")
        if r.get("grid_failed") or r.get("grid_divergence_warnings"):
            notes.append(f"- {name}: grid points failed: {r.get('grid_failed', 0)}, with a divergence warning: "
                         f"{r.get('grid_divergence_warnings', 0)} (see {name}/grid/grid.csv)")
    return "\n".join(text) + markdown(rows) + ("\n" + "\n".join(notes) + "\n" if notes else "")


# ----------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "runs" / "bench-data",
                    help="folder of scripts/make_bench_data.py's sets")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-defaults")
    ap.add_argument("--bagel", default=str(ROOT / "build" / "bagel"), help="bagel binary")
    ap.add_argument("--sets", default="", help="comma-separated subset of the sets in --data")
    ap.add_argument("--config-extra", action="append", default=[], metavar="KEY=VALUE",
                    help="--set passed to the defaults run only (repeatable), e.g. optimizer.epochs=10")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke run: grid {QUICK_GRID}; on the generated sets no grid and no LIBLINEAR")
    ap.add_argument("--jobs", type=int, default=2, help="grid points trained at once (one thread each)")
    ap.add_argument("--no-grid", action="store_true")
    ap.add_argument("--no-peers", action="store_true", help="skip LIBLINEAR and SGDClassifier")
    ap.add_argument("--extra-seeds", default="1,2", metavar="N,N",
                    help="shuffle seeds besides bagel's default 42 for the defaults, the grid's chosen point "
                         "and SGDClassifier (default 1,2; '' for none)")
    ap.add_argument("--keep-models", action="store_true", help="keep weight.npy of every run")
    ap.add_argument("--resume", action="store_true",
                    help="reuse grid points already in --out (same binary and data assumed)")
    ap.add_argument("--cmdline", default="", help=argparse.SUPPRESS)
    a = ap.parse_args()

    bagel = shutil.which(a.bagel) or a.bagel
    if not (os.path.isfile(bagel) and os.access(bagel, os.X_OK)):
        ap.error(f"--bagel {a.bagel}: not an executable")
    available = sorted(p.parent.name for p in a.data.glob("*/info.json"))
    names = [s for s in a.sets.split(",") if s] or available
    missing = [s for s in names if s not in available]
    if not names or missing:
        ap.error(f"no data set {', '.join(missing) or 'at all'} in {a.data} "
                 "(run scripts/make_bench_data.py)")
    # Real sets first, small to large, so that a problem shows early.
    sets = sorted((DataSet(a.data / n) for n in names),
                  key=lambda d: (d.name.startswith(GENERATED_PREFIX), d.rows))
    grid = QUICK_GRID if a.quick else GRID
    try:
        extra_seeds = [int(n) for n in a.extra_seeds.split(",") if n.strip()]
    except ValueError:
        ap.error(f"--extra-seeds {a.extra_seeds!r}: expected comma-separated integers")
    a.out.mkdir(parents=True, exist_ok=True)

    import sklearn
    version = subprocess.run([bagel, "--version"], capture_output=True, text=True).stdout.strip()
    started = _dt.datetime.now()
    header = {"started": started.isoformat(timespec="seconds"), "bagel": bagel, "bagel_version": version,
              "source": git_describe(), "config_extra": a.config_extra, "grid": grid,
              "grid_fixed": GRID_FIXED, "extra_seeds": extra_seeds, "sklearn": sklearn.__version__, "cpu": cpu_model(),
              "cores": os.cpu_count(), "cmdline": a.cmdline or shlex.join(sys.argv),
              "grid_skipped": [], "liblinear_skipped": [], "bagel_defaults_optimizer": None}
    results, rows = {}, []
    for data in sets:
        folder = a.out / data.name
        folder.mkdir(exist_ok=True)
        r = {"info": data.info}
        t0 = time.perf_counter()
        print(f"== {data.name}: {data.rows:,} rows, {data.info['features']:,} features, {data.info['kind']}, "
              f"{len(data.info['classes'])} classes", file=sys.stderr, flush=True)
        # The timed runs go one at a time, the grid (timings not compared) 2 at once.
        r["defaults"] = bagel_run(bagel, data, folder / "defaults", [*a.config_extra], ("test",),
                                  a.keep_models)
        if r["defaults"]["status"] == "ok" and header["bagel_defaults_optimizer"] is None:
            header["bagel_defaults_optimizer"] = r["defaults"]["optimizer"]
        print(f"   defaults: {short(r['defaults'])}", file=sys.stderr, flush=True)
        r["defaults_seeds"] = [bagel_run(bagel, data, folder / f"defaults-seed{n}",
                                         [*a.config_extra, f"optimizer.seed={n}"], ("test",), False)
                               for n in extra_seeds]
        for n, run in zip(extra_seeds, r["defaults_seeds"]):
            print(f"   defaults, seed {n}: {short(run)}", file=sys.stderr, flush=True)
        if not a.no_peers:
            if a.quick and data.name.startswith(GENERATED_PREFIX):
                header["liblinear_skipped"].append(data.name)
            else:
                r["liblinear"] = run_liblinear(data, folder / "liblinear")
                print(f"   LIBLINEAR: {short(r['liblinear'])}", file=sys.stderr, flush=True)
            r["sgd"] = run_sgd(data)
            print(f"   SGDClassifier: {short(r['sgd'])}", file=sys.stderr, flush=True)
            r["sgd_seeds"] = [run_sgd(data, n) for n in extra_seeds]
            for n, run in zip(extra_seeds, r["sgd_seeds"]):
                print(f"   SGDClassifier, random_state {n}: {short(run)}", file=sys.stderr, flush=True)
        if a.no_grid or (a.quick and data.name.startswith(GENERATED_PREFIX)):
            header["grid_skipped"].append(data.name)
        else:
            best, points = run_grid(bagel, data, folder / "grid", grid, a.jobs, a.keep_models, a.resume)
            r["grid_best"] = best
            if best:
                point = [f"optimizer.{k}={json.dumps(v)}" for k, v in {**best["point"], **GRID_FIXED}.items()]
                r["grid_best_seeds"] = [bagel_run(bagel, data, folder / "grid-best" / f"seed{n}",
                                                  [*point, f"optimizer.seed={n}"], ("test",), False)
                                        for n in extra_seeds]
            r["grid_failed"] = sum(p["status"] != "ok" for p in points)
            r["grid_divergence_warnings"] = sum(p["divergence_warning"] for p in points)
            print(f"   best of {len(points)} grid points ({r['grid_failed']} failed): "
                  f"{point_label(best['point']) if best else '-'}: {short(best)}", file=sys.stderr, flush=True)
        r["seconds"] = time.perf_counter() - t0
        results[data.name] = r
        rows.append(summary_row(data, r))
        # Rewritten after each set, so that a long run shows its progress.
        finished = _dt.datetime.now()
        header.update(finished=finished.isoformat(timespec="seconds"),
                      minutes=(finished - started).total_seconds() / 60)
        text = write_report(a.out, rows, results, header)
        (a.out / "defaults.md").write_text(text)
    print(text)
    print(f"wrote {a.out / 'defaults.md'} and defaults.csv ({header['minutes']:.1f} min)", file=sys.stderr)
    return 0


def short(r: dict | None) -> str:
    if not r:
        return "-"
    if r["status"] != "ok":
        return f"FAILED: {r.get('error', '')}"
    s = f"test acc {r['test_accuracy']:.4f}, log loss {r['test_log_loss']:.4f}, {r['train_s']:.2f} s"
    return s + (" (divergence warning)" if r.get("divergence_warning") else "")


if __name__ == "__main__":
    sys.exit(main())
