#!/usr/bin/python3
"""Is change B faster than A? Trains every set of scripts/make_bench_data.py
with two sides, A and B, alternating which goes first in each repetition (A B,
B A, A B, ...) so that a noisy machine slows both alike, and reports per set
the medians of the training loop (the epochs' seconds in model.json) and of
train_seconds (rate calibration and epochs), their ratio A / B (above 1: B is
faster), in how many repetitions B trained faster, the plan each side ran, and
whether the two models were byte-identical (weight.npy and bias.npy) in every
repetition: a change meant to be a pure speed-up must keep them so.

A side is a bagel binary, --set overrides and environment settings:

  scripts/bench_ab.py --a-bagel /tmp/bagel-before --b-bagel build/bagel --repeat 11
  scripts/bench_ab.py --a-set optimizer.threads=1 --repeat 9 --sets dict-lang,man-section
  scripts/bench_ab.py --b-env OMP_WAIT_POLICY=passive --repeat 7

With --together N each side starts N identical runs at once (several users of
one machine, a shell loop with &) and the report adds the wall time from the
first start to the last end; B faster then counts by that time:

  scripts/bench_ab.py --a-set optimizer.threads=1 --together 2 --repeat 5

On a shared machine the medians of 7 runs of the same binary can differ by
10-20% (data/PERFORMANCE.md): ratios under ~1.1x need many repetitions and a look at the
count of faster runs. Writes OUT/ab.md and OUT/results.json.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import DataSet, cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


class Side:
    def __init__(self, name: str, bagel: str, overrides: list[str], env: list[str]):
        self.name = name
        self.bagel = bagel
        self.overrides = overrides
        self.env = dict(os.environ)
        for setting in env:
            key, sep, value = setting.partition("=")
            if not sep or not key:
                raise SystemExit(f"--{name.lower()}-env: expected NAME=VALUE, got '{setting}'")
            self.env[key] = value

    def describe(self, env: list[str]) -> str:
        parts = [self.bagel] + [f"--set {o}" for o in self.overrides] + env
        return " ".join(parts)

    def start(self, data: DataSet, folder: Path) -> subprocess.Popen:
        """Starts a quiet run into folder/model."""
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        config = {"train": {"features": str(data.path("train", "npz").resolve()),
                            "labels": str(data.path("train", "labels").resolve())},
                  "output": str(folder / "model")}
        (folder / "config.json").write_text(json.dumps(config) + "\n")
        cmd = [self.bagel, "train", "--config", str(folder / "config.json"), "--quiet"]
        for o in self.overrides:
            cmd += ["--set", o]
        return subprocess.Popen(cmd, env=self.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)

    def finish(self, data: DataSet, folder: Path, run: subprocess.Popen) -> dict:
        """Waits for a run; the timings and plan of its model.json."""
        _, stderr = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"{data.name}, side {self.name}: exit status {run.returncode}: "
                             f"{stderr.strip()}")
        training = json.loads((folder / "model" / "model.json").read_text())["training"]
        plan = training.get("plan", {})
        return {"loop_s": sum(e["seconds"] for e in training["history"]),
                "train_s": training["train_seconds"],
                "plan": f"{plan.get('strategy', '?')} x{plan.get('threads', '?')}"
                        + (", ahead" if plan.get("gather_ahead") else "")}

    def train(self, data: DataSet, folder: Path, together: int = 1) -> dict:
        """`together` runs at once, into folder, folder.2, folder.3, ...: the
        first's timings, and wall_s from the first start to the last end."""
        folders = [folder] + [folder.with_name(f"{folder.name}.{i}") for i in range(2, together + 1)]
        t0 = time.perf_counter()
        runs = [self.start(data, f) for f in folders]
        results = [self.finish(data, f, r) for f, r in zip(folders, runs)]
        results[0]["wall_s"] = time.perf_counter() - t0
        return results[0]


def same_model(a: Path, b: Path) -> bool:
    return all(filecmp.cmp(a / "model" / f, b / "model" / f, shallow=False)
               for f in ("weight.npy", "bias.npy"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "runs" / "bench-data")
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-ab")
    ap.add_argument("--sets", default="", help="comma-separated subset of the sets in --data")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--together", type=int, default=1,
                    help="runs of a side started at once (default 1: one at a time)")
    default_bagel = str(ROOT / "build" / "bagel")
    for side in ("a", "b"):
        ap.add_argument(f"--{side}-bagel", default=default_bagel, help=f"side {side.upper()}'s binary")
        ap.add_argument(f"--{side}-set", action="append", default=[], metavar="KEY=VALUE",
                        help=f"a config override for side {side.upper()} (bagel train --set)")
        ap.add_argument(f"--{side}-env", action="append", default=[], metavar="NAME=VALUE",
                        help=f"an environment setting for side {side.upper()}")
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat: expected at least 1")
    if args.together < 1:
        ap.error("--together: expected at least 1")
    if not args.data.is_dir():
        ap.error(f"--data {args.data}: no such folder (scripts/make_bench_data.py builds it)")

    sides = [Side("A", args.a_bagel, args.a_set, args.a_env),
             Side("B", args.b_bagel, args.b_set, args.b_env)]
    names = [s for s in args.sets.split(",") if s] or sorted(
        p.name for p in args.data.iterdir() if (p / "info.json").exists())
    results: dict = {}
    for rep in range(args.repeat):
        order = sides if rep % 2 == 0 else sides[::-1]
        for name in names:
            data = DataSet(args.data / name)
            got = results.setdefault(name, {"A": [], "B": [], "identical": []})
            for side in order:
                folder = args.out / name / side.name
                got[side.name].append(side.train(data, folder, args.together))
            got["identical"].append(same_model(args.out / name / "A", args.out / name / "B"))
            a, b = got["A"][-1], got["B"][-1]
            print(f"{name} rep {rep}: A {a['train_s']:.3f}s B {b['train_s']:.3f}s", file=sys.stderr,
                  flush=True)

    together = args.together > 1
    by = "wall_s" if together else "train_s"
    lines = [f"{cpu_model()}, {os.cpu_count()} CPUs; medians of {args.repeat} runs, A and B alternating"
             + (f", {args.together} runs of a side at once" if together else ""),
             f"- A: {sides[0].describe(args.a_env)}",
             f"- B: {sides[1].describe(args.b_env)}", "",
             "| set | loop s, A / B | A / B | train s, A / B | A / B | "
             + (f"wall s of {args.together}, A / B | A / B | " if together else "")
             + "B faster | same model | plans A / B |",
             "|---|---|---|---|---|" + ("---|---|" if together else "") + "---|---|---|"]
    keys = ("loop_s", "train_s") + (("wall_s",) if together else ())
    for name, got in results.items():
        med = {s: {k: statistics.median(r[k] for r in got[s]) for k in keys} for s in ("A", "B")}
        faster = sum(b[by] < a[by] for a, b in zip(got["A"], got["B"]))
        same = sum(got["identical"])
        cells = [name] + [c for k in keys for c in (
            f"{med['A'][k]:.4f} / {med['B'][k]:.4f}", f"{med['A'][k] / med['B'][k]:.3f}x")]
        cells += [f"{faster} of {args.repeat}",
                  "yes" if same == args.repeat else f"{same} of {args.repeat}",
                  f"{got['A'][0]['plan']} / {got['B'][0]['plan']}"]
        lines.append("| " + " | ".join(cells) + " |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    (args.out / "ab.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
