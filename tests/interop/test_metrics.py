"""bagel's metrics against scikit-learn, end to end through the CLI.

Each case makes a small random sparse data set whose labels come from a noisy
random linear model (learnable, not perfectly), trains with `bagel train`,
predicts with `bagel predict`, and recomputes every metric with
sklearn.metrics from the probabilities bagel printed. The printed numbers must
round-trip for this to agree to 1e-9, which is part of what is checked.

Run by ctest with BAGEL (the executable) and BAGEL_ROOT (the repository) set.
"""

import csv
import json
import math
import os
import subprocess
import tempfile
import unittest

import numpy as np
import scipy.sparse
from sklearn import metrics

REL_TOL = 1e-9
ROW_SUM_TOL = 1e-6
N_FEATURES = 50
N_TRAIN = 300
N_TEST = 200


def bagel_executable():
    path = os.environ.get("BAGEL")
    if not path:
        raise RuntimeError("BAGEL must name the bagel executable (ctest sets it)")
    return path


def make_rows(rng, n_rows, weight, noise):
    """Count features like CountVectorizer's (int64) and labels from the
    arg-max of a noisy linear score, so some rows are ambiguous."""
    density = 0.15
    x = scipy.sparse.random(
        n_rows, N_FEATURES, density=density, format="csr", random_state=rng,
        data_rvs=lambda k: rng.poisson(1.0, size=k) + 1,
    ).astype(np.int64)
    scores = x @ weight + noise * rng.gumbel(size=(n_rows, weight.shape[1]))
    return x, scores.argmax(axis=1)


def make_split(seed, num_classes):
    """Train and test sets in which every class occurs in train."""
    rng = np.random.default_rng(seed)
    weight = rng.normal(size=(N_FEATURES, num_classes))
    while True:
        x_train, y_train = make_rows(rng, N_TRAIN, weight, noise=1.5)
        x_test, y_test = make_rows(rng, N_TEST, weight, noise=1.5)
        if len(np.unique(y_train)) == num_classes:
            return x_train, y_train, x_test, y_test


def write_labels(path, names):
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(f"{name}\n" for name in names)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def read_proba_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return header, np.array([[float(v) for v in row] for row in body], dtype=np.float64)


def run_bagel(args, cwd):
    result = subprocess.run([bagel_executable(), *args], cwd=cwd, capture_output=True,
                            text=True, timeout=300)
    if result.returncode != 0:
        raise AssertionError(
            f"bagel {' '.join(args)} exited {result.returncode}\n"
            f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


class CliMetricsCase:
    """One data set through train and predict; subclasses say which.

    Not a TestCase itself, so unittest runs only the concrete cases."""

    seed = 0
    class_names = []          # label text for class ids 0..K-1 of the generator
    drop_from_test = []       # generator class ids removed from the test set

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="bagel-metrics-")
        d = cls.tmp.name
        x_train, y_train, x_test, y_test = make_split(cls.seed, len(cls.class_names))
        keep = ~np.isin(y_test, cls.drop_from_test)
        x_test, y_test = x_test[keep], y_test[keep]
        names = np.array(cls.class_names, dtype=object)
        scipy.sparse.save_npz(os.path.join(d, "train.npz"), x_train)
        scipy.sparse.save_npz(os.path.join(d, "test.npz"), x_test)
        write_labels(os.path.join(d, "train.labels"), names[y_train])
        write_labels(os.path.join(d, "test.labels"), names[y_test])
        config = {
            "train": {"features": "train.npz", "labels": "train.labels"},
            "model": {"layer": "sparse"},
            "optimizer": {"epochs": 5, "learning_rate": 0.1, "schedule": "constant",
                          "batch_size": 1, "l2": 0.0001, "seed": 1},
            "output": "model",
        }
        with open(os.path.join(d, "cfg.json"), "w", encoding="utf-8") as f:
            json.dump(config, f)

        run_bagel(["train", "--config", "cfg.json", "--quiet"], cwd=d)
        run_bagel(["predict", "--model", "model", "--input", "test.npz",
                   "--labels", "test.labels", "--proba", "--output", "proba.csv",
                   "--metrics", "metrics.json"], cwd=d)
        run_bagel(["predict", "--model", "model", "--input", "test.npz",
                   "--output", "pred.txt"], cwd=d)

        cls.header, cls.proba = read_proba_csv(os.path.join(d, "proba.csv"))
        cls.predicted_names = read_lines(os.path.join(d, "pred.txt"))
        cls.true_names = read_lines(os.path.join(d, "test.labels"))
        with open(os.path.join(d, "metrics.json"), encoding="utf-8") as f:
            cls.reported = json.load(f)
        # Class ids in the model's order (the CSV header), as bagel sees them.
        cls.column = {name: i for i, name in enumerate(cls.header)}
        cls.y_true = np.array([cls.column[name] for name in cls.true_names])
        cls.y_pred = cls.proba.argmax(axis=1)
        cls.labels = list(range(len(cls.header)))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assertClose(self, reported, expected, what):
        self.assertTrue(
            math.isclose(reported, expected, rel_tol=REL_TOL, abs_tol=1e-300),
            f"{what}: bagel reported {reported!r}, sklearn computes {expected!r} "
            f"(relative difference {abs(reported - expected) / max(abs(expected), 1e-300):.3g})")

    def test_probability_header_lists_every_class_once(self):
        self.assertEqual(sorted(self.header), sorted(self.class_names))
        self.assertEqual(self.proba.shape, (len(self.true_names), len(self.header)))

    def test_probability_rows_sum_to_one(self):
        sums = self.proba.sum(axis=1)
        worst = int(np.abs(sums - 1.0).argmax())
        self.assertLess(abs(sums[worst] - 1.0), ROW_SUM_TOL,
                        f"row {worst} of proba.csv sums to {sums[worst]!r}")
        self.assertTrue((self.proba >= 0).all() and (self.proba <= 1).all())

    def test_predicted_names_are_argmax_of_probabilities(self):
        expected = [self.header[i] for i in self.y_pred]
        self.assertEqual(len(self.predicted_names), len(expected))
        mismatches = [i for i, (a, b) in enumerate(zip(self.predicted_names, expected)) if a != b]
        self.assertEqual(mismatches, [], f"pred.txt differs from argmax of proba.csv at rows "
                                         f"{mismatches[:10]}")

    def test_metrics_classes_follow_model_order(self):
        matrix = self.reported["confusion_matrix"]
        self.assertEqual(matrix["labels"], self.header)
        self.assertEqual(sorted(self.reported["per_class"]), sorted(self.header))

    def test_row_count_and_accuracy_match_sklearn(self):
        self.assertEqual(self.reported["rows"], len(self.y_true))
        self.assertClose(self.reported["accuracy"],
                         metrics.accuracy_score(self.y_true, self.y_pred), "accuracy")

    def test_log_loss_matches_sklearn(self):
        expected = metrics.log_loss(self.y_true, self.proba, labels=self.labels)
        self.assertClose(self.reported["log_loss"], expected, "log_loss")

    def test_macro_f1_over_all_classes_matches_sklearn(self):
        expected = metrics.f1_score(self.y_true, self.y_pred, labels=self.labels,
                                    average="macro", zero_division=0)
        self.assertClose(self.reported["macro_f1"], expected, "macro_f1")

    def test_per_class_report_matches_sklearn(self):
        precision, recall, f1, support = metrics.precision_recall_fscore_support(
            self.y_true, self.y_pred, labels=self.labels, zero_division=0)
        for i, name in enumerate(self.header):
            got = self.reported["per_class"][name]
            self.assertClose(got["precision"], precision[i], f"precision of {name}")
            self.assertClose(got["recall"], recall[i], f"recall of {name}")
            self.assertClose(got["f1"], f1[i], f"f1 of {name}")
            self.assertEqual(got["support"], support[i], f"support of {name}")

    def test_confusion_matrix_matches_sklearn(self):
        expected = metrics.confusion_matrix(self.y_true, self.y_pred, labels=self.labels)
        self.assertEqual(self.reported["confusion_matrix"]["matrix"], expected.tolist())

    def test_roc_auc_matches_sklearn_when_defined(self):
        defined = len(self.header) == 2 and len(np.unique(self.y_true)) == 2
        if not defined:
            self.assertNotIn("roc_auc", self.reported)
            return
        expected = metrics.roc_auc_score(self.y_true, self.proba[:, 1])
        self.assertClose(self.reported["roc_auc"], expected, "roc_auc")


class BinaryStringLabels(CliMetricsCase, unittest.TestCase):
    seed = 11
    class_names = ["cat", "dog"]

    def test_model_beats_the_majority_class(self):
        majority = np.bincount(self.y_true).max() / len(self.y_true)
        self.assertGreater(self.reported["accuracy"], majority)


class MulticlassIntegerLabels(CliMetricsCase, unittest.TestCase):
    seed = 12
    class_names = ["10", "-1", "3", "7"]

    def test_numeric_classes_are_ordered_by_value(self):
        self.assertEqual(self.header, sorted(self.class_names, key=int))

    def test_model_beats_the_majority_class(self):
        majority = np.bincount(self.y_true).max() / len(self.y_true)
        self.assertGreater(self.reported["accuracy"], majority)


class MulticlassClassAbsentFromTest(CliMetricsCase, unittest.TestCase):
    """A model class with no test rows still counts in macro-F1 (as 0)."""
    seed = 13
    class_names = ["alpha", "beta", "gamma"]
    drop_from_test = [2]

    def test_absent_class_has_zero_support(self):
        self.assertEqual(self.reported["per_class"]["gamma"]["support"], 0)
        self.assertEqual(self.reported["per_class"]["gamma"]["f1"], 0)


class BinaryTestWithOneClass(CliMetricsCase, unittest.TestCase):
    """ROC AUC is undefined when the truth holds one class: it is left out."""
    seed = 14
    class_names = ["ham", "spam"]
    drop_from_test = [0]


if __name__ == "__main__":
    unittest.main()
