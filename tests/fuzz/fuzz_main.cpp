// The libFuzzer entry point of one reader's target, chosen at build time
// (tests/fuzz/CMakeLists.txt builds one binary per entry of kTargets).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "targets.h"

namespace {

constexpr bagel::fuzz::Target find_target(std::string_view name) {
  for (const auto& target : bagel::fuzz::kTargets)
    if (name == target.name) return target.run;
  return nullptr;
}

constexpr bagel::fuzz::Target kRun = find_target(BAGEL_FUZZ_TARGET);
static_assert(kRun != nullptr, "BAGEL_FUZZ_TARGET names no entry of kTargets");

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  kRun(bagel::fuzz::Bytes(data, size));
  return 0;
}
