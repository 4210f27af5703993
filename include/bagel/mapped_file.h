// The bytes of a whole input file, read-only (RAII): a memory map of a
// regular file, or, for a stream (input_stream.h: "-", a pipe, a FIFO), its
// whole content read into memory, since a stream cannot be mapped.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace bagel {

class InputStream;

class MappedFile {
 public:
  // Throws FileError if the file cannot be opened, mapped or read.
  explicit MappedFile(const std::string& path);
  // The rest of an opened stream (after anything peeked), read into memory.
  explicit MappedFile(InputStream& stream);
  // Bytes already in memory, named `name` in errors (readers that take a
  // MappedFile then read from memory: the fuzzers feed them this way).
  MappedFile(std::vector<std::byte> bytes, std::string name);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::byte> bytes() const { return {data_, size_}; }

  // Drops the whole pages inside `range` from this process's memory (they
  // stay in the page cache and are read again if touched). Used once a
  // region has been converted into owned arrays, so that the copy and the
  // mapping are not both resident. Does nothing for a stream read into
  // memory: there is no file to read those pages back from.
  void release(std::span<const std::byte> range) const;
  // Maps every page ahead, for a file about to be read through: one page
  // fault per page costs more (MADV_POPULATE_READ, in parts on the OpenMP
  // threads; a hint, ignored by kernels before 5.14).
  void populate() const;
  // The name errors use ("<stdin>" for "-").
  const std::string& path() const { return path_; }

 private:
  void map(int fd, const std::string& path);
  std::string path_;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool mapped_ = false;
  std::vector<std::byte> read_in_;  // a stream's bytes
};

}  // namespace bagel
