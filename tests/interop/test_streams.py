"""Inputs that are streams: `-i -`, /dev/stdin, FIFOs (as pipes and process
substitution behave). Each gives what the same bytes in a regular file give;
a stream that yields no row is an error naming it, where an empty regular
file still predicts 0 rows; svmlight with a known index base is predicted as
it arrives.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_streams
"""

import io
import json
import os
import queue
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import cli_helpers
from cli_helpers import BAGEL
from sklearn.datasets import dump_svmlight_file



def run_bagel(*args, stdin=None, cwd=None):
    return cli_helpers.run_bagel(*args, stdin=stdin, cwd=cwd, text=False)


class FifoWriter:
    """Writes `data` into a new FIFO from a thread (the open blocks until the
    reader comes)."""

    def __init__(self, path, data):
        os.mkfifo(path)
        self.path = path
        self.thread = threading.Thread(target=self._write, args=(data,), daemon=True)
        self.thread.start()

    def _write(self, data):
        try:
            with open(self.path, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass


class Streams(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-streams-")
        cls.dir = Path(cls._tmp.name)
        rng = np.random.default_rng(3)
        x = sp.random(600, 50, density=0.1, format="csr", random_state=rng, dtype=np.float64)
        x.data = np.round(x.data * 8) + 1
        y = np.argmax(x @ rng.normal(size=(50, 3)), axis=1)
        cls.train_svm = cls.dir / "train.svm"
        dump_svmlight_file(x[:500], y[:500], cls.train_svm, zero_based=True)
        cls.test_svm = cls.dir / "test.svm"
        dump_svmlight_file(x[500:], y[500:], cls.test_svm, zero_based=True)
        cls.test_npz = cls.dir / "test.npz"
        sp.save_npz(cls.test_npz, x[500:].tocsr())
        cls.test_labels = cls.dir / "test.labels"
        cls.test_labels.write_text("\n".join(map(str, y[500:])) + "\n")
        cls.config = cls.dir / "cfg.json"
        cls.config.write_text(json.dumps({"train": {"features": "train.svm", "zero_based": True},
                                          "optimizer": {"epochs": 2}, "output": "model"}))
        proc = run_bagel("train", "--config", cls.config, "--quiet")
        assert proc.returncode == 0, proc.stderr
        cls.model = cls.dir / "model"

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def setUp(self):
        self.case = Path(tempfile.mkdtemp(dir=self.dir))

    def predict_file(self, path, *extra):
        proc = run_bagel("predict", "-m", self.model, "-i", path, "--quiet", *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc.stdout

    def assert_one_line_error(self, proc, *fragments):
        stderr = proc.stderr.decode()
        self.assertEqual(proc.returncode, 1, stderr)
        self.assertTrue(stderr.startswith("bagel: error: "), stderr)
        self.assertEqual(stderr.count("\n"), 1, stderr)
        for fragment in fragments:
            self.assertIn(fragment, stderr)

    # -- predict ---------------------------------------------------------

    def test_dash_reads_svmlight_from_stdin(self):
        expected = self.predict_file(self.test_svm, "--proba")
        proc = run_bagel("predict", "-m", self.model, "-i", "-", "--proba", "--quiet",
                         stdin=self.test_svm.read_bytes())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, expected)
        self.assertEqual(len(proc.stdout.splitlines()), 1 + 100)

    def test_stdin_named_twice_is_refused_also_where_it_is_a_regular_file(self):
        # Redirected from a file, /dev/stdin is no stream: each reader would
        # reopen the whole file, the labels reader reading the rows.
        for args in (["-i", "/dev/stdin", "-l", "/dev/stdin"], ["-i", "-", "-l", "/dev/fd/0"]):
            with self.subTest(args=args), open(self.test_svm, "rb") as f:
                proc = subprocess.run([BAGEL, "predict", "-m", str(self.model), *args], stdin=f,
                                      capture_output=True, text=True, timeout=120)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn("--labels: is standard input, and so is --input", proc.stderr)

    def test_convert_bench_and_train_refuse_one_stream_for_two_inputs(self):
        # convert hung on one FIFO for both, gave "<stdin>: no labels" for -,
        # and wrote the svmlight lines as labels for /dev/stdin on a file.
        svm = self.test_svm.read_bytes()
        fifo = self.case / "both.fifo"
        FifoWriter(fifo, svm)
        proc = run_bagel("convert", fifo, self.case / "x.npz", "--labels", fifo)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f"--labels: is the stream input reads ({fifo})".encode(), proc.stderr)
        open(fifo, "rb").close()  # lets the writer go
        both = b"--labels: is standard input, and so is input: both cannot be read from stdin"
        for args in (["-", self.case / "x.npz", "--labels", "-"],
                     ["/dev/stdin", self.case / "x.npz", "--labels", "/dev/stdin",
                      "--labels-out", self.case / "l.txt"]):
            with self.subTest(args=args), open(self.test_svm, "rb") as f:
                proc = subprocess.run([BAGEL, "convert", *map(str, args)], stdin=f,
                                      capture_output=True, timeout=120)
                self.assertEqual((proc.returncode, proc.stdout), (2, b""), proc.stderr)
                self.assertIn(both, proc.stderr)
        proc = run_bagel("bench", "-i", "/dev/stdin", "-l", "/dev/stdin", "-q", stdin=svm)
        self.assertEqual((proc.returncode, proc.stdout), (2, b""), proc.stderr)
        self.assertIn(b"--labels: is standard input, and so is --input", proc.stderr)
        # A config read from stdin leaves nothing there for its features.
        config = json.dumps({"train": {"features": "/dev/stdin", "labels": str(self.test_labels)},
                             "output": str(self.case / "m")}).encode()
        for command in ("train", "tune"):
            with self.subTest(command=command):
                proc = run_bagel(command, "-c", "/dev/stdin", "-q", stdin=config)
                self.assert_one_line_error(proc, "train.features: is standard input, and so is the "
                                           "config file: both cannot be read from stdin")
        self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["both.fifo"])

    def test_vectorize_reads_its_config_from_stdin(self):
        docs = self.case / "docs.txt"
        docs.write_text("red apple\ngreen apple pie\n")
        proc = run_bagel("vectorize", "-q", "-i", docs, "-c", "-", "-o", self.case / "x.npz",
                         "--vocabulary-out", self.case / "vocab.txt",
                         stdin=b'{"ngram_range": [1, 2]}')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((self.case / "vocab.txt").read_text().split("\n")[:-1],
                         ["apple", "apple pie", "green", "green apple", "pie", "red", "red apple"])

    def test_dev_stdin_reads_an_npz_told_by_its_bytes(self):
        out = self.case / "p.txt"
        proc = run_bagel("predict", "-m", self.model, "-i", "/dev/stdin", "-o", out, "--quiet",
                         stdin=self.test_npz.read_bytes())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(out.read_bytes(), self.predict_file(self.test_npz))

    def test_fifos_for_features_and_labels_give_the_files_metrics(self):
        metrics_file = self.case / "file.json"
        self.predict_file(self.test_svm, "-l", self.test_labels, "--metrics", metrics_file)
        FifoWriter(self.case / "x.fifo", self.test_svm.read_bytes())
        FifoWriter(self.case / "y.fifo", self.test_labels.read_bytes())
        metrics_fifo = self.case / "fifo.json"
        proc = run_bagel("predict", "-m", self.model, "-i", self.case / "x.fifo",
                         "-l", self.case / "y.fifo", "--metrics", metrics_fifo, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(metrics_fifo.read_text())["rows"], 100)
        self.assertEqual(metrics_fifo.read_text(), metrics_file.read_text())

    def test_known_index_base_predicts_rows_as_they_arrive(self):
        self.assert_predicts_as_rows_arrive("--zero-based", "true")

    def test_auto_takes_the_base_the_model_recorded_and_predicts_rows_as_they_arrive(self):
        # The model was trained on zero-based svmlight: "auto" reads any
        # input zero-based (align_to_trained_base), known before line 1.
        self.assertEqual(json.loads((self.model / "model.json").read_text())
                         ["config"]["train"]["zero_based"], "true")
        self.assert_predicts_as_rows_arrive()

    def test_a_stream_with_index_0_after_a_one_based_model_names_the_line(self):
        rng = np.random.default_rng(4)
        x = sp.random(200, 20, density=0.2, format="csr", random_state=rng)
        x[:, 0] = 0
        x.eliminate_zeros()
        y = np.arange(200) % 2
        one = self.case / "one.svm"
        dump_svmlight_file(x, y, one, zero_based=False)
        config = self.case / "one.json"
        config.write_text(json.dumps({"train": {"features": str(one)}, "output": str(self.case / "m1"),
                                      "optimizer": {"epochs": 1}}))
        proc = run_bagel("train", "--config", config, "--quiet")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = b"1 1:1 3:2\n0 2:1\n1 0:1 4:1\n"
        proc = run_bagel("predict", "-m", self.case / "m1", "-i", "-", stdin=rows)
        self.assert_one_line_error(proc, "<stdin>:3: index 0 in '0:1' but zero_based is false")
        self.assertIn(b"it is read one-based, as the model's training svmlight was", proc.stderr)
        proc = run_bagel("predict", "-m", self.case / "m1", "-i", "-", "--zero-based", "true",
                         stdin=rows)
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def test_metrics_on_a_stream_are_refused_before_any_prediction(self):
        # --metrics reads the stream whole: labels that are not the model's
        # classes stop it before a line is printed, as for a regular file.
        rows = b"7 0:1 3:2\n8 2:1\n"
        proc = run_bagel("predict", "-m", self.model, "-i", "-", "--metrics", self.case / "m.json",
                         stdin=rows)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, b"")
        self.assertIn(b"--metrics", proc.stderr)

    def assert_predicts_as_rows_arrive(self, *base):
        lines = self.test_svm.read_bytes().splitlines(keepends=True)
        expected = self.predict_file(self.test_svm, "--zero-based", "true").splitlines(keepends=True)
        got = queue.Queue()
        with subprocess.Popen([BAGEL, "predict", "-m", self.model, "-i", "-",
                               *base, "--quiet"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE) as proc:
            reader = threading.Thread(
                target=lambda: [got.put(l) for l in iter(proc.stdout.readline, b"")], daemon=True)
            reader.start()
            try:
                proc.stdin.write(b"".join(lines[:30]))
                proc.stdin.flush()
                # The first 30 predictions come while stdin is still open.
                first = [got.get(timeout=20) for _ in range(30)]
                self.assertEqual(first, expected[:30])
                proc.stdin.write(b"".join(lines[30:]))
                proc.stdin.close()
                self.assertEqual(proc.wait(timeout=20), 0, proc.stderr.read())
                reader.join(timeout=20)
            finally:
                if proc.poll() is None:
                    proc.kill()
        rest = [got.get(timeout=20) for _ in range(70)]
        self.assertEqual(rest, expected[30:])

    def test_dev_stdout_on_a_pipe_is_written_directly(self):
        # /dev/stdout is a link to /proc/self/fd/1, whose text ("pipe:[N]")
        # names no file: it was followed, and the write failed.
        expected = self.predict_file(self.test_npz, "--proba")
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "--proba", "--quiet",
                         "-o", "/dev/stdout")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout, expected)
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "-l", self.test_labels,
                         "--quiet", "-o", self.case / "p.csv", "--metrics", "/dev/stdout")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["rows"], 100)
        proc = run_bagel("convert", self.test_npz, "/dev/stdout", "--labels", self.test_labels)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(len(proc.stdout.splitlines()), 100)
        # An .npz is made in a temporary file, then copied out: a zip is written with seeks.
        docs = self.case / "docs.txt"
        docs.write_text("the cat sat\na dog barks\n")
        for extra in ([], ["--compressed"]):
            proc = run_bagel("vectorize", "-i", docs, "-o", "/dev/stdout", "-q", *extra)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(sp.load_npz(io.BytesIO(proc.stdout)).shape, (2, 5))
        docs.unlink()
        self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["p.csv"])

    def test_a_pipe_in_and_a_pipe_out_are_not_the_same_file(self):
        # Both named through /dev: two pipes were compared by canonical names
        # that neither has, and refused as one file.
        expected = self.predict_file(self.test_npz, "--proba")
        proc = self.shell('set -o pipefail; cat "$2" | "$1" predict -q -m "$3" -i /dev/stdin -o /dev/stdout --proba | cat',
                          self.test_npz, self.model)
        self.assertEqual(proc.stdout, expected)
        converted = run_bagel("convert", self.test_npz, "/dev/stdout", "--labels", self.test_labels)
        proc = self.shell('set -o pipefail; cat "$2" | "$1" convert /dev/stdin /dev/stdout --labels "$3" | cat',
                          self.test_npz, self.test_labels)
        self.assertEqual(proc.stdout, converted.stdout)
        # Two outputs on one pipe would interleave: still refused.
        proc = subprocess.run(["bash", "-c", '"$1" predict -q -m "$2" -i "$3" -l "$4" -o /dev/stdout '
                               '--metrics /dev/fd/1 | cat', "bash", BAGEL, self.model, self.test_npz,
                               self.test_labels], capture_output=True, timeout=120)
        self.assertIn(b"is the same file as -o", proc.stderr)

    def shell(self, script, *args):
        """bash -c SCRIPT with $1 the bagel under test and $2... ARGS, its
        temporaries under a folder of the case's own."""
        tmp = self.case / "tmp"
        tmp.mkdir(exist_ok=True)
        proc = subprocess.run(["bash", "-c", script, "bash", BAGEL, *map(str, args)],
                              capture_output=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(list(tmp.iterdir()), [], "a temporary was left")
        return proc

    def test_predict_to_dev_stdout_on_a_file_writes_at_the_shells_offset(self):
        # The shell's `>>` or `{ ...; } >` hands bagel a file already written
        # to: following /proc/self/fd/1 to it and renaming a temporary over it
        # lost the lines before and after.
        expected = self.predict_file(self.test_npz, "--proba")
        log = self.case / "log.txt"
        predict = '"$1" predict -q -m "$2" -i "$3" --proba'
        for name, redirect in (("/dev/stdout", ">>"), ("/dev/fd/1", ">>"), ("/proc/self/fd/1", ">>"),
                               ("/dev/stderr", "2>>"), ("/dev/fd/3", "3>>")):
            with self.subTest(output=name):
                log.write_bytes(b"old\n")
                self.shell(f'{predict} -o {name} {redirect} "$4"', self.model, self.test_npz, log)
                self.assertEqual(log.read_bytes(), b"old\n" + expected)
        self.shell(f'{{ echo HEADER; {predict} -o /dev/stdout; echo FOOTER; }} > "$4"',
                   self.model, self.test_npz, log)
        self.assertEqual(log.read_bytes(), b"HEADER\n" + expected + b"FOOTER\n")

    def test_dev_stdout_on_a_file_without_tmpdir_stages_beside_the_file(self):
        expected = self.predict_file(self.test_npz, "--proba")
        log = self.case / "log.txt"
        log.write_bytes(b"old\n")
        proc = subprocess.run(["bash", "-c", '"$1" predict -q -m "$2" -i "$3" --proba -o /dev/stdout >> "$4"',
                               "bash", BAGEL, self.model, self.test_npz, log],
                              capture_output=True, timeout=120,
                              env={**os.environ, "TMPDIR": str(self.case / "missing")})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(log.read_bytes(), b"old\n" + expected)
        self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["log.txt"])

    def test_metrics_to_dev_stdout_on_a_file_come_between_the_shells_lines(self):
        log = self.case / "log.txt"
        self.shell('{ echo HEADER; "$1" predict -q -m "$2" -i "$3" -l "$4" -o "$5" '
                   '--metrics /dev/stdout; echo FOOTER; } > "$6"',
                   self.model, self.test_npz, self.test_labels, self.case / "p.csv", log)
        written = log.read_text()
        self.assertTrue(written.startswith("HEADER\n") and written.endswith("}\nFOOTER\n"), written)
        self.assertEqual(json.loads(written[len("HEADER\n"):-len("FOOTER\n")])["rows"], 100)

    def test_convert_to_dev_stdout_on_a_file_appends(self):
        converted = run_bagel("convert", self.test_npz, "/dev/stdout", "--labels", self.test_labels)
        self.assertEqual(converted.returncode, 0, converted.stderr)
        log = self.case / "log.txt"
        log.write_bytes(b"old\n")
        self.shell('"$1" convert "$2" /dev/stdout --labels "$3" >> "$4"',
                   self.test_npz, self.test_labels, log)
        self.assertEqual(log.read_bytes(), b"old\n" + converted.stdout)

    def test_vectorize_to_dev_stdout_on_a_file_appends(self):
        # An .npz is made with seeks, in a temporary file, then copied in.
        log = self.case / "log.txt"
        docs = self.case / "docs.txt"
        docs.write_text("the cat sat\na dog barks\n")
        for extra in ("", "--compressed"):
            with self.subTest(vectorize=extra):
                log.write_bytes(b"old\n")
                self.shell(f'{{ echo HEADER; "$1" vectorize -q -i "$2" -o /dev/stdout {extra}; }} >> "$3"',
                           docs, log)
                written = log.read_bytes()
                self.assertTrue(written.startswith(b"old\nHEADER\n"), written[:20])
                self.assertEqual(sp.load_npz(io.BytesIO(written[len(b"old\nHEADER\n"):])).shape, (2, 5))

    def test_a_row_wider_than_the_model_is_named_by_its_line(self):
        # The error named no line, after thousands of predictions.
        rows = b"0 1:1\n" * 5000 + b"0 1:1 60:1\n"
        proc = run_bagel("predict", "-m", self.model, "-i", "-", "--zero-based", "false", "-q",
                         stdin=rows)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(b"<stdin>:5001: this row has 60 feature columns", proc.stderr)
        self.assertIn(b"but the model has 50", proc.stderr)
        wide = self.case / "wide.svm"
        wide.write_bytes(b"# a comment\n" + rows[:12] + b"\n" + rows[-11:])
        proc = run_bagel("predict", "-m", self.model, "-i", wide, "--zero-based", "false", "-q")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"{wide}:5: this row has 60 feature columns".encode(), proc.stderr)

    def test_dash_is_standard_output_for_every_output(self):
        # A file named "-" had been written instead.
        expected = self.predict_file(self.test_npz, "--proba")
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "--proba", "-q", "-o", "-",
                         cwd=self.case)
        self.assertEqual((proc.returncode, proc.stdout), (0, expected), proc.stderr)
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "-l", self.test_labels,
                         "-q", "-o", self.case / "p.csv", "--metrics", "-", cwd=self.case)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(json.loads(proc.stdout)["rows"], 100)
        converted = run_bagel("convert", self.test_npz, "/dev/stdout", "--labels", self.test_labels)
        proc = run_bagel("convert", self.test_npz, "-", "--labels", self.test_labels, cwd=self.case)
        self.assertEqual((proc.returncode, proc.stdout), (0, converted.stdout), proc.stderr)
        proc = run_bagel("convert", self.test_npz, self.case / "x.svm", "--labels", self.test_labels,
                         "--labels-out", "-", cwd=self.case)
        self.assertEqual((proc.returncode, proc.stdout), (0, self.test_labels.read_bytes()), proc.stderr)
        docs = self.case / "docs.txt"
        docs.write_text("the cat sat\na dog barks\n")
        proc = run_bagel("vectorize", "-i", docs, "-o", "-", "-q", cwd=self.case)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sp.load_npz(io.BytesIO(proc.stdout)).shape, (2, 5))
        self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["docs.txt", "p.csv", "x.svm"])

    def test_generate_writes_its_npz_to_standard_output(self):
        # "-" and /dev/stdout were refused: "output /dev/stdout: ... name it *.npz".
        proc = run_bagel("generate", self.case / "g.npz", "--labels-out", self.case / "g.labels",
                         "--rows", 40, "--features", 30, "--seed", 7)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        expected = (self.case / "g.npz").read_bytes()
        for output in ("-", "/dev/stdout"):
            with self.subTest(output=output):
                proc = run_bagel("generate", output, "--labels-out", self.case / "p.labels",
                                 "--rows", 40, "--features", 30, "--seed", 7, cwd=self.case)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(proc.stdout, expected)
                self.assertEqual(sp.load_npz(io.BytesIO(proc.stdout)).shape, (40, 30))
        # A real name that is no .npz is named as typed.
        proc = run_bagel("generate", "x.txt", "--labels-out", "x.labels", cwd=self.case)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(b"output x.txt: generate writes a scipy CSR .npz", proc.stderr)
        self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["g.labels", "g.npz", "p.labels"])

    def test_metrics_on_the_stream_of_the_predictions_are_refused(self):
        # Without -o the predictions go to stdout: the JSON was written among them.
        for args in (["--metrics", "/dev/stdout"], ["--metrics", "-"], ["-o", "-", "--metrics", "-"]):
            with self.subTest(args=args):
                proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "-l",
                                 self.test_labels, "-q", *args, cwd=self.case)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(b"--metrics /dev/stdout: is the same file as ", proc.stderr)
                self.assertEqual(proc.stdout, b"")

    def test_npy_labels_count_rows_from_0(self):
        y = np.loadtxt(self.test_labels, dtype=np.int64)
        y[5] = 9
        np.save(self.case / "y.npy", y)
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "-l", self.case / "y.npy", "-q")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f"{self.case / 'y.npy'}: row 5: label '9' is not one of".encode(), proc.stderr)
        labels = self.case / "y.labels"
        labels.write_text("\n".join(map(str, y)) + "\n")
        proc = run_bagel("predict", "-m", self.model, "-i", self.test_npz, "-l", labels, "-q")
        self.assertIn(f"{labels}:6: label '9' is not one of".encode(), proc.stderr)  # line 6

    def test_dev_stdout_on_a_file_that_fails_partway_adds_nothing(self):
        # The copy into the descriptor stopped at the file-size limit and
        # left the part it had written.
        import resource

        def limit():
            resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

        old = b"x" * 6000
        out = self.case / "out3"
        for mode in ("ab", "r+b"):
            with self.subTest(mode=mode):
                out.write_bytes(old)
                with open(out, mode) as f:
                    f.seek(0, os.SEEK_END)
                    proc = subprocess.run([BAGEL, "predict", "-m", str(self.model), "-i", str(self.test_npz),
                                           "--proba", "-o", "/dev/stdout", "-q"], stdout=f,
                                          stderr=subprocess.PIPE, preexec_fn=limit, timeout=120,
                                          env={**os.environ, "TMPDIR": str(self.case)})
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(b"File too large", proc.stderr)
                self.assertEqual(out.read_bytes(), old)
                self.assertEqual(sorted(p.name for p in self.case.iterdir()), ["out3"])

    def test_a_file_named_as_itself_is_still_replaced_whole(self):
        # Only the process's own descriptors are written through: a path to
        # the same file as standard output gets a new file renamed into place.
        out = self.case / "p.csv"
        out.write_text("old\n")
        before = out.stat().st_ino
        self.shell('"$1" predict -q -m "$2" -i "$3" -o "$4" >> "$4"', self.model, self.test_npz, out)
        self.assertNotEqual(out.stat().st_ino, before)
        self.assertEqual(out.read_bytes(), self.predict_file(self.test_npz))

    def test_an_empty_stream_is_an_error_naming_it_and_writes_nothing(self):
        out = self.case / "p.txt"
        for args in (("-i", "-"), ("-i", "-", "--zero-based", "true"), ("-i", "/dev/stdin")):
            proc = run_bagel("predict", "-m", self.model, *args, "-o", out, stdin=b"")
            name = "<stdin>" if args[1] == "-" else "/dev/stdin"
            self.assert_one_line_error(proc, f"{name}: no rows")
            self.assertFalse(out.exists())
        proc = run_bagel("predict", "-m", self.model, "-i", "-", stdin=b"# only a comment\n\n")
        self.assert_one_line_error(proc, "<stdin>: no rows")

    @unittest.skipUnless(os.path.exists("/proc/self/status"), "needs /proc")
    def test_a_file_that_says_size_0_is_read_not_taken_as_empty(self):
        # /proc files report a size of 0 and hold what read() gives.
        proc = run_bagel("predict", "-m", self.model, "-i", "/proc/self/status")
        self.assert_one_line_error(proc, "/proc/self/status:1: expected a numeric label first on "
                                         "the line, found 'Name:'")
        proc = run_bagel("convert", "/proc/self/status", self.case / "x.npz")
        self.assert_one_line_error(proc, "/proc/self/status:1:")
        self.assertFalse((self.case / "x.npz").exists())

    def test_predictions_to_a_redirected_stdout_that_fail_partway_add_nothing(self):
        # Rows are written as they are predicted: a bad line after thousands
        # of them takes them back out of the file standard output was
        # redirected to, which keeps what the shell had written.
        rows = self.test_svm.read_bytes() * 100  # 10,000 rows: many blocks from a pipe
        bad = self.case / "bad.svm"
        bad.write_bytes(rows + b"1 5:x\n")
        out = self.case / "out.txt"
        for source in ("pipe", "file"):
            for mode in ("ab", "wb"):
                with self.subTest(source=source, mode=mode):
                    out.write_bytes(b"the shell's line\n")
                    with open(out, mode) as f:
                        if mode == "ab":
                            f.seek(0, os.SEEK_END)
                        args = ["-i", "-"] if source == "pipe" else ["-i", str(bad)]
                        proc = subprocess.run([BAGEL, "predict", "-m", str(self.model), *args, "-q"],
                                              input=bad.read_bytes() if source == "pipe" else None,
                                              stdout=f, stderr=subprocess.PIPE, timeout=120)
                    name = "<stdin>" if source == "pipe" else str(bad)
                    self.assert_one_line_error(proc, f"{name}:10001: expected a number after ':'")
                    self.assertEqual(out.read_bytes(), b"the shell's line\n" if mode == "ab" else b"")

    def test_an_empty_regular_file_still_predicts_zero_rows(self):
        empty = self.case / "empty.svm"
        empty.write_bytes(b"")
        out = self.case / "p.txt"
        proc = run_bagel("predict", "-m", self.model, "-i", empty, "-o", out)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(out.read_bytes(), b"")

    # -- train -----------------------------------------------------------

    def test_train_reads_svmlight_from_a_pipe(self):
        reference = run_bagel("train", "--config", self.config, "-o", self.case / "from_file",
                              "--quiet")
        self.assertEqual(reference.returncode, 0, reference.stderr)
        proc = run_bagel("train", "--config", self.config, "-o", self.case / "from_pipe",
                         "--set", "train.features=/dev/stdin", "--quiet",
                         stdin=self.train_svm.read_bytes())
        self.assertEqual(proc.returncode, 0, proc.stderr)
        for name in ("weight.npy", "bias.npy"):
            self.assertEqual((self.case / "from_pipe" / name).read_bytes(),
                             (self.case / "from_file" / name).read_bytes())

    def test_train_from_an_empty_pipe_says_no_rows(self):
        proc = run_bagel("train", "--config", self.config, "-o", self.case / "m",
                         "--set", "train.features=/dev/stdin", stdin=b"")
        self.assert_one_line_error(proc, "/dev/stdin: no rows")
        self.assertFalse((self.case / "m").exists())


if __name__ == "__main__":
    unittest.main()
