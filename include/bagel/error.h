// Errors carry where the problem is (file and line, or config field) and
// what was expected. Library code throws; only main() catches and prints.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace bagel {

// Base of every error bagel throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A problem with an input or output file. `line` is 1-based; 0 means the
// problem is not tied to a line (binary formats name the key instead).
class FileError : public Error {
 public:
  FileError(const std::string& file, const std::string& message, std::int64_t line = 0)
      : Error(format(file, message, line)), file_(file), line_(line), message_(message) {}
  const std::string& file() const { return file_; }
  std::int64_t line() const { return line_; }
  // The text after "file[:line]: ".
  const std::string& message() const { return message_; }

 private:
  static std::string format(const std::string& file, const std::string& message,
                            std::int64_t line) {
    return line > 0 ? file + ":" + std::to_string(line) + ": " + message
                    : file + ": " + message;
  }
  std::string file_;
  std::int64_t line_;
  std::string message_;
};

// A bad configuration value; `field` is the dotted key path (optimizer.epochs).
class ConfigError : public Error {
 public:
  ConfigError(const std::string& field, const std::string& message)
      : Error(field.empty() ? message : field + ": " + message), field_(field), message_(message) {}
  const std::string& field() const { return field_; }
  // The text after "field: ", to re-attribute the error (to a --set, say).
  const std::string& message() const { return message_; }

 private:
  std::string field_;
  std::string message_;
};

// A command line that is wrong whatever the files hold: a bad or missing
// argument, an unknown command, a --set key that does not exist. `where`
// names the argument ("--set optimizer.lr=0.01"). main() exits with 2 for
// these, as shells and argparse do, and with 1 for every other error, so
// scripts can tell "fix the command" from "fix the data".
class UsageError : public ConfigError {
 public:
  UsageError(const std::string& where, const std::string& message)
      : ConfigError(where, message) {}
};

// Work stopped because Progress::request_stop() was called; nothing it was
// producing is valid.
class Interrupted : public Error {
 public:
  Interrupted() : Error("interrupted") {}
};

}  // namespace bagel
