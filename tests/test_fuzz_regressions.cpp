// Every input kept for the fuzzers, through the same targets (fuzz/targets.h)
// in the ordinary test suite, any compiler: the seed corpora
// (fuzz/corpus/<reader>/) and the inputs that once crashed a reader
// (fuzz/regressions/<reader>/). Each must be accepted or refused with a
// bagel::Error; a crash, another exception or a broken invariant fails.
#include <gtest/gtest.h>

#include <algorithm>
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

class FuzzInputs : public testing::TestWithParam<fuzz::NamedTarget> {};

void replay(const fuzz::NamedTarget& target, const std::vector<fs::path>& files) {
  for (const fs::path& file : files) {
    const std::vector<std::uint8_t> bytes = read_bytes(file);
    EXPECT_NO_THROW(target.run(bytes)) << file;
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
