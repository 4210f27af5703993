// Shared by the tests that train through the library's pipeline (not with
// train_helpers.h's tests of the trainer's parts: pipeline.h's train() and
// the namespace bagel::train cannot share a translation unit).
#pragma once

#include <iostream>
#include <optional>
#include <string>

#include "bagel/pipeline.h"
#include "bagel/progress.h"

namespace bagel {

// Trains as `bagel train` and the Python estimator do: through the library's
// pipeline (pipeline.h), which prepares the rows (sums repeated indices,
// relabels features where reorder_pays_off() says so) before training.
inline TrainResult train_by_pipeline(Dataset d, int classes, const OptimizerConfig& c) {
  TrainConfig config;
  config.optimizer = c;
  Classes names;
  for (int i = 0; i < classes; ++i) names.names.push_back(std::to_string(i));
  names.numeric = true;
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  return train(config, in_memory_training_data(config, names, std::move(d), std::nullopt, {}), quiet);
}

}  // namespace bagel
