"""bagel: sparse bag-of-words logistic regression trained with SGD on an
EmbeddingBag-sum layer, as a scikit-learn estimator.

    from sklearn.pipeline import make_pipeline
    from sklearn.feature_extraction.text import CountVectorizer
    import bagel
    clf = make_pipeline(CountVectorizer(), bagel.BagelClassifier()).fit(texts, labels)
    clf.predict(["some new text"])

bagel.load(path) reads a model directory that `bagel train` or
BagelClassifier.save wrote.
"""

from ._core import InvalidParameterError, __version__
from ._estimator import BagelClassifier, load

__all__ = ["BagelClassifier", "InvalidParameterError", "load", "__version__"]
