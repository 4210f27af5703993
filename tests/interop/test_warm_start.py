"""`bagel train --init DIR` (config "init"): training starts from a saved
model's weights, scikit-learn's warm_start. Checked against the model itself:
two epochs and two more from the saved model are four epochs, bit for bit
(constant rate, no shuffling); the starting model's classes encode the labels;
data of another width is refused before any work.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_warm_start
"""

import json
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from cli_helpers import FolderCase, run_bagel, write_labeled_set


class WarmStart(FolderCase):
    PREFIX = "bagel-warm-start-"

    @classmethod
    def make_data(cls):
        cls.x, cls.y = write_labeled_set(cls.data, 300, 40, 0.2, 3, ("pos", "neg"))
        sp.save_npz(cls.data / "narrow.npz", cls.x[:, :30])
        (cls.data / "only_pos.labels").write_text("\n".join(["pos"] * 300) + "\n")
        (cls.data / "other.labels").write_text("\n".join(["pos"] * 299 + ["maybe"]) + "\n")
        numeric = np.where(cls.y == "pos", 1, 0)
        dump_svmlight_file(cls.x, numeric, cls.data / "full.svm", zero_based=True)
        dump_svmlight_file(cls.x[:, :30], numeric, cls.data / "narrow.svm", zero_based=True)

    def config(self, output, epochs=2, features="train.npz", labels="train.labels", **extra):
        c = {"train": {"features": str(self.data / features), "labels": str(self.data / labels)},
             # Not averaged: a warm start continues from the last weights,
             # so only the last iterate of 2 + 2 epochs equals that of 4.
             "optimizer": {"epochs": epochs, "learning_rate": 0.05, "schedule": "constant",
                           "shuffle": False, "threads": 1, "average": False},
             "output": str(self.dir / output)}
        c.update(extra)
        return c

    def train(self, config, *extra):
        path = self.dir / "cfg.json"
        path.write_text(json.dumps(config))
        return run_bagel("train", "--config", path, "--quiet", *extra)

    def trained(self, config, *extra):
        proc = self.train(config, *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return Path(config["output"])

    def weights(self, folder):
        return np.load(folder / "weight.npy"), np.load(folder / "bias.npy")

    def test_two_epochs_then_two_more_from_the_saved_model_are_four_epochs(self):
        four = self.trained(self.config("four", epochs=4))
        two = self.trained(self.config("two", epochs=2))
        more = self.trained(self.config("more", epochs=2), "--init", two)
        w4, b4 = self.weights(four)
        w2, _ = self.weights(two)
        wm, bm = self.weights(more)
        self.assertGreater(np.abs(w4 - w2).max(), 1e-3, "epochs 3-4 change the weights")
        np.testing.assert_array_equal(wm, w4)
        np.testing.assert_array_equal(bm, b4)
        saved = json.loads((more / "model.json").read_text())
        self.assertEqual(saved["config"]["init"], str(two))
        # --init and -o relative to the current folder are saved resolved.
        path = self.dir / "cfg.json"
        proc = run_bagel("train", "--config", path, "--quiet", "--init", "two", "-o", "again",
                         cwd=self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        saved = json.loads((self.dir / "again" / "model.json").read_text())
        self.assertEqual(saved["config"]["init"], str(two))
        self.assertEqual(saved["config"]["output"], str(self.dir / "again"))

    def test_init_in_the_config_is_relative_to_the_config_file(self):
        self.trained(self.config("two", epochs=2))
        more = self.trained(self.config("more", epochs=2, init="two"))
        four = self.trained(self.config("four", epochs=4))
        np.testing.assert_array_equal(self.weights(more)[0], self.weights(four)[0])

    def test_labels_may_be_a_subset_of_the_models_classes(self):
        start = self.trained(self.config("start"))
        more = self.trained(self.config("more", labels="only_pos.labels"), "--init", start)
        saved = json.loads((more / "model.json").read_text())
        self.assertEqual(saved["classes"], ["neg", "pos"])

    def test_a_label_the_model_does_not_know_is_named(self):
        start = self.trained(self.config("start"))
        proc = self.train(self.config("more", labels="other.labels"), "--init", start)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("other.labels:300: label 'maybe' is not one of the 2 classes", proc.stderr)
        self.assertFalse((self.dir / "more").exists())

    def test_an_npz_of_another_width_is_refused_with_both_widths(self):
        start = self.trained(self.config("start"))
        proc = self.train(self.config("more", features="narrow.npz"), "--init", start)
        self.assertEqual(proc.returncode, 1)
        self.assertIn("narrow.npz: has 30 features (columns), but the model in " + str(start) +
                      " (\"init\") has 40", proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        self.assertFalse((self.dir / "more").exists())

    def test_narrower_svmlight_is_accepted(self):
        # svmlight stores no width: a file whose rows never use the last
        # columns is narrower, not another vocabulary.
        def svm_config(output, name):
            c = self.config(output)
            c["train"] = {"features": str(self.data / name), "zero_based": "true"}
            return c
        start = self.trained(svm_config("start", "full.svm"))
        more = self.trained(svm_config("more", "narrow.svm"), "--init", start)
        self.assertEqual(self.weights(more)[0].shape, (40, 1))

    def test_a_folder_without_a_model_is_named(self):
        proc = self.train(self.config("more"), "--init", self.dir)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(str(self.dir / "model.json") + ": cannot open", proc.stderr)


if __name__ == "__main__":
    unittest.main()
