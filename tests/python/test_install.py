"""`cmake --install BUILD --component python --prefix P` puts the package
under P, as the rest of the install goes, where an interpreter given P's
site-packages imports it: the module built here, not another. That is
Debian's interpreter's case (src/python/CMakeLists.txt); a virtualenv's, or
a BAGEL_PYTHON_INSTALL_DIR given as an absolute path, installs outside any
prefix, which a test must not do."""

import glob
import os
import re
import subprocess
import sys
import sysconfig

import pytest

import bagel


@pytest.fixture
def build_dir():
    path = os.environ.get("BAGEL_BUILD")
    if not path:
        pytest.skip("BAGEL_BUILD (the CMake build folder, set by ctest) is needed")
    if sys.prefix != sys.base_prefix or not sysconfig.get_path("platlib").startswith("/usr/local/"):
        pytest.skip("this interpreter installs into its own site-packages, not under a prefix")
    with open(os.path.join(path, "CMakeCache.txt"), encoding="utf-8") as f:
        given = re.search(r"^BAGEL_PYTHON_INSTALL_DIR:PATH=(.*)$", f.read(), re.M)
    if given and given.group(1).startswith("/"):
        pytest.skip("BAGEL_PYTHON_INSTALL_DIR is an absolute path: " + given.group(1))
    return path


def test_install_with_a_prefix_stays_under_it(build_dir, tmp_path):
    prefix = tmp_path / "prefix"
    done = subprocess.run(["cmake", "--install", build_dir, "--component", "python",
                           "--prefix", str(prefix)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    installed = [line.split(": ", 1)[1] for line in done.stdout.splitlines()
                 if ": " in line and line.lstrip("- ").startswith(("Installing", "Up-to-date"))]
    assert installed, done.stdout
    for path in installed:
        assert path.startswith(str(prefix) + os.sep), path
    inits = glob.glob(str(prefix / "**" / "bagel" / "__init__.py"), recursive=True)
    assert len(inits) == 1, inits
    site = os.path.dirname(os.path.dirname(inits[0]))
    shown = subprocess.run(
        [sys.executable, "-c", "import bagel, bagel._core; print(bagel.__file__); print(bagel.__version__)"],
        capture_output=True, text=True, cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": site})
    assert shown.returncode == 0, shown.stderr
    where, version = shown.stdout.split()
    assert where == inits[0]
    assert version == bagel.__version__
