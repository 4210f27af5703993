"""Every failure is one line on stderr, `bagel: error: <where>: <what was
expected>`, CLI11's included; the exit status is 2 when the command line must
change (usage) and 1 when the data, a file or the config must.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_cli_errors
"""

import json
import os
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file

from cli_helpers import run_bagel, write_labeled_set

COMMANDS = "train, tune, predict, inspect, bench, convert, generate, vectorize"



class ErrorLines(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-errors-")
        cls.dir = Path(cls._tmp.name)
        cls.x, _ = write_labeled_set(cls.dir, 100, 20, 0.3, 8, ("yes", "no"))
        cls.config = cls.dir / "cfg.json"
        cls.config.write_text(json.dumps({
            "train": {"features": "train.npz", "labels": "train.labels"},
            "optimizer": {"epochs": 1}, "output": "model"}))
        proc = run_bagel("train", "--config", cls.config, "--quiet")
        assert proc.returncode == 0, proc.stderr
        cls.model = cls.dir / "model"

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def assert_error(self, proc, status, *fragments, exact=None):
        self.assertEqual(proc.returncode, status, proc.stderr)
        self.assertEqual(proc.stdout, "")
        self.assertTrue(proc.stderr.startswith("bagel: error: "), proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, "one line:\n" + proc.stderr)
        if exact is not None:
            self.assertEqual(proc.stderr, "bagel: error: " + exact + "\n")
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)

    # -- usage errors: exit 2 --------------------------------------------

    def test_exact_below_its_batch_size_names_the_set_that_chose_it(self):
        # Known once the rows are (two threads need 2,000): it had named
        # optimizer.batch_size, a key the config does not hold, with exit 1.
        big = self.dir / "g3000.npz"
        proc = run_bagel("generate", big, "--labels-out", self.dir / "g3000.labels",
                         "--rows", "3000", "--features", "200", "--nnz-per-row", "10")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        config = self.dir / "exact.json"
        config.write_text(json.dumps({"train": {"features": "g3000.npz", "labels": "g3000.labels"},
                                      "optimizer": {"epochs": 1, "threads": 2}, "output": "mx"}))
        proc = run_bagel("train", "--config", config, "--quiet",
                         "--set", "optimizer.deterministic_method=exact")
        self.assert_error(proc, 2, "--set optimizer.deterministic_method=exact: is \"exact\", "
                                   "which splits each batch over the 2 threads", "(batch_size is 1)")
        self.assertFalse((self.dir / "mx").exists())

    def test_an_unknown_command_is_named_with_the_commands(self):
        self.assert_error(run_bagel("fit", "--config", self.config), 2,
                          exact=f"unknown command 'fit' (expected {COMMANDS})")

    def test_no_command_lists_the_commands(self):
        self.assert_error(run_bagel(), 2, COMMANDS, "--help")

    def test_a_missing_option_names_the_command_and_the_option(self):
        self.assert_error(run_bagel("predict", "-i", self.dir / "train.npz"), 2,
                          "predict: ", "--model is required")

    def test_a_missing_input_file_is_a_usage_error(self):
        missing = self.dir / "nope.svm"
        self.assert_error(run_bagel("predict", "-m", self.model, "-i", missing), 2,
                          "predict: ", "--input", str(missing))
        self.assert_error(run_bagel("vectorize", "-i", missing, "-o", self.dir / "v.npz"), 2,
                          "vectorize: ", "--input", str(missing))

    def test_a_missing_labels_file_is_a_usage_error_in_every_command(self):
        missing = self.dir / "nope.labels"
        train = self.dir / "train.npz"
        self.assert_error(run_bagel("convert", train, self.dir / "c.svm", "--labels", missing), 2,
                          "convert: --labels", str(missing))
        self.assert_error(run_bagel("bench", "-i", train, "-l", missing), 2,
                          "bench: --labels", str(missing))
        self.assertFalse((self.dir / "c.svm").exists())

    def test_a_negative_top_names_the_range(self):
        self.assert_error(run_bagel("inspect", "-m", self.model, "--top", "-1"), 2,
                          exact="inspect: --top: expected an integer >= 0, found '-1' "
                                "(see bagel inspect --help)")

    def test_numeric_options_say_what_they_expect_and_what_they_found(self):
        # Each numeric option of each command, given a word, a fraction for an
        # integer, nan or a value out of range: one form of message, exit 2.
        text = self.dir / "docs.tsv"
        text.write_text("a\tone doc\n")
        npz = self.dir / "train.npz"
        cases = [
            (["tune", "-c", self.config, "--budget", "x"], "tune: --budget: expected a number > 0, found 'x'"),
            (["tune", "-c", self.config, "--threads", "-1"],
             "tune: --threads: expected an integer in [0, 1024], found '-1'"),
            (["predict", "-m", self.model, "-i", npz, "--threads", "1x"],
             "predict: --threads: expected an integer in [0, 1024], found '1x'"),
            (["predict", "-m", self.model, "-i", npz, "--threshold", "nan"],
             "predict: --threshold: expected a probability in [0, 1], found 'nan'"),
            (["inspect", "-m", self.model, "--top", "x"], "inspect: --top: expected an integer >= 0, found 'x'"),
            (["inspect", "-m", self.model, "--explain", "-i", npz, "--row", "x"],
             "inspect: --row: expected an integer >= 0, found 'x'"),
            (["vectorize", "-i", text, "-o", self.dir / "v.npz", "--format", "tsv", "--tsv-text-column", "-5"],
             "vectorize: --tsv-text-column: expected an integer >= 0, found '-5'"),
            (["vectorize", "-i", text, "-o", self.dir / "v.npz", "--format", "tsv", "--tsv-label-column", "x"],
             "vectorize: --tsv-label-column: expected an integer >= -1, found 'x'"),
            (["vectorize", "-i", text, "-o", self.dir / "v.npz", "--threads", "2000"],
             "vectorize: --threads: expected an integer in [0, 1024], found '2000'"),
            (["generate", self.dir / "g.npz", "--labels-out", self.dir / "g.labels", "--rows", "1.5"],
             "generate: --rows: expected an integer in [0, 2000000000], found '1.5'"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                self.assert_error(run_bagel(*args), 2, exact=message + f" (see bagel {args[0]} --help)")
        self.assertEqual(sorted(p.name for p in self.dir.glob("[gv].*")), [])

    def test_labels_out_without_labels_is_a_usage_error(self):
        out, labels = self.dir / "no-labels.npz", self.dir / "no-labels.labels"
        self.assert_error(run_bagel("convert", self.dir / "train.npz", out, "--labels-out", labels), 2,
                          "--labels-out: there are no labels to write", "--labels FILE")
        self.assertFalse(out.exists() or labels.exists())

    def test_generate_refuses_sizes_it_cannot_make(self):
        out, labels = self.dir / "gen.npz", self.dir / "gen.labels"
        for args, fragment in ((["--nnz-per-row", "nan"], "--nnz-per-row: expected a number > 0, found 'nan'"),
                               (["--nnz-per-row", "0"], "--nnz-per-row: expected a number > 0, found '0'"),
                               (["--zipf", "-1"], "--zipf: expected a number >= 0, found '-1'"),
                               (["--classes", "10001"],
                                "--classes: expected an integer in [2, 10000], found '10001'")):
            self.assert_error(run_bagel("generate", out, "--labels-out", labels, "--rows", "5", *args),
                              2, fragment)
        self.assert_error(run_bagel("generate", self.dir / "gen.svm", "--labels-out", labels), 2,
                          "generate writes a scipy CSR .npz")
        self.assertFalse(out.exists() or labels.exists() or (self.dir / "gen.svm").exists())

    def test_a_missing_model_config_or_vectorizer_folder_is_a_usage_error(self):
        missing = self.dir / "nowhere"
        text = self.dir / "docs.txt"
        text.write_text("one doc\nanother doc\n")
        self.assert_error(run_bagel("predict", "-m", missing, "-i", self.dir / "train.npz"), 2,
                          "predict: --model: no such folder", str(missing))
        self.assert_error(run_bagel("inspect", "-m", self.dir / "train.npz"), 2,
                          "inspect: --model:", "is a file, expected a folder")
        self.assert_error(run_bagel("vectorize", "-i", text, "-o", self.dir / "v.npz", "-c", missing), 2,
                          "vectorize: --config: no such file", str(missing))
        self.assert_error(run_bagel("vectorize", "-i", text, "-o", self.dir / "v.npz",
                                    "--vectorizer", missing), 2,
                          "vectorize: --vectorizer: no such folder", str(missing))

    def test_an_empty_path_is_a_usage_error_naming_its_option(self):
        # An empty value had read as the option not given: train -o '' replaced
        # the config's model, tune -o '' ./tuned.json, predict -o '' wrote stdout.
        npz, labels = self.dir / "train.npz", self.dir / "train.labels"
        text = self.dir / "empty-path-docs.txt"
        text.write_text("one doc\nanother doc\n")
        cwd = self.dir / "empty-path-cwd"
        cwd.mkdir()
        model_before = {p.name: p.read_bytes() for p in self.model.iterdir()}
        vectorize = ["vectorize", "-i", text, "-o", cwd / "v.npz"]
        cases = [
            (["train", "--config", self.config, "-o", ""], "train: --output"),
            (["train", "--config", self.config, "--init", ""], "train: --init"),
            (["train", "--config", ""], "train: --config"),
            (["tune", "--config", self.config, "-o", "", "--budget", "1"], "tune: --output"),
            (["tune", "--config", ""], "tune: --config"),
            (["predict", "-m", self.model, "-i", npz, "-o", ""], "predict: --output"),
            (["predict", "-m", self.model, "-i", npz, "-l", labels, "--metrics", ""], "predict: --metrics"),
            (["predict", "-m", "", "-i", npz], "predict: --model"),
            (["predict", "-m", self.model, "-i", ""], "predict: --input"),
            (["predict", "-m", self.model, "-i", npz, "-l", ""], "predict: --labels"),
            (["inspect", "-m", self.model, "--vocabulary", ""], "inspect: --vocabulary"),
            (["inspect", "-m", self.model, "--explain", "-i", ""], "inspect: --input"),
            (["convert", npz, ""], "convert: output"),
            (["convert", "", cwd / "x.svm"], "convert: input"),
            (["convert", npz, cwd / "x.svm", "--labels", ""], "convert: --labels"),
            (["convert", npz, cwd / "x.svm", "--labels", labels, "--labels-out", ""], "convert: --labels-out"),
            (["generate", "", "--labels-out", cwd / "y.txt"], "generate: output"),
            (["generate", cwd / "x.npz", "--labels-out", ""], "generate: --labels-out"),
            (["bench", "-o", ""], "bench: --output"),
            (["bench", "-c", ""], "bench: --config"),
            (["bench", "-i", ""], "bench: --input"),
            (["bench", "-i", npz, "-l", ""], "bench: --labels"),
            (["vectorize", "-i", text, "-o", ""], "vectorize: --output"),
            (["vectorize", "-i", "", "-o", cwd / "v.npz"], "vectorize: --input"),
            (vectorize + ["--labels", ""], "vectorize: --labels"),
            (vectorize + ["--config", ""], "vectorize: --config"),
            (vectorize + ["--vectorizer", ""], "vectorize: --vectorizer"),
            (vectorize + ["--vocabulary-out", ""], "vectorize: --vocabulary-out"),
            (vectorize + ["--labels-out", ""], "vectorize: --labels-out"),
            (vectorize + ["--weights-out", ""], "vectorize: --weights-out"),
            (vectorize + ["--vectorizer-out", ""], "vectorize: --vectorizer-out"),
        ]
        for args, where in cases:
            with self.subTest(args=" ".join(map(str, args))):
                self.assert_error(run_bagel(*args, cwd=cwd), 2, where + ": is empty, expected a path")
        self.assertEqual(list(cwd.iterdir()), [])
        self.assertEqual({p.name: p.read_bytes() for p in self.model.iterdir()}, model_before)

    def test_a_missing_init_folder_is_a_usage_error(self):
        missing = self.dir / "no-such-model"
        self.assert_error(run_bagel("train", "--config", self.config, "-o", self.dir / "init-out",
                                    "--init", missing), 2,
                          "train: --init: no such folder", str(missing))
        self.assertFalse((self.dir / "init-out").exists())

    def test_a_tab_in_line_one_says_why_the_text_was_read_as_tsv(self):
        text = self.dir / "tabbed.txt"
        text.write_text("first doc\twith a tab\nsecond doc without\n")
        self.assert_error(run_bagel("vectorize", "-i", text, "-o", self.dir / "tab.npz"), 1,
                          str(text) + ":2: 1 column", "read as TSV because its first line has a tab")
        named = run_bagel("vectorize", "-i", text, "--format", "tsv", "-o", self.dir / "tab.npz")
        self.assertNotIn("because its first line", named.stderr)
        self.assertEqual(run_bagel("vectorize", "-q", "-i", text, "--format", "lines", "-o",
                                   self.dir / "tab.npz").returncode, 0)

    def test_bad_tsv_columns_name_the_option(self):
        table = self.dir / "table.csv"
        table.write_text("a,one doc\nb,another doc\n")
        self.assert_error(run_bagel("vectorize", "-i", table, "--format", "csv", "-o", self.dir / "t.npz",
                                    "--tsv-text-column", "-2"), 2,
                          "--tsv-text-column: expected an integer >= 0, found '-2'")
        self.assert_error(run_bagel("vectorize", "-i", table, "--format", "csv", "-o", self.dir / "t.npz",
                                    "--tsv-label-column", "1"), 2, "--tsv-text-column: column 1 is also")
        self.assertFalse((self.dir / "t.npz").exists())

    def test_a_value_outside_the_choices_is_a_usage_error(self):
        self.assert_error(run_bagel("predict", "-m", self.model, "-i", self.dir / "train.npz",
                                    "--format", "xml"), 2, "predict: ", "--format")

    def test_an_unknown_option_is_a_usage_error(self):
        self.assert_error(run_bagel("train", "--config", self.config, "--epochs", "3"), 2,
                          "train: ", "--epochs")

    def test_set_with_an_unknown_key_names_the_set_and_the_nearest_key(self):
        self.assert_error(run_bagel("train", "--config", self.config,
                                    "--set", "optimizer.lr=0.01"), 2,
                          exact="--set optimizer.lr=0.01: unknown key 'lr'; "
                                "did you mean 'learning_rate'?")

    def test_set_with_a_bad_value_names_the_set_not_the_config_file(self):
        proc = run_bagel("train", "--config", self.config, "--set", "optimizer.epochs=ten")
        self.assert_error(proc, 2, "--set optimizer.epochs=ten: expected an integer")
        self.assertNotIn("cfg.json", proc.stderr)

    def test_a_missing_file_given_by_set_names_the_set_as_an_input_argument_would(self):
        # As for a missing -i (exit 2): it had exited 1 naming only a path
        # resolved against the config's folder, which the user never typed.
        missing = self.dir / "nope.npz"
        for command, key in [("train", "train.features"), ("train", "train.labels"),
                             ("train", "valid.features"), ("tune", "train.features")]:
            with self.subTest(command=command, key=key):
                extra = ["--set", "valid.labels=train.labels"] if key.startswith("valid") else []
                proc = run_bagel(command, "--config", self.config, "--set", f"{key}=nope.npz", *extra,
                                 "-o", self.dir / "never")
                self.assert_error(proc, 2, exact=f"--set {key}=nope.npz: {missing}: cannot open: "
                                                 "No such file or directory")
                self.assertFalse((self.dir / "never").exists())
        # The same file named in the config file is a data error (exit 1).
        config = self.dir / "missing.json"
        config.write_text(json.dumps({"train": {"features": "nope.npz", "labels": "train.labels"},
                                      "output": "never"}))
        self.assert_error(run_bagel("train", "--config", config), 1,
                          exact=f"{missing}: cannot open: No such file or directory")

    def test_a_number_past_a_doubles_range_is_not_taken_for_a_string(self):
        # It had said "expected a number, found a string" of 1e400.
        for value in ("1e400", "-1e400"):
            with self.subTest(value=value):
                proc = run_bagel("train", "--config", self.config, "--set", f"optimizer.l2={value}")
                self.assert_error(proc, 2, exact=f"--set optimizer.l2={value}: number overflow parsing "
                                                 f"'{value}' (a number beyond the range of a double)")

    def test_zero_based_of_another_type_names_the_values_it_takes(self):
        # It had said "expected a string, found an integer": true and false are taken too.
        proc = run_bagel("train", "--config", self.config, "--set", "train.zero_based=1")
        self.assert_error(proc, 2, exact='--set train.zero_based=1: expected "auto", true or false, found 1')

    def test_an_integer_outside_the_keys_range_names_the_range_however_written(self):
        # Digits past 2^63 or 2^64 and exponents alike: the key's range, as
        # for 4294967296 (they had named the int64 range, or asked for the
        # number in digits, which would be as far out of range).
        for value, shown in [("4294967296", "4294967296"),
                             ("9223372036854775808", "9223372036854775808"),
                             ("18446744073709551616", "1.8446744073709552e+19"),
                             ("1e16", "1e+16"), ("1e30", "1e+30"), ("-1e30", "-1e+30")]:
            with self.subTest(value=value):
                proc = run_bagel("train", "--config", self.config, "--set", f"optimizer.epochs={value}")
                self.assert_error(proc, 2, exact=f"--set optimizer.epochs={value}: expected an integer "
                                                 f"in [1, 2147483647], found {shown}")
        proc = run_bagel("vectorize", "-i", self.config, "-o", self.dir / "h.npz", "-q",
                         "--set", "kind=hashing", "--set", "n_features=1e16")
        self.assert_error(proc, 2, exact="--set n_features=1e16: expected an integer in "
                                         "[1, 2147483646], found 1e+16")
        # Only where the key's range reaches past 9e15 is an exponent the
        # trouble: the seed in digits is read exactly.
        proc = run_bagel("train", "--config", self.config, "--set", "optimizer.seed=1e16")
        self.assert_error(proc, 2, "--set optimizer.seed=1e16: expected an integer, found 1e+16: "
                                   "from 9e15 on, write it in digits alone")
        proc = run_bagel("train", "--config", self.config, "--quiet", "-o", self.dir / "seeded",
                         "--set", "optimizer.seed=10000000000000000")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_metrics_without_labels_is_a_usage_error(self):
        self.assert_error(run_bagel("predict", "-m", self.model, "-i", self.dir / "train.npz",
                                    "--metrics", self.dir / "m.json"), 2, "--metrics", "--labels")

    def test_metrics_on_own_labels_outside_the_classes_is_one_error(self):
        # The svmlight input's labels (7) are not the model's classes (yes,
        # no): the error alone, without the note predict prints otherwise;
        # streamed (--zero-based given) or read whole.
        svm = self.dir / "sevens.svm"
        svm.write_text("".join(f"7 {j + 1}:1\n" for j in range(5)))
        for extra in ((), ("--zero-based", "false")):
            with self.subTest(extra=extra):
                proc = run_bagel("predict", "-m", self.model, "-i", svm,
                                 "--metrics", self.dir / "m7.json", *extra)
                self.assert_error(proc, 2, "--metrics", "--labels",
                                  "not all classes of the model")
                self.assertFalse((self.dir / "m7.json").exists())

    def test_an_output_that_is_an_input_or_another_output_is_refused_before_any_work(self):
        features = self.dir / "train.npz"
        before = features.read_bytes()
        model_json = (self.model / "model.json").read_bytes()
        text = self.dir / "docs.txt"
        text.write_text("one document\nanother one\n")
        for args, fragment in [
            (("predict", "-m", self.model, "-i", features, "-o", features), "the same file as -i"),
            (("predict", "-m", self.model, "-i", features, "-o", self.model / "model.json"),
             "the same file as the model's model.json"),
            (("predict", "-m", self.model, "-i", features, "--metrics",
              self.dir / "x" / ".." / "train.labels", "-l", self.dir / "train.labels"),
             "the same file as --labels"),
            (("generate", self.dir / "g.npz", "--labels-out", self.dir / "." / "g.npz"),
             "--labels-out"),
            (("convert", features, features), "the same file as input"),
            (("vectorize", "-i", text, "-o", text), "the same file as --input"),
            (("vectorize", "-i", text, "-o", self.dir / "v.npz", "--vocabulary-out", self.dir / "v.npz"),
             "each output needs a file of its own"),
        ]:
            with self.subTest(args=args[:1]):
                self.assert_error(run_bagel(*args), 2, fragment)
        self.assertEqual(features.read_bytes(), before)
        self.assertEqual((self.model / "model.json").read_bytes(), model_json)
        self.assertEqual(text.read_text(), "one document\nanother one\n")
        self.assertFalse((self.dir / "g.npz").exists())

    def test_an_output_file_name_ending_in_a_slash_is_refused_before_any_work(self):
        for args in (("predict", "-m", self.model, "-i", self.dir / "train.npz", "-o", f"{self.dir}/new1/"),
                     ("convert", self.dir / "train.npz", f"{self.dir}/new2/"),
                     ("generate", f"{self.dir}/new3/", "--labels-out", self.dir / "g3.labels")):
            with self.subTest(command=args[0]):
                self.assert_error(run_bagel(*args), 2, "ends in '/', expected a file name")
        for name in ("new1", "new2", "new3"):
            self.assertFalse((self.dir / name).exists())

    def test_a_full_disk_under_stdout_is_an_error_for_inspect(self):
        import subprocess
        from cli_helpers import BAGEL
        with open("/dev/full", "w") as full:
            proc = subprocess.run([BAGEL, "inspect", "-m", self.model], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertEqual(proc.stderr, "bagel: error: <stdout>: write failed: No space left on device\n")

    def test_a_full_disk_under_stdout_names_its_own_errno_for_bench(self):
        # The errno read at the end was stale: "write failed: No such file or directory".
        import subprocess
        from cli_helpers import BAGEL
        with open("/dev/full", "w") as full:
            proc = subprocess.run([BAGEL, "bench", "-i", self.dir / "train.npz", "-q",
                                   "-o", self.dir / "bench-full"], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(proc.stderr.endswith("bagel: error: <stdout>: write failed: No space left on "
                                             "device\n"), proc.stderr)

    def test_a_closed_pipe_on_stdout_ends_convert_and_generate_quietly(self):
        # As inspect and predict end there (SIGPIPE), where convert said
        # "/dev/stdout: write failed: Broken pipe"; no temporary is left.
        import signal
        import subprocess
        from cli_helpers import BAGEL
        out = self.dir / "pipe-case"
        out.mkdir()
        labels = self.dir / "numeric.labels"
        labels.write_text("".join(f"{i % 2}\n" for i in range(100)))
        for args in (["convert", self.dir / "train.npz", "-", "--labels", labels],
                     ["convert", self.dir / "train.npz", out / "x.svm", "--labels", labels, "--labels-out", "-"],
                     ["generate", "-", "--labels-out", out / "g.labels", "--rows", 20000]):
            with self.subTest(args=args[:3]):
                r, w = os.pipe()
                os.close(r)  # no reader, before the first byte
                proc = subprocess.run([BAGEL, *map(str, args)], stdout=w, stderr=subprocess.PIPE,
                                      text=True, timeout=120)
                os.close(w)
                self.assertEqual((proc.returncode, proc.stderr), (-signal.SIGPIPE, ""))
                self.assertEqual(list(out.iterdir()), [])

    def test_a_failed_write_says_why(self):
        proc = run_bagel("predict", "-m", self.model, "-i", self.dir / "train.npz", "-o", "/dev/full")
        self.assert_error(proc, 1, exact="/dev/full: write failed: No space left on device")

    def test_a_huge_omp_num_threads_is_capped(self):
        # OpenMP's runtime takes OMP_NUM_THREADS as it is: 100000 threads
        # for the first parallel loop crashed generate (exit 139).
        import os
        import subprocess
        from cli_helpers import BAGEL
        proc = subprocess.run([BAGEL, "generate", self.dir / "omp.npz", "--labels-out",
                               self.dir / "omp.labels", "--rows", "2000", "--features", "1000"],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "OMP_NUM_THREADS": "100000"})
        self.assertEqual(proc.returncode, 0, proc.stderr)

    # -- data errors: exit 1 ---------------------------------------------

    def test_a_missing_data_file_in_the_config_is_a_data_error(self):
        config = self.dir / "missing.json"
        config.write_text(json.dumps({"train": {"features": "nope.npz", "labels": "x"}}))
        self.assert_error(run_bagel("train", "--config", config, "-o", self.dir / "m1"), 1,
                          str(self.dir / "nope.npz"))

    def test_an_empty_labels_file_says_so_and_names_it(self):
        empty = self.dir / "empty.labels"
        empty.write_text("")
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "m2",
                         "--set", f"train.labels={empty}")
        self.assert_error(proc, 1, f"{empty}: the labels file is empty", "100 rows")
        proc = run_bagel("predict", "-m", self.model, "-i", self.dir / "train.npz", "-l", empty)
        self.assert_error(proc, 1, f"{empty}: the labels file is empty")

    def test_a_labels_file_one_line_too_long_is_named_by_its_count(self):
        # Its extra line is no class: it had been reported as an unknown
        # label, which sends the user looking for a typo that is not there.
        labels = (self.dir / "train.labels").read_text().splitlines()
        long_file = self.dir / "long.labels"
        long_file.write_text("\n".join(labels + ["header"]) + "\n")
        for data in ("train.npz", "train.svm"):
            with self.subTest(data=data):
                if data == "train.svm":
                    x = sp.load_npz(self.dir / "train.npz")
                    dump_svmlight_file(x, np.zeros(x.shape[0]), self.dir / data, zero_based=True)
                proc = run_bagel("predict", "-m", self.model, "-i", self.dir / data, "-l", long_file,
                                 "--metrics", self.dir / "never.json", "--zero-based", "true")
                self.assert_error(proc, 1, exact=f"{long_file}: has 101 labels but {self.dir / data} has 100 rows")
        self.assertFalse((self.dir / "never.json").exists())

    def test_tune_names_where_init_came_from(self):
        proc = run_bagel("tune", "--config", self.config, "--set", f"init={self.model}", "--budget", 1,
                         "-o", self.dir / "t.json")
        self.assert_error(proc, 2, f"--set init={self.model}: the config starts from a model")
        cfg = json.loads(Path(self.config).read_text())
        cfg["init"] = str(self.model)
        with_init = self.dir / "with-init.json"
        with_init.write_text(json.dumps(cfg))
        proc = run_bagel("tune", "--config", with_init, "--budget", 1, "-o", self.dir / "t.json")
        self.assert_error(proc, 1, f"{with_init}: init: the config starts from a model")
        self.assertFalse((self.dir / "t.json").exists())

    def test_an_option_for_the_other_format_is_refused_not_ignored(self):
        npz, labels = self.dir / "train.npz", self.dir / "train.labels"
        for args, fragment in [
            ((npz, self.dir / "o.npz", "--one-based"), "--one-based: numbers svmlight indices"),
            ((npz, self.dir / "o.svm", "--labels", labels, "--compressed"),
             "--compressed: deflates .npz output"),
            ((npz, self.dir / "o.npz", "--zero-based", "false"),
             "--zero-based: says how svmlight input counts its indices"),
        ]:
            with self.subTest(args=args[2:]):
                self.assert_error(run_bagel("convert", *args), 2, fragment)
                self.assertEqual(sorted(p.name for p in self.dir.glob("o.*")), [])
        self.assert_error(run_bagel("bench", "--labels", labels), 2, "--labels requires --input")

    def test_generate_rows_have_a_feature_and_a_missed_mean_is_named(self):
        # --nnz-per-row below 1/3 gave rows of 0 features (a clamp with its
        # bounds crossed); --zipf 2 gave a mean of 51.9 for 75, silently.
        out, labels = self.dir / "mean.npz", self.dir / "mean.labels"
        for args, mean in [(["--nnz-per-row", "0.2"], "1.00"), (["--zipf", "2"], "51.91")]:
            with self.subTest(args=args):
                proc = run_bagel("generate", out, "--labels-out", labels, "--rows", 2000, *args)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                x = sp.load_npz(out)
                self.assertEqual(f"{np.diff(x.indptr).mean():.2f}", mean)
                self.assertGreaterEqual(np.diff(x.indptr).min(), 1)
                self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
                self.assertIn(f"bagel: warning: {args[0]} " if args[0] == "--nnz-per-row" else
                              "bagel: warning: --nnz-per-row 75 ", proc.stderr)
                self.assertIn(f"cannot be reached: the rows have {mean} distinct features on average",
                              proc.stderr)
        # The defaults reach their mean: nothing said.
        proc = run_bagel("generate", out, "--labels-out", labels, "--rows", 2000)
        self.assertEqual((proc.returncode, proc.stderr), (0, ""))
        self.assertAlmostEqual(np.diff(sp.load_npz(out).indptr).mean(), 75, delta=1.5)

    def test_an_integer_past_an_int_names_the_range_and_a_repeated_option_says_so(self):
        # "expected an integer >= 0, found '99999999999'" named no top, and a
        # repeated option gave CLI11's "--rows: At Most 1 required but received 2".
        train = self.dir / "train.npz"
        for args in (["--top", "99999999999"], ["--top", "99999999999999999999999"],
                     ["--explain", "-i", train, "--row", "3000000000"]):
            with self.subTest(args=args):
                self.assert_error(run_bagel("inspect", "-m", self.model, *args), 2,
                                  f"{args[-2]}: expected an integer in [0, 2147483647], found '{args[-1]}'")
        self.assert_error(run_bagel("inspect", "-m", self.model, "--top", "-5"), 2,
                          "--top: expected an integer >= 0, found '-5'")
        out = self.dir / "twice.npz"
        for rows, said in ((["5", "6"], "given twice"), (["5", "6", "7"], "given 3 times")):
            with self.subTest(rows=rows):
                args = [a for n in rows for a in ("--rows", n)]
                proc = run_bagel("generate", out, "--labels-out", self.dir / "twice.labels", *args)
                self.assert_error(proc, 2, f"generate: --rows: {said}, expected once")
        self.assertFalse(out.exists())

    def test_integers_out_of_range_are_refused_not_wrapped(self):
        out = self.dir / "g.npz"
        for seed in ("-1", "18446744073709551616"):
            with self.subTest(seed=seed):
                proc = run_bagel("generate", out, "--labels-out", self.dir / "g.labels", "--rows", 10,
                                 "--seed", seed)
                self.assert_error(proc, 2, f"--seed: expected an integer in [0, 18446744073709551615], "
                                  f"found '{seed}'")
        self.assertFalse(out.exists())
        bench = self.dir / "bench.json"
        bench.write_text(json.dumps({"sweep": None, "input": {"features": "train.npz"}}))
        for setting, fragment in [("threads=2000", "expected an integer in [0, 1024]"),
                                  ("repetitions=4294967297", "expected an integer in [1, 1000]"),
                                  ("seed=-1", "expected an integer in [0, "),
                                  ("max_dense_memory_gb=-1", "expected a number >= 0")]:
            with self.subTest(setting=setting):
                proc = run_bagel("bench", "-c", bench, "--set", setting, "-q")
                self.assert_error(proc, 2, f"--set {setting}: {fragment}")

    def test_weights_that_are_all_zero_name_their_file(self):
        zeros = self.dir / "zeros.weights"
        zeros.write_text("0\n" * 100)
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "m3",
                         "--set", f"train.sample_weights={zeros}")
        self.assert_error(proc, 1, f"{zeros}: every training row has weight 0")
        self.assertFalse((self.dir / "m3").exists())
        # Below float32's smallest normal, training's 0: the same error, where
        # the rate calibration had failed on a vector sized from no rows.
        tiny = self.dir / "tiny.weights"
        tiny.write_text("1e-39\n" * 100)
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "m3",
                         "--set", f"train.sample_weights={tiny}", "--set", "optimizer.learning_rate=auto")
        self.assert_error(proc, 1, f"{tiny}: every training row has weight 0",
                          "below float32's smallest normal")
        self.assertFalse((self.dir / "m3").exists())
        # Class weights that the data makes all 0: the key is named as a
        # parse error names it, the --set that gave it (exit 2) or the file.
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "m4",
                         "--set", 'optimizer.class_weight={"yes": 0, "no": 0}')
        self.assert_error(proc, 2, '--set optimizer.class_weight={"yes": 0, "no": 0}: every training '
                          "row has weight 0")
        cfg = json.loads(Path(self.config).read_text())
        cfg["optimizer"] = {"class_weight": {"yes": 0, "no": 0}}
        zero_classes = self.dir / "zero-classes.json"
        zero_classes.write_text(json.dumps(cfg))
        proc = run_bagel("train", "--config", zero_classes, "-o", self.dir / "m4")
        self.assert_error(proc, 1, f"{zero_classes}: optimizer.class_weight: every training row has "
                          "weight 0")
        self.assertFalse((self.dir / "m4").exists())

    def test_a_key_the_init_model_refuses_names_the_set_that_gave_it(self):
        model = self.dir / "ovr"
        proc = run_bagel("train", "--config", self.config, "-o", model, "-q")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "m5", "--init", model,
                         "--set", 'optimizer.class_weight={"maybe": 2}')
        self.assert_error(proc, 2, '--set optimizer.class_weight={"maybe": 2}: "maybe" is not a '
                          "training class")

    def test_a_compressed_svmlight_file_says_so(self):
        import gzip
        packed = self.dir / "train.svm.gz"
        packed.write_bytes(gzip.compress(b"1 1:1\n0 2:1\n"))
        self.assert_error(run_bagel("predict", "-m", self.model, "-i", packed), 1,
                          exact=f"{packed}: is gzip-compressed; bagel reads .npz and svmlight text: "
                                f"decompress it (zcat {packed} | bagel ... --input -)")

    def test_an_npy_given_as_features_says_it_is_an_npy(self):
        dense = self.dir / "dense.npy"
        np.save(dense, self.x.toarray())
        self.assert_error(run_bagel("predict", "-m", self.model, "-i", dense), 1,
                          f"{dense}: is an .npy array", "scipy.sparse.save_npz")

    # -- outputs ---------------------------------------------------------

    def test_predict_creates_the_folders_of_its_outputs(self):
        out = self.dir / "new" / "deeper" / "p.txt"
        metrics = self.dir / "other" / "m.json"
        proc = run_bagel("predict", "-m", self.model, "-i", self.dir / "train.npz",
                         "-l", self.dir / "train.labels", "-o", out, "--metrics", metrics)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(out.read_text().splitlines()), 100)
        self.assertEqual(json.loads(metrics.read_text())["rows"], 100)

    def test_a_run_that_fails_leaves_no_folder_it_created(self):
        bad = self.x.copy().astype(np.float32)
        bad.data[5] = np.nan
        import scipy.sparse as sp
        sp.save_npz(self.dir / "nan.npz", bad)
        proc = run_bagel("predict", "-m", self.model, "-i", self.dir / "nan.npz",
                         "-o", self.dir / "outA" / "sub" / "p.csv")
        self.assert_error(proc, 1, "non-finite value")
        self.assertFalse((self.dir / "outA").exists())
        proc = run_bagel("train", "--config", self.config, "-o", self.dir / "outB" / "a" / "model",
                         "--set", f"train.features={self.dir / 'nan.npz'}")
        self.assert_error(proc, 1, "non-finite value")
        self.assertFalse((self.dir / "outB").exists())
        # A folder that was there stays, empty or not.
        (self.dir / "kept").mkdir()
        run_bagel("predict", "-m", self.model, "-i", self.dir / "nan.npz", "-o", self.dir / "kept" / "p.csv")
        self.assertTrue((self.dir / "kept").is_dir())

    def test_help_documents_the_exit_statuses(self):
        for args in (["--help"], ["train", "--help"], ["predict", "--help"]):
            proc = run_bagel(*args)
            self.assertEqual(proc.returncode, 0)
            self.assertIn("Exit status", proc.stdout)
            self.assertIn("2 a usage error", proc.stdout)


class TextErrors(unittest.TestCase):
    """Raw-text commands: where their paths are read from, what they check
    before working, and whom their errors name."""

    DOCS = ("__label__pets the cat sat on the mat\n__label__pets a dog barks at the cat\n"
            "__label__cars the engine of the car\n__label__cars a fast red car\n")

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-text-errors-")
        self.dir = Path(self._tmp.name)
        (self.dir / "train.ft").write_text(self.DOCS)
        (self.dir / "docs.txt").write_text("the cat on a mat\nred car engine\n")

    def tearDown(self):
        self._tmp.cleanup()

    assert_error = ErrorLines.assert_error

    def train_text_model(self, name, epochs):
        """A model folder `name` trained on train.ft."""
        config = self.dir / (name + ".json")
        config.write_text(json.dumps({"train": {"text": "train.ft"}, "output": name,
                                      "optimizer": {"epochs": epochs}}))
        proc = run_bagel("train", "--config", config, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return self.dir / name

    def test_a_stop_words_file_is_read_from_the_config_files_folder(self):
        (self.dir / "conf").mkdir()
        (self.dir / "lists").mkdir()
        (self.dir / "lists" / "stop.txt").write_text("the\n")
        config = self.dir / "conf" / "c.json"
        config.write_text(json.dumps({"train": {"text": "../train.ft"},
                                      "vectorizer": {"stop_words": "../lists/stop.txt"},
                                      "output": "m", "optimizer": {"epochs": 1}}))
        proc = run_bagel("train", "--config", config, "--quiet")  # run from elsewhere
        self.assertEqual(proc.returncode, 0, proc.stderr)
        terms = (self.dir / "conf" / "m" / "vocabulary.txt").read_text().split()
        self.assertIn("cat", terms)
        self.assertNotIn("the", terms)

    def test_predict_reads_a_file_of_plain_lines_as_it_reads_them_from_a_pipe(self):
        self.train_text_model("m", 3)
        from_file = run_bagel("predict", "-m", self.dir / "m", "-i", self.dir / "docs.txt", "-q")
        self.assertEqual(from_file.returncode, 0, from_file.stderr)
        self.assertEqual(len(from_file.stdout.splitlines()), 2)
        from_pipe = run_bagel("predict", "-m", self.dir / "m", "-i", "-", "-q",
                              stdin=(self.dir / "docs.txt").read_text())
        self.assertEqual(from_pipe.stdout, from_file.stdout)

    def test_predict_says_when_a_tab_made_text_tsv(self):
        self.train_text_model("m-tsv", 3)
        tabbed = self.dir / "tabbed.txt"
        tabbed.write_text("first\tdocument here\nsecond\tdocument there\n")
        proc = run_bagel("predict", "-m", self.dir / "m-tsv", "-i", tabbed)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("note: " + str(tabbed) + " is read as TSV (its first line has a tab)", proc.stderr)
        self.assertIn("--text-format lines", proc.stderr)
        lines = run_bagel("predict", "-m", self.dir / "m-tsv", "-i", tabbed, "--text-format", "lines")
        self.assertEqual(lines.returncode, 0, lines.stderr)
        self.assertNotIn("note:", lines.stderr)
        self.assertEqual(len(lines.stdout.splitlines()), 2)

    def test_a_vectorizer_out_that_is_a_file_is_refused_before_any_work(self):
        (self.dir / "afile").write_text("")
        out = self.dir / "left.npz"
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", out, "-q",
                         "--vectorizer-out", self.dir / "afile")
        self.assert_error(proc, 2, "--vectorizer-out", "is a file, expected a folder")
        self.assertFalse(out.exists())

    def test_an_unknown_vectorizer_key_lists_every_option(self):
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "v.npz",
                         "-q", "--set", "min_dff=2")
        self.assert_error(proc, 2, "--set min_dff", "did you mean 'min_df'?")
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "v.npz",
                         "-q", "--set", "zzzz=2")
        for key in ("kind", "min_df", "max_df", "max_features", "stop_words", "strip_accents",
                    "dtype", "norm"):
            self.assertIn(" " + key, proc.stderr)

    def test_a_stop_words_file_with_a_byte_order_mark_drops_its_first_word(self):
        stop = self.dir / "stop.txt"
        stop.write_bytes(b"\xef\xbb\xbfthe\ncat\n")
        vocab = self.dir / "v.txt"
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "v.npz", "-q",
                         "--set", f"stop_words={stop}", "--vocabulary-out", vocab)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        terms = vocab.read_text().split()
        self.assertNotIn("the", terms)
        self.assertNotIn("cat", terms)

    def test_hashing_n_features_stays_below_two_to_the_31_as_in_scikit_learn(self):
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "h.npz", "-q",
                         "--set", "kind=hashing", "--set", "n_features=2147483647")
        self.assert_error(proc, 2, "n_features", "[1, 2147483646]")

    def test_an_empty_input_is_named(self):
        empty = self.dir / "empty.txt"
        empty.write_text("")
        self.assert_error(run_bagel("vectorize", "-i", empty, "-o", self.dir / "e.npz"), 1,
                          exact=f"{empty}: no documents to vectorize")
        config = self.dir / "c.json"
        config.write_text(json.dumps({"train": {"text": "empty.txt", "format": "fasttext"},
                                      "output": "m"}))
        self.assert_error(run_bagel("train", "--config", config), 1, f"{empty}: no documents")

    def test_an_empty_vocabulary_without_stop_words_blames_the_token_pattern(self):
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "d.npz",
                         "--set", "token_pattern=\\d+")
        # Found while fitting, and named by the --set that gave the pattern (exit 2).
        self.assert_error(proc, 2, "--set token_pattern=\\d+: empty vocabulary")
        self.assertNotIn("stop_words", proc.stderr)

    def test_a_min_df_above_max_df_names_the_key_that_was_set(self):
        # scikit-learn's message, under the key that left its default, with
        # the document counts it compared (it had named max_df, exit 1).
        docs = self.dir / "two.txt"
        docs.write_text("apple banana\nbanana cherry\n")
        for assignment, counts in (("min_df=5", "at most 2 of the 2 documents, min_df needs at least 5"),
                                   ("max_df=0.1", "at most 0.2 of the 2 documents, min_df needs at least 1")):
            proc = run_bagel("vectorize", "-i", docs, "--format", "lines", "-o", self.dir / "t.npz",
                             "--set", assignment)
            self.assert_error(proc, 2, f"--set {assignment}: max_df corresponds to < documents than "
                                       f"min_df (max_df allows terms in {counts})")
        self.assertFalse((self.dir / "t.npz").exists())

    def test_set_errors_found_after_parsing_still_name_the_set_and_exit_2(self):
        config = self.dir / "t.json"
        config.write_text(json.dumps({"train": {"text": "train.ft"}, "output": "m"}))
        for assignment in (".epochs=3", "optimizer..epochs=3", "optimizer.=3"):
            proc = run_bagel("train", "--config", config, "--set", assignment)
            self.assert_error(proc, 2, f"--set {assignment}: expected KEY.PATH=VALUE without an "
                                       "empty key between dots")
        self.assert_error(run_bagel("train", "--config", config, "--set", "output="), 2,
                          exact="--set output=: is empty, expected the model's folder")
        # A token pattern compiles with the config, before any text is read.
        proc = run_bagel("train", "--config", config, "--set", "vectorizer.token_pattern=(")
        self.assert_error(proc, 2, "--set vectorizer.token_pattern=(: not a regular expression")
        proc = run_bagel("vectorize", "-i", self.dir / "docs.txt", "-o", self.dir / "p.npz",
                         "--set", "token_pattern=(")
        self.assert_error(proc, 2, "--set token_pattern", "not a regular expression")

    def test_a_features_valid_set_for_a_text_model_names_its_own_set(self):
        config = self.dir / "c.json"
        config.write_text(json.dumps({"train": {"text": "train.ft"}, "output": "m"}))
        proc = run_bagel("train", "--config", config, "--set", "valid.features=x.npz",
                         "--set", "valid.labels=x.labels")
        self.assert_error(proc, 2, "--set valid.features=x.npz", "must be raw text")

    def test_an_output_that_cannot_be_created_is_named_once(self):
        self.train_text_model("m", 1)
        missing_parent = self.dir / "afile"
        missing_parent.write_text("")
        target = missing_parent / "p.csv"
        proc = run_bagel("predict", "-m", self.dir / "m", "-i", self.dir / "docs.txt",
                         "-o", target)
        self.assert_error(proc, 1, exact=f"{target}: -o: cannot be created: {missing_parent} "
                                         "is a file, not a folder")
        # A model folder under a file says the same, where it had said
        # "cannot inspect: Not a directory".
        proc = run_bagel("train", "--config", self.dir / "m.json", "-o", missing_parent / "model")
        self.assert_error(proc, 1, f"{missing_parent / 'model'}: cannot be created: {missing_parent} "
                          "is a file, not a folder")


if __name__ == "__main__":
    unittest.main()
