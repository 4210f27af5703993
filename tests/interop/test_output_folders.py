"""`bagel train -o DIR` never loses a file bagel did not write, and an
interrupted run leaves no temporary behind.

DIR may be missing, empty, or hold a bagel model (whose model.json, weight.npy
and bias.npy are replaced while every other file stays); a folder of other
files is refused unless --force, which adds the model beside them and still
never overwrites a file bagel did not write. SIGINT/SIGTERM remove the
temporaries and exit with 130/143.

Run: BAGEL=build/bagel BAGEL_ROOT=. /usr/bin/python3 -m unittest -v test_output_folders
"""

import json
import os
import signal
import subprocess
import tempfile
import time
import unittest
from pathlib import Path

from cli_helpers import BAGEL, FolderCase, data_config, run_bagel, train_model, write_labeled_set

MODEL_FILES = ["bias.npy", "model.json", "weight.npy"]



def snapshot(folder):
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


class TrainingCase(FolderCase):
    """A labelled set to train on, and a fresh folder for each test."""

    PREFIX = "bagel-interop-folders-"
    DATA_FOLDER = "data"

    @classmethod
    def make_data(cls):
        write_labeled_set(cls.data, 200, 30, 0.2, 11, ("a", "b"))
        cls.config = cls.data / "cfg.json"
        cls.config.write_text(json.dumps(data_config(cls.data, optimizer={"epochs": 1})))
        # A text model: its vectorizer's terms go to vocabulary.txt beside the arrays.
        words = ["sky", "blue", "cloud", "rain", "sea", "wave", "salt", "shore"]
        lines = [" ".join(words[(i * k) % 8] for k in range(1, 5)) for i in range(40)]
        (cls.data / "docs.txt").write_text("\n".join(lines) + "\n")
        (cls.data / "docs.labels").write_text("\n".join("ab"[i % 2] for i in range(40)) + "\n")
        cls.text_config = cls.data / "text.json"
        cls.text_config.write_text(json.dumps({
            "train": {"text": str(cls.data / "docs.txt"), "labels": str(cls.data / "docs.labels")},
            "optimizer": {"epochs": 1}}))
        # A text model whose vectorizer keeps no terms: it writes no vocabulary.txt.
        cls.hashing_config = cls.data / "hashing.json"
        cls.hashing_config.write_text(json.dumps({
            **json.loads(cls.text_config.read_text()),
            "vectorizer": {"kind": "hashing", "n_features": 64}}))

    def train(self, output, *extra, cwd=None):
        return run_bagel("train", "--config", self.config, "-o", output, "--quiet", *extra,
                         cwd=cwd)


class OutputFolders(TrainingCase):
    def assert_refused(self, proc, *fragments):
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertTrue(proc.stderr.startswith("bagel: error: "), proc.stderr)
        self.assertEqual(proc.stderr.count("\n"), 1, "one clear line:\n" + proc.stderr)
        for fragment in fragments:
            self.assertIn(fragment, proc.stderr)

    def user_folder(self, name="project"):
        """A folder of the user's files: notes and a copy of the data."""
        folder = self.dir / name
        (folder / "data").mkdir(parents=True)
        (folder / "notes.md").write_text("what this run was for\n")
        (folder / "data" / "train.npz").write_bytes((self.data / "train.npz").read_bytes())
        return folder

    # -- what is kept ----------------------------------------------------

    def test_retraining_into_a_model_folder_keeps_the_users_files(self):
        model = self.dir / "model"
        self.assertEqual(self.train(model).returncode, 0)
        (model / "notes.md").write_text("results: good\n")
        (model / "data").mkdir()
        (model / "data" / "train.npz").write_bytes((self.data / "train.npz").read_bytes())
        theirs = {k: v for k, v in snapshot(model).items() if k not in MODEL_FILES}
        proc = self.train(model)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        after = snapshot(model)
        self.assertEqual({k: v for k, v in after.items() if k not in MODEL_FILES}, theirs)
        self.assertTrue(set(MODEL_FILES) <= set(after))
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["model"])  # no temporaries

    def test_a_folder_of_other_files_is_refused_and_left_alone(self):
        folder = self.user_folder()
        before = snapshot(folder)
        self.assert_refused(self.train(folder), str(folder), "no bagel model", "--force")
        self.assertEqual(snapshot(folder), before)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["project"])

    def test_the_refusal_comes_before_any_data_is_read(self):
        folder = self.user_folder()
        config = self.dir / "cfg.json"
        config.write_text(json.dumps({"train": {"features": str(self.dir / "missing.npz"),
                                                "labels": str(self.dir / "missing.labels")}}))
        proc = run_bagel("train", "--config", config, "-o", folder)
        self.assert_refused(proc, str(folder))
        self.assertNotIn("missing.npz", proc.stderr)

    def test_force_adds_the_model_beside_the_users_files(self):
        folder = self.user_folder()
        before = snapshot(folder)
        proc = self.train(folder, "--force")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        after = snapshot(folder)
        self.assertEqual({k: after[k] for k in before}, before)
        self.assertEqual(sorted(set(after) - set(before)), MODEL_FILES)

    def test_force_never_overwrites_a_model_file_bagel_did_not_write(self):
        folder = self.user_folder()
        (folder / "weight.npy").write_bytes(b"the user's own array")
        before = snapshot(folder)
        self.assert_refused(self.train(folder, "--force"), str(folder / "weight.npy"),
                            "not written by bagel")
        self.assertEqual(snapshot(folder), before)

    def test_a_regular_file_is_refused(self):
        target = self.dir / "model"
        target.write_text("a file the user keeps\n")
        self.assert_refused(self.train(target), str(target), "is a file")
        self.assertEqual(target.read_text(), "a file the user keeps\n")

    # -- -o . ------------------------------------------------------------

    def test_dot_writes_into_an_empty_folder_then_replaces_that_model(self):
        here = self.dir / "here"
        here.mkdir()
        for _ in range(2):
            proc = self.train(".", cwd=here)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(sorted(p.name for p in here.iterdir()), MODEL_FILES)
        (here / "notes.md").write_text("kept\n")
        self.assertEqual(self.train(".", cwd=here).returncode, 0)
        self.assertEqual((here / "notes.md").read_text(), "kept\n")

    def test_a_features_model_over_a_text_model_file_by_file_leaves_no_vocabulary(self):
        # "-o ." is filled file by file. The text model's vocabulary.txt was
        # kept beside the new arrays, and inspect named their features by the
        # old model's words.
        here = self.dir / "here"
        here.mkdir()
        text = run_bagel("train", "--config", self.text_config, "-o", ".", "--quiet", cwd=here)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("vocabulary.txt", {p.name for p in here.iterdir()})
        (here / "notes.md").write_text("kept\n")
        proc = self.train(".", cwd=here)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in here.iterdir()), sorted(MODEL_FILES + ["notes.md"]))
        inspect = run_bagel("inspect", "-m", here)
        self.assertEqual(inspect.returncode, 0, inspect.stderr)
        self.assertIn("no vocabulary (features by column index)", inspect.stdout)

    def test_a_text_model_over_a_features_model_keeps_the_users_vocabulary(self):
        # Refused before training (no epoch line), for a text model with terms
        # and for a hashing one, whose columns the user's words would name.
        model = self.dir / "model"
        self.assertEqual(self.train(model).returncode, 0)
        words = "\n".join(f"f{i}" for i in range(30)) + "\n"
        (model / "vocabulary.txt").write_text(words)
        before = snapshot(model)
        for config in (self.text_config, self.hashing_config):
            with self.subTest(config=config.name):
                proc = run_bagel("train", "--config", config, "-o", model)
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"{model / 'vocabulary.txt'}: is not the model's (the model in {model} "
                              "was trained on features)", proc.stderr)
                self.assertNotIn("epoch", proc.stderr)
                self.assertEqual(snapshot(model), before)
                self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["model"])

    def test_a_hashing_text_model_is_written_file_by_file(self):
        # Its vocabulary.txt was asked for but never made: the commit failed
        # on the missing temporary, after renaming the arrays in, and the
        # folder (arrays, no model.json) was then refused as the user's.
        here = self.dir / "here"
        here.mkdir()
        for config in (self.hashing_config, self.text_config, self.hashing_config):
            with self.subTest(config=config.name):
                proc = run_bagel("train", "--config", config, "-o", ".", "--quiet", cwd=here)
                self.assertEqual(proc.returncode, 0, proc.stderr)
                files = sorted(p.name for p in here.iterdir())
                self.assertEqual(files, sorted(MODEL_FILES + ["vocabulary.txt"])
                                 if config == self.text_config else MODEL_FILES)
                self.assertEqual(run_bagel("predict", "-m", here, "-i", self.data / "docs.txt",
                                           "-q").returncode, 0)

    def test_a_vocabulary_beside_a_features_model_is_the_users_and_stays(self):
        # Not the old model's own (its model.json has no vectorizer): bagel
        # did not write it, so a file-by-file retraining leaves it alone.
        here = self.dir / "here"
        here.mkdir()
        self.assertEqual(self.train(".", cwd=here).returncode, 0)
        (here / "vocabulary.txt").write_text("\n".join(f"f{i}" for i in range(30)) + "\n")
        proc = self.train(".", cwd=here)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((here / "vocabulary.txt").read_text(),
                         "\n".join(f"f{i}" for i in range(30)) + "\n")

    def test_a_vocabulary_beside_a_features_model_stays_when_the_folder_could_be_swapped(self):
        # A folder of nothing but the model and the user's vocabulary (README
        # §6 has inspect read it from there): not swapped away whole.
        model = self.dir / "model"
        self.assertEqual(self.train(model).returncode, 0)
        words = "\n".join(f"f{i}" for i in range(30)) + "\n"
        (model / "vocabulary.txt").write_text(words)
        proc = self.train(model, "--set", "optimizer.epochs=2")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((model / "vocabulary.txt").read_text(), words)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["model"])

    def test_dot_in_a_folder_of_other_files_gets_the_clear_error(self):
        folder = self.user_folder()
        before = snapshot(folder)
        self.assert_refused(self.train(".", cwd=folder), "no bagel model", "--force")
        self.assertEqual(snapshot(folder), before)


class ReplacedFiles(TrainingCase):
    """An output that exists is replaced as the shell's `>` would write it: a
    symbolic link is written through and stays a link, and a file keeps its
    permissions."""

    def model(self):
        model = self.dir / "model"
        self.assertEqual(self.train(model).returncode, 0)
        return model

    def predict(self, model, output):
        return run_bagel("predict", "-m", model, "-i", self.data / "train.npz", "-o", output, "-q")

    def test_a_symlinked_prediction_file_is_written_through(self):
        model = self.model()
        real = self.dir / "results" / "predictions.csv"
        real.parent.mkdir()
        real.write_text("old\n")
        link = self.dir / "latest.csv"
        link.symlink_to(real)
        proc = self.predict(model, link)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(link.is_symlink(), "the link was replaced by a file")
        self.assertEqual(len(real.read_text().splitlines()), 200)
        self.assertEqual(sorted(p.name for p in real.parent.iterdir()), ["predictions.csv"])

    def test_a_dangling_link_gets_the_file_it_names(self):
        model = self.model()
        real = self.dir / "predictions.csv"
        link = self.dir / "link.csv"
        link.symlink_to(real)
        self.assertEqual(self.predict(model, link).returncode, 0)
        self.assertTrue(link.is_symlink())
        self.assertEqual(len(real.read_text().splitlines()), 200)

    def test_a_loop_of_links_is_refused_and_stays_a_loop(self):
        # Renaming over a link of a loop would turn it into a file.
        model = self.model()
        first, second = self.dir / "loop1.csv", self.dir / "loop2.csv"
        first.symlink_to(second)
        second.symlink_to(first)
        for proc in (self.predict(model, first), self.train(first),
                     run_bagel("convert", self.data / "train.npz", first)):
            with self.subTest(args=proc.args[1:2]):
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertIn(f"{first}: ", proc.stderr)
                self.assertIn("is a loop of symbolic links", proc.stderr)
                self.assertTrue(first.is_symlink() and second.is_symlink())
        self.assertEqual(sorted(p.name for p in self.dir.glob("loop*")), ["loop1.csv", "loop2.csv"])

    def test_a_dangling_link_into_a_missing_folder_is_named(self):
        model = self.model()
        link = self.dir / "link.csv"
        link.symlink_to(self.dir / "gone" / "predictions.csv")
        proc = self.predict(model, link)
        self.assertEqual(proc.returncode, 1)
        self.assertIn(f"{link}: -o: cannot be created: it is a symbolic link to "
                      f"{self.dir / 'gone' / 'predictions.csv'}, and the folder {self.dir / 'gone'} "
                      "does not exist", proc.stderr)
        self.assertFalse((self.dir / "gone").exists())

    def test_a_replaced_file_keeps_its_permissions(self):
        model = self.model()
        out = self.dir / "predictions.csv"
        out.write_text("old\n")
        out.chmod(0o640)
        self.assertEqual(self.predict(model, out).returncode, 0)
        self.assertEqual(out.stat().st_mode & 0o7777, 0o640)
        self.assertEqual(len(out.read_text().splitlines()), 200)

    def test_a_model_folder_behind_a_link_is_retrained_in_place(self):
        real = self.dir / "models" / "v1"
        real.parent.mkdir()
        link = self.dir / "current"
        link.symlink_to(real, target_is_directory=True)
        self.assertEqual(self.train(link).returncode, 0)
        self.assertEqual(self.train(link).returncode, 0)
        self.assertTrue(link.is_symlink())
        self.assertEqual(sorted(p.name for p in real.iterdir()), MODEL_FILES)
        self.assertEqual(sorted(p.name for p in real.parent.iterdir()), ["v1"])


class UnswappableFolders(TrainingCase):
    """A model folder that cannot be swapped with a new sibling, a mount point
    or one whose parent takes no new entries, is refilled file by file
    (README section 5), not refused after the training."""

    def tearDown(self):
        self.doCleanups()  # unmount, chattr -i: before the folders are removed
        super().tearDown()

    def mount_tmpfs(self, folder):
        folder.mkdir()
        try:
            proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1600k", "tmpfs", str(folder)],
                                  capture_output=True)
        except FileNotFoundError:
            self.skipTest("no mount command")
        if proc.returncode != 0:
            self.skipTest("mount -t tmpfs is not permitted here")
        self.addCleanup(subprocess.run, ["umount", str(folder)], capture_output=True)

    def make_immutable(self, folder):
        try:
            proc = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
        except FileNotFoundError:
            self.skipTest("no chattr command")
        if proc.returncode != 0:
            self.skipTest("chattr +i is not permitted here")
        self.addCleanup(subprocess.run, ["chattr", "-i", str(folder)], capture_output=True)
        try:
            (folder / "probe").mkdir()
        except OSError:
            return
        self.skipTest("chattr +i does not stop new entries here (root without the attribute?)")

    def assert_retrained(self, model, before):
        after = snapshot(model)
        self.assertEqual(sorted(after), MODEL_FILES)  # no temporaries left inside
        self.assertNotEqual(after["weight.npy"], before["weight.npy"])
        self.assertEqual(json.loads(after["model.json"])["config"]["optimizer"]["epochs"], 3)

    def test_a_mount_point_is_retrained_file_by_file(self):
        mount = self.dir / "mp"
        self.mount_tmpfs(mount)
        self.assertEqual(self.train(mount).returncode, 0)
        before = snapshot(mount)
        proc = self.train(mount, "--set", "optimizer.epochs=3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assert_retrained(mount, before)
        self.assertEqual(sorted(p.name for p in self.dir.iterdir()), ["mp"])

    def test_a_folder_whose_parent_is_immutable_is_retrained_file_by_file(self):
        parent = self.dir / "parent"
        model = parent / "model"
        parent.mkdir()
        self.assertEqual(self.train(model).returncode, 0)
        before = snapshot(model)
        self.make_immutable(parent)
        proc = self.train(model, "--set", "optimizer.epochs=3")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assert_retrained(model, before)
        self.assertEqual(sorted(p.name for p in parent.iterdir()), ["model"])


class FileModes(TrainingCase):
    """A retrained model's files keep the modes of the files they replace
    (README §5), whichever way the folder is refilled."""

    def check_modes_kept(self, model, *extra):
        self.assertEqual(run_bagel("train", "--config", self.config, "-o", model, "-q",
                                   *extra).returncode, 0)
        for name in MODEL_FILES:
            os.chmod(model / name, 0o600)
        proc = run_bagel("train", "--config", self.config, "-o", model, "-q",
                         "--set", "optimizer.epochs=2", *extra)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual({name: oct(os.stat(model / name).st_mode & 0o777) for name in MODEL_FILES},
                         {name: oct(0o600) for name in MODEL_FILES})

    def test_a_folder_swapped_whole(self):
        self.check_modes_kept(self.dir / "model")

    def test_a_folder_refilled_file_by_file(self):
        model = self.dir / "mine"
        model.mkdir()
        (model / "notes.md").write_text("mine\n")
        self.check_modes_kept(model, "--force")


class UnderStrace(unittest.TestCase):
    """Runs bagel under strace, which delivers a signal as the Nth call of a
    kind starts: the moments a test could not hit by timing."""

    def setUp(self):
        import shutil
        self.strace = shutil.which("strace")
        if self.strace is None:
            self.skipTest("strace is not installed (scripts/deps.sh installs it)")
        self._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-strace-")
        self.tmp = Path(self._tmp.name)
        write_labeled_set(self.tmp, 200, 30, 0.2, 11, ("a", "b"))
        self.config = self.tmp / "cfg.json"
        self.config.write_text(json.dumps({"train": {"features": "train.npz", "labels": "train.labels"},
                                           "optimizer": {"epochs": 1}}))

    def tearDown(self):
        self._tmp.cleanup()

    def train_signalled(self, call, when, sig, output, *extra):
        return subprocess.run(
            [self.strace, "-f", "-o", "/dev/null", "-e", f"trace={call}", "-e",
             f"inject={call}:signal={sig}:when={when}", BAGEL, "train", "--config", self.config,
             "-o", output, "-q", *extra],
            capture_output=True, text=True, timeout=120)


class SignalDuringTheCommit(UnderStrace):
    """A folder that holds the user's files gets the model file by file: the
    old model.json goes, the arrays are renamed in, the new model.json last.
    A SIGTERM at any of those steps (strace delivers it as the step's system
    call starts) waits until the new model is whole: the folder always holds
    one model, never arrays without their model.json."""

    def test_every_step_of_a_file_by_file_commit(self):
        models = {}
        for seed in (1, 2):
            out = self.tmp / f"ref{seed}"
            run_bagel("train", "--config", self.config, "-o", out, "-q", "--set", f"optimizer.seed={seed}")
            models[seed] = snapshot(out)
        for call in ("unlink", "rename", "renameat2"):
            for when in range(1, 5):
                with self.subTest(call=call, when=when):
                    folder = self.tmp / f"{call}-{when}"
                    folder.mkdir()
                    (folder / "notes.md").write_text("mine\n")
                    for name, data in models[1].items():
                        (folder / name).write_bytes(data)
                    proc = self.train_signalled(call, when, "SIGTERM", folder, "--set", "optimizer.seed=2")
                    self.assertIn(proc.returncode, (0, 143), proc.stderr)
                    files = snapshot(folder)
                    self.assertEqual(files.pop("notes.md"), b"mine\n")
                    self.assertEqual(sorted(files), MODEL_FILES)
                    seed = json.loads(files["model.json"])["config"]["optimizer"]["seed"]
                    for name in ("weight.npy", "bias.npy"):
                        self.assertTrue(files[name] == models[seed][name],
                                        f"{name} is not the seed {seed} model's")


class MoveAcrossFileSystems(UnderStrace):
    """Where the folder swap and the moves into the folder both fail as
    across file systems (EXDEV, strace injects it: a mount point the check
    did not see), the new files are copied in, then renamed into place as
    in any file-by-file commit: the model is the one trained, and no
    temporary stays."""

    def test_the_model_is_copied_in(self):
        reference = self.tmp / "reference"
        self.assertEqual(run_bagel("train", "--config", self.config, "-o", reference, "-q").returncode, 0)
        model = self.tmp / "model"
        self.assertEqual(run_bagel("train", "--config", self.config, "-o", model, "-q").returncode, 0)
        # Renames 1-3 put each file in place inside the new folder; the
        # swap is renameat2's first call; renames 4-6 move the files in.
        proc = subprocess.run(
            [self.strace, "-f", "-o", "/dev/null", "-e", "trace=rename,renameat2",
             "-e", "inject=renameat2:error=EXDEV:when=1", "-e", "inject=rename:error=EXDEV:when=4..6",
             BAGEL, "train", "--config", self.config, "-o", model, "-q"],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        files, expected = snapshot(model), snapshot(reference)
        self.assertEqual(sorted(files), MODEL_FILES)
        for name in ("weight.npy", "bias.npy"):
            self.assertTrue(files[name] == expected[name], f"{name} is not the trained one")
        self.assertEqual(json.loads(files["model.json"])["config"]["output"], str(model))
        self.assertEqual(sorted(p.name for p in self.tmp.iterdir()),
                         ["cfg.json", "model", "reference", "train.labels", "train.npz"])


class SignalWhileVectorizing(UnderStrace):
    """vectorize writes its matrix, labels and vocabulary to temporaries and
    renames them all with signals deferred: a SIGTERM at any rename leaves
    the old set or the whole new one, never a new matrix beside old labels."""

    OUTPUTS = ("x.npz", "labels.txt", "vocabulary.txt")

    def vectorize(self, text, folder, *strace):
        return subprocess.run(
            [*strace, BAGEL, "vectorize", "-q", "--threads", "1", "-i", text, "-o", folder / "x.npz",
             "--labels-out", folder / "labels.txt", "--vocabulary-out", folder / "vocabulary.txt"],
            capture_output=True, text=True, timeout=120)

    def outputs(self, folder):
        return {name: (folder / name).read_bytes() for name in self.OUTPUTS}

    def test_a_signal_at_any_rename_leaves_one_whole_set(self):
        sets = {}
        for name, words in (("old", "alpha beta gamma"), ("new", "delta epsilon zeta eta")):
            text = self.tmp / f"{name}.ft"
            text.write_text("".join(f"__label__{name}{i % 3} {words} {i}\n" for i in range(50)))
            ref = self.tmp / f"ref-{name}"
            ref.mkdir()
            self.assertEqual(self.vectorize(text, ref).returncode, 0)
            sets[name] = self.outputs(ref)
        for when in range(1, 8):
            with self.subTest(when=when):
                folder = self.tmp / f"rename-{when}"
                folder.mkdir()
                for name, data in sets["old"].items():
                    (folder / name).write_bytes(data)
                strace = [self.strace, "-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                          "-e", f"inject=rename,renameat,renameat2:signal=SIGTERM:when={when}"]
                proc = self.vectorize(self.tmp / "new.ft", folder, *strace)
                self.assertIn(proc.returncode, (0, 143), proc.stderr)
                got = self.outputs(folder)
                self.assertIn(got, (sets["old"], sets["new"]), "a mix of the old and the new outputs")
                self.assertEqual(sorted(p.name for p in folder.iterdir()), sorted(self.OUTPUTS))


class SignalWhilePredicting(UnderStrace):
    """predict -o with --metrics puts both files in place together, signals
    deferred: a SIGTERM at any rename leaves both old or both new."""

    def predict(self, model, folder, *strace):
        return subprocess.run(
            [*strace, BAGEL, "predict", "-q", "-m", model, "-i", self.tmp / "train.npz", "-l",
             self.tmp / "train.labels", "--proba", "-o", folder / "p.csv", "--metrics", folder / "m.json"],
            capture_output=True, text=True, timeout=120)

    def test_a_signal_at_any_rename_leaves_both_files_of_one_run(self):
        sets = {}
        for seed in (1, 2):
            model = self.tmp / f"model{seed}"
            run_bagel("train", "--config", self.config, "-o", model, "-q", "--set", f"optimizer.seed={seed}")
            ref = self.tmp / f"ref{seed}"
            ref.mkdir()
            self.assertEqual(self.predict(model, ref).returncode, 0)
            sets[seed] = snapshot(ref)
        self.assertNotEqual(sets[1], sets[2])
        for when in range(1, 5):
            with self.subTest(when=when):
                folder = self.tmp / f"rename-{when}"
                folder.mkdir()
                for name, data in sets[1].items():
                    (folder / name).write_bytes(data)
                strace = [self.strace, "-f", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                          "-e", f"inject=rename,renameat,renameat2:signal=SIGTERM:when={when}"]
                proc = self.predict(self.tmp / "model2", folder, *strace)
                self.assertIn(proc.returncode, (0, 143), proc.stderr)
                self.assertIn(snapshot(folder), (sets[1], sets[2]), "one file of each run")


class SignalWhileStarting(UnderStrace):
    def test_sigint_at_any_file_opened_leaves_no_folder_of_the_runs_making(self):
        # train -o new/a/b creates new/ and new/a/ (and its claim) before it
        # reads the data; a SIGINT at any of the first files it opens leaves
        # neither behind.
        for when in range(1, 60, 3):
            with self.subTest(when=when):
                out = self.tmp / f"new{when}"
                proc = self.train_signalled("openat", when, "SIGINT", out / "a" / "b")
                # -2: before bagel's handlers were installed (the loader's files).
                self.assertIn(proc.returncode, (0, 130, -signal.SIGINT), proc.stderr)
                model_saved = (out / "a" / "b" / "model.json").exists()
                if proc.returncode != 0 and not model_saved:
                    left = [str(p.relative_to(self.tmp)) for p in out.rglob("*")] if out.exists() else []
                    self.assertFalse(out.exists(), f"left behind: {left}")


class ClosedOutputPipe(unittest.TestCase):
    def test_train_outlives_a_closed_stderr_pipe(self):
        # `bagel train ... 2>&1 | head -1`: head exits after the first
        # line; the progress lines then go nowhere, and the model is saved.
        with tempfile.TemporaryDirectory(prefix="bagel-interop-pipe-") as tmp:
            tmp = Path(tmp)
            write_labeled_set(tmp, 3000, 50, 0.2, 5, ("a", "b"))
            config = tmp / "cfg.json"
            config.write_text(json.dumps({"train": {"features": "train.npz", "labels": "train.labels"},
                                          "optimizer": {"epochs": 300}}))
            proc = subprocess.run(["sh", "-c", f'"{BAGEL}" train --config "{config}" -o "{tmp}/m" 2>&1 '
                                   '| head -1'],
                                  capture_output=True, text=True, timeout=300)
            self.assertIn("train:", proc.stdout)
            self.assertTrue((tmp / "m" / "model.json").exists(), proc.stdout + proc.stderr)


class Interrupts(unittest.TestCase):
    """A run stopped by SIGINT or SIGTERM removes its temporaries and exits
    with 128 + the signal. predict -o writes a temporary file from the start;
    fed by a FIFO that stays open, it is still running when the signal comes."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="bagel-interop-interrupt-")
        cls.dir = Path(cls._tmp.name)
        lines = [f"{i % 2} {i % 10}:1 {10 + i % 7}:2" for i in range(200)]
        (cls.dir / "train.svm").write_text("\n".join(lines) + "\n")
        cls.rows = "\n".join(lines[:20]) + "\n"
        cls.model = train_model(cls.dir, {"train": {"features": "train.svm"},
                                          "optimizer": {"epochs": 1}, "output": "model"})

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def interrupt_predict(self, signal_number):
        case = Path(tempfile.mkdtemp(dir=self.dir))
        fifo = case / "rows.fifo"
        os.mkfifo(fifo)
        out = case / "out"
        out.mkdir()
        with subprocess.Popen([BAGEL, "predict", "-m", self.model, "-i", fifo,
                               "--zero-based", "true", "-o", out / "p.txt", "--quiet"],
                              stderr=subprocess.PIPE, text=True) as proc:
            temporaries, status = self.signal_when_writing(proc, fifo, out, signal_number)
        self.assertTrue(all(name.startswith("p.txt.tmp-") for name in temporaries), temporaries)
        self.assertEqual(status, 128 + signal_number)
        self.assertEqual(list(out.iterdir()), [], "the temporary is removed, no p.txt appears")

    def signal_when_writing(self, proc, fifo, out, signal_number):
        """Feeds a few rows, waits for predict's temporary output file, then
        signals; returns the temporaries seen and the exit status."""
        try:
            with open(fifo, "w") as writer:  # blocks until bagel opens it
                writer.write(self.rows)
                writer.flush()
                deadline = time.monotonic() + 20
                while not any(out.iterdir()):
                    if proc.poll() is not None:
                        self.fail("predict ended early: " + proc.stderr.read())
                    self.assertLess(time.monotonic(), deadline, "no temporary file appeared")
                    time.sleep(0.02)
                temporaries = [p.name for p in out.iterdir()]
                proc.send_signal(signal_number)
                status = proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        return temporaries, status

    def test_sigint_removes_the_temporary_and_exits_130(self):
        self.interrupt_predict(signal.SIGINT)

    def test_sigterm_removes_the_temporary_and_exits_143(self):
        self.interrupt_predict(signal.SIGTERM)


if __name__ == "__main__":
    unittest.main()
