// Every input kept for the fuzzers, through the same targets (fuzz/targets.h)
// in the ordinary test suite, any compiler: the seed corpora
// (fuzz/corpus/<reader>/) and the inputs that once crashed a reader
// (fuzz/regressions/<reader>/). Each must be accepted or refused with a
// bagel::Error, in bounded memory; a crash, another exception (std::bad_alloc
// included), a broken invariant or a large allocation fails.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/targets.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The most this process has had resident so far (Linux gives KiB).
std::int64_t peak_resident_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return std::int64_t{usage.ru_maxrss} << 10;
}

// The kept inputs are at most tens of KB, the hostile ones among them claim
// gigabytes (issue 18): a reader that allocates what a header claims, and
// touches it, raises the peak by far more than this; an honest read of a
// small input by far less.
constexpr std::int64_t kMaxPeakGrowth = std::int64_t{256} << 20;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BAGEL_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BAGEL_SANITIZED 1
#endif

// While alive, the process may map at most `extra` bytes more than it has
// mapped now (RLIMIT_AS), so that allocating what a header claims fails
// (std::bad_alloc) even when its pages would never be touched and the peak
// above would not see it. 2 GiB, as the fuzzers' allocation limit
// (scripts/fuzz.sh). Off under a sanitizer, which maps terabytes of shadow.
class AddressSpaceCap {
 public:
  AddressSpaceCap() {
#ifndef BAGEL_SANITIZED
    if (getrlimit(RLIMIT_AS, &saved_) != 0) return;
    std::ifstream statm("/proc/self/statm");
    std::int64_t mapped_pages = 0;
    if (!(statm >> mapped_pages)) return;
    rlimit capped = saved_;
    capped.rlim_cur = static_cast<rlim_t>(mapped_pages * sysconf(_SC_PAGESIZE) + kExtra);
    if (saved_.rlim_max != RLIM_INFINITY) capped.rlim_cur = std::min(capped.rlim_cur, saved_.rlim_max);
    active_ = setrlimit(RLIMIT_AS, &capped) == 0;
#endif
  }
  ~AddressSpaceCap() {
    if (active_) setrlimit(RLIMIT_AS, &saved_);
  }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  static constexpr std::int64_t kExtra = std::int64_t{2} << 30;
  rlimit saved_{};
  bool active_ = false;
};

class FuzzInputs : public testing::TestWithParam<fuzz::NamedTarget> {};

void replay(const fuzz::NamedTarget& target, const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    const std::vector<std::uint8_t> bytes = read_bytes(file);
    const std::int64_t peak_before = peak_resident_bytes();
    {
      const AddressSpaceCap cap;
      EXPECT_NO_THROW(target.run(bytes)) << file;
    }
    EXPECT_LT(peak_resident_bytes() - peak_before, kMaxPeakGrowth) << file;
  }
}

TEST_P(FuzzInputs, SeedCorpusIsAcceptedOrRefusedWithAnError) {
  const auto files = files_in(fs::path(BAGEL_FUZZ_DIR) / "corpus" / GetParam().name);
  EXPECT_GE(files.size(), 3u) << "seed corpus of " << GetParam().name;
  replay(GetParam(), files);
}

TEST_P(FuzzInputs, CrashesOnceFoundAreAcceptedOrRefusedWithAnError) {
  replay(GetParam(), files_in(fs::path(BAGEL_FUZZ_DIR) / "regressions" / GetParam().name));
}

INSTANTIATE_TEST_SUITE_P(Readers, FuzzInputs, testing::ValuesIn(fuzz::kTargets),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace bagel
