"""Training and predicting on raw text: `"train": {"text": ...}` with a
fastText-format file, the fitted vectorizer kept in the model folder
(model.json's "vectorizer", vocabulary.txt), and `bagel predict` on raw text.
The oracle is scikit-learn: a model trained from text is the model trained
from CountVectorizer's CSR of the same documents, bit for bit, and predicts
the same on new text as on CountVectorizer.transform's matrix.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_text_train
"""

import json
import random
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from cli_helpers import run_bagel

FORTUNES = Path("/usr/share/games/fortunes")
CATEGORIES = ("computers", "food", "love", "politics", "science", "sports")


def fortune_lines():
    """(label, document) pairs: each fortune of CATEGORIES on one line."""
    rows = []
    for cat in CATEGORIES:
        text = (FORTUNES / cat).read_text(encoding="utf-8", errors="replace")
        for fortune in text.split("\n%\n"):
            doc = " ".join(fortune.split())
            if doc:
                rows.append((cat, doc))
    random.Random(5).shuffle(rows)
    return rows


class TextTraining(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-text-train-")
        cls.dir = Path(cls._tmp.name)
        rows = fortune_lines()
        cut = len(rows) * 4 // 5
        cls.train_rows, cls.test_rows = rows[:cut], rows[cut:]
        for name, part in (("train", cls.train_rows), ("test", cls.test_rows)):
            (cls.dir / f"{name}.txt").write_text(
                "".join(f"__label__{label} {doc}\n" for label, doc in part), encoding="utf-8")
            (cls.dir / f"{name}.docs").write_text(
                "".join(doc + "\n" for _, doc in part), encoding="utf-8")
            (cls.dir / f"{name}.labels").write_text("".join(l + "\n" for l, _ in part))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def train(self, name, config):
        path = self.dir / f"{name}.json"
        path.write_text(json.dumps({**config, "output": name}))
        proc = run_bagel("train", "--config", path, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return self.dir / name

    def predict(self, model, *args):
        proc = run_bagel("predict", "--model", model, *args, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def sklearn_csr(self, vectorizer, name):
        """NAME-train.npz (fit_transform, whose rows list their terms in the
        order the corpus first used them) and NAME-test.npz (transform)."""
        x = vectorizer.fit_transform([d for _, d in self.train_rows])
        sp.save_npz(self.dir / f"{name}-train.npz", x)
        sp.save_npz(self.dir / f"{name}-test.npz",
                    vectorizer.transform([d for _, d in self.test_rows]))
        return vectorizer

    def test_a_three_line_config_on_fasttext_text_is_the_model_of_sklearns_csr(self):
        text_model = self.train("from-text", {"train": {"text": "train.txt"}})
        vec = self.sklearn_csr(CountVectorizer(), "count")
        csr_model = self.train("from-csr", {"train": {"features": "count-train.npz",
                                                      "labels": "train.labels"}})
        np.testing.assert_array_equal(np.load(text_model / "weight.npy"),
                                      np.load(csr_model / "weight.npy"))
        np.testing.assert_array_equal(np.load(text_model / "bias.npy"),
                                      np.load(csr_model / "bias.npy"))
        vocabulary = (text_model / "vocabulary.txt").read_text(encoding="utf-8").splitlines()
        self.assertEqual(vocabulary, list(vec.get_feature_names_out()))
        saved = json.loads((text_model / "model.json").read_text())
        self.assertIn("vectorizer", saved)
        # Predictions on raw text equal those on scikit-learn's transform.
        on_text = self.predict(text_model, "--input", self.dir / "test.txt", "--proba")
        on_csr = self.predict(csr_model, "--input", self.dir / "count-test.npz", "--proba")
        self.assertEqual(on_text, on_csr)
        # One document per line with a labels file reads the same documents.
        on_lines = self.predict(text_model, "--input", self.dir / "test.docs",
                                "--labels", self.dir / "test.labels", "--proba")
        self.assertEqual(on_lines, on_csr)

    def test_tfidf_bigrams_with_min_df(self):
        settings = {"kind": "tfidf", "ngram_range": [1, 2], "min_df": 2, "sublinear_tf": True}
        text_model = self.train("tfidf-text", {"train": {"text": "train.txt"},
                                               "vectorizer": settings})
        self.sklearn_csr(TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True), "tfidf")
        csr_model = self.train("tfidf-csr", {"train": {"features": "tfidf-train.npz",
                                                       "labels": "train.labels"}})
        np.testing.assert_array_equal(np.load(text_model / "weight.npy"),
                                      np.load(csr_model / "weight.npy"))
        self.assertEqual(self.predict(text_model, "--input", self.dir / "test.txt"),
                         self.predict(csr_model, "--input", self.dir / "tfidf-test.npz"))

    def test_a_line_of_several_labels_counts_once_in_the_vectorizer(self):
        # Every third training line also carries the label of the line
        # after it. The line is split into one row per label, weighing 1/2
        # each, but the vectorizer counts it once, as fastText counts a
        # line: document frequencies (min_df, idf) and the number of
        # documents are those of scikit-learn fitted on the lines.
        rows = self.train_rows[:600]
        labels = [[label] + ([rows[i + 1][0]] if i % 3 == 0 and i + 1 < len(rows)
                             and rows[i + 1][0] != label else [])
                  for i, (label, _) in enumerate(rows)]
        lines = "".join(" ".join(f"__label__{l}" for l in ls) + f" {doc}\n"
                        for ls, (_, doc) in zip(labels, rows))
        (self.dir / "multi.txt").write_text(lines, encoding="utf-8")
        settings = {"kind": "tfidf", "min_df": 2}
        sklearn = TfidfVectorizer(min_df=2).fit_transform([d for _, d in rows])
        repeat = [i for i, ls in enumerate(labels) for _ in ls]
        expected = sklearn[repeat]
        out = self.dir / "multi.npz"
        proc = run_bagel("vectorize", "-q", "-i", self.dir / "multi.txt", "-o", out,
                         "--set", "kind=tfidf", "--set", "min_df=2",
                         "--labels-out", self.dir / "multi.labels",
                         "--weights-out", self.dir / "multi.weights")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        got = sp.load_npz(out)
        self.assertEqual(got.shape, expected.shape)
        np.testing.assert_array_equal(got.indptr, expected.indptr)
        np.testing.assert_array_equal(got.indices, expected.indices)
        np.testing.assert_array_equal(got.data, expected.data)
        self.assertEqual((self.dir / "multi.labels").read_text().split(),
                         [l for ls in labels for l in ls])
        self.assertEqual([float(w) for w in (self.dir / "multi.weights").read_text().split()],
                         [1 / len(ls) for ls in labels for _ in ls])
        # Training on the text is training on those three files.
        text_model = self.train("multi-text", {"train": {"text": "multi.txt"},
                                               "vectorizer": settings})
        csr_model = self.train("multi-csr", {"train": {"features": "multi.npz",
                                                       "labels": "multi.labels",
                                                       "sample_weights": "multi.weights"}})
        np.testing.assert_array_equal(np.load(text_model / "weight.npy"),
                                      np.load(csr_model / "weight.npy"))

    def test_metrics_from_the_fasttext_labels_match_sklearns(self):
        model = self.train("metrics", {"train": {"text": "train.txt"}})
        proc = run_bagel("predict", "--model", model, "--input", self.dir / "test.txt",
                         "--metrics", self.dir / "m.json", "-o", self.dir / "p.txt")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        predicted = (self.dir / "p.txt").read_text().splitlines()
        truth = [label for label, _ in self.test_rows]
        accuracy = json.loads((self.dir / "m.json").read_text())["accuracy"]
        self.assertAlmostEqual(accuracy, np.mean(np.array(predicted) == np.array(truth)), places=12)

    def test_inspect_names_the_words(self):
        model = self.train("inspect", {"train": {"text": "train.txt"}})
        proc = run_bagel("inspect", "--model", model, "--top", "3", "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        report = json.loads(proc.stdout)
        vocabulary = set((model / "vocabulary.txt").read_text(encoding="utf-8").splitlines())
        names = json.dumps(report)
        self.assertTrue(any(word in names for word in vocabulary if len(word) > 6))

    def test_inspect_names_the_empty_term_of_a_pattern_that_matches_empty(self):
        # r"\w*" matches "" between non-word characters: scikit-learn's
        # vocabulary then starts with the empty term, which vocabulary.txt
        # writes as the line \e and inspect reads back.
        rows = self.train_rows[:40]
        (self.dir / "small.txt").write_text(
            "".join(f"__label__{label} {doc}\n" for label, doc in rows), encoding="utf-8")
        model = self.train("empty-term", {"train": {"text": "small.txt"},
                                          "vectorizer": {"token_pattern": r"\w*"}})
        terms = list(CountVectorizer(token_pattern=r"\w*").fit([d for _, d in rows]).get_feature_names_out())
        self.assertEqual(terms[0], "")
        lines = (model / "vocabulary.txt").read_text(encoding="utf-8").split("\n")[:-1]
        self.assertEqual(lines[0], "\\e")
        self.assertEqual(lines[1:], terms[1:])
        proc = run_bagel("inspect", "--model", model, "--top", str(len(terms)), "--format", "json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for output in json.loads(proc.stdout)["outputs"]:
            named = {f["feature"]: f["term"] for f in output["largest"]}
            self.assertEqual([named[j] for j in range(len(terms))], terms)
        text = run_bagel("inspect", "--model", model, "--top", str(len(terms)))
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("\\e", text.stdout)

    def test_warm_start_from_a_text_model_keeps_its_vocabulary(self):
        start = self.train("start", {"train": {"text": "train.txt"}})
        more = self.train("more", {"train": {"text": "test.txt"}, "init": "start"})
        self.assertEqual((start / "vocabulary.txt").read_bytes(),
                         (more / "vocabulary.txt").read_bytes())

    def test_text_config_errors_name_the_key(self):
        path = self.dir / "bad.json"
        path.write_text(json.dumps({"train": {"text": "train.txt", "features": "x.npz"}}))
        proc = run_bagel("train", "--config", path)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("train.text: give \"features\"", proc.stderr)
        path.write_text(json.dumps({"train": {"text": "train.txt"},
                                    "vectorizer": {"ngram_range": [2, 1]}}))
        proc = run_bagel("train", "--config", path)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("vectorizer.ngram_range", proc.stderr)
        path.write_text(json.dumps({"train": {"text": "train.docs"}}))
        proc = run_bagel("train", "--config", path)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("train.docs: cannot tell how its documents are labelled", proc.stderr)


if __name__ == "__main__":
    unittest.main()
