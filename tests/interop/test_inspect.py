"""`bagel inspect` and `bagel predict --top-k/--threshold` against numpy, on
models trained by `bagel train` on the example data (Debian fortunes):

- the largest and smallest weights of each class are numpy's argsort of
  weight.npy (ties by feature index), named by the CountVectorizer vocabulary
  of the same text; the non-zero counts, L1/L2 norms, biases and largest |w|
  are numpy's;
- --explain's contributions x * w, with the bias, sum to the logit numpy
  computes from weight.npy and bias.npy, and the predicted class is numpy's;
- --top-k is numpy's argsort of predict --proba's probabilities (ties in class
  order), --threshold keeps those >= P, byte for byte the same output for any
  thread count and every input path (npz stored or compressed, svmlight file
  or stream);
- bad input gets one error line: a vocabulary of the wrong length, a row
  outside the input, a missing model, bad options.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_inspect
"""

import csv
import importlib.util
import io
import json
import os
import shutil
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file
from sklearn.feature_extraction.text import CountVectorizer

from cli_helpers import run_bagel, train_model

ROOT = Path(os.environ.get("BAGEL_ROOT", Path(__file__).parents[2])).resolve()
DATA = ROOT / "data"
FORTUNES = Path("/usr/share/games/fortunes")  # Debian's fortunes (scripts/deps.sh)


def example_config(task, output, **optimizer):
    """configs/example.json on data/TASK, with absolute paths."""
    config = json.loads((ROOT / "configs/example.json").read_text())
    for split in ("train", "valid"):
        config[split] = {"features": str(DATA / task / f"{split}.npz"),
                         "labels": str(DATA / task / f"{split}.labels")}
    config["optimizer"].update(optimizer)
    config["output"] = str(output)
    return config


def fortunes_vocabulary(task_categories):
    """The CountVectorizer vocabulary of the example task's training text,
    rebuilt from the fortunes as scripts/make_example_data.py builds it."""
    spec = importlib.util.spec_from_file_location("make_example_data",
                                                  ROOT / "scripts/make_example_data.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    splits = maker.split_task(*maker.load_task(getattr(maker, task_categories)))
    vectorizer = CountVectorizer(lowercase=True, min_df=maker.MIN_DF).fit(splits["train"][0])
    return list(vectorizer.get_feature_names_out())


def first_by(values, descending):
    """Feature order by value, ties by feature index (what inspect promises)."""
    index = np.arange(len(values))
    return np.lexsort((index, -values if descending else values))


def inspect_json(*args):
    proc = run_bagel("inspect", *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def numpy_logits(model_dir, x):
    """x @ E + b in float64 from the float32 arrays of the model."""
    e = np.load(model_dir / "weight.npy").astype(np.float64)
    b = np.load(model_dir / "bias.npy").astype(np.float64)
    return x.astype(np.float64) @ e + b


def numpy_proba(z, output):
    """The probabilities of model.json's `output` head from the logits z."""
    if output == "sigmoid":
        p = 1 / (1 + np.exp(-z[:, 0]))
        return np.column_stack([1 - p, p])
    if output == "ovr":  # one-vs-rest: the sigmoids, normalised
        p = 1 / (1 + np.exp(-z))
        return p / p.sum(1, keepdims=True)
    assert output == "softmax", output
    p = np.exp(z - z.max(1, keepdims=True))
    return p / p.sum(1, keepdims=True)


class InspectWeights(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-inspect-")
        cls.dir = Path(cls._tmp.name)
        cls.multi = train_model(cls.dir, example_config("fortunes-multi", cls.dir / "multi"),
                                "multi.json")
        cls.sparse = train_model(cls.dir, example_config("fortunes-multi", cls.dir / "l1", l1=1e-4),
                                 "l1.json")
        cls.binary = train_model(cls.dir, example_config("fortunes-binary", cls.dir / "binary"),
                                 "binary.json")
        cls.vocab = DATA / "fortunes-multi/vocab.txt"
        cls.terms = cls.vocab.read_text(encoding="utf-8").splitlines()

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def check_top_features(self, report, model_dir, terms, top):
        w = np.load(model_dir / "weight.npy")
        for entry in report["outputs"]:
            column = w[:, entry["output"]]
            for key, descending in (("largest", True), ("smallest", False)):
                expected = first_by(column, descending)[:top]
                got = [f["feature"] for f in entry[key]]
                self.assertEqual(got, expected.tolist(), f"{entry['positive_favours']} {key}")
                self.assertEqual([np.float32(f["weight"]) for f in entry[key]],
                                 column[expected].tolist())
                if terms is not None:
                    self.assertEqual([f["term"] for f in entry[key]],
                                     [terms[j] for j in expected])

    def test_top_features_are_numpys_argsort_named_by_the_vocabulary(self):
        report = inspect_json("--model", self.multi, "--top", 15, "--vocabulary", self.vocab)
        self.assertEqual(report["vocabulary"], str(self.vocab))
        self.assertEqual(len(report["outputs"]), 6)
        self.check_top_features(report, self.multi, self.terms, 15)

    def test_countvectorizer_vocabulary_in_the_model_folder_names_the_features(self):
        if not FORTUNES.is_dir():
            self.skipTest("Debian's fortunes package is not installed")
        terms = fortunes_vocabulary("MULTI_CATEGORIES")
        self.assertEqual(terms, self.terms, "data/fortunes-multi is not the fortunes' CountVectorizer")
        model = self.dir / "with-vocabulary"
        shutil.copytree(self.multi, model)
        (model / "vocabulary.txt").write_text("".join(t + "\n" for t in terms), encoding="utf-8")
        report = inspect_json("--model", model, "--top", 5)
        self.assertEqual(report["vocabulary"], str(model / "vocabulary.txt"))
        self.check_top_features(report, model, terms, 5)
        startrek = report["outputs"][report["classes"].index("startrek")]
        # What the model learnt is about the text: a sanity check of the names.
        self.assertIn("stardate", [f["term"] for f in startrek["largest"]])

    def test_without_a_vocabulary_features_are_column_indices(self):
        report = inspect_json("--model", self.multi, "--top", 3)
        self.assertIsNone(report["vocabulary"])
        self.assertNotIn("term", report["outputs"][0]["largest"][0])
        self.check_top_features(report, self.multi, None, 3)
        text = run_bagel("inspect", "--model", self.multi, "--top", 3).stdout
        best = first_by(np.load(self.multi / "weight.npy")[:, 0], True)[0]
        self.assertIn(f"#{best}", text)

    def test_statistics_are_numpys_with_l1_zeros(self):
        report = inspect_json("--model", self.sparse, "--top", 0)
        w = np.load(self.sparse / "weight.npy")
        b = np.load(self.sparse / "bias.npy")
        self.assertLess(np.count_nonzero(w), w.size)  # L1 made exact zeros
        w64 = w.astype(np.float64)
        for stats, column in [(report["overall"], w64.ravel())] + [
                (o, w64[:, o["output"]]) for o in report["outputs"]]:
            self.assertEqual(stats["weights"], column.size)
            self.assertEqual(stats["nonzero"], np.count_nonzero(column))
            self.assertAlmostEqual(stats["l1"], np.abs(column).sum(), delta=1e-12 * column.size)
            self.assertAlmostEqual(stats["l2"], np.linalg.norm(column), delta=1e-12 * column.size)
            self.assertEqual(np.float32(stats["max_abs"]), np.float32(np.abs(column).max()))
        self.assertEqual([np.float32(o["bias"]) for o in report["outputs"]], b.tolist())
        self.assertEqual(report["outputs"][0]["largest"], [])

    def test_a_share_neither_none_nor_all_never_reads_as_either(self):
        # One zero weight among thousands: ">99.9%" non-zero, not "100.0%".
        model = Path(self._tmp.name) / "one-zero"
        shutil.copytree(self.multi, model)
        w = np.load(model / "weight.npy")
        w[5, 0] = 0
        np.save(model / "weight.npy", w)
        proc = run_bagel("inspect", "--model", model, "--top", 0)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"{w.size} weights, {w.size - 1} non-zero (>99.9%)", proc.stdout)
        rows = w.shape[0]
        self.assertIn(f"{rows} weights, {rows - 1} non-zero (>99.9%)", proc.stdout)  # its class
        self.assertIn(f"{rows} weights, {rows} non-zero (100.0%)", proc.stdout)  # the others

    def test_training_summary_is_model_jsons(self):
        report = inspect_json("--model", self.sparse, "--top", 0)
        meta = json.loads((self.sparse / "model.json").read_text())
        summary = report["training"]
        self.assertEqual(summary["l1"], meta["config"]["optimizer"]["l1"])
        self.assertEqual(summary["l2"], meta["config"]["optimizer"]["l2"])
        self.assertEqual(summary["epochs_run"], meta["training"]["epochs_run"])
        self.assertEqual(summary["learning_rate"], meta["training"]["learning_rate"])
        self.assertEqual(summary["train_rows"], meta["training"]["train_rows"])
        self.assertEqual(summary["valid_accuracy"], meta["training"]["valid_metrics"]["accuracy"])
        self.assertEqual(report["classes"], meta["classes"])

    def test_binary_models_have_one_vector_either_class_selects(self):
        meta = json.loads((self.binary / "model.json").read_text())
        vocab = DATA / "fortunes-binary/vocab.txt"
        for name in meta["classes"]:
            report = inspect_json("--model", self.binary, "--top", 4, "--class", name,
                                  "--vocabulary", vocab)
            self.assertEqual(len(report["outputs"]), 1)
            self.assertEqual(report["outputs"][0]["positive_favours"], meta["classes"][1])
            self.assertEqual(report["outputs"][0]["negative_favours"], meta["classes"][0])
            self.check_top_features(report, self.binary, vocab.read_text().splitlines(), 4)
        text = run_bagel("inspect", "--model", self.binary).stdout
        self.assertIn(f"positive weights favour {meta['classes'][1]}, negative ones "
                      f"{meta['classes'][0]}", text)

    def test_class_selects_outputs_in_the_order_given(self):
        report = inspect_json("--model", self.multi, "--class", "sports", "--class", "food",
                              "--class", "sports")
        self.assertEqual([o["positive_favours"] for o in report["outputs"]], ["sports", "food"])
        self.assertEqual([o["output"] for o in report["outputs"]],
                         [report["classes"].index("sports"), report["classes"].index("food")])

    def test_text_report_is_aligned(self):
        text = run_bagel("inspect", "--model", self.multi, "--top", 4, "--vocabulary",
                         self.vocab, "--class", "startrek").stdout
        lines = text.splitlines()
        table = lines[lines.index(next(l for l in lines if l.strip().startswith("largest"))):]
        table = [l for l in table if l.strip()][:5]
        # Every row's weight columns end at the same place.
        ends = {len(l) for l in table[1:]}
        self.assertEqual(len(ends), 1, "\n".join(table))


class Explain(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-explain-")
        cls.dir = Path(cls._tmp.name)
        cls.models = {
            task: train_model(cls.dir, example_config(task, cls.dir / task), f"{task}.json")
            for task in ("fortunes-multi", "fortunes-binary")}

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def explain(self, task, rows, *extra):
        args = ["--model", self.models[task], "--explain", "--input",
                DATA / task / "test.npz", "--top", 100000, *extra]
        for r in rows:
            args += ["--row", r]
        return inspect_json(*args)["rows"]

    def check_rows(self, task, rows, *extra):
        model = self.models[task]
        x = sp.load_npz(DATA / task / "test.npz").tocsr().astype(np.float32)
        z = numpy_logits(model, x[rows])
        meta = json.loads((model / "model.json").read_text())
        p = numpy_proba(z, meta["output"])
        classes = meta["classes"]
        w = np.load(model / "weight.npy")
        explained = self.explain(task, rows, *extra)
        self.assertEqual([e["row"] for e in explained], rows)
        for i, e in enumerate(explained):
            order = first_by(p[i], True)
            self.assertEqual(e["predicted"], classes[order[0]])
            self.assertEqual(e["runner_up"], classes[order[1]])
            self.assertAlmostEqual(e["probability"], p[i, order[0]], delta=1e-6)
            column = 0 if z.shape[1] == 1 else order[0]
            logit = z[i, column]
            contributions = e["contributions"]
            self.assertEqual(len(contributions), x[rows[i]].nnz)
            bias = np.float64(np.float32(e["bias"]))  # floats are written as float32's shortest
            self.assertEqual(bias, np.load(model / "bias.npy")[column])
            scale = abs(bias) + sum(abs(c["contribution"]) for c in contributions)
            # Every x_j * w_j, exactly, and the sum with the bias is numpy's logit.
            for c in contributions:
                weight = w[c["feature"], column]
                self.assertEqual(np.float32(c["weight"]), weight)
                self.assertEqual(c["contribution"],
                                 np.float64(np.float32(c["value"])) * np.float64(weight))
                self.assertEqual(np.float32(c["value"]), x[rows[i], c["feature"]])
            total = bias + sum(c["contribution"] for c in contributions)
            self.assertAlmostEqual(total, e["contribution_sum"], delta=1e-12 * scale)
            self.assertAlmostEqual(total, logit, delta=1e-6 * scale)
            self.assertAlmostEqual(np.float64(np.float32(e["logit"])), logit, delta=1e-6 * scale)
            margin = e["versus_bias"] + sum(c["versus_runner_up"] for c in contributions)
            if z.shape[1] == 1:
                expected_margin = logit if order[0] == 1 else -logit
            else:
                expected_margin = z[i, order[0]] - z[i, order[1]]
            self.assertAlmostEqual(margin, expected_margin, delta=2e-6 * scale)
        return explained

    def test_multiclass_contributions_sum_to_numpys_logit(self):
        explained = self.check_rows("fortunes-multi", [0, 3, 17, 200, 494])
        for e in explained:
            keys = [abs(c["contribution"]) for c in e["contributions"]]
            self.assertEqual(keys, sorted(keys, reverse=True))

    def test_binary_contributions_sum_to_numpys_score(self):
        explained = self.check_rows("fortunes-binary", [1, 2, 50, 300])
        classes = json.loads((self.models["fortunes-binary"] / "model.json").read_text())["classes"]
        self.assertEqual({e["logit_of"] for e in explained}, {classes[1]})
        self.assertEqual({e["predicted"] for e in explained}, set(classes))  # both sides checked

    def test_versus_runner_up_orders_by_the_difference(self):
        explained = self.check_rows("fortunes-multi", [5, 6], "--versus-runner-up")
        for e in explained:
            keys = [abs(c["versus_runner_up"]) for c in e["contributions"]]
            self.assertEqual(keys, sorted(keys, reverse=True))

    def test_svmlight_input_explains_the_same(self):
        x = sp.load_npz(DATA / "fortunes-multi/test.npz")
        svm = self.dir / "test.svm"
        dump_svmlight_file(x, np.zeros(x.shape[0]), svm, zero_based=True)
        args = ["--model", self.models["fortunes-multi"], "--explain", "--top", 3, "--row", 7]
        from_npz = inspect_json(*args, "--input", DATA / "fortunes-multi/test.npz")["rows"]
        from_svm = inspect_json(*args, "--input", svm, "--zero-based", "true")["rows"]
        self.assertEqual(from_npz, from_svm)

    def test_a_one_based_models_columns_are_said_to_be_one_less_than_its_features(self):
        # Column k is feature k+1 of the one-based svmlight the model trained on.
        one_based = self.dir / "one-based.svm"
        one_based.write_text("0 1:1 2:1\n1 3:1 4:1\n0 1:2\n1 4:1\n")
        model = train_model(self.dir, {"train": {"features": str(one_based)}, "output": "one-based"},
                            "one-based.json")
        note = "#k is feature k+1 of the one-based training svmlight"
        weights = run_bagel("inspect", "-m", model)
        self.assertEqual(weights.returncode, 0, weights.stderr)
        self.assertIn(note, weights.stdout)
        row = self.dir / "row.svm"
        row.write_text("0 1:5\n")
        explained = run_bagel("inspect", "-m", model, "--explain", "-i", row, "--row", 0)
        self.assertEqual(explained.returncode, 0, explained.stderr)
        self.assertRegex(explained.stdout, r"\n  #0 +5 ")
        self.assertIn("(#k is column k from 0: feature k+1 of the one-based svmlight)", explained.stdout)
        zero_based = run_bagel("inspect", "-m", self.models["fortunes-multi"])
        self.assertIn("no vocabulary (features by column index)\n", zero_based.stdout)
        # JSON said nothing of it: a program read "feature": 0 as the file's feature 0.
        report = inspect_json("-m", model)
        self.assertEqual(report["training_svmlight_base"], 1)
        largest = {f["feature"] for o in report["outputs"] for f in o["largest"]}
        self.assertTrue(largest <= {0, 1, 2, 3}, largest)  # columns from 0: file features 1-4
        explained = inspect_json("-m", model, "--explain", "-i", row, "--row", 0)
        self.assertEqual(explained["training_svmlight_base"], 1)
        self.assertEqual([c["feature"] for c in explained["rows"][0]["contributions"]], [0])
        zero = self.dir / "zero-based.svm"
        zero.write_text("0 0:1 1:1\n1 2:1 3:1\n0 0:2\n1 3:1\n")
        zero_model = train_model(self.dir, {"train": {"features": str(zero)}, "output": "zero-based"},
                                 "zero-based.json")
        self.assertEqual(inspect_json("-m", zero_model)["training_svmlight_base"], 0)
        npz_model = self.models["fortunes-multi"]
        self.assertIsNone(inspect_json("-m", npz_model)["training_svmlight_base"])
        self.assertIsNone(inspect_json("-m", npz_model, "--explain", "-i",
                                       DATA / "fortunes-multi/test.npz", "--row", 0)
                          ["training_svmlight_base"])

    def test_text_lists_the_largest_contributions_by_term(self):
        model = self.models["fortunes-multi"]
        vocab = (DATA / "fortunes-multi/vocab.txt").read_text().splitlines()
        proc = run_bagel("inspect", "--model", model, "--explain", "--input",
                         DATA / "fortunes-multi/test.npz", "--row", 3, "--top", 2,
                         "--vocabulary", DATA / "fortunes-multi/vocab.txt")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        first = self.explain("fortunes-multi", [3])[0]["contributions"][0]
        table = proc.stdout.splitlines()
        header = next(i for i, l in enumerate(table) if l.strip().startswith("feature"))
        self.assertEqual(table[header + 1].split()[0], vocab[first["feature"]])
        self.assertIn("(bias)", proc.stdout)


class ExplainText(unittest.TestCase):
    """--explain on a model trained on raw text takes raw text, read as
    predict reads it (it had read the file as svmlight and failed on its
    first __label__): the rows are CountVectorizer's transform with the
    model's vocabulary, the contributions are named by their terms, and with
    the bias they sum to numpy's logit."""

    TRAIN = ["__label__sky blue clouds and rain today", "__label__sea waves and salty water",
             "__label__land hills and green fields", "__label__sky grey clouds, more rain",
             "__label__sea the water is salty and blue", "__label__land fields of green grass"] * 3
    DOCS = ["rain and clouds over the sea", "Green hills, GREEN fields", "salty waves and rain",
            "words never seen"]

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-explain-text-")
        cls.dir = Path(cls._tmp.name)
        (cls.dir / "train.ft").write_text("".join(line + "\n" for line in cls.TRAIN))
        cls.model = train_model(cls.dir, {"train": {"text": str(cls.dir / "train.ft")},
                                          "output": str(cls.dir / "m")})

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def test_raw_text_rows_are_explained_by_term_and_sum_to_numpys_logit(self):
        labelled = self.dir / "new.ft"
        labelled.write_text("".join(f"__label__sky {d}\n" for d in self.DOCS))
        plain = self.dir / "new.txt"
        plain.write_text("".join(d + "\n" for d in self.DOCS))
        terms = (self.model / "vocabulary.txt").read_text().splitlines()
        x = CountVectorizer(vocabulary=terms).transform(self.DOCS).astype(np.float32)
        z = numpy_logits(self.model, x)
        meta = json.loads((self.model / "model.json").read_text())
        classes, w = meta["classes"], np.load(self.model / "weight.npy")
        predicted = run_bagel("predict", "-m", self.model, "-i", labelled, "-q")
        self.assertEqual(predicted.returncode, 0, predicted.stderr)
        rows = list(range(len(self.DOCS)))
        args = ["--model", self.model, "--explain", "--top", 1000, *[a for r in rows for a in ("--row", r)]]
        explained = inspect_json(*args, "--input", labelled)["rows"]
        self.assertEqual(inspect_json(*args, "--input", plain)["rows"], explained)
        self.assertEqual(inspect_json(*args, "--input", labelled, "--text-format", "fasttext")["rows"],
                         explained)
        self.assertEqual([e["predicted"] for e in explained], predicted.stdout.splitlines())
        for i, e in enumerate(explained):
            column = int(np.argmax(z[i])) if z.shape[1] > 1 else 0
            self.assertEqual(e["predicted"], classes[int(np.argmax(z[i]))])
            contributions = e["contributions"]
            self.assertEqual(sorted(c["term"] for c in contributions),
                             sorted(terms[j] for j in x[i].indices))
            for c in contributions:
                self.assertEqual(c["term"], terms[c["feature"]])
                self.assertEqual(np.float32(c["value"]), x[i, c["feature"]])
                self.assertEqual(np.float32(c["weight"]), w[c["feature"], column])
            total = e["bias"] + sum(c["contribution"] for c in contributions)
            self.assertAlmostEqual(total, z[i, column], delta=1e-5)
        self.assertEqual(explained[3]["contributions"], [])  # no known word: the bias alone
        # The text table names the words too.
        proc = run_bagel("inspect", "--model", self.model, "--explain", "--input", labelled, "--row", 1)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("green", proc.stdout)

    def test_text_format_is_for_a_text_models_explain(self):
        proc = run_bagel("inspect", "--model", self.model, "--text-format", "lines")
        self.assertEqual((proc.returncode, proc.stderr.strip()),
                         (2, "bagel: error: --text-format: needs --explain"))
        proc = run_bagel("inspect", "--model", self.model, "--explain", "--input", self.dir / "train.ft",
                         "--row", 0, "--text-format", "bogus")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--text-format", proc.stderr)
        help_text = " ".join(run_bagel("inspect", "--help").stdout.split())
        self.assertIn("--text-format", help_text)


class TopK(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-topk-")
        cls.dir = Path(cls._tmp.name)
        cls.model = train_model(cls.dir, example_config("fortunes-multi", cls.dir / "multi"),
                                "multi.json")
        cls.test = DATA / "fortunes-multi/test.npz"
        proc = run_bagel("predict", "-m", cls.model, "-i", cls.test, "--proba", "-q")
        assert proc.returncode == 0, proc.stderr
        rows = list(csv.reader(io.StringIO(proc.stdout)))
        cls.classes = rows[0]
        cls.proba_text = rows[1:]
        cls.proba = np.array(cls.proba_text, dtype=np.float64)

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def predict_lines(self, *args, model=None, input_path=None):
        proc = run_bagel("predict", "-m", model or self.model, "-i", input_path or self.test,
                         "-q", *args)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def expected(self, k, threshold):
        lines = []
        for p, text in zip(self.proba, self.proba_text):
            order = [c for c in first_by(p, True) if p[c] >= threshold][:k]
            lines.append(",".join(f"{self.classes[c]},{text[c]}" for c in order))
        return "".join(line + "\n" for line in lines)

    def test_top_k_is_numpys_argsort_of_the_probabilities(self):
        for k in (1, 2, 3, 6, 50):
            self.assertEqual(self.predict_lines("--top-k", k), self.expected(k, 0.0), f"k={k}")

    def test_top_1_is_the_predicted_class(self):
        classes = self.predict_lines().splitlines()
        top = [line.split(",")[0] for line in self.predict_lines("--top-k", 1).splitlines()]
        self.assertEqual(top, classes)

    def test_threshold_keeps_classes_at_or_above_it(self):
        self.assertEqual(self.predict_lines("--threshold", 0.2), self.expected(99, 0.2))
        self.assertEqual(self.predict_lines("--threshold", 0.3, "--top-k", 1),
                         self.expected(1, 0.3))
        high = self.predict_lines("--threshold", 0.9)
        self.assertEqual(high, self.expected(99, 0.9))
        self.assertIn("\n\n", "\n" + high)  # rows with no class that sure: empty lines
        # A threshold equal to a probability keeps that class (>=, as fastText).
        p = float(self.proba_text[0][0])
        first = self.predict_lines("--threshold", self.proba_text[0][0]).splitlines()[0]
        self.assertIn(f"{self.classes[0]},{self.proba_text[0][0]}", first)
        self.assertEqual(len(first.split(",")) // 2, int((self.proba[0] >= p).sum()))

    def test_tsv_format_and_quoted_class_names(self):
        tsv = self.predict_lines("--top-k", 2, "--format", "tsv")
        self.assertEqual(tsv, self.expected(2, 0.0).replace(",", "\t"))
        folder = self.dir / "quoted"
        folder.mkdir()
        x = sp.load_npz(DATA / "fortunes-binary/train.npz")
        names = {"computers": 'bits, "bytes"', "men-women": "people"}
        labels = (DATA / "fortunes-binary/train.labels").read_text().split()
        (folder / "train.labels").write_text("".join(names[l] + "\n" for l in labels))
        sp.save_npz(folder / "train.npz", x)
        model = train_model(folder, {"train": {"features": "train.npz", "labels": "train.labels"},
                                     "optimizer": {"epochs": 2}, "output": "model"})
        out = self.predict_lines("--top-k", 2, model=model,
                                 input_path=DATA / "fortunes-binary/test.npz")
        rows = list(csv.reader(io.StringIO(out)))
        self.assertTrue(all(len(r) == 4 and set(r[0::2]) == set(names.values()) for r in rows))
        proba = list(csv.reader(io.StringIO(self.predict_lines(
            "--proba", model=model, input_path=DATA / "fortunes-binary/test.npz"))))
        header = proba[0]
        for r, p in zip(rows, proba[1:]):
            self.assertEqual(r[1], p[header.index(r[0])])
            self.assertGreaterEqual(float(r[1]), float(r[3]))

    def test_output_is_the_same_for_any_thread_count_and_input_path(self):
        # Enough non-zeros for predict to go parallel (> 2^18).
        gen = self.dir / "gen"
        gen.mkdir()
        proc = run_bagel("generate", gen / "train.npz", "--labels-out", gen / "train.labels",
                         "--rows", 6000, "--features", 5000, "--nnz-per-row", 60, "--classes", 5)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        model = train_model(gen, {"train": {"features": "train.npz", "labels": "train.labels"},
                                  "optimizer": {"epochs": 1, "learning_rate": 0.01},
                                  "output": "model"})
        x = sp.load_npz(gen / "train.npz")
        sp.save_npz(gen / "compressed.npz", x, compressed=True)
        dump_svmlight_file(x, np.zeros(x.shape[0]), gen / "train.svm", zero_based=True)
        args = ("--top-k", 3, "--threshold", 0.1)
        reference = self.predict_lines(*args, "--threads", 1, model=model,
                                       input_path=gen / "train.npz")
        self.assertEqual(len(reference.splitlines()), 6000)
        for threads in (2, 0):
            self.assertEqual(self.predict_lines(*args, "--threads", threads, model=model,
                                                input_path=gen / "train.npz"), reference)
        self.assertEqual(self.predict_lines(*args, model=model, input_path=gen / "compressed.npz"),
                         reference)
        self.assertEqual(self.predict_lines(*args, "--zero-based", "true", model=model,
                                            input_path=gen / "train.svm"), reference)
        streamed = run_bagel("predict", "-m", model, "-i", "-", "--zero-based", "true", "-q",
                             *args, stdin=(gen / "train.svm").read_text())
        self.assertEqual(streamed.returncode, 0, streamed.stderr)
        self.assertEqual(streamed.stdout, reference)

    def test_metrics_are_unaffected(self):
        labels = DATA / "fortunes-multi/test.labels"
        plain, top = (self.dir / "plain.json", self.dir / "top.json")
        for out, extra in ((plain, []), (top, ["--top-k", 2])):
            proc = run_bagel("predict", "-m", self.model, "-i", self.test, "-l", labels,
                             "--metrics", out, "-q", *extra)
            self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(plain.read_text()), json.loads(top.read_text()))


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-inspect-errors-")
        cls.dir = Path(cls._tmp.name)
        cls.model = train_model(cls.dir, example_config("fortunes-multi", cls.dir / "multi",
                                                        epochs=1), "multi.json")
        cls.test = DATA / "fortunes-multi/test.npz"

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def assert_error(self, proc, status, *fragments):
        self.assertEqual(proc.returncode, status, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertTrue(proc.stderr.startswith("bagel: error: "), proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)

    def test_vocabulary_of_another_length_names_both(self):
        other = DATA / "fortunes-binary/vocab.txt"
        self.assert_error(run_bagel("inspect", "--model", self.model, "--vocabulary", other), 1,
                          f"{other}: has 2843 terms but the model in {self.model} has 3849 features")

    def test_vocabulary_errors_name_the_line(self):
        bad = self.dir / "bad-vocab.txt"
        terms = (DATA / "fortunes-multi/vocab.txt").read_text().splitlines()
        terms[9] = terms[3]
        bad.write_text("\n".join(terms) + "\n")
        self.assert_error(run_bagel("inspect", "--model", self.model, "--vocabulary", bad), 1,
                          f"{bad}:10: the term \"{terms[3]}\" is already on line 4")

    def test_a_row_outside_the_input_is_a_usage_error(self):
        rows = sp.load_npz(self.test).shape[0]
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain", "--input",
                                    self.test, "--row", rows), 2,
                          f"--row: {rows} is not a row of {self.test} ({rows} rows, numbered from 0)")
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain", "--input",
                                    self.test, "--row", "two"), 2, "--row")

    def test_a_missing_model_names_it(self):
        # A folder named on the command line that does not exist: a usage
        # error (exit 2), as a missing input file is.
        missing = self.dir / "no-such-model"
        self.assert_error(run_bagel("inspect", "--model", missing), 2, str(missing))

    def test_explain_options_must_go_together(self):
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain"), 2,
                          "--explain: needs --input")
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain", "--input",
                                    self.test), 2, "--explain: needs --row")
        self.assert_error(run_bagel("inspect", "--model", self.model, "--row", 1), 2,
                          "--row: needs --explain")
        # --zero-based alone was ignored (exit 0), unlike the other --explain options.
        for value in ("true", "false"):
            self.assert_error(run_bagel("inspect", "--model", self.model, "--zero-based", value), 2,
                              "--zero-based: needs --explain")
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain", "--input",
                                    self.test, "--row", 1, "--class", "food"), 2, "--class")

    def test_one_stream_for_the_input_and_the_vocabulary_is_a_usage_error(self):
        # Both read stdin: each got some of its bytes, and the error that
        # followed named neither option.
        for vocabulary in ("-", "/dev/stdin"):
            with self.subTest(vocabulary=vocabulary):
                proc = run_bagel("inspect", "-m", self.model, "--explain", "-i", "-",
                                 "--vocabulary", vocabulary, "--row", 0, stdin="0 1:1 2:1\n")
                self.assert_error(proc, 2, "--vocabulary: is standard input, and so is --input: "
                                           "both cannot be read from stdin")

    def test_an_unknown_class_lists_the_classes(self):
        self.assert_error(run_bagel("inspect", "--model", self.model, "--class", "pets"), 2,
                          "--class: 'pets' is not a class of the model (classes: computers, "
                          "food, love, politics, sports, startrek)")

    def test_an_input_of_another_width_is_refused(self):
        self.assert_error(run_bagel("inspect", "--model", self.model, "--explain", "--input",
                                    DATA / "fortunes-binary/test.npz", "--row", 0), 1,
                          "has 2843 features (columns), but the model is expecting 3849")

    def test_svmlight_wider_than_the_model_names_its_line_as_predict_does(self):
        # inspect named only the file ("has 5000 feature columns"), predict the line.
        wide = self.dir / "wide.svm"
        wide.write_text("0 1:1\n" * 20 + "0 1:1 5000:1\n")
        expected = (f"{wide}:21: this row has 5000 feature columns (as its largest index gives "
                    "them: index + 1 zero-based, the index one-based) but the model has 3849")
        for command in (("inspect", "--model", self.model, "--explain", "--input", wide, "--row", 0),
                        ("predict", "--model", self.model, "--input", wide)):
            with self.subTest(command=command[0]):
                self.assert_error(run_bagel(*command, "--zero-based", "false"), 1, expected)
        proc = run_bagel("inspect", "--model", self.model, "--explain", "--input", "-", "--row", 0,
                         "--zero-based", "false", stdin=wide.read_text())
        self.assert_error(proc, 1, expected.replace(str(wide), "<stdin>"))

    def test_bad_top_k_and_threshold_are_usage_errors(self):
        base = ("predict", "-m", self.model, "-i", self.test)
        for args, fragment in ((("--top-k", 0), "--top-k: expected an integer >= 1, found '0'"),
                               (("--top-k", "-2"), "--top-k"),
                               (("--threshold", 1.5), "--threshold: expected a probability in "
                                                      "[0, 1], found '1.5'"),
                               (("--threshold", "nan"), "--threshold"),
                               (("--top-k", 2, "--proba"), "--proba excludes --top-k"),
                               (("--threshold", 0.5, "--proba"), "--proba excludes --threshold")):
            self.assert_error(run_bagel(*base, *args), 2, "predict: ", fragment)


if __name__ == "__main__":
    unittest.main()
