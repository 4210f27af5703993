// A stopped run's checkpoint on disk, so that `bagel train --resume` goes on
// from its last completed epoch. It lives beside the model folder, in
// OUTPUT.bagel-resume/: checkpoint.json (the state, the run's resolved
// config and a fingerprint of its training data) and the weights as .npy.
// Written whole or not at all (a temporary folder renamed into place);
// removed when a run into OUTPUT ends.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bagel/dataset.h"
#include "bagel/trainer.h"

namespace bagel {

std::string checkpoint_folder(const std::string& output);

// A 64-bit digest of the training and valid rows, their order, labels and
// weights: a resume on other data would not continue the same run.
std::uint64_t data_fingerprint(const TrainingData& data);

void save_checkpoint(const TrainingCheckpoint& checkpoint, const nlohmann::json& config,
                     std::uint64_t fingerprint, const std::string& folder);

bool checkpoint_exists(const std::string& folder);

// UsageError unless FOLDER holds a checkpoint: checked before any data is
// read, so that a --resume with nothing to resume fails at once.
void require_checkpoint(const std::string& folder);

// Reads FOLDER and checks that it continues this run: the same resolved
// config (threads aside: the model does not depend on them with one training
// thread) and the same training data; ConfigError naming the first
// difference (or the missing folder) otherwise.
// Its arrays must be of the model's shape (features x outputs) and finite;
// FileError naming the file otherwise.
TrainingCheckpoint load_checkpoint(const std::string& folder, const nlohmann::json& config,
                                   std::uint64_t fingerprint, std::int64_t features, int outputs);

// Removes FOLDER when it holds a checkpoint (nothing else is touched).
void remove_checkpoint(const std::string& folder);

}  // namespace bagel
