"""`bagel train` as a command-line program: help and version, config errors
that name the key (and suggest the nearest one), data errors that name the
file, quiet and verbose output, and a model directory that is either whole or
absent.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_train_cli
"""

import json
import math
import subprocess
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from cli_helpers import BAGEL, FolderCase, run_bagel, write_labeled_set

REPO = Path(__file__).resolve().parents[2]  # the data/ folder's repository




class TrainCommandLine(FolderCase):
    PREFIX = "bagel-interop-cli-"
    DATA_FOLDER = "data"

    @classmethod
    def make_data(cls):
        x, y = write_labeled_set(cls.data, 120, 15, 0.3, 5, ("pos", "neg"))
        sp.save_npz(cls.data / "valid.npz", x[:40])
        (cls.data / "valid.labels").write_text("\n".join(y[:40]) + "\n")
        (cls.data / "short.labels").write_text("\n".join(y[:100]) + "\n")
        odd = list(y[:40])
        odd[7] = "maybe"  # a class train never saw
        (cls.data / "unseen.labels").write_text("\n".join(odd) + "\n")
        bad = x.copy()
        bad.data[5] = np.nan
        sp.save_npz(cls.data / "nan.npz", bad)
        huge = x.copy()
        huge.data[:] = 1e4  # with learning_rate 1e36 the weights overflow float32
        sp.save_npz(cls.data / "huge.npz", huge)

    def setUp(self):
        super().setUp()
        self.model = self.dir / "model"

    def config(self, **changes):
        c = {"train": {"features": str(self.data / "train.npz"),
                       "labels": str(self.data / "train.labels")},
             "optimizer": {"epochs": 3, "learning_rate": 0.1, "seed": 1},
             "output": str(self.model)}
        for key, value in changes.items():
            c[key] = value
        return c

    def write_config(self, config, name="cfg.json"):
        path = self.dir / name
        path.write_text(json.dumps(config) if not isinstance(config, str) else config)
        return path

    def train(self, config, *extra):
        return run_bagel("train", "--config", self.write_config(config), *extra)

    def test_average_auto_averages_few_rows_and_names_it_in_the_plan(self):
        # 120 rows: "auto" is averaged SGD, the same model as "average": true,
        # bit for bit; "average": false gives another one.
        def trained(name, **optimizer):
            c = self.config(output=str(self.dir / name))
            c["optimizer"].update(optimizer)
            proc = self.train(c)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            meta = json.loads((self.dir / name / "model.json").read_text())
            return proc, meta, (self.dir / name / "weight.npy").read_bytes()
        proc, meta, auto = trained("auto")
        self.assertIn("averaged (auto: few rows)", proc.stderr)
        self.assertIs(meta["training"]["average"], True)
        self.assertEqual(meta["config"]["optimizer"]["average"], "auto")
        _, _, on = trained("on", average=True)
        _, off_meta, off = trained("off", average=False)
        self.assertEqual(auto, on)
        self.assertNotEqual(auto, off)
        self.assertIs(off_meta["training"]["average"], False)

    def assert_fails(self, proc, *fragments):
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(proc.stderr.startswith("bagel: error: "), proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, "one clear line:\n" + proc.stderr)

    def assert_no_model_written(self):
        self.assertFalse(self.model.exists(), "no model directory after a failed run")
        leftovers = [p.name for p in self.dir.iterdir() if p.name.startswith("model")]
        self.assertEqual(leftovers, [], "no temporary folder left behind")

    # -- help and version ------------------------------------------------

    def test_the_optimal_schedule_records_the_rate_it_began_at(self):
        # "optimal" ignores learning_rate: the model records its first
        # step's rate, alpha^(-1/4) (scikit-learn's), not the unused 0.1.
        c = self.config()
        c["optimizer"].update(schedule="optimal", l2=1e-3, average=False)
        proc = self.train(c, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        training = json.loads((self.model / "model.json").read_text())["training"]
        self.assertAlmostEqual(training["learning_rate"], 1e-3 ** -0.25, places=12)
        rates = [epoch["learning_rate"] for epoch in training["history"]]
        self.assertTrue(all(r < training["learning_rate"] for r in rates), rates)

    def test_help_lists_the_commands(self):
        proc = run_bagel("--help")
        self.assertEqual(proc.returncode, 0)
        for word in ("Usage", "train", "predict", "convert"):
            self.assertIn(word, proc.stdout)

    def test_train_help_lists_its_options(self):
        proc = run_bagel("train", "--help")
        self.assertEqual(proc.returncode, 0)
        for word in ("Usage", "--config", "--set", "--quiet", "--output"):
            self.assertIn(word, proc.stdout)

    def test_version_prints_the_version(self):
        proc = run_bagel("--version")
        self.assertEqual(proc.returncode, 0)
        self.assertRegex(proc.stdout.strip(), r"^bagel \d+\.\d+\.\d+$")

    def test_no_command_is_an_error_pointing_to_help(self):
        proc = run_bagel()
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("--help", proc.stdout + proc.stderr)

    def test_the_shipped_configs_train(self):
        # defaults.json names only data and output: every optimizer key at
        # its default, which the plan line shows as resolved ("auto").
        for name in ("defaults.json", "example.json"):
            with self.subTest(name):
                proc = run_bagel("train", "--config", REPO / "configs" / name, "-o", self.dir / name)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                meta = json.loads((self.dir / name / "model.json").read_text())
                self.assertEqual(meta["config"]["train"]["features"],
                                 str(REPO / "data" / "fortunes-multi" / "train.npz"))
                if name == "defaults.json":
                    self.assertIn("(auto)", proc.stderr)
                    self.assertIn("rate_calibration", meta["training"])

    def test_a_mistyped_option_is_named_before_a_missing_required_one(self):
        for args, expected in [
            (("train", "--bogus"), "train: unknown option '--bogus'"),
            (("predict", "-m", self.dir, "-x"), "predict: unknown option '-x'"),
            (("--bogus",), "unknown option '--bogus': a command is required"),
        ]:
            with self.subTest(args=args):
                proc = run_bagel(*args)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertTrue(proc.stderr.startswith("bagel: error: " + expected), proc.stderr)
        # Values that start with "-" are no options: a number, or an
        # option's value ("-o -y" writes the file -y).
        proc = run_bagel("predict", "--threshold", "-0.5", "-i", "-")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertNotIn("unknown option", proc.stderr)
        proc = run_bagel("predict", "-i", self.data / "train.npz", "-o", "-y")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("predict: --model is required", proc.stderr)

    # -- config errors ---------------------------------------------------

    def test_unknown_optimizer_key_is_named_with_the_nearest_valid_key(self):
        c = self.config()
        c["optimizer"]["epochss"] = 3
        proc = self.train(c)
        self.assert_fails(proc, "optimizer.epochss", "'epochs'", "cfg.json")
        self.assert_no_model_written()

    def test_unknown_top_level_key_suggests_the_nearest(self):
        c = self.config()
        c["optimiser"] = c.pop("optimizer")
        self.assert_fails(self.train(c), "optimiser", "'optimizer'")
        self.assert_no_model_written()

    def test_wrong_type_names_the_key_and_the_expected_type(self):
        c = self.config()
        c["optimizer"]["epochs"] = "ten"
        self.assert_fails(self.train(c), "optimizer.epochs", "integer")
        self.assert_no_model_written()

    def test_invalid_json_names_the_config_file(self):
        self.assert_fails(self.train('{"train": {"features": "x.npz"'), "cfg.json", "JSON")
        self.assert_no_model_written()

    def test_set_overrides_a_key_and_is_saved_in_model_json(self):
        proc = self.train(self.config(), "--set", "optimizer.epochs=2", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        meta = json.loads((self.model / "model.json").read_text())
        self.assertEqual(meta["config"]["optimizer"]["epochs"], 2)
        self.assertEqual(meta["training"]["epochs_run"], 2)
        self.assertEqual(len(meta["training"]["history"]), 2)

    def test_set_with_a_bad_value_names_the_key(self):
        proc = self.train(self.config(), "--set", "optimizer.epochs=ten")
        self.assert_fails(proc, "optimizer.epochs", "integer")
        self.assert_no_model_written()

    def test_set_with_an_unknown_key_suggests_the_nearest(self):
        proc = self.train(self.config(), "--set", "optimizer.learning_rat=0.5")
        self.assert_fails(proc, "optimizer.learning_rat", "'learning_rate'")
        self.assert_no_model_written()

    def test_output_option_overrides_the_config(self):
        other = self.dir / "elsewhere"
        proc = self.train(self.config(), "--output", other, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((other / "model.json").is_file())
        self.assertFalse(self.model.exists())
        self.assertEqual(json.loads((other / "model.json").read_text())["config"]["output"],
                         str(other))

    def test_output_with_a_trailing_slash_writes_the_model_there(self):
        # Shells complete folder names with a slash: "-o runs/model/".
        proc = self.train(self.config(), "--output", str(self.model) + "/", "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((self.model / "model.json").is_file())
        proc = self.train(self.config(), "--output", str(self.model) + "/", "--quiet")
        self.assertEqual(proc.returncode, 0, "retraining into it: " + proc.stderr)
        self.assertEqual(sorted(p.name for p in self.model.iterdir()),
                         ["bias.npy", "model.json", "weight.npy"])

    def test_relative_paths_in_the_config_are_relative_to_the_config_file(self):
        c = self.config()
        c["train"] = {"features": "../../../data/train.npz",
                      "labels": "../../../data/train.labels"}
        c["output"] = "rel_model"
        sub = self.dir / "configs" / "deeper"
        sub.mkdir(parents=True)
        path = sub / "cfg.json"
        path.write_text(json.dumps(c))
        # Run from elsewhere: the paths must not depend on the working directory.
        proc = run_bagel("train", "--config", path, "--quiet", cwd=self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((sub / "rel_model" / "model.json").is_file())

    def test_patience_without_a_valid_set_is_refused(self):
        c = self.config()
        c["optimizer"]["patience"] = 2
        self.assert_fails(self.train(c), "optimizer.patience", "valid")
        self.assert_no_model_written()

    # -- data errors -----------------------------------------------------

    def test_missing_features_file_is_named(self):
        missing = self.data / "no_such_file.npz"
        c = self.config(train={"features": str(missing), "labels": str(self.data / "train.labels")})
        self.assert_fails(self.train(c), str(missing))
        self.assert_no_model_written()

    def test_missing_labels_file_is_named(self):
        missing = self.data / "no_such.labels"
        c = self.config(train={"features": str(self.data / "train.npz"), "labels": str(missing)})
        self.assert_fails(self.train(c), str(missing))
        self.assert_no_model_written()

    def test_label_count_that_differs_from_the_row_count_is_an_error(self):
        c = self.config(train={"features": str(self.data / "train.npz"),
                               "labels": str(self.data / "short.labels")})
        self.assert_fails(self.train(c), "short.labels", "100", "120")
        self.assert_no_model_written()

    def test_nan_in_the_features_is_an_error_naming_the_file(self):
        c = self.config(train={"features": str(self.data / "nan.npz"),
                               "labels": str(self.data / "train.labels")})
        self.assert_fails(self.train(c), str(self.data / "nan.npz"))
        self.assert_no_model_written()

    def test_valid_label_unseen_in_train_is_an_error(self):
        c = self.config(valid={"features": str(self.data / "valid.npz"),
                               "labels": str(self.data / "unseen.labels")})
        self.assert_fails(self.train(c), "unseen.labels", "maybe")
        self.assert_no_model_written()

    def test_divergence_restarts_with_warnings_then_fails_with_advice_and_writes_no_model(self):
        c = self.config(train={"features": str(self.data / "huge.npz"),
                               "labels": str(self.data / "train.labels")})
        c["optimizer"]["learning_rate"] = 1e36
        proc = self.train(c, "--quiet")
        self.assertNotEqual(proc.returncode, 0, proc.stderr)
        lines = proc.stderr.splitlines()
        # Eight restarts, each warned even with --quiet, at a tenth of the rate, then one error.
        self.assertEqual(len(lines), 9, proc.stderr)
        for k, line in enumerate(lines[:8]):
            self.assertTrue(line.startswith("bagel: warning: training diverged in epoch 1"), line)
            self.assertIn(f"restarting at learning_rate 1e+{35 - k}", line)
        self.assertTrue(lines[8].startswith("bagel: error: "), lines[8])
        self.assertIn("after 8 restarts", lines[8])
        self.assertIn("learning_rate 1e+28", lines[8])
        self.assert_no_model_written()

    def test_tune_writes_a_config_that_train_takes_as_is(self):
        c = self.config()
        c["optimizer"] = {"seed": 1}  # the defaults: "auto" rate and epochs
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "60",
                         "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
        self.assertEqual(len(rows), 1 + 40, proc.stdout)  # the header, then every trial
        self.assertEqual(sum(row.endswith(" best") for row in rows), 1)
        self.assertIn("config written to " + str(tuned), proc.stdout)
        best = json.loads(tuned.read_text())
        self.assertIsInstance(best["optimizer"]["learning_rate"], float)
        self.assertIsInstance(best["optimizer"]["epochs"], int)
        self.assertEqual(self.train(best, "--quiet").returncode, 0)
        meta = json.loads((self.model / "model.json").read_text())
        self.assertEqual(meta["training"]["learning_rate"], best["optimizer"]["learning_rate"])
        self.assertNotIn("rate_calibration", meta["training"])  # the rate is set: no search

    def test_tune_to_standard_output_prints_the_config_alone_there(self):
        # The table and summary went to stdout too, around the JSON, and
        # the summary advised "bagel train --config /dev/stdout".
        proc = run_bagel("generate", self.dir / "g.npz", "--labels-out", self.dir / "g.labels",
                         "--rows", 300, "--features", 50, "--seed", 1)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        c = {"train": {"features": str(self.dir / "g.npz"), "labels": str(self.dir / "g.labels")},
             "optimizer": {"epochs": 2, "threads": 1}, "output": str(self.model)}
        config = self.write_config(c)
        for output in ("-", "/dev/stdout"):
            with self.subTest(output=output):
                proc = run_bagel("tune", "--config", config, "-o", output, "--budget", "1",
                                 "--threads", "1", "--quiet")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                best = json.loads(proc.stdout)
                self.assertEqual(best["output"], str(self.model))
                rows = [line for line in proc.stderr.splitlines() if line.startswith("| ")]
                self.assertEqual(sum(row.endswith(" best") for row in rows), 1, proc.stderr)
                self.assertIn("config written to standard output", proc.stderr)
                self.assertNotIn("/dev/stdout", proc.stderr)
        # Piped, it trains as a file would.
        tune = subprocess.Popen([BAGEL, "tune", "--config", str(config), "-o", "-", "--budget", "1",
                                 "--threads", "1", "--quiet"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        train = subprocess.run([BAGEL, "train", "--config", "/dev/stdin", "--quiet"], stdin=tune.stdout,
                               capture_output=True, text=True, timeout=120)
        tune.stdout.close()
        self.assertEqual(tune.wait(timeout=120), 0)
        self.assertEqual(train.returncode, 0, train.stderr)
        self.assertTrue((self.model / "model.json").exists())

    def test_tune_without_a_valid_set_writes_the_averaging_its_trials_trained_with(self):
        # 10,500 rows: "auto" averages the trials' 80 % (8,400 rows, at most
        # 10,000) but not all of them, as train reads the config.
        proc = run_bagel("generate", self.dir / "g.npz", "--labels-out", self.dir / "g.labels",
                         "--rows", 10500, "--features", 500, "--classes", 3, "--seed", 5)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        c = {"train": {"features": str(self.dir / "g.npz"), "labels": str(self.dir / "g.labels")},
             "optimizer": {"seed": 1}, "output": str(self.model)}
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "1",
                         "--threads", "1", "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        best = json.loads(tuned.read_text())
        self.assertIs(best["optimizer"]["average"], True)
        proc = self.train(best)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("averaged", proc.stderr)
        self.assertIs(json.loads((self.model / "model.json").read_text())["training"]["average"], True)

    def test_tune_tries_the_configs_own_l2(self):
        # A set l2 is among the trials (the first, the config's own point),
        # in place of the nearest grid value: the written config can then
        # score no worse than the one given.
        c = self.config()
        c["optimizer"] = {"seed": 1, "l2": 0.0003}
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "60",
                         "-o", str(self.dir / "tuned.json"), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [line.split(" | ") for line in proc.stdout.splitlines() if line.startswith("| sigmoid")]
        self.assertEqual(len(rows), 40, proc.stdout)
        self.assertEqual(rows[0][2], "0.0003")
        self.assertEqual(sorted({float(row[2]) for row in rows}), [0, 1e-6, 1e-5, 3e-4])

    def test_tune_restarts_a_diverging_trial_as_train_does(self):
        # A rate train would restart at a tenth of (with a warning) used to
        # fail the trial, and every trial with "every trial failed".
        c = self.config(valid={"features": str(self.data / "valid.npz"),
                               "labels": str(self.data / "valid.labels")})
        c["optimizer"] = {"seed": 1, "learning_rate": 1000, "epochs": 3}
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "60",
                         "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")  # no warning a trial: the table says it
        rows = [line.split(" | ") for line in proc.stdout.splitlines() if line.startswith("| sigmoid")]
        self.assertEqual(len(rows), 40, proc.stdout)
        restarted = [row for row in rows if "diverged)" in row[1]]
        self.assertTrue(restarted, proc.stdout)
        for row in restarted:  # "10 (1000 diverged)": a power of ten below
            ran, asked = row[1].replace(" diverged)", "").split(" (")
            self.assertIn(round(math.log10(float(asked) / float(ran)), 9), {1, 2, 3, 4, 5, 6, 7, 8})
            self.assertNotEqual(row[4], "failed")
        best_row = next(row for row in rows if row[-1].endswith("best"))
        best = json.loads(tuned.read_text())
        self.assertEqual(best["optimizer"]["learning_rate"], float(best_row[1].split(" ")[0]))
        # The written rate is the one that trained: train takes it without a
        # restart and scores what the table said.
        proc = self.train(best)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("diverged", proc.stderr)
        meta = json.loads((self.model / "model.json").read_text())
        self.assertEqual(meta["training"]["divergence_restarts"], [])
        self.assertAlmostEqual(meta["training"]["history"][-1]["valid"]["accuracy"], float(best_row[4]),
                               places=4)

    def test_tune_under_the_optimal_schedule_varies_no_rate(self):
        # "optimal" sets its rates from alpha = l2 + l1: one trial per l2 above
        # 0 and epoch count, each with its first step's rate, alpha^(-1/4).
        c = self.config()
        c["optimizer"] = {"seed": 1, "schedule": "optimal", "l2": 1e-4}
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "60",
                         "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [line.split(" | ") for line in proc.stdout.splitlines() if line.startswith("| sigmoid")]
        self.assertEqual(len(rows), 6, proc.stdout)
        self.assertEqual(sorted((float(r[2]), int(r[3])) for r in rows),
                         sorted((l2, e) for l2 in (1e-6, 1e-5, 1e-4) for e in {int(r[3]) for r in rows}))
        for row in rows:
            self.assertAlmostEqual(float(row[1]), float(row[2]) ** -0.25, delta=1e-3 * float(row[1]))
        best = json.loads(tuned.read_text())
        self.assertEqual(best["optimizer"]["schedule"], "optimal")
        self.assertEqual(self.train(best, "--quiet").returncode, 0)

    def test_tunes_first_round_one_trial_a_thread_always_runs(self):
        # As README and --help say; only the defaults' trial had run.
        c = self.config()
        c["optimizer"] = {"seed": 1}
        for threads in (1, 3):
            proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "0.000001",
                             "--threads", threads, "-o", str(self.dir / "tuned.json"), "--quiet")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            rows = [line for line in proc.stdout.splitlines() if line.startswith("| sigmoid")]
            self.assertEqual(len(rows), threads, proc.stdout)
            self.assertIn(f"{threads} trials in", proc.stdout)
            self.assertIn(f"{40 - threads} left out by the budget", proc.stdout)

    def test_tune_refuses_to_write_over_its_inputs_and_makes_the_output_folder(self):
        # The tuned config is written after the whole search: over the
        # labels or the config it would have destroyed the run's own input.
        import shutil
        labels = self.dir / "train.labels"
        shutil.copy(self.data / "train.labels", labels)
        c = self.config()
        c["train"]["labels"] = str(labels)
        cfg = self.write_config(c)
        before = (labels.read_bytes(), Path(cfg).read_bytes())
        for target, named in ((labels, "train.labels"), (Path(cfg), "--config")):
            proc = run_bagel("tune", "--config", cfg, "--budget", "2", "-o", str(target), "--quiet")
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn("is the same file as " + named, proc.stderr)
        self.assertEqual((labels.read_bytes(), Path(cfg).read_bytes()), before)
        tuned = self.dir / "new" / "folder" / "tuned.json"
        proc = run_bagel("tune", "--config", cfg, "--budget", "2", "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIsInstance(json.loads(tuned.read_text())["optimizer"]["learning_rate"], float)

    def test_bench_checks_its_output_before_timing_and_keeps_its_inputs(self):
        notes = self.dir / "notes.txt"
        notes.write_text("hi\n")
        proc = run_bagel("bench", "-i", str(self.data / "train.npz"), "-o", str(notes), "--quiet")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("is a file, expected a folder", proc.stderr)
        self.assertEqual(proc.stdout, "")  # no timings were run
        import shutil
        out = self.dir / "bench-out"
        out.mkdir()
        shutil.copy(self.data / "train.labels", out / "bench.json")
        proc = run_bagel("bench", "-i", str(self.data / "train.npz"), "-l", str(out / "bench.json"),
                         "-o", str(out), "--set", "repetitions=1", "--quiet")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("is the same file as --labels", proc.stderr)
        self.assertEqual((out / "bench.json").read_bytes(), (self.data / "train.labels").read_bytes())

    def test_bench_refuses_a_file_without_rows_and_expects_nothing_of_empty_rows(self):
        empty = self.dir / "r0.svm"
        empty.write_text("")
        proc = run_bagel("bench", "--input", str(empty), "-o", str(self.dir / "b0"), "--quiet")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"{empty}: has no rows", proc.stderr)
        self.assertFalse((self.dir / "b0").exists())
        # Rows without entries: no cost model to compare with.
        bare = self.dir / "nnz0.svm"
        bare.write_text("0 \n1 \n")
        out = self.dir / "b1"
        proc = run_bagel("bench", "--input", str(bare), "-o", str(out), "--quiet",
                         "--set", "repetitions=1")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("000000x", proc.stdout)
        self.assertIn(" n/a ", proc.stdout)
        cases = json.loads((out / "bench.json").read_text())["cases"]
        self.assertTrue(cases)
        for case in cases:
            self.assertIsNone(case["expected_infer_ratio"])
            self.assertIsNone(case["expected_epoch_ratio"])

    def test_an_empty_valid_file_is_refused_before_any_training(self):
        # Found after the rate calibration and every trial, it had said
        # "metrics: no rows".
        tiny = self.dir / "tiny.svm"
        tiny.write_text("0 1:1 2:1\n1 3:1\n0 1:2\n1 3:2 4:1\n")
        empty = self.dir / "empty.svm"
        empty.write_text("")
        c = {"train": {"features": str(tiny)}, "valid": {"features": str(empty)},
             "output": str(self.model)}
        expected = f"{empty}: has no rows; a valid set (valid.features) needs at least one labelled row"
        proc = self.train(c)
        self.assert_fails(proc, expected)
        self.assertEqual(proc.returncode, 1)
        self.assertNotIn("epoch", proc.stderr)
        self.assert_no_model_written()
        tuned = self.dir / "et.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "-o", str(tuned))
        self.assert_fails(proc, expected)
        self.assertEqual(proc.returncode, 1)
        self.assertFalse(tuned.exists())

    def test_rows_of_weight_0_are_not_counted_as_clipped_steps(self):
        # One row of weight 1 among a thousand of weight 0: the rate suits
        # that row, and the others' clipped steps (they take none) must not
        # read as divergence.
        binary = REPO / "data" / "fortunes-binary"
        rows = len((binary / "train.labels").read_text().splitlines())
        (self.dir / "one.w").write_text("1\n" + "0\n" * (rows - 1))
        c = {"train": {"features": str(binary / "train.npz"), "labels": str(binary / "train.labels"),
                       "sample_weights": str(self.dir / "one.w")},
             "optimizer": {"threads": 1}, "output": str(self.model)}
        proc = self.train(c)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("diverged", proc.stderr)
        meta = json.loads((self.model / "model.json").read_text())["training"]
        self.assertEqual(meta.get("divergence_restarts", []), [])

    def test_the_summary_names_the_epoch_kept_when_the_epochs_run_out_first(self):
        multi = REPO / "data" / "fortunes-multi"
        c = {"train": {"features": str(multi / "train.npz"), "labels": str(multi / "train.labels")},
             "valid": {"features": str(multi / "valid.npz"), "labels": str(multi / "valid.labels")},
             "optimizer": {"epochs": 5, "learning_rate": 0.3, "schedule": "constant", "average": False,
                           "threads": 1, "patience": 3},
             "output": str(self.model)}
        proc = self.train(c)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        meta = json.loads((self.model / "model.json").read_text())["training"]
        self.assertFalse(meta["stopped_early"])
        self.assertLess(meta["best_epoch"], meta["epochs_run"])
        self.assertIn("trained 5 epochs in ", proc.stderr)
        self.assertIn("; kept epoch %d (the best valid log loss)" % meta["best_epoch"], proc.stderr)

    def test_rows_of_weight_0_do_not_set_the_auto_settings(self):
        # A copy of the training rows at 30 times the counts, weighted 0,
        # teaches nothing: the "auto" rate, epochs and averaging must be
        # those of the rows that count (the rate had been set 27 times too
        # low by the copies' scale, the epochs and averaging by their count).
        import numpy as np
        import scipy.sparse as sp
        multi = REPO / "data" / "fortunes-multi"
        x = sp.load_npz(multi / "train.npz").tocsr().astype(np.float32)
        labels = (multi / "train.labels").read_text().splitlines()
        n = x.shape[0]
        sp.save_npz(self.dir / "padded.npz", sp.vstack([x, x * np.float32(30)]).tocsr())
        (self.dir / "padded.labels").write_text("\n".join(labels * 2) + "\n")
        (self.dir / "padded.w").write_text("\n".join(["1"] * n + ["0"] * n) + "\n")
        plain = {"train": {"features": str(multi / "train.npz"), "labels": str(multi / "train.labels")},
                 "optimizer": {"threads": 1}, "output": str(self.dir / "plain")}
        padded = {"train": {"features": str(self.dir / "padded.npz"),
                            "labels": str(self.dir / "padded.labels"),
                            "sample_weights": str(self.dir / "padded.w")},
                  "optimizer": {"threads": 1}, "output": str(self.dir / "padded")}
        meta = {}
        for name, c in (("plain", plain), ("padded", padded)):
            proc = run_bagel("train", "--config", self.write_config(c, name + ".json"), "--quiet")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            meta[name] = json.loads((self.dir / name / "model.json").read_text())["training"]
        self.assertEqual(meta["padded"]["epochs"], meta["plain"]["epochs"])
        self.assertEqual(meta["padded"]["average"], meta["plain"]["average"])
        calibration = [meta[k]["rate_calibration"] for k in ("plain", "padded")]
        self.assertLess(abs(calibration[1]["mean_squared_norm"] / calibration[0]["mean_squared_norm"] - 1), 0.2)
        ratio = meta["padded"]["learning_rate"] / meta["plain"]["learning_rate"]
        self.assertTrue(0.25 <= ratio <= 4, ratio)

    def test_tune_tries_both_multiclass_heads_and_writes_the_best_ones(self):
        multi = REPO / "data" / "fortunes-multi"
        c = {"train": {"features": str(multi / "train.npz"), "labels": str(multi / "train.labels")},
             "valid": {"features": str(multi / "valid.npz"), "labels": str(multi / "valid.labels")},
             "optimizer": {"seed": 1}, "output": str(self.model)}
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "120",
                         "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [line.split("|")[1].strip() for line in proc.stdout.splitlines()
                if line.startswith("| ")][1:]
        self.assertEqual(len(rows), 80, proc.stdout)
        self.assertEqual(rows[:2], ["ovr", "softmax"])  # the default head first
        best_row = next(line for line in proc.stdout.splitlines() if line.endswith(" best"))
        best = json.loads(tuned.read_text())
        self.assertEqual(best["model"]["multiclass"], best_row.split("|")[1].strip())
        self.assertEqual(self.train(best, "--quiet").returncode, 0)
        meta = json.loads((self.model / "model.json").read_text())
        self.assertEqual(meta["output"], best["model"]["multiclass"])

    def test_tunes_table_is_what_train_gives_for_rows_of_small_norm_and_early_stopping(self):
        # Counts times 0.05 (mean |x|^2 below 1/2: the calibrated bias rate
        # is below 1) with early stopping: the trials had run with the bias
        # at the full rate and without stopping, so the defaults' row was
        # not the defaults' model and the written config trained to another
        # score than the table's best.
        import numpy as np
        import scipy.sparse as sp
        multi = REPO / "data" / "fortunes-multi"
        for part in ("train", "valid"):
            x = sp.load_npz(multi / f"{part}.npz").astype(np.float32) * np.float32(0.05)
            sp.save_npz(self.dir / f"small-{part}.npz", x.tocsr())
        c = {"train": {"features": str(self.dir / "small-train.npz"), "labels": str(multi / "train.labels")},
             "valid": {"features": str(self.dir / "small-valid.npz"), "labels": str(multi / "valid.labels")},
             "optimizer": {"patience": 3}, "output": str(self.model)}
        self.assertEqual(self.train(c, "--quiet").returncode, 0)
        defaults = json.loads((self.model / "model.json").read_text())["training"]["valid_metrics"]
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(c), "--budget", "120",
                         "-o", str(tuned), "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = [line for line in proc.stdout.splitlines() if line.startswith("| ")][1:]
        rows = [[f.strip() for f in line.split("|")[1:-1]] for line in lines]
        self.assertEqual(float(rows[0][4]), round(defaults["accuracy"], 4), proc.stdout)
        best = rows[next(i for i, line in enumerate(lines) if line.endswith(" best"))]
        self.assertEqual(self.train(json.loads(tuned.read_text()), "--quiet").returncode, 0)
        again = json.loads((self.model / "model.json").read_text())["training"]["valid_metrics"]
        self.assertEqual(round(again["accuracy"], 4), float(best[4]))
        # A warm start is refused: the trials start from zeros. The config's
        # key is named as its other errors are (exit 1; a --set's is 2).
        c["init"] = str(self.model)
        proc = run_bagel("tune", "--config", self.write_config(c), "-o", str(tuned))
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("cfg.json: init: the config starts from a model", proc.stderr)

    def test_tune_with_a_budget_of_zero_is_a_one_line_error_and_writes_nothing(self):
        tuned = self.dir / "tuned.json"
        proc = run_bagel("tune", "--config", self.write_config(self.config()), "--budget", "0",
                         "-o", str(tuned))
        self.assert_fails(proc, "--budget", "> 0")
        self.assertEqual(proc.returncode, 2, "a bad argument is a usage error")
        self.assertFalse(tuned.exists())

    def test_divergence_at_an_absurd_rate_restarts_and_saves_a_finite_model(self):
        c = self.config()
        c["optimizer"]["learning_rate"] = 1e6
        proc = self.train(c, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("bagel: warning: training diverged", proc.stderr)
        meta = json.loads((self.model / "model.json").read_text())
        restarts = meta["training"]["divergence_restarts"]
        self.assertGreater(len(restarts), 0)
        self.assertEqual(restarts[0]["learning_rate"], 1e6)
        self.assertLess(meta["training"]["learning_rate"], 1e6)
        self.assertTrue(np.isfinite(np.load(self.model / "weight.npy")).all())

    def test_failed_run_leaves_the_previous_model_intact(self):
        self.assertEqual(self.train(self.config(), "--quiet").returncode, 0)
        before = {p.name: p.read_bytes() for p in self.model.iterdir()}
        c = self.config(train={"features": str(self.data / "huge.npz"),
                               "labels": str(self.data / "train.labels")})
        c["optimizer"]["learning_rate"] = 1e36
        self.assertNotEqual(self.train(c, "--quiet").returncode, 0)
        after = {p.name: p.read_bytes() for p in self.model.iterdir()}
        self.assertEqual(before, after)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir() if p.name.startswith("model")),
                         ["model"])

    # -- output ----------------------------------------------------------

    def test_reordering_features_leaves_the_saved_model_unchanged(self):
        # The valid set is wider than the training set: its extra features get
        # numbers too and must come back to their own rows of weight.npy.
        wide = sp.hstack([sp.load_npz(self.data / "valid.npz"),
                          sp.csr_matrix(np.ones((40, 3)))]).tocsr()
        sp.save_npz(self.dir / "wide.npz", wide)
        models = {}
        for reorder in (True, False):
            out = self.dir / f"m_{reorder}"
            c = self.config(output=str(out),
                            valid={"features": str(self.dir / "wide.npz"),
                                   "labels": str(self.data / "valid.labels")})
            c["optimizer"]["reorder_features"] = reorder
            c["optimizer"]["l1"] = 1e-3
            proc = self.train(c, "--quiet")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            models[reorder] = out
            training = json.loads((out / "model.json").read_text())["training"]
            self.assertIs(training["features_reordered"], reorder)
            self.assertLessEqual(training["reorder_seconds"], training["train_seconds"])
        on, off = (np.load(models[r] / "weight.npy") for r in (True, False))
        self.assertEqual(on.shape, (18, 1))
        self.assertTrue(np.any(on != 0))
        self.assertEqual(on.tobytes(), off.tobytes())
        self.assertEqual((models[True] / "bias.npy").read_bytes(),
                         (models[False] / "bias.npy").read_bytes())
        for m in ("train_metrics", "valid_metrics"):
            a, b = (json.loads((models[r] / "model.json").read_text())["training"][m]
                    for r in (True, False))
            self.assertEqual(a, b)

    def test_average_saves_the_mean_model_and_reports_its_metrics(self):
        # Averaged SGD: the saved weights are the mean iterate (not the last
        # one), the same with and without feature renumbering, and the train
        # metrics in model.json are those of the saved model (recomputed here
        # with numpy from weight.npy and bias.npy).
        models = {}
        for average, reorder in ((False, True), (True, True), (True, False)):
            out = self.dir / f"avg_{average}_{reorder}"
            c = self.config(output=str(out))
            c["optimizer"].update(average=average, reorder_features=reorder)
            proc = self.train(c, "--quiet")
            self.assertEqual(proc.returncode, 0, proc.stderr)
            models[average, reorder] = out
        plain, on, off = (np.load(models[k] / "weight.npy")
                          for k in ((False, True), (True, True), (True, False)))
        self.assertEqual(on.tobytes(), off.tobytes())
        self.assertGreater(np.abs(on - plain).max(), 1e-4)
        out = models[True, True]
        self.assertIs(json.loads((out / "model.json").read_text())["config"]["optimizer"]["average"],
                      True)
        x = sp.load_npz(self.data / "train.npz").astype(np.float64)
        z = x @ on.astype(np.float64) + np.load(out / "bias.npy").astype(np.float64)
        labels = (self.data / "train.labels").read_text().split()
        classes = json.loads((out / "model.json").read_text())["classes"]
        predicted = [classes[1] if v > 0 else classes[0] for v in z[:, 0]]
        accuracy = np.mean([p == t for p, t in zip(predicted, labels)])
        reported = json.loads((out / "model.json").read_text())["training"]["train_metrics"]
        self.assertAlmostEqual(reported["accuracy"], accuracy, places=6)

    def test_quiet_prints_nothing(self):
        c = self.config(valid={"features": str(self.data / "valid.npz"),
                               "labels": str(self.data / "valid.labels")})
        proc = self.train(c, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stderr, "")
        self.assertEqual(proc.stdout, "")
        self.assertTrue((self.model / "model.json").is_file())

    def test_progress_shows_epoch_lines_with_loss_and_speed(self):
        c = self.config(valid={"features": str(self.data / "valid.npz"),
                               "labels": str(self.data / "valid.labels")})
        proc = self.train(c)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        epoch_lines = [l for l in proc.stderr.splitlines() if l.startswith("epoch ")]
        self.assertEqual(len(epoch_lines), 3, proc.stderr)
        for i, line in enumerate(epoch_lines, start=1):
            self.assertTrue(line.startswith(f"epoch {i}/3"), line)
            self.assertIn("loss", line)
            self.assertIn("samples/s", line)
            self.assertIn("valid", line)  # validation metrics on each epoch's line
        self.assertIn(str(self.model), proc.stderr)  # where the model went
        self.assertEqual(proc.stdout, "")


if __name__ == "__main__":
    unittest.main()
