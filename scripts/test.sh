#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test (C++ unit tests and the
# interop tests against numpy/scipy/scikit-learn/LIBLINEAR/PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}" "${BAGEL_TEST_PACKAGES[@]}"
build_bagel build
ctest --test-dir build --output-on-failure -j "$(nproc)"
