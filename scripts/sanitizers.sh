#!/usr/bin/env bash
# The C++ unit tests under the sanitizers, each build in its own folder
# (scripts/test.sh runs this after the Release tests; BAGEL_SANITIZERS=0
# skips it there):
#
#   build-asan  AddressSanitizer + UndefinedBehaviorSanitizer: every test of
#               bagel_tests (the fuzzers' seeds and regressions among them).
#   build-tsan  ThreadSanitizer: every test of bagel_tests.
#
# Both use clang and LLVM's OpenMP runtime (libomp). ThreadSanitizer sees no
# synchronisation inside an uninstrumented OpenMP runtime and would report
# every parallel region as a race; libomp's OMPT tool libarcher (shipped
# with libomp-dev) tells it about OpenMP's barriers, locks and tasks, and
# the runtime's own internals are left out (ignore_noninstrumented_modules).
# Hogwild updates shared weights without locks by design: its races are
# suppressed by tests/tsan_suppressions.txt, which says why, and only those.
#
#   scripts/sanitizers.sh [asan|tsan]...   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_FUZZ_PACKAGES[@]}"

stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(asan tsan)

# Debug with -O1: assertions on, frames kept, and a few times faster than -O0.
sanitized_tests() {
  local dir=$1 sanitize=$2
  CC=clang CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" \
    -DBAGEL_SANITIZE="$sanitize" >/dev/null
  cmake --build "$dir" -j "$(nproc)" --target bagel_tests
}

archer=$(find /usr/lib/llvm-*/lib -name libarcher.so 2>/dev/null | sort -V | tail -n 1)

for stage in "${stages[@]}"; do
  case "$stage" in
    asan)
      sanitized_tests build-asan address,undefined
      echo "== AddressSanitizer + UndefinedBehaviorSanitizer: bagel_tests" >&2
      ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1 \
      UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        build-asan/tests/bagel_tests --gtest_brief=1
      ;;
    tsan)
      [ -n "$archer" ] || { echo "sanitizers.sh: libarcher.so not found (libomp-dev)" >&2; exit 1; }
      sanitized_tests build-tsan thread
      echo "== ThreadSanitizer: bagel_tests" >&2
      OMP_TOOL_LIBRARIES=$archer \
      TSAN_OPTIONS=halt_on_error=1:ignore_noninstrumented_modules=1:suppressions=$PWD/tests/tsan_suppressions.txt \
        build-tsan/tests/bagel_tests --gtest_brief=1
      ;;
    *) echo "sanitizers.sh: unknown stage '$stage' (asan, tsan)" >&2; exit 2 ;;
  esac
done
