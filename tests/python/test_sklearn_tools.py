"""BagelClassifier inside scikit-learn's tools: Pipeline with a vectorizer
on raw text, GridSearchCV in two worker processes, cross_val_score, clone."""

from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline

import bagel
FORTUNES = Path("/usr/share/games/fortunes")  # Debian's fortunes (scripts/deps.sh)


def fortunes():
    """Raw text, not vectorised: three categories of Debian's fortunes."""
    texts, labels = [], []
    for category in ("computers", "love", "politics"):
        text = (FORTUNES / category).read_text(encoding="utf-8", errors="replace")
        items = [t.strip() for t in text.split("\n%\n") if t.strip()]
        texts += items
        labels += [category] * len(items)
    return np.array(texts, dtype=object), np.array(labels)


def test_pipeline_on_raw_text_predicts_text():
    texts, labels = fortunes()
    rng = np.random.default_rng(0)
    order = rng.permutation(len(texts))
    train, test = order[: len(order) * 3 // 4], order[len(order) * 3 // 4:]
    clf = Pipeline([("vec", CountVectorizer()), ("clf", bagel.BagelClassifier())])
    clf.fit(texts[train], labels[train])
    assert clf.score(texts[test], labels[test]) > 0.6
    assert clf.predict(["My computer crashed and the compiler lost my program"])[0] == "computers"
    assert clf.predict_proba(texts[test[:3]]).shape == (3, 3)


def test_grid_search_in_two_processes_and_cross_val_score():
    texts, labels = fortunes()
    pipe = Pipeline([("vec", TfidfVectorizer()), ("clf", bagel.BagelClassifier())])
    search = GridSearchCV(pipe, {"clf__l2": [0.0, 1e-5], "clf__epochs": [5, 10]}, cv=3, n_jobs=2)
    search.fit(texts, labels)
    assert set(search.best_params_) == {"clf__l2", "clf__epochs"}
    assert search.best_score_ > 0.5
    scores = cross_val_score(pipe, texts, labels, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.5


def test_clone_copies_parameters_not_the_model():
    texts, labels = fortunes()
    x = CountVectorizer().fit_transform(texts)
    clf = bagel.BagelClassifier(l2=1e-5, class_weight="balanced").fit(x, labels)
    copy = clone(clf)
    assert copy.get_params() == clf.get_params()
    assert not hasattr(copy, "classes_")
