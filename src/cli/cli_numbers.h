// Numeric options, checked on their text before CLI11 converts it. CLI11's
// own checks print their bounds in full ("0 to 2147483647"), say "Could not
// convert: --budget = x" for a word, take "1.5" for a range of integers and
// "nan" for a double. Every message here reads "expected ..., found 'TEXT'",
// a usage error (exit 2) as every other option's.
#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace bagel::cli {

// A decimal integer in [lo, hi]; "expected an integer >= lo" when hi is
// left at the most an int holds, and the whole range for a value above it.
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi = std::numeric_limits<int>::max());
// A decimal integer >= 1; one too large for 64 bits is taken too (predict's
// --top-k: above the class count means every class).
CLI::Validator at_least_one();
// A decimal integer in [0, 2^64 - 1] (a seed): CLI11 reads "-1" as 2^64 - 1.
CLI::Validator unsigned_64();
// A finite number > lo (open) or >= lo (closed).
CLI::Validator number_above(double lo);
CLI::Validator number_at_least(double lo);
// A number in [0, 1].
CLI::Validator probability();

}  // namespace bagel::cli
