#!/usr/bin/python3
"""How does bagel scale with threads, with its defaults? On the data sets of
scripts/make_bench_data.py, trains with a config naming only train and output
(plus --set optimizer.threads=N and any --config-extra), for every thread
count, repeated and interleaved (1, 2, ..., 1, 2, ...) so that a noisy
machine affects every count alike, and scores each model on the test split.

Reports per set and thread count: the median training seconds (model.json's
train_seconds: rate calibration and every epoch; loading excluded), the
median of the epochs alone (the training loop), the speedup of both over one
thread, the test accuracy (and its spread over repetitions), and the plan
bagel printed. Writes OUT/threads.md, OUT/threads.csv and OUT/results.json.

--work also reports the work a thread count adds, which a machine with fewer
cores than threads can still measure: the loop's CPU time over the first
thread count's, (loop_1 + cpu_T - cpu_1) / loop_1, where cpu is the user +
system seconds of `bagel train` (so the part outside the loop cancels) and
the first count must be 1. It runs bagel with OMP_WAIT_POLICY=passive, so
that threads waiting at a barrier sleep rather than spin; T / work bounds the
loop's speedup on T free cores.

  scripts/bench_threads.py [--threads 1,2] [--repeat 3] [--sets a,b] [--work]
      [--config-extra KEY=VALUE ...] [--bagel build/bagel]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import DataSet, bagel_run, cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def plan_of(folder: Path) -> str:
    for line in (folder / "train.stderr").read_text(errors="replace").splitlines():
        if line.startswith("plan:"):
            return line[len("plan:"):].strip()
    return ""


def loop_threads(plan: str) -> int:
    """The training loop's threads, from the plan line ("2 threads, ...")."""
    first = plan.split(" ", 1)[0]
    return int(first) if first.isdigit() else 1


def loop_seconds(folder: Path) -> float:
    meta = json.loads((folder / "model" / "model.json").read_text())
    return sum(e["seconds"] for e in meta["training"]["history"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "runs" / "bench-data")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-threads")
    ap.add_argument("--bagel", default=str(ROOT / "build" / "bagel"))
    ap.add_argument("--sets", default="", help="comma-separated subset of the sets in --data")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--config-extra", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--work", action="store_true",
                    help="report the loop's CPU time over one thread's (OMP_WAIT_POLICY=passive)")
    args = ap.parse_args()

    names = [s for s in args.sets.split(",") if s] or sorted(
        p.name for p in args.data.iterdir() if (p / "info.json").exists())
    counts = [int(t) for t in args.threads.split(",")]
    if args.work:
        if counts[0] != 1:
            ap.error("--work needs 1 as the first thread count")
        os.environ["OMP_WAIT_POLICY"] = "passive"  # inherited by every bagel run
    results: dict = {}
    for name in names:
        data = DataSet(args.data / name)
        runs: dict[int, list[dict]] = {t: [] for t in counts}
        for rep in range(args.repeat):
            for t in counts:
                folder = args.out / name / f"t{t}-r{rep}"
                res = bagel_run(args.bagel, data, folder,
                                [f"optimizer.threads={t}", *args.config_extra], ("test",), False)
                if res["status"] != "ok":
                    print(f"{name} threads {t}: {res.get('error')}", file=sys.stderr)
                    return 1
                res["loop_s"] = loop_seconds(folder)
                res["plan"] = plan_of(folder)
                runs[t].append(res)
                print(f"{name} t={t} rep={rep}: {res['train_s']:.3f}s loop {res['loop_s']:.3f}s "
                      f"acc {res['test_accuracy']:.4f}", file=sys.stderr, flush=True)
        results[name] = runs

    rows = []
    for name, runs in results.items():
        base = statistics.median(r["train_s"] for r in runs[counts[0]])
        base_loop = statistics.median(r["loop_s"] for r in runs[counts[0]])
        base_cpu = statistics.median(r["train_cpu_s"] for r in runs[counts[0]])
        for t, rs in runs.items():
            train_s = statistics.median(r["train_s"] for r in rs)
            loop_s = statistics.median(r["loop_s"] for r in rs)
            cpu_s = statistics.median(r["train_cpu_s"] for r in rs)
            accs = [r["test_accuracy"] for r in rs]
            rows.append({"set": name, "threads": t, "train_s": train_s, "loop_s": loop_s,
                         "speedup": base / train_s, "loop_speedup": base_loop / loop_s,
                         "accuracy": statistics.median(accs), "accuracy_spread": max(accs) - min(accs),
                         "cpu_s": cpu_s, "work": (base_loop + cpu_s - base_cpu) / base_loop,
                         "loop_threads": loop_threads(rs[0]["plan"]), "plan": rs[0]["plan"]})
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "threads.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
    lines = [f"{cpu_model()}, {os.cpu_count()} CPUs; median of {args.repeat} interleaved runs; "
             f"extra settings: {' '.join(args.config_extra) or 'none (defaults)'}", "",
             "| set | threads | train s | speedup | loop s | loop speedup | test accuracy |"
             + (" loop work | speedup bound |" if args.work else "") + " plan |",
             "|---|---|---|---|---|---|---|" + ("---|---|" if args.work else "") + "---|"]
    if args.work:
        lines[0] += "; OMP_WAIT_POLICY=passive"
    for r in rows:
        work = (f" {r['work']:.2f}x | {r['loop_threads'] / r['work']:.1f}x |" if args.work else "")
        lines.append(f"| {r['set']} | {r['threads']} | {r['train_s']:.3f} | {r['speedup']:.2f}x | "
                     f"{r['loop_s']:.3f} | {r['loop_speedup']:.2f}x | {100 * r['accuracy']:.2f}% "
                     f"(±{50 * r['accuracy_spread']:.2f}) |{work} {r['plan']} |")
    (args.out / "threads.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
