#include "bagel/schedule.h"

#include <algorithm>
#include <cmath>

#include "bagel/libm_calls.h"

namespace bagel {

Schedule::Schedule(const OptimizerConfig& config, std::int64_t total_steps)
    : kind_(config.schedule),
      eta0_(config.learning_rate),
      power_t_(config.power_t),
      alpha_(config.l2 + config.l1),
      total_steps_(static_cast<double>(std::max<std::int64_t>(total_steps, 1))) {
  if (kind_ == ScheduleKind::kOptimal) {
    // Bottou's heuristic as in sklearn's _plain_sgd. sklearn divides typw by
    // max(1, dloss(-typw, 1)); the log loss derivative there is negative, so
    // the divisor is always 1 and the first step's rate is typw itself.
    const double typw = std::sqrt(1.0 / std::sqrt(alpha_));
    const double eta_init = typw;
    t0_ = 1.0 / (eta_init * alpha_);
  }
}

double Schedule::eta(std::int64_t t) const {
  const double td = static_cast<double>(t);
  switch (kind_) {
    case ScheduleKind::kConstant: return eta0_;
    case ScheduleKind::kInvScaling: return eta0_ / libm::pow(td, power_t_);
    case ScheduleKind::kOptimal: return 1.0 / (alpha_ * (t0_ + td - 1.0));
    case ScheduleKind::kLinear: return eta0_ * std::max(0.0, 1.0 - (td - 1.0) / total_steps_);
  }
  return eta0_;
}

}  // namespace bagel
