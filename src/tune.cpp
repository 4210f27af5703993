#include "bagel/tune.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <random>

#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/rate_calibration.h"
#include "bagel/trainer.h"

namespace bagel {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Dataset rows_of(const Dataset& d, std::span<const Index> rows, const std::string& name) {
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data, weight;
  std::vector<std::int32_t> y;
  for (const Index r : rows) {
    const RowView row = d.x.row(r);
    indices.insert(indices.end(), row.indices.begin(), row.indices.end());
    data.insert(data.end(), row.values.begin(), row.values.end());
    indptr.push_back(static_cast<Index>(indices.size()));
    y.push_back(d.y[static_cast<std::size_t>(r)]);
    if (!d.weight.empty()) weight.push_back(d.weight[static_cast<std::size_t>(r)]);
  }
  return Dataset{name,
                 CsrMatrix(static_cast<Index>(rows.size()), d.x.cols(), std::move(indptr),
                           std::move(indices), std::move(data)),
                 std::move(y), std::move(weight)};
}

// The l2 values tried: 0 and three penalties a decade apart, the config's own
// l2 (above 0) replacing the nearest of those, so that its point is a trial.
std::array<double, 4> l2_grid(double own) {
  std::array<double, 4> l2s = {0, 1e-6, 1e-5, 1e-4};
  if (own <= 0 || std::find(l2s.begin(), l2s.end(), own) != l2s.end()) return l2s;
  const auto decades = [own](double g) { return std::abs(std::log10(g / own)); };
  auto nearest = l2s.begin() + 1;
  for (auto g = nearest + 1; g != l2s.end(); ++g)
    if (decades(*g) < decades(*nearest)) nearest = g;
  *nearest = own;
  std::sort(l2s.begin(), l2s.end());
  return l2s;
}

// The grid around the resolved defaults, ordered by how far each point is
// from them (steps of the rate factor, l2 and epochs), defaults first.
// "optimal" sets its own rates from alpha = l2 + l1: steps of the rate would
// train one model five times, and alpha 0 is refused; each point's rate is
// its first step's, alpha^(-1/4), as model.json records it.
// Points where learning_rate x l2 >= 1 are left out (counted in
// `left_out`): the L2 decay of a step, 1 - rate x l2, would reverse the
// weights' sign or zero them.
std::vector<OptimizerConfig> plan_trials(const OptimizerConfig& defaults, int& left_out) {
  struct Point {
    int distance;
    OptimizerConfig c;
  };
  std::vector<Point> points;
  const bool optimal = defaults.schedule == ScheduleKind::kOptimal;
  const std::vector<int> rate_steps = optimal ? std::vector<int>{0} : std::vector<int>{0, -1, 1, -2, 2};
  const std::array<double, 4> l2s = l2_grid(defaults.l2);
  for (const int epoch_factor : {1, 2})
    for (const int step : rate_steps)
      for (std::size_t i = 0; i < std::size(l2s); ++i) {
        OptimizerConfig c = defaults;
        c.l2 = l2s[i];
        if (optimal && !(c.l2 + c.l1 > 0)) continue;
        c.learning_rate = optimal ? std::pow(c.l2 + c.l1, -0.25) : std::ldexp(defaults.learning_rate, step);
        if (c.learning_rate * c.l2 >= 1) {
          ++left_out;
          continue;
        }
        c.epochs = defaults.epochs * epoch_factor;
        const int l2_distance = defaults.l2 == 0 ? static_cast<int>(i) : (c.l2 == defaults.l2 ? 0 : 1);
        points.push_back({std::abs(step) + l2_distance + (epoch_factor - 1), c});
      }
  std::stable_sort(points.begin(), points.end(),
                   [](const Point& a, const Point& b) { return a.distance < b.distance; });
  std::vector<OptimizerConfig> out;
  for (const Point& p : points) out.push_back(p.c);
  return out;
}

bool better(const TuneTrial& a, const TuneTrial& b) {
  if (a.valid_accuracy != b.valid_accuracy) return a.valid_accuracy > b.valid_accuracy;
  return a.valid_log_loss < b.valid_log_loss;
}

}  // namespace

namespace {

std::vector<std::vector<Index>> rows_by_class(const Dataset& d) {
  std::vector<std::vector<Index>> by_class;
  for (std::size_t i = 0; i < d.y.size(); ++i) {
    const auto label = static_cast<std::size_t>(d.y[i]);
    if (label >= by_class.size()) by_class.resize(label + 1);
    by_class[label].push_back(static_cast<Index>(i));
  }
  return by_class;
}

// How many rows of each class to hold out: its share of `fraction`,
// floored, then one more to the largest remainders until the total is
// fraction x n, equal remainders in a seeded order (not always the first
// classes); a class keeps one row to train on.
std::vector<std::size_t> held_per_class(const std::vector<std::vector<Index>>& by_class, std::size_t n,
                                        double fraction, std::mt19937_64& rng) {
  const auto target = static_cast<std::size_t>(std::llround(fraction * double(n)));
  std::vector<std::size_t> held(by_class.size());
  std::vector<std::pair<double, Index>> remainders;  // (remainder, class)
  std::size_t total = 0;
  for (std::size_t k = 0; k < by_class.size(); ++k) {
    const double share = fraction * double(by_class[k].size());
    const std::size_t room = by_class[k].empty() ? 0 : by_class[k].size() - 1;
    held[k] = std::min(static_cast<std::size_t>(share), room);
    total += held[k];
    if (held[k] < room) remainders.push_back({share - std::floor(share), static_cast<Index>(k)});
  }
  std::vector<Index> tie_order(remainders.size());
  for (std::size_t i = 0; i < tie_order.size(); ++i) tie_order[i] = static_cast<Index>(i);
  shuffle_rows(tie_order, rng);
  std::vector<std::pair<double, Index>> shuffled;
  for (const Index i : tie_order) shuffled.push_back(remainders[static_cast<std::size_t>(i)]);
  std::stable_sort(shuffled.begin(), shuffled.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < shuffled.size() && total < target; ++i, ++total)
    ++held[static_cast<std::size_t>(shuffled[i].second)];
  if (total == 0 && n > 1 && remainders.empty())
    throw Error("every class of the " + std::to_string(n) +
                " training rows has a single row, which it needs to train on: nothing can be "
                "held out to judge the trials; give a \"valid\" set");
  if (total == 0 || total >= n)
    throw Error("too few training rows (" + std::to_string(n) +
                ") to hold out a validation part: give a \"valid\" set");
  return held;
}

}  // namespace

std::pair<Dataset, Dataset> split_holdout(const Dataset& train, double fraction, std::uint64_t seed) {
  std::vector<std::vector<Index>> by_class = rows_by_class(train);
  std::mt19937_64 rng(seed ^ 0x7c3a5f1e2d4b6a89ull);
  const std::vector<std::size_t> held =
      held_per_class(by_class, static_cast<std::size_t>(train.x.rows()), fraction, rng);
  std::vector<Index> fit, out;
  for (std::size_t k = 0; k < by_class.size(); ++k) {
    std::vector<Index>& rows = by_class[k];
    shuffle_rows(rows, rng);
    const auto cut = static_cast<std::ptrdiff_t>(rows.size() - held[k]);
    fit.insert(fit.end(), rows.begin(), rows.begin() + cut);
    out.insert(out.end(), rows.begin() + cut, rows.end());
  }
  std::sort(fit.begin(), fit.end());  // file order, as the training set had it
  std::sort(out.begin(), out.end());
  return {rows_of(train, fit, "train"), rows_of(train, out, "held-out valid")};
}

TuneResult tune(const Dataset& train, const Dataset& valid, int classes,
                std::optional<Head> multiclass, const OptimizerConfig& base,
                LayerKind layer, double budget_seconds, int threads, Progress& progress) {
  if (!(budget_seconds > 0)) throw ConfigError("--budget", "expected a number of seconds > 0");
  const auto t0 = Clock::now();
  OptimizerConfig defaults = base;
  // The trials train on one thread (below), which can always average.
  resolve_averaging(defaults, weighted_rows(train.x.rows(), train.weight), true);
  if (defaults.epochs <= 0) defaults.epochs = auto_epochs(train.x, defaults.average, train.weight);
  if (defaults.learning_rate <= 0 && defaults.schedule != ScheduleKind::kOptimal) {
    // The rate train would calibrate, and the bias rate that goes with it
    // (below 1 for rows of small norm): the trials set explicit rates,
    // where "auto" alone would give the bias the full rate.
    const RateCalibration calibrated =
        calibrate_learning_rate(train, classes, multiclass.value_or(kDefaultMulticlass), defaults);
    defaults.learning_rate = calibrated.rate;
    defaults.bias_rate = calibrated.bias_rate;
  }
  defaults.bias_rate_auto = false;
  defaults.threads = 1;
  std::vector<Head> heads{classes == 2 ? Head::kSigmoid : multiclass.value_or(kDefaultMulticlass)};
  if (classes > 2 && !multiclass)
    heads.push_back(kDefaultMulticlass == Head::kSoftmax ? Head::kOneVsRest : Head::kSoftmax);
  TuneResult result;
  int points_left_out = 0;
  for (const OptimizerConfig& c : plan_trials(defaults, points_left_out))
    for (const Head head : heads) {
      TuneTrial t;
      t.settings = c;
      t.head = head;
      result.trials.push_back(t);
    }

  result.grid_left_out = points_left_out * static_cast<int>(heads.size());
  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  std::atomic<int> done{0};
  std::atomic<double> busy_seconds{0};
  std::mutex report;
  const int n = static_cast<int>(result.trials.size());
  const int team = std::max(1, std::min(n, threads > 0 ? threads : usable_cores()));
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
  for (int i = 0; i < n; ++i) {
    TuneTrial& t = result.trials[static_cast<std::size_t>(i)];
    // The first round, one trial a thread, always runs (it gives the mean);
    // later trials start only if one as long as the mean still ends in time.
    const int finished = done.load();
    const double mean = finished > 0 ? busy_seconds.load() / finished : 0.0;
    if (i >= team && seconds_since(t0) + mean > budget_seconds) continue;
    const auto start = Clock::now();
    try {
      Model m = Model::zeros(names, true, train.x.cols(), t.head);
      // As train does: early stopping on the valid set with patience, and a
      // run that diverges restarted at a tenth of the rate. Its warnings
      // would be one line a trial: the table says it instead.
      std::ostream discard(nullptr);
      Progress quiet(Progress::Mode::kQuiet, discard);
      const TrainingSummary s =
          train_model(m, train, t.settings.patience > 0 ? &valid : nullptr, t.settings, layer, quiet);
      if (!s.restarts.empty()) {
        t.diverged_rate = t.settings.learning_rate;
        t.settings.learning_rate = s.learning_rate;
      }
      const Metrics v = evaluate(m, valid.x, valid.y, 1);
      t.valid_accuracy = v.accuracy;
      t.valid_log_loss = v.log_loss;
    } catch (const std::exception& e) {  // exceptions must not leave the region
      t.error = e.what();
      t.valid_log_loss = INFINITY;
    }
    t.seconds = seconds_since(start);
    t.ran = true;
    double expected = busy_seconds.load();
    while (!busy_seconds.compare_exchange_weak(expected, expected + t.seconds)) {
    }
    const int count = ++done;
    std::lock_guard<std::mutex> lock(report);
    char line[200];
    std::snprintf(line, sizeof line, "trial %d/%d: %s, learning_rate %.4g, l2 %g, %d epochs: ", count, n,
                  to_string(t.head).c_str(), t.diverged_rate > 0 ? t.diverged_rate : t.settings.learning_rate,
                  t.settings.l2, t.settings.epochs);
    char outcome[160];
    if (t.diverged_rate > 0)
      std::snprintf(outcome, sizeof outcome, "diverged, restarted at %.4g: ", t.settings.learning_rate);
    else
      outcome[0] = '\0';
    char score[120];
    std::snprintf(score, sizeof score, "valid accuracy %.4f, log loss %.4f (%.2fs)", t.valid_accuracy,
                  t.valid_log_loss, t.seconds);
    progress.message(std::string(line) + outcome + (t.error.empty() ? score : "failed: " + t.error));
  }
  result.seconds = seconds_since(t0);
  result.best = 0;
  for (std::size_t i = 0; i < result.trials.size(); ++i) {
    const TuneTrial& t = result.trials[i];
    if (!t.ran) result.budget_cut = true;
    if (t.ran && t.error.empty() && better(t, result.trials[result.best])) result.best = i;
  }
  return result;
}

}  // namespace bagel
