#!/usr/bin/python3
"""Regenerates the label .npy fixtures in tests/data/ with real numpy.

tests/test_labels.cpp reads them, so read_labels is checked against what
np.save actually writes, without Python at test time. The tests hold the same
literals as below. Run with the Debian interpreter:
    /usr/bin/python3 scripts/make_label_fixtures.py
"""
import os

import numpy as np

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data")


def save(name, array):
    np.save(os.path.join(DATA, name), array)


if __name__ == "__main__":
    # Integer classes, unsorted, with a negative one (sorted by value: -1, 2, 10).
    save("labels_int64.npy", np.array([10, -1, 2, 10, 2], dtype=np.int64))
    # Float classes: 0.5 and the integer 3.0, which is the class "3".
    save("labels_float64.npy", np.array([0.5, 3.0, 0.5, -0.0], dtype=np.float64))
    # float32: 0.1f must be the class "0.1", as numpy prints it.
    save("labels_float32.npy", np.array([0.1, 0.25, 0.1], dtype=np.float32))
    # Unicode strings (numpy '<U'), with non-ASCII, which sort by code point.
    save("labels_strings.npy", np.array(["spam", "ham", "\u00e9t\u00e9", "Zebra", "ham"]))
    # Unicode strings that all are numbers: numeric labels like a text file.
    save("labels_numeric_strings.npy", np.array(["+1", "-1", "1.0"]))
    save("labels_bool.npy", np.array([True, False, True]))
    save("labels_2d.npy", np.zeros((2, 2), dtype=np.int64))
