"""bagel vectorize against scikit-learn's CountVectorizer, TfidfVectorizer and
HashingVectorizer on text Debian ships: the same vocabulary in the same order
and the same data/indices/indptr arrays (and dtypes), option by option.

Corpora (each line one document, sampled to keep the run short):
  english   fortunes (package fortunes)
  world     German, Russian and Chinese fortunes, German and French
            dictionaries (fortunes-de, fortunes-ru, fortunes-zh, wngerman, wfrench)
  symbols   Unicode's emoji-test.txt (unicode-data: emoji, many scripts) and
            hand-made lines for the hard cases of lowercasing and accents
"""

import json
import os
import random
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer

from cli_helpers import run_bagel

FORTUNES = Path("/usr/share/games/fortunes")
HANDMADE = [
    "İstanbul İSTANBUL i̇stanbul",          # 'İ'.lower() is 'i' + U+0307
    "STRASSE Straße STRAẞE ß",              # ß stays, ẞ lowers to ß
    "ΟΔΟΣ ΟΔΟΣ. ΣΑΣ Σ ΑΣ' ΑΣ\u0301Α",      # final sigma by context
    "e\u0301te\u0301 été ÉTÉ ﬁnance ﬀ Ⅻ ①②",  # combining marks, ligatures, numerals
    "中文字符 日本語のテキスト 한국어 텍스트 ｆｕｌｌｗｉｄｔｈ",
    "snake_case __dunder__ x² 3½ ٣٤ ๒๓ a_b",
    "tab\tseparated\u00a0nbsp\u2003emspace\u3000ideographic",
    "ǅemal ǈubljana ᾈ ᾼ ΐ",                  # titlecase letters, Greek with ypogegrammeni
    "word\u200dword zero\u200bwidth \U0001F600smile \U0001F44D\U0001F3FDthumb",
]

KINDS = {"count": CountVectorizer, "tfidf": TfidfVectorizer, "hashing": HashingVectorizer}


def fortune_lines(paths, limit, seed):
    lines = []
    for path in paths:
        for raw in path.read_bytes().split(b"\n"):
            if raw.strip() and raw != b"%":
                try:
                    lines.append(raw.decode("utf-8").replace("\r", " "))
                except UnicodeDecodeError:
                    pass
    random.Random(seed).shuffle(lines)
    return lines[:limit]


def build_corpora(folder):
    english = fortune_lines([p for p in FORTUNES.iterdir() if p.is_file() and not p.suffix], 10000, 1)
    world = fortune_lines(
        [p for d in ("de", "ru") for p in (FORTUNES / d).iterdir() if p.is_file() and not p.suffix]
        + [FORTUNES / n for n in ("chinese", "tang300", "song100")], 6000, 2)
    words = fortune_lines([Path("/usr/share/dict/ngerman"), Path("/usr/share/dict/french")], 8000, 3)
    world += [" ".join(words[i:i + 6]) for i in range(0, len(words), 6)]
    random.Random(4).shuffle(world)
    emoji = [line for line in Path("/usr/share/unicode/emoji/emoji-test.txt").read_text("utf-8").split("\n")
             if line and not line.startswith("#")]
    symbols = emoji[::2] + HANDMADE * 3
    corpora = {}
    for name, docs in (("english", english), ("world", world), ("symbols", symbols)):
        path = folder / f"{name}.txt"
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
        corpora[name] = (path, docs)
    return corpora


def read_vocabulary(path):
    text = path.read_text("utf-8")
    terms = text.split("\n")[:-1]
    out = []
    for t in terms:
        if t == "\\e":  # the empty term
            out.append("")
            continue
        s, i = [], 0
        while i < len(t):
            if t[i] == "\\":
                s.append({"n": "\n", "r": "\r", "\\": "\\"}[t[i + 1]])
                i += 2
            else:
                s.append(t[i])
                i += 1
        out.append("".join(s))
    return out


class VectorizeMatchesScikitLearn(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.tmp.name)
        cls.corpora = build_corpora(cls.folder)
        (cls.folder / "stop.txt").write_text("the\nand\nof\nder\ndie\nund\nи\nв\n", encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def bagel(self, corpus, params, *extra, threads=2):
        path, _ = self.corpora[corpus]
        out = self.folder / "out.npz"
        vocab = self.folder / "vocab.txt"
        args = ["vectorize", "-q", "-i", path, "-o", out, "--threads", str(threads)]
        if params.get("kind") != "hashing":  # it has no vocabulary
            args += ["--vocabulary-out", vocab]
        for key, value in params.items():
            args += ["--set", f"{key}={json.dumps(value)}"]
        proc = run_bagel(*args, *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return sp.load_npz(out), read_vocabulary(vocab) if "--vocabulary-out" in args else None

    def sklearn_params(self, params):
        p = {k: v for k, v in params.items() if k != "kind"}
        if "ngram_range" in p:
            p["ngram_range"] = tuple(p["ngram_range"])
        if p.get("stop_words"):
            p["stop_words"] = (self.folder / "stop.txt").read_text("utf-8").split()
        if "dtype" in p:
            p["dtype"] = getattr(np, p["dtype"])
        return p

    def assert_same(self, ours, theirs, what):
        self.assertEqual(ours.shape, theirs.shape, what)
        self.assertEqual(ours.dtype, theirs.dtype, what)
        self.assertEqual(ours.indices.dtype, theirs.indices.dtype, what)
        np.testing.assert_array_equal(ours.indptr, theirs.indptr, err_msg=what)
        np.testing.assert_array_equal(ours.indices, theirs.indices, err_msg=what)
        # Bit for bit: the float64 tf-idf values too.
        np.testing.assert_array_equal(ours.data.view(np.uint8), theirs.data.view(np.uint8), err_msg=what)

    def check(self, corpus, params, threads=2):
        kind = params.get("kind", "count")
        what = f"{corpus} {params} threads={threads}"
        with self.subTest(what):
            bagel_params = dict(params)
            if bagel_params.get("stop_words"):
                bagel_params["stop_words"] = str(self.folder / "stop.txt")
            ours, vocabulary = self.bagel(corpus, bagel_params, threads=threads)
            vectorizer = KINDS[kind](**self.sklearn_params(params))
            theirs = vectorizer.fit_transform(self.corpora[corpus][1])
            self.assert_same(ours, theirs, what)
            if kind != "hashing":
                self.assertEqual(vocabulary, list(vectorizer.get_feature_names_out()), what)

    def test_count_vectorizer_defaults_on_every_corpus(self):
        for corpus in self.corpora:
            self.check(corpus, {})

    def test_one_thread_as_two(self):
        # One thread counts the corpus as one chunk (its arrays become the
        # matrix's when no term is pruned); two merge two chunks.
        for params in ({}, {"min_df": 2}, {"max_features": 500}, {"kind": "tfidf"}):
            for corpus in ("english", "world"):
                self.check(corpus, params, threads=1)

    def test_count_vectorizer_options(self):
        for params in [
            {"lowercase": False},
            {"ngram_range": [1, 2]},
            {"ngram_range": [2, 3], "min_df": 2},
            {"min_df": 3, "max_df": 200},
            {"min_df": 0.0005, "max_df": 0.05},
            {"max_features": 500},              # many terms tie on their counts
            {"max_features": 3000, "binary": True},
            {"binary": True},
            {"strip_accents": "ascii"},
            {"strip_accents": "unicode"},
            {"stop_words": True},
            {"token_pattern": r"(?u)\b\w+\b"},
            {"token_pattern": r"(\w+)[.,!?]"},
            {"token_pattern": r"[^\s]+"},
            {"token_pattern": r"\w*"},         # the empty term is a column
            {"dtype": "float32"},
            {"dtype": "int32"},
        ]:
            for corpus in ("english", "world"):
                self.check(corpus, params)
        for params in ({"strip_accents": "unicode"}, {"strip_accents": "ascii"}, {"lowercase": False},
                       {"token_pattern": r"\S\S+"}, {"ngram_range": [1, 3]}):
            self.check("symbols", params)

    def test_python_pattern_syntax_that_icu_reads_otherwise(self):
        """Custom patterns run on ICU after translation: only '\\n' ends a
        line for '.', '^' and '$' (ICU also ends lines at \\r, \\f, \\v,
        U+0085, U+2028), \\v is the vertical tab, {,n} is {0,n}, and group
        names may hold '_' or other letters."""
        docs = ["ab\u2028cd ef\x85", "gh\rij kl\x0c", "mn\x0bop q\tr", "aaa a_b \u00e9t\u00e9"]
        path = self.folder / "line_ends.txt"
        path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
        self.corpora["line_ends"] = (path, docs)
        for pattern in (r"\w.\w|\w+$", r"(?m)^\w+", r"\w+(?!.)", r"[^\v ]+", r"\v\w",
                        r"a{,2}", r"(?P<my_word>\w+)", "(?P<\u00e9t\u00e9>\\w\\w)\\w*"):
            self.check("line_ends", {"token_pattern": pattern})

    def test_tfidf_vectorizer_options(self):
        for params in [
            {},
            {"norm": "l1"},
            {"norm": None},
            {"use_idf": False},
            {"smooth_idf": False},
            {"sublinear_tf": True},
            {"sublinear_tf": True, "norm": "l1", "smooth_idf": False},
            {"binary": True, "ngram_range": [1, 2], "max_features": 2000},
        ]:
            for corpus in ("english", "world"):
                self.check(corpus, {"kind": "tfidf", **params})
        self.check("symbols", {"kind": "tfidf"})

    def test_hashing_vectorizer_options(self):
        for params in [
            {},
            {"n_features": 16},                 # collisions of opposite signs
            {"n_features": 1000, "alternate_sign": False},
            {"n_features": 4096, "norm": "l1"},
            {"n_features": 4096, "norm": None, "binary": True},
            {"norm": None, "ngram_range": [1, 2]},
        ]:
            for corpus in ("english", "world", "symbols"):
                self.check(corpus, {"kind": "hashing", **params})

    def test_saved_vectorizer_transforms_new_text_as_scikit_learn(self):
        train, test = "english", "world"
        for params in ({}, {"kind": "tfidf", "sublinear_tf": True}, {"max_features": 800, "ngram_range": [1, 2]}):
            with self.subTest(params):
                saved = self.folder / "fitted"
                self.bagel(train, params, "--vectorizer-out", saved)
                out = self.folder / "new.npz"
                proc = run_bagel("vectorize", "-q", "-i", self.corpora[test][0], "--vectorizer", saved, "-o", out)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                kind = params.get("kind", "count")
                vectorizer = KINDS[kind](**self.sklearn_params(params)).fit(self.corpora[train][1])
                self.assert_same(sp.load_npz(out), vectorizer.transform(self.corpora[test][1]), str(params))

    def test_labels_are_written_beside_the_matrix(self):
        path, docs = self.corpora["english"]
        labels = self.folder / "labels.txt"
        labels.write_text("".join(("long" if len(d) > 40 else "short") + "\n" for d in docs))
        out_labels = self.folder / "labels_out.txt"
        proc = run_bagel("vectorize", "-i", path, "--labels", labels, "-o", self.folder / "x.npz",
                         "--labels-out", out_labels)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(out_labels.read_text(), labels.read_text())
        self.assertRegex(proc.stderr, r"vectorize: \d+ documents, \d+ terms, \d+ non-zeros")

    def test_bad_options_are_one_line_errors_naming_the_option(self):
        path, _ = self.corpora["english"]
        for setting, expected in [
            ("max_df=1.5", "max_df"),
            ("kind=bag", "kind"),
            ("ngram_range=[2,1]", "ngram_range"),
            ("token_pattern=(a)(b)", "More than 1 capturing group"),
            ("min_df=0.99", "After pruning, no terms remain"),
            ("max_features=1.0", "not a fraction"),
            ("lowercas=false", "lowercas"),
        ]:
            with self.subTest(setting):
                proc = run_bagel("vectorize", "-i", path, "-o", self.folder / "bad.npz", "--set", setting)
                self.assertNotEqual(proc.returncode, 0)
                self.assertIn(expected, proc.stderr)
                self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)

    def test_a_text_models_folder_is_a_fitted_vectorizer(self):
        docs, labels = self.folder / "tm.txt", self.folder / "tm.labels"
        docs.write_text("red apple\ngreen pie\nred pie\ngreen apple\n")
        labels.write_text("a\nb\na\nb\n")
        config = self.folder / "tm.json"
        config.write_text(json.dumps({"train": {"text": str(docs), "labels": str(labels)},
                                      "optimizer": {"epochs": 1}, "output": str(self.folder / "tm")}))
        self.assertEqual(run_bagel("train", "-c", config, "-q").returncode, 0)
        proc = run_bagel("vectorize", "-q", "-i", docs, "-o", self.folder / "fit.npz",
                         "--vectorizer-out", self.folder / "fitted")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        outputs = []
        for folder in ("fitted", "tm"):
            out = self.folder / f"from-{folder}.npz"
            proc = run_bagel("vectorize", "-q", "-i", docs, "-o", out, "--vectorizer", self.folder / folder)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            outputs.append(out.read_bytes())
        self.assertEqual(outputs[0], outputs[1])
        # A model of features has none: said, with what to give instead.
        svm = self.folder / "f.svm"
        svm.write_text("1 0:1\n0 1:1\n")
        config.write_text(json.dumps({"train": {"features": str(svm)}, "optimizer": {"epochs": 1},
                                      "output": str(self.folder / "fm")}))
        self.assertEqual(run_bagel("train", "-c", config, "-q").returncode, 0)
        proc = run_bagel("vectorize", "-q", "-i", docs, "-o", self.folder / "x.npz",
                         "--vectorizer", self.folder / "fm")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("holds a model trained on features, which has no vectorizer", proc.stderr)

    def test_table_options_for_another_format_are_refused_not_ignored(self):
        ft = self.folder / "labelled.ft"
        ft.write_text("__label__a hello world\n__label__b bye world\n")
        proc = run_bagel("vectorize", "-i", ft, "-o", self.folder / "t.npz", "--tsv-label-column", 1)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--tsv-label-column: applies to tsv and csv input; " + str(ft) +
                      " is read as fasttext (detected", proc.stderr)
        proc = run_bagel("vectorize", "-i", ft, "-o", self.folder / "t.npz", "--format", "lines",
                         "--tsv-header")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--tsv-header: applies to tsv and csv input", proc.stderr)
        proc = run_bagel("vectorize", "-i", ft, "-o", self.folder / "t.npz", "--format", "lines",
                         "--unlabeled", "skip")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--unlabeled: applies to fasttext input; " + str(ft) + " is read as lines",
                      proc.stderr)
        self.assertFalse((self.folder / "t.npz").exists())

    def test_the_summary_counts_one_in_the_singular(self):
        path = self.folder / "one.txt"
        path.write_text("hello world\n")
        proc = run_bagel("vectorize", "-i", path, "-o", self.folder / "one.npz")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertRegex(proc.stderr, r"^vectorize: 1 document, 2 terms, 2 non-zeros, ")
        path.write_text("hello\n")
        proc = run_bagel("vectorize", "-i", path, "-o", self.folder / "one.npz",
                         "--set", "token_pattern=\\w+")
        self.assertRegex(proc.stderr, r"^vectorize: 1 document, 1 term, 1 non-zero, ")

    def test_a_byte_order_mark_does_not_hide_the_fasttext_labels(self):
        lines = "__label__a hello world\n__label__b foo bar\n"
        vocabularies = []
        for name, prefix in [("plain.ft", b""), ("bom.ft", b"\xef\xbb\xbf")]:
            path = self.folder / name
            path.write_bytes(prefix + lines.encode())
            vocab = self.folder / (name + ".vocab")
            labels = self.folder / (name + ".labels")
            proc = run_bagel("vectorize", "-q", "-i", path, "-o", self.folder / (name + ".npz"),
                             "--vocabulary-out", vocab, "--labels-out", labels)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(labels.read_text(), "a\nb\n")
            vocabularies.append(read_vocabulary(vocab))
        self.assertEqual(vocabularies[1], vocabularies[0])
        self.assertEqual(vocabularies[0], ["bar", "foo", "hello", "world"])

    def test_a_label_with_a_line_break_is_refused_before_anything_is_written(self):
        path = self.folder / "multiline.csv"
        path.write_text('label,text\n"multi\nline",hello world\nplain,foo bar\n')
        out = self.folder / "multiline.npz"
        labels = self.folder / "multiline.labels"
        proc = run_bagel("vectorize", "-q", "-i", path, "--format", "csv", "--tsv-header", "-o", out,
                         "--labels-out", labels)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(str(labels) + ": cannot hold the label of document 1", proc.stderr)
        self.assertFalse(out.exists())
        self.assertFalse(labels.exists())

    def test_stop_words_in_a_file_lose_the_spaces_around_them(self):
        path, docs = self.corpora["english"]
        spaced = self.folder / "spaced_stop.txt"
        words = (self.folder / "stop.txt").read_text("utf-8").split()
        spaced.write_text("".join(f" {w}\t \r\n" if i % 2 else f"{w} \n" for i, w in enumerate(words)),
                          encoding="utf-8")
        ours, vocabulary = self.bagel("english", {"stop_words": str(spaced)})
        theirs = CountVectorizer(stop_words=words)
        self.assert_same(ours, theirs.fit_transform(docs), "stop words with spaces")
        self.assertEqual(vocabulary, list(theirs.get_feature_names_out()))

    def test_a_set_value_that_opens_as_json_must_be_json(self):
        path = self.folder / "numbers.txt"
        path.write_text('x 12 "34" y\n')
        vocab = self.folder / "numbers.vocab"
        proc = run_bagel("vectorize", "-q", "-i", path, "-o", self.folder / "numbers.npz",
                         "--set", 'token_pattern="\\d+"')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("--set token_pattern=", proc.stderr)
        self.assertIn("not valid JSON", proc.stderr)
        proc = run_bagel("vectorize", "-q", "-i", path, "-o", self.folder / "numbers.npz",
                         "--vocabulary-out", vocab, "--set", 'token_pattern="\\\\d+"')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(read_vocabulary(vocab), ["12", "34"])


    def test_a_config_error_names_the_file_and_the_key_apart(self):
        path, _ = self.corpora["english"]
        alone = self.folder / "alone.json"
        alone.write_text('{"min_df": "x"}')
        whole = self.folder / "whole.json"
        whole.write_text('{"vectorizer": {"min_df": "x"}}')
        for args, expected, status in [
            (["--config", alone], f"{alone}: min_df: expected", 1),
            (["--config", whole], f"{whole}: vectorizer.min_df: expected", 1),
            (["--config", whole, "--set", "min_df=y"], "--set min_df=y: expected", 2),
            (["--set", "min_dff=1"], "--set min_dff=1: unknown key 'min_dff'; did you mean 'min_df'?", 2),
        ]:
            with self.subTest(args=args):
                proc = run_bagel("vectorize", "-q", "-i", path, "-o", self.folder / "c.npz", *args)
                self.assertEqual(proc.returncode, status, proc.stderr)
                self.assertTrue(proc.stderr.startswith("bagel: error: " + expected), proc.stderr)

    def test_an_error_found_in_fitting_names_the_file_or_the_set(self):
        # No term is in two documents: min_df 2 prunes them all while fitting.
        docs = self.folder / "distinct.txt"
        docs.write_text("alpha beta\ngamma delta\n")
        alone = self.folder / "min-df.json"
        alone.write_text('{"min_df": 2}')
        whole = self.folder / "whole-min-df.json"
        whole.write_text('{"train": {"text": "distinct.txt"}, "vectorizer": {"min_df": 2}}')
        pruned = "After pruning, no terms remain. Try a lower min_df or a higher max_df."
        for args, expected, status in [
            (["--config", alone], f"{alone}: min_df: {pruned}", 1),
            (["--config", whole], f"{whole}: vectorizer.min_df: {pruned}", 1),
            (["--set", "min_df=2"], f"--set min_df=2: {pruned}", 2),
        ]:
            with self.subTest(args=args):
                proc = run_bagel("vectorize", "-q", "-i", docs, "-o", self.folder / "f.npz", *args)
                self.assertEqual(proc.returncode, status, proc.stderr)
                self.assertEqual(proc.stderr, "bagel: error: " + expected + "\n")
                self.assertFalse((self.folder / "f.npz").exists())


class StopWordsWarnAsScikitLearnWarns(unittest.TestCase):
    """Stop words that preprocessing and tokenizing turn into tokens that are
    not stop words (so never match): scikit-learn's fit warns, naming the
    tokens; bagel vectorize and bagel train print the same words on stderr
    as a warning, --quiet or not, where they kept the words silently."""

    DOCS = ["The Software is free", "Caf\u00e9 it's SOFTWARE", "x-ray the free Caf\u00e9"]
    CASES = [
        ({"stop_words": ["The", "Software"]}, True),
        ({"stop_words": ["the", "it's", "x-ray"]}, True),          # 'it', 'ray' are tokens
        ({"stop_words": ["the", "free"]}, False),
        ({"stop_words": ["The"], "lowercase": False}, False),
        ({"stop_words": ["Caf\u00e9"], "strip_accents": "ascii"}, True),   # 'cafe'
        ({"stop_words": ["it's"], "token_pattern": r"[\w']+|\w"}, False),
        ({"stop_words": ["x-ray", "a"], "token_pattern": r"\w"}, True),
    ]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.tmp.name)
        (cls.folder / "docs.txt").write_text("".join(d + "\n" for d in cls.DOCS), encoding="utf-8")
        (cls.folder / "train.txt").write_text(
            "".join(f"__label__{i % 2} {d}\n" for i, d in enumerate(cls.DOCS * 2)), encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def sklearn_warnings(self, params):
        import warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            CountVectorizer(**params).fit(self.DOCS)
        return [str(w.message) for w in caught if "stop_words" in str(w.message)]

    def bagel_warnings(self, stderr):
        prefix = "bagel: warning: "
        return [line[len(prefix):] for line in stderr.splitlines() if line.startswith(prefix)]

    def test_vectorize_warns_as_scikit_learn_does(self):
        for params, inconsistent in self.CASES:
            with self.subTest(params):
                expected = self.sklearn_warnings(params)
                self.assertEqual(len(expected), int(inconsistent), expected)
                args = ["vectorize", "-q", "-i", self.folder / "docs.txt", "-o", self.folder / "x.npz"]
                for key, value in params.items():
                    args += ["--set", f"{key}={json.dumps(value)}"]
                proc = run_bagel(*args)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(self.bagel_warnings(proc.stderr), expected)

    def test_train_warns_as_scikit_learn_does(self):
        for params, _ in self.CASES[:3]:
            with self.subTest(params):
                config = self.folder / "config.json"
                config.write_text(json.dumps({"train": {"text": "train.txt"}, "vectorizer": params,
                                              "output": "model"}))
                proc = run_bagel("train", "--config", config, "--quiet")
                self.assertEqual(proc.returncode, 0, proc.stderr)
                self.assertEqual(self.bagel_warnings(proc.stderr), self.sklearn_warnings(params))


if __name__ == "__main__":
    unittest.main()
