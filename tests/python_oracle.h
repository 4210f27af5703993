// Runs a script under Debian's Python (the oracle the text tests compare
// with) and returns what it printed; nullopt when /usr/bin/python3 or the
// modules it imports are missing, so that a test can skip.
#pragma once

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unistd.h>

namespace bagel::testing {

inline std::optional<std::string> run_python(const std::string& script) {
  if (access("/usr/bin/python3", X_OK) != 0) return std::nullopt;
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("bagel_oracle_" + std::to_string(getpid()) + ".py");
  std::ofstream(path) << script;
  FILE* pipe = popen(("/usr/bin/python3 " + path.string() + " 2>/dev/null").c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  std::string out;
  char buffer[65536];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  std::filesystem::remove(path);
  if (status != 0) return std::nullopt;
  return out;
}

}  // namespace bagel::testing
