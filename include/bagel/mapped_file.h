// Read-only memory map of a whole file (RAII).
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace bagel {

class MappedFile {
 public:
  // Throws FileError if the file cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace bagel
