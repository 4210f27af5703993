#!/usr/bin/env bash
# Benchmarks bagel against its peers (scikit-learn SGDClassifier, LIBLINEAR,
# PyTorch EmbeddingBag, fastText) on the shipped fortunes data and on a
# generated set, all measured in the same run. Writes a Markdown table and a
# CSV into --out (default runs/peers/) and prints the table.
#
#   scripts/bench_peers.sh [--quick] [--rows N] [--features F] [--repeats R]
#                          [--out DIR] [--bagel PATH] [any option of bench_peers.py run]
#
# --quick: a smoke test of a few minutes at most (fortunes + a 6000-row
# generated set). The default run (600k generated rows, 2^20 features, binary
# and 20 classes) takes about 30 minutes on 2 cores. `scripts/bench_peers.py
# run --help` lists every option.
#
# Installs what is missing (as root; otherwise prints the apt-get command and
# stops) and builds bagel (Release, into build/) unless --bagel is given.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'
}

cmdline="scripts/bench_peers.sh"
for a in "$@"; do cmdline+=" $(printf '%q' "$a")"; done
bagel=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; echo; /usr/bin/python3 scripts/bench_peers.py run --help 2>/dev/null || true; exit 0 ;;
    --bagel) [ $# -ge 2 ] || { echo "bench_peers.sh: --bagel needs a path" >&2; exit 2; }
             bagel=$2; shift 2 ;;
    --bagel=*) bagel=${1#--bagel=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

source scripts/deps.sh
# bagel's build dependencies, the peers, and what the harness itself runs
# (/usr/bin/time, lscpu from util-linux, numpy/scipy).
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" python3 python3-numpy python3-scipy \
  python3-sklearn python3-torch liblinear-tools fasttext time util-linux

if [ -z "$bagel" ]; then
  bagel=build/bagel
  echo "== building bagel (Release, build/)" >&2
  if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null &&
         cmake --build build -j "$(nproc)" --target bagel >/dev/null; }; then
    if [ -x "$bagel" ]; then
      echo "bench_peers.sh: warning: the build failed; benchmarking the existing $bagel" >&2
    else
      echo "bench_peers.sh: error: the build failed and there is no $bagel" >&2
      exit 1
    fi
  fi
fi
if [ ! -x "$bagel" ]; then
  echo "bench_peers.sh: error: $bagel is not an executable bagel binary" >&2
  exit 1
fi

exec /usr/bin/python3 scripts/bench_peers.py run --bagel "$bagel" --cmdline "$cmdline" \
  "${args[@]+"${args[@]}"}"
