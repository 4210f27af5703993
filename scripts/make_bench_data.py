#!/usr/bin/python3
"""Builds the data sets of the defaults benchmark (scripts/bench_defaults.py).

    /usr/bin/python3 scripts/make_bench_data.py [--out runs/bench-data] [--sets a,b]
        [--gen-rows 200000] [--bagel build/bagel] [--check] [--force]

Real sets come from text that Debian packages ship (scripts/deps.sh,
BAGEL_BENCH_PACKAGES, lists them), two more from `bagel generate`. Each set is
a folder holding train/valid/test .npz (scipy CSR) with .labels (one class
per line) and info.json (source, task, kind, rows, features, non-zeros per
row, classes, the versions of the Debian packages the text came from).

  fortunes-topics  fortune cookies by topic (7 classes), word counts
  fortunes-pair    fortune cookies, science vs politics, tf-idf
  changelog-era    Debian changelog entries, before 2012 or not, word counts
  perl-pod         Perl manual paragraphs, release notes or not, tf-idf
  pydoc-lib        Python docstrings by library (6 classes), tf-idf
  man-section      man page paragraphs by section (6 classes), HashingVectorizer
  dict-lang        dictionary words by language (7 classes, ~10^5 rows),
                   binary character n-grams
  kernel-doc-20    Linux kernel documentation paragraphs by folder (20
                   classes, ~3*10^4 rows), word counts with CountVectorizer's
                   defaults: the size and shape of a 20-newsgroups-like task
  gen-binary, gen-20class   bagel generate: 2^20 features, 75 non-zeros a row
  fortunes-20      fortune cookies, the 20 largest categories, word counts:
                   built only when named (--sets fortunes-20), for
                   scripts/bench_python.py, not the defaults benchmark
  pydoc-20         Python docstrings by subpackage, the 20 largest (20
                   classes), word counts: also only when named
  kernel-doc-20-all  kernel-doc-20 without its cap of 2,500 paragraphs a
                   folder (~4*10^4 rows): also only when named

Real sets: stratified 70/10/20 split (seed 0), vectorizer fitted on train
only. Generated sets: split by rows in file order (the rows are i.i.d.).

The output depends only on the seed and on the installed package versions,
which info.json records. A set whose info.json exists is kept unless --force;
info.json is written last, so an interrupted set is rebuilt.

--check also fits scikit-learn's LogisticRegression(C=1) on each real set and
prints its test accuracy: the tasks were chosen so that it lands between about
70% and 97% (neither trivial nor hopeless). It goes to the terminal and to
info.json (`logreg_c1_test_accuracy`).
"""

from __future__ import annotations

import argparse
import ast
import email.utils
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfVectorizer
from sklearn.model_selection import train_test_split

# The example data's fortune reader plays back terminal overstrike the same way.
from make_example_data import render_overstrike  # noqa: E402 (scripts/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SEED = 0
VALID_FRACTION = 0.1
TEST_FRACTION = 0.2
MIN_WORDS = 8  # shorter paragraphs are mostly headings and option stubs


# ----------------------------------------------------------------------------
# Text sources. Each returns (texts, labels) in a deterministic order.
# ----------------------------------------------------------------------------

FORTUNE_DIR = Path("/usr/share/games/fortunes")


def read_fortunes(category: str) -> list[str]:
    text = (FORTUNE_DIR / category).read_text(encoding="utf-8", errors="replace")
    items = re.split(r"\n%\n", render_overstrike(text))
    return [t.strip() for t in items if t.strip() and t.strip() != "%"]


def fortunes_source(categories: list[str]):
    texts, labels = [], []
    for c in categories:
        items = read_fortunes(c)
        texts += items
        labels += [c] * len(items)
    return texts, labels


CHANGELOG_HEADER = re.compile(r"^(\S+) \(([^)]+)\) [^;]+;")
CHANGELOG_TRAILER = re.compile(r"^ -- .+?<[^>]*>\s+(.+)$")


def changelog_entries() -> list[tuple[int, str]]:
    """(year, body) of every entry of every /usr/share/doc/*/changelog.Debian.gz.
    The body is the entry's bullet text only: the header (version,
    distribution) and the trailer (the date itself) are left out."""
    entries = []
    # Many doc folders are links to another package's: each file once.
    for path in sorted({p.resolve() for p in Path("/usr/share/doc").glob("*/changelog.Debian.gz")}):
        try:
            text = gzip.open(path, "rt", encoding="utf-8", errors="replace").read()
        except (OSError, EOFError):
            continue
        body = None
        for line in text.split("\n"):
            if CHANGELOG_HEADER.match(line):
                body = []
                continue
            m = CHANGELOG_TRAILER.match(line)
            if m and body is not None:
                try:
                    year = email.utils.parsedate_to_datetime(m.group(1).strip()).year
                except (TypeError, ValueError):
                    year = None
                joined = "\n".join(body).strip()
                if year and joined:
                    entries.append((year, joined))
                body = None
            elif body is not None:
                body.append(line)
    return entries


# Roff: escapes such as \fB, \(em, \*(lq, \s-1, \[...] and named strings.
ROFF_ESCAPE = re.compile(r"\\(f(\[[^\]]*\]|\(..|.)|s[-+]?\d+|\(..|\*(\(..|\[[^\]]*\]|.)|"
                         r"n(\(..|\[[^\]]*\]|.)|\$\d|\[[^\]]*\]|.)")


def strip_roff(text: str) -> str:
    """Drops roff escapes; \\- is a real hyphen ("apt\\-get") and named
    glyphs (\\(em, \\[bu]) separate words."""
    def repl(m: re.Match) -> str:
        e = m.group(0)
        return "-" if e == "\\-" else " " if e.startswith(("\\(", "\\[")) else ""
    return ROFF_ESCAPE.sub(repl, text)


ROFF_FONT_MACROS = {"B", "I", "BI", "BR", "IB", "IR", "RB", "RI", "SM", "SB"}
ROFF_BREAK_MACROS = {"SH", "SS", "PP", "LP", "P", "TP", "TQ", "IP", "HP", "sp", "br", "RS", "RE",
                     "nf", "fi", "EX", "EE", "TH", "Sh", "Ss", "Pp", "Bl", "El", "It", "Bd", "Ed"}


def man_paragraphs(path: Path) -> list[str]:
    """Running-text paragraphs of one man page, without a roff renderer: a
    paragraph ends at a break macro; font macros keep their text; other
    requests, macro definitions (.de ... ..) and comments are dropped."""
    text = gzip.open(path, "rt", encoding="utf-8", errors="replace").read()
    if text.lstrip().startswith(".so "):
        return []  # a link to another page
    out, cur, skipping = [], [], False

    def flush():
        words = " ".join(cur).split()
        if len(words) >= MIN_WORDS:
            out.append(" ".join(words))
        cur.clear()

    for line in text.split("\n"):
        if skipping:
            skipping = not line.startswith("..")
            continue
        line = line.split('\\"', 1)[0]
        if line.startswith((".", "'")):
            parts = line[1:].split(None, 1)
            if not parts:
                continue
            macro = parts[0]
            if macro in ("de", "de1", "ig", "am"):
                skipping = True
            elif macro in ROFF_FONT_MACROS and len(parts) > 1:
                cur.append(strip_roff(parts[1].replace('"', "")))
            elif macro in ROFF_BREAK_MACROS:
                flush()
            continue
        cur.append(strip_roff(line))
    flush()
    return out


def man_source(sections: list[str], cap: int, rng: np.random.Generator):
    """Paragraphs of the pages of each section, at most `cap` per section.
    perl*.1 pages (perl-doc) are left out: they are Perl's manual, not
    commands, and would dominate section 1."""
    texts, labels = [], []
    for sec in sections:
        paras = []
        for path in sorted(Path(f"/usr/share/man/man{sec}").glob(f"*.{sec}.gz")):
            if path.name.startswith("perl") or path.is_symlink():
                continue
            paras += man_paragraphs(path)
        paras = unique(paras)
        if len(paras) > cap:
            paras = [paras[i] for i in np.sort(rng.choice(len(paras), cap, replace=False))]
        texts += paras
        labels += [f"man{sec}"] * len(paras)
    return texts, labels


def docstrings(root: Path) -> list[str]:
    """Docstrings (modules, classes, functions) of every .py file under root,
    in sorted path order; at least MIN_WORDS words each. dist-packages and
    site-packages are skipped: /usr/lib/python3.X/dist-packages holds parts of
    python3-numpy, which is not the standard library."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in ("dist-packages", "site-packages"))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            try:
                tree = ast.parse(Path(dirpath, name).read_bytes())
            except (SyntaxError, ValueError, RecursionError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    doc = ast.get_docstring(node)
                    if doc and len(doc.split()) >= MIN_WORDS:
                        out.append(doc)
    return out


def pod_paragraphs(path: Path) -> list[str]:
    """Text paragraphs of a .pod file: commands (=head1, =item ...) and
    verbatim (indented code) paragraphs are dropped, formatting codes
    (C<...>, L<...|...>) are reduced to their text."""
    out = []
    for para in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace")):
        if not para.strip() or para.startswith(("=", " ", "\t")):
            continue
        text = re.sub(r"[A-Z]<+\s?|\s?>+", " ", para)
        words = text.split()
        if len(words) >= MIN_WORDS:
            out.append(" ".join(words))
    return out


def unique(texts: list[str]) -> list[str]:
    return list(dict.fromkeys(texts))


# ----------------------------------------------------------------------------
# The sets
# ----------------------------------------------------------------------------

def set_fortunes_topics(rng):
    # LogisticRegression reaches 0.72-0.74 on these seven over four splits;
    # eight to ten topics fell to 0.59-0.71 (the topics overlap).
    cats = ["computers", "food", "law", "love", "politics", "sports", "startrek"]
    texts, labels = fortunes_source(cats)
    return dict(texts=texts, labels=labels, packages=["fortunes"],
                source=f"fortune cookies ({FORTUNE_DIR}) by category: " + ", ".join(cats),
                kind="counts", vectorizer=CountVectorizer(min_df=2))


# The 20 categories of Debian's fortunes with the most cookies (people,
# definitions, cookie, ... 147 sports), for the Python benchmark's 20-class
# task (scripts/bench_python.py): counts as CountVectorizer makes them.
FORTUNES_20 = ["people", "definitions", "cookie", "computers", "songs-poems", "politics",
               "miscellaneous", "work", "science", "men-women", "zippy", "knghtbrd",
               "platitudes", "art", "wisdom", "linux", "disclaimer", "perl", "literature",
               "startrek"]


def set_fortunes_20(rng):
    texts, labels = fortunes_source(FORTUNES_20)
    return dict(texts=texts, labels=labels, packages=["fortunes"],
                source=f"fortune cookies ({FORTUNE_DIR}) by category, the 20 largest: "
                       + ", ".join(FORTUNES_20),
                kind="counts", vectorizer=CountVectorizer(min_df=2))


def set_fortunes_pair(rng):
    # The small end (about 1,300 rows) and a hard pair: LogisticRegression
    # about 0.77, where computers vs love reached 0.96.
    cats = ["science", "politics"]
    texts, labels = fortunes_source(cats)
    return dict(texts=texts, labels=labels, packages=["fortunes"],
                source=f"fortune cookies ({FORTUNE_DIR}): science vs politics",
                kind="tfidf", vectorizer=TfidfVectorizer(min_df=2, dtype=np.float32))


def set_changelog_era(rng):
    # Packaging vocabulary changed over the years (debhelper compat levels,
    # Standards-Version, "Vcs-*", salsa). 2012 leaves about a quarter of the
    # entries on the old side; four eras instead of two reached only 0.77.
    # The entries are those of whatever packages are installed: info.json
    # lists no versions for them.
    entries = changelog_entries()
    texts = [b for _, b in entries]
    labels = ["before2012" if y < 2012 else "from2012" for y, _ in entries]
    return dict(texts=texts, labels=labels, packages=[],
                source="Debian changelog entries (/usr/share/doc/*/changelog.Debian.gz, bullets only): "
                       "written before 2012 or from 2012 on (date from the entry's trailer)",
                kind="counts", vectorizer=CountVectorizer(min_df=2))


DICT_LANGUAGES = {"en": ("american-english", "wamerican"), "de": ("ngerman", "wngerman"),
                  "fr": ("french", "wfrench"), "es": ("spanish", "wspanish"),
                  "it": ("italian", "witalian"), "pt": ("portuguese", "wportuguese"),
                  "nl": ("dutch", "wdutch")}


def set_dict_lang(rng, rows=100_000):
    """The large real set: single words, so only spelling tells the language
    apart; character 1-4-grams within word boundaries. Words spelled alike in
    two languages ("radio") are dropped, leaving a little under `rows`."""
    per_lang = rows // len(DICT_LANGUAGES)
    texts, labels = [], []
    for lang, (fname, _) in DICT_LANGUAGES.items():
        words = Path("/usr/share/dict", fname).read_text(encoding="utf-8").split("\n")
        # Apostrophes mark English possessives ("cat's") in wamerican only:
        # they would give English away for a third of its words.
        words = unique(w.strip() for w in words if w.strip() and "'" not in w)
        pick = np.sort(rng.choice(len(words), per_lang, replace=False))
        texts += [words[i] for i in pick]
        labels += [lang] * per_lang
    return dict(texts=texts, labels=labels,
                packages=[pkg for _, pkg in DICT_LANGUAGES.values()],
                source="dictionary words (/usr/share/dict) by language: " + ", ".join(DICT_LANGUAGES),
                kind="binary",
                vectorizer=CountVectorizer(analyzer="char_wb", ngram_range=(1, 4), binary=True, min_df=2))


PYVER = f"{sys.version_info.major}.{sys.version_info.minor}"  # /usr/bin/python3's: its stdlib is there
PYDOC_LIBRARIES = {"numpy": "python3-numpy", "scipy": "python3-scipy", "sklearn": "python3-sklearn",
                   "torch": "python3-torch", "sympy": "python3-sympy"}


def set_pydoc_lib(rng):
    texts, labels = [], []
    for lib in PYDOC_LIBRARIES:
        docs = unique(docstrings(Path("/usr/lib/python3/dist-packages", lib)))
        texts += docs
        labels += [lib] * len(docs)
    stdlib = pydoc_roots()["stdlib"]
    docs = unique(docstrings(stdlib))
    texts += docs
    labels += ["stdlib"] * len(docs)
    return dict(texts=texts, labels=labels,
                packages=[*PYDOC_LIBRARIES.values(), f"libpython{PYVER}-minimal", f"libpython{PYVER}-stdlib"],
                source="Python docstrings by library: " + ", ".join(PYDOC_LIBRARIES) + f", stdlib ({stdlib})",
                kind="tfidf", vectorizer=TfidfVectorizer(min_df=2, dtype=np.float32))


def pydoc_roots() -> dict[str, Path]:
    roots = {lib: Path("/usr/lib/python3/dist-packages", lib) for lib in PYDOC_LIBRARIES}
    roots["stdlib"] = Path(f"/usr/lib/python{PYVER}")
    return roots


def set_pydoc_20(rng):
    """Docstrings by subpackage (sympy.polys, torch.nn, scipy.stats,
    stdlib.asyncio, ...), the 20 subpackages with the most: a 20-class topic
    task of longer documents than fortunes-20 (about 70 words a row), in
    counts as CountVectorizer makes them."""
    docs_of = {}
    for lib, root in pydoc_roots().items():
        for sub in sorted(p for p in root.iterdir() if p.is_dir()):
            if sub.name not in ("dist-packages", "site-packages", "test", "tests", "__pycache__"):
                docs_of[f"{lib}.{sub.name}"] = unique(docstrings(sub))
    # Ties in size fall by name, so the choice does not depend on walk order.
    top = sorted(docs_of, key=lambda k: (-len(docs_of[k]), k))[:20]
    texts, labels = [], []
    for k in sorted(top):
        texts += docs_of[k]
        labels += [k] * len(docs_of[k])
    return dict(texts=texts, labels=labels,
                packages=[*PYDOC_LIBRARIES.values(), f"libpython{PYVER}-minimal", f"libpython{PYVER}-stdlib"],
                source="Python docstrings by subpackage, the 20 with the most: " + ", ".join(sorted(top)),
                kind="counts", vectorizer=CountVectorizer(min_df=2))


def set_man_section(rng):
    # Sections 2 and 3 (system calls, library functions) and 5 and 7 (file
    # formats, overviews) overlap, which keeps it hard. Section 1 draws on
    # every installed package's pages, so its sample depends on the machine.
    texts, labels = man_source(["1", "2", "3", "5", "7", "8"], 6000, rng)
    return dict(texts=texts, labels=labels, packages=["manpages", "manpages-dev"],
                source="man page paragraphs (/usr/share/man/man{1,2,3,5,7,8}, perl* left out) by "
                       "section, at most 6000 per section",
                kind="hashing", vectorizer=HashingVectorizer(n_features=2**18, dtype=np.float32))


def set_perl_pod(rng):
    # Release notes ("now warns", "fixed a bug where") against the reference
    # text; about 1 paragraph in 3 is release notes.
    texts, labels = [], []
    # /usr/share/perl/5.36 is a link to 5.36.0: each file once.
    for path in sorted({p.resolve() for p in Path("/usr/share/perl").glob("5.*/pod/*.pod")}):
        paras = pod_paragraphs(path)
        texts += paras
        labels += ["delta" if re.fullmatch(r"perl\d+delta", path.stem) else "other"] * len(paras)
    return dict(texts=texts, labels=labels, packages=["perl-doc"],
                source="Perl's pod manual (/usr/share/perl/5.*/pod) paragraphs: release notes "
                       "(perl*delta) or the rest",
                kind="tfidf", vectorizer=TfidfVectorizer(min_df=2, dtype=np.float32))


def rst_paragraphs(path: Path) -> list[str]:
    """Prose paragraphs of a gzipped reStructuredText or text file: literal
    blocks (indented), directives and comments (..), tables and title
    underlines are dropped; inline markup (``x``, :ref:`x`) keeps its text."""
    try:
        text = gzip.open(path, "rt", encoding="utf-8", errors="replace").read()
    except (OSError, EOFError):
        return []
    out = []
    for para in re.split(r"\n\s*\n", text):
        if not para.strip() or para.startswith((" ", "\t", "..", "+", "|", "=")):
            continue
        lines = [ln for ln in para.splitlines() if not re.fullmatch(r"\s*[-=~^*#`'.:+_]{3,}\s*", ln)]
        words = re.sub(r":[a-z]+:`|`+|\*+", " ", " ".join(lines)).split()
        if len(words) >= MIN_WORDS:
            out.append(" ".join(words))
    return out


# The kernel's Documentation/ folders left out of kernel-doc-20: devicetree
# holds YAML binding schemas, translations other languages.
KERNEL_DOC_SKIP = {"devicetree", "translations"}
KERNEL_DOC_CAP = 2500


def set_kernel_doc_20(rng, cap=KERNEL_DOC_CAP):
    """Paragraphs of the Linux kernel's documentation (linux-doc) by top
    folder of Documentation/ (admin-guide, networking, filesystems, ...), the
    20 with the most, at most `cap` each: about 29,000 short English
    documents in 20 topics with the default cap, the size of the task of the
    defaults issue, with CountVectorizer's defaults as a new user runs it."""
    docs = sorted(Path("/usr/share/doc").glob("linux-doc-*/Documentation"))
    if not docs:
        raise SystemExit("kernel-doc-20 needs /usr/share/doc/linux-doc-*/Documentation: apt-get install linux-doc")
    root = docs[-1]
    by_folder = {}
    for folder in sorted(d for d in root.iterdir() if d.is_dir() and d.name not in KERNEL_DOC_SKIP):
        paras = []
        for path in sorted(folder.rglob("*.gz")):
            if path.name.endswith((".rst.gz", ".txt.gz")):
                paras += rst_paragraphs(path)
        by_folder[folder.name] = unique(paras)
    top = sorted(by_folder, key=lambda f: (-len(by_folder[f]), f))[:20]
    texts, labels = [], []
    for f in sorted(top):
        paras = by_folder[f]
        if cap is not None and len(paras) > cap:
            paras = [paras[i] for i in np.sort(rng.choice(len(paras), cap, replace=False))]
        texts += paras
        labels += [f] * len(paras)
    return dict(texts=texts, labels=labels, packages=["linux-doc", root.parent.name],
                source=f"Linux kernel documentation paragraphs ({root}) by top folder, the 20 with "
                       f"the most (devicetree and translations left out), "
                       f"{'all of them' if cap is None else f'at most {cap} each'}: "
                       + ", ".join(sorted(top)),
                kind="counts", vectorizer=CountVectorizer())


REAL_SETS = {
    "fortunes-topics": set_fortunes_topics,
    "fortunes-pair": set_fortunes_pair,
    "changelog-era": set_changelog_era,
    "dict-lang": set_dict_lang,
    "pydoc-lib": set_pydoc_lib,
    "man-section": set_man_section,
    "perl-pod": set_perl_pod,
    "fortunes-20": set_fortunes_20,
    "pydoc-20": set_pydoc_20,
    "kernel-doc-20": set_kernel_doc_20,
    "kernel-doc-20-all": lambda rng: set_kernel_doc_20(rng, cap=None),
}
# Built only when --sets names them (20-class sets for bench_python.py).
ON_REQUEST = {"fortunes-20", "pydoc-20", "kernel-doc-20-all"}
GENERATED_SETS = {"gen-binary": 2, "gen-20class": 20}  # name -> classes
GEN_FEATURES = 2**20
GEN_NNZ_PER_ROW = 75
GEN_SEED = 1


# ----------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------

def package_versions(packages: list[str]) -> dict[str, str]:
    out = {}
    for pkg in packages:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
        out[pkg] = r.stdout.strip() if r.returncode == 0 else "not installed"
    return out


def drop_duplicates(texts: list[str], labels: list[str]):
    """One copy of each text; a text seen under two labels is dropped, as no
    model can get both right. Without this, copies would land in train and
    test alike and flatter every model."""
    label_of: dict[str, str | None] = {}
    for t, y in zip(texts, labels):
        label_of[t] = y if label_of.get(t, y) == y else None
    return [t for t, y in label_of.items() if y is not None], [y for y in label_of.values() if y is not None]


def save_split(folder: Path, part: str, x: sp.csr_matrix, labels) -> None:
    x = sp.csr_matrix(x)
    x.sort_indices()
    sp.save_npz(folder / f"{part}.npz", x, compressed=False)
    (folder / f"{part}.labels").write_text("".join(f"{y}\n" for y in labels), encoding="utf-8")


def describe(x: sp.csr_matrix) -> dict:
    return {"rows": int(x.shape[0]), "nnz": int(x.nnz), "nnz_per_row": round(x.nnz / max(x.shape[0], 1), 2)}


def logreg_accuracy(xtr, ytr, xte, yte) -> float:
    from sklearn.linear_model import LogisticRegression
    clf = LogisticRegression(C=1.0, max_iter=1000)
    clf.fit(xtr, ytr)
    return float(clf.score(xte, yte))


def build_real(name: str, out: Path, check: bool) -> dict:
    t0 = time.perf_counter()
    rng = np.random.default_rng(SEED)
    spec = REAL_SETS[name](rng)
    texts, labels = drop_duplicates(spec["texts"], spec["labels"])
    y = np.array(labels)
    idx = np.arange(len(texts))
    rest, test = train_test_split(idx, test_size=TEST_FRACTION, stratify=y, random_state=SEED)
    train, valid = train_test_split(rest, test_size=VALID_FRACTION / (1 - TEST_FRACTION),
                                    stratify=y[rest], random_state=SEED)
    vec = spec["vectorizer"]
    xtr = vec.fit_transform([texts[i] for i in train])  # HashingVectorizer: fit is a no-op
    xva = vec.transform([texts[i] for i in valid])
    xte = vec.transform([texts[i] for i in test])

    tmp = out / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for part, x, ix in (("train", xtr, train), ("valid", xva, valid), ("test", xte, test)):
        save_split(tmp, part, x, y[ix])
    counts = Counter(labels)
    info = {
        "name": name,
        "source": spec["source"],
        "task": "binary" if len(counts) == 2 else "multiclass",
        "kind": spec["kind"],
        "classes": {c: counts[c] for c in sorted(counts)},
        "features": int(xtr.shape[1]),
        "dtype": str(xtr.dtype),
        "train": describe(xtr), "valid": describe(xva), "test": describe(xte),
        "vectorizer": repr(vec),
        "split": f"stratified {1 - VALID_FRACTION - TEST_FRACTION:.0%}/{VALID_FRACTION:.0%}/"
                 f"{TEST_FRACTION:.0%}, seed {SEED}; vectorizer fitted on train",
        "debian_packages": package_versions(spec["packages"]),
    }
    if check:
        info["logreg_c1_test_accuracy"] = round(logreg_accuracy(xtr, y[train], xte, y[test]), 4)
    finish(tmp, out / name, info)
    print(f"{name}: {len(texts)} rows, {xtr.shape[1]} features, {info['train']['nnz_per_row']} nnz/row, "
          f"{len(counts)} classes, {spec['kind']}"
          + (f", LogisticRegression(C=1) test accuracy {info['logreg_c1_test_accuracy']:.4f}" if check else "")
          + f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return info


def build_generated(name: str, classes: int, rows: int, out: Path, bagel: Path) -> dict:
    t0 = time.perf_counter()
    tmp = out / (name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    cmd = [str(bagel), "generate", str(tmp / "all.npz"), "--labels-out", str(tmp / "all.labels"),
           "--rows", str(rows), "--features", str(GEN_FEATURES), "--nnz-per-row", str(GEN_NNZ_PER_ROW),
           "--classes", str(classes), "--seed", str(GEN_SEED)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    x = sp.load_npz(tmp / "all.npz").tocsr()
    y = np.array((tmp / "all.labels").read_text().split())
    (tmp / "all.npz").unlink()
    (tmp / "all.labels").unlink()
    n_train = int(round(rows * (1 - VALID_FRACTION - TEST_FRACTION)))
    n_valid = int(round(rows * VALID_FRACTION))
    parts = {"train": slice(0, n_train), "valid": slice(n_train, n_train + n_valid),
             "test": slice(n_train + n_valid, rows)}
    info = {"name": name, "source": "generated: " + " ".join(["bagel"] + cmd[1:2] + cmd[3:]).replace(
                str(tmp / "all.npz"), "ALL.npz").replace(str(tmp / "all.labels"), "ALL.labels"),
            "task": "binary" if classes == 2 else "multiclass", "kind": "generated counts",
            "classes": {c: int(n) for c, n in sorted(Counter(y).items(), key=lambda kv: int(kv[0]))},
            "features": int(x.shape[1]), "dtype": str(x.dtype), "generated_rows": rows,
            "split": "by rows in file order, 70/10/20"}
    for part, s in parts.items():
        save_split(tmp, part, x[s], y[s])
        info[part] = describe(x[s])
    finish(tmp, out / name, info)
    print(f"{name}: {rows} rows, {x.shape[1]} features, {info['train']['nnz_per_row']} nnz/row, "
          f"{classes} classes  ({time.perf_counter() - t0:.0f} s)", flush=True)
    return info


def finish(tmp: Path, final: Path, info: dict) -> None:
    (tmp / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "runs" / "bench-data")
    ap.add_argument("--sets", default="", help="comma-separated subset (default: all): "
                    + ", ".join([*REAL_SETS, *GENERATED_SETS]))
    ap.add_argument("--gen-rows", type=int, default=200_000, help="rows of each generated set")
    ap.add_argument("--bagel", type=Path, default=ROOT / "build" / "bagel", help="for `bagel generate`")
    ap.add_argument("--check", action="store_true",
                    help="print LogisticRegression(C=1) test accuracy of each real set")
    ap.add_argument("--force", action="store_true", help="rebuild sets that exist")
    a = ap.parse_args()

    names = [s for s in a.sets.split(",") if s] or \
        [s for s in [*REAL_SETS, *GENERATED_SETS] if s not in ON_REQUEST]
    unknown = [s for s in names if s not in REAL_SETS and s not in GENERATED_SETS]
    if unknown:
        ap.error(f"unknown set(s): {', '.join(unknown)}")
    a.out.mkdir(parents=True, exist_ok=True)
    for name in names:
        info_path = a.out / name / "info.json"
        if info_path.exists() and not a.force:
            info = json.loads(info_path.read_text())
            # Generated sets are rebuilt when asked for another size.
            if name not in GENERATED_SETS or info.get("generated_rows") == a.gen_rows:
                print(f"{name}: exists, kept ({info_path})")
                continue
        if name in REAL_SETS:
            build_real(name, a.out, a.check)
        else:
            build_generated(name, GENERATED_SETS[name], a.gen_rows, a.out, a.bagel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
