// Paths on the command line: inputs that may be "-" (standard input) or a
// pipe.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace bagel::cli {

// Accepts "-" and any existing path that is not a folder (a FIFO, /dev/stdin
// and /dev/fd/N exist as paths); CLI11's ExistingFile refuses "-".
CLI::Validator input_path();

}  // namespace bagel::cli
