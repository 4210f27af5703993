"""The model directory and `bagel predict`, checked with numpy.

A random sparse problem (binary with string labels, 5-class with numeric
labels) is saved with scipy.sparse.save_npz, trained with `bagel train`, and
then the model directory is read back with numpy alone: weight.npy must be the
embedding layout (num_features, num_outputs) in float32 C order, and the
probabilities `bagel predict` writes must equal X @ W + b followed by the
sigmoid (binary: [1 - p, p]), the one-vs-rest sigmoids normalised to sum to 1
(the default head of more classes) or the softmax, recomputed here.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_model
"""

import csv
import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp

BAGEL = os.environ.get("BAGEL", "bagel")


def run_bagel(*args, check=True):
    proc = subprocess.run([BAGEL, *map(str, args)], capture_output=True, text=True, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"bagel {' '.join(map(str, args))} failed ({proc.returncode}):\n"
                             f"{proc.stderr}")
    return proc


def random_csr(rng, rows, cols, density, counts=False):
    """Random CSR; values exactly representable in float32 (bagel's dtype)."""
    x = sp.random(rows, cols, density=density, format="csr", random_state=rng,
                  dtype=np.float64)
    if counts:
        x.data = rng.integers(1, 5, size=x.nnz).astype(np.int64)  # CountVectorizer-like
    else:
        x.data = rng.uniform(0.1, 2.0, size=x.nnz).astype(np.float32).astype(np.float64)
    x.sort_indices()
    return x


def sigmoid(z):
    return np.where(z >= 0, 1 / (1 + np.exp(-np.abs(z))), np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))))


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def read_proba(path, delimiter=","):
    with open(path, newline="") as f:
        rows = list(csv.reader(f, delimiter=delimiter))
    return rows[0], np.array(rows[1:], dtype=np.float64)


class ModelDirectoryAndPredict(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-model-")
        cls.dir = Path(cls._tmp.name)
        rng = np.random.default_rng(20240601)

        # Binary, string labels, float data, uncompressed npz.
        cls.bin_features = 40
        x = random_csr(rng, 300, cls.bin_features, 0.15)
        w = rng.normal(size=cls.bin_features)
        margin = x @ w
        y = np.where(margin > np.median(margin), "spam", "ham")
        sp.save_npz(cls.dir / "bin_train.npz", x, compressed=False)
        (cls.dir / "bin_train.labels").write_text("\n".join(y) + "\n")
        cls.bin_test = random_csr(rng, 77, cls.bin_features, 0.15)
        sp.save_npz(cls.dir / "bin_test.npz", cls.bin_test)
        cls.bin_model = cls.dir / "bin_model"
        cls.bin_config = {
            "train": {"features": str(cls.dir / "bin_train.npz"),
                      "labels": str(cls.dir / "bin_train.labels")},
            "optimizer": {"epochs": 4, "learning_rate": 0.2, "batch_size": 2, "l2": 1e-4,
                          "seed": 7},
            "output": str(cls.bin_model),
        }
        cls._train(cls.bin_config, "bin.json")

        # Five classes, numeric labels (sorted by value, not as text: 3 < 10 <
        # 25 < 100 < 700), int64 counts, compressed npz.
        cls.multi_values = [100, 3, 25, 700, 10]
        cls.multi_features = 25
        x = random_csr(rng, 400, cls.multi_features, 0.2, counts=True)
        w = rng.normal(size=(cls.multi_features, 5))
        ids = np.argmax(x @ w + rng.normal(scale=0.3, size=(400, 5)), axis=1)
        labels = np.array(cls.multi_values)[ids]
        sp.save_npz(cls.dir / "multi_train.npz", x, compressed=True)
        (cls.dir / "multi_train.labels").write_text("\n".join(map(str, labels)) + "\n")
        cls.multi_test = random_csr(rng, 50, cls.multi_features, 0.2, counts=True)
        sp.save_npz(cls.dir / "multi_test.npz", cls.multi_test)
        cls.multi_model = cls.dir / "multi_model"
        cls.multi_config = {
            "train": {"features": str(cls.dir / "multi_train.npz"),
                      "labels": str(cls.dir / "multi_train.labels")},
            "optimizer": {"epochs": 3, "learning_rate": 0.05, "schedule": "invscaling",
                          "power_t": 0.25, "l1": 1e-5, "seed": 3},
            "output": str(cls.multi_model),
        }
        cls._train(cls.multi_config, "multi.json")
        cls.softmax_model = cls.dir / "softmax_model"
        cls._train({**cls.multi_config, "model": {"multiclass": "softmax"},
                    "output": str(cls.softmax_model)}, "softmax.json")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @classmethod
    def _train(cls, config, name):
        path = cls.dir / name
        path.write_text(json.dumps(config))
        proc = run_bagel("train", "--config", path, "--quiet")
        assert proc.stderr == "", proc.stderr

    def load(self, model_dir):
        meta = json.loads((model_dir / "model.json").read_text())
        return meta, np.load(model_dir / "weight.npy"), np.load(model_dir / "bias.npy")

    # -- the files -------------------------------------------------------

    def test_weight_and_bias_files_are_float32_c_order_embedding_layout(self):
        for model_dir, features, outputs in [(self.bin_model, self.bin_features, 1),
                                             (self.multi_model, self.multi_features, 5)]:
            with open(model_dir / "weight.npy", "rb") as f:
                version = np.lib.format.read_magic(f)
                read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                               else np.lib.format.read_array_header_2_0)
                shape, fortran_order, dtype = read_header(f)
            self.assertFalse(fortran_order)
            self.assertEqual(dtype, np.dtype("<f4"))
            self.assertEqual(shape, (features, outputs))
            _, w, b = self.load(model_dir)
            self.assertTrue(w.flags["C_CONTIGUOUS"])
            self.assertEqual(w.dtype, np.float32)
            self.assertEqual(b.dtype, np.float32)
            self.assertEqual(b.shape, (outputs,))
            self.assertTrue(np.all(np.isfinite(w)))
            self.assertGreater(np.abs(w).max(), 1e-3, "training should have moved the weights")

    def test_model_json_describes_the_binary_model(self):
        meta, _, _ = self.load(self.bin_model)
        self.assertEqual(meta["format"], "bagel-model")
        self.assertIsInstance(meta["version"], int)
        self.assertEqual(meta["version"], 1)
        self.assertEqual(meta["classes"], ["ham", "spam"])
        self.assertEqual(meta["num_features"], self.bin_features)
        self.assertEqual(meta["num_outputs"], 1)
        self.assertEqual(meta["output"], "sigmoid")
        opt = meta["config"]["optimizer"]
        self.assertEqual(opt["epochs"], 4)
        self.assertEqual(opt["batch_size"], 2)
        self.assertEqual(opt["seed"], 7)
        self.assertAlmostEqual(opt["l2"], 1e-4)
        self.assertEqual(meta["config"]["train"]["features"], self.bin_config["train"]["features"])
        training = meta["training"]
        self.assertEqual(training["epochs_run"], 4)
        self.assertEqual(len(training["history"]), 4)
        self.assertFalse(training["stopped_early"])
        self.assertEqual([e["epoch"] for e in training["history"]], [1, 2, 3, 4])

    def test_model_json_describes_the_multiclass_model_with_numerically_sorted_classes(self):
        meta, _, _ = self.load(self.multi_model)
        self.assertEqual(meta["classes"], [str(v) for v in sorted(self.multi_values)])
        self.assertEqual(meta["num_features"], self.multi_features)
        self.assertEqual(meta["num_outputs"], 5)
        self.assertEqual(meta["output"], "ovr")  # the default of more than two classes
        self.assertEqual(self.load(self.softmax_model)[0]["output"], "softmax")
        self.assertEqual(meta["config"]["optimizer"]["schedule"], "invscaling")
        self.assertEqual(meta["training"]["epochs_run"], 3)

    def test_training_metrics_in_model_json_match_numpy(self):
        # model.json's train accuracy equals the accuracy of numpy's own
        # predictions from the saved weights.
        x = sp.load_npz(self.dir / "multi_train.npz").astype(np.float64)
        labels = np.loadtxt(self.dir / "multi_train.labels", dtype=np.int64)
        meta, w, b = self.load(self.multi_model)
        classes = np.array([int(c) for c in meta["classes"]])
        predicted = classes[np.argmax(x @ w.astype(np.float64) + b, axis=1)]
        self.assertAlmostEqual(meta["training"]["train_metrics"]["accuracy"],
                               np.mean(predicted == labels), places=12)

    # -- predict -----------------------------------------------------------

    def numpy_proba(self, model_dir, x):
        meta, w, b = self.load(model_dir)
        x32 = x.astype(np.float32).astype(np.float64)  # bagel works on float32 values
        z = x32 @ w.astype(np.float64) + b.astype(np.float64)
        if meta["output"] == "sigmoid":
            p = sigmoid(z[:, 0])
            return meta, np.column_stack([1 - p, p])
        if meta["output"] == "ovr":
            p = sigmoid(z)
            return meta, p / p.sum(axis=1, keepdims=True)
        self.assertEqual(meta["output"], "softmax")
        return meta, softmax(z)

    def test_binary_probabilities_equal_numpy_sigmoid(self):
        out = self.dir / "bin_p.csv"
        run_bagel("predict", "--model", self.bin_model, "--input", self.dir / "bin_test.npz",
                  "--proba", "--output", out, "--quiet")
        header, got = read_proba(out)
        meta, expected = self.numpy_proba(self.bin_model, self.bin_test)
        self.assertEqual(header, meta["classes"])
        self.assertEqual(got.shape, (77, 2))
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)
        # Not a degenerate model: probabilities spread over both classes.
        self.assertLess(got[:, 1].min(), 0.4)
        self.assertGreater(got[:, 1].max(), 0.6)

    def test_multiclass_probabilities_equal_numpys_one_vs_rest_and_softmax(self):
        for model in (self.multi_model, self.softmax_model):
            out = self.dir / "multi_p.csv"
            run_bagel("predict", "--model", model, "--input", self.dir / "multi_test.npz",
                      "--proba", "--output", out, "--quiet")
            header, got = read_proba(out)
            meta, expected = self.numpy_proba(model, self.multi_test)
            self.assertEqual(header, meta["classes"])
            self.assertEqual(got.shape, (50, 5))
            np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
            np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-12)

    def test_tsv_format_writes_the_same_numbers_tab_separated(self):
        csv_out, tsv_out = self.dir / "m.csv", self.dir / "m.tsv"
        for out, fmt in [(csv_out, "csv"), (tsv_out, "tsv")]:
            run_bagel("predict", "-m", self.multi_model, "-i", self.dir / "multi_test.npz",
                      "--proba", "--format", fmt, "-o", out, "-q")
        lines = tsv_out.read_text().splitlines()
        self.assertNotIn(",", lines[0])
        self.assertEqual(lines[0].split("\t"), self.load(self.multi_model)[0]["classes"])
        h_csv, p_csv = read_proba(csv_out)
        h_tsv, p_tsv = read_proba(tsv_out, delimiter="\t")
        self.assertEqual(h_csv, h_tsv)
        np.testing.assert_array_equal(p_csv, p_tsv)

    def test_class_output_is_the_argmax_class_name(self):
        for model_dir, test_file, x in [(self.bin_model, "bin_test.npz", self.bin_test),
                                        (self.multi_model, "multi_test.npz", self.multi_test)]:
            proc = run_bagel("predict", "--model", model_dir, "--input", self.dir / test_file,
                             "--quiet")
            got = proc.stdout.splitlines()
            meta, p = self.numpy_proba(model_dir, x)
            expected = [meta["classes"][i] for i in np.argmax(p, axis=1)]
            self.assertEqual(got, expected)
            self.assertGreater(len(set(got)), 1)

    def test_more_columns_than_the_model_fails_naming_the_file(self):
        wide = sp.hstack([self.bin_test, sp.csr_matrix((77, 3))], format="lil")
        wide[0, self.bin_features + 2] = 1.0  # a real value in a column the model lacks
        wide = wide.tocsr()
        path = self.dir / "too_wide.npz"
        sp.save_npz(path, wide)
        out = self.dir / "wide_p.csv"
        proc = run_bagel("predict", "--model", self.bin_model, "--input", path, "--proba",
                         "--output", out, check=False)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(str(path), proc.stderr)
        self.assertIn(str(self.bin_features + 3), proc.stderr)
        self.assertFalse(out.exists(), "no output file on failure")

    def test_npz_with_fewer_columns_than_the_model_is_refused_with_both_counts(self):
        # An .npz stores its width: another width is another vocabulary, whose
        # columns mean other words. scikit-learn refuses it ("X has 18
        # features, but ... is expecting 25 features"); so does bagel.
        narrow = self.multi_test[:, : self.multi_features - 7].tocsr()
        path = self.dir / "narrow.npz"
        sp.save_npz(path, narrow)
        out = self.dir / "narrow_p.csv"
        proc = run_bagel("predict", "--model", self.multi_model, "--input", path, "--proba",
                         "--output", out, check=False)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"{path}: has {self.multi_features - 7} features", proc.stderr)
        self.assertIn(f"expecting {self.multi_features}", proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        self.assertFalse(out.exists(), "no output file on failure")

    def test_svmlight_with_fewer_columns_than_the_model_works_as_zero_columns(self):
        # svmlight stores no width: a file whose rows never use the last
        # features is narrower, and those columns are zeros.
        from sklearn.datasets import dump_svmlight_file
        narrow = self.multi_test[:, : self.multi_features - 7].tocsr()
        path = self.dir / "narrow.svm"
        dump_svmlight_file(narrow, np.zeros(narrow.shape[0]), path, zero_based=True)
        out = self.dir / "narrow_p.csv"
        run_bagel("predict", "--model", self.multi_model, "--input", path, "--proba",
                  "--zero-based", "true", "--output", out, "--quiet")
        _, got = read_proba(out)
        padded = sp.hstack([narrow, sp.csr_matrix((narrow.shape[0], 7))], format="csr")
        _, expected = self.numpy_proba(self.multi_model, padded)
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)

if __name__ == "__main__":
    unittest.main()
