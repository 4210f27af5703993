"""bagel's models against PyTorch, through scripts/torch_check.py.

Trains small bagel models (binary and 4-class, sparse and dense layer) on CSR
data whose rows hold unsorted and repeated indices, negative values and empty
bags, then runs torch_check.py, which compares torch.nn.EmbeddingBag(sum),
torch.nn.Linear on the densified rows, `bagel predict --proba` and
`bagel predict --proba --layer dense` row by row (tolerances are stated in
torch_check.py) and checks the worked example of the MISSION document (shared/docs/MISSION.md). Negative
controls show the check fails when bagel computes with a corrupted weight and
when a weight is not finite.

Run by ctest with BAGEL (the executable) and BAGEL_ROOT (the repository) set.
"""

import contextlib
import importlib.util
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import numpy as np
import scipy.sparse

N_FEATURES = 40


def bagel_executable():
    path = os.environ.get("BAGEL")
    if not path:
        raise RuntimeError("BAGEL must name the bagel executable (ctest sets it)")
    return path


def torch_check_script():
    root = os.environ.get("BAGEL_ROOT") or Path(__file__).resolve().parents[2]
    return Path(root) / "scripts" / "torch_check.py"


def make_rows(rng, n_rows, n_cols):
    """CSR built from raw arrays, so nothing sorts or merges the entries:
    every 6th row empty, a repeated index in every row with 2+ entries,
    values a mix of counts and negative reals."""
    indptr, indices, data = [0], [], []
    for r in range(n_rows):
        k = 0 if r % 6 == 2 else int(rng.integers(1, 9))
        row = list(rng.permutation(n_cols)[:k])
        if k >= 2:
            row.insert(int(rng.integers(0, k)), row[0])
        values = np.where(rng.random(len(row)) < 0.5, rng.integers(1, 4, len(row)),
                          rng.uniform(-2.0, 2.0, len(row)))
        indices += row
        data += list(values)
        indptr.append(len(indices))
    return scipy.sparse.csr_matrix(
        (np.array(data, np.float32), np.array(indices, np.int32), np.array(indptr, np.int32)),
        shape=(n_rows, n_cols))


def assert_awkward(test, x):
    """The properties the comparison is meant to exercise are really there."""
    rows = [x.indices[x.indptr[r]:x.indptr[r + 1]] for r in range(x.shape[0])]
    test.assertTrue(any(len(r) == 0 for r in rows), "an empty row")
    test.assertTrue(any(len(set(r)) < len(r) for r in rows), "a repeated index")
    test.assertTrue(any((np.diff(r) < 0).any() for r in rows), "unsorted indices")
    test.assertTrue((x.data < 0).any(), "negative values")


def labels_for(rng, x, num_classes):
    """Arg-max of a noisy random linear score: learnable, not separable."""
    score = x @ rng.normal(size=(x.shape[1], num_classes)) + 0.5 * rng.gumbel(
        size=(x.shape[0], num_classes))
    return [f"class-{c}" for c in score.argmax(axis=1)]


class TorchInterop(unittest.TestCase):
    module = None  # scripts/torch_check.py, imported on first use

    @classmethod
    def setUpClass(cls):
        cls.bagel = bagel_executable()
        cls.tmp = Path(tempfile.mkdtemp(prefix="bagel-torch-"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def write_split(self, name, x, labels=None):
        path = self.tmp / f"{name}.npz"
        scipy.sparse.save_npz(path, x)
        self.assertTrue((scipy.sparse.load_npz(path).indices == x.indices).all(),
                        "save_npz must keep the entries as stored")
        if labels is not None:
            (self.tmp / f"{name}.labels").write_text("\n".join(labels) + "\n")
        return path

    def train(self, name, num_classes, layer="sparse", seed=0, multiclass=None, **optimizer):
        """Trains on fresh data; returns (model dir, test .npz path)."""
        rng = np.random.default_rng(seed)
        while True:
            x_train = make_rows(rng, 200, N_FEATURES)
            y_train = labels_for(rng, x_train, num_classes)
            if len(set(y_train)) == num_classes:
                break
        x_test = make_rows(rng, 120, N_FEATURES)
        assert_awkward(self, x_train)
        assert_awkward(self, x_test)
        train_path = self.write_split(f"{name}-train", x_train, y_train)
        test_path = self.write_split(f"{name}-test", x_test)
        model_dir = self.tmp / f"{name}-model"
        opt = {"epochs": 5, "learning_rate": 0.1, "schedule": "constant", "batch_size": 1,
               "l2": 1e-4, "l1": 0.0, "seed": 42, "threads": 1}
        opt.update(optimizer)
        config = {
            "train": {"features": str(train_path), "labels": str(self.tmp / f"{name}-train.labels")},
            "model": {"layer": layer, **({"multiclass": multiclass} if multiclass else {})},
            "optimizer": opt,
            "output": str(model_dir),
        }
        config_path = self.tmp / f"{name}.json"
        config_path.write_text(json.dumps(config, indent=2))
        run = subprocess.run([self.bagel, "train", "--config", str(config_path), "--quiet"],
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        weight = np.load(model_dir / "weight.npy")
        self.assertEqual(weight.shape, (N_FEATURES, 1 if num_classes == 2 else num_classes))
        if multiclass:
            self.assertEqual(json.loads((model_dir / "model.json").read_text())["output"], multiclass)
        self.assertGreater(np.abs(weight).max(), 0.05, "training must move the weights")
        return model_dir, test_path

    def torch_check(self, model_dir, input_path, bagel=None, as_process=False):
        """Runs torch_check.py; returns (exit status, stdout). In-process by
        default: importing torch takes seconds, so it is imported once."""
        args = ["--model", str(model_dir), "--input", str(input_path),
                "--bagel", bagel or self.bagel]
        if as_process:
            run = subprocess.run([sys.executable, str(torch_check_script())] + args,
                                 capture_output=True, text=True, timeout=120)
            return run.returncode, run.stdout + run.stderr
        if TorchInterop.module is None:
            spec = importlib.util.spec_from_file_location("torch_check", torch_check_script())
            TorchInterop.module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(TorchInterop.module)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            status = TorchInterop.module.main(args)
        return status, out.getvalue()

    def assert_agrees(self, model_dir, input_path, as_process=False):
        status, out = self.torch_check(model_dir, input_path, as_process=as_process)
        self.assertEqual(status, 0, out)
        self.assertIn("all agree", out)
        # All six pairs of the four computations and the worked example ran.
        self.assertEqual(out.count(" ok "), 6 + 7, out)

    def test_binary_model_agrees_with_torch_embedding_bag_and_linear(self):
        model_dir, test_path = self.train("binary", 2, l1=1e-3)
        self.assert_agrees(model_dir, test_path, as_process=True)  # the script's own exit status

    def test_four_class_model_agrees_with_torch_embedding_bag_and_linear(self):
        model_dir, test_path = self.train("multi", 4, seed=1, batch_size=4, l1=1e-3,
                                          schedule="invscaling", learning_rate=0.5)
        self.assert_agrees(model_dir, test_path)

    def test_four_class_softmax_model_agrees_too(self):
        # The default head of four classes is one-vs-rest (the test above).
        model_dir, test_path = self.train("softmax", 4, seed=3, multiclass="softmax")
        self.assert_agrees(model_dir, test_path)

    def test_model_trained_with_the_dense_layer_agrees_too(self):
        model_dir, test_path = self.train("multi-dense", 4, layer="dense", seed=2)
        self.assert_agrees(model_dir, test_path)

    def test_input_with_fewer_columns_than_the_model_is_refused(self):
        # An .npz stores its width, and one other than the model's is another
        # vocabulary: bagel refuses it (as scikit-learn does), so the check
        # reports bagel's error rather than agreeing on garbage. Narrower
        # svmlight input is covered in test_model.
        model_dir, _ = self.train("narrow", 4, seed=3)
        x = make_rows(np.random.default_rng(4), 1000, N_FEATURES - 10)
        status, out = self.torch_check(model_dir, self.write_split("narrow-input", x))
        self.assertNotEqual(status, 0, out)
        self.assertIn(f"has {N_FEATURES - 10} features", out)

    def test_check_fails_when_bagel_computes_with_a_corrupted_weight(self):
        # A stand-in bagel that predicts with a copy of the model in which one
        # weight of a feature the input uses is off by 0.25: the torch side
        # reads the true files, so only the bagel pairs may fail.
        model_dir, test_path = self.train("corrupt", 2, seed=5)
        x = scipy.sparse.load_npz(test_path)
        feature = int(x.indices[0])
        wrapper = self.tmp / "corrupting-bagel"
        wrapper.write_text(textwrap.dedent(f"""\
            #!{sys.executable}
            import os, shutil, sys, tempfile
            import numpy as np
            args = sys.argv[1:]
            with tempfile.TemporaryDirectory() as tmp:
                if "--model" in args:
                    at = args.index("--model") + 1
                    copy = os.path.join(tmp, "model")
                    shutil.copytree(args[at], copy)
                    w = np.load(os.path.join(copy, "weight.npy"))
                    w[min({feature}, w.shape[0] - 1), 0] += 0.25
                    np.save(os.path.join(copy, "weight.npy"), w)
                    args[at] = copy
                sys.exit(__import__("subprocess").call([{self.bagel!r}] + args))
            """))
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        status, out = self.torch_check(model_dir, test_path, bagel=str(wrapper))
        self.assertEqual(status, 1, out)
        lines = out.splitlines()
        self.assertTrue(any(l.split()[:4] == ["ok", "torch-bag", "vs", "torch-linear"]
                            for l in lines), out)
        self.assertTrue(any(l.split()[:4] == ["MISMATCH", "torch-bag", "vs", "bagel-sparse"]
                            for l in lines), out)
        self.assertTrue(any(l.split()[:4] == ["MISMATCH", "torch-linear", "vs", "bagel-dense"]
                            for l in lines), out)
        self.assertNotIn("all agree", out)

    def test_check_fails_on_a_non_finite_weight(self):
        # NaN compares False with everything, so a naive `max |diff| > tol`
        # check would pass it; the torch pair must report the mismatch itself.
        model_dir, test_path = self.train("nan", 4, seed=6)
        broken = self.tmp / "nan-model-broken"
        shutil.copytree(model_dir, broken)
        w = np.load(broken / "weight.npy")
        w[int(scipy.sparse.load_npz(test_path).indices[0]), :] = np.nan
        np.save(broken / "weight.npy", w)
        status, out = self.torch_check(broken, test_path)
        self.assertEqual(status, 1, out)
        self.assertTrue(any(l.split()[:4] == ["MISMATCH", "torch-bag", "vs", "torch-linear"]
                            and "non-finite" in l for l in out.splitlines()), out)


if __name__ == "__main__":
    unittest.main()
