"""Past a file-size limit (`ulimit -f`), a write fails with EFBIG instead of
SIGXFSZ ending bagel without a word: the error is one line saying "File too
large", the exit status is 1, and no temporary (`x.tmp-PID-N`) or claim
(`DIR.bagel-lock`) is left behind.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_file_size_limit
"""

import json
import unittest

from cli_helpers import FolderCase, data_config, run_bagel, run_limited, write_labeled_set


class LimitCase(FolderCase):
    """A trained model and its data, and a fresh folder for each test."""

    PREFIX = "bagel-interop-fsize-"

    @classmethod
    def make_data(cls):
        # 3000 columns: a weight.npy of 12 KB, past a 4-block limit.
        write_labeled_set(cls.data, 300, 3000, 0.01, 5, ("1", "0"))
        cls.config = cls.data / "cfg.json"
        cls.config.write_text(json.dumps(data_config(cls.data, optimizer={"epochs": 1})))
        proc = run_bagel("train", "--config", cls.config, "-o", cls.data / "model", "-q")
        assert proc.returncode == 0, proc.stderr

    def assert_too_large(self, proc):
        self.assertEqual(proc.returncode, 1, f"status {proc.returncode}: {proc.stderr!r}")
        self.assertTrue(proc.stderr.startswith("bagel: error: "), proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        self.assertIn("File too large", proc.stderr)



class FileSizeLimit(LimitCase):
    def test_train_reports_it_and_leaves_no_temporary_or_claim(self):
        model = self.dir / "model"
        self.assert_too_large(run_limited(4, "train", "--config", self.config, "-o", model, "-q"))
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_retraining_keeps_the_old_model_and_leaves_no_temporary(self):
        model = self.dir / "model"
        self.assertEqual(run_bagel("train", "--config", self.config, "-o", model, "-q").returncode, 0)
        before = {p.name: p.read_bytes() for p in model.iterdir()}
        self.assert_too_large(run_limited(4, "train", "--config", self.config, "-o", model, "-q",
                                          "--set", "optimizer.epochs=2"))
        self.assertEqual({p.name: p.read_bytes() for p in model.iterdir()}, before)
        self.assertEqual([p.name for p in self.dir.iterdir()], ["model"])

    def test_predict_output(self):
        out = self.dir / "p.csv"
        self.assert_too_large(run_limited(1, "predict", "-m", self.data / "model",
                                          "-i", self.data / "train.npz", "--proba", "-o", out, "-q"))
        self.assertEqual(list(self.dir.iterdir()), [])

    def test_convert(self):
        for name in ("x.npz", "x.svm"):
            with self.subTest(name):
                self.assert_too_large(run_limited(4, "convert", self.data / "train.npz", self.dir / name,
                                                  "--labels", self.data / "train.labels"))
                self.assertEqual(list(self.dir.iterdir()), [])


class FoldersOfAFailedWrite(LimitCase):
    """A command that fails writing its outputs (here: past `ulimit -f 0`)
    removes the folders it created for them, as predict -o and train do;
    folders that were there stay."""

    def assert_failed_leaving_nothing(self, proc):
        self.assert_too_large(proc)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["kept"])
        self.assertEqual(list((self.dir / "kept").iterdir()), [])

    def setUp(self):
        super().setUp()
        (self.dir / "kept").mkdir()

    def test_convert(self):
        self.assert_failed_leaving_nothing(run_limited(
            0, "convert", self.data / "train.npz", self.dir / "a" / "b" / "x.svm",
            "--labels", self.data / "train.labels", "--labels-out", self.dir / "kept" / "c" / "y.txt"))

    def test_vectorize(self):
        docs = self.data / "docs.txt"
        docs.write_text("the cat sat\na dog barks\n")
        self.assert_failed_leaving_nothing(run_limited(
            0, "vectorize", "-i", docs, "-o", self.dir / "a" / "v.npz", "-q",
            "--vocabulary-out", self.dir / "b" / "c" / "voc.txt",
            "--vectorizer-out", self.dir / "kept" / "d" / "vec"))

    def test_generate(self):
        self.assert_failed_leaving_nothing(run_limited(
            0, "generate", self.dir / "a" / "x.npz", "--labels-out", self.dir / "b" / "y.txt",
            "--rows", 100, "--features", 100))

    def test_bench(self):
        self.assert_failed_leaving_nothing(run_limited(
            0, "bench", "-i", self.data / "train.npz", "-l", self.data / "train.labels",
            "-o", self.dir / "a" / "b", "-q", "--set", "repetitions=1"))


if __name__ == "__main__":
    unittest.main()
