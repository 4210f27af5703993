// Errors in a config value that came from `--set KEY=VALUE` name that --set,
// not the config file: the file never held the value, and a message that
// sends the user to it sends them to the wrong place. They are usage errors
// (exit status 2): the command line is what needs fixing.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// Rethrows `e`, a file that could not be read, as UsageError("--set
// KEY=VALUE", e.what()) when the file does not exist and the last override
// of KEY named it (`resolved`: the config with its paths resolved, whose
// value at KEY is the file): a path typed on the command line is what needs
// fixing there, as for -i. Returns otherwise.
void rethrow_missing_override_input(const FileError& e, const nlohmann::json& resolved,
                                    const std::vector<std::string>& overrides);

}  // namespace bagel
