"""The raw-text formats of read_text_corpus (include/bagel/text/text_corpus.h)
against the readers they follow, on text Debian ships (fortunes in English,
German, Russian and Chinese, the files of /usr/share/doc):

- decode_error: Python's bytes.decode('utf-8', errors) on random bytes and on
  fortunes saved in legacy encodings (KOI8-R, Latin-1, GB2312);
- folder: scikit-learn's load_files(encoding='utf-8', shuffle=False);
- tsv/csv: Python's csv module (csv.reader on a file opened with newline='');
- fasttext: fastText itself (`fasttext supervised` then `fasttext dump ...
  dict`): the labels and the words it reads from the same file;
- streams: '-' and FIFOs give what the regular file gives.

No bagel command reads raw text on its own yet, so bagel's side is the test
tool tests/tools/text_corpus_dump.cpp (BAGEL_TEXT_DUMP), which prints what
read_text_corpus returns as JSON.

Run: BAGEL_TEXT_DUMP=build/tests/text_corpus_dump /usr/bin/python3 -m unittest -v test_text_formats
"""

import collections
import csv
import io
import json
import os
import random
import re
import shutil
import subprocess
import tempfile
import threading
import unittest
from pathlib import Path

from sklearn.datasets import load_files

DUMP = os.environ.get("BAGEL_TEXT_DUMP", "text_corpus_dump")
FORTUNES = Path("/usr/share/games/fortunes")
FASTTEXT = shutil.which("fasttext")
FASTTEXT_SPACES = " \t\v\f\r\0"


def dump(stdin=None, **options):
    """read_text_corpus(options) as a dict, or the error line as a string."""
    args = [DUMP, *(f"{key}={value}" for key, value in options.items())]
    proc = subprocess.run(args, input=stdin, capture_output=True, timeout=120)
    if proc.returncode != 0:
        return proc.stderr.decode("utf-8", "replace").strip()
    return json.loads(proc.stdout)


def fortunes(path):
    """The fortunes of one fortune file, without their '%' separators."""
    text = path.read_bytes().decode("utf-8")
    return [f.strip("\n") for f in text.split("\n%\n") if f.strip()]


def fortune_files(folder):
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and not p.is_symlink() and p.suffix not in (".dat", ".u8"))


def categories(count_per_file=40):
    """{category: [fortune, ...]}: English fortune files, some German and
    Russian ones, and the Chinese one."""
    out = {}
    for path in fortune_files(FORTUNES)[:10]:
        out[path.name] = fortunes(path)[:count_per_file]
    for lang in ("de", "ru"):
        if (FORTUNES / lang).is_dir():
            for path in fortune_files(FORTUNES / lang)[:3]:
                out[f"{lang}-{path.name}"] = fortunes(path)[:count_per_file]
    if (FORTUNES / "chinese").is_file():
        out["zh"] = fortunes(FORTUNES / "chinese")[:count_per_file]
    return {k: v for k, v in out.items() if v}


def random_bytes(rng, length):
    """Bytes that hit every branch of a UTF-8 decoder: ASCII, valid 2-4 byte
    characters, lone continuation bytes, truncated sequences, surrogates,
    overlong forms, code points past U+10FFFF and bytes that never occur."""
    pieces = []
    while sum(map(len, pieces)) < length:
        kind = rng.randrange(8)
        if kind == 0:
            pieces.append(bytes(rng.randrange(0x20, 0x7F) for _ in range(rng.randrange(1, 5))))
        elif kind == 1:
            cp = rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0x800, 0xD800),
                             rng.randrange(0xE000, 0x10000), rng.randrange(0x10000, 0x110000)])
            pieces.append(chr(cp).encode("utf-8"))
        elif kind == 2:  # a valid character cut short
            encoded = chr(rng.randrange(0x800, 0x110000)).encode("utf-8", "surrogatepass")
            pieces.append(encoded[:rng.randrange(1, len(encoded))])
        elif kind == 3:  # a surrogate, as CESU would write it
            pieces.append(chr(rng.randrange(0xD800, 0xE000)).encode("utf-8", "surrogatepass"))
        elif kind == 4:  # overlong forms
            pieces.append(rng.choice([b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf",
                                      b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf"]))
        elif kind == 5:  # past U+10FFFF, and leads that never occur
            pieces.append(rng.choice([b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80",
                                      b"\xfe", b"\xff"]))
        else:  # any byte but the line ends
            pieces.append(bytes(rng.choice([b for b in range(1, 256) if b not in (10, 13)])
                                for _ in range(rng.randrange(1, 4))))
    return b"".join(pieces)


class FifoWriter:
    """Writes `data` into a new FIFO from a thread, in small pieces."""

    def __init__(self, path, data, piece=4093):
        os.mkfifo(path)
        self.thread = threading.Thread(target=self._write, args=(path, data, piece), daemon=True)
        self.thread.start()

    @staticmethod
    def _write(path, data, piece):
        try:
            with open(path, "wb", buffering=0) as f:
                for at in range(0, len(data), piece):
                    f.write(data[at:at + piece])
        except BrokenPipeError:
            pass


class TextFormats(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-text-")
        cls.dir = Path(cls._tmp.name)
        cls.categories = categories()

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def path(self, name):
        return self.dir / name

    # --- decode_error --------------------------------------------------------

    def assert_folder_matches_load_files(self, root, decode_error):
        got = dump(format="folder", path=root, decode_error=decode_error)
        self.assertIsInstance(got, dict, got)
        bunch = load_files(root, encoding="utf-8", decode_error=decode_error, shuffle=False)
        self.assertEqual(got["documents"], bunch.data)
        self.assertEqual(got["labels"], [bunch.target_names[t] for t in bunch.target])
        self.assertEqual(got["files"], [str(f) for f in bunch.filenames])
        return got

    def test_random_bytes_decode_as_python_decodes_them(self):
        rng = random.Random(16)
        root = self.path("random")
        blobs = [random_bytes(rng, rng.randrange(1, 60)) for _ in range(600)]
        for i, blob in enumerate(blobs):
            folder = root / f"c{i % 3}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{i:04d}").write_bytes(blob)
        for mode in ("replace", "ignore"):
            with self.subTest(mode=mode):
                self.assert_folder_matches_load_files(root, mode)
        # The same bytes as lines (the line ends left out of the blobs).
        data = b"\n".join(blobs)
        self.path("random.txt").write_bytes(data)
        for mode in ("replace", "ignore"):
            with self.subTest(lines=mode):
                got = dump(format="lines", path=self.path("random.txt"), decode_error=mode)
                self.assertEqual(got["documents"], data.decode("utf-8", mode).split("\n"))

    def test_strict_names_the_byte_python_stops_at(self):
        rng = random.Random(7)
        for trial in range(40):
            good = [f"line {i} caf\u00e9 \u4e2d\u6587".encode() for i in range(rng.randrange(1, 6))]
            bad = random_bytes(rng, 30)
            try:
                bad.decode("utf-8")
                continue
            except UnicodeDecodeError:
                pass
            data = b"\n".join(good + [bad])
            path = self.path(f"strict{trial}.txt")
            path.write_bytes(data)
            with self.assertRaises(UnicodeDecodeError) as caught:
                data.decode("utf-8")
            start = caught.exception.start
            line = data[:start].count(b"\n") + 1
            byte = start - (data.rfind(b"\n", 0, start) + 1) + 1
            got = dump(format="lines", path=path)
            self.assertEqual(got, f"error: {path}:{line}: byte {byte} is not UTF-8 text; save the "
                                  f"file as UTF-8 (or set decode_error to \"replace\" or \"ignore\")")

    def test_legacy_encodings_decode_as_load_files_decodes_them(self):
        root = self.path("legacy")
        for name, texts in self.categories.items():
            encoding = ("koi8-r" if name.startswith("ru-") else
                        "gb18030" if name == "zh" else "latin-1")
            folder = root / name
            folder.mkdir(parents=True)
            for i, text in enumerate(texts):
                (folder / f"{i:03d}.txt").write_bytes(text.encode(encoding, "replace"))
        for mode in ("replace", "ignore"):
            with self.subTest(mode=mode):
                got = self.assert_folder_matches_load_files(root, mode)
                if mode == "replace":
                    self.assertTrue(any("\ufffd" in d for d in got["documents"]))
        # Under strict, the first file Python cannot decode is the one named.
        with self.assertRaises(UnicodeDecodeError):
            load_files(root, encoding="utf-8", shuffle=False)
        bunch = load_files(root, shuffle=False)
        for raw, name in zip(bunch.data, bunch.filenames):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                line = raw[:e.start].count(b"\n") + 1
                byte = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
                self.assertEqual(dump(format="folder", path=root),
                                 f"error: {name}:{line}: byte {byte} is not UTF-8 text; save the "
                                 f"file as UTF-8 (or set decode_error to \"replace\" or \"ignore\")")
                break

    # --- folder --------------------------------------------------------------

    def test_folder_of_fortunes_is_what_load_files_loads(self):
        root = self.path("fortunes")
        for name, texts in self.categories.items():
            folder = root / name
            folder.mkdir(parents=True)
            for i, text in enumerate(texts):
                (folder / f"{i:03d}.txt").write_text(text, encoding="utf-8")
        # What load_files does with hidden entries, a file beside the classes,
        # an empty class folder, names that sort by code point, and a BOM.
        (root / "README").write_text("not a document")
        (root / ".hidden").mkdir()
        (root / ".hidden" / "x.txt").write_text("a hidden class")
        (root / "empty").mkdir()
        (root / "art" / ".dotfile").write_text("a hidden file")
        (root / "art" / "\u00e9t\u00e9.txt").write_text("\ufeffwith a byte order mark", encoding="utf-8")
        (root / "art" / "Zebra.txt").write_text("upper case sorts first")
        got = self.assert_folder_matches_load_files(root, "strict")
        self.assertIn("\ufeffwith a byte order mark", got["documents"])

    def test_folder_of_usr_share_doc_by_package(self):
        root = self.path("docs")
        packages = 0
        for package in sorted(Path("/usr/share/doc").iterdir()):
            files = [f for f in sorted(package.iterdir())
                     if f.is_file() and not f.is_symlink() and f.stat().st_size < 200_000][:4]
            if not files:
                continue
            (root / package.name).mkdir(parents=True)
            for f in files:
                shutil.copyfile(f, root / package.name / f.name)
            packages += 1
            if packages == 40:
                break
        self.assertGreaterEqual(packages, 10)
        # Compressed changelogs are bytes, not text: replace and ignore.
        for mode in ("replace", "ignore"):
            with self.subTest(mode=mode):
                self.assert_folder_matches_load_files(root, mode)

    # --- tsv / csv -----------------------------------------------------------

    def rows(self):
        """(label, text) rows from the fortunes: several lines, tabs, quotes."""
        return [(name, text) for name, texts in self.categories.items() for text in texts]

    @staticmethod
    def python_rows(data, delimiter):
        """The records csv.reader reads, blank lines skipped, each with the
        line it starts on."""
        reader = csv.reader(io.StringIO(data, newline=""), delimiter=delimiter)
        out, start = [], 1
        for record in reader:
            if record:
                out.append((record, start))
            start = reader.line_num + 1
        return out

    def assert_matches_csv_module(self, path, data, delimiter, check_lines=True, **options):
        fmt = "tsv" if delimiter == "\t" else "csv"
        got = dump(format=fmt, path=path, **options)
        self.assertIsInstance(got, dict, got)
        expected = self.python_rows(data, delimiter)
        self.assertEqual(got["documents"], [r[1] for r, _ in expected])
        self.assertEqual(got["labels"], [r[0] for r, _ in expected])
        if check_lines:
            self.assertEqual(got["lines"], [line for _, line in expected])
        return got

    def test_tsv_of_fortunes_is_what_the_csv_module_reads(self):
        for delimiter in ("\t", ","):
            with self.subTest(delimiter=repr(delimiter)):
                buffer = io.StringIO(newline="")
                csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(self.rows())
                data = buffer.getvalue()
                self.assertIn('""', data)  # quotes inside quoted fields occur
                path = self.path(f"fortunes{ord(delimiter)}.txt")
                path.write_text(data, encoding="utf-8", newline="")
                self.assert_matches_csv_module(path, data, delimiter)

    def test_tsv_corner_cases_are_what_the_csv_module_reads(self):
        data = ("a\t\"closed\" then text\textra\n"
                "b\tquote \"inside\" a field\n"
                "\n"
                "c\t\"crlf\r\ninside\"\r\n"
                "d\tlone\rd2\tcr\n"
                "e\t\"\"\n"
                "f\t\n"
                "g\t\"tab\there\"\n")
        path = self.path("corner.tsv")
        path.write_text(data, encoding="utf-8", newline="")
        # A lone '\r' ends a line for Python's csv, not for bagel's line count.
        got = self.assert_matches_csv_module(path, data, "\t", check_lines=False)
        self.assertEqual(got["lines"], [1, 2, 4, 6, 6, 7, 8, 9])
        # A quote that never closes is an error naming its row's line, as
        # pandas refuses it (Python's csv, not strict, reads the rest of the
        # file as one field).
        path.write_text(data + "h\t\"unclosed\nto the end\ni\tmore\n", encoding="utf-8", newline="")
        got = dump(format="tsv", path=path)
        self.assertIsInstance(got, str, got)
        self.assertIn(f"{path}:10: a quoted field in the row that starts here never closes", got)
        # The reader names the config's setting (commands reword it: test_text_cli).
        self.assertIn('; close the quote, or set quoting to "none" to read quotes as text', got)

    def test_tsv_without_quoting_splits_every_tab(self):
        data = "x\t\"quoted\ttext\r\n\ny\tplain\textra\n"
        path = self.path("none.tsv")
        path.write_text(data, encoding="utf-8", newline="")
        got = dump(format="tsv", path=path, quoting="none")
        rows = [line.rstrip("\r").split("\t") for line in data.split("\n") if line.rstrip("\r")]
        self.assertEqual(got["documents"], [r[1] for r in rows])
        self.assertEqual(got["labels"], [r[0] for r in rows])

    def test_csv_header_by_name(self):
        rows = self.rows()[:50]
        buffer = io.StringIO(newline="")
        writer = csv.writer(buffer, lineterminator="\r\n")
        writer.writerow(["id", "text", "category"])
        writer.writerows((i, text, name) for i, (name, text) in enumerate(rows))
        path = self.path("named.csv")
        path.write_text("\ufeff" + buffer.getvalue(), encoding="utf-8", newline="")
        got = dump(format="csv", path=path, tsv_header="true", tsv_label_name="category",
                   tsv_text_name="text")
        expected = list(csv.DictReader(io.StringIO(buffer.getvalue(), newline="")))
        self.assertEqual(got["documents"], [r["text"] for r in expected])
        self.assertEqual(got["labels"], [r["category"] for r in expected])

    # --- fasttext ------------------------------------------------------------

    def fasttext_file(self):
        """A fastText file from the fortunes: one line each, the label first,
        a second label at the end of every 7th line, in the middle of every
        11th, and words separated by tabs, \\v and \\f here and there. No
        line repeats a label, so fastText's label counts are bagel's rows."""
        names = sorted(self.categories)
        lines = []
        for k, (name, text) in enumerate(self.rows()):
            words = text.split()
            if not words:
                continue
            labels = [name]
            if k % 7 == 0:
                words.append("__label__" + names[(names.index(name) + 1) % len(names)])
            if k % 11 == 0:
                words.insert(len(words) // 2, "__label__" + names[(names.index(name) + 2) % len(names)])
            separators = [FASTTEXT_SPACES[(k + i) % 4] if k % 5 == 0 else " " for i in range(len(words))]
            body = "".join(w + s for w, s in zip(words, separators)).rstrip(FASTTEXT_SPACES)
            lines.append(" ".join("__label__" + label for label in labels) + " " + body)
        return "\n".join(lines) + "\n"

    @unittest.skipUnless(FASTTEXT, "fastText is not installed (Debian package fasttext)")
    def test_fasttext_labels_and_words_are_what_fasttext_reads(self):
        data = self.fasttext_file()
        path = self.path("fortunes.ft")
        path.write_text(data, encoding="utf-8")
        model = self.path("ft-model")
        subprocess.run([FASTTEXT, "supervised", "-input", path, "-output", model, "-minCount", "1",
                        "-epoch", "1", "-dim", "1", "-bucket", "0", "-thread", "1", "-verbose", "0"],
                       check=True, capture_output=True, timeout=300)
        dumped = subprocess.run([FASTTEXT, "dump", f"{model}.bin", "dict"], check=True,
                                capture_output=True, timeout=120).stdout.decode("utf-8")
        ft_words, ft_labels = collections.Counter(), collections.Counter()
        for entry in dumped.splitlines()[1:]:
            word, count, kind = entry.rsplit(" ", 2)
            (ft_labels if kind == "label" else ft_words)[word] += int(count)
        line_count = ft_words.pop("</s>")

        got = dump(format="fasttext", path=path)
        self.assertEqual(collections.Counter("__label__" + name for name in got["labels"]), ft_labels)
        first_row_of_line = {}
        for row, line in enumerate(got["lines"]):
            first_row_of_line.setdefault(line, row)
        self.assertEqual(len(first_row_of_line), line_count)
        words = collections.Counter()
        for row in first_row_of_line.values():
            words.update(w for w in re.split("[" + re.escape(FASTTEXT_SPACES) + "]+",
                                             got["documents"][row]) if w)
        self.assertEqual(words, ft_words)
        # A line with L labels is L rows weighing 1/L each.
        weights = collections.defaultdict(float)
        for line, weight in zip(got["lines"], got["weights"]):
            weights[line] += weight
        self.assertTrue(all(abs(w - 1) < 1e-6 for w in weights.values()))
        self.assertGreater(len(got["weights"]), len(weights))

    def test_fasttext_document_is_the_line_without_its_label_words(self):
        data = self.fasttext_file()
        path = self.path("doc.ft")
        path.write_text(data, encoding="utf-8")
        got = dump(format="fasttext", path=path, multi_label="first")
        label_word = "(?:^|(?<=[" + re.escape(FASTTEXT_SPACES) + "]))__label__[^" + \
            re.escape(FASTTEXT_SPACES) + "]*[" + re.escape(FASTTEXT_SPACES) + "]*"
        lines = data.split("\n")[:-1]
        self.assertEqual(got["documents"], [re.sub(label_word, "", line) for line in lines])
        self.assertEqual(got["labels"], [re.search("__label__([^ ]*)", line).group(1) for line in lines])

    # --- streams -------------------------------------------------------------

    def test_streams_give_what_the_file_gives(self):
        buffer = io.StringIO(newline="")
        csv.writer(buffer, delimiter="\t", lineterminator="\n").writerows(self.rows())
        big = buffer.getvalue() * (1 + (3 << 20) // len(buffer.getvalue().encode()))
        cases = {"tsv": big.encode(),  # blocks of 1 MiB end inside quoted fields "fasttext": self.fasttext_file().encode(),
                 "lines": "\n".join(t for _, t in self.rows()).encode()}
        for fmt, data in cases.items():
            with self.subTest(format=fmt):
                path = self.path(f"stream.{fmt}")
                path.write_bytes(data)
                expected = dump(format=fmt, path=path)
                self.assertIsInstance(expected, dict, expected)
                del expected["source"]
                from_stdin = dump(stdin=data, format=fmt, path="-")
                self.assertEqual(from_stdin.pop("source"), "<stdin>")
                self.assertEqual(from_stdin, expected)
                fifo = self.path(f"fifo.{fmt}")
                writer = FifoWriter(fifo, data)
                from_fifo = dump(format=fmt, path=fifo)
                writer.thread.join()
                from_fifo.pop("source")
                self.assertEqual(from_fifo, expected)
        self.assertGreater(len(cases["tsv"]), 2 << 20)

    def test_labels_file_from_a_fifo_and_empty_streams(self):
        labels = self.path("labels.fifo")
        writer = FifoWriter(labels, b"x\ny\n")
        got = dump(stdin=b"one\ntwo\n", format="lines", path="-", labels_path=labels)
        writer.thread.join()
        self.assertEqual(got["labels"], ["x", "y"])
        for fmt in ("lines", "fasttext", "tsv", "csv"):
            self.assertEqual(dump(stdin=b"", format=fmt, path="-"),
                             "error: <stdin>: no documents: the stream ended before any document")
        empty = self.path("empty.txt")
        empty.write_bytes(b"")
        self.assertEqual(dump(format="fasttext", path=empty)["documents"], [])


if __name__ == "__main__":
    unittest.main()
