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

  // Drops the whole pages inside `range` from this process's memory (they
  // stay in the page cache and are read again if touched). Used once a
  // region has been converted into owned arrays, so that the copy and the
  // mapping are not both resident.
  void release(std::span<const std::byte> range) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace bagel
