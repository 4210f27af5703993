"""What the command-line interop tests share: running the bagel binary under
test (BAGEL, set by ctest) and writing a small random labelled CSR set."""

import json
import os
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse as sp

BAGEL = os.environ.get("BAGEL", "bagel")


def run_bagel(*args, cwd=None, stdin=None, text=True):
    """bagel ARGS..., output captured (bytes when text is False)."""
    return subprocess.run([BAGEL, *map(str, args)], input=stdin, capture_output=True, text=text,
                          timeout=120, cwd=cwd)


def run_limited(blocks, *args):
    """bagel ARGS... under a file-size limit, `ulimit -f BLOCKS` (blocks of
    1024 bytes in bash): a larger write fails (EFBIG; bagel ignores SIGXFSZ)."""
    return subprocess.run(["bash", "-c", f'ulimit -f {blocks} && exec "$@"', "bagel", BAGEL,
                           *map(str, args)], capture_output=True, text=True, timeout=120)


def write_labeled_set(folder, rows, cols, density, seed, labels, name="train"):
    """FOLDER/NAME.npz and NAME.labels: random rows, labelled by the sign of a
    random linear score (labels[0] when positive). Returns (x, y)."""
    rng = np.random.default_rng(seed)
    x = sp.random(rows, cols, density=density, format="csr", random_state=rng)
    y = np.where(x @ rng.normal(size=cols) > 0, labels[0], labels[1])
    sp.save_npz(folder / f"{name}.npz", x)
    (folder / f"{name}.labels").write_text("\n".join(y) + "\n")
    return x, y


def train_model(folder, config, name="cfg.json"):
    """Writes CONFIG (a dict) to FOLDER/NAME and trains it quietly; returns
    the model folder, FOLDER/config["output"]."""
    (folder / name).write_text(json.dumps(config))
    proc = run_bagel("train", "--config", folder / name, "--quiet")
    assert proc.returncode == 0, proc.stderr
    return folder / config["output"]


def data_config(folder, name="train", **sections):
    """A config dict training on FOLDER/NAME.npz and NAME.labels, with
    SECTIONS (optimizer=..., output=...) added as given."""
    return {"train": {"features": str(folder / f"{name}.npz"),
                      "labels": str(folder / f"{name}.labels")}, **sections}


class FolderCase(unittest.TestCase):
    """A temporary folder for the whole class, cls.data (DATA_FOLDER inside
    it when set), filled once by make_data; and a fresh folder, self.dir, for
    each test beside it, removed after the test."""

    PREFIX = "bagel-interop-"
    DATA_FOLDER = None

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix=cls.PREFIX)
        cls.data = Path(cls._tmp.name)
        if cls.DATA_FOLDER:
            cls.data = cls.data / cls.DATA_FOLDER
            cls.data.mkdir()
        cls.make_data()

    @classmethod
    def make_data(cls):
        """Writes what every test of the class reads into cls.data."""

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def setUp(self):
        self._case = tempfile.TemporaryDirectory(prefix="case-", dir=self._tmp.name)
        self.dir = Path(self._case.name)

    def tearDown(self):
        self._case.cleanup()
