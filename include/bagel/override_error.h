// Errors in a config value that came from `--set KEY=VALUE` name that --set,
// not the config file: the file never held the value, and a message that
// sends the user to it sends them to the wrong place. They are usage errors
// (exit status 2): the command line is what needs fixing.
#pragma once

#include <string>
#include <vector>

#include "bagel/error.h"

namespace bagel {

// Rethrows `e`, raised while validating a config with `overrides` applied:
// as UsageError("--set KEY=VALUE", e.message()) for the last override whose
// KEY is e.field(), lies inside it or contains it; otherwise as
// FileError(config_path, e.what()), or as `e` itself when there is no file
// (config_path empty: the config was built from overrides alone). The
// overrides' keys are relative to `section` when it is given (vectorize's
// "--set min_df=2" is the field "vectorizer.min_df").
[[noreturn]] void rethrow_config_error(const ConfigError& e, const std::string& config_path,
                                       const std::vector<std::string>& overrides,
                                       const std::string& section = "");

}  // namespace bagel
