"""Custom token patterns against Python's re, through scikit-learn's
CountVectorizer (which takes re.findall's list, or the group's with one
group): the same terms in the same order, on hand-picked patterns and on
random ones over text with non-ASCII letters and characters outside the
BMP (emoji)."""

import json
import random
import re
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer

from cli_helpers import run_bagel
from test_vectorize import read_vocabulary

# Atoms that consume a character, and zero-width ones (never quantified:
# Python refuses `\b*`).
ATOMS = [r"\w", r"\d", r"\s", r"\W", r"\S", r"[a-c]", r"[^ a]", ".", "a", "b", "\u00e9", "\U0001F600",
         "_", "[\U0001F600\u00e9]", "1", "\u00df"]
ASSERTIONS = [r"\b", "^", "$", r"(?=\w)", r"(?<=a)", r"(?!b)", r"(?<!\d)"]
QUANTIFIERS = ["", "", "", "*", "*?", "+", "+?", "?", "??", "{0,2}", "{1,2}?"]
LETTERS = ["a", "b", "c", "1", "2", " ", " ", "\u00e9", "\U0001F600", "\U0001F44D", "_", "-", "\u00df",
           "\u03a3", "\u4e2d"]


def random_branch(rng):
    parts = []
    for _ in range(rng.randint(0, 3)):
        if rng.random() < 0.2:
            parts.append(rng.choice(ASSERTIONS))
        elif rng.random() < 0.15:
            inner = "".join(rng.choice(ATOMS) for _ in range(rng.randint(1, 2)))
            # ICU 72 loops for ever on a lazy `*?` or `+?` of a group that
            # can match empty, where the group fails part way ("(?:bx|)*?a"
            # on "b"): such groups get greedy quantifiers here.
            empty = rng.random() < 0.5
            quantifier = rng.choice(["", "*", "+", "?", "??", "{0,2}"] if empty else QUANTIFIERS)
            parts.append("(?:" + inner + ("|" if empty else "") + ")" + quantifier)
        else:
            parts.append(rng.choice(ATOMS) + rng.choice(QUANTIFIERS))
    return "".join(parts)


def random_pattern(rng):
    branches = [random_branch(rng) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.3:  # one group: its text is the token
        k = rng.randrange(len(branches))
        branches[k] = "(" + branches[k] + ")" + rng.choice(["", "?", "*"])
    return "|".join(branches)


class TokenPatternsFindWhatPythonFinds(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, docs, pattern):
        """bagel vectorize against CountVectorizer with bigrams, so that the
        tokens' order counts too, and the vocabulary in its order."""
        params = {"token_pattern": pattern, "lowercase": False, "ngram_range": [1, 2]}
        with self.subTest(pattern=pattern, docs=docs):
            path = self.folder / "docs.txt"
            path.write_text("".join(d + "\n" for d in docs), encoding="utf-8")
            out, vocab = self.folder / "x.npz", self.folder / "vocab.txt"
            args = ["vectorize", "-q", "-i", path, "-o", out, "--vocabulary-out", vocab]
            for key, value in params.items():
                args += ["--set", f"{key}={json.dumps(value)}"]
            proc = run_bagel(*args)
            vectorizer = CountVectorizer(token_pattern=pattern, lowercase=False, ngram_range=(1, 2))
            try:
                theirs = vectorizer.fit_transform(docs)
            except ValueError as e:  # an empty vocabulary
                self.assertIn("empty vocabulary", str(e))
                self.assertEqual(proc.returncode, 2, proc.stderr)  # named by its --set
                self.assertIn("--set token_pattern=", proc.stderr)
                return
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(read_vocabulary(vocab), list(vectorizer.get_feature_names_out()))
            ours = sp.load_npz(out)
            np.testing.assert_array_equal(ours.indptr, theirs.indptr)
            np.testing.assert_array_equal(ours.indices, theirs.indices)
            np.testing.assert_array_equal(ours.data, theirs.data)

    def test_a_pattern_icu_never_finishes_is_stopped_with_an_error(self):
        # ICU 72 loops on a lazy repetition of a group that matches empty.
        path = self.folder / "b.txt"
        path.write_text("b\n")
        proc = run_bagel("vectorize", "-q", "-i", path, "-o", self.folder / "b.npz",
                         "--set", 'token_pattern="(?:bx|)*?a"')  # run_bagel: 120 s at most
        # Named as every other token_pattern error: by its --set (exit 2),
        # with the document it ran on.
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('--set token_pattern="(?:bx|)*?a": a match ran past ICU\'s time limit on the '
                      'document "b": ', proc.stderr)
        self.assertFalse((self.folder / "b.npz").exists())
        # train: by the config file and its key.
        config = self.folder / "b.json"
        config.write_text(json.dumps({
            "train": {"text": str(self.folder / "b.ft"), "format": "fasttext"},
            "vectorizer": {"token_pattern": "(?:bx|)*?a"}, "output": str(self.folder / "b")}))
        (self.folder / "b.ft").write_text("__label__x " + "b" * 50 + "\n")
        proc = run_bagel("train", "-q", "-c", config)
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn(f'{config}: vectorizer.token_pattern: a match ran past ICU\'s time limit on '
                      f'the document "{"b" * 40}...": ', proc.stderr)
        self.assertFalse((self.folder / "b").exists())

    def test_a_non_empty_match_where_an_empty_one_was(self):
        """After an empty match at p, re.findall tries for a non-empty match
        at p before moving on (Python 3.7+): `[a-z]*|\\d+` keeps the numbers,
        where moving on at once lost them."""
        docs = ["version 10 of 2007", "hello world", "ab c", "x\U0001F600\U0001F600y 12"]
        for pattern in (r"[a-z]*|\d+", r"\b|\w+", r"\w*?", r"\w??", r"|\w+", r"(?:|a)(?:|b)",
                        r"a|", r"(\w)?|\d", r"(?<=\w)|\w+", r"^|\w+", r"$|\w+", r"\W*|\w\w",
                        "(?x) \\w*?  # a comment to the end"):
            self.check(docs, pattern)

    def test_random_patterns_on_random_text(self):
        rng = random.Random(7)
        docs = ["".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 12))) for _ in range(12)]
        tried = 0
        while tried < 150:
            pattern = random_pattern(rng)
            try:
                compiled = re.compile(pattern)
            except Exception:  # noqa: BLE001 - a pattern Python refuses is not a case
                continue
            if compiled.groups > 1:
                continue
            tried += 1
            self.check(docs, pattern)


class PythonSyntaxICULacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.folder = Path(cls.tmp.name)
        cls.docs = ["ab <cd>", "x\x01y\x07z \tw", "Apple\x01\x01 A0 \x08b"]
        cls.path = cls.folder / "docs.txt"
        cls.path.write_text("".join(d + "\n" for d in cls.docs), encoding="utf-8")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def vectorize(self, pattern):
        return run_bagel("vectorize", "-q", "-i", self.path, "-o", self.folder / "x.npz",
                         "--vocabulary-out", self.folder / "vocab.txt", "--set", "lowercase=false",
                         "--set", f"token_pattern={json.dumps(pattern)}")

    def test_octal_escapes_are_pythons(self):
        """\\0, \\01, \\012 and \\101 outside a class, any 1-3 octal digits in one
        ([\\1] is \\x01), as Python reads them; \\0 was refused, [\\1] was '1'."""
        for pattern in (r"\0|\w\w+", r"\01\w*", r"\w\01+", r"[\1\7]\w", r"\011\w", r"\101\w*", r"\1010",
                        r"[\0-\10]+", r"[\101-\132]\w*", r"(\w)\1", r"[\10]"):
            with self.subTest(pattern=pattern):
                self.assert_vocabulary_is_sklearns(pattern, self.docs)

    def test_an_octal_escape_over_0o377_is_refused_as_python_refuses_it(self):
        with self.assertRaisesRegex(re.error, "outside of range 0-0o377"):
            re.compile(r"\777")
        proc = self.vectorize(r"a\777")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(r"octal escape value \777 outside of range 0-0o377", proc.stderr)

    def test_a_conditional_group_is_refused_naming_it(self):
        """ICU has no (?(1)yes|no): the error says so and where it is, where
        it said U_REGEX_UNIMPLEMENTED at an offset into bagel's translation."""
        self.assertEqual(re.findall(r"(<)?\w+(?(1)>|)", "ab <cd>"), ["", "<"])
        proc = self.vectorize(r"(<)?\w+(?(1)>|)")
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("the conditional group at position 7, (?(1)yes|no) or (?(name)yes|no), is not "
                      "supported", proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)

    def test_an_error_gives_the_position_in_the_users_pattern(self):
        """ICU's position is mapped back through the translation (\\w becomes a
        long class): for an unbalanced parenthesis it is Python's."""
        for pattern in ("ab(", "a)b", "\u00e9\U0001F600ab(", r"\w\w(", r"[\w]\d)x", r"\b\w+\B)"):
            with self.subTest(pattern=pattern):
                with self.assertRaises(re.error) as caught:
                    re.compile(pattern)
                proc = self.vectorize(pattern)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(f"U_REGEX_MISMATCHED_PAREN at position {caught.exception.pos})", proc.stderr)

    def test_a_dash_next_to_a_range_is_a_member_as_in_python(self):
        """ICU reads `--` in a class as a set difference: [+--] and [--/]
        were refused (U_REGEX_RULE_SYNTAX) where Python reads the ranges +
        to - and - to /."""
        self.docs_with("a+b -c, ./d x-y")
        for pattern in (r"[+--]", r"[--/]", r"[+--]\w", r"[a-c-e]+", r"[a-c--/]", r"[-a]+",
                        r"[a-]+", r"[^--/\s]+", r"[\--/]", r"[]-a]+"):
            with self.subTest(pattern=pattern):
                self.assert_vocabulary_is_sklearns(pattern, self.docs_now)

    def test_escapes_and_references_python_refuses_are_refused(self):
        """(a)\10 ran as \1 then '0', [\8] as '8' and \c as ICU's control
        escape: each is Python's error now, with its position."""
        for pattern in (r"(a)\10", r"(a)\2", r"\8", r"[\8]", r"[a\9]", r"\c", r"[\c]", r"(a\1)",
                        r"(?:a)\1"):
            with self.subTest(pattern=pattern):
                with self.assertRaises(re.error) as caught:
                    re.compile(pattern)
                proc = self.vectorize(pattern)
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(f"{caught.exception.msg} at position {caught.exception.pos}, as Python "
                              "says", proc.stderr)
                self.assertEqual(proc.stderr.count("\n"), 1, proc.stderr)
        # A reference to a group that exists and is closed still runs.
        proc = self.vectorize(r"(\w)\1\w*")
        self.assertEqual(proc.returncode, 0, proc.stderr)

    def assert_vocabulary_is_sklearns(self, pattern, docs):
        """bagel's vocabulary for PATTERN is CountVectorizer's on DOCS (the file's)."""
        proc = self.vectorize(pattern)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        theirs = CountVectorizer(token_pattern=pattern, lowercase=False).fit(docs)
        self.assertEqual(read_vocabulary(self.folder / "vocab.txt"), list(theirs.get_feature_names_out()))

    def docs_with(self, text):
        """Vectorizes one document of TEXT from now on (self.docs_now)."""
        self.docs_now = [text]
        self.path.write_text(text + "\n", encoding="utf-8")
        self.addCleanup(self.path.write_text, "".join(d + "\n" for d in self.docs),
                        encoding="utf-8")


if __name__ == "__main__":
    unittest.main()
