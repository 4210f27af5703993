# Sourced by the other scripts: installs the Debian packages bagel needs.
# As root it runs apt-get; otherwise it prints the exact command and stops.

BAGEL_BUILD_PACKAGES=(g++ make cmake pkg-config libeigen3-dev nlohmann-json3-dev libgtest-dev
                      libomp-dev libzip-dev zlib1g-dev libcli11-dev libicu-dev)
# The Python package (cmake -DBAGEL_BUILD_PYTHON=ON): pybind11 and the
# headers of Debian's python3, and what the estimator imports.
BAGEL_PYTHON_PACKAGES=(pybind11-dev python3-pybind11 python3-dev python3-numpy python3-scipy
                       python3-sklearn)
# The oracles of the interop tests: numpy/scipy/scikit-learn, LIBLINEAR, PyTorch,
# fastText (the fastText text format); pytest and raw text (Debian's fortunes,
# in English, German, Russian and Chinese) for the text and Python package tests.
BAGEL_TEST_PACKAGES=(python3 python3-numpy python3-scipy python3-sklearn liblinear-tools
                     python3-torch python3-pytest fasttext fortunes fortunes-de fortunes-ru
                     fortunes-zh unicode-data wngerman wfrench strace)
# clang with its libFuzzer and sanitizer runtimes, and LLVM's OpenMP, whose
# libarcher tells ThreadSanitizer about OpenMP's synchronisation: for
# scripts/fuzz.sh and the sanitizer stage of scripts/test.sh.
BAGEL_FUZZ_PACKAGES=(clang libclang-rt-dev libomp-dev)
# The defaults benchmark (scripts/bench_defaults.sh): the Debian text its real
# data sets are made of (scripts/make_bench_data.py) and the peers it runs.
BAGEL_BENCH_PACKAGES=(python3 python3-numpy python3-scipy python3-sklearn liblinear-tools
                      fortunes wamerican wngerman wfrench wspanish witalian wportuguese wdutch
                      manpages manpages-dev perl-doc python3-torch python3-sympy linux-doc)

# ensure_packages PKG...: installs those not yet installed.
ensure_packages() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "bagel needs these Debian packages: ${missing[*]}" >&2
    echo "Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "Installing: ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# build_bagel DIR: configures and builds bagel (Release) into DIR.
build_bagel() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j "$(nproc)"
}
