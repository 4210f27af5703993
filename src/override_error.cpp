#include "bagel/override_error.h"

#include <filesystem>

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

void rethrow_missing_override_input(const FileError& e, const nlohmann::json& resolved,
                                    const std::vector<std::string>& overrides) {
  std::error_code ec;
  if (e.file().empty() || std::filesystem::exists(e.file(), ec)) return;
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string key = it->substr(0, it->find('='));
    const nlohmann::json* value = &resolved;
    for (std::size_t from = 0; value != nullptr && from <= key.size();) {
      const std::size_t dot = std::min(key.find('.', from), key.size());
      const auto found = value->is_object() ? value->find(key.substr(from, dot - from)) : value->end();
      value = value->is_object() && found != value->end() ? &*found : nullptr;
      from = dot + 1;
    }
    if (value != nullptr && value->is_string() && value->get<std::string>() == e.file())
      throw UsageError("--set " + *it, e.what());
  }
}

}  // namespace bagel
