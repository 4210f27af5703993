"""BagelClassifier's own behaviour: what it learns, the shapes and types it
returns, the inputs it accepts, and the errors it raises."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import accuracy_score, log_loss

import bagel
from bagel._data import csr_arrays


def as_float32_csr(x):
    x = sp.csr_matrix(x, dtype=np.float32)
    x.indices = x.indices.astype(np.int32)
    x.indptr = x.indptr.astype(np.int32)
    return x


def test_multiclass_string_labels_learn_the_task(multi):
    (xtr, ytr), (xte, yte) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier().fit(xtr, ytr)
    assert list(clf.classes_) == sorted(set(ytr))
    assert clf.classes_.dtype.kind == "U"
    pred = clf.predict(xte)
    assert pred.dtype.kind == "U" and set(pred) <= set(clf.classes_)
    # Six overlapping categories; a uniform guess scores ~0.17.
    assert accuracy_score(yte, pred) > 0.6
    proba = clf.predict_proba(xte)
    assert proba.shape == (xte.shape[0], 6)
    np.testing.assert_allclose(proba.sum(axis=1), 1, rtol=1e-12)
    assert clf.score(xte, yte) == accuracy_score(yte, pred)
    assert clf.coef_.shape == (6, xtr.shape[1]) and clf.intercept_.shape == (6,)
    assert clf.n_features_in_ == xtr.shape[1] and clf.n_iter_ >= 1


def test_binary_shapes_follow_scikit_learn(binary):
    (xtr, ytr), (xte, yte) = binary["train"], binary["test"]
    clf = bagel.BagelClassifier().fit(xtr, ytr)
    assert clf.coef_.shape == (1, xtr.shape[1]) and clf.intercept_.shape == (1,)
    z = clf.decision_function(xte)
    assert z.shape == (xte.shape[0],)
    proba = clf.predict_proba(xte)
    # The logit is the score of classes_[1], as in scikit-learn.
    np.testing.assert_allclose(proba[:, 1], 1 / (1 + np.exp(-z)), rtol=1e-6)
    np.testing.assert_allclose(z, xte @ clf.coef_[0] + clf.intercept_[0], rtol=1e-4, atol=1e-4)
    log_proba = clf.predict_log_proba(xte)
    assert log_proba.shape == proba.shape and np.all(np.isfinite(log_proba))
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-9, atol=1e-12)
    assert accuracy_score(yte, clf.predict(xte)) > 0.75


@pytest.mark.parametrize("multiclass", ["ovr", "softmax"])
def test_log_proba_is_the_log_of_proba_for_every_head(multi, multiclass):
    (xtr, ytr), (xte, _) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier(multiclass=multiclass).fit(xtr, ytr)
    proba = clf.predict_proba(xte)
    log_proba = clf.predict_log_proba(xte)
    assert np.all(np.isfinite(log_proba))
    np.testing.assert_allclose(np.exp(log_proba), proba, rtol=1e-9, atol=1e-12)


def test_ovr_proba_of_a_row_far_from_every_class_follows_its_logits(multi):
    """Every logit far below 0: the sigmoids underflow alike, and their
    shares must still rank the classes as the logits do, not read as equal."""
    (xtr, ytr) = multi["train"]
    clf = bagel.BagelClassifier().fit(xtr, ytr)
    w = clf.coef_
    # A row on the feature whose weights are most negative for every class,
    # scaled until every logit is below -1000.
    j = int(np.argmin(w.max(axis=0)))
    assert w[:, j].max() < 0
    row = sp.csr_matrix(([2000.0 / -w[:, j].max()], ([0], [j])), shape=(1, xtr.shape[1]))
    z = clf.decision_function(row)[0]
    assert z.max() < -1000
    proba = clf.predict_proba(row)[0]
    np.testing.assert_allclose(proba.sum(), 1, rtol=1e-12)
    assert np.argmax(proba) == np.argmax(z)
    e = np.exp(z - z.max())
    np.testing.assert_allclose(proba, e / e.sum(), rtol=1e-6, atol=1e-300)
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(row)[0]), proba, rtol=1e-6, atol=1e-300)


def test_integer_labels_stay_integers():
    rng = np.random.default_rng(0)
    x = rng.random((300, 10))
    y = np.where(x[:, 0] > 0.5, 7, -3)
    clf = bagel.BagelClassifier().fit(x, y)
    assert clf.classes_.tolist() == [-3, 7] and clf.classes_.dtype.kind == "i"
    assert clf.predict(x).dtype.kind == "i"
    assert clf.score(x, y) > 0.9


def test_dense_input_trains_the_same_model_as_its_csr():
    rng = np.random.default_rng(1)
    dense = (rng.random((400, 30)) < 0.2) * rng.integers(1, 4, (400, 30))
    y = (dense[:, :5].sum(1) > dense[:, 5:10].sum(1)).astype(int)
    a = bagel.BagelClassifier(threads=1).fit(dense, y)
    b = bagel.BagelClassifier(threads=1).fit(sp.csr_matrix(dense), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict_proba(dense), b.predict_proba(sp.csr_matrix(dense)))


def test_float32_int32_csr_is_read_in_place(multi, monkeypatch):
    """Zero copy: the arrays that reach the core are the caller's own, the
    core refuses other dtypes instead of converting them, and the matrix the
    core reads lies at the caller's addresses."""
    x = as_float32_csr(multi["train"][0])
    y = multi["train"][1]
    seen = []
    real_fit = bagel._core.fit

    def spy(config, train, *rest):
        seen.append(train)
        return real_fit(config, train, *rest)

    monkeypatch.setattr(bagel._core, "fit", spy)
    bagel.BagelClassifier(epochs=1).fit(x, y)
    indptr, indices, data, cols, _ = seen[0]
    assert indptr is x.indptr
    assert np.shares_memory(indices, x.indices) and np.shares_memory(data, x.data)
    assert bagel._core.csr_addresses(indptr, indices, data, cols) == (
        x.indptr.ctypes.data, x.indices.ctypes.data, x.data.ctypes.data)
    # Integer counts (CountVectorizer's int64): only the values are converted,
    # the row pointers and indices are read in place.
    counts = x.astype(np.int64)
    seen.clear()
    bagel.BagelClassifier(epochs=1).fit(counts, y)
    assert seen[0][0] is counts.indptr and np.shares_memory(seen[0][1], counts.indices)
    assert seen[0][2].dtype == np.float32
    np.testing.assert_array_equal(seen[0][2], counts.data)
    # The core converts nothing: float64 data is a TypeError, not a copy.
    with pytest.raises(TypeError):
        bagel._core.csr_addresses(indptr, indices, data.astype(np.float64), cols)
    with pytest.raises(TypeError):
        real_fit("{}", (indptr, indices.astype(np.int64), data, cols, seen[0][4]), None,
                 ["a", "b"], False, None, None, False)


def _strided(a: np.ndarray) -> np.ndarray:
    """The same values as a view of every other element of a larger buffer."""
    buffer = np.zeros(2 * a.size, a.dtype)
    buffer[::2] = a
    return buffer[::2]


def test_strided_float32_int32_csr_arrays_are_made_contiguous_once(multi):
    """scipy takes strided views as CSR arrays; the core reads contiguous ones
    only, so each strided array is copied once, and every method gives what
    the contiguous matrix gives."""
    x, y = multi["train"]
    x = as_float32_csr(x)
    strided = sp.csr_matrix((_strided(x.data), _strided(x.indices), _strided(x.indptr)),
                            shape=x.shape)
    assert not any(a.flags.c_contiguous for a in (strided.data, strided.indices, strided.indptr))
    a = bagel.BagelClassifier(epochs=2, threads=1).fit(x, y, eval_set=(x, y))
    b = bagel.BagelClassifier(epochs=2, threads=1).fit(strided, y, eval_set=(strided, y))
    np.testing.assert_array_equal(a.coef_, b.coef_)
    for method in ("predict", "predict_proba", "decision_function"):
        np.testing.assert_array_equal(getattr(a, method)(x), getattr(a, method)(strided))
    assert a.score(strided, y) == a.score(x, y)
    indptr, indices, data, _ = csr_arrays(strided)
    assert all(v.flags.c_contiguous for v in (indptr, indices, data))


def test_other_dtypes_convert_once_and_train_the_same_model(multi):
    x, y = multi["train"]
    assert x.data.dtype == np.int64  # CountVectorizer's counts, as saved
    a = bagel.BagelClassifier(epochs=2).fit(x, y)
    b = bagel.BagelClassifier(epochs=2).fit(as_float32_csr(x), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_a_csr_of_token_ids_trains_the_model_of_its_counts(multi):
    """A row is a bag: its repeated indices add up. A CSR of token ids in
    text order (each occurrence an entry of 1, as an EmbeddingBag takes
    them) trains the model of the counts bit for bit, and predicts alike."""
    counts, y = multi["train"]
    counts = as_float32_csr(counts)
    rng = np.random.default_rng(3)
    rows = []
    for r in range(counts.shape[0]):
        row = counts[r]
        ids = np.repeat(row.indices, row.data.astype(np.int64))
        rows.append(rng.permutation(ids))
    indptr = np.concatenate([[0], np.cumsum([len(t) for t in rows])]).astype(np.int32)
    tokens = sp.csr_matrix((np.ones(indptr[-1], np.float32),
                            np.concatenate(rows).astype(np.int32), indptr), shape=counts.shape)
    assert not tokens.has_canonical_format and tokens.nnz > counts.nnz
    assert abs(tokens - counts).max() == 0
    a = bagel.BagelClassifier().fit(counts, y)
    b = bagel.BagelClassifier().fit(tokens, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.intercept_, b.intercept_)
    x_test = multi["test"][0]
    np.testing.assert_array_equal(b.predict_proba(x_test), a.predict_proba(x_test))


def test_class_weight_moves_predictions_towards_the_heavy_class(binary):
    (xtr, ytr), (xte, _) = binary["train"], binary["test"]
    # One rate and number of passes for both: the calibrated rate differs
    # with the weights, and how far a weight moves the predictions depends
    # on the rate and on how near the optimum the run ends.
    plain = bagel.BagelClassifier(learning_rate=0.03, epochs=40).fit(xtr, ytr)
    heavy = plain.classes_[1]  # the class predicted less often
    weighted = bagel.BagelClassifier(learning_rate=0.03, epochs=40,
                                     class_weight={heavy: 10}).fit(xtr, ytr)
    assert np.mean(weighted.predict(xte) == heavy) > np.mean(plain.predict(xte) == heavy) + 0.05
    assert weighted.training_["class_weights"][heavy] == 10
    balanced = bagel.BagelClassifier(class_weight="balanced").fit(xtr, ytr)
    assert set(balanced.training_["class_weights"]) == set(plain.classes_)


def test_class_weight_keys_1_and_0_name_true_and_false_for_bool_labels(binary):
    # scikit-learn finds them so (True == 1); bagel had refused '"1" is not
    # a training class (classes: "False", "True")'.
    (xtr, ytr) = binary["train"]
    y = ytr == ytr[0]
    by_bool = bagel.BagelClassifier(epochs=2, class_weight={True: 3.0, False: 0.5}).fit(xtr, y)
    for keys in ({1: 3.0, 0: 0.5}, {np.int64(1): 3.0, np.uint8(0): 0.5}):
        by_int = bagel.BagelClassifier(epochs=2, class_weight=keys).fit(xtr, y)
        assert by_int.training_["class_weights"] == {"False": 0.5, "True": 3.0}
        np.testing.assert_array_equal(by_int.coef_, by_bool.coef_)
    with pytest.raises(bagel.InvalidParameterError, match=r'"2" is not a training class'):
        bagel.BagelClassifier(epochs=2, class_weight={2: 1.0}).fit(xtr, y)


def test_integer_sample_weights_train_as_repeated_rows():
    # Full batch at a constant rate: a row of weight 2 counts as that row
    # twice. The batch gradient is a mean over rows, so the repeated set's
    # (len(rep) rows) takes the rate scaled by len(rep) / 60 to step alike.
    rng = np.random.default_rng(3)
    x = sp.random(60, 20, density=0.3, format="csr", random_state=4, dtype=np.float32)
    y = rng.integers(0, 3, 60)
    w = rng.integers(1, 3, 60)
    rep = np.repeat(np.arange(60), w)
    params = dict(batch_size=1000, epochs=5, schedule="constant", threads=1)
    a = bagel.BagelClassifier(learning_rate=0.5, **params).fit(x, y, sample_weight=w)
    b = bagel.BagelClassifier(learning_rate=0.5 * len(rep) / 60, **params).fit(x[rep], y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-4, atol=1e-6)


def test_eval_set_stops_early_and_keeps_the_best_epoch(multi):
    (xtr, ytr), (xva, yva) = multi["train"], multi["valid"]
    clf = bagel.BagelClassifier(epochs=30, learning_rate=0.5, schedule="constant", patience=2)
    clf.fit(xtr, ytr, eval_set=(xva, yva))
    t = clf.training_
    assert t["stopped_early"] and clf.n_iter_ == t["epochs_run"] < 30
    assert "valid_metrics" in t and "valid" in t["history"][0]
    assert abs(t["valid_metrics"]["log_loss"] - log_loss(yva, clf.predict_proba(xva))) < 1e-6
    # Measured on what it was asked to (eval_set), not on its training rows.
    assert "train_metrics" not in t


def test_verbose_fit_names_the_epoch_it_kept(multi, capfd):
    (xtr, ytr), (xva, yva) = multi["train"], multi["valid"]
    clf = bagel.BagelClassifier(epochs=30, learning_rate=0.5, schedule="constant", patience=2,
                                verbose=1)
    clf.fit(xtr, ytr, eval_set=(xva, yva))
    t = clf.training_
    err = capfd.readouterr().err
    assert t["stopped_early"] and t["best_epoch"] < t["epochs_run"]
    assert f"trained {t['epochs_run']} epochs in " in err
    assert f"stopped early; kept epoch {t['best_epoch']}" in err
    # Quiet by default.
    bagel.BagelClassifier(epochs=3).fit(xtr, ytr, eval_set=(xva, yva))
    assert "trained" not in capfd.readouterr().err


def test_uint64_labels_find_their_int64_classes_exactly(binary):
    # numpy compares int64 with uint64 as float64, where 2**53 + 1 == 2**53:
    # both labels had been taken for the first class.
    (xtr, ytr), (xva, yva) = binary["train"], binary["valid"]
    big = np.int64(2**53)
    y = np.where(ytr == ytr[0], big, big + 1).astype(np.int64)
    yv = np.where(yva == ytr[0], big, big + 1)
    clf = bagel.BagelClassifier(epochs=3).fit(xtr, y, eval_set=(xva, yv.astype(np.uint64)))
    same = bagel.BagelClassifier(epochs=3).fit(xtr, y, eval_set=(xva, yv.astype(np.int64)))
    assert clf.training_["valid_metrics"] == same.training_["valid_metrics"]
    np.testing.assert_array_equal(clf._encode(yv.astype(np.uint64), clf.classes_, "y"),
                                  (yv == big + 1).astype(np.int32))
    with pytest.raises(ValueError, match=r"^y: row 0: label '-1' is not one of the 2 classes"):
        bagel.BagelClassifier._encode(np.array([-1, 2]), np.array([1, 2], dtype=np.uint64), "y")
    with pytest.raises(ValueError, match=r"^y: row 0: label '18446744073709551615' is not one"):
        bagel.BagelClassifier._encode(np.array([2**64 - 1], dtype=np.uint64), np.array([-1, 2]), "y")
    # partial_fit with uint64 chunks of the second class moves towards it.
    pf = bagel.BagelClassifier(learning_rate=0.5, schedule="constant")
    for _ in range(3):
        pf.partial_fit(xtr, np.full(xtr.shape[0], big + 1, dtype=np.uint64), classes=[big, big + 1])
    assert set(pf.predict(xva)) == {big + 1}


def test_partial_fit_takes_a_rate_set_between_calls(multi):
    (xtr, ytr) = multi["train"]
    h = xtr.shape[0] // 2
    params = dict(learning_rate=0.01, schedule="constant", threads=1)
    kept = bagel.BagelClassifier(**params).partial_fit(xtr[:h], ytr[:h], classes=np.unique(ytr))
    changed = bagel.BagelClassifier(**params).partial_fit(xtr[:h], ytr[:h], classes=np.unique(ytr))
    kept.partial_fit(xtr[h:], ytr[h:])
    changed.set_params(learning_rate=0.5, bias_rate=3.0).partial_fit(xtr[h:], ytr[h:])
    assert changed.training_["learning_rate"] == 0.5 and changed.training_["bias_rate"] == 3.0
    assert not np.array_equal(kept.coef_, changed.coef_)
    assert not np.array_equal(kept.intercept_, changed.intercept_)
    # "auto" keeps the rate the first call chose, and takes it back after a number.
    auto = bagel.BagelClassifier().partial_fit(xtr[:h], ytr[:h], classes=np.unique(ytr))
    first = auto.training_["learning_rate"]
    assert auto.partial_fit(xtr[h:], ytr[h:]).training_["learning_rate"] == first
    auto.set_params(learning_rate=3.0).partial_fit(xtr[h:], ytr[h:])
    assert auto.training_["learning_rate"] == 3.0
    assert auto.set_params(learning_rate="auto").partial_fit(xtr[h:], ytr[h:]).training_[
        "learning_rate"] == first


def test_partial_fit_goes_on_at_the_rate_a_divergence_lowered(multi):
    (xtr, ytr) = multi["train"]
    with pytest.warns(ConvergenceWarning, match="restarting at learning_rate"):
        clf = bagel.BagelClassifier(learning_rate=50.0, schedule="constant", epochs=2).fit(xtr, ytr)
    lowered = clf.training_["learning_rate"]
    assert lowered < 50.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # not restarted again from 50
        clf.partial_fit(xtr, ytr)
    assert clf.training_["learning_rate"] == lowered


def test_partial_fit_says_what_it_cannot_change(multi):
    (xtr, ytr) = multi["train"]
    classes = np.unique(ytr)
    with pytest.raises(bagel.InvalidParameterError,
                       match=r"^average_from: is 5, but partial_fit trains one epoch a call"):
        bagel.BagelClassifier(average=True, average_from=5).partial_fit(xtr, ytr, classes=classes)
    with pytest.raises(bagel.InvalidParameterError, match=r"^average_from: is 2.0, but partial_fit"):
        bagel.BagelClassifier(average=True, average_from=2.0).partial_fit(xtr, ytr, classes=classes)
    for multiclass in ("ovr", None):  # None: the model's config names no head
        clf = bagel.BagelClassifier(epochs=2, multiclass=multiclass).fit(xtr, ytr)
        with pytest.raises(bagel.InvalidParameterError,
                           match=r"^multiclass: is 'softmax', but the model partial_fit goes on from "
                                 r"has a 'ovr' head: set it back, or call fit"):
            clf.set_params(multiclass="softmax").partial_fit(xtr, ytr)
    # The layer is how the sums are computed, as `bagel train` with init takes another.
    clf.set_params(multiclass="ovr", layer="dense").partial_fit(xtr, ytr)
    # Messages name parameters, not the config's keys.
    with pytest.raises(bagel.InvalidParameterError, match=r"^average_from: is 500, past the last "
                                                          r"epoch .*: set epochs$"):
        bagel.BagelClassifier(average=True, average_from=500).fit(xtr, ytr)


def test_messages_name_parameters_but_quote_values_as_given(multi):
    (xtr, ytr) = multi["train"]
    with pytest.raises(bagel.InvalidParameterError, match=r'found "optimizer.linear"'):
        bagel.BagelClassifier(schedule="optimizer.linear").fit(xtr, ytr)
    with pytest.raises(bagel.InvalidParameterError, match=r'found "model.layer"'):
        bagel.BagelClassifier(deterministic_method="model.layer").fit(xtr, ytr)


def test_partial_fit_takes_a_chunk_that_weighs_nothing_as_sgdclassifier_does(multi):
    (xtr, ytr) = multi["train"]
    classes = np.unique(ytr)
    clf = bagel.BagelClassifier(class_weight={classes[0]: 0})
    clf.partial_fit(xtr, ytr, classes=classes)
    coef, intercept = clf.coef_.copy(), clf.intercept_.copy()
    only = ytr == classes[0]
    clf.partial_fit(xtr[only], ytr[only])
    clf.partial_fit(xtr[:5], ytr[:5], sample_weight=np.zeros(5))
    np.testing.assert_array_equal(clf.coef_, coef)
    np.testing.assert_array_equal(clf.intercept_, intercept)
    with pytest.raises(ValueError, match=r"sample_weight contains NaN"):  # still checked
        clf.partial_fit(xtr[:2], ytr[:2], sample_weight=[np.nan, 0])
    # The first call has no model to keep: nothing to learn from is an error there.
    with pytest.raises(ValueError, match=r"every training row has weight 0"):
        bagel.BagelClassifier().partial_fit(xtr[:5], ytr[:5], classes=classes,
                                            sample_weight=np.zeros(5))


def test_weights_below_float32s_smallest_normal_count_as_0():
    # Training flushes them to 0; the rate calibration had kept their rows,
    # found none, and failed with "cannot create std::vector larger than max_size()".
    x = sp.random(200, 50, density=0.2, format="csr", dtype=np.float32, random_state=0)
    y = np.where(x[:, :25].sum(1).A1 > x[:, 25:].sum(1).A1, "a", "b")
    for tiny in (1e-39, 1e-45):
        with pytest.raises(ValueError, match=r"^sample_weight: every training row has weight 0 "
                                             r".*below float32's smallest normal"):
            bagel.BagelClassifier().fit(x, y, sample_weight=np.full(200, tiny))
    with pytest.raises(bagel.InvalidParameterError,
                       match=r"^class_weight: every training row has weight 0"):
        bagel.BagelClassifier(class_weight={"a": 1e-39, "b": 1e-39}).fit(x, y)
    # Some rows that tiny: the model of those rows weighted 0.
    tiny, zero = np.ones(200), np.ones(200)
    tiny[::3], zero[::3] = 1e-39, 0
    a = bagel.BagelClassifier(seed=0).fit(x, y, sample_weight=tiny)
    b = bagel.BagelClassifier(seed=0).fit(x, y, sample_weight=zero)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    # A later partial_fit chunk of such weights moves nothing, as one of zeros.
    clf = bagel.BagelClassifier().partial_fit(x, y, classes=["a", "b"])
    coef = clf.coef_.copy()
    clf.partial_fit(x[:5], y[:5], sample_weight=np.full(5, 1e-39))
    np.testing.assert_array_equal(clf.coef_, coef)


def test_load_keeps_softmax_set_for_two_classes(binary, tmp_path):
    (xtr, ytr) = binary["train"]
    bagel.BagelClassifier(epochs=2, multiclass="softmax").fit(xtr, ytr).save(tmp_path / "m")
    assert bagel.load(tmp_path / "m").get_params()["multiclass"] == "softmax"


def test_predict_checks_threads_as_fit_does(binary):
    (xtr, ytr) = binary["train"]
    clf = bagel.BagelClassifier(epochs=1).fit(xtr, ytr)
    for threads in (float("inf"), float("nan"), 2**31, 10**30, -5, 2000, 1.5):
        with pytest.raises(bagel.InvalidParameterError,
                           match=r"^threads: expected an integer in \[0, 1024\]"):
            clf.set_params(threads=threads).predict(xtr[:3])
    assert clf.set_params(threads=1024).predict(xtr[:3]).shape == (3,)


def test_an_integer_past_64_bits_is_shown_as_given(binary):
    # JSON had carried 2**64 to the core as a double: "found 1.8446744073709552e+19".
    (xtr, ytr) = binary["train"]
    for key, value in (("seed", 2**64), ("epochs", -2**70)):
        with pytest.raises(bagel.InvalidParameterError,
                           match=rf"^{key}: expected .* within 64 bits \(below 2\*\*63\), found {value}$"):
            bagel.BagelClassifier(**{key: value}).fit(xtr, ytr)


def test_eval_set_errors_name_eval_set(multi):
    (xtr, ytr), (xva, yva) = multi["train"], multi["valid"]
    with pytest.raises(ValueError, match=r"^eval_set: X has 3 features, but BagelClassifier is "
                                         r"expecting"):
        bagel.BagelClassifier().fit(xtr, ytr, eval_set=(xva[:, :3], yva))
    bad = xva.astype(np.float64)
    bad.data[0] = np.nan
    with pytest.raises(ValueError, match=r"^eval_set: Input X contains NaN"):
        bagel.BagelClassifier().fit(xtr, ytr, eval_set=(bad, yva))


def test_predict_refuses_no_rows_sparse_or_dense(binary):
    (xtr, ytr) = binary["train"]
    clf = bagel.BagelClassifier(epochs=1).fit(xtr, ytr)
    for empty in (xtr[:0], as_float32_csr(xtr[:0]), xtr[:0].toarray()):
        with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
            clf.predict_proba(empty)


def test_partial_fit_learns_from_chunks(multi):
    (xtr, ytr), (xte, yte) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier()
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(xtr[:10], ytr[:10])
    classes = np.unique(ytr)
    chunks = np.array_split(np.arange(xtr.shape[0]), 4)
    for epoch in range(3):
        for rows in chunks:
            clf.partial_fit(xtr[rows], ytr[rows], classes=classes)
    assert list(clf.classes_) == list(classes) and clf.n_iter_ == 1
    assert accuracy_score(yte, clf.predict(xte)) > 0.55
    with pytest.raises(ValueError, match="is not one of the 6 classes"):
        clf.partial_fit(xtr[:3], np.array(["nope"] * 3))
    # "balanced" would weigh each chunk by its own counts (scikit-learn's
    # SGDClassifier refuses it too); a dict of weights is one objective.
    with pytest.raises(ValueError, match="'balanced' is not supported for partial_fit"):
        bagel.BagelClassifier(class_weight="balanced").partial_fit(xtr[:50], ytr[:50], classes=classes)
    weighted = bagel.BagelClassifier(class_weight={classes[0]: 2.0})
    weighted.partial_fit(xtr[:50], ytr[:50], classes=classes)
    assert weighted.training_["class_weights"][str(classes[0])] == 2.0


def test_partial_fit_classes_are_labels():
    # NaN, inf and a fraction among integers are refused, as SGDClassifier
    # refuses them (they had become classes, saved and loaded).
    x = sp.random(60, 20, density=0.3, format="csr", random_state=0)
    y = np.arange(60) % 3 * 1.0
    for classes, message in [([0.0, 1.0, 2.0, np.nan], "NaN or infinity"),
                             ([0.0, 1.0, 2.0, np.inf], "NaN or infinity"),
                             ([0, 1, 2, 2.5], "Unknown label type")]:
        with pytest.raises(ValueError, match="classes: .*" + message):
            bagel.BagelClassifier(threads=1).partial_fit(x, y, classes=classes)
    fitted = bagel.BagelClassifier(threads=1).partial_fit(x, y, classes=[0.0, 1.0, 2.0])
    assert list(fitted.classes_) == [0.0, 1.0, 2.0]


def test_pickle_and_save_load_round_trip(multi, tmp_path):
    (xtr, ytr), (xte, _) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier(epochs=2, l2=1e-6).fit(xtr, ytr)
    expected = clf.predict_proba(xte)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(xte), expected)
    assert back.get_params() == clf.get_params()
    clf.save(tmp_path / "m")
    loaded = bagel.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.predict_proba(xte), expected)
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert loaded.get_params() == clf.get_params()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_every_pickle_protocol_round_trips(protocol):
    # Protocols 0 and 1 had rebuilt the C++ model through object.__new__,
    # which aborted the process; the model now pickles as a factory call.
    x = np.array([[0.0, 1], [1, 0], [0, 1], [1, 0]])
    clf = bagel.BagelClassifier(threads=1).fit(x, [0, 1, 0, 1])
    back = pickle.loads(pickle.dumps(clf, protocol=protocol))
    np.testing.assert_array_equal(back.predict_proba(x), clf.predict_proba(x))
    np.testing.assert_array_equal(back.predict(x), clf.predict(x))
    model = pickle.loads(pickle.dumps(clf._model, protocol=protocol))
    np.testing.assert_array_equal(model.weight, clf._model.weight)


def test_one_vs_rest_head_predicts_normalised_sigmoids_and_round_trips(multi, tmp_path):
    (xtr, ytr), (xte, yte) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier(multiclass="ovr").fit(xtr, ytr)
    assert clf.get_params()["multiclass"] == "ovr"
    assert bagel.BagelClassifier().get_params()["multiclass"] == "ovr"  # the default, as the CLI's
    assert accuracy_score(yte, clf.predict(xte)) > 0.6
    sigmoids = 1 / (1 + np.exp(-clf.decision_function(xte)))
    np.testing.assert_allclose(clf.predict_proba(xte), sigmoids / sigmoids.sum(axis=1, keepdims=True),
                               rtol=1e-5)
    # Another model than softmax's on the same rows.
    softmax = bagel.BagelClassifier(multiclass="softmax").fit(xtr, ytr)
    assert not np.allclose(softmax.coef_, clf.coef_)
    p = np.exp(softmax.decision_function(xte))
    np.testing.assert_allclose(softmax.predict_proba(xte), p / p.sum(axis=1, keepdims=True), rtol=1e-5)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict_proba(xte), clf.predict_proba(xte))
    clf.save(tmp_path / "m")
    loaded = bagel.load(tmp_path / "m")
    assert loaded.get_params()["multiclass"] == "ovr"
    np.testing.assert_array_equal(loaded.predict_proba(xte), clf.predict_proba(xte))
    with pytest.raises(ValueError, match="multiclass: expected \"softmax\" or \"ovr\""):
        bagel.BagelClassifier(multiclass="multinomial").fit(xtr, ytr)


def test_coef_is_a_read_only_view():
    x = np.eye(4)
    clf = bagel.BagelClassifier().fit(x, [0, 1, 2, 2])
    with pytest.raises(ValueError):
        clf.coef_[0, 0] = 1


# ---------------------------------------------------------------- errors


def test_a_label_of_a_lone_surrogate_is_a_clear_value_error():
    # It had reached the C++ core as a TypeError dumping the whole config.
    with pytest.raises(ValueError, match="not valid Unicode"):
        bagel.BagelClassifier().fit(np.eye(4), ["a", "\udcff", "a", "\udcff"])


def test_too_many_classes_blame_y():
    # An id per row, not a label: the error names y (it had named X).
    x = sp.random(10002, 5, density=0.5, format="csr", random_state=0)
    with pytest.raises(ValueError, match="^y: has 10001 distinct classes"):
        bagel.BagelClassifier().fit(x, np.arange(10002) % 10001)


def test_row_weights_beyond_floats_range_are_an_error_not_a_model_of_infinities(binary):
    # Each loss stays finite at sample_weight 1e36, but the steps overflow
    # the float32 weights: fit had returned coef_ with inf in it.
    xtr, ytr = binary["train"]
    with pytest.raises(ValueError, match="beyond float32's range .* is 1e\\+36"):
        bagel.BagelClassifier(epochs=1, learning_rate=0.1).fit(
            xtr, ytr, sample_weight=np.full(xtr.shape[0], 1e36))
    clf = bagel.BagelClassifier(epochs=1, learning_rate=0.1).fit(
        xtr, ytr, sample_weight=np.full(xtr.shape[0], 1e30))
    assert np.isfinite(clf.coef_).all()

@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # 1e300 below
def test_nan_in_fit_or_predict_is_a_value_error(multi):
    x, y = multi["train"]
    bad = as_float32_csr(x[:50])
    bad.data[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bagel.BagelClassifier().fit(bad, y[:50])
    clf = bagel.BagelClassifier(epochs=1).fit(x, y)
    with pytest.raises(ValueError, match="finite|NaN"):
        clf.predict(bad)  # the fast path: the core validates the values
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(bad.toarray())
    # A finite float64 beyond float32's range, in fit and in predict's fast path.
    huge = sp.csr_matrix(x[:50], dtype=np.float64)
    huge.data[3] = 1e300
    r, c = int(np.searchsorted(huge.indptr, 3, side="right")) - 1, int(huge.indices[3])
    message = rf"^X: the value 1e\+300 in row {r}, column {c} is beyond float32's range"
    with pytest.raises(ValueError, match=message):
        bagel.BagelClassifier().fit(huge, y[:50])
    huge.indices = huge.indices.astype(np.int32)
    huge.indptr = huge.indptr.astype(np.int32)
    with pytest.raises(ValueError, match=message):
        clf.predict(huge)


def test_wrong_feature_count_at_predict_is_a_value_error(multi):
    x, y = multi["train"]
    clf = bagel.BagelClassifier(epochs=1).fit(x, y)
    narrow = as_float32_csr(x[:, :100])
    with pytest.raises(ValueError, match=f"X has 100 features, but BagelClassifier is expecting {x.shape[1]}"):
        clf.predict(narrow)
    with pytest.raises(ValueError, match="X has 100 features"):
        clf.predict_proba(narrow.astype(np.float64))


def test_unknown_class_in_eval_set_is_a_value_error_naming_the_row(multi):
    (xtr, ytr), (xva, yva) = multi["train"], multi["valid"]
    yva = yva.copy()
    yva[4] = "gardening"
    # Rows count from 0, as X's do in the estimator's messages.
    with pytest.raises(ValueError, match=r"eval_set: row 4: label 'gardening' is not one of the 6 classes"):
        bagel.BagelClassifier().fit(xtr, ytr, eval_set=(xva, yva))
    with pytest.raises(ValueError, match=r"eval_set: the labels are numbers but the classes .* are strings"):
        bagel.BagelClassifier().fit(xtr, ytr, eval_set=(xva, np.full(xva.shape[0], 3)))


def test_bad_parameters_name_the_parameter_with_the_clis_message(multi):
    x, y = multi["train"]
    with pytest.raises(ValueError, match=r"^l2: expected a number >= 0$"):
        bagel.BagelClassifier(l2=-1).fit(x, y)
    with pytest.raises(TypeError, match="epochs: expected an integer >= 1 or \"auto\""):
        bagel.BagelClassifier(epochs="many").fit(x, y)
    with pytest.raises(ValueError, match="schedule: expected one of"):
        bagel.BagelClassifier(schedule="cosine").fit(x, y)
    with pytest.raises(ValueError, match="^class_weight: \"sport\" is not a training class"):
        bagel.BagelClassifier(class_weight={"sport": 2}).fit(x, y)
    with pytest.raises(ValueError, match="patience: early stopping needs an eval_set"):
        bagel.BagelClassifier(patience=2).fit(x, y)
    with pytest.raises(ValueError, match="y: needs at least 2 classes, found 1 class"):
        bagel.BagelClassifier().fit(x, np.full(x.shape[0], "a"))
    with pytest.raises(TypeError, match=r"^seed: expected an integer >= 0, found RandomState"):
        bagel.BagelClassifier(seed=np.random.RandomState(0)).fit(x, y)
    for verbose in (-1, "x", 0.5):
        with pytest.raises(ValueError, match=r"^verbose: expected an integer >= 0 or a bool"):
            bagel.BagelClassifier(verbose=verbose).fit(x, y)
    with pytest.raises(ValueError, match=r"^l2: expected a number, found object"):
        bagel.BagelClassifier(l2=object()).fit(x, y)
    with pytest.raises(ValueError, match=r"^sample_weight: row 0: expected a finite weight >= 0, found -1.0"):
        bagel.BagelClassifier().fit(x, y, sample_weight=-np.ones(x.shape[0]))
    weights = np.ones(x.shape[0])
    weights[2] = -2.0
    with pytest.raises(ValueError, match=r"^sample_weight: row 2: expected a finite weight"):
        bagel.BagelClassifier().fit(x, y, sample_weight=weights)
    with pytest.raises(ValueError, match=r"^sample_weight: every training row has weight 0"):
        bagel.BagelClassifier().fit(x, y, sample_weight=np.zeros(x.shape[0]))
    classes = np.unique(y)
    with pytest.raises(bagel.InvalidParameterError,
                       match=r"^class_weight: every training row has weight 0"):
        bagel.BagelClassifier(class_weight={c: 0 for c in classes}).fit(x, y)


def test_none_is_every_parameters_default_and_predict_checks_threads(multi):
    (x, y), (xte, _) = multi["train"], multi["test"]
    default = bagel.BagelClassifier().fit(x, y)
    for name in ("epochs", "multiclass", "average", "layer", "threads", "schedule", "l2"):
        clf = bagel.BagelClassifier(**{name: None}).fit(x, y)
        np.testing.assert_array_equal(clf.coef_, default.coef_, err_msg=name)
        np.testing.assert_array_equal(clf.predict_proba(xte), default.predict_proba(xte))
    whole = bagel.BagelClassifier(threads=2.0).fit(x, y)
    np.testing.assert_array_equal(whole.predict(xte), default.predict(xte))
    whole.set_params(threads="x")
    with pytest.raises(ValueError, match=r"^threads: expected an integer in \[0, 1024\], found 'x'"):
        whole.predict(xte)
    with pytest.raises(ValueError, match=r"^class_weight\.\w+: expected a finite number >= 0, found nan"):
        bagel.BagelClassifier(class_weight={y[0]: float("nan")}).fit(x, y)
    with pytest.raises(ValueError, match=r"^patience: expected an integer in \[0, "):
        bagel.BagelClassifier(patience=-1).fit(x, y)


def test_rows_scaled_far_below_unit_norm_learn_as_the_counts_do(multi):
    # Counts times 1e-3 (mean |x|^2 ~ 3e-5): the bias steps at 1/64 of that
    # fraction of the rate; at the full rate every rate tried diverged.
    (xtr, ytr), (xte, yte) = multi["train"], multi["test"]
    counts = bagel.BagelClassifier().fit(xtr, ytr)
    small = bagel.BagelClassifier().fit(xtr * 1e-3, ytr)
    assert counts.training_["bias_rate"] == 1
    m = small.training_["rate_calibration"]["mean_squared_norm"]
    assert m < 1e-3 and small.training_["bias_rate"] == m / 64
    assert small.score(xte * 1e-3, yte) > counts.score(xte, yte) - 0.02
    # partial_fit keeps the first chunk's rates, the bias's with them.
    chunks = bagel.BagelClassifier()
    for part in np.array_split(np.arange(xtr.shape[0]), 4):
        chunks.partial_fit(xtr[part] * 1e-3, ytr[part], classes=np.unique(ytr))
        assert chunks.training_["bias_rate"] < 1e-4
    assert chunks.score(xte * 1e-3, yte) > 0.6
    # Past float32's range no rate can work: the error names the parameter
    # (not the CLI's optimizer.learning_rate) and the scale.
    with pytest.raises(ValueError, match=r"^learning_rate: \"auto\": every rate tried .* "
                                         r"mean squared norm is .*; give it as a number$"):
        bagel.BagelClassifier().fit(xtr * 1e-24, ytr)


def test_a_failed_fit_leaves_the_estimator_unfitted(multi):
    x, y = multi["train"]
    clf = bagel.BagelClassifier(epochs=1).fit(x, y)
    clf.set_params(l2=-1)
    with pytest.raises(ValueError):
        clf.fit(x, y)
    assert not hasattr(clf, "classes_") and not hasattr(clf, "n_features_in_")


def test_defaults_are_the_librarys():
    defaults = bagel.BagelClassifier().get_params()
    import json
    lib = json.loads(bagel._core.default_parameters())
    for key, value in lib.items():
        assert defaults[key] == value, key


@pytest.mark.parametrize("y", [
    np.array(["b", "a", "é", "B", "ab", "a", "\u20ac", "b"]),
    np.array([b"x", b"y\xff", b"x", b"", b"y"]),
    np.array(["only"]),
])
def test_string_labels_are_encoded_as_numpy_unique_encodes_them(y):
    # fit finds the distinct strings by hashing their bytes and sorts only
    # those: classes_ and the row ids must be np.unique's.
    from bagel._estimator import _classes_and_ids
    classes, ids = _classes_and_ids(y)
    expected_classes, expected_ids = np.unique(y, return_inverse=True)
    np.testing.assert_array_equal(classes, expected_classes)
    np.testing.assert_array_equal(ids, expected_ids)
    assert classes.dtype == y.dtype


def _two_class_rows():
    x = sp.random(60, 20, density=0.3, format="csr", dtype=np.float32, random_state=1)
    y = np.where(x[:, :10].sum(1).A1 > x[:, 10:].sum(1).A1, "a", "b")
    return x, y


def test_x_with_2_to_the_31_columns_is_a_valueerror_naming_the_limit():
    # pybind11 had said "Unable to cast Python instance to C++ type".
    x = sp.csr_matrix((np.ones(2, np.float32), (np.array([0, 1]), np.array([0, 5]))),
                      shape=(2, 2**31))
    with pytest.raises(ValueError, match=r"^X: 2147483648 columns exceed 2\^31 - 1"):
        bagel.BagelClassifier().fit(x, ["a", "b"])


def test_save_and_load_take_paths_as_pythons_file_functions_do(tmp_path):
    x, y = _two_class_rows()
    clf = bagel.BagelClassifier(epochs=1).fit(x, y)
    target = tmp_path / "m"
    clf.save(bytes(target))  # str() of bytes had named a folder "b'...'"
    assert (target / "model.json").is_file()
    np.testing.assert_array_equal(bagel.load(bytes(target)).coef_, clf.coef_)
    np.testing.assert_array_equal(bagel.load(target).coef_, clf.coef_)
    for bad in ("", b""):
        with pytest.raises(ValueError, match=r"^path is empty$"):
            clf.save(bad)
        with pytest.raises(ValueError, match=r"^path is empty$"):
            bagel.load(bad)
    with pytest.raises(TypeError):
        clf.save(5)
    # Under a file: named as the CLI names it, not by the claim file.
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(Exception, match=r"afile is a file, not a folder") as caught:
        clf.save(str(afile / "m"))
    assert "bagel-lock" not in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "m"]
    # A file given to load is said to be one (it had been "no such folder").
    with pytest.raises(ValueError, match=r"afile: is a file, expected a model folder$"):
        bagel.load(afile)
    # A NUL ends no path silently: load had read "m", save had failed reading
    # a folder. Both refuse it, as open() does.
    for bad in (str(target) + "\0junk", bytes(target) + b"\0"):
        with pytest.raises(ValueError, match=r"^path: embedded null byte$"):
            bagel.load(bad)
        with pytest.raises(ValueError, match=r"^path: embedded null byte$"):
            clf.save(bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "m"]


def test_partial_fit_checks_classes_as_scikit_learn_does():
    x, y = _two_class_rows()
    with pytest.raises(ValueError, match=r"^classes: Expected array-like"):
        bagel.BagelClassifier().partial_fit(x, y, classes={"a", "b"})
    with pytest.raises(ValueError, match=r"^classes: expected a 1-d array-like"):
        bagel.BagelClassifier().partial_fit(x, y, classes=[["a", "b"], ["c", "d"]])
    clf = bagel.BagelClassifier(epochs=1).fit(x, y)
    with pytest.raises(ValueError, match=r"^classes: 'a', 'c' differ from the classes the "
                                         r"estimator was fitted with, 'a', 'b'$"):
        clf.partial_fit(x, y, classes=["a", "c"])
    clf.partial_fit(x, y, classes=np.array(["b", "a"]))  # the same classes: taken
    # dict keys are no sequence (scikit-learn refuses them too), said as a
    # set is, where numpy's one object had "0 dimensions, shape ()".
    with pytest.raises(ValueError, match=r"^classes: Expected array-like .*got dict_keys: pass "
                                         r"list\(classes\)$"):
        bagel.BagelClassifier().partial_fit(x, y, classes={"a": 1, "b": 2}.keys())
    # An object array of numbers is those numbers (it had been "strings");
    # None among them is named, not numpy's "'<' not supported".
    numbered = bagel.BagelClassifier(epochs=1).partial_fit(x, np.arange(len(y)) % 2,
                                                           classes=np.array([0, 1], dtype=object))
    assert numbered.classes_.dtype.kind == "i" and list(numbered.classes_) == [0, 1]
    with pytest.raises(ValueError, match=r"^classes: expected labels of one kind, all numbers or "
                                         r"all strings, found NoneType, int$"):
        bagel.BagelClassifier().partial_fit(x, np.arange(len(y)) % 2, classes=[0, 1, None])

