"""`bagel train --resume`: a run stopped by Ctrl-C or kill after a completed
epoch saves its state beside the model folder (OUTPUT.bagel-resume) and exits
130/143; the same command with --resume ends with the model of a run that was
never stopped, bit for bit, and removes the saved state. A changed config or
data, or nothing to resume, is refused. Averaged SGD resumes bit for bit too
(its running sums are saved); the dense layer's says it cannot resume.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_resume
"""

import json
import os
import re
import signal
import subprocess
import unittest

import numpy as np

from cli_helpers import BAGEL, FolderCase, run_bagel


class Resume(FolderCase):
    PREFIX = "bagel-resume-"

    @classmethod
    def make_data(cls):
        for name, rows, seed in (("train", 20000, 3), ("valid", 2000, 4)):
            proc = run_bagel("generate", cls.data / f"{name}.npz", "--labels-out",
                             cls.data / f"{name}.labels", "--rows", rows, "--features", 5000,
                             "--classes", 4, "--seed", seed)
            assert proc.returncode == 0, proc.stderr

    def config(self, output, data=None, model=None, **optimizer):
        data = data or self.data
        c = {"train": {"features": str(data / "train.npz"),
                       "labels": str(self.data / "train.labels")},
             "valid": {"features": str(data / "valid.npz"),
                       "labels": str(self.data / "valid.labels")},
             "optimizer": {"epochs": 80, "patience": 100, **optimizer},
             "output": str(self.dir / output)}
        if model:
            c["model"] = model
        path = self.dir / f"{output}.json"
        path.write_text(json.dumps(c))
        return path

    def stop_after_epoch(self, config, epoch, sig=signal.SIGINT, file_blocks=None, args=(),
                         cwd=None):
        """Starts `bagel train --config CONFIG ARGS...` in CWD (under `ulimit
        -f FILE_BLOCKS` when given), sends SIG once epoch EPOCH has ended;
        returns (exit status, stderr after the signal)."""
        command = [BAGEL, "train", "--config", str(config), *args]
        if file_blocks is not None:
            command = ["bash", "-c", f'ulimit -f {file_blocks} && exec "$@"', "bagel", *command]
        proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=cwd)
        for line in proc.stderr:
            if line.startswith(f"epoch {epoch}/"):
                proc.send_signal(sig)
                break
        rest = proc.stderr.read()
        proc.wait(timeout=120)
        return proc.returncode, rest

    def weights(self, folder):
        return np.load(folder / "weight.npy"), np.load(folder / "bias.npy")

    def test_a_stopped_run_resumed_ends_with_the_unstopped_runs_model(self):
        self.check_resume_is_bit_for_bit()

    def test_averaged_sgd_resumes_bit_for_bit(self):
        # Stopped after epoch 3, inside the averaged epochs (from 2 on): the
        # sums of the weights and the step count are saved with the weights.
        self.check_resume_is_bit_for_bit(average=True, average_from=2)

    def test_rows_of_small_norm_resume_with_their_bias_rate(self):
        # Values times 2^-10 (mean |x|^2 below 1/2): the bias's share of the
        # auto rate is resolved with the rate, and saved and restored with it.
        import scipy.sparse as sp
        small = self.dir / "small"
        small.mkdir()
        for name in ("train", "valid"):
            x = sp.load_npz(self.data / f"{name}.npz").astype(np.float32)
            sp.save_npz(small / f"{name}.npz", (x * np.float32(2.0 ** -10)).tocsr())
        training = self.check_resume_is_bit_for_bit(data=small)
        self.assertLess(training["bias_rate"], 1)
        self.assertEqual(training["bias_rate"], training["rate_calibration"]["bias_rate"])

    def check_resume_is_bit_for_bit(self, data=None, **optimizer):
        whole = run_bagel("train", "--config", self.config("whole", data, **optimizer), "--quiet")
        self.assertEqual(whole.returncode, 0, whole.stderr)
        config = self.config("part", data, **optimizer)
        status, stderr = self.stop_after_epoch(config, 3)
        self.assertEqual(status, 130, stderr)
        saved = self.dir / "part.bagel-resume"
        self.assertIn(" saved in " + str(saved) + ": add --resume", stderr)
        # The last checkpoint kept: after the first epoch, then paced by its
        # cost (src/train/checkpoint_pace.h); the resumed run starts there.
        said = re.search(r"stopped; (?:epoch (1) of 80 is|epochs 1-(\d+) of 80 are) saved", stderr)
        kept = int(said.group(1) or said.group(2))
        self.assertGreaterEqual(kept, 1)
        self.assertFalse((self.dir / "part").exists(), "no model from a stopped run")
        self.assertTrue((saved / "checkpoint.json").exists())
        resumed = run_bagel("train", "--config", config, "--resume")
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        self.assertRegex(resumed.stderr, r"resuming after epoch \d+ of 80")
        w_whole, b_whole = self.weights(self.dir / "whole")
        w_part, b_part = self.weights(self.dir / "part")
        np.testing.assert_array_equal(w_part, w_whole)
        np.testing.assert_array_equal(b_part, b_whole)
        training = json.loads((self.dir / "part" / "model.json").read_text())["training"]
        whole_training = json.loads((self.dir / "whole" / "model.json").read_text())["training"]
        # Four classes, one-vs-rest: on two cores or more, the threads split
        # the classes (the default plan), and that resumes bit for bit too.
        if len(os.sched_getaffinity(0)) > 1 and "OMP_NUM_THREADS" not in os.environ:
            self.assertEqual(whole_training["plan"]["strategy"], "classes")
        self.assertEqual(training["resumed_from_epoch"], kept)
        self.assertEqual(len(training["history"]), 80)
        self.assertEqual(training["best_epoch"], whole_training["best_epoch"])
        self.assertEqual(training["rate_calibration"]["rate"], whole_training["learning_rate"])
        self.assertEqual(training["bias_rate"], whole_training["bias_rate"])
        self.assertFalse(saved.exists(), "the saved state is removed once the run ends")
        return training

    def test_output_dot_saves_beside_the_folder_and_resumes(self):
        # `-o .` (and `./`) in the model folder: the state goes beside it by
        # its real name, not into it as `..bagel-resume`, where --resume
        # refused the folder as one of other files.
        whole = run_bagel("train", "--config", self.config("whole"), "--quiet")
        self.assertEqual(whole.returncode, 0, whole.stderr)
        config = self.config("ignored")
        for output in (".", "./"):
            with self.subTest(output=output):
                here = self.dir / "here"
                here.mkdir()
                status, stderr = self.stop_after_epoch(config, 3, args=("-o", output), cwd=here)
                self.assertEqual(status, 130, stderr)
                self.assertIn(" saved in ../here.bagel-resume: add --resume", stderr)
                self.assertEqual(list(here.iterdir()), [])
                self.assertTrue((self.dir / "here.bagel-resume" / "checkpoint.json").exists())
                resumed = run_bagel("train", "--config", config, "-o", output, "--resume",
                                    cwd=here)
                self.assertEqual(resumed.returncode, 0, resumed.stderr)
                self.assertRegex(resumed.stderr, r"resuming after epoch \d+ of 80 "
                                                 r"\(\.\./here\.bagel-resume\)")
                np.testing.assert_array_equal(self.weights(here)[0],
                                              self.weights(self.dir / "whole")[0])
                np.testing.assert_array_equal(self.weights(here)[1],
                                              self.weights(self.dir / "whole")[1])
                self.assertFalse((self.dir / "here.bagel-resume").exists())
                for p in here.iterdir():
                    p.unlink()
                here.rmdir()

    def test_train_seconds_count_the_epochs_before_the_stop(self):
        config = self.config("late")
        status, stderr = self.stop_after_epoch(config, 40)
        self.assertEqual(status, 130, stderr)
        resumed = run_bagel("train", "--config", config, "--resume")
        self.assertEqual(resumed.returncode, 0, resumed.stderr)
        training = json.loads((self.dir / "late" / "model.json").read_text())["training"]
        self.assertGreater(training["resumed_from_epoch"], 1)
        spent = sum(h["seconds"] for h in training["history"]) + training["rate_calibration"]["seconds"]
        self.assertGreaterEqual(training["train_seconds"], spent)
        printed = float(re.search(r"trained 80 epochs in ([0-9.]+)s", resumed.stderr).group(1))
        self.assertAlmostEqual(printed, training["train_seconds"], delta=0.006)

    def test_sigterm_saves_too_and_exits_143(self):
        status, stderr = self.stop_after_epoch(self.config("part"), 2, signal.SIGTERM)
        self.assertEqual(status, 143, stderr)
        self.assertTrue((self.dir / "part.bagel-resume" / "checkpoint.json").exists())

    def test_a_changed_config_is_refused_naming_the_key(self):
        config = self.config("part")
        status, _ = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130)
        proc = run_bagel("train", "--config", config, "--resume", "--set", "optimizer.l2=0.001")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--resume: the config differs from the stopped run's (at /optimizer/l2)",
                      proc.stderr)
        self.assertTrue((self.dir / "part.bagel-resume").exists(), "kept for a proper resume")

    def test_other_data_is_refused(self):
        config = self.config("part")
        status, _ = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130)
        c = json.loads(config.read_text())
        c["train"]["labels"] = str(self.dir / "shuffled.labels")
        labels = (self.data / "train.labels").read_text().splitlines()
        (self.dir / "shuffled.labels").write_text("\n".join(labels[1:] + labels[:1]) + "\n")
        config.write_text(json.dumps(c))
        proc = run_bagel("train", "--config", config, "--resume")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("differs from the stopped run's", proc.stderr)

    def test_a_damaged_weight_file_is_an_error_naming_it(self):
        # Too few rows had been read past their end (heap corruption, exit
        # 134); a transposed shape or a NaN had been taken as they were.
        config = self.config("part")
        status, _ = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130)
        saved = self.dir / "part.bagel-resume" / "weight.npy"
        good = np.load(saved)
        for name, bad, fragment in (("short", good[:100], "weights, expected"),
                                    ("transposed", np.ascontiguousarray(good.T), "is not of shape"),
                                    ("nan", np.where(np.arange(good.size).reshape(good.shape) == 7,
                                                     np.float32("nan"), good), "non-finite")):
            with self.subTest(name):
                np.save(saved, bad)
                proc = run_bagel("train", "--config", config, "--resume")
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"{saved}: ", proc.stderr)
                self.assertIn(fragment, proc.stderr)
        np.save(saved, good)
        self.assertEqual(run_bagel("train", "--config", config, "--resume", "-q").returncode, 0)

    def test_nothing_to_resume_is_a_usage_error(self):
        proc = run_bagel("train", "--config", self.config("fresh"), "--resume")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--resume: no stopped run to resume: " + str(self.dir / "fresh.bagel-resume") +
                      " does not exist", proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        (self.dir / "fresh.bagel-resume").write_text("mine\n")
        proc = run_bagel("train", "--config", self.config("fresh"), "--resume")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("fresh.bagel-resume is a file, not the folder a stopped run saves", proc.stderr)
        self.assertEqual((self.dir / "fresh.bagel-resume").read_text(), "mine\n")
        (self.dir / "empty.bagel-resume").mkdir()
        proc = run_bagel("train", "--config", self.config("empty"), "--resume")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("empty.bagel-resume holds no saved state (checkpoint.json)", proc.stderr)

    def test_state_that_cannot_be_saved_names_the_resume_folder(self):
        # 5000 features x 4 classes: a weight.npy of 80 KB, past 40 blocks.
        status, stderr = self.stop_after_epoch(self.config("full"), 1, file_blocks=40)
        self.assertEqual(status, 1, stderr)
        folder = str(self.dir / "full.bagel-resume")
        self.assertIn(f"bagel: error: {folder}: cannot save the stopped run's state: ", stderr)
        self.assertIn("File too large", stderr)
        self.assertNotIn(".tmp-", stderr)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["full.json"])

    def test_the_dense_layers_averaged_sgd_says_it_cannot_resume(self):
        config = self.config("avg", model={"layer": "dense"}, average=True, schedule="constant")
        status, stderr = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130, stderr)
        self.assertIn("this run cannot be resumed: the dense layer's averaged SGD", stderr)
        self.assertFalse((self.dir / "avg.bagel-resume").exists())

    def test_a_thread_count_that_makes_replicas_says_why_it_cannot_go_on(self):
        # Stopped on one thread (resumable), resumed on 2, where softmax
        # trains replicas, which cannot go on from that state.
        config = self.config("two", model={"multiclass": "softmax"}, threads=1)
        status, stderr = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130, stderr)
        proc = run_bagel("train", "--config", config, "--resume", "--set", "optimizer.threads=2", "--quiet")
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("the stopped run's saved state cannot go on with these settings: the replicas'",
                      proc.stderr)
        self.assertIn('"threads": 1 trains resumably', proc.stderr)
        self.assertTrue((self.dir / "two.bagel-resume").exists())

    def test_replicas_say_they_cannot_resume_and_what_can(self):
        # Softmax does not split by class: 2 threads are replicas.
        config = self.config("rep", model={"multiclass": "softmax"}, threads=2)
        status, stderr = self.stop_after_epoch(config, 2)
        self.assertEqual(status, 130, stderr)
        self.assertIn("this run cannot be resumed: the replicas' copies and momentum are not saved "
                      "(2 threads, replicas combined", stderr)
        self.assertIn('"threads": 1 trains resumably', stderr)
        self.assertFalse((self.dir / "rep.bagel-resume").exists())


if __name__ == "__main__":
    unittest.main()
