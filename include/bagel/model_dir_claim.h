// One bagel run at a time writes a model into a given folder. Two trainings
// onto one output used to both run to the end and race to replace it; now
// the second one to claim the folder fails at once, naming the first, and
// leaves nothing behind.
//
// The claim is a file beside the folder, DIR.bagel-lock, created atomically
// with the owner's process id in it, and removed when the claim ends (on
// SIGINT/SIGTERM too, by temp_registry.h). A claim whose process is gone
// (kill -9) is stale and taken over; a process that already holds the claim
// may claim again (save_model inside a claimed training run).
#pragma once

#include <filesystem>
#include <memory>

#include "bagel/temp_registry.h"

namespace bagel {

class ModelDirClaim {
 public:
  // Throws FileError naming `dir` when another live process holds it. Where
  // the claim file cannot be created (a read-only parent folder), nothing is
  // claimed: writing the model there will fail with its own error anyway.
  explicit ModelDirClaim(const std::filesystem::path& dir);
  ~ModelDirClaim();
  ModelDirClaim(const ModelDirClaim&) = delete;
  ModelDirClaim& operator=(const ModelDirClaim&) = delete;

  // The claim file of the model folder `dir`.
  static std::filesystem::path lock_path(const std::filesystem::path& dir);

 private:
  std::filesystem::path lock_;
  bool owned_ = false;  // created here (not an outer claim of this process)
  std::unique_ptr<TempRegistration> registration_;
};

}  // namespace bagel
