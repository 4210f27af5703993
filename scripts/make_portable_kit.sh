#!/usr/bin/env bash
# Packs what scripts/run_portable_kit.sh needs to measure bagel on another
# x86-64 Linux machine that has a compiler and Python with numpy, scipy,
# scikit-learn and pybind11 but none of bagel's build dependencies (a lent
# 16-core machine, say): portable builds for x86-64-v3 (AVX2) and -v4
# (AVX-512) with the shared libraries they load, the headers the Python
# module compiles against, the real bench sets of runs/bench-data with their
# .npz recompressed (the generated two are made there), and the Python
# package's sources. Everything goes into runs/kit (about 40 MB).
#
#   scripts/make_portable_kit.sh          # builds build-v3 and build-v4 as needed
#   then, there, from the repository root: scripts/run_portable_kit.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_PYTHON_PACKAGES[@]}" "${BAGEL_BENCH_PACKAGES[@]}"
[ -d runs/bench-data ] || { echo "runs/bench-data is missing: run scripts/make_bench_data.py" >&2; exit 1; }
kit=runs/kit
rm -rf "$kit.tmp" && mkdir -p "$kit.tmp/python/bagel" "$kit.tmp/data"
work=$(mktemp -d)
trap 'rm -rf "$work" "$kit.tmp"' EXIT

for arch in x86-64-v3 x86-64-v4; do
  dir=build-${arch#x86-64-}  # build-v3, build-v4
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DBAGEL_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=$arch \
    -DBAGEL_BUILD_TESTS=OFF -DBAGEL_BUILD_PYTHON=ON >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target bagel >/dev/null
  tar cJf "$kit.tmp/bin-$arch.tar.xz" -C "$dir" bagel libbagel_core.a
done
cp build-v3/python/bagel/*.py "$kit.tmp/python/bagel/" 2>/dev/null ||
  cp src/python/bagel/*.py "$kit.tmp/python/bagel/"

# The shared libraries outside glibc and libstdc++ that bagel loads.
mkdir -p "$work/devlib"
libraries() {  # what $1 loads, but the C and C++ runtimes every machine has
  ldd "$1" | awk '/=> \// {print $3}' |
    { grep -Ev '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' || true; }
}
for lib in $(libraries build-v3/bagel); do cp -L "$lib" "$work/devlib/"; done
for lib in "$work"/devlib/*; do  # and what those load in turn
  for dep in $(libraries "$lib"); do
    [ -e "$work/devlib/$(basename "$dep")" ] || cp -L "$dep" "$work/devlib/"
  done
done
tar cJf "$kit.tmp/libs.tar.xz" -C "$work" devlib
mkdir -p "$work/inc" && cp -r /usr/include/eigen3 /usr/include/nlohmann "$work/inc/"
tar cJf "$kit.tmp/inc.tar.xz" -C "$work" inc

/usr/bin/python3 - "$kit.tmp/data" <<'PY'
import shutil, sys
from pathlib import Path
import scipy.sparse as sp
out = Path(sys.argv[1])
for folder in sorted(Path("runs/bench-data").iterdir()):
    if not (folder / "info.json").exists() or folder.name.startswith("gen-"):
        continue
    (out / folder.name).mkdir()
    for f in folder.iterdir():
        if f.suffix == ".npz":
            sp.save_npz(out / folder.name / f.name, sp.load_npz(f), compressed=True)
        else:
            shutil.copy(f, out / folder.name / f.name)
PY
rm -rf "$kit" && mv "$kit.tmp" "$kit"
du -sh "$kit"
