#include "harness.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <system_error>

namespace bagel::fuzz {

namespace fs = std::filesystem;

void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "bagel fuzz: broken invariant: %s\n", what);
  std::abort();
}

bool same_labels(const RawLabels& a, const RawLabels& b) {
  return a.names == b.names && a.numeric == b.numeric && a.values == b.values;
}

Scratch::Scratch() {
  std::error_code ec;
  const fs::path base = fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                            ? fs::path("/dev/shm")
                            : fs::temp_directory_path();
  std::random_device rd;
  dir_ = base / ("bagel-fuzz-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(dir_);
}

Scratch::~Scratch() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string Scratch::write(const fs::path& name, std::string_view bytes) const {
  const fs::path path = dir_ / name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  require(static_cast<bool>(out.flush()), "cannot write a scratch file");
  return path.string();
}

fs::path Scratch::fresh_folder(const std::string& name) const {
  const fs::path path = dir_ / name;
  fs::remove_all(path);
  fs::create_directory(path);
  return path;
}

const Scratch& scratch() {
  static const Scratch instance;
  return instance;
}

std::unique_ptr<PipeInput> PipeInput::holding(std::string_view text) {
  auto pipe = std::unique_ptr<PipeInput>(new PipeInput);
  if (::pipe2(pipe->fds_, O_CLOEXEC) != 0) return nullptr;
  // Grown only when needed: a 1 MiB pipe buffer per input cost more than
  // the reading.
  int capacity = ::fcntl(pipe->fds_[1], F_GETPIPE_SZ);
  if (capacity >= 0 && text.size() > static_cast<std::size_t>(capacity))
    capacity = ::fcntl(pipe->fds_[1], F_SETPIPE_SZ, 1 << 20);
  if (capacity < 0 || text.size() > static_cast<std::size_t>(capacity)) return nullptr;
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(pipe->fds_[1], text.data() + done, text.size() - done);
    if (n <= 0) return nullptr;
    done += static_cast<std::size_t>(n);
  }
  ::close(pipe->fds_[1]);
  pipe->fds_[1] = -1;
  return pipe;
}

PipeInput::~PipeInput() {
  for (const int fd : fds_)
    if (fd >= 0) ::close(fd);
}

}  // namespace bagel::fuzz
