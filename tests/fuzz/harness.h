// What the fuzz targets (targets.cpp, text_targets.cpp) share: how a target
// tells a finding from a refusal, and the files and pipes it feeds readers.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "bagel/error.h"
#include "bagel/labels.h"
#include "targets.h"

namespace bagel::fuzz {

// A reader's result that breaks its own contract: not an error the reader
// meant, so it must stop the fuzzer (abort) like a crash.
void require(bool holds, const char* what);

// Runs `read` and says whether it succeeded; a bagel::Error is the reader
// refusing the input, which is what bad input must get. Any other exception
// leaves: an uncaught exception is a finding.
template <class Read>
bool accepted(Read&& read) {
  try {
    read();
    return true;
  } catch (const Error&) {
    return false;
  }
}

inline std::span<const std::byte> as_bytes(Bytes input) { return std::as_bytes(input); }

inline std::string as_string(Bytes input) {
  return {reinterpret_cast<const char*>(input.data()), input.size()};
}

bool same_labels(const RawLabels& a, const RawLabels& b);

// The files a target writes, in a folder of this process's own (the fuzzer's
// workers are processes), on tmpfs where there is one.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  std::string write(const std::filesystem::path& name, std::string_view bytes) const;
  // An empty folder `name`, emptied again on every call.
  std::filesystem::path fresh_folder(const std::string& name) const;

 private:
  std::filesystem::path dir_;
};

const Scratch& scratch();

// `text` in a pipe whose writing end is closed, opened by name (/dev/fd/N)
// as `bagel ... -i <(cat file)` would be: the readers' stream paths.
// nullptr when the pipe cannot hold it all (the target then skips the stream).
class PipeInput {
 public:
  static std::unique_ptr<PipeInput> holding(std::string_view text);
  ~PipeInput();
  PipeInput(const PipeInput&) = delete;
  PipeInput& operator=(const PipeInput&) = delete;
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  PipeInput() = default;
  int fds_[2] = {-1, -1};
};

}  // namespace bagel::fuzz
