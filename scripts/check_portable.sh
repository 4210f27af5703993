#!/usr/bin/env bash
# Checks that a portable build (-DBAGEL_NATIVE=OFF: no -march=native, so no
# AVX-512 or FMA) trains the same model as the native build, within float
# tolerance: both train configs/example.json, then the weights and the test
# probabilities are compared. The two builds round differently (FMA
# contraction), so bit-identity is not expected; agreement to a relative
# 1e-3 of the largest weight and identical predicted classes is.
#
#   scripts/check_portable.sh        # builds build/ and build-portable/ as needed
#
# Not part of scripts/test.sh: it needs a second full build (minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" python3 python3-numpy
# build/ as the other scripts configure it (native by default); build-portable/ beside it.
[ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake -S . -B build-portable -DCMAKE_BUILD_TYPE=Release -DBAGEL_NATIVE=OFF \
  -DBAGEL_BUILD_TESTS=OFF >/dev/null
for dir in build build-portable; do
  cmake --build "$dir" -j"$(nproc)" --target bagel >/dev/null
done
grep -q "BAGEL_NATIVE:BOOL=ON" build/CMakeCache.txt ||
  echo "note: build/ is configured with BAGEL_NATIVE=OFF, so both builds are portable" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for dir in build build-portable; do
  "$dir/bagel" train --config configs/example.json --quiet --set "output=$out/$dir" >/dev/null
  "$dir/bagel" predict -m "$out/$dir" -i data/fortunes-multi/test.npz --proba -o "$out/$dir.csv" -q
done
/usr/bin/python3 - "$out" <<'PY'
import sys
import numpy as np
out = sys.argv[1]
a = np.load(f"{out}/build/weight.npy")
b = np.load(f"{out}/build-portable/weight.npy")
pa = np.loadtxt(f"{out}/build.csv", delimiter=",", skiprows=1)
pb = np.loadtxt(f"{out}/build-portable.csv", delimiter=",", skiprows=1)
dw = float(np.abs(a - b).max())
scale = float(np.abs(a).max())
dp = float(np.abs(pa - pb).max())
agree = float((pa.argmax(1) == pb.argmax(1)).mean())
print(f"weights {a.shape}: max |native - portable| = {dw:.3g} (max |w| = {scale:.3g}, "
      f"relative {dw / scale:.3g}); probabilities: max diff {dp:.3g}; same class on "
      f"{agree:.1%} of {len(pa)} test rows")
ok = dw <= 1e-3 * scale and dp <= 1e-3 and agree == 1.0
print("OK: native and portable builds agree within float tolerance" if ok else
      "FAIL: native and portable builds disagree beyond float tolerance")
sys.exit(0 if ok else 1)
PY
