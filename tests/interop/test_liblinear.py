"""bagel's L2-regularised binary logistic regression converges to LIBLINEAR's.

The two objectives, and how they are made the same problem
-----------------------------------------------------------
LIBLINEAR `-s 0 -c C` minimises, over w (and, with `-B B`, an extra weight w_B
on a constant feature of value B appended to every row):

    0.5 |w|^2 + 0.5 w_B^2 + C sum_i log(1 + exp(-y_i (w.x_i + B w_B)))

bagel's SGD takes eager steps w <- (1 - eta l2) w - eta grad(mean log loss),
b <- b - eta grad_b, i.e. it minimises

    mean_i log(1 + exp(-y_i (w.x_i + b))) + 0.5 l2 |w|^2      (b not penalised)

Divided by C n, LIBLINEAR's objective is bagel's with l2 = 1 / (C n), except
for the bias: LIBLINEAR penalises it as an ordinary weight, bagel does not.
We remove that difference rather than tolerate it: with -B B the bias is
b = B w_B and its penalty is 0.5 (b / B)^2, so a large B (here 100) makes
the penalty 1e-4 times smaller, far below the tolerances, while the model
class is unchanged. (With -B 1 the optimal biases differ visibly: the
penalty pulls LIBLINEAR's towards 0.) A self-check below confirms that
LIBLINEAR's solution is then a stationary point of bagel's objective.

What is compared
----------------
bagel's objective (above) at bagel's weights against the same objective at
LIBLINEAR's (the optimum): relative excess <= 1e-3, and not below the optimum
by more than rounding (if bagel were below, the two would not be solving the
same problem); the weights: relative L2 distance <= 2% and cosine >= 0.9999;
the bias within 0.02. A factor-of-2 error in l2 (e.g. l2 = 2 / (C n)) moves
the objective by ~3% and the weights by ~20% on this problem, so the
tolerances can tell.
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

BAGEL = os.environ.get("BAGEL", "bagel")
LIBLINEAR_TRAIN = shutil.which("liblinear-train") or "/usr/bin/liblinear-train"
BIAS_FEATURE = 100.0  # LIBLINEAR's -B: large, so its bias penalty vanishes (see above)
C = 1.0


def read_liblinear_model(path):
    """(header dict, weights) of a LIBLINEAR model file. With a bias the last
    weight is w_B. Two classes store one column, oriented to labels[0]."""
    lines = Path(path).read_text().splitlines()
    header = {}
    i = 0
    while lines[i].strip() != "w":
        key, *values = lines[i].split()
        header[key] = values
        i += 1
    w = np.array([[float(v) for v in line.split()] for line in lines[i + 1:] if line.strip()])
    return header, w


def objective(x, y01, w, b, l2, rw):
    """bagel's objective: mean of the row weights times the log loss + 0.5 l2 |w|^2
    (the bias not penalised)."""
    z = x @ w + b
    return np.mean(rw * np.logaddexp(0.0, -(2 * y01 - 1) * z)) + 0.5 * l2 * (w @ w)


def gradient(x, y01, w, b, l2, rw):
    z = x @ w + b
    r = rw * (1 / (1 + np.exp(-z)) - y01)  # dloss/dz per row
    return np.concatenate([x.T @ r / x.shape[0] + l2 * w, [r.mean()]])


@unittest.skipUnless(shutil.which("liblinear-train"), "liblinear-train not installed "
                     "(Debian package liblinear-tools)")
class ConvergesToLiblinear(unittest.TestCase):
    # LIBLINEAR's -wi: class i's C times the weight; bagel's
    # optimizer.class_weight weighs class i's loss alike, so with
    # l2 = 1 / (C n) the objectives stay the same problem.
    CLASS_WEIGHT = None  # {label: weight}

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-liblinear-")
        cls.dir = Path(cls._tmp.name)
        rng = np.random.default_rng(1)
        n, f = 400, 30
        x = sp.random(n, f, density=0.3, format="csr", random_state=2,
                      data_rvs=lambda k: rng.uniform(0.5, 2.0, k))
        x.data = x.data.astype(np.float32).astype(np.float64)  # what both programs read
        x.sort_indices()
        margin = x @ rng.normal(size=f)
        margin -= np.median(margin)
        y = np.where(margin + rng.normal(scale=1.0, size=n) > 0.3, 1, -1)  # noisy linear
        assert abs(x.getnnz(axis=0).min()) > 0, "every feature should occur"
        cls.x, cls.y01, cls.n, cls.f = x, (y == 1).astype(np.float64), n, f
        cls.l2 = 1.0 / (C * n)
        cls.svm = cls.dir / "train.svm"
        # One-based indices, LIBLINEAR's convention (bagel reads both).
        dump_svmlight_file(x, y, cls.svm, zero_based=False)
        weights = cls.CLASS_WEIGHT or {}
        cls.rw = np.array([weights.get(int(label), 1.0) for label in y])
        weight_args = [a for label, w in weights.items() for a in (f"-w{label}", str(w))]

        model_file = cls.dir / "liblinear.model"
        subprocess.run([LIBLINEAR_TRAIN, "-s", "0", "-c", str(C), "-e", "1e-6", "-B",
                        str(BIAS_FEATURE), *weight_args, "-q", str(cls.svm), str(model_file)],
                       check=True, capture_output=True, timeout=60)
        header, w = read_liblinear_model(model_file)
        assert header["solver_type"] == ["L2R_LR"], header
        assert int(header["nr_feature"][0]) == f, header
        assert float(header["bias"][0]) == BIAS_FEATURE, header
        # The single column scores labels[0]; orient it to the +1 class, which
        # is bagel's classes[1] ("-1" < "1").
        sign = 1.0 if int(header["label"][0]) == 1 else -1.0
        cls.w_ll = sign * w[:f, 0]
        cls.b_ll = sign * w[f, 0] * BIAS_FEATURE
        cls.obj_ll = objective(x, cls.y01, cls.w_ll, cls.b_ll, cls.l2, cls.rw)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def train_bagel(self, name, optimizer):
        config = {"train": {"features": str(self.svm), "zero_based": "false"},
                  # The last iterate: the mean of every step's weights (average
                  # "auto" on these few rows) still carries the first epochs'.
                  "optimizer": {"l2": self.l2, "l1": 0.0, "seed": 11, "average": False,
                                **optimizer},
                  "output": str(self.dir / name)}
        if self.CLASS_WEIGHT:
            config["optimizer"]["class_weight"] = {str(k): v for k, v in self.CLASS_WEIGHT.items()}
        path = self.dir / f"{name}.json"
        path.write_text(json.dumps(config))
        proc = subprocess.run([BAGEL, "train", "--config", str(path), "--quiet"],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        meta = json.loads((self.dir / name / "model.json").read_text())
        self.assertEqual(meta["classes"], ["-1", "1"])
        w = np.load(self.dir / name / "weight.npy")
        b = np.load(self.dir / name / "bias.npy")
        self.assertEqual(w.shape, (self.f, 1))
        return w[:, 0].astype(np.float64), float(b[0])

    def assert_converged_to_liblinear(self, w, b):
        obj = objective(self.x, self.y01, w, b, self.l2, self.rw)
        excess = (obj - self.obj_ll) / self.obj_ll
        self.assertLessEqual(excess, 1e-3, f"bagel objective {obj} vs LIBLINEAR {self.obj_ll}")
        self.assertGreaterEqual(excess, -1e-6, "bagel below LIBLINEAR's optimum: not the same "
                                "problem (l2 or the bias handled differently)")
        rel = np.linalg.norm(w - self.w_ll) / np.linalg.norm(self.w_ll)
        self.assertLessEqual(rel, 0.02)
        cosine = w @ self.w_ll / (np.linalg.norm(w) * np.linalg.norm(self.w_ll))
        self.assertGreaterEqual(cosine, 0.9999)
        self.assertAlmostEqual(b, self.b_ll, delta=0.02)

    def test_liblinear_solution_is_stationary_for_bagels_objective(self):
        # Checks the translation itself (l2 = 1/(C n), large -B), independent
        # of bagel: the gradient of bagel's objective vanishes at LIBLINEAR's
        # solution, and the optimum is not trivial.
        g = gradient(self.x, self.y01, self.w_ll, self.b_ll, self.l2, self.rw)
        self.assertLess(np.abs(g).max(), 1e-5)
        self.assertGreater(np.linalg.norm(self.w_ll), 1.0)
        self.assertLess(self.obj_ll, 0.5 * np.log(2))

    def test_minibatch_sgd_with_linear_decay_converges_to_liblinear(self):
        w, b = self.train_bagel("linear", {"epochs": 300, "learning_rate": 1.0,
                                           "schedule": "linear", "batch_size": 20})
        self.assert_converged_to_liblinear(w, b)

    def test_per_sample_sgd_with_optimal_schedule_converges_to_liblinear(self):
        # scikit-learn's default setting: batch 1, eta = 1 / (alpha (t0 + t - 1)).
        w, b = self.train_bagel("optimal", {"epochs": 200, "schedule": "optimal",
                                            "batch_size": 1})
        self.assert_converged_to_liblinear(w, b)


class ConvergesToLiblinearWithClassWeights(ConvergesToLiblinear):
    """The same checks on the class-weighted problem: class 1's loss counts
    3 times (LIBLINEAR -w1 3, bagel class_weight {"1": 3})."""
    CLASS_WEIGHT = {1: 3.0}

    def test_the_weights_move_the_optimum(self):
        plain = ConvergesToLiblinear
        self.assertGreater(np.linalg.norm(self.w_ll - plain.w_ll) / np.linalg.norm(plain.w_ll), 0.05)
        self.assertGreater(self.b_ll, plain.b_ll + 0.1)  # class 1 counts more: a higher bias


if __name__ == "__main__":
    unittest.main()
