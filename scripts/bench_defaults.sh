#!/usr/bin/env bash
# How accurate is bagel with its defaults? On real data sets made from Debian
# text and two generated ones, compares bagel's defaults (a config naming only
# train and output) with the best of a grid of bagel settings (chosen on the
# valid split), LIBLINEAR -s 0 -c 1 and SGDClassifier(loss="log_loss").
# Writes runs/bench-defaults/defaults.md and defaults.csv and prints the table.
#
#   scripts/bench_defaults.sh [--quick] [--sets a,b] [--bagel PATH]
#       [--config-extra KEY=VALUE ...] [--gen-rows N] [--data DIR] [--out DIR]
#       [any option of bench_defaults.py]
#
# --quick: a smoke run of about 2 min (a 2-point grid; no grid and no LIBLINEAR
# on the generated sets).
# --config-extra: a --set for the defaults run only, to try candidate defaults
# without rebuilding (e.g. --config-extra optimizer.schedule=linear).
# --gen-rows: rows of each generated set (default 200000; the sets are remade
# when it changes). The data goes to runs/bench-data/ (made once, ~5 min).
#
# Installs what is missing (as root; otherwise prints the apt-get command and
# stops) and builds bagel (Release, into build/) unless --bagel is given.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
}

cmdline="scripts/bench_defaults.sh"
for a in "$@"; do cmdline+=" $(printf '%q' "$a")"; done
bagel=""
data=runs/bench-data
sets=""
data_args=()
args=()
need_value() { [ $# -ge 2 ] || { echo "bench_defaults.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; echo; exec /usr/bin/python3 scripts/bench_defaults.py --help ;;
    --bagel) need_value "$@"; bagel=$2; shift 2 ;;
    --bagel=*) bagel=${1#--bagel=}; shift ;;
    --gen-rows) need_value "$@"; data_args+=(--gen-rows "$2"); shift 2 ;;
    --gen-rows=*) data_args+=(--gen-rows "${1#--gen-rows=}"); shift ;;
    # Both scripts need these: the data is made for the sets that will run.
    --data) need_value "$@"; data=$2; shift 2 ;;
    --data=*) data=${1#--data=}; shift ;;
    --sets) need_value "$@"; sets=$2; shift 2 ;;
    --sets=*) sets=${1#--sets=}; shift ;;
    *) args+=("$1"); shift ;;
  esac
done

source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_BENCH_PACKAGES[@]}"

if [ -z "$bagel" ]; then
  bagel=build/bagel
  echo "== building bagel (Release, build/)" >&2
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "$(nproc)" --target bagel >/dev/null
fi
if [ ! -x "$bagel" ]; then
  echo "bench_defaults.sh: error: $bagel is not an executable bagel binary" >&2
  exit 1
fi

# Sets already made are kept, so this is quick after the first run.
echo "== data ($data)" >&2
/usr/bin/python3 scripts/make_bench_data.py --out "$data" --bagel "$bagel" \
  ${sets:+--sets "$sets"} "${data_args[@]+"${data_args[@]}"}" >&2

exec /usr/bin/python3 scripts/bench_defaults.py --bagel "$bagel" --data "$data" ${sets:+--sets "$sets"} \
  --cmdline "$cmdline" "${args[@]+"${args[@]}"}"
