#!/usr/bin/python3
"""BagelClassifier's defaults where the rate calibration's held-out loss sees
little or no signal: generated binary rows (500 or 3,000 binary features, 15
or 30 a row), labels drawn from the sigmoid of the row's sum of small normal
weights (scale 0.15-0.25), 1,000 rows to train and 4,000 to test. Prints per
set whether the calibration took the search's start (no_signal), the rate
taken (as k in 2^k / mean |x|^2), test accuracy and log loss, and each
trial's k, held-out log loss and held-out accuracy, beside the class shares'
held-out loss (prior).

    PYTHONPATH=build/python /usr/bin/python3 scripts/check_weak_signal.py
"""

import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.metrics import accuracy_score, log_loss

import bagel


def weak_set(features, density, scale, seed):
    rng = np.random.default_rng(seed)
    x = sp.random(5000, features, density=density, format="csr", random_state=seed, dtype=np.float32)
    x.data[:] = 1
    y = (rng.random(5000) < 1 / (1 + np.exp(-(x @ (rng.normal(size=features) * scale))))).astype(int)
    return x[:1000], y[:1000], x[1000:], y[1000:]


def report(name, x, y, xt, yt):
    c = bagel.BagelClassifier(threads=1).fit(x, y)
    cal = c.training_["rate_calibration"]
    k = lambda rate: round(math.log2(rate * cal["mean_squared_norm"]))
    trials = " ".join("%+d:%.3f/%.2f" % (k(t["rate"]), t["holdout_log_loss"] or math.inf,
                                         t.get("holdout_accuracy") or 0)
                      for t in sorted(cal["trials"], key=lambda t: t["rate"]))
    p = c.predict_proba(xt)
    print("%-9s no_signal=%d k=%+d prior=%.3f test accuracy %.3f log loss %.3f | %s" % (
        name, cal["no_signal"], k(cal["rate"]), cal["prior_log_loss"],
        accuracy_score(yt, c.classes_[p.argmax(1)]), log_loss(yt, p, labels=c.classes_), trials))


def main():
    warnings.simplefilter("ignore")
    for scale in (0.15, 0.2, 0.25):
        for seed in range(5):
            report("w%.2f/%d" % (scale, seed), *weak_set(500, 0.03, scale, seed))
    report("w3000", *weak_set(3000, 0.01, 0.15, 0))


if __name__ == "__main__":
    main()
