// Inputs that are not regular files: "-" (standard input), pipes, FIFOs,
// process substitution (/dev/fd/63) and /dev/stdin. Their size is unknown
// (stat says 0) and they can be read only once, front to back, so they
// cannot be memory-mapped as bagel maps files; mapping one gives nothing at
// all, which is how `cat x | bagel predict -i /dev/stdin` once predicted 0
// rows and succeeded. Text formats are parsed block by block as they arrive
// (LineBlocks); binary ones are read whole into memory (MappedFile).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bagel {

// True for "-" and for anything that exists and is not a regular file or a
// folder (links are followed). A missing path is not a stream: opening it
// gives the usual "cannot open" error.
bool is_stream(const std::string& path);

// Whether `a` and `b` are one stream: standard input by two names ("-",
// /dev/stdin, /dev/fd/0, /proc/self/fd/0, even where it is a regular file),
// or one pipe or FIFO named twice. Two inputs read
// from one stream would each get some of its bytes, so commands refuse it.
bool same_stream(const std::string& a, const std::string& b);
// Whether `path` is the process's standard input, read as a stream.
bool is_stdin(const std::string& path);

// The name errors use: "<stdin>" for "-", the path otherwise.
std::string input_name(const std::string& path);

// A stream opened for reading ("-" is the process's standard input, which is
// borrowed, not closed). Reads retry on EINTR; errors are FileErrors naming
// input_name(path).
class InputStream {
 public:
  explicit InputStream(const std::string& path);
  ~InputStream();
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;

  const std::string& name() const { return name_; }
  // Whether the bytes come from a regular file (a path naming one, or
  // standard input redirected from one): its reads never wait, so readers
  // may take large blocks.
  bool regular() const { return regular_; }
  // Whether it was opened by a path naming a regular file, not "-": read as
  // a file is read whole, so an empty one is no error.
  bool named_file() const { return regular_ && owned_; }
  // The first `count` bytes (fewer only if the stream ends sooner), left
  // unconsumed: the next read() returns them first. Used to tell formats
  // apart by their magic bytes.
  std::string_view peek(std::size_t count);
  // Blocks until some bytes arrive, then returns how many were copied into
  // `out` (at most out.size()); 0 means the stream has ended.
  std::size_t read(std::span<char> out);
  // Everything left, for formats that need random access (.npz, .npy).
  std::vector<std::byte> read_all();

 private:
  std::size_t read_fd(char* out, std::size_t size);
  int fd_ = -1;
  bool owned_ = false;
  bool regular_ = false;
  std::string name_;
  std::string peeked_;
};

// The stream as successive blocks of whole lines: each block ends just after
// a '\n', except the last one of the stream, which may lack it. A block is
// returned as soon as at least `min_bytes` (and one whole line) have
// arrived, or the stream ends, so a parser sees rows as they come without
// waiting for the whole input. Lines longer than any block are kept whole.
class LineBlocks {
 public:
  LineBlocks(InputStream& in, std::size_t min_bytes);
  // The next block, valid until the next call; empty once the stream ended.
  std::span<const char> next();
  // Bytes read so far.
  std::size_t bytes_read() const { return bytes_read_; }

 private:
  InputStream& in_;
  std::size_t min_bytes_;
  std::vector<char> buffer_;
  std::size_t filled_ = 0;    // bytes in buffer_
  std::size_t consumed_ = 0;  // bytes of buffer_ handed out by the last next()
  std::size_t bytes_read_ = 0;
  bool ended_ = false;
};

}  // namespace bagel
