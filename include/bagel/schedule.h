// Learning-rate schedules, as scikit-learn's SGD defines them. `t` counts
// updates from 1 (one update per mini-batch; per sample when batch_size=1,
// which is scikit-learn's setting).
//   constant    eta = eta0
//   invscaling  eta = eta0 / t^power_t
//   optimal     eta = 1 / (alpha (t0 + t - 1)), alpha = l2 + l1, with t0 from
//               Bottou's heuristic: typw = sqrt(1 / sqrt(alpha)),
//               eta_init = typw / max(1, dloss(-typw)), t0 = 1 / (eta_init alpha)
//   linear      eta = eta0 (1 - (t - 1) / total_steps), reaching ~0 at the end
#pragma once

#include <cstdint>

#include "bagel/config.h"

namespace bagel {

class Schedule {
 public:
  Schedule(const OptimizerConfig& config, std::int64_t total_steps);
  double eta(std::int64_t t) const;

 private:
  ScheduleKind kind_;
  double eta0_;
  double power_t_;
  double alpha_;
  double t0_ = 0;
  double total_steps_;
};

}  // namespace bagel
