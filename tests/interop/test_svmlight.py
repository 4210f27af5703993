"""bagel's svmlight reader and writer against scikit-learn, through `bagel convert`.

svmlight -> .npz: every file is read both by `bagel convert IN OUT.npz
--labels-out Y --zero-based Z` and by sklearn.datasets.load_svmlight_file(IN,
zero_based=Z); when sklearn reads it, bagel must produce the same shape,
indptr, indices, data (as float32) and labels (as numbers); when sklearn
rejects it, bagel must reject it too, with an error naming the file and line.
The files are sklearn's own test fixtures, files written by
dump_svmlight_file (zero- and one-based, with qid, comments, negative values,
float labels), and small hand-written edge cases.

.npz -> svmlight: `bagel convert IN.npz OUT.svm --labels Y` must write a file
that load_svmlight_file reads back to the original matrix.

Run by ctest with BAGEL (the executable) and BAGEL_ROOT (the repository) set.
"""

import json
import os
import subprocess
import tempfile
import unittest

import numpy as np
import scipy.sparse
import sklearn.datasets
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

SKLEARN_DATA = os.path.join(os.path.dirname(sklearn.datasets.__file__), "tests", "data")
ZERO_BASED = {"auto": "auto", "true": True, "false": False}

# Inputs sklearn accepts and bagel rejects on purpose (see svmlight.h): NaN
# and infinite values or labels, values beyond float32, Python's "1_000".
DELIBERATE_DIFFERENCES = [
    b"1 1:nan\n",
    b"1 1:inf\n",
    b"nan 1:1\n",
    b"1 1:1e39\n",
    b"1 1:1_0\n",
    b"1_0 1:1\n",
]

# Small files, each exercising one rule; sklearn is the judge of each.
EDGE_CASES = [
    b"1 1:1 2:2\n",
    b"1 0:1 2:2\n",
    b"1\n2\n",
    b"",
    b"# only a comment\n\n",
    b"+1 1:1\n-1 2:2\n",
    b"1 qid:3 1:1\n2 qid:abc 3:1\n",
    b"1 qid 1:1\n",
    b"1 1:1 qid:3\n",
    b"1 1:\n",
    b"1 1:abc\n",
    b"1 -1:2\n",
    b"1 1:2 1:3\n",
    b"1 2:1 1:3\n",
    b"1 1:0 2:0 3:-0\n",
    b"1,2 1:1\n",
    b"1 :1\n",
    b"1 a:1\n",
    b"1 +3:1 4:+1 05:.5 6:5. 7:1E2\n",
    b"1 1:2:3\n",
    b"1 1 \n",
    b"1#c\n2 1:1\n",
    b"1 1:1#2:3\n",
    b"\r\n1 1:1\r\n2 3:4\r\n",
    b"1 1:1\r2 2:2\n",
    b" 1 1:1\n",
    b"1\t1:1\x0b2:3\x0c4:5\n",
    b"1 1:1\n2",
    b"1 1:1 3000000000:1\n",
    b"1 1:0x10\n",
    b"1:2 3:4\n",
    b"1 1 : 2\n",
    b"1 1: 2\n",
    b"1 1:1e-50 2:1e-400\n",
    b"0.5 1:1\n-2.25 2:1\n1e3 3:1\n",
    b"1 1:1.000000059604644775390625000001\n",
    b"1 1:3.4028235e38 2:-3.4028235e38\n",
]


def bagel_executable():
    path = os.environ.get("BAGEL")
    if not path:
        raise RuntimeError("BAGEL must name the bagel executable (ctest sets it)")
    return path


def python_name(value):
    """The class name bagel gives a numeric label: Python's repr without '.0'."""
    text = repr(float(value))
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def run_bagel(*args):
    return subprocess.run([bagel_executable(), *args], capture_output=True, text=True)


def sklearn_load(path, zero_based, **kwargs):
    """load_svmlight_file's result, or the exception it raised."""
    try:
        return load_svmlight_file(path, zero_based=ZERO_BASED[zero_based], **kwargs)
    except Exception as e:  # noqa: BLE001 - any rejection counts
        return e


class SvmlightInterop(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def bagel_to_npz(self, source, zero_based):
        out, labels = self.path("out.npz"), self.path("out.labels")
        for stale in (out, labels):
            if os.path.exists(stale):
                os.remove(stale)
        result = run_bagel("convert", source, out, "--labels-out", labels,
                           "--zero-based", zero_based)
        return result, out, labels

    def assert_same_as_sklearn(self, source, zero_based):
        """bagel and sklearn agree on `source`: same arrays, or both reject it."""
        expected = sklearn_load(source, zero_based)
        result, out, labels = self.bagel_to_npz(source, zero_based)
        context = "%s (zero_based=%s): %s" % (source, zero_based, result.stderr.strip())
        if isinstance(expected, Exception):
            self.assertNotEqual(result.returncode, 0,
                                "sklearn rejects (%s) but bagel accepts %s" % (expected, context))
            self.assertIn(source, result.stderr, context)
            return
        self.assertEqual(result.returncode, 0, context)
        x_sk, y_sk = expected
        x = scipy.sparse.load_npz(out)
        self.assertEqual(x.shape, x_sk.shape, context)
        self.assertEqual(x.dtype, np.float32, context)
        np.testing.assert_array_equal(x.indptr, x_sk.indptr, context)
        np.testing.assert_array_equal(x.indices, x_sk.indices, context)
        np.testing.assert_array_equal(x.data, x_sk.data.astype(np.float32), context)
        # Signs of zeros too (-0 stays -0).
        np.testing.assert_array_equal(np.signbit(x.data),
                                      np.signbit(x_sk.data.astype(np.float32)), context)
        with open(labels) as f:
            names = f.read().split("\n")[:-1] if x_sk.shape[0] else []
        np.testing.assert_array_equal(np.array(names, dtype=np.float64), y_sk, context)
        self.assertEqual(names, [python_name(v) for v in y_sk], context)

    def test_sklearn_classification_fixture(self):
        source = os.path.join(SKLEARN_DATA, "svmlight_classification.txt")
        for zero_based in ZERO_BASED:
            self.assert_same_as_sklearn(source, zero_based)

    def test_sklearn_invalid_fixtures_are_rejected_naming_the_line(self):
        for name, line in (("svmlight_invalid.txt", 1), ("svmlight_invalid_order.txt", 1)):
            source = os.path.join(SKLEARN_DATA, name)
            self.assertIsInstance(sklearn_load(source, "auto"), Exception)
            result, _, _ = self.bagel_to_npz(source, "auto")
            self.assertNotEqual(result.returncode, 0, name)
            self.assertIn("%s:%d:" % (source, line), result.stderr)

    def test_multilabel_fixture_is_rejected_as_not_supported(self):
        source = os.path.join(SKLEARN_DATA, "svmlight_multilabel.txt")
        result, _, _ = self.bagel_to_npz(source, "auto")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("%s:2:" % source, result.stderr)
        self.assertIn("multilabel", result.stderr)
        self.assertIn("not supported", result.stderr)

    def test_edge_cases_agree_with_sklearn(self):
        for i, text in enumerate(EDGE_CASES):
            source = self.write("edge%d.svm" % i, text)
            for zero_based in ZERO_BASED:
                with self.subTest(text=text, zero_based=zero_based):
                    self.assert_same_as_sklearn(source, zero_based)

    def test_deliberate_differences_are_errors_naming_the_line(self):
        for i, text in enumerate(DELIBERATE_DIFFERENCES):
            source = self.write("diff%d.svm" % i, b"1 1:1\n" + text)
            with self.subTest(text=text):
                self.assertNotIsInstance(sklearn_load(source, "auto"), Exception)
                result, _, _ = self.bagel_to_npz(source, "auto")
                self.assertNotEqual(result.returncode, 0)
                self.assertIn("%s:2:" % source, result.stderr)

    def random_matrix(self, rng, rows, cols, density):
        x = scipy.sparse.random(rows, cols, density=density, format="csr", random_state=rng,
                                data_rvs=lambda k: rng.standard_normal(k) * 10.0 ** rng.integers(-3, 4, k))
        return x

    def test_files_written_by_dump_svmlight_file(self):
        rng = np.random.default_rng(0)
        cases = []
        for seed in range(4):
            x = self.random_matrix(rng, 60, 40 + 30 * seed, 0.1 + 0.1 * seed)
            y_int = rng.integers(-1, 3, size=x.shape[0])
            y_float = rng.choice([0.5, -1.25, 3.0, 1e-5, 2.5e10], size=x.shape[0])
            cases.append(dict(X=x, y=y_int))
            cases.append(dict(X=x, y=y_float, zero_based=False))
            cases.append(dict(X=x, y=y_int, query_id=rng.integers(0, 5, size=x.shape[0])))
            cases.append(dict(X=x, y=y_float, comment="made by test_svmlight.py\nsecond line",
                              zero_based=False))
        # A matrix with an empty first column and empty rows.
        x = self.random_matrix(rng, 30, 20, 0.2).tolil()
        x[:, 0] = 0
        x[::3, :] = 0
        cases.append(dict(X=x.tocsr(), y=rng.integers(0, 2, size=30)))
        for i, case in enumerate(cases):
            source = self.path("dumped%d.svm" % i)
            dump_svmlight_file(f=source, **case)
            for zero_based in ZERO_BASED:
                with self.subTest(case=i, zero_based=zero_based):
                    self.assert_same_as_sklearn(source, zero_based)

    def npz_to_svmlight(self, x, labels, one_based):
        source, label_file, out = self.path("in.npz"), self.path("in.labels"), self.path("out.svm")
        scipy.sparse.save_npz(source, x, compressed=False)
        with open(label_file, "w") as f:
            f.write("".join("%s\n" % label for label in labels))
        args = ["convert", source, out, "--labels", label_file] + (["--one-based"] if one_based else [])
        result = run_bagel(*args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return load_svmlight_file(out, zero_based=not one_based, n_features=x.shape[1])

    def assert_matrices_equal(self, x, expected):
        self.assertEqual(x.shape, expected.shape)
        np.testing.assert_array_equal(x.indptr, expected.indptr)
        np.testing.assert_array_equal(x.indices, expected.indices)
        np.testing.assert_array_equal(x.data.astype(np.float32), expected.data)

    def test_npz_to_svmlight_reads_back_as_the_original(self):
        rng = np.random.default_rng(1)
        for one_based in (False, True):
            x = self.random_matrix(rng, 80, 70, 0.15).astype(np.float32)
            labels = rng.choice([-1, 1, 2.5], size=x.shape[0])
            with self.subTest(one_based=one_based):
                x_back, y_back = self.npz_to_svmlight(x, labels, one_based)
                self.assert_matrices_equal(x_back, x)
                np.testing.assert_array_equal(y_back, labels)

    def test_string_labels_for_svmlight_output_blame_the_labels_file(self):
        # The error had named the output file ("out.svm: row 1").
        scipy.sparse.save_npz(self.path("s.npz"), scipy.sparse.csr_matrix(np.eye(3, dtype=np.float32)))
        with open(self.path("s.labels"), "w") as f:
            f.write("1\n2\nspam\n")
        out = self.path("s.svm")
        r = run_bagel("convert", self.path("s.npz"), out, "--labels", self.path("s.labels"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(self.path("s.labels") + ": line 3: label 'spam' is not a number", r.stderr)
        self.assertFalse(os.path.exists(out))

    def test_npz_with_unsorted_and_repeated_indices_is_written_canonical(self):
        # Row 0 unsorted, row 1 with column 2 twice: scipy's canonical form
        # sorts and sums them, and so must the written file.
        x = scipy.sparse.csr_matrix(
            (np.array([3.0, 1.0, 2.0, 0.5, 0.25, 4.0], dtype=np.float32),
             np.array([4, 0, 2, 2, 2, 5], dtype=np.int32),
             np.array([0, 3, 6], dtype=np.int32)), shape=(2, 7))
        x_back, _ = self.npz_to_svmlight(x, [0, 1], one_based=False)
        canonical = x.copy()
        canonical.sum_duplicates()
        self.assert_matrices_equal(x_back, canonical)

    def test_svmlight_to_svmlight_keeps_labels_and_values(self):
        source = os.path.join(SKLEARN_DATA, "svmlight_classification.txt")
        out = self.path("copy.svm")
        result = run_bagel("convert", source, out)
        self.assertEqual(result.returncode, 0, result.stderr)
        x_sk, y_sk = load_svmlight_file(source)
        x, y = load_svmlight_file(out, zero_based=True, n_features=x_sk.shape[1])
        self.assert_matrices_equal(x, x_sk.astype(np.float32))
        np.testing.assert_array_equal(y, y_sk)


if __name__ == "__main__":
    unittest.main()


class SvmlightBaseAcrossFiles(unittest.TestCase):
    """The train, valid and predict files of one model are read with one
    index base, as load_svmlight_files reads several files: with "auto", a
    valid file that happens to hold no index 0 after a zero-based training
    file is zero-based too (read alone it would be one-based, every column
    shifted by one); the model records the base, and predict's "auto" reads
    with it."""

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name
        rng = np.random.default_rng(0)
        x = scipy.sparse.random(300, 12, density=0.3, format="csr", random_state=1,
                                data_rvs=lambda n: rng.integers(1, 4, n).astype(float))
        self.y = (x[:, 0].toarray().ravel() + x[:, 1].toarray().ravel() > 2).astype(int)
        self.x = x
        # Valid rows without column 0 (the training rows have it).
        v = x[200:].tolil()
        v[:, 0] = 0
        self.v = v.tocsr()
        self.v.eliminate_zeros()
        assert x[:200, 0].nnz > 0

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)

    def run_train(self, name, cfg, *args):
        """bagel train on CFG, written to NAME.json, with ARGS added."""
        cfg_path = self.path(name + ".json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f)
        return run_bagel("train", "--config", cfg_path, "--quiet", *args)

    def train(self, name, train_base, valid_base, train_zero_based=True, valid_zero_based=True):
        tr, va = self.path(name + "-tr.svm"), self.path(name + "-va.svm")
        dump_svmlight_file(self.x[:200], self.y[:200], tr, zero_based=train_zero_based)
        dump_svmlight_file(self.v, self.y[200:], va, zero_based=valid_zero_based)
        cfg = {"train": {"features": tr, "zero_based": train_base},
               "valid": {"features": va, "zero_based": valid_base},
               "output": self.path(name),
               "optimizer": {"epochs": 3, "learning_rate": 0.1, "threads": 1}}
        result = self.run_train(name, cfg)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.path(name), "model.json")) as f:
            model = json.load(f)
        weight = np.load(os.path.join(self.path(name), "weight.npy"))
        return model, weight, va

    def test_valid_and_predict_follow_the_zero_based_training_file(self):
        auto, w_auto, va = self.train("auto", "auto", "auto")
        given, w_given, _ = self.train("given", "true", "true")
        np.testing.assert_array_equal(w_auto, w_given)
        self.assertEqual(auto["training"]["valid_metrics"], given["training"]["valid_metrics"])
        self.assertEqual(auto["config"]["train"]["zero_based"], "true")
        self.assertEqual(auto["config"]["valid"]["zero_based"], "true")
        outputs = {}
        for name, extra in (("auto", []), ("true", ["--zero-based", "true"])):
            out = self.path("pred-%s.csv" % name)
            result = run_bagel("predict", "-m", self.path("auto"), "-i", va, "-o", out,
                               "--proba", "--quiet", *extra)
            self.assertEqual(result.returncode, 0, result.stderr)
            with open(out) as f:
                outputs[name] = f.read()
        self.assertEqual(outputs["auto"], outputs["true"])

    def test_a_valid_file_with_index_0_makes_a_one_based_training_file_zero_based(self):
        # The training file written one-based (no index 0), the valid file
        # zero-based with index 0: both zero-based, as
        # load_svmlight_files([train, valid]) reads them.
        self.v = self.x[200:]
        self.assertGreater(self.v[:, 0].nnz, 0)
        joint, w_joint, va = self.train("joint", "auto", "auto", False, True)
        given, w_given, _ = self.train("given", "true", "true", False, True)
        np.testing.assert_array_equal(w_joint, w_given)
        self.assertEqual(joint["config"]["train"]["zero_based"], "true")
        sk_train, _, _, _ = sklearn.datasets.load_svmlight_files([self.path("joint-tr.svm"), va])
        self.assertEqual(w_joint.shape[0], sk_train.shape[1])

    def test_a_warm_start_reads_with_the_base_of_its_model(self):
        _, w_start, va = self.train("start", "auto", "auto")  # zero-based, recorded "true"
        cfg = {"train": {"features": va}, "output": self.path("warm"),
               "optimizer": {"epochs": 1, "learning_rate": 1e-9, "schedule": "constant",
                             "average": False, "shuffle": False, "threads": 1}}
        result = self.run_train("warm", cfg, "--init", self.path("start"))
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.path("warm"), "model.json")) as f:
            self.assertEqual(json.load(f)["config"]["train"]["zero_based"], "true")
        w_warm = np.load(os.path.join(self.path("warm"), "weight.npy"))
        np.testing.assert_allclose(w_warm, w_start, atol=1e-6)

    def test_a_base_given_for_valid_holds_for_train(self):
        # Train without index 0, valid said to be zero-based: both are.
        self.v = self.x[200:]
        x0 = self.x.tolil()
        x0[:, 0] = 0
        self.x = x0.tocsr()
        self.x.eliminate_zeros()
        given, w_given, _ = self.train("valid-given", "auto", "true")
        both, w_both, _ = self.train("both-given", "true", "true")
        self.assertEqual(given["config"]["train"]["zero_based"], "true")
        np.testing.assert_array_equal(w_given, w_both)
        self.assertEqual(given["training"]["valid_metrics"], both["training"]["valid_metrics"])

    def test_a_one_based_valid_given_against_a_training_file_with_index_0_is_an_error(self):
        tr, va = self.path("e-tr.svm"), self.path("e-va.svm")
        dump_svmlight_file(self.x[:200], self.y[:200], tr, zero_based=True)
        dump_svmlight_file(self.v, self.y[200:], va, zero_based=False)
        result = self.run_train("e", {"train": {"features": tr},
                                      "valid": {"features": va, "zero_based": "false"},
                                      "output": self.path("e")})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("valid.zero_based: is false (one-based indices), but the training file holds "
                      "an index 0", result.stderr)
        self.assertFalse(os.path.exists(self.path("e")))

    def test_two_different_bases_given_are_an_error(self):
        tr, va = self.path("d-tr.svm"), self.path("d-va.svm")
        dump_svmlight_file(self.x[:200], self.y[:200], tr, zero_based=True)
        dump_svmlight_file(self.v, self.y[200:], va, zero_based=False)
        result = self.run_train("d", {"train": {"features": tr, "zero_based": "true"},
                                      "valid": {"features": va, "zero_based": "false"},
                                      "output": self.path("d")})
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("valid.zero_based: is false but train.zero_based is true", result.stderr)

    def test_a_model_trained_on_npz_records_no_base(self):
        # A base in the config applies to svmlight only: an .npz-trained
        # model must not make predict shift svmlight files by it.
        npz = self.path("x.npz")
        scipy.sparse.save_npz(npz, self.x[:200].astype(np.float32))
        labels = self.path("x.labels")
        with open(labels, "w") as f:
            f.write("\n".join(str(v) for v in self.y[:200]) + "\n")
        result = self.run_train("n", {"train": {"features": npz, "labels": labels,
                                                "zero_based": "false"},
                                      "output": self.path("n"), "optimizer": {"epochs": 2}})
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(os.path.join(self.path("n"), "model.json")) as f:
            self.assertEqual(json.load(f)["config"]["train"]["zero_based"], "auto")

    def test_a_file_with_index_0_after_a_one_based_model_is_refused(self):
        model, _, _ = self.train("one", "auto", "false", False, False)
        self.assertEqual(model["config"]["train"]["zero_based"], "false")
        zero = self.path("zero.svm")
        dump_svmlight_file(self.x[200:], self.y[200:], zero, zero_based=True)
        result = run_bagel("predict", "-m", self.path("one"), "-i", zero, "--quiet")
        self.assertEqual(result.returncode, 1)
        # Read block by block (the model's base is known before line 1), the
        # error names the first line with an index 0.
        line = int(np.flatnonzero(self.x[200:][:, 0].toarray().ravel())[0]) + 1
        self.assertIn(f"{zero}:{line}: index 0 in ", result.stderr)
        self.assertIn("it is read one-based, as the model's training svmlight was", result.stderr)
        self.assertIn("--zero-based", result.stderr)
        result = run_bagel("predict", "-m", self.path("one"), "-i", zero, "--zero-based", "true",
                           "--quiet")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_one_based_file_too_wide_counts_its_columns_one_based(self):
        self.train("one", "auto", "false", False, False)
        wide = self.path("wide.svm")
        with open(wide, "w") as f:
            f.write("1 %d:1\n" % (self.x.shape[1] + 1))  # one-based: one column past the model's
        result = run_bagel("predict", "-m", self.path("one"), "-i", wide, "--quiet")
        self.assertEqual(result.returncode, 1)
        self.assertIn("%s:1: this row has %d feature columns (as its largest index gives them: index + 1 "
                      "zero-based, the index one-based) but the model has %d"
                      % (wide, self.x.shape[1] + 1, self.x.shape[1]), result.stderr)

    def test_a_warm_start_from_a_one_based_model_says_why_index_0_is_refused(self):
        self.train("one", "auto", "false", False, False)
        zero = self.path("zero.svm")
        dump_svmlight_file(self.x[200:], self.y[200:], zero, zero_based=True)
        cfg = {"train": {"features": zero}, "output": self.path("warm"),
               "optimizer": {"epochs": 1, "threads": 1}}
        result = self.run_train("warm", cfg, "--init", self.path("one"))
        self.assertEqual(result.returncode, 1)
        self.assertIn(zero + ":", result.stderr)
        self.assertIn("it was read one-based, as the model given as init (%s) was trained"
                      % self.path("one"), result.stderr)
        self.assertIn("set train.zero_based", result.stderr)
        self.assertFalse(os.path.exists(self.path("warm")))
        # A valid file said to be one-based is the config's doing, not the model's.
        one = self.path("one-based.svm")
        dump_svmlight_file(self.v, self.y[200:], one, zero_based=False)
        cfg["train"] = {"features": one}
        cfg["valid"] = {"features": zero, "zero_based": "false"}
        result = self.run_train("warm", cfg, "--init", self.path("one"))
        self.assertEqual(result.returncode, 1)
        self.assertIn(zero + ":", result.stderr)
        self.assertNotIn("as the model given as init", result.stderr)
        del cfg["valid"]
        cfg["train"] = {"features": zero, "zero_based": "true"}
        result = self.run_train("warm", cfg, "--init", self.path("one"))
        self.assertEqual(result.returncode, 0, result.stderr)
