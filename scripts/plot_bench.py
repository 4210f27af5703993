#!/usr/bin/python3
"""Plot `bagel bench` results: time against vocabulary size, both paths, log-log.

Usage: scripts/plot_bench.py runs/bench/bench.csv [-o bench.png]

One panel for inference (forward over the matrix) and one for a training
epoch; a line per path and batch size. Needs matplotlib (Debian:
python3-matplotlib).
"""
import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["data"] == "zipf"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="bench.csv written by bagel bench")
    ap.add_argument("-o", "--output", default="bench.png", help="PNG to write")
    args = ap.parse_args()
    rows = load(args.csv)
    if not rows:
        sys.exit(f"{args.csv}: no generated-data (zipf) rows to plot")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    panels = [("infer", "Inference (forward over %s rows)"), ("epoch", "One training epoch (%s rows)")]
    for ax, (kind, title) in zip(axes, panels):
        series = defaultdict(list)
        for r in rows:
            key = (r["batch_size"], r["outputs"])
            f = int(r["features"])
            for path, style in (("dense", "o-"), ("sparse", "s--")):
                v = r[f"{path}_{kind}_ms"]
                if v:
                    series[(path, style) + key].append((f, float(v)))
        for (path, style, batch, outputs), pts in sorted(series.items()):
            if kind == "infer" and batch != rows[0]["batch_size"]:
                continue  # inference does not depend on the training batch size
            pts.sort()
            label = f"{path}" + (f", batch {batch}" if kind == "epoch" else "") + (f", K={outputs}" if outputs != "1" else "")
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("vocabulary size (features)")
        ax.set_ylabel("milliseconds (median)")
        ax.set_title(title % rows[0]["rows"])
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    nnz = float(rows[0]["nnz_per_row"])
    fig.suptitle(f"bagel: dense Linear vs sparse EmbeddingBag-sum, ~{nnz:.0f} non-zeros per row")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
