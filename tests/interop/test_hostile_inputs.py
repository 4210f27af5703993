"""Hostile and oversized inputs through the command line (issue 18). Each run
is capped at 3 GiB of address space, far below what the file claims, so a
reader that trusts a claim fails the test by running out of memory instead of
refusing the file with one error line that names it."""

import json
import os
import resource
import subprocess
import tempfile
import unittest
import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cli_helpers import BAGEL, run_bagel, train_model, write_labeled_set
from hostile_files import (LATIN1_LABEL, WIDE_SVMLIGHT, compressed_csr, deep_array,
                           npy_header_only, npz_claiming_size, npz_padded, npz_with_long_format,
                           with_deep_config)

MEMORY_CAP = 3 << 30


def run_capped(*args):
    """bagel ARGS... under MEMORY_CAP, with few threads (each reserves stack
    and a malloc arena inside the cap)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    env = dict(os.environ, OMP_NUM_THREADS="2", MALLOC_ARENA_MAX="2")
    return subprocess.run([BAGEL, *map(str, args)], capture_output=True, text=True, timeout=120,
                          preexec_fn=limit, env=env)


class HostileInputs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        cls.x, _ = write_labeled_set(cls.dir, 300, 40, 0.2, 5, ["yes", "no"])
        cls.model = train_model(cls.dir, {"train": {"features": "train.npz",
                                                    "labels": "train.labels"}, "output": "model"})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return self.dir / f"{self._testMethodName}-{name}"

    def assert_refused(self, r, *needles, status=1):
        self.assertEqual(r.returncode, status, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("bagel: error: "), r.stderr)
        for needle in needles:
            self.assertIn(needle, lines[0])

    def predict(self, *args):
        return run_capped("predict", "-m", self.model, *args)

    # ---- .npz sizes (point 4) -------------------------------------------------

    def test_stored_member_claiming_4_gib_is_refused_before_allocating(self):
        path = self.path("claims.npz")
        x = sp.random(5, 40, density=0.2, format="csr", random_state=1)
        path.write_bytes(npz_claiming_size(x, "format.npy", 0xFFFFFFF0, zipfile.ZIP_STORED))
        self.assertLess(path.stat().st_size, 4096)
        self.assert_refused(self.predict("-i", path), str(path), "corrupt zip entry")

    def test_member_padded_with_deflated_zeros_is_refused(self):
        path = self.path("padded.npz")
        path.write_bytes(npz_padded(self.x, 64 << 20))  # 64 MiB of zeros after the array
        self.assertLess(path.stat().st_size, 1 << 20)
        self.assert_refused(self.predict("-i", path), str(path), "data:", "padded")

    def test_format_member_claiming_a_huge_shape_is_refused(self):
        path = self.path("format.npz")
        path.write_bytes(npz_with_long_format(self.x, 100000000))
        self.assert_refused(self.predict("-i", path), str(path), "format:", "small array")

    def test_zero_width_bytes_labels_claiming_1e8_rows_are_refused(self):
        labels = self.path("s0.npy")
        labels.write_bytes(npy_header_only("|S0", (100000000,)))
        self.assertEqual(labels.stat().st_size, 128)
        self.assert_refused(self.predict("-i", self.dir / "train.npz", "-l", labels),
                            str(labels), "zero-width")

    # ---- JSON depth (point 1) -------------------------------------------------

    def test_model_json_nested_a_million_deep_is_refused(self):
        model = self.path("deep-model")
        model.mkdir()
        for name in ("weight.npy", "bias.npy"):
            (model / name).write_bytes((self.model / name).read_bytes())
        text = (self.model / "model.json").read_text()
        (model / "model.json").write_text(with_deep_config(text, 1000000))
        r = run_capped("predict", "-m", model, "-i", self.dir / "train.npz")
        self.assert_refused(r, "model.json", "nested deeper than 64")

    def config(self, name, **extra):
        path = self.path(name)
        path.write_text(json.dumps({"train": {"features": str(self.dir / "train.npz"),
                                              "labels": str(self.dir / "train.labels")},
                                    "output": str(self.path("out")), **extra}))
        return path

    def test_config_nested_deeply_is_refused_with_its_file(self):
        path = self.path("deep.json")
        path.write_text('{"train": ' + deep_array(200000) + "}")
        self.assert_refused(run_capped("train", "--config", path), str(path), "nested deeper than 64")

    def test_config_number_beyond_double_range_names_the_file(self):
        path = self.config("big.json", optimizer={"l2": 1})
        path.write_text(path.read_text().replace('"l2": 1', '"l2": 1e999'))
        r = run_capped("train", "--config", path)
        self.assert_refused(r, str(path), "1e999")
        self.assertNotIn("json.exception", r.stderr)

    def test_set_value_nested_deeply_is_a_usage_error(self):
        value = deep_array(60000)
        r = run_capped("train", "--config", self.config("ok.json"), "--set", "optimizer.epochs=" + value)
        self.assert_refused(r, "--set optimizer.epochs=", status=2)

    def test_a_second_training_onto_the_same_output_fails_at_once_and_leaves_nothing(self):
        out = self.path("out")
        first = self.config("long.json", optimizer={"epochs": 100000, "learning_rate": 0.001})
        second = self.config("short.json")
        running = subprocess.Popen([BAGEL, "train", "--config", str(first), "--quiet"],
                                   stderr=subprocess.PIPE, text=True)
        try:
            lock = out.parent / (out.name + ".bagel-lock")
            for _ in range(200):  # the first run claims the folder before loading its data
                if lock.exists():
                    break
                subprocess.run(["sleep", "0.05"])
            before = sorted(p.name for p in out.parent.iterdir())
            r = run_capped("train", "--config", second)
            self.assert_refused(r, str(out), "another bagel run")
            self.assertEqual(sorted(p.name for p in out.parent.iterdir()), before)
        finally:
            running.terminate()
            running.wait(timeout=60)

    # ---- threads (point 2, and the same bytes for any thread count) -----------

    def test_predict_threads_beyond_1024_is_a_usage_error(self):
        for threads in ("32768", "100000", "-1"):
            r = self.predict("-i", self.dir / "train.npz", "--threads", threads)
            self.assert_refused(r, "--threads", status=2)

    def test_predict_output_is_byte_identical_for_any_thread_count(self):
        big = self.path("big.npz")
        sp.save_npz(big, sp.random(4000, 40, density=0.9, format="csr", random_state=3))
        outputs = []
        for threads in ("1", "2", "3"):
            r = run_bagel("predict", "-m", self.model, "-i", big, "--proba", "--threads", threads,
                          text=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs.append(r.stdout)
        self.assertEqual(outputs[0], outputs[1])
        self.assertEqual(outputs[0], outputs[2])

    # ---- labels and outputs checked before the work (point 7) -----------------

    def test_labels_that_are_not_utf8_are_refused_at_load_with_the_line(self):
        folder = self.path("latin1")
        folder.mkdir()
        write_labeled_set(folder, 50, 10, 0.3, 1, ["yes", "no"])
        lines = (folder / "train.labels").read_bytes().splitlines()
        lines[6] = LATIN1_LABEL
        (folder / "train.labels").write_bytes(b"\n".join(lines) + b"\n")
        (folder / "cfg.json").write_text(
            '{"train": {"features": "train.npz", "labels": "train.labels"}, "output": "m"}')
        r = run_capped("train", "--config", folder / "cfg.json", "--quiet")
        self.assert_refused(r, "train.labels:7:", "not UTF-8")
        self.assertFalse((folder / "m").exists())

    def test_metrics_path_that_cannot_be_created_is_refused_before_predicting(self):
        blocker = self.path("file")
        blocker.write_text("a file, not a folder\n")
        out = self.path("pred.txt")
        r = self.predict("-i", self.dir / "train.npz", "-l", self.dir / "train.labels",
                         "-o", out, "--metrics", blocker / "metrics.json")
        self.assert_refused(r, "--metrics", "is a file, not a folder")
        self.assertFalse(out.exists())

    def test_a_full_disk_names_the_model_file_not_a_temporary(self):
        import signal
        folder = self.path("full")
        folder.mkdir()
        write_labeled_set(folder, 100, 100000, 0.0002, 1, ["yes", "no"])
        (folder / "cfg.json").write_text(
            '{"train": {"features": "train.npz", "labels": "train.labels"}, "output": "m",'
            ' "optimizer": {"epochs": 1}}')
        def small_files():  # files stop growing at 64 KiB, as on a full disk
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))
        r = subprocess.run([BAGEL, "train", "--config", folder / "cfg.json", "--quiet"],
                           capture_output=True, text=True, timeout=120, preexec_fn=small_files)
        self.assert_refused(r, str(folder / "m" / "weight.npy") + ": write failed")
        self.assertNotIn(".tmp-", r.stderr)
        self.assertEqual(sorted(p.name for p in folder.iterdir()),
                         ["cfg.json", "train.labels", "train.npz"])

    def test_too_many_classes_are_refused_before_training(self):
        folder = self.path("ids")
        folder.mkdir()
        rows = 10001
        x = sp.random(rows, 5, density=0.5, format="csr", random_state=1)
        sp.save_npz(folder / "train.npz", x)
        (folder / "train.labels").write_text("".join(f"id{i}\n" for i in range(rows)))
        (folder / "cfg.json").write_text(
            '{"train": {"features": "train.npz", "labels": "train.labels"}, "output": "m"}')
        r = run_capped("train", "--config", folder / "cfg.json", "--quiet")
        self.assert_refused(r, "train.labels", "10001 distinct classes", "limit of 10000")

    def test_an_index_near_2_to_the_31_is_refused_before_training(self):
        folder = self.path("wide")
        folder.mkdir()
        (folder / "train.svm").write_text(WIDE_SVMLIGHT)
        (folder / "cfg.json").write_text('{"train": {"features": "train.svm"}, "output": "m"}')
        r = run_capped("train", "--config", folder / "cfg.json", "--quiet")
        self.assert_refused(r, "train.svm", "2147483646 features", "of memory")
        self.assertFalse((folder / "m").exists())

    def test_model_json_of_many_classes_holds_no_confusion_matrix(self):
        folder = self.path("many")
        folder.mkdir()
        rows, classes = 1200, 120
        x = sp.random(rows, 30, density=0.3, format="csr", random_state=2)
        sp.save_npz(folder / "train.npz", x)
        (folder / "train.labels").write_text("".join(f"c{i % classes}\n" for i in range(rows)))
        (folder / "cfg.json").write_text(
            '{"train": {"features": "train.npz", "labels": "train.labels"}, "output": "m",'
            ' "optimizer": {"epochs": 1, "learning_rate": 0.1}}')
        r = run_bagel("train", "--config", folder / "cfg.json", "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        import json
        meta = json.loads((folder / "m" / "model.json").read_text())
        metrics = meta["training"]["train_metrics"]
        self.assertNotIn("confusion_matrix", metrics)
        self.assertEqual(len(metrics["per_class"]), classes)


class CompressedPredict(unittest.TestCase):
    """predict reads a compressed .npz in chunks of rows (point 9)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        write_labeled_set(cls.dir, 300, 500, 0.05, 6, ["yes", "no"])
        cls.model = train_model(cls.dir, {"train": {"features": "train.npz",
                                                    "labels": "train.labels"}, "output": "m"})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_compressed_and_stored_files_predict_the_same_bytes_across_chunks(self):
        rng = np.random.default_rng(3)
        x = sp.random(70000, 500, density=0.01, format="csr", random_state=rng)  # > one chunk
        x.data = np.round(x.data * 4).astype(np.float32)
        labels = self.dir / "big.labels"
        labels.write_text("\n".join(rng.choice(["yes", "no"], x.shape[0])) + "\n")
        outputs = []
        for compressed in (True, False):
            path = self.dir / f"big-{compressed}.npz"
            sp.save_npz(path, x, compressed=compressed)
            metrics = self.dir / f"metrics-{compressed}.json"
            r = run_bagel("predict", "-m", self.model, "-i", path, "--proba", "-l", labels,
                          "--metrics", metrics, "-q", text=False)
            self.assertEqual(r.returncode, 0, r.stderr)
            outputs.append((r.stdout, metrics.read_text()))
        self.assertEqual(outputs[0], outputs[1])

    def test_a_compressed_file_is_predicted_in_bounded_memory(self):
        # 131,072 rows x 500 non-zeros: 524 MB inflated, a few MB on disk.
        path = self.dir / "wide.npz"
        compressed_csr(path, 131072, list(range(500)))
        self.assertLess(path.stat().st_size, 8 << 20)
        def limit():
            resource.setrlimit(resource.RLIMIT_AS, (700 << 20, 700 << 20))
        r = subprocess.run([BAGEL, "predict", "-m", self.model, "-i", path, "-o",
                            self.dir / "wide.pred", "-q"], capture_output=True, text=True,
                           timeout=300, preexec_fn=limit,
                           env=dict(os.environ, OMP_NUM_THREADS="2", MALLOC_ARENA_MAX="2"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len((self.dir / "wide.pred").read_text().splitlines()), 131072)


class KilledTraining(unittest.TestCase):
    """SIGKILL at any moment of a training that replaces a model leaves a
    whole model at the output (the old or the new one), and the next run
    removes what the killed one left."""

    def test_a_model_survives_sigkill_at_any_moment_and_leftovers_are_cleaned(self):
        import random
        import signal
        import time
        with tempfile.TemporaryDirectory() as name:
            folder = Path(name)
            write_labeled_set(folder, 2000, 300, 0.05, 4, ["yes", "no"])
            (folder / "cfg.json").write_text(
                '{"train": {"features": "train.npz", "labels": "train.labels"}, "output": "m",'
                ' "optimizer": {"epochs": 2, "learning_rate": 0.1}}')
            r = run_bagel("train", "--config", folder / "cfg.json", "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            start = time.monotonic()
            run_bagel("train", "--config", folder / "cfg.json", "--quiet")
            duration = time.monotonic() - start
            rng = random.Random(7)
            for _ in range(8):
                proc = subprocess.Popen([BAGEL, "train", "--config", folder / "cfg.json", "--quiet"],
                                        stderr=subprocess.DEVNULL)
                time.sleep(rng.uniform(0.5, 1.0) * duration)
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                r = run_bagel("predict", "-m", folder / "m", "-i", folder / "train.npz", "-q")
                self.assertEqual(r.returncode, 0, r.stderr)
            r = run_bagel("train", "--config", folder / "cfg.json", "--quiet")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sorted(p.name for p in folder.iterdir()),
                             ["cfg.json", "m", "train.labels", "train.npz"])
            self.assertEqual(sorted(p.name for p in (folder / "m").iterdir()),
                             ["bias.npy", "model.json", "weight.npy"])


if __name__ == "__main__":
    unittest.main()
