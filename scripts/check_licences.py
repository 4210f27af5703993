#!/usr/bin/python3
"""BagelClassifier's defaults on text from outside the repository where the
rate calibration's holdout shows no signal: the copyright files of
/usr/share/doc, labelled by the licence of their "Files: *" stanza (the
"License:" lines removed), licences of 12 files or more; CountVectorizer's
defaults, a stratified 75/25 split (random_state 0), and ten seeds. Prints
each seed's calibrated rate (as k in 2^k / mean |x|^2), whether the
calibration found no signal, and the test accuracy, beside
LogisticRegression's and LinearSVC's at their defaults.

    PYTHONPATH=build/python /usr/bin/python3 scripts/check_licences.py

The files differ with the packages installed: data/PERFORMANCE.md gives the
run on the machine of that day (298 texts of 10 licences).
"""

import collections
import glob
import math
import re
import warnings

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.svm import LinearSVC

import bagel

STANZA = re.compile(r"^Files:\s*\*\s*\n(?:(?!^Files:).*\n)*?^License:\s*(\S+)", re.M)


def licence_texts(min_files=12):
    texts, labels, seen = [], [], set()
    for path in sorted(glob.glob("/usr/share/doc/*/copyright")):
        try:
            text = open(path, errors="replace").read()
        except OSError:
            continue
        match = STANZA.search(text)
        body = "\n".join(line for line in text.split("\n") if not line.startswith("License:"))
        if match and body not in seen:
            seen.add(body)
            texts.append(" ".join(body.split()))
            labels.append(match.group(1))
    counts = collections.Counter(labels)
    keep = [i for i, label in enumerate(labels) if counts[label] >= min_files]
    return [texts[i] for i in keep], np.array([labels[i] for i in keep])


def main():
    texts, y = licence_texts()
    print(f"{len(texts)} texts, {len(set(y))} licences")
    tr, te, ytr, yte = train_test_split(texts, y, test_size=0.25, stratify=y, random_state=0)
    vec = CountVectorizer()
    xtr, xte = vec.fit_transform(tr), vec.transform(te)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print("LogisticRegression() %.3f, LinearSVC() %.3f" % (
            LogisticRegression().fit(xtr, ytr).score(xte, yte), LinearSVC().fit(xtr, ytr).score(xte, yte)))
    scores = []
    for seed in range(1, 11):
        clf = bagel.BagelClassifier(seed=seed).fit(xtr, ytr)
        cal = clf.training_["rate_calibration"]
        k = math.log2(clf.training_["learning_rate"] * cal["mean_squared_norm"])
        scores.append(clf.score(xte, yte))
        print(f"seed {seed:2d}: k {k:+.0f}, no_signal {cal['no_signal']}, test accuracy {scores[-1]:.3f}")
    print(f"mean {np.mean(scores):.3f}")


if __name__ == "__main__":
    main()
