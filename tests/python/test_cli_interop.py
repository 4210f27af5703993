"""One model directory for both sides: a model BagelClassifier saves is the
one `bagel predict` reads, and a model `bagel train` writes loads in Python;
both predict the same probabilities and classes."""

import io
import json
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import bagel
from conftest import ROOT, run_bagel


def bagel_predict(model_dir, npz, tmp_path):
    """(class names, probabilities) that `bagel predict` writes."""
    out = tmp_path / "proba.csv"
    run_bagel("predict", "-m", model_dir, "-i", npz, "--proba", "-o", out, "--quiet")
    lines = out.read_text(encoding="utf-8").splitlines()
    classes = lines[0].split(",")
    proba = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    pred = run_bagel("predict", "-m", model_dir, "-i", npz, "--quiet").stdout.splitlines()
    return classes, proba, np.array(pred)


def test_python_model_predicts_as_bagel_predict(multi, tmp_path):
    (xtr, ytr), (xte, _) = multi["train"], multi["test"]
    clf = bagel.BagelClassifier(epochs=3).fit(xtr, ytr)
    clf.save(tmp_path / "model")
    classes, proba, pred = bagel_predict(tmp_path / "model", ROOT / "data/fortunes-multi/test.npz", tmp_path)
    assert classes == list(clf.classes_)
    # The CLI prints the shortest text that round-trips: the same doubles.
    np.testing.assert_array_equal(proba, clf.predict_proba(xte))
    np.testing.assert_array_equal(pred, clf.predict(xte))
    meta = json.loads((tmp_path / "model" / "model.json").read_text())
    assert meta["config"]["train"]["features"] == "<in-memory>"
    assert meta["config"]["optimizer"]["epochs"] == 3


def test_numeric_classes_keep_their_names_across(tmp_path):
    rng = np.random.default_rng(2)
    x = sp.random(500, 40, density=0.2, format="csr", random_state=3, dtype=np.float32)
    y = np.where(x @ rng.normal(size=40) > 0, 1, -1)
    clf = bagel.BagelClassifier().fit(x, y)
    clf.save(tmp_path / "m")
    sp.save_npz(tmp_path / "x.npz", x)
    classes, proba, pred = bagel_predict(tmp_path / "m", tmp_path / "x.npz", tmp_path)
    assert classes == ["-1", "1"]
    np.testing.assert_array_equal(pred.astype(int), clf.predict(x))
    loaded = bagel.load(tmp_path / "m")
    assert loaded.classes_.tolist() == [-1, 1]
    np.testing.assert_array_equal(loaded.predict(x), clf.predict(x))


def test_integer_classes_beyond_two_to_the_53_stay_apart(tmp_path):
    # 2**53 + 1 has no float: named through one, it was the class 2**53, and a
    # model saved with both loaded as two classes 2**53.
    rng = np.random.default_rng(4)
    x = sp.random(400, 30, density=0.2, format="csr", random_state=5, dtype=np.float32)
    ids = np.array([2**53, 2**53 + 1, 2**60 + 1])
    y = ids[np.argmax(x @ rng.normal(size=(30, 3)), axis=1)]
    clf = bagel.BagelClassifier().fit(x, y)
    clf.save(tmp_path / "m")
    names = json.loads((tmp_path / "m" / "model.json").read_text())["classes"]
    assert names == ["9007199254740992", "9007199254740993", "1152921504606846977"]
    loaded = bagel.load(tmp_path / "m")
    assert loaded.classes_.tolist() == ids.tolist()
    np.testing.assert_array_equal(loaded.predict(x), clf.predict(x))
    # The CLI reads the same digits as the same classes, and trains on them too.
    sp.save_npz(tmp_path / "x.npz", x)
    (tmp_path / "y.txt").write_text("".join(f"{v}\n" for v in y))
    classes, _, pred = bagel_predict(tmp_path / "m", tmp_path / "x.npz", tmp_path)
    assert classes == names
    np.testing.assert_array_equal(pred, clf.predict(x).astype(str))
    (tmp_path / "cfg.json").write_text(json.dumps(
        {"train": {"features": str(tmp_path / "x.npz"), "labels": str(tmp_path / "y.txt")},
         "output": str(tmp_path / "cli")}))
    run_bagel("train", "--config", tmp_path / "cfg.json", "--quiet")
    cli = bagel.load(tmp_path / "cli")
    assert cli.classes_.tolist() == ids.tolist()
    np.testing.assert_array_equal(cli.coef_, clf.coef_)


def test_cli_model_loads_in_python_and_predicts_the_same(multi, tmp_path):
    run_bagel("train", "--config", ROOT / "configs/example.json", "-o", tmp_path / "cli",
              "--quiet", "--set", "optimizer.epochs=2")
    clf = bagel.load(tmp_path / "cli")
    xte = multi["test"][0]
    classes, proba, pred = bagel_predict(tmp_path / "cli", ROOT / "data/fortunes-multi/test.npz", tmp_path)
    assert list(clf.classes_) == classes
    np.testing.assert_array_equal(clf.predict_proba(xte), proba)
    np.testing.assert_array_equal(clf.predict(xte), pred)
    # Its parameters are those it was trained with.
    assert clf.get_params()["epochs"] == 2 and clf.get_params()["learning_rate"] == 0.1
    assert clf.n_features_in_ == xte.shape[1] and clf.n_iter_ == 2


def test_python_and_cli_train_the_same_model_from_the_same_config(multi, tmp_path):
    # One pipeline in the library: same settings, same data, same weights.
    run_bagel("train", "--config", ROOT / "configs/example.json", "-o", tmp_path / "cli",
              "--quiet", "--set", "optimizer.epochs=2", "--set", "valid=null")
    cli = bagel.load(tmp_path / "cli")
    py = bagel.BagelClassifier(**cli.get_params()).fit(*multi["train"])
    np.testing.assert_array_equal(py.coef_, cli.coef_)
    np.testing.assert_array_equal(py.intercept_, cli.intercept_)


def test_fit_leaves_unsorted_float64_rows_as_they_are_and_trains_what_bagel_train_does(multi, tmp_path):
    """TfidfVectorizer's rows come with their columns out of order; scipy's
    float32 conversion would sort the caller's own arrays in place."""
    x, y = multi["train"]
    rng = np.random.default_rng(0)
    x = sp.csr_matrix((x.data.astype(np.float64), x.indices.copy(), x.indptr.copy()), shape=x.shape)
    for r in range(x.shape[0]):  # each row's non-zeros in a random order
        lo, hi = x.indptr[r], x.indptr[r + 1]
        p = lo + rng.permutation(hi - lo)
        x.indices[lo:hi], x.data[lo:hi] = x.indices[p].copy(), x.data[p].copy()
    x.has_sorted_indices = False
    indices, data = x.indices.copy(), x.data.copy()
    py = bagel.BagelClassifier(epochs=2).fit(x, y)
    np.testing.assert_array_equal(x.indices, indices)
    np.testing.assert_array_equal(x.data, data)
    sp.save_npz(tmp_path / "x.npz", x)
    (tmp_path / "x.labels").write_text("\n".join(y) + "\n")
    (tmp_path / "c.json").write_text(json.dumps({
        "train": {"features": "x.npz", "labels": "x.labels"}, "optimizer": {"epochs": 2}}))
    run_bagel("train", "--config", tmp_path / "c.json", "-o", tmp_path / "cli", "--quiet")
    np.testing.assert_array_equal(py.coef_, bagel.load(tmp_path / "cli").coef_)


def test_rows_whose_sigmoids_all_round_to_one_predict_their_largest_logit(multi, tmp_path):
    """One-vs-rest probabilities of a long row tie in double (each sigmoid is
    1.0 from a logit of ~37 up): predict, the top class and the metrics
    follow the logits, in Python and in bagel predict alike."""
    x, y = multi["train"]
    clf = bagel.BagelClassifier().fit(x, y)
    w, b = clf.coef_, clf.intercept_
    # Features that at least two classes weigh positively; rows of one of
    # them, scaled until those logits pass 60.
    rows = []
    for j in np.flatnonzero((w > 0).sum(axis=0) >= 2)[:40]:
        k = np.sort(w[:, j])[-2]
        rows.append((j, 100.0 / k))
    n = len(rows)
    assert n >= 10
    xs = sp.csr_matrix(([v for _, v in rows], ([r for r in range(n)], [j for j, _ in rows])),
                       shape=(n, x.shape[1]), dtype=np.float32)
    z = clf.decision_function(xs)
    proba = clf.predict_proba(xs)
    assert (np.sort(z, axis=1)[:, -2] > 37).all()
    assert (np.sort(proba, axis=1)[:, -1] == np.sort(proba, axis=1)[:, -2]).all()  # tied
    expected = clf.classes_[np.argmax(z, axis=1)]
    np.testing.assert_array_equal(clf.predict(xs), expected)
    assert (np.argmax(proba, axis=1) != np.argmax(z, axis=1)).any()  # where the old rule erred
    clf.save(tmp_path / "m")
    sp.save_npz(tmp_path / "xs.npz", xs)
    _, cli_proba, cli_pred = bagel_predict(tmp_path / "m", tmp_path / "xs.npz", tmp_path)
    np.testing.assert_array_equal(cli_pred, expected)
    top = run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "xs.npz", "--top-k", "3",
                    "--quiet").stdout.splitlines()
    assert [line.split(",")[0] for line in top] == list(expected)
    labels = tmp_path / "xs.labels"
    labels.write_text("\n".join(expected) + "\n")
    metrics = tmp_path / "metrics.json"
    run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "xs.npz", "-l", labels,
              "--metrics", metrics, "--quiet")
    assert json.loads(metrics.read_text())["accuracy"] == 1.0
    explained = json.loads(run_bagel("inspect", "-m", tmp_path / "m", "--explain", "-i", tmp_path / "xs.npz",
                                     *sum((["--row", str(r)] for r in range(n)), []),
                                     "--format", "json").stdout)
    rows = explained["rows"] if isinstance(explained, dict) else explained
    assert [r["predicted"] for r in rows] == list(expected)


def test_boolean_labels_round_trip_as_bools(tmp_path):
    x = np.eye(6)
    y = np.array([True, False] * 3)
    clf = bagel.BagelClassifier().fit(x, y)
    assert clf.predict(x).dtype == bool
    clf.save(tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    assert saved["classes"] == ["False", "True"] and saved["class_type"] == "bool"
    loaded = bagel.load(tmp_path / "m")
    assert loaded.classes_.dtype == bool
    np.testing.assert_array_equal(loaded.predict(x), clf.predict(x))
    assert loaded.score(x, y) == clf.score(x, y)
    # bagel predict names them as before; a pickle keeps them too.
    sp.save_npz(tmp_path / "x.npz", sp.csr_matrix(x))
    assert bagel_predict(tmp_path / "m", tmp_path / "x.npz", tmp_path)[2].tolist() == \
        clf.predict(x).astype(str).tolist()
    assert pickle.loads(pickle.dumps(loaded)).classes_.dtype == bool
    # Bytes are named by their text and come back as bytes.
    yb = np.array([b"comp", b"pol\xc3\xa9"] * 3)
    byt = bagel.BagelClassifier().fit(x, yb)
    byt.save(tmp_path / "b")
    saved = json.loads((tmp_path / "b" / "model.json").read_text(encoding="utf-8"))
    assert saved["classes"] == ["comp", "pol\u00e9"] and saved["class_type"] == "bytes"
    back = bagel.load(tmp_path / "b")
    assert back.classes_.dtype.kind == "S" and back.score(x, yb) == byt.score(x, yb)
    # Strings "False" and "True" stay strings.
    named = bagel.BagelClassifier().fit(x, y.astype(str))
    named.save(tmp_path / "s")
    assert "class_type" not in json.loads((tmp_path / "s" / "model.json").read_text())
    assert bagel.load(tmp_path / "s").classes_.dtype.kind == "U"


@pytest.mark.parametrize("classes", [np.array([-3, 5], dtype=np.int8),
                                     np.array([7, 2**64 - 1], dtype=np.uint64),
                                     np.array([-1.0, 3.0], dtype=np.float32),
                                     np.array([1, 2], dtype=np.int64),
                                     np.array([0.0, 2.0], dtype=np.float64)])
def test_numeric_classes_keep_their_numpy_type_through_save_and_load(tmp_path, classes):
    x = np.eye(6)
    y = np.tile(classes, 3)
    clf = bagel.BagelClassifier().fit(x, y)
    clf.save(tmp_path / "m")
    saved = json.loads((tmp_path / "m" / "model.json").read_text())
    # int64 is what the names of integers give back: no type recorded
    # (float64 classes here are whole numbers, named as integers).
    assert saved.get("class_type") == (None if classes.dtype == np.int64 else classes.dtype.name)
    loaded = bagel.load(tmp_path / "m")
    assert loaded.classes_.dtype == classes.dtype
    np.testing.assert_array_equal(loaded.classes_, clf.classes_)
    assert loaded.predict(x).dtype == classes.dtype
    np.testing.assert_array_equal(loaded.predict(x), clf.predict(x))
    assert loaded.score(x, y) == clf.score(x, y)


def test_classes_of_a_numpy_type_model_json_cannot_name_come_back_as_float64(tmp_path):
    x = np.eye(6)
    y = np.tile(np.array([1.0, 2.0], dtype=np.longdouble), 3)
    bagel.BagelClassifier().fit(x, y).save(tmp_path / "m")
    assert "class_type" not in json.loads((tmp_path / "m" / "model.json").read_text())
    loaded = bagel.load(tmp_path / "m")
    assert loaded.classes_.tolist() == [1, 2]


def test_string_classes_that_read_as_numbers_score_from_the_cli(tmp_path):
    # Fitted in Python on the strings "01" and "1" (two classes; bagel train
    # on such a file reads them as the number 1). bagel predict --labels and
    # train --init take a labels file of them as written, and a bool model
    # takes the bools of an .npy.
    x = np.eye(6)
    y = np.array(["01", "1"] * 3)
    clf = bagel.BagelClassifier(epochs=20).fit(x, y)
    assert list(clf.classes_) == ["01", "1"] and clf.score(x, y) == 1.0
    clf.save(tmp_path / "m")
    sp.save_npz(tmp_path / "x.npz", sp.csr_matrix(x))
    (tmp_path / "y.txt").write_text("".join(f"{label}\n" for label in y))
    run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "x.npz", "-l", tmp_path / "y.txt",
              "--metrics", tmp_path / "metrics.json", "-o", tmp_path / "p.txt", "--quiet")
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["accuracy"] == 1.0
    assert {k: v["support"] for k, v in metrics["per_class"].items()} == {"01": 3, "1": 3}
    (tmp_path / "cfg.json").write_text(json.dumps({
        "train": {"features": "x.npz", "labels": "y.txt"}, "optimizer": {"epochs": 1}}))
    run_bagel("train", "--config", tmp_path / "cfg.json", "--init", tmp_path / "m",
              "-o", tmp_path / "again", "--quiet")
    again = json.loads((tmp_path / "again" / "model.json").read_text())
    assert again["training"]["train_metrics"]["accuracy"] == 1.0
    yb = np.array([True, False] * 3)
    bagel.BagelClassifier(epochs=20).fit(x, yb).save(tmp_path / "b")
    np.save(tmp_path / "yb.npy", yb)
    run_bagel("predict", "-m", tmp_path / "b", "-i", tmp_path / "x.npz", "-l", tmp_path / "yb.npy",
              "--metrics", tmp_path / "mb.json", "-o", tmp_path / "pb.txt", "--quiet")
    assert json.loads((tmp_path / "mb.json").read_text())["accuracy"] == 1.0


def test_class_names_with_line_breaks_are_quoted_one_record_a_row(tmp_path):
    # Plain predict output is one record per row: a class name holding a
    # line break (or starting with a quote) is quoted as CSV quotes it, and
    # a CSV reader gets back the names predict gives, one per row.
    import csv
    x = np.eye(6)
    y = np.array(["two\nlines", '"quoted" start', "plain, with comma"] * 2)
    clf = bagel.BagelClassifier(epochs=30).fit(x, y)
    clf.save(tmp_path / "m")
    sp.save_npz(tmp_path / "x.npz", sp.csr_matrix(x))
    out = run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "x.npz", "--quiet").stdout
    records = list(csv.reader(io.StringIO(out), delimiter="\x1f"))
    assert [r[0] for r in records] == list(clf.predict(x))
    assert "plain, with comma\n" in out  # only names that need it are quoted


def train_text_model(folder):
    """`bagel train` on four fastText lines (tf-idf): the model folder/m,
    its text folder/t.txt."""
    lines = ["__label__a the cat sat on the mat", "__label__b stock prices fell today",
             "__label__a a cat and a dog", "__label__b markets and prices rose"]
    (folder / "t.txt").write_text("\n".join(lines) + "\n")
    (folder / "c.json").write_text(json.dumps({"train": {"text": "t.txt"}, "output": "m",
                                               "vectorizer": {"kind": "tfidf"},
                                               "optimizer": {"epochs": 3}}))
    run_bagel("train", "-c", folder / "c.json", "--quiet")


def test_a_text_models_vectorizer_survives_pickle_and_partial_fit(tmp_path):
    # A model bagel train fitted on raw text keeps its vectorizer through a
    # pickle and a partial_fit in Python: saved again, bagel predict still
    # reads raw text with it (both had saved no vocabulary.txt).
    train_text_model(tmp_path)
    expected = run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "t.txt", "--proba", "-q").stdout
    clf = bagel.load(tmp_path / "m")
    docs = ["the cat sat", "prices rose"]
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):  # 0 and 1 had aborted the process
        np.testing.assert_array_equal(
            pickle.loads(pickle.dumps(clf, protocol=protocol)).predict_proba(docs),
            clf.predict_proba(docs))
    pickle.loads(pickle.dumps(clf)).save(tmp_path / "pickled")
    assert (tmp_path / "pickled" / "vocabulary.txt").read_text() == \
        (tmp_path / "m" / "vocabulary.txt").read_text()
    assert run_bagel("predict", "-m", tmp_path / "pickled", "-i", tmp_path / "t.txt", "--proba",
                     "-q").stdout == expected
    clf.partial_fit(sp.csr_matrix(np.full((2, clf.n_features_in_), 0.01)), clf.classes_)
    clf.save(tmp_path / "more")
    saved = json.loads((tmp_path / "more" / "model.json").read_text())
    assert saved["vectorizer"] == json.loads((tmp_path / "m" / "model.json").read_text())["vectorizer"]
    run_bagel("predict", "-m", tmp_path / "more", "-i", tmp_path / "t.txt", "-q")


def test_a_text_model_predicts_raw_documents_as_bagel_predict_does(tmp_path):
    # bagel.load of a model bagel train fitted on raw text predicts strings
    # through its vectorizer, the probabilities bagel predict prints; a model
    # fitted on numbers says that text needs its vectorizer.
    train_text_model(tmp_path)
    docs = ["the dog sat", "prices fell", "nothing known here", "Cat, MAT & stock"]
    (tmp_path / "new.txt").write_text("\n".join(docs) + "\n")
    printed = run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "new.txt", "--proba", "-q").stdout
    expected = np.array([[float(v) for v in row.split(",")] for row in printed.splitlines()[1:]])
    clf = bagel.load(tmp_path / "m")
    for given in (docs, tuple(docs), np.array(docs), np.array(docs, dtype=object)):
        np.testing.assert_array_equal(clf.predict_proba(given), expected)
    assert list(clf.predict(docs)) == [clf.classes_[i] for i in expected.argmax(axis=1)]
    with pytest.raises(ValueError, match="a single string"):
        clf.predict("the dog sat")
    numbers = bagel.BagelClassifier(epochs=1).fit(sp.random(20, 5, density=0.5, format="csr",
                                                            random_state=0), np.arange(20) % 2)
    with pytest.raises(ValueError, match="trained on numbers"):
        numbers.predict(docs)


def test_bytes_documents_are_decoded_with_the_models_decode_error(tmp_path):
    lines = ["__label__a the cat sat on the mat", "__label__b stock prices fell today",
             "__label__a a cat and a dog", "__label__b markets and prices rose"]
    (tmp_path / "t.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "c.json").write_text(json.dumps({"train": {"text": "t.txt", "decode_error": "replace"},
                                                 "output": "m", "optimizer": {"epochs": 3}}))
    run_bagel("train", "-c", tmp_path / "c.json", "--quiet")
    docs = [b"the \xff cat fell", b"prices \xc3 rose"]
    (tmp_path / "new.txt").write_bytes(b"\n".join(docs) + b"\n")
    printed = run_bagel("predict", "-m", tmp_path / "m", "-i", tmp_path / "new.txt", "--text-format",
                        "lines", "--proba", "-q").stdout
    expected = np.array([[float(v) for v in row.split(",")] for row in printed.splitlines()[1:]])
    np.testing.assert_array_equal(bagel.load(tmp_path / "m").predict_proba(docs), expected)
    # str holding those bytes as lone surrogates ("surrogateescape", as
    # os.fsdecode leaves them) is read as the bytes, where it was refused as
    # not valid Unicode; a surrogate no byte escapes to is replaced too.
    escaped = [d.decode("utf-8", "surrogateescape") for d in docs]
    np.testing.assert_array_equal(bagel.load(tmp_path / "m").predict_proba(escaped), expected)
    np.testing.assert_array_equal(bagel.load(tmp_path / "m").predict_proba(["the \ud800 cat fell"]),
                                  bagel.load(tmp_path / "m").predict_proba(["the \ufffd cat fell"]))


def test_a_text_model_takes_any_iterable_of_documents_and_says_what_else_it_takes(tmp_path):
    # As CountVectorizer.transform: a generator of documents too. A column
    # of documents, a list of lists, [] and text given to fit each get an
    # error saying what to pass (they had been numpy's float conversion
    # errors, with the whole document in them).
    train_text_model(tmp_path)
    clf = bagel.load(tmp_path / "m").set_params(threads=1)
    docs = ["the dog sat", "prices fell"]
    np.testing.assert_array_equal(clf.predict_proba(d for d in docs), clf.predict_proba(docs))
    np.testing.assert_array_equal(clf.predict(iter(docs)), clf.predict(docs))
    # A set, a dict and its views iterate as CountVectorizer.transform
    # iterates them (numpy had made them one object and said "float()").
    for given in (set(docs), frozenset(docs), dict.fromkeys(docs), dict.fromkeys(docs).keys(),
                  {i: d for i, d in enumerate(docs)}.values()):
        np.testing.assert_array_equal(clf.predict_proba(given), clf.predict_proba(list(given)))
    for given, found in ((np.array([["the cat"]]), r"a 2-d array of shape \(1, 1\)"),
                         ([["the cat"]], "a list of rows")):
        with pytest.raises(ValueError, match=r"^X: a model trained on text takes documents as a "
                                             rf"1-d list or array, found {found}: pass the documents"):
            clf.predict(given)
    for empty in ([], (), np.array([], dtype=str)):
        with pytest.raises(ValueError, match=r"^Found array with 0 sample\(s\)"):
            clf.predict(empty)
    # partial_fit reads documents through the model's vectorizer, as predict
    # does: the same weights as from its vectorised rows.
    rows = clf._vectorized(docs)
    by_rows = pickle.loads(pickle.dumps(clf)).partial_fit(rows, ["a", "b"])
    by_docs = pickle.loads(pickle.dumps(clf)).partial_fit((d for d in docs), ["a", "b"])
    np.testing.assert_array_equal(by_docs.coef_, by_rows.coef_)
    with pytest.raises(ValueError, match="label 'c3' is not one of the 2 classes"):
        clf.partial_fit(["prices rose"], ["c3"])
    long_doc = "the cat sat " * 100
    numbers = bagel.BagelClassifier(epochs=1).fit(np.eye(2), [0, 1])
    for fit in (bagel.BagelClassifier().fit, numbers.partial_fit):
        with pytest.raises(ValueError, match=r"^X holds text, but (partial_)?fit takes a matrix of "
                           r"numbers .*: for raw documents use Pipeline\(\[\('vec', "
                           r"CountVectorizer\(\)\), \('clf', BagelClassifier\(\)\)\]\)$") as e:
            fit([long_doc, "prices"], [0, 1])
        assert "cat" not in str(e.value)
    for given in ((d for d in docs), np.array([["the cat"]])):
        with pytest.raises(ValueError, match="^X holds text, but this model was trained on numbers"):
            numbers.predict(given)


def test_a_text_model_takes_strings_and_utf8_bytes_and_refuses_other_documents(tmp_path):
    # As CountVectorizer.transform: bytes are UTF-8 text; None, NaN and
    # numbers are no document (they had been read as the words "none", "nan").
    train_text_model(tmp_path)
    clf = bagel.load(tmp_path / "m")
    np.testing.assert_array_equal(clf.predict_proba([b"the cat", "prices fell"]),
                                  clf.predict_proba(["the cat", "prices fell"]))
    np.testing.assert_array_equal(clf.predict_proba(np.array([b"caf\xc3\xa9 prices"])),
                                  clf.predict_proba(["caf\u00e9 prices"]))
    for bad, found in ((None, "NoneType None"), (np.nan, "float nan"), (3, "int 3")):
        with pytest.raises(ValueError, match=f"^X: document 1: expected a string, found {found}$"):
            clf.predict(["the cat", bad])
        with pytest.raises(ValueError, match=f"^X: document 0: expected a string, found {found}$"):
            clf.predict([bad, "the cat"])
        # Alone too (it had been scikit-learn's "Expected 2D array" of a matrix).
        for given in ([bad], (bad,), np.array([bad], dtype=object), [bad, bad]):
            with pytest.raises(ValueError, match=f"^X: document 0: expected a string, found {found}$"):
                clf.predict(given)
    with pytest.raises(ValueError, match="a single string"):
        clf.predict(b"the cat")
    # A bad parameter is said as such, not as the documents' fault.
    with pytest.raises(bagel.InvalidParameterError, match=r"^threads: expected"):
        bagel.load(tmp_path / "m").set_params(threads="x").predict(["the cat"])
    with pytest.raises(ValueError, match=r"^X: document 0: bytes that are not UTF-8"):
        clf.predict([b"\xff cat"])
    with pytest.raises(ValueError, match=r"^X: document 1: not valid Unicode"):
        clf.predict(["the cat", "the \udcff cat"])
