#!/usr/bin/python3
"""Checks a bagel model against PyTorch, row by row.

    /usr/bin/python3 scripts/torch_check.py --model DIR --input X.npz [--bagel PATH]

Four computations of the class probabilities of every row of X (a scipy CSR
.npz, read with scipy.sparse.load_npz) must agree:

  torch-bag     torch.nn.EmbeddingBag.from_pretrained(E, mode='sum') called
                with input=indices, offsets=indptr[:-1], per_sample_weights=data
                (float32), plus the bias
  torch-linear  torch.nn.Linear(num_features, K) with weight E.T and the bias,
                on the densified rows X.toarray() (repeated indices add up)
  bagel-sparse  `bagel predict --proba --model DIR --input X`
  bagel-dense   the same with `--layer dense`

where E = weight.npy (num_features, K) and the head is model.json's `output`:
a sigmoid ([1-p, p]) for K = 1; for more, the softmax or one-vs-rest ("ovr":
the K sigmoids normalised to sum to 1), evaluated in float64 on the float32
logits as bagel does. It prints the max abs difference of each pair and exits 1 on
any mismatch (NaN never agrees), 2 on a usage or setup error.

Tolerance, per row r: float32 sums of n terms in any order differ by at most
~2 n u sum|terms| (u = 2^-24), so we allow
    logit_tol_r = 4 (n_r + 2) FLT_EPSILON max_i(sum_p |x_p| |E[j_p, i]| + |b_i|)
(n_r = stored entries of the row; 4x margin over the bound) and, because the
sigmoid and the softmax move by at most half the largest logit change,
    proba_tol_r = logit_tol_r / 2 + 1e-12
(one-vs-rest: p_i = s_i / sum s, and |d log p_i| <= 2 max |dz|, so 2 logit_tol_r)
(the 1e-12 covers float64 exp/division; bagel prints shortest round-trip
doubles, so parsing its output loses nothing).

It also checks the worked example of the MISSION document (shared/docs/MISSION.md) (torch.manual_seed(0);
nn.Embedding(4, 5), ids [2, 3, 1], the sparse matrix [[1,0,1,0],[0,0,1,1],
[1,1,1,0]]) in PyTorch and, through a hand-written 5-class model directory,
in bagel.
"""

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse
import torch

FLT_EPS = float(np.finfo(np.float32).eps)
PROBA_ATOL = 1e-12

# torch.manual_seed(0); torch.nn.Embedding(4, 5).weight, as printed in MISSION.md.
WORKED_EMBEDDING = np.array([
    [-1.1258, -1.1524, -0.2506, -0.4339, 0.5988],
    [-1.5551, -0.3414, 1.8530, 0.4681, -0.1577],
    [1.4437, 0.2660, 1.3894, 1.5863, 0.9463],
    [-0.8437, 0.9318, 1.2590, 2.0050, 0.0537],
])
WORKED_IDS = [2, 3, 1]
WORKED_MATRIX = [[1, 0, 1, 0], [0, 0, 1, 1], [1, 1, 1, 0]]
# Printed to 4 decimals: a printed value is within 5e-5 of the true one.
PRINTED_TOL = 5e-5


class SetupError(Exception):
    """The inputs cannot be checked at all (exit 2)."""


# ---------------------------------------------------------------------------
# Loading


def load_model(model_dir):
    model_dir = Path(model_dir)
    try:
        meta = json.loads((model_dir / "model.json").read_text())
        weight = np.load(model_dir / "weight.npy")
        bias = np.load(model_dir / "bias.npy")
    except (OSError, ValueError) as e:
        raise SetupError(f"{model_dir}: cannot read the model: {e}") from e
    if meta.get("format") != "bagel-model":
        raise SetupError(f"{model_dir}/model.json: format is {meta.get('format')!r}, "
                         "expected 'bagel-model'")
    f, k = meta["num_features"], meta["num_outputs"]
    if weight.shape != (f, k) or weight.dtype != np.float32:
        raise SetupError(f"{model_dir}/weight.npy: {weight.dtype} {weight.shape}, "
                         f"expected float32 ({f}, {k})")
    if bias.shape != (k,) or bias.dtype != np.float32:
        raise SetupError(f"{model_dir}/bias.npy: {bias.dtype} {bias.shape}, "
                         f"expected float32 ({k},)")
    expected_outputs = ("sigmoid",) if k == 1 else ("softmax", "ovr")
    if meta.get("output") not in expected_outputs:
        raise SetupError(f"{model_dir}/model.json: output {meta.get('output')!r} with "
                         f"{k} outputs, expected {' or '.join(map(repr, expected_outputs))}")
    return weight, bias, meta


def load_csr(path, num_features):
    try:
        x = scipy.sparse.load_npz(path)
    except (OSError, ValueError) as e:
        raise SetupError(f"{path}: cannot read as a scipy sparse .npz: {e}") from e
    if not scipy.sparse.isspmatrix_csr(x):
        raise SetupError(f"{path}: {x.format} matrix, expected CSR")
    if x.shape[1] > num_features:
        raise SetupError(f"{path}: {x.shape[1]} columns but the model has {num_features} "
                         "features")
    # Not sum_duplicates()/sort_indices(): the bags must stay exactly as stored.
    return x


# ---------------------------------------------------------------------------
# The four computations


def torch_bag_logits(weight, bias, x):
    bag = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(weight), mode="sum")
    with torch.no_grad():
        z = bag(torch.from_numpy(x.indices.astype(np.int64)),
                offsets=torch.from_numpy(x.indptr[:-1].astype(np.int64)),
                per_sample_weights=torch.from_numpy(x.data.astype(np.float32)))
        z = z + torch.from_numpy(bias)
    return z.numpy()


def torch_linear_logits(weight, bias, x):
    f, k = weight.shape
    dense = x.astype(np.float32).toarray()  # repeated indices add up
    if dense.shape[1] < f:  # fewer columns than features: the rest are zeros
        dense = np.hstack([dense, np.zeros((dense.shape[0], f - dense.shape[1]), np.float32)])
    linear = torch.nn.Linear(f, k)
    with torch.no_grad():
        linear.weight.copy_(torch.from_numpy(weight.T.copy()))
        linear.bias.copy_(torch.from_numpy(bias))
        return linear(torch.from_numpy(dense)).numpy()


def probabilities(logits, output):
    """Sigmoid as [1 - p, p] for one output, else softmax or the normalised
    one-vs-rest sigmoids; float64 like bagel."""
    z = torch.from_numpy(logits.astype(np.float64))
    if output == "sigmoid":
        p = torch.sigmoid(z[:, 0])
        return torch.stack([1 - p, p], dim=1).numpy()
    if output == "ovr":
        p = torch.sigmoid(z)
        return (p / p.sum(dim=1, keepdim=True)).numpy()
    return torch.softmax(z, dim=1).numpy()


def bagel_probabilities(bagel, model_dir, input_path, layer, classes):
    cmd = [bagel, "predict", "--proba", "--quiet", "--model", str(model_dir),
           "--input", str(input_path), "--layer", layer]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"`{' '.join(cmd)}` exited {run.returncode}: {run.stderr.strip()}")
    rows = list(csv.reader(io.StringIO(run.stdout)))
    if not rows or rows[0] != list(classes):
        raise RuntimeError(f"bagel --layer {layer}: header {rows[:1]}, expected {classes}")
    return np.array([[float(v) for v in row] for row in rows[1:]], dtype=np.float64)


def proba_tolerance(weight, bias, x, output):
    """Per-row tolerance on probabilities (see the module docstring)."""
    k = weight.shape[1]
    mag = np.zeros((x.shape[0], k))
    for i in range(k):
        mag[:, i] = abs(x).astype(np.float64) @ np.abs(weight[: x.shape[1], i].astype(np.float64))
    mag += np.abs(bias.astype(np.float64))
    n = np.diff(x.indptr)
    factor = 2.0 if output == "ovr" else 0.5
    return factor * 4.0 * (n + 2) * FLT_EPS * mag.max(axis=1) + PROBA_ATOL


def compare(name_a, a, name_b, b, tol):
    """Prints the pair's max abs difference; True when every row is within tol."""
    if a.shape != b.shape:
        print(f"  MISMATCH {name_a} vs {name_b}: shapes {a.shape} and {b.shape}")
        return False
    diff = np.abs(a - b)
    finite = np.isfinite(diff).all()
    # max over rows of |diff|, and whether each row fits its own tolerance;
    # `~(diff <= tol)` counts NaN as a mismatch (a NaN comparison is False).
    bad = ~(diff <= tol[:, None]).all(axis=1) if diff.size else np.zeros(0, bool)
    worst = float(np.nanmax(diff)) if diff.size and not np.isnan(diff).all() else float("nan")
    status = "ok" if finite and not bad.any() else "MISMATCH"
    note = "" if finite else " (non-finite values)"
    print(f"  {status:8s} {name_a:12s} vs {name_b:12s} max |diff| = {worst:.3g} "
          f"(tolerance {tol.max() if tol.size else 0:.3g}){note}")
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        print(f"           first bad row {r}: {a[r]} vs {b[r]}")
    return status == "ok"


def check_model(model_dir, input_path, bagel):
    weight, bias, meta = load_model(model_dir)
    x = load_csr(input_path, meta["num_features"])
    print(f"model {model_dir}: {meta['num_features']} features, {meta['num_outputs']} "
          f"output(s) ({meta['output']}); input {input_path}: {x.shape[0]} rows, {x.nnz} stored")
    results = {
        "torch-bag": probabilities(torch_bag_logits(weight, bias, x), meta["output"]),
        "torch-linear": probabilities(torch_linear_logits(weight, bias, x), meta["output"]),
    }
    ok = True
    for layer in ("sparse", "dense"):
        try:
            results[f"bagel-{layer}"] = bagel_probabilities(bagel, model_dir, input_path, layer,
                                                            meta["classes"])
        except RuntimeError as e:
            print(f"  FAILED   {e}")
            ok = False
    tol = proba_tolerance(weight, bias, x, meta["output"])
    names = list(results)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ok &= compare(a, results[a], b, results[b], tol)
    return ok


# ---------------------------------------------------------------------------
# The worked example of MISSION.md


def check(ok, what):
    print(f"  {'ok' if ok else 'MISMATCH':8s} {what}")
    return bool(ok)


def check_worked_example(bagel):
    print("worked example (the MISSION document (shared/docs/MISSION.md)):")
    ok = True
    torch.manual_seed(0)
    emb = torch.nn.Embedding(4, 5)
    e = emb.weight.detach()
    ok &= check(np.abs(e.numpy() - WORKED_EMBEDDING).max() <= PRINTED_TOL,
                "torch.manual_seed(0); nn.Embedding(4, 5) rows equal the printed values")

    ids = torch.tensor(WORKED_IDS)
    linear = torch.nn.Linear(4, 5, bias=False)
    with torch.no_grad():
        linear.weight.copy_(e.T)
        by_lookup = emb(ids)
        by_linear = linear(torch.nn.functional.one_hot(ids, 4).float())
    # One non-zero per row: the product is a single exact multiply by 1.
    ok &= check(torch.equal(by_lookup, by_linear) and torch.equal(by_lookup, e[ids]),
                "ids [2, 3, 1]: Embedding lookup == Linear(weight E.T) on one_hot == rows 2, 3, 1")

    s = np.array(WORKED_MATRIX, dtype=np.float32)
    w = torch.nn.Linear(4, 3, bias=False)  # W (3x4): E = W.T is (4, 3)
    with torch.no_grad():
        e3 = w.weight.T
        row0 = w(torch.from_numpy(s[:1]))[0]
    ok &= check(torch.allclose(row0, e3[0] + e3[2], rtol=0, atol=4 * FLT_EPS * float(e3.abs().max())),
                "sparse row [1,0,1,0] through Linear W (3x4) == E[0] + E[2] with E = W.T")

    # The same matrix as CSR bags through EmbeddingBag(E) and through bagel,
    # with E as the weight of a hand-written 5-class softmax model.
    x = scipy.sparse.csr_matrix(np.array(WORKED_MATRIX, dtype=np.int64))  # CountVectorizer dtype
    weight = e.numpy().astype(np.float32)
    bias = np.zeros(5, np.float32)
    bag = torch_bag_logits(weight, bias, x)
    lin = torch_linear_logits(weight, bias, x)
    tol = proba_tolerance(weight, bias, x, "softmax")
    ok &= check(np.allclose(bag[0], weight[0] + weight[2], rtol=0, atol=1e-6),
                "EmbeddingBag(E, sum) on CSR row 0 == E[0] + E[2]")
    ok &= check(np.abs(bag - lin).max() <= 2 * tol.max(),
                "EmbeddingBag(E, sum) on the CSR == Linear(E.T) on the dense matrix")
    with tempfile.TemporaryDirectory(prefix="bagel-worked-") as tmp:
        model_dir = Path(tmp) / "model"
        write_model(model_dir, weight, bias, ["a", "b", "c", "d", "e"])
        input_path = Path(tmp) / "x.npz"
        scipy.sparse.save_npz(input_path, x)
        want = probabilities(bag, "softmax")
        for layer in ("sparse", "dense"):
            try:
                got = bagel_probabilities(bagel, model_dir, input_path, layer, list("abcde"))
            except RuntimeError as err:
                print(f"  FAILED   {err}")
                ok = False
                continue
            ok &= compare("torch-bag", want, f"bagel-{layer}", got, tol)
    return ok


def write_model(model_dir, weight, bias, classes):
    """A model directory as bagel writes it (model.json, weight.npy, bias.npy)."""
    model_dir.mkdir(parents=True)
    f, k = weight.shape
    meta = {
        "format": "bagel-model", "version": 1, "classes": classes, "numeric_classes": False,
        "num_features": f, "num_outputs": k, "output": "sigmoid" if k == 1 else "softmax",
    }
    (model_dir / "model.json").write_text(json.dumps(meta, indent=2) + "\n")
    np.save(model_dir / "weight.npy", np.ascontiguousarray(weight, dtype=np.float32))
    np.save(model_dir / "bias.npy", np.ascontiguousarray(bias, dtype=np.float32))


# ---------------------------------------------------------------------------


def find_bagel(given):
    candidate = given or os.environ.get("BAGEL") or shutil.which("bagel")
    if not candidate or not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
        raise SetupError(f"bagel executable not found ({candidate or 'none given'}): pass "
                         "--bagel PATH or set BAGEL")
    return candidate


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="bagel model directory")
    parser.add_argument("--input", required=True, help="CSR features (.npz, scipy.sparse.save_npz)")
    parser.add_argument("--bagel", help="bagel executable (default: $BAGEL, then PATH)")
    args = parser.parse_args(argv)
    try:
        bagel = find_bagel(args.bagel)
        ok = check_model(args.model, args.input, bagel)
        ok &= check_worked_example(bagel)
    except SetupError as e:
        print(f"torch_check: error: {e}", file=sys.stderr)
        return 2
    print("all agree" if ok else "MISMATCH: see above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
