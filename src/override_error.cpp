#include "bagel/override_error.h"

namespace bagel {

namespace {

// "optimizer.lr" is about "optimizer.lr", "optimizer.lr.x" and "optimizer".
bool related(const std::string& key, const std::string& field) {
  return key == field || field.starts_with(key + ".") || key.starts_with(field + ".");
}

}  // namespace

void rethrow_config_error(const ConfigError& e, const std::string& config_path,
                          const std::vector<std::string>& overrides, const std::string& section) {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string key = (section.empty() ? "" : section + ".") + it->substr(0, it->find('='));
    if (!e.field().empty() && related(key, e.field())) throw UsageError("--set " + *it, e.message());
  }
  if (config_path.empty()) throw e;
  throw FileError(config_path, e.what());
}

}  // namespace bagel
