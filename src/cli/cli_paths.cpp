#include "cli_paths.h"

#include <filesystem>
#include <system_error>

namespace bagel::cli {

namespace fs = std::filesystem;

CLI::Validator input_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (path == "-") return {};
        std::error_code ec;
        const fs::file_status st = fs::status(path, ec);
        if (!fs::exists(st)) return "no such file '" + path + "'";
        if (fs::is_directory(st)) return "'" + path + "' is a folder, expected a file";
        return {};
      },
      "FILE|-");
}

}  // namespace bagel::cli
