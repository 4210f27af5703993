#!/usr/bin/env bash
# Installs what is missing, builds, trains on the shipped example data
# (fortunes, multiclass) with configs/example.json, predicts the test split
# and prints the metrics. Needs no Python.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_packages "${BAGEL_BUILD_PACKAGES[@]}"
build_bagel build

data=data/fortunes-multi
echo "== bagel train --config configs/example.json"
build/bagel train --config configs/example.json
echo
echo "== bagel predict on $data/test.npz"
build/bagel predict --model runs/example --input "$data/test.npz" --labels "$data/test.labels" \
  --proba --output runs/example/test-proba.csv --metrics runs/example/test-metrics.json
echo
echo "First predictions (runs/example/test-proba.csv):"
head -n 4 runs/example/test-proba.csv
echo "Metrics (runs/example/test-metrics.json):"
head -n 6 runs/example/test-metrics.json
