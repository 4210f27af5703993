#!/usr/bin/env bash
# Measures, on a machine without bagel's build dependencies, from the kit of
# scripts/make_portable_kit.sh (runs/kit): the thread scaling of `bagel
# train` with its defaults (scripts/bench_threads.py: threads 1 against the
# default on every bench set, then 1, 2, 4, 8, 16 threads on four) and
# BagelClassifier against SGDClassifier (scripts/bench_python.py, with the
# Python module compiled there against the kit's libbagel_core.a). Takes the
# AVX-512 build where the CPU has it. Writes its log and tables to $OUT
# (default /tmp/kit-out). Run from the repository root: python3 there needs
# numpy, scipy, scikit-learn and pybind11, and g++ for the module.
#
# Environment, to shorten a run: SETS (--sets of the first table, default
# all), REPEAT (3), COUNT_SETS (kernel-doc-20,kernel-doc-20-all,gen-binary,
# gen-20class), COUNTS (1,2,4,8,16), COUNT_REPEAT (2), PYTHON_SETS
# ("kernel-doc-20-all kernel-doc-20"), PYTHON_REPEATS (5), NO_GENERATED=1
# (skip making the generated sets).
set -u
root=$PWD
kit=$root/runs/kit
out=${OUT:-/tmp/kit-out}
mkdir -p "$out"
exec > >(tee "$out/log.txt") 2>&1
t0=$(date +%s)
stage() { echo "== $(($(date +%s) - t0)) s: $*"; }

stage start
lscpu | grep -E "Model name|^CPU\(s\)|Thread|L2|L3" ; nproc; python3 --version; g++ --version | head -1
x=$(mktemp -d)
tar xJf "$kit/libs.tar.xz" -C "$x" && tar xJf "$kit/inc.tar.xz" -C "$x"
export LD_LIBRARY_PATH=$x/devlib
arch=x86-64-v3
grep -qw avx512f /proc/cpuinfo && arch=x86-64-v4
mkdir -p "$x/bin" && tar xJf "$kit/bin-$arch.tar.xz" -C "$x/bin"
bagel=$x/bin/bagel
echo "build: $arch"
"$bagel" --version || { echo "bagel does not run here"; ldd "$bagel"; exit 1; }

# The Python module, compiled while the generated sets are made.
pyinc=$(python3 -c "import sysconfig; print(sysconfig.get_paths()['include'])")
pybind=$(python3 -c "import pybind11; print(pybind11.get_include())")
suffix=$(python3 -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
mkdir -p "$x/python" && cp -r "$kit/python/bagel" "$x/python/"
(g++ -march=$arch -O3 -DNDEBUG -fPIC -fvisibility=hidden -fno-trapping-math -fopenmp -std=gnu++20 \
   -DBAGEL_VERSION='"kit"' -Iinclude -isystem "$pyinc" -isystem "$pybind" -isystem "$x/inc/eigen3" \
   -isystem "$x/inc" -shared src/python/module.cpp src/python/fit.cpp src/python/csr_arrays.cpp \
   src/python/label_ids.cpp "$x/bin/libbagel_core.a" "$x"/devlib/libzip.so.* "$x"/devlib/libicu*.so.* -lz \
   -o "$x/python/bagel/_core$suffix" >"$x/pybuild.log" 2>&1; echo "module build: exit $?" >>"$x/pybuild.log") &
module=$!
data=$x/data
cp -r "$kit/data" "$data"
[ -n "${NO_GENERATED:-}" ] ||
  python3 scripts/make_bench_data.py --sets gen-binary,gen-20class --bagel "$bagel" --out "$data"
wait $module
tail -3 "$x/pybuild.log"
stage "data ready"

sets=()
[ -n "${SETS:-}" ] && sets=(--sets "$SETS")
python3 scripts/bench_threads.py --data "$data" --bagel "$bagel" "${sets[@]}" --threads 1,0 \
  --repeat "${REPEAT:-3}" --out "$x/threads-default" >"$x/threads-default.log" 2>&1
cp "$x/threads-default/threads.md" "$out/threads-default.md"; tail -3 "$x/threads-default.log"
stage "threads 1 against the default"

python3 scripts/bench_threads.py --data "$data" --bagel "$bagel" \
  --sets "${COUNT_SETS:-kernel-doc-20,kernel-doc-20-all,gen-binary,gen-20class}" \
  --threads "${COUNTS:-1,2,4,8,16}" --repeat "${COUNT_REPEAT:-2}" --out "$x/threads-counts" \
  >"$x/threads-counts.log" 2>&1
cp "$x/threads-counts/threads.md" "$out/threads-counts.md"; tail -3 "$x/threads-counts.log"
stage "explicit thread counts"

if PYTHONPATH=$x/python python3 -c "import bagel"; then
  for set in ${PYTHON_SETS:-kernel-doc-20-all kernel-doc-20}; do
    PYTHONUNBUFFERED=1 PYTHONPATH=$x/python python3 scripts/bench_python.py --data "$data" \
      --set "$set" --repeats "${PYTHON_REPEATS:-5}" --out "$out/python-$set.json" 2>&1 | tail -22
    stage "python $set"
  done
fi
(cd "$x" && tar czf "$out/results.tgz" threads-default/threads.* threads-default/results.json \
   threads-counts/threads.* threads-counts/results.json ./*.log)
rm -rf "$x"
stage end
