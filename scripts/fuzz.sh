#!/usr/bin/env bash
# Fuzzes every reader (tests/fuzz/targets.h) with libFuzzer under
# AddressSanitizer + UndefinedBehaviorSanitizer, one reader after another:
#
#   scripts/fuzz.sh [SECONDS_PER_READER] [--jobs N] [--only READER]
#
# Installs what is missing (clang, its runtimes, as scripts/deps.sh lists),
# builds the fuzzers into build-fuzz/, and runs each for SECONDS_PER_READER
# (default 60) from its seed corpus tests/fuzz/corpus/<reader>/ and the
# crashes kept in tests/fuzz/regressions/<reader>/. New inputs go to
# build-fuzz/corpus/<reader>/ (kept between runs, never into the
# repository). Stops at the first crash and prints how to reproduce it;
# otherwise prints the executions per reader.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh

seconds=60
jobs=1
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *[!0-9]*|'') echo "fuzz.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    *) seconds=$1; shift ;;
  esac
done

readers=(npy npz svmlight labels config model text_corpus fasttext delimited folder)
[ -n "$only" ] && readers=("$only")

ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_FUZZ_PACKAGES[@]}"
build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBAGEL_FUZZ=ON -DBAGEL_SANITIZE=address,undefined -DBAGEL_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${readers[@]/#/fuzz_}" >&2

# One thread per fuzzer process: the parallelism is --jobs.
export OMP_NUM_THREADS=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
summary=()
total=0
for reader in "${readers[@]}"; do
  corpus=$build/corpus/$reader
  crashes=$build/crashes/$reader
  logs=$build/logs/$reader
  mkdir -p "$corpus" "$crashes" "$logs" "tests/fuzz/regressions/$reader"
  echo "== $reader: ${seconds}s, $jobs job(s); logs in $logs/" >&2
  # N plain fuzzer processes on one corpus folder (each picks up what the
  # others add): libFuzzer's fork mode restarts its workers every few
  # seconds, which halved the executions here.
  declare -A log_of=()
  for ((job = 0; job < jobs; job++)); do
    "$build/tests/fuzz/fuzz_$reader" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$crashes/" \
      "$corpus" "tests/fuzz/corpus/$reader" "tests/fuzz/regressions/$reader" \
      >"$logs/$job.log" 2>&1 &
    log_of[$!]=$logs/$job.log
  done
  while [ ${#log_of[@]} -gt 0 ]; do
    finished=""
    if wait -n -p finished "${!log_of[@]}"; then
      unset "log_of[$finished]"
      continue
    fi
    # The first crash stops the other jobs.
    kill "${!log_of[@]}" 2>/dev/null || true
    log=${log_of[$finished]}
    tail -n 40 "$log" >&2
    artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -n 1 | cut -d' ' -f5 || true)
    echo "fuzz.sh: $reader crashed; log: $log" >&2
    if [ -n "$artifact" ]; then
      echo "reproduce: $build/tests/fuzz/fuzz_$reader $artifact" >&2
      echo "keep it: cp $artifact tests/fuzz/regressions/$reader/ (bagel_tests replays it)" >&2
    fi
    exit 1
  done
  unset log_of
  runs=$(cat "$logs"/*.log | grep -o "stat::number_of_executed_units: [0-9]*" |
         awk '{s += $2} END {print s + 0}')
  total=$((total + runs))
  summary+=("$(printf '%-12s %11d executions %7d/s  %5d inputs in %s' "$reader" "$runs" \
               $((runs / seconds)) "$(find "$corpus" -type f | wc -l)" "$corpus")")
done
printf '%s\n' "${summary[@]}"
printf '%-12s %11d executions\n' "total" "$total"
