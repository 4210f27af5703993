"""BagelClassifier: bagel's training pipeline as a scikit-learn classifier.

The parameters are the optimizer keys of a `bagel train` config, with the
defaults that bagel's library gives them (read from it, not copied here),
plus `layer`, `multiclass` and `verbose`. Training runs in C++ without the GIL; Ctrl-C
stops it and leaves the estimator unfitted.
"""

from __future__ import annotations

import collections.abc
import json
import math
import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight

from . import _core
from ._data import INDEX, VALUE, csr_arrays, is_ready_csr
from ._sklearn_compat import validate_data

_DEFAULTS = json.loads(_core.default_parameters())
# Estimator parameters that are keys of the config's "optimizer" section.
_MODEL_KEYS = ("layer", "multiclass")
_OPTIMIZER_KEYS = [k for k in _DEFAULTS if k not in _MODEL_KEYS]
_RATE_KEYS = ("learning_rate", "bias_rate")


# What a parameter that json cannot write was expected to be, for its error.
_EXPECTED = {"seed": "an integer >= 0", "threads": "an integer in [0, 1024]",
             "class_weight": "None, \"balanced\" or a dict of class: weight"}


# scikit-learn's estimator check that BagelClassifier fails by design, by its
# names in scikit-learn 1.2 to 1.5 and from 1.6 on, with the reason.
_ZERO_WEIGHTS = ("zero sample_weight is not equivalent to removing samples: rows of weight 0 "
                 "still take their place in the shuffled order of SGD, so every later step "
                 "differs (scikit-learn's SGDClassifier fails it for the same reason)")
EXPECTED_FAILED_CHECKS = {
    "check_sample_weights_invariance": _ZERO_WEIGHTS,
    "check_sample_weight_equivalence_on_dense_data": _ZERO_WEIGHTS,
    "check_sample_weight_equivalence_on_sparse_data": _ZERO_WEIGHTS,
}


def _expected(key: str) -> str:
    if key in _EXPECTED:
        return _EXPECTED[key]
    default = _DEFAULTS.get(key)
    if isinstance(default, bool):
        return "true or false"
    return "a number" if isinstance(default, (int, float)) else "a number or a string"


def _plain(value):
    """numpy scalars as the Python numbers json writes."""
    return value.item() if isinstance(value, np.generic) else value


def _class_name(label) -> str:
    """The name bagel's model.json gives a class (labels.h): numbers by
    their shortest round-trip decimal, so that the CLI reads them back; an
    integer that a float cannot hold (beyond 2^53) by its own digits."""
    if isinstance(label, (numbers.Integral, np.integer)) and not isinstance(label, (bool, np.bool_)):
        value = int(label)
        return _core.number_name(float(value)) if float(value) == value else str(value)
    if isinstance(label, (numbers.Real, np.number)) and not isinstance(label, (bool, np.bool_)):
        return _core.number_name(float(label))
    if isinstance(label, bytes):  # np.bytes_ too: named by their text, not "b'...'"
        try:
            return label.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"y: the label {label!r} is not UTF-8 text, which class names must be") from None
    name = str(label)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ('\udcff', from surrogateescape decoding)
        raise ValueError(f"y: the label {name!r} is not valid Unicode (a lone surrogate), "
                         "which class names must be") from None
    return name


def _weight_key(key, classes) -> str:
    """A class_weight key's class name. With bool labels, 1 and 0 name True
    and False, as scikit-learn finds them (True == 1)."""
    if (classes is not None and classes.dtype.kind == "b" and not isinstance(key, (bool, np.bool_))
            and isinstance(key, (numbers.Integral, np.integer)) and int(key) in (0, 1)):
        return _class_name(bool(key))
    return _class_name(key)


def _name_value(name: str):
    """A numeric class name's value: digits as an exact int, else a float,
    an int where it is whole."""
    try:
        return int(name)
    except ValueError:
        value = float(name)
        return int(value) if value.is_integer() else value


# The numpy number types a model's class_type may name (model.cpp reads no
# other): classes of another (longdouble, say) come back as float64.
_NUMBER_CLASS_TYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                       "float16", "float32", "float64")


def _classes_from_names(names, numeric: bool, class_type: str = "") -> np.ndarray:
    """classes_ of a model read from disk: numbers where bagel found numbers
    (integers as integers, exactly), bools, bytes or numbers of another numpy
    type where it was fitted on those (model.json's class_type), strings
    otherwise."""
    if class_type == "bool":
        return np.array([n == "True" for n in names])
    if class_type == "bytes":
        return np.array([n.encode("utf-8") for n in names])
    if not numeric:
        return np.array(names)
    values = [_name_value(n) for n in names]
    if class_type:  # a numpy number type: the classes' own
        return np.array(values, dtype=class_type)
    if not all(isinstance(v, int) for v in values):
        return np.array(values, dtype=np.float64)
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:  # labels of a text file beyond int64
        return np.array(values, dtype=object)


def _check_targets(y) -> None:
    """scikit-learn's check_classification_targets, except for a 1-D array of
    strings (what validate_data leaves of y), which is always a classification
    target: the check sorts the labels (np.unique: 3 ms for 20,000 labels, four
    times fit's own encoding, _classes_and_ids)."""
    if not (isinstance(y, np.ndarray) and y.ndim == 1 and y.dtype.kind in "US"):
        check_classification_targets(y)


def _check_classes(classes) -> np.ndarray:
    """partial_fit's `classes` as an array: a 1-d array-like of labels as y's
    are, finite, and not continuous (scikit-learn's SGDClassifier refuses NaN,
    inf and 2.5 among integers alike). A set or a dict is no array (numpy
    would make it one object)."""
    refused = ValueError(f"classes: Expected array-like (a list or 1-d array of labels), got "
                         f"{type(classes).__name__}: pass list(classes)")
    if isinstance(classes, (set, frozenset, dict, str, bytes)) or not (
            hasattr(classes, "__len__") or hasattr(classes, "__array__")):
        raise refused
    values = np.asarray(classes)
    if values.ndim == 0:  # a sized collection numpy takes as one object (dict.keys())
        raise refused
    if values.dtype.kind == "O":
        values = _object_labels(values)
    if values.ndim != 1:
        raise ValueError(f"classes: expected a 1-d array-like of labels, got {values.ndim} "
                         f"dimensions, shape {values.shape}")
    if values.dtype.kind in "fc" and not np.all(np.isfinite(values)):
        raise ValueError("classes: contains NaN or infinity; classes are labels")
    if values.dtype.kind in "fciu":
        try:
            check_classification_targets(values)
        except ValueError as e:
            raise ValueError(f"classes: {e}") from None
    return values


def _object_labels(values: np.ndarray) -> np.ndarray:
    """An object array of classes: numbers as their numeric array (np.unique
    compares them so), others as they are, once they can be sorted."""
    items = values.ravel().tolist()
    if items and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in items):
        return np.array(items).reshape(values.shape)
    try:
        np.unique(values)
    except TypeError:  # None among numbers, numbers among strings
        kinds = ", ".join(sorted({type(v).__name__ for v in items}))
        raise ValueError(f"classes: expected labels of one kind, all numbers or all strings, "
                         f"found {kinds}") from None
    return values


def _path_argument(path) -> bytes:
    """A str, bytes or os.PathLike path as the file system's bytes, as
    Python's own file functions take it (str() of b"m" is "b'm'")."""
    path = os.fsencode(path)
    if not path:
        raise ValueError("path is empty")
    if b"\0" in path:  # the C++ side would end the path there, as open() refuses
        raise ValueError("path: embedded null byte")
    return path


def _holds_text(X) -> bool:
    """X is raw documents: a string, or a list, tuple or 1-D array of them
    (str, or bytes in UTF-8)."""
    if isinstance(X, (str, bytes)):
        return True
    if isinstance(X, np.ndarray):
        return X.ndim == 1 and (X.dtype.kind in "US" or (X.dtype.kind == "O" and _any_text(X)))
    return isinstance(X, (list, tuple)) and _any_text(X)


def _any_text(items) -> bool:
    """Some item is a document: then the others must be too (None or NaN
    among strings is an error naming it, not a matrix to convert)."""
    return any(isinstance(d, (str, bytes)) for d in items)


def _one_dimensional(X) -> bool:
    """X is a list or tuple of scalars, or a 1-D array: no matrix
    (check_array wants 2-D), so for a text model a list of documents even
    when none of them is a string ([None] names its document; [] is no
    documents, said as check_array says 0 samples)."""
    if isinstance(X, np.ndarray):
        return X.ndim == 1
    return isinstance(X, (list, tuple)) and not any(isinstance(d, (list, tuple, np.ndarray)) for d in X)


def _materialized(X):
    """An iterator or generator (of documents or rows) as a list, as
    CountVectorizer.transform takes any iterable; check_array would make it
    a 0-d array of one object. So are a set, a dict (its keys, as iterating
    it gives them) and a dict's views, which have a length but no order of
    rows numpy would take. Anything else as it is."""
    if (hasattr(X, "__iter__") and not hasattr(X, "__len__") and not hasattr(X, "__array__")
            and not sp.issparse(X)):
        return list(X)
    if (isinstance(X, (collections.abc.Set, collections.abc.Mapping, collections.abc.MappingView))
            and not sp.issparse(X)):  # a dok_matrix is a dict
        return list(X)
    return X


def _text_anywhere(X) -> bool:
    """X holds documents, also as a 2-d array or a list of lists of them.
    Asked only once check_array has failed on X, so a matrix that converts
    costs nothing."""
    if _holds_text(X):
        return True
    if isinstance(X, np.ndarray):
        return X.dtype.kind in "US" or (X.dtype.kind == "O" and _any_text(X.flat))
    return isinstance(X, (list, tuple)) and any(
        isinstance(row, (list, tuple, np.ndarray)) and _text_anywhere(row) for row in X)


def _layout(X) -> str:
    """What a matrix of documents is, for an error (never its text)."""
    if isinstance(X, np.ndarray):
        return f"a {X.ndim}-d array of shape {X.shape}"
    return f"a {type(X).__name__} of rows"


_PIPELINE = "Pipeline([('vec', CountVectorizer()), ('clf', BagelClassifier())])"
_TRAINED_ON_NUMBERS = ("X holds text, but this model was trained on numbers (a feature matrix): "
                       "vectorise the documents as its training data was, e.g. with the same "
                       "fitted CountVectorizer's transform, or use a Pipeline")


def _checked_dtype(X):
    """check_array's dtype for X: a sparse matrix keeps its own (check_array
    still refuses NaN and inf), and csr_arrays converts its values alone to
    float32, which the core checks are finite. check_array's conversion,
    scipy's astype, copies the indices too (2 ms of 2.4 on CountVectorizer's
    560,000 non-zeros) and sorts the caller's own rows in place (scipy 1.10:
    TfidfVectorizer's unsorted float64 rows), which fit must not write."""
    return None if sp.issparse(X) and X.dtype.kind in "biuf" else VALUE


def _classes_and_ids(y: np.ndarray):
    """np.unique(y, return_inverse=True), the same arrays: for a 1-d array of
    strings the distinct labels are found by hashing (_core.first_seen) and
    only they are sorted, in numpy's order."""
    if not (y.ndim == 1 and y.dtype.kind in "US"):
        classes, ids = np.unique(y, return_inverse=True)
        return classes, ids.reshape(-1)
    first, ids = _core.first_seen(np.ascontiguousarray(y))
    distinct = y[first]
    order = np.argsort(distinct, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return distinct[order], rank[ids]


def _comparable_labels(y: np.ndarray, classes: np.ndarray):
    """y in classes' integer type where the two are signed and unsigned
    integers, and which of its labels that type holds: numpy compares int64
    with uint64 as float64, where 2**53 + 1 == 2**53. Other pairs as they are."""
    everywhere = np.ones(y.shape, dtype=bool)
    if not (y.dtype.kind in "iu" and classes.dtype.kind in "iu") or y.dtype.kind == classes.dtype.kind:
        return y, everywhere
    if classes.dtype.kind == "u":  # negative labels are no class
        y = y.astype(np.int64)
        held = y >= 0
        return np.where(held, y, 0).astype(np.uint64), held
    y = y.astype(np.uint64)
    held = y <= np.uint64(np.iinfo(np.int64).max)
    return np.where(held, y, 0).astype(np.int64), held


def _document(d, row: int, errors: str = "strict") -> str:
    """One raw document, as CountVectorizer takes it: a string, or bytes as
    UTF-8 with the model's decode_error (as `bagel predict` reads a file);
    None, NaN or a number is no document."""
    if isinstance(d, bytes):
        try:
            return d.decode("utf-8", errors)
        except UnicodeDecodeError as e:
            raise ValueError(f"X: document {row}: bytes that are not UTF-8 ({e.reason} at byte "
                             f"{e.start}; the model's decode_error is \"{errors}\")") from None
    if not isinstance(d, str):
        raise ValueError(f"X: document {row}: expected a string, found {type(d).__name__} {d!r}")
    return d


def _valid_unicode(d: str, errors: str) -> str:
    """A str with lone surrogates (as "surrogateescape" decoding leaves) as
    the bytes it came from, decoded with the model's decode_error: the text
    that reading those bytes from a file gives."""
    try:
        d.encode("utf-8")
        return d
    except UnicodeEncodeError:
        pass
    try:
        raw = d.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no byte escapes to (\ud800)
        raw = d.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", errors)


def _unencodable(docs) -> ValueError:
    """The error for the first document UTF-8 cannot hold (a lone surrogate,
    as "surrogateescape" decoding leaves)."""
    for row, d in enumerate(docs):
        try:
            d.encode("utf-8")
        except UnicodeEncodeError as e:
            return ValueError(f"X: document {row}: not valid Unicode ({e.reason} at character "
                              f"{e.start})")
    return ValueError("X: the documents could not be passed on as UTF-8")


def _quoted(names, limit=10) -> str:
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


class BagelClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression (sigmoid for two classes; for more, one-vs-rest
    sigmoids or, with multiclass="softmax", one softmax) on sparse
    bag-of-words rows, trained by SGD on an EmbeddingBag-sum layer.

    The parameters mean what the same keys of a `bagel train` config mean
    (README §3); "auto" epochs and learning rate are chosen from the data.
    fit(X, y, sample_weight=None, eval_set=(X_valid, y_valid)) takes a scipy
    CSR matrix, any other sparse format or a dense array; a CSR matrix with
    float32 data and int32 indices is read in place, without a copy.
    """

    def __init__(self, *, epochs=_DEFAULTS["epochs"], learning_rate=_DEFAULTS["learning_rate"],
                 bias_rate=_DEFAULTS["bias_rate"], schedule=_DEFAULTS["schedule"],
                 power_t=_DEFAULTS["power_t"], batch_size=_DEFAULTS["batch_size"],
                 l2=_DEFAULTS["l2"], l1=_DEFAULTS["l1"],
                 average=_DEFAULTS["average"], average_from=_DEFAULTS["average_from"],
                 class_weight=_DEFAULTS["class_weight"], threads=_DEFAULTS["threads"],
                 deterministic=_DEFAULTS["deterministic"],
                 deterministic_method=_DEFAULTS["deterministic_method"],
                 reorder_features=_DEFAULTS["reorder_features"], shuffle=_DEFAULTS["shuffle"],
                 seed=_DEFAULTS["seed"], patience=_DEFAULTS["patience"],
                 min_delta=_DEFAULTS["min_delta"], layer=_DEFAULTS["layer"],
                 multiclass=_DEFAULTS["multiclass"], verbose=0):
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.bias_rate = bias_rate
        self.schedule = schedule
        self.power_t = power_t
        self.batch_size = batch_size
        self.l2 = l2
        self.l1 = l1
        self.average = average
        self.average_from = average_from
        self.class_weight = class_weight
        self.threads = threads
        self.deterministic = deterministic
        self.deterministic_method = deterministic_method
        self.reorder_features = reorder_features
        self.shuffle = shuffle
        self.seed = seed
        self.patience = patience
        self.min_delta = min_delta
        self.layer = layer
        self.multiclass = multiclass
        self.verbose = verbose

    # ------------------------------------------------------------------ fit

    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Trains a new model. eval_set=(X_valid, y_valid) gives per-epoch
        validation metrics and, with patience > 0, early stopping."""
        self._forget()
        try:
            X = _materialized(X)
            X, y = self._numbers("fit", X, y, accept_sparse="csr", dtype=_checked_dtype(X), reset=True)
            _check_targets(y)
            classes, y_ids = _classes_and_ids(y)
            if len(classes) < 2:
                raise ValueError(f"y: needs at least 2 classes, found 1 class: '{classes[0]}'")
            model = self._train(X, y_ids, classes, sample_weight, eval_set, start=None)
        except BaseException:
            self._forget()  # an interrupted or failed fit leaves no half-fitted estimator
            raise
        self._adopt(model, classes)
        self._note_rates()
        self.n_iter_ = int(self.training_["epochs_run"])
        return self

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One pass over a chunk of rows, from the current weights. The first
        call needs `classes` (every class any chunk will hold). The learning
        rate, when "auto", is chosen on the first chunk and kept."""
        first = not hasattr(self, "_model")
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit")
        if isinstance(self.class_weight, str) and self.class_weight == "balanced":
            # Each chunk's counts would give other weights: a moving objective.
            raise ValueError("class_weight 'balanced' is not supported for partial_fit (each chunk "
                             "would weigh the classes by its own counts); give the weights as a "
                             "dict, e.g. from sklearn.utils.class_weight.compute_class_weight on "
                             "all the labels")
        try:
            X = _materialized(X)
            if not first and self._model.has_vectorizer and (_holds_text(X) or _one_dimensional(X)):
                X = self._vectorized(X)  # as predict reads documents, and `bagel train` with init
            X, y = self._numbers("partial_fit", X, y, accept_sparse="csr", dtype=_checked_dtype(X),
                                 reset=first)
            _check_targets(y)
            if classes is not None:
                classes = _check_classes(classes)
            if first:
                known = np.unique(classes)
                if len(known) < 2:
                    raise ValueError(f"classes: needs at least 2 classes, found {len(known)}")
            else:
                known = self.classes_
                if classes is not None and not np.array_equal(np.unique(classes), known):
                    raise ValueError(f"classes: {_quoted(list(np.unique(classes)))} differ from "
                                     f"the classes the estimator was fitted with, "
                                     f"{_quoted(list(known))}")
            y_ids = self._encode(y, known, "y")
            self._check_partial_fit_parameters(first)
            if not first and self._weigh_nothing(y_ids, known, sample_weight):
                # Nothing to learn from: SGDClassifier takes such a chunk, moving no weight.
                self.n_iter_ = 1
                return self
            overrides = {"epochs": 1, "patience": 0}
            if not first:
                overrides.update(self._partial_fit_rates())
            model = self._train(X, y_ids, known, sample_weight, None,
                                start=None if first else self._model, overrides=overrides)
        except BaseException:
            if first:
                self._forget()
            raise
        self._adopt(model, known)
        self._note_rates()
        self.n_iter_ = 1
        return self

    def _weigh_nothing(self, y_ids, classes, sample_weight) -> bool:
        """Every row weighs 0 (its sample weight times its class's weight;
        as float32, below whose smallest normal training counts a weight as
        0). Weights that are not numbers >= 0 are left for fit's checks."""
        try:
            w = np.ones(len(y_ids)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
            if isinstance(self.class_weight, dict):
                by_name = {_weight_key(k, classes): float(_plain(v)) for k, v in self.class_weight.items()}
                w = w * np.array([by_name.get(_class_name(c), 1.0) for c in classes])[y_ids]
        except (TypeError, ValueError):
            return False
        with np.errstate(over="ignore"):
            zero = (w >= 0) & (w.astype(np.float32) < np.finfo(np.float32).tiny)
        return w.shape == (len(y_ids),) and len(w) > 0 and bool(np.all(zero))

    def _asked_rate(self, key):
        value = _plain(getattr(self, key))
        return _DEFAULTS[key] if value is None else value

    def _partial_fit_rates(self) -> dict:
        """The rates of a later partial_fit call. Asked as before: where the
        model got to (a rate that diverged was lowered). A number set since:
        that number, as SGDClassifier takes a new eta0. "auto" set since a
        number: the rate calibrated on an earlier chunk, or, where none was,
        one calibrated on this chunk."""
        asked_before = getattr(self, "_rates_asked_", {})
        calibrated = getattr(self, "_rates_calibrated_", {})
        ran = {"learning_rate": float(self.training_["learning_rate"]),
               "bias_rate": float(self.training_.get("bias_rate", 1))}
        rates = {}
        for key in _RATE_KEYS:
            now = self._asked_rate(key)
            if now == asked_before.get(key, now):
                rates[key] = ran[key]
            elif now != "auto":
                rates[key] = now
            elif key in calibrated:
                rates[key] = calibrated[key]
        return rates

    def _note_rates(self):
        """What this model's rates were asked as, and the calibrated ones
        (kept across the partial_fit calls that do not calibrate)."""
        self._rates_asked_ = {key: self._asked_rate(key) for key in _RATE_KEYS}
        calibration = self.training_.get("rate_calibration")
        if isinstance(calibration, dict) and "rate" in calibration:
            self._rates_calibrated_ = {"learning_rate": float(calibration["rate"]),
                                       "bias_rate": float(calibration.get("bias_rate", 1))}

    def _check_partial_fit_parameters(self, first):
        """What one pass from the current weights cannot do, said in the
        estimator's terms before the core says it in the config's."""
        average_from = _plain(self.average_from)
        if (isinstance(average_from, numbers.Real) and not isinstance(average_from, bool)
                and average_from > 1):
            raise _core.InvalidParameterError(
                f"average_from: is {average_from}, but partial_fit trains one epoch a call "
                "(average_from counts the epochs of one fit): leave it at 1 for partial_fit")
        multiclass, head = _plain(self.multiclass), None if first else self._model.output
        if head in ("ovr", "softmax") and multiclass is not None and multiclass != head:
            raise _core.InvalidParameterError(
                f"multiclass: is {multiclass!r}, but the model partial_fit goes on from has a "
                f"{head!r} head: set it back, or call fit to train anew")

    def _train(self, X, y_ids, classes, sample_weight, eval_set, start, overrides=None):
        train = (*csr_arrays(X), y_ids.astype(np.int32, copy=False))
        valid = None if eval_set is None else self._eval_split(eval_set, classes)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=VALUE)
            bad = np.flatnonzero(~(np.isfinite(sample_weight) & (sample_weight >= 0)))
            if bad.size:  # rows counted from 0, as X's and y's
                raise ValueError(f"sample_weight: row {int(bad[0])}: expected a finite weight >= 0, "
                                 f"found {sample_weight[bad[0]]!r}")
        numeric = classes.dtype.kind in "iuf"  # bools are named "False", "True"
        names = [_class_name(c) for c in classes]
        model, lines = _core.fit(self._config_json(overrides or {}, classes), train, valid, names, numeric,
                                 sample_weight, start, self._verbose())
        for line in lines:
            warnings.warn(line, ConvergenceWarning, stacklevel=3)
        if classes.dtype.kind in "bS":  # saved, so that load gives bools or bytes back
            model.class_type = "bool" if classes.dtype.kind == "b" else "bytes"
        elif (numeric and classes.dtype.name in _NUMBER_CLASS_TYPES
              and classes.dtype != _classes_from_names(names, True).dtype):
            model.class_type = classes.dtype.name  # int8, uint64, float32, ... as fitted
        return model

    def _eval_split(self, eval_set, classes):
        if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
            raise ValueError("eval_set: expected a pair (X_valid, y_valid)")
        Xv, yv = eval_set
        try:
            Xv, yv = self._numbers("fit", Xv, yv, accept_sparse="csr", dtype=_checked_dtype(Xv),
                                   reset=False)
        except ValueError as e:  # its messages name X and y
            raise ValueError(f"eval_set: {e}") from e
        return (*csr_arrays(Xv), self._encode(yv, classes, "eval_set"))

    @staticmethod
    def _encode(y, classes, source) -> np.ndarray:
        """Class ids of y; a label that is not a class is an error naming its
        row, as `bagel train` names the line of a valid labels file."""
        y = np.asarray(y)
        if (classes.dtype.kind in "biuf") != (y.dtype.kind in "biuf"):
            kinds = ("numbers", "strings") if classes.dtype.kind in "biuf" else ("strings", "numbers")
            raise ValueError(f"{source}: the labels are {kinds[1]} but the classes "
                             f"{_quoted(list(classes))} are {kinds[0]}")
        else:
            y_cmp, comparable = _comparable_labels(y, classes)
            ids = np.searchsorted(classes, y_cmp)
            ids[ids == len(classes)] = 0
            bad = np.flatnonzero(~comparable | (classes[ids] != y_cmp))
        if bad.size:
            row = int(bad[0])
            raise ValueError(f"{source}: row {row}: label '{y[row]}' is not one of the "
                             f"{len(classes)} classes {_quoted(list(classes))}")
        return ids.astype(np.int32)

    def _config_json(self, overrides, classes=None) -> str:
        # None is a parameter's default, whatever the parameter (the core
        # takes an absent key so; it read null as 0 for some).
        optimizer = {k: _plain(getattr(self, k)) for k in _OPTIMIZER_KEYS
                     if getattr(self, k) is not None}
        optimizer.update(overrides)
        for key, value in optimizer.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise _core.InvalidParameterError(f"{key}: expected a finite number, found {value}")
            if isinstance(value, int) and not -2**63 <= value < 2**63:
                # json would write it as digits the core reads as a double
                # (seed=2**64 was "found 1.8446744073709552e+19").
                raise _core.InvalidParameterError(
                    f"{key}: expected {_expected(key)} within 64 bits (below 2**63), found {value}")
            if not isinstance(value, (type(None), bool, int, float, str, list, dict)):
                # json cannot write it (a RandomState as seed, say): the core's
                # message for a value of the wrong kind, under the key's name.
                raise _core.InvalidParameterError(
                    f"{key}: expected {_expected(key)}, found {type(value).__name__} {value!r}")
        if isinstance(self.class_weight, dict):
            optimizer["class_weight"] = {_weight_key(k, classes): _plain(v)
                                         for k, v in self.class_weight.items()}
            for name, weight in optimizer["class_weight"].items():
                if isinstance(weight, float) and not math.isfinite(weight):
                    raise _core.InvalidParameterError(
                        f"class_weight.{name}: expected a finite number >= 0, found {weight}")
        model = {k: getattr(self, k) for k in _MODEL_KEYS if getattr(self, k) is not None}
        return json.dumps({"model": model, "optimizer": optimizer})

    def _verbose(self) -> bool:
        """verbose, an integer >= 0 or a bool as scikit-learn's estimators take it."""
        value = _plain(self.verbose)
        if value is None:
            return False
        if not isinstance(value, numbers.Integral) or value < 0:
            raise _core.InvalidParameterError(
                f"verbose: expected an integer >= 0 or a bool, found {value!r}")
        return bool(value)

    def _threads(self) -> int:
        """threads for the core's predict, checked as fit checks it."""
        value = _plain(self.threads)
        if value is None:
            return _DEFAULTS["threads"]
        if (isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value)
                or value != int(value) or not 0 <= value <= 1024):
            raise _core.InvalidParameterError(f"threads: expected {_EXPECTED['threads']}, found {value!r}")
        return int(value)

    def _adopt(self, model, classes):
        self._model = model
        self.classes_ = classes
        self.n_features_in_ = int(model.num_features)
        self.training_ = json.loads(model.training_json)

    def _forget(self):
        for name in [k for k in vars(self) if k.endswith("_") or k == "_model"]:
            delattr(self, name)

    # -------------------------------------------------------------- predict

    def _check_fitted(self):
        if not hasattr(self, "_model"):
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call "
                                 "'fit' with appropriate arguments before using this estimator.")

    def _rows(self, X):
        """X as CSR arrays for the core, which validates them itself: a CSR
        matrix with int32 indices skips check_array (its cost would dwarf a
        one-row prediction)."""
        self._check_fitted()
        X = _materialized(X)
        if _holds_text(X) or (self._model.has_vectorizer and _one_dimensional(X)):
            X = self._vectorized(X)
        if is_ready_csr(X):
            if X.shape[0] == 0:  # as check_array says it
                raise ValueError(f"Found array with 0 sample(s) (shape={X.shape}) while a minimum "
                                 f"of 1 is required by {type(self).__name__}.")
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                                 f"expecting {self.n_features_in_} features as input.")
            return csr_arrays(X)
        return csr_arrays(self._numbers("predict", X, accept_sparse="csr", dtype=_checked_dtype(X),
                                        reset=False))

    def _numbers(self, call, X, *args, **kwargs):
        """validate_data(self, X, ...), where X that holds text is an error
        saying what `call` takes instead of numpy's "could not convert string
        to float" with a whole document in it."""
        try:
            return validate_data(self, X, *args, **kwargs)
        except (ValueError, TypeError):
            if not _text_anywhere(X):
                raise
        text_model = hasattr(self, "_model") and self._model.has_vectorizer
        if text_model and call in ("predict", "partial_fit"):
            raise ValueError(f"X: a model trained on text takes documents as a 1-d list or array, "
                             f"found {_layout(X)}: pass the documents themselves (of an (n, 1) "
                             "array, its column X[:, 0])") from None
        if call == "predict":
            raise ValueError(_TRAINED_ON_NUMBERS) from None
        raise ValueError(f"X holds text, but {call} takes a matrix of numbers (a row of features a "
                         f"sample): for raw documents use {_PIPELINE}") from None

    def _vectorized(self, documents):
        """Raw documents through the vectorizer of a model `bagel train` fitted
        on text (bagel.load keeps it), as `bagel predict` reads them."""
        if isinstance(documents, (str, bytes)):
            raise ValueError("X: an iterable of documents expected, a single string received")
        errors = json.loads(self._model.config_json).get("train", {}).get("decode_error", "strict")
        docs = [_document(d, row, errors) for row, d in enumerate(documents)]
        threads = self._threads()
        try:
            arrays = _core.vectorize(self._model, docs, threads)
        except TypeError:  # pybind11 refuses a str it cannot encode
            if errors == "strict":
                raise _unencodable(docs) from None
            arrays = _core.vectorize(self._model, [_valid_unicode(d, errors) for d in docs], threads)
        if arrays is None:
            raise ValueError(_TRAINED_ON_NUMBERS)
        indptr, indices, values, cols = arrays
        return sp.csr_matrix((values.astype(np.float32), indices, indptr.astype(np.int32)),
                             shape=(len(docs), cols))

    def predict_proba(self, X):
        """(n_samples, n_classes) probabilities, columns in classes_ order."""
        rows = self._rows(X)
        return _core.predict_proba(self._model, *rows, self._threads())

    def predict_log_proba(self, X):
        """log of predict_proba, computed from the logits (no log(0))."""
        z = self._logits(X)
        if z.shape[1] == 1:  # log sigmoid(-z), log sigmoid(z)
            return -np.logaddexp(0, np.hstack([z, -z]))
        if self._model.output == "ovr":
            # predict_proba is sigmoid(z_k) / sum_j sigmoid(z_j): its log is
            # log sigmoid(z_k) - logsumexp_j(log sigmoid(z_j)).
            z = -np.logaddexp(0, -z)
        return z - np.logaddexp.reduce(z, axis=1, keepdims=True)

    def _logits(self, X):
        rows = self._rows(X)
        return _core.decision_function(self._model, *rows, self._threads())

    def decision_function(self, X):
        """Logits: (n_samples,) for two classes (the score of classes_[1]),
        (n_samples, n_classes) otherwise."""
        z = self._logits(X)
        return z.ravel() if z.shape[1] == 1 else z

    def predict(self, X):
        """The class of the largest logit, as scikit-learn's linear
        classifiers predict (and bagel predict): the most probable class,
        also where long rows' one-vs-rest probabilities tie in double."""
        z = self._logits(X)
        best = (z[:, 0] > 0).astype(np.intp) if z.shape[1] == 1 else np.argmax(z, axis=1)
        return self.classes_[best]

    # ------------------------------------------------------------ the model

    @property
    def coef_(self) -> np.ndarray:
        """(1, n_features) for two classes, (n_classes, n_features) otherwise:
        a read-only view of the weights (stored as E = W.T)."""
        self._check_fitted()
        return self._model.weight.T

    @property
    def intercept_(self) -> np.ndarray:
        self._check_fitted()
        return self._model.bias

    def save(self, path: str, force: bool = False) -> None:
        """Writes the model directory `bagel predict -m path` reads (README §5);
        same folder rules as `bagel train -o path [--force]`."""
        self._check_fitted()
        self._model.save(_path_argument(path), force)

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _more_tags(self):  # scikit-learn < 1.6
        return {"_xfail_checks": EXPECTED_FAILED_CHECKS}

def load(path: str) -> BagelClassifier:
    """A fitted BagelClassifier from a model directory written by `bagel train`
    or BagelClassifier.save; its parameters are those the model was trained with."""
    model = _core.load_model(_path_argument(path))
    config = json.loads(model.config_json)
    params = {k: v for k, v in config.get("optimizer", {}).items() if k in _DEFAULTS}
    layer = config.get("model", {}).get("layer")
    if layer is not None:
        params["layer"] = layer
    multiclass = config.get("model", {}).get("multiclass")
    if multiclass in ("softmax", "ovr"):  # as set: two classes train a sigmoid whatever it says
        params["multiclass"] = multiclass
    elif model.output in ("softmax", "ovr"):
        params["multiclass"] = model.output
    clf = BagelClassifier(**params)
    clf._adopt(model, _classes_from_names(list(model.classes), model.numeric_classes, model.class_type))
    clf._note_rates()
    clf.n_iter_ = int(clf.training_.get("epochs_run", 0))
    return clf
