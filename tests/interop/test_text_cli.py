"""The raw-text commands as a user meets them (vectorize, and train and
predict on text): what "auto" says when it guessed a layout, and errors
whose remedies name settings the command at hand takes. Small hand-made
files; the oracle is README's word on each message and exit status.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_text_cli
"""

import json
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer

from cli_helpers import run_bagel

# Plain lines with commas: one document each, not a table.
NOTES = "hello there, general kenobi, you are bold\nwell, this is a sentence, with commas\n"
# Plain lines without a comma: as a CSV table, one column short.
PLAIN = "one document per line\nno commas here\n"
FASTTEXT = "__label__sky blue clouds and rain today\n__label__sea waves and salty water\n" * 3


class TextCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-text-cli-")
        cls.dir = Path(cls._tmp.name)
        (cls.dir / "train.ft").write_text(FASTTEXT)
        cls.text_model = cls.train_config("text-model", {"train": {"text": "train.ft"}})

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @classmethod
    def train_config(cls, name, config, *extra):
        (cls.dir / f"{name}.json").write_text(json.dumps({**config, "output": name}))
        proc = run_bagel("train", "--config", cls.dir / f"{name}.json", "--quiet", *extra)
        assert proc.returncode == 0, proc.stderr
        return cls.dir / name

    def write(self, name, text):
        path = self.dir / name
        path.write_text(text)
        return path

    def vectorize(self, *args):
        return run_bagel("vectorize", *args, "-o", self.dir / "out.npz")

    def pets_model(self, prefix):
        """A text model of two classes (pets, code) trained from PREFIX.txt, two new
        documents (PREFIX-new.txt) and their rows vectorised by it: (model, text, .npz)."""
        lines = "".join("__label__pets cat dog kitten puppy\n__label__code python rust compiler bug\n"
                        for _ in range(20))
        self.write(f"{prefix}.txt", lines)
        model = self.train_config(f"{prefix}-model", {"train": {"text": f"{prefix}.txt"}})
        new = self.write(f"{prefix}-new.txt", "python compiler\ncat puppy\n")
        npz = self.dir / f"{prefix}-new.npz"
        self.assertEqual(run_bagel("vectorize", "-q", "-i", new, "--vectorizer", model, "-o", npz)
                         .returncode, 0)
        return model, new, npz

    def assert_one_line_error(self, proc, status, *parts):
        self.assertEqual(proc.returncode, status, proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        for part in parts:
            self.assertIn(part, proc.stderr)

    # --- 1. "auto" takes a *.csv for a table by its name, and says so -------

    def test_vectorize_notes_a_csv_read_as_a_table_by_its_name(self):
        notes = self.write("notes.csv", NOTES)
        proc = self.vectorize("-i", notes)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"note: {notes} is read as CSV, a label column and a text column, because its "
                      "name ends in .csv; --format lines reads each line whole as one document",
                      proc.stderr)
        quiet = self.vectorize("-i", notes, "-q")
        self.assertEqual((quiet.returncode, quiet.stderr), (0, ""))
        lines = self.vectorize("-i", notes, "--format", "lines")
        self.assertEqual(lines.returncode, 0, lines.stderr)
        self.assertNotIn("note:", lines.stderr)
        self.assertIn("vectorize: 2 documents", lines.stderr)
        help_text = run_bagel("vectorize", "--help").stdout
        self.assertIn("CSV when the name ends in .csv", " ".join(help_text.split()))

    def test_a_csv_that_is_no_table_says_its_name_made_it_csv(self):
        plain = self.write("plain.csv", PLAIN)
        reason = "it was read as CSV because its name ends in .csv"
        proc = self.vectorize("-q", "-i", plain)
        self.assert_one_line_error(proc, 1, f"{plain}:1: 1 column, expected at least 2 columns", reason)
        proc = run_bagel("predict", "-m", self.text_model, "-i", plain)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("--text-format lines reads each line whole", proc.stderr)
        self.assertIn(reason, proc.stderr)
        (self.dir / "plain-csv.json").write_text(json.dumps({"train": {"text": "plain.csv"},
                                                             "output": "plain-csv"}))
        proc = run_bagel("train", "--config", self.dir / "plain-csv.json")
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn("to read each line whole as one document, give its labels as train.labels",
                      proc.stderr)
        self.assertIn(reason, proc.stderr)
        # The error's own remedy, all that -q leaves, says that lines need labels apart.
        proc = run_bagel("train", "-q", "--config", self.dir / "plain-csv.json")
        self.assertIn('name the format in train.format ("lines": one document a line, any labels '
                      'in a file of one a line) if it is not a table', proc.stderr)

    def test_train_notes_a_remedy_that_trains(self):
        # Training needs labels: train.format "lines" without a labels file
        # fails ("has no labels"), so the note names train.labels, with which
        # "auto" reads each line whole.
        plain = self.write("lines.csv", PLAIN)
        config = {"train": {"text": "lines.csv"}, "optimizer": {"epochs": 1}, "output": "lines-csv"}
        (self.dir / "lines-csv.json").write_text(json.dumps(config))
        remedy = ("to read each line whole as one document, give its labels as train.labels "
                  "(a file of one label per line)")
        for command in ("train", "tune"):
            with self.subTest(command=command):
                extra = ["-o", self.dir / "lines-csv.tuned.json"] if command == "tune" else []
                proc = run_bagel(command, "--config", self.dir / "lines-csv.json", *extra)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"note: {plain} is read as CSV, a label column and a text column, "
                              f"because its name ends in .csv; {remedy}", proc.stderr)
                self.assertNotIn('format "lines"', proc.stderr)
        self.write("lines.labels", "one\ntwo\n")
        config["train"]["labels"] = "lines.labels"
        (self.dir / "lines-csv.json").write_text(json.dumps(config))
        proc = run_bagel("train", "--config", self.dir / "lines-csv.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertNotIn("note:", proc.stderr)
        vocabulary = (self.dir / "lines-csv" / "vocabulary.txt").read_text().split()
        self.assertIn("document", vocabulary)
        self.assertIn("commas", vocabulary)

    def test_predict_and_train_note_a_csv_table_read_by_its_name(self):
        table = self.write("table.csv", "sky,blue clouds\nsea,salty waves\n" * 2)
        proc = run_bagel("predict", "-m", self.text_model, "-i", table)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"note: {table} is read as CSV", proc.stderr)
        self.assertEqual(proc.stdout, "sky\nsea\nsky\nsea\n")
        quiet = run_bagel("predict", "-m", self.text_model, "-i", table, "--quiet")
        self.assertEqual(quiet.stderr, "")
        (self.dir / "table.json").write_text(json.dumps({"train": {"text": "table.csv"},
                                                         "output": "table-model"}))
        proc = run_bagel("train", "--config", self.dir / "table.json")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f"note: {table} is read as CSV", proc.stderr)
        self.assertIn("give its labels as train.labels", proc.stderr)

    # --- 2. a warm start from a text model keeps its vectorizer -------------

    def test_a_vectorizer_section_that_differs_from_the_init_models_is_refused(self):
        config = {"train": {"text": "train.ft"}, "init": "text-model", "vectorizer": {"min_df": 2},
                  "output": "init-differs"}
        path = self.dir / "init-differs.json"
        path.write_text(json.dumps(config))
        proc = run_bagel("train", "--config", path, "--quiet")
        self.assert_one_line_error(
            proc, 1, f"{path}: vectorizer.min_df: is 2, but the model training starts from "
            f'("init", {self.text_model}) was vectorized with 1',
            "a warm start keeps its model's vectorizer",
            'leave the "vectorizer" section out, or make it match')
        self.assertFalse((self.dir / "init-differs").exists())
        # Set on the command line, it is the command line's to fix.
        path.write_text(json.dumps({**config, "vectorizer": {}}))
        proc = run_bagel("train", "--config", path, "--quiet", "--set", "vectorizer.ngram_range=[1,2]")
        self.assert_one_line_error(proc, 2, "--set vectorizer.ngram_range=[1,2]: is [1,2]",
                                   "was vectorized with [1,1]")

    def test_stop_words_are_a_set_to_a_warm_start(self):
        # Stop words are removed before n-grams, so their order and repeats
        # change nothing: a warm start takes them in any order, repeated, or
        # from a file whose lines were sorted otherwise (they had been refused
        # as another vectorizer). Another set of words is still refused.
        words = ["the", "a", "of", "and", "to"]
        base = self.train_config("stop-base", {"train": {"text": "train.ft"},
                                               "vectorizer": {"stop_words": words}})
        self.write("stop-sorted.txt", "".join(w + "\n" for w in sorted(words)))
        for name, stop_words in [("stop-reordered", ["a", "the", "of", "and", "to"]),
                                 ("stop-repeated", words + ["the", "a"]),
                                 ("stop-file", "stop-sorted.txt")]:
            with self.subTest(stop_words=stop_words):
                model = self.train_config(name, {"train": {"text": "train.ft"}, "init": "stop-base",
                                                 "vectorizer": {"stop_words": stop_words}})
                self.assertEqual((model / "vocabulary.txt").read_bytes(),
                                 (base / "vocabulary.txt").read_bytes())
        config = self.dir / "stop-set.json"
        config.write_text(json.dumps({"train": {"text": "train.ft"}, "init": "stop-base",
                                      "output": "stop-set"}))
        proc = run_bagel("train", "--config", config, "--quiet",
                         "--set", 'vectorizer.stop_words=["a","the","of","and","to"]')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = run_bagel("train", "--config", config, "--quiet",
                         "--set", 'vectorizer.stop_words=["the","a","of","and"]')
        self.assert_one_line_error(proc, 2, '--set vectorizer.stop_words=["the","a","of","and"]: '
                                   'is ["the","a","of","and"], but the model training starts from')

    def test_a_warm_start_records_the_vectorizer_it_used(self):
        bigrams = self.train_config("bigrams", {"train": {"text": "train.ft"},
                                                "vectorizer": {"ngram_range": [1, 2]}})
        for name, section in [("bigrams-more", None), ("bigrams-same", {"ngram_range": [1, 2]})]:
            with self.subTest(section=section):
                config = {"train": {"text": "train.ft"}, "init": "bigrams"}
                if section is not None:
                    config["vectorizer"] = section
                model = self.train_config(name, config)
                saved = json.loads((model / "model.json").read_text())
                self.assertEqual(saved["config"]["vectorizer"]["ngram_range"], [1, 2])
                self.assertEqual(saved["vectorizer"]["ngram_range"], [1, 2])
                self.assertEqual((model / "vocabulary.txt").read_bytes(),
                                 (bigrams / "vocabulary.txt").read_bytes())

    # --- 3. a remedy names a setting the command takes ----------------------

    def latin1(self):
        path = self.dir / "latin1.txt"
        path.write_bytes("caf\u00e9 au lait\n".encode("latin-1"))
        return path

    def test_vectorize_remedies_name_its_own_options(self):
        latin1 = self.latin1()
        proc = self.vectorize("-q", "-i", latin1)
        self.assert_one_line_error(proc, 1, f"{latin1}:1: byte 4 is not UTF-8 text; save the file as "
                                   "UTF-8 (or pass --decode-error replace or ignore)")
        self.assertEqual(self.vectorize("-q", "-i", latin1, "--decode-error", "replace").returncode, 0)
        part = self.write("part.ft", "__label__a hello world\nno label on this line\n")
        proc = self.vectorize("-q", "-i", part)
        self.assert_one_line_error(proc, 1, f"{part}:2: no label: expected a word starting with "
                                   "'__label__'", "; pass --unlabeled skip to drop such lines")
        labels = self.dir / "part.labels"
        proc = self.vectorize("-q", "-i", part, "--unlabeled", "skip", "--labels-out", labels)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(labels.read_text(), "a\n")
        help_text = " ".join(run_bagel("vectorize", "--help").stdout.split())
        self.assertIn("--unlabeled", help_text)

    def test_predict_says_the_models_decode_error_applies(self):
        latin1 = self.latin1()
        proc = run_bagel("predict", "-m", self.text_model, "-i", latin1)
        self.assert_one_line_error(proc, 1, f"{latin1}:1: byte 4 is not UTF-8 text; save the file as "
                                   "UTF-8: predict reads text with the model's train.decode_error",
                                   'retrain with train.decode_error "replace" or "ignore"')

    def test_a_fasttext_file_mixing_labelled_lines_names_each_commands_rule(self):
        # Both had named the config's unlabeled "keep", which neither takes.
        mix = self.write("mix.ft", "__label__a hello world\nno label here\n__label__b bye world\n")
        proc = self.vectorize("-q", "-i", mix, "--unlabeled", "keep")
        self.assert_one_line_error(proc, 1, f"{mix}:2: has no label, but line 1 has one; with "
                                   "--unlabeled keep either every line or no line has a label")
        self.assertNotIn('"keep"', proc.stderr)
        proc = run_bagel("predict", "-m", self.text_model, "-i", mix)
        self.assert_one_line_error(proc, 1, f"{mix}:2: has no label, but line 1 has one; a fastText "
                                   "file to predict labels every line or none")
        self.assertNotIn("unlabeled", proc.stderr)

    def test_an_unclosed_quote_names_the_quoting_each_command_takes(self):
        # All three had named a config's "quoting", which vectorize and
        # predict do not read.
        unclosed = self.write("q.tsv", 'pos\t"unclosed text\nneg\tplain\n')
        proc = self.vectorize("-q", "-i", unclosed)
        self.assert_one_line_error(proc, 1, f"{unclosed}:1: a quoted field in the row that starts here "
                                   "never closes", "; close the quote, or pass --quoting none to read "
                                   "quotes as text")
        self.assertNotIn("config", proc.stderr)
        # --quoting none: every tab splits and a quote is text, as splitting
        # the lines does; the matrix is CountVectorizer's of those documents.
        labels, vocab = self.dir / "q.labels", self.dir / "q.vocab"
        proc = self.vectorize("-q", "-i", unclosed, "--quoting", "none", "--labels-out", labels,
                              "--vocabulary-out", vocab)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        rows = [line.split("\t") for line in unclosed.read_text().splitlines()]
        expected = CountVectorizer().fit([r[1] for r in rows])
        got = sp.load_npz(self.dir / "out.npz")
        np.testing.assert_array_equal(got.toarray(), expected.transform([r[1] for r in rows]).toarray())
        self.assertEqual(vocab.read_text().split("\n")[:-1], list(expected.get_feature_names_out()))
        self.assertEqual(labels.read_text(), "pos\nneg\n")
        proc = self.vectorize("-q", "-i", self.dir / "train.ft", "--quoting", "none")
        self.assert_one_line_error(proc, 2, "--quoting: applies to tsv and csv input")
        help_text = " ".join(run_bagel("vectorize", "--help").stdout.split())
        self.assertIn("--quoting", help_text)
        # train: its config's key.
        proc = run_bagel("train", "-c", self.write("q.json", json.dumps(
            {"train": {"text": "q.tsv"}, "output": "q-model"})), "-q")
        self.assert_one_line_error(proc, 1, f"{unclosed}:1: a quoted field", '; close the quote, or '
                                   'set train.quoting to "none" to read quotes as text')
        # predict reads with the model's train.quoting, which it cannot change.
        self.write("ok.tsv", "pos\tgood text\nneg\tplain words\n")
        csv_model = self.train_config("quoted-model", {"train": {"text": "ok.tsv"}})
        proc = run_bagel("predict", "-m", csv_model, "-i", unclosed, "-q")
        self.assert_one_line_error(proc, 1, f"{unclosed}:1: a quoted field", "; close the quote: predict "
                                   "reads a table with the model's train.quoting", 'retrain with '
                                   'train.quoting "none"')
        none_model = self.train_config("unquoted-model", {"train": {"text": "q.tsv", "quoting": "none"}})
        proc = run_bagel("predict", "-m", none_model, "-i", unclosed, "-q")
        self.assertEqual((proc.returncode, proc.stdout.splitlines()), (0, ["pos", "neg"]), proc.stderr)

    # --- 4. a labels file with a format that carries its labels -------------

    def test_train_names_the_key_of_the_section_the_file_came_from(self):
        # An error in the valid file names valid's keys: set on train, the
        # remedy would not apply, and the same error came back.
        self.write("s-ok.tsv", "a\thello\nb\tdog\n")
        self.write("s-open.tsv", 'a\thi there\nb\t"never closed\n')
        (self.dir / "s-bytes.tsv").write_bytes(b"a\thi \xff there\nb\tdog\n")
        self.write("s-multi.ft", "__label__a __label__b hi\n__label__a x\n")
        self.write("s-unlabeled.ft", "__label__a hi\nno label\n")

        def train(valid, *args):
            config = self.write("s.json", json.dumps({
                "train": {"text": "s-ok.tsv", "format": "tsv"}, "valid": valid,
                "optimizer": {"epochs": 2, "threads": 1}, "output": "s-model"}))
            return run_bagel("train", "-c", config, "-q", *args)

        open_quote = {"text": "s-open.tsv", "format": "tsv"}
        self.assert_one_line_error(train(open_quote), 1, "s-open.tsv:2: a quoted field",
                                   '; close the quote, or set valid.quoting to "none"')
        self.assertEqual(train(open_quote, "--set", "train.quoting=none").returncode, 1)
        proc = train(open_quote, "--set", "valid.quoting=none")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # Read as TSV for its tab: the format to name is valid's too.
        self.assert_one_line_error(train({"text": "s-open.tsv"}), 1,
                                   'name the format in valid.format ("lines"',
                                   'set valid.quoting to "none"')
        proc = train({"text": "s-bytes.tsv", "format": "tsv"})
        self.assert_one_line_error(proc, 1, "s-bytes.tsv:1: byte 6 is not UTF-8 text; save the file "
                                   'as UTF-8 (or set valid.decode_error to "replace" or "ignore")')
        proc = train({"text": "s-bytes.tsv", "format": "tsv"}, "--set", "valid.decode_error=replace")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = train({"text": "s-multi.ft", "format": "fasttext", "multi_label": "error"})
        self.assert_one_line_error(proc, 1, "s-multi.ft:1: 2 different labels ('a', 'b'), expected "
                                   'one; set valid.multi_label to "split"')
        proc = train({"text": "s-unlabeled.ft", "format": "fasttext"})
        self.assert_one_line_error(proc, 1, "s-unlabeled.ft:2: no label",
                                   'set valid.unlabeled to "skip" to drop such lines')
        proc = train({"text": "s-unlabeled.ft", "format": "fasttext"}, "--set", "valid.unlabeled=skip")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        proc = train({"text": "s-unlabeled.ft", "format": "fasttext", "unlabeled": "keep"})
        self.assert_one_line_error(proc, 1, "s-unlabeled.ft:2: has no label, but line 1 has one; "
                                   'with valid.unlabeled "keep" either every line or no line')
        proc = train({"text": "s-ok.tsv", "format": "tsv", "label_name": "x"})
        self.assert_one_line_error(proc, 1, "s.json: valid.label_name: columns are named by a "
                                   "header: set valid.header to true")

    def test_vectorize_labels_with_a_labelled_format_is_a_usage_error(self):
        labels = self.write("two.labels", "a\nb\n")
        folder = self.dir / "folder"
        for name in ("a", "b"):
            (folder / name).mkdir(parents=True, exist_ok=True)
            (folder / name / "1.txt").write_text(f"text of {name}\n")
        tsv = self.write("two.tsv", "a\tfirst text\nb\tsecond text\n")
        for args, carried in [(["-i", tsv, "--format", "tsv"], "tsv input carries its labels"),
                              (["-i", folder], "a folder carries its labels (its sub-folders)"),
                              (["-i", self.dir / "train.ft", "--format", "fasttext"],
                               "fasttext input carries its labels")]:
            with self.subTest(args=args):
                proc = self.vectorize("-q", *args, "--labels", labels)
                self.assert_one_line_error(proc, 2, "bagel: error: --labels: only --format lines takes "
                                           "a labels file", carried)
        self.assertEqual(self.vectorize("-q", "-i", tsv, "--format", "lines", "--labels", labels)
                         .returncode, 0)

    # --- 5. --text-format where no text is read ----------------------------

    def test_predict_text_format_is_refused_where_no_text_is_read(self):
        x = self.dir / "numbers.svm"
        x.write_text("0 1:1 2:1\n1 2:1 3:1\n0 1:2\n1 3:2\n")
        numbers = self.train_config("numbers-model", {"train": {"features": "numbers.svm"}})
        text = self.write("new.txt", "hello world\n")
        proc = run_bagel("predict", "-m", numbers, "-i", text, "--text-format", "lines")
        self.assert_one_line_error(proc, 2, f"--text-format: the model in {numbers} was trained on "
                                   "numbers (features), not text: --text-format applies to models "
                                   "trained on text")
        proc = run_bagel("predict", "-m", numbers, "-i", x, "-q")
        self.assertEqual((proc.returncode, proc.stdout), (0, "0\n1\n0\n1\n"), proc.stderr)
        # The text model's own vectorizer, as vectorize --vectorizer-out writes one.
        npz = self.dir / "new.npz"
        model_vec = self.dir / "model-vec"
        model_vec.mkdir(exist_ok=True)
        (model_vec / "vectorizer.json").write_text(
            json.dumps(json.loads((self.text_model / "model.json").read_text())["vectorizer"]))
        (model_vec / "vocabulary.txt").write_bytes((self.text_model / "vocabulary.txt").read_bytes())
        self.assertEqual(run_bagel("vectorize", "-q", "-i", text, "--vectorizer", model_vec,
                                   "-o", npz).returncode, 0)
        proc = run_bagel("predict", "-m", self.text_model, "-i", npz, "--text-format", "lines")
        self.assert_one_line_error(proc, 2, f"--text-format: {npz} is features (an .npz, or svmlight "
                                   "by its name), which a model trained on text takes as already "
                                   "vectorised")
        self.assertEqual(run_bagel("predict", "-m", self.text_model, "-i", npz, "-q").returncode, 0)

    def test_a_text_model_reads_svmlight_by_its_name_and_refuses_zero_based_for_text(self):
        # An .svm was read as raw text, its "1:1" tokens predicting garbage
        # with exit 0, and --zero-based was ignored.
        model, new, npz = self.pets_model("pets")
        self.write("pets-new.labels", "0\n0\n")
        for name, extra in (("pets-new.svm", []), ("pets-new.svmlight", []),
                            ("pets-new.libsvm", ["--one-based"])):
            svm = self.dir / name
            self.assertEqual(run_bagel("convert", npz, svm, "--labels", self.dir / "pets-new.labels",
                                       *extra).returncode, 0)
            # "auto" takes a text model's svmlight as zero-based, as vectorize's columns are.
            for args in ([["--zero-based", "false"]] if extra else [[], ["--zero-based", "true"]]):
                with self.subTest(name=name, args=args):
                    proc = run_bagel("predict", "-m", model, "-i", svm, "-q", *args)
                    self.assertEqual((proc.returncode, proc.stdout), (0, "code\npets\n"), proc.stderr)
        proc = run_bagel("predict", "-m", model, "-i", new, "-q", "--zero-based", "true")
        self.assert_one_line_error(proc, 2, f"--zero-based: the model in {model} was trained on text, "
                                   f"and {new} is read as text: --zero-based applies to svmlight")
        proc = run_bagel("predict", "-m", model, "-i", "-", "-q", "--zero-based", "false",
                         stdin="cat puppy\n")
        self.assert_one_line_error(proc, 2, "--zero-based: ", "<stdin> is read as text")
        proc = run_bagel("predict", "-m", model, "-i", new, "-q")
        self.assertEqual((proc.returncode, proc.stdout), (0, "code\npets\n"), proc.stderr)

    def test_a_text_model_tells_a_piped_npz_from_text_by_its_first_bytes(self):
        # A stream was read as text whatever it held: a piped .npz predicted
        # garbage with exit 0 (or failed as "not UTF-8"), and x.SVM was words.
        model, new, npz = self.pets_model("pipe-pets")
        proc = run_bagel("predict", "-m", model, "-i", "-", "-q", stdin=npz.read_bytes(), text=False)
        self.assertEqual((proc.returncode, proc.stdout), (0, b"code\npets\n"), proc.stderr)
        file_row = run_bagel("inspect", "-m", model, "--explain", "-i", npz, "--row", "1")
        self.assertEqual(file_row.returncode, 0, file_row.stderr)
        proc = run_bagel("inspect", "-m", model, "--explain", "-i", "-", "--row", "1",
                         stdin=npz.read_bytes(), text=False)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.decode(), file_row.stdout.replace(str(npz), "<stdin>"))
        # Raw text from a pipe is still text.
        proc = run_bagel("predict", "-m", model, "-i", "-", "-q", stdin=new.read_text())
        self.assertEqual((proc.returncode, proc.stdout), (0, "code\npets\n"), proc.stderr)
        # An .npy is refused as features are, from a pipe as from a file.
        npy = self.dir / "pipe-new.npy"
        np.save(npy, np.ones((2, 3), dtype=np.float32))
        for args, stdin in ((["-i", npy], None), (["-i", "-"], npy.read_bytes())):
            with self.subTest(args=args):
                proc = run_bagel("predict", "-m", model, *args, "-q", stdin=stdin, text=False)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(b"is an .npy array: dense arrays are not supported as features",
                              proc.stderr)
        # An svmlight name in capitals names svmlight too.
        self.write("pipe-new.labels", "0\n0\n")
        upper = self.dir / "pipe-new.SVM"
        self.assertEqual(run_bagel("convert", npz, upper, "--labels", self.dir / "pipe-new.labels")
                         .returncode, 0)
        proc = run_bagel("predict", "-m", model, "-i", upper, "-q")
        self.assertEqual((proc.returncode, proc.stdout), (0, "code\npets\n"), proc.stderr)
        # svmlight from a pipe has no name to say so: the remedy gives it one.
        proc = run_bagel("predict", "-m", model, "-i", "-", "-q", "--zero-based", "true",
                         stdin=upper.read_text())
        self.assert_one_line_error(proc, 2, "--zero-based: ", "<stdin> is read as text",
                                   "save the svmlight to a file so named")

    # --- 6. one stream cannot feed two inputs -----------------------------

    def test_stdin_for_both_the_input_and_the_labels_is_a_usage_error(self):
        both = "--labels: is standard input, and so is --input: both cannot be read from stdin"
        for command in (["vectorize", "-i", "-", "--labels", "-", "-o", self.dir / "stdin.npz"],
                        ["vectorize", "-i", "/dev/stdin", "--labels", "-", "-o", self.dir / "stdin.npz"],
                        ["predict", "-m", self.text_model, "-i", "-", "-l", "-"]):
            with self.subTest(command=command):
                proc = run_bagel(*command, stdin="sky\nsea\n")
                self.assert_one_line_error(proc, 2, both)
        path = self.dir / "stdin.json"
        path.write_text(json.dumps({"train": {"text": "/dev/stdin", "labels": "/dev/stdin"},
                                    "output": "stdin-model"}))
        proc = run_bagel("train", "--config", path, stdin="blue sky\nsalty sea\n")
        self.assert_one_line_error(proc, 1, f"{path}: train.labels: is standard input, and so is "
                                   "train.text: both cannot be read from stdin")
        self.assertFalse((self.dir / "stdin-model").exists())

    # --- 7. a --set string that starts with a bracket ----------------------

    def test_a_set_string_starting_with_a_bracket_is_shown_as_a_json_string(self):
        text = self.write("words.txt", "Abc de1f 42\n")
        vocab = self.dir / "words.vocab"
        proc = self.vectorize("-q", "-i", text, "--set", "token_pattern=[A-Za-z]+")
        self.assert_one_line_error(proc, 2, "--set token_pattern=[A-Za-z]+: starts as JSON but is not "
                                   "valid JSON", "if it is a string, give it as a JSON string: "
                                   "--set 'token_pattern=\"[A-Za-z]+\"'")
        self.assertNotIn("backslash", proc.stderr)
        proc = self.vectorize("-q", "-i", text, "--set", 'token_pattern="[A-Za-z]+"',
                              "--vocabulary-out", vocab)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(vocab.read_text(), "abc\nde\nf\n")
        # A backslash in the value is doubled in the --set shown; train's --set says the same.
        proc = run_bagel("train", "--config", self.dir / "text-model.json", "-o", self.dir / "unused",
                         "--set", "vectorizer.token_pattern=[\\w']+")
        self.assert_one_line_error(proc, 2, "give it as a JSON string: --set "
                                   r"""'vectorizer.token_pattern="[\\w'\'']+"'""")

    # --- 8. vectorize's summary and outputs say what is true ----------------

    def test_the_summary_counts_a_line_of_several_labels_as_one_document(self):
        lines = ["__label__sky __label__sea blue water everywhere", "__label__sky blue clouds",
                 "__label__sea __label__sky __label__land waves on sand"]
        path = self.write("multi.ft", "".join(line + "\n" for line in lines))
        proc = self.vectorize("-i", path)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stderr, r"^vectorize: 3 documents, 6 rows \(one per label of a line\), "
                                      r"7 terms, 17 non-zeros, [\d.]+ s \([\d.]+ MB/s, \d+ documents/s\)\n$")
        proc = self.vectorize("-i", self.dir / "train.ft")
        self.assertRegex(proc.stderr, r"^vectorize: 6 documents, \d+ terms")

    def test_an_empty_input_through_a_fitted_vectorizer_is_a_matrix_of_no_rows(self):
        # As CountVectorizer's transform([]); it had been "no documents to
        # vectorize", which stays for fitting (fit([]) learns no vocabulary).
        # TfidfVectorizer's transform([]) refuses no rows (check_array's
        # minimum of one sample) and HashingVectorizer's fails on its first
        # document: bagel gives the (0, F) float64 matrix that their rows of
        # no document are.
        docs = ["hello world", "more words here"]
        text = self.write("two.txt", "".join(d + "\n" for d in docs))
        empty = self.write("empty.txt", "")
        transforms = {"count": lambda: CountVectorizer().fit(docs).transform([]),
                      "tfidf": lambda: TfidfVectorizer().fit_transform(docs)[:0],
                      "hashing": lambda: HashingVectorizer(n_features=5).transform(docs)[:0]}
        for kind, transform in transforms.items():
            with self.subTest(kind=kind):
                fitted = self.dir / f"fitted-{kind}"
                proc = self.vectorize("-q", "-i", text, "--set", f"kind={kind}", "--vectorizer-out", fitted,
                                      *(["--set", "n_features=5"] if kind == "hashing" else []))
                self.assertEqual(proc.returncode, 0, proc.stderr)
                labels, weights = self.dir / "empty.labels", self.dir / "empty.weights"
                for fmt in ("auto", "fasttext", "tsv"):
                    proc = self.vectorize("-q", "-i", empty, "--format", fmt, "--vectorizer", fitted,
                                          "--labels-out", labels, "--weights-out", weights)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    got = sp.load_npz(self.dir / "out.npz")
                    expected = transform()
                    self.assertEqual((got.shape, got.dtype), (expected.shape, expected.dtype))
                    self.assertEqual(got.shape, (0, 5))
                    np.testing.assert_array_equal(got.indptr, expected.indptr)
                    self.assertEqual((labels.read_text(), weights.read_text()), ("", ""))
        proc = self.vectorize("-q", "-i", empty)
        self.assert_one_line_error(proc, 1, f"{empty}: no documents to vectorize")

    def test_a_train_config_without_a_vectorizer_section_is_named_as_one(self):
        # It had been "output: unknown key 'output'; valid keys: ...".
        text = self.write("cfg-docs.txt", "hello world\nhello more words\n")
        for config in ({"train": {"text": "cfg-docs.txt"}, "output": "m"}, {"output": "m"},
                       {"train": {"text": "cfg-docs.txt"}}):
            with self.subTest(config=config):
                path = self.write("whole.json", json.dumps(config))
                proc = self.vectorize("-q", "-i", text, "-c", path)
                self.assert_one_line_error(proc, 1, f'{path}: a train config without a "vectorizer" '
                                           'section', "expected vectorizer settings (min_df, "
                                           'ngram_range, ...) or a train config with "vectorizer"')
                self.assertNotIn("unknown key", proc.stderr)
        # With the section, that section; a file of vectorizer settings alone, those.
        vocab = self.dir / "cfg.vocab"
        for config in ({"train": {"text": "cfg-docs.txt"}, "output": "m", "vectorizer": {"min_df": 2}},
                       {"min_df": 2}):
            proc = self.vectorize("-q", "-i", text, "-c", self.write("whole.json", json.dumps(config)),
                                  "--vocabulary-out", vocab)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(vocab.read_text(), "hello\n")
        proc = self.vectorize("-q", "-i", text, "-c", self.write("whole.json", json.dumps({"min_df": 1})),
                              "--vocabulary-out", vocab)
        self.assertEqual(vocab.read_text(), "hello\nmore\nwords\nworld\n")

    def test_hashing_has_no_vocabulary_to_write(self):
        vocab = self.dir / "hashing.vocab"
        text = self.write("hash.txt", "hello world\n")
        proc = self.vectorize("-q", "-i", text, "--set", "kind=hashing", "--vocabulary-out", vocab)
        self.assert_one_line_error(proc, 2, "--vocabulary-out: a hashing vectorizer has no vocabulary")
        self.assertFalse(vocab.exists())
        fitted = self.dir / "hashing-vectorizer"
        proc = self.vectorize("-i", text, "--set", "kind=hashing", "--set", "n_features=16",
                              "--vectorizer-out", fitted)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("16 columns, 2 non-zeros", proc.stderr)
        proc = self.vectorize("-q", "-i", text, "--vectorizer", fitted, "--vocabulary-out", vocab)
        self.assert_one_line_error(proc, 2, "--vocabulary-out: a hashing vectorizer has no vocabulary")


if __name__ == "__main__":
    unittest.main()
