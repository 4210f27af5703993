"""Shared by the Python package's tests: the bagel binary (BAGEL, set by
ctest), the repository root (BAGEL_ROOT) and its example data. The package
itself comes from PYTHONPATH=build/python (set by ctest)."""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

ROOT = Path(os.environ.get("BAGEL_ROOT", Path(__file__).resolve().parents[2]))
BAGEL = os.environ.get("BAGEL", str(ROOT / "build" / "bagel"))


def run_bagel(*args):
    """bagel ARGS...; fails the test with bagel's stderr when it fails."""
    done = subprocess.run([BAGEL, *map(str, args)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def read_split(name, part):
    """data/NAME/PART.npz and its labels (strings, one per row)."""
    folder = ROOT / "data" / name
    x = sp.load_npz(folder / f"{part}.npz")
    y = np.array((folder / f"{part}.labels").read_text(encoding="utf-8").split("\n")[:-1])
    return x, y


@pytest.fixture(scope="session")
def multi():
    """fortunes-multi: six categories of Debian fortunes, word counts."""
    return {part: read_split("fortunes-multi", part) for part in ("train", "valid", "test")}


@pytest.fixture(scope="session")
def binary():
    return {part: read_split("fortunes-binary", part) for part in ("train", "valid", "test")}
