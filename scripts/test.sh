#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (C++ unit tests, the
# interop tests against numpy/scipy/scikit-learn/LIBLINEAR/PyTorch, and the
# Python package's pytest tests, scikit-learn's check_estimator among them),
# then the C++ unit tests again under AddressSanitizer + UndefinedBehavior-
# Sanitizer and ThreadSanitizer (scripts/sanitizers.sh; BAGEL_SANITIZERS=0
# skips that stage for a quick local run).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_PYTHON_PACKAGES[@]}" "${BAGEL_TEST_PACKAGES[@]}"
build_bagel build -DBAGEL_BUILD_PYTHON=ON
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${BAGEL_SANITIZERS:-1}" != 0 ]; then
  bash scripts/sanitizers.sh
fi
