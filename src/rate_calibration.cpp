#include "bagel/rate_calibration.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <random>
#include <string>

#include <omp.h>

#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/metrics.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/rate_search.h"
#include "bagel/trainer.h"

namespace bagel {

namespace {

// Candidates 2^k / mean(|x|^2) for k in [kLowest, kHighest]. Measured best
// rates on real data lay between 2^-3 and 2^6 of the centre (data/PERFORMANCE.md; 2^6
// on changelog-era, where a few very long rows put mean |x|^2 at 50 times
// the median); the range leaves room on both sides. The low end also serves
// weighted rows, whose weights (class_weight, sample_weight) scale the steps
// without moving the centre: on scikit-learn's check_class_weight_classifiers
// (weights up to 1000) every rate from 2^-4 up diverged. (In the 36 runs of
// the defaults benchmark, data/PERFORMANCE.md, unweighted, the best lay
// between 2^0 and 2^7.)
constexpr int kLowest = -8;
constexpr int kHighest = 7;
// The search's first candidates: 2^2 and 2^4. The best of every other k lay
// at 2^0 to 2^6 on §9's twelve sets (5 seeds each), most often at 2^2.
constexpr int kStart = 2;
constexpr double kHoldoutFraction = 0.2;
// Candidates train for at most this many epochs. On §9's eleven sets, 10
// instead of the config's (up to 20) picked the same rate on seven and a
// neighbour on four, no test accuracy lower, in about half the time.
constexpr int kMaxTrialEpochs = 10;
// A candidate's held-out loss must be this share below that of the class
// shares alone to count as a signal: about one standard error of a mean
// log loss over 45 rows, the holdout of a 223-row sample.
constexpr double kClearGain = 0.05;
// The candidates that learn least, 2^-8 to 2^-6 of the centre (indices k -
// kLowest): a best among them, with a loss near the class shares', means
// the holdout prefers learning nothing.
constexpr int kLearnsLeast = 2;
// Samples of fewer rows are judged by kFolds-fold cross-validation.
constexpr std::size_t kFoldedBelow = 200;
constexpr std::size_t kFolds = 5;

// Rows of the sample with their features renumbered densely, in the order
// the sample first uses them (`new_of_old` is shared by the fit and holdout
// parts so that they agree): the candidates' weights then hold only the
// features the sample uses, not all of x's.
struct SampleRows {
  std::vector<Index> indptr{0}, indices;
  std::vector<float> data;
  std::vector<std::int32_t> y;
  std::vector<float> weight;  // empty when the rows are unweighted
};

SampleRows copy_rows(const Dataset& d, std::span<const Index> rows, std::vector<Index>& new_of_old,
                     Index& used) {
  SampleRows s;
  for (const Index r : rows) {
    const RowView row = d.x.row(r);
    for (std::size_t p = 0; p < row.size(); ++p) {
      Index& id = new_of_old[static_cast<std::size_t>(row.indices[p])];
      if (id < 0) id = used++;
      s.indices.push_back(id);
      s.data.push_back(row.values[p]);
    }
    s.indptr.push_back(static_cast<Index>(s.indices.size()));
    s.y.push_back(d.y[static_cast<std::size_t>(r)]);
    if (!d.weight.empty()) s.weight.push_back(d.weight[static_cast<std::size_t>(r)]);
  }
  return s;
}

Dataset to_dataset(SampleRows s, Index cols, const std::string& name) {
  const auto rows = static_cast<Index>(s.y.size());
  return Dataset{name, CsrMatrix(rows, cols, std::move(s.indptr), std::move(s.indices),
                                 std::move(s.data)),
                 std::move(s.y), std::move(s.weight)};
}

struct Split {
  Dataset fit, judge;
  Index features;  // used by the split's rows, numbered densely
};

// Rows whose |x|^2 passes this many times the median are left out of the
// mean that centres the search. Their steps are clipped in training
// (limit_logit_step), and one of them, a whole book among paragraphs, put
// the mean so high that the largest candidate, 2^7 over it, was still a
// hundred times too small (test accuracy 0.44 against 0.57). On §9's sets
// only changelog-era and pydoc-20 have such rows (49 of 8,509 and 2 of
// 7,337).
constexpr double kOutlierNorm = 1000;

// Mean |x|^2 of the rows (weights aside), rows past kOutlierNorm times the
// median left out.
double typical_squared_norm(std::vector<double> norms) {
  if (norms.empty()) return 0.0;
  std::vector<double> sorted = norms;
  const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
  std::nth_element(sorted.begin(), middle, sorted.end());
  const double limit = *middle * kOutlierNorm;
  double sum = 0;
  std::size_t kept = 0;
  for (const double n : norms)
    if (!(n > limit) || limit <= 0) sum += n, ++kept;
  return sum / double(kept);
}

double row_squared_norm(const RowView row) {
  double sum = 0;
  for (const float v : row.values) sum += double(v) * v;
  return sum;
}

double sample_squared_norm(const Dataset& d, std::span<const Index> rows) {
  std::vector<double> norms;
  norms.reserve(rows.size());
  for (const Index r : rows) norms.push_back(row_squared_norm(d.x.row(r)));
  return typical_squared_norm(std::move(norms));
}

double mean_squared_norm(const CsrMatrix& x) {
  std::vector<double> norms;
  norms.reserve(static_cast<std::size_t>(x.rows()));
  for (Index r = 0; r < x.rows(); ++r) norms.push_back(row_squared_norm(x.row(r)));
  return typical_squared_norm(std::move(norms));
}

// The held-out log loss and accuracy a candidate is judged by: weighted as
// training weighs the rows (class_weight, sample_weight), so that rows
// weighted 0 do not choose the rate.
struct Judged {
  double log_loss = 0;
  double accuracy = 0;
};

Judged judge_unweighted(const Model& m, const Dataset& judge) {
  const Metrics e = evaluate(m, judge.x, judge.y, 1);
  return {e.log_loss, e.accuracy};
}

Judged judge_candidate(const Model& m, const Dataset& judge) {
  if (judge.weight.empty()) return judge_unweighted(m, judge);
  const Predictions p = predict_chunk(m, judge.x, 0, judge.x.rows(), 1);
  const auto k = static_cast<std::size_t>(m.num_classes());
  double loss = 0, right = 0, total_weight = 0;
  for (std::size_t r = 0; r < judge.y.size(); ++r) {
    const double w = judge.weight[r];
    loss += w * row_log_loss(std::span<const double>(p.proba).subspan(r * k, k), judge.y[r]);
    if (p.classes[r] == judge.y[r]) right += w;
    total_weight += w;
  }
  if (!(total_weight > 0)) return judge_unweighted(m, judge);
  return {loss / total_weight, right / total_weight};
}

// Far from 1, the rows' scale leaves float32's range: their squared norms
// overflow past ~1e38, and rates of 2^k / |x|^2 do below ~1e-36.
std::string scale_hint(double mean_squared_norm) {
  if (mean_squared_norm <= 0 || (mean_squared_norm >= 1e-30 && mean_squared_norm <= 1e30)) return "";
  char buf[160];
  std::snprintf(buf, sizeof buf,
                " (the rows' mean squared norm is %.3g, beyond what float32 weights can step; "
                "scale the feature values)", mean_squared_norm);
  return buf;
}

// The held-out loss of knowing the classes' shares alone: the fit part's
// class frequencies (add-one smoothed) as every row's probabilities, judged
// as judged_loss judges a candidate (weighted as training weighs the rows).
double prior_loss(const Split& split, int classes) {
  const auto weight = [](const Dataset& d, std::size_t r) {
    return d.weight.empty() ? 1.0 : static_cast<double>(d.weight[r]);
  };
  std::vector<double> share(static_cast<std::size_t>(classes), 1.0);
  double total = classes;
  for (std::size_t r = 0; r < split.fit.y.size(); ++r) {
    share[static_cast<std::size_t>(split.fit.y[r])] += weight(split.fit, r);
    total += weight(split.fit, r);
  }
  const Dataset& judge = split.judge.x.rows() > 0 ? split.judge : split.fit;
  double sum = 0, judged = 0;
  for (std::size_t r = 0; r < judge.y.size(); ++r) {
    sum -= weight(judge, r) * std::log(share[static_cast<std::size_t>(judge.y[r])] / total);
    judged += weight(judge, r);
  }
  return judged > 0 ? sum / judged : 0.0;
}

// Whether the held-out rows cannot tell the rates apart, given the best
// candidate (index k - kLowest) and its loss: no rate clearly beat the class
// shares, and either none beat them at all or the best is among the rates
// that learn least (the loss falling towards the bottom of the range, to the
// class shares themselves). Long count rows, 10 classes of 13-47 documents,
// 45 held out: 2^-7 at 3 seeds of 10, test accuracy 0.28-0.33, where 2^2
// gave 0.53-0.57 at every seed. A minimum inside the range that does beat
// the class shares, if by less than kClearGain, is a signal: on 1,000 rows
// of a weak binary signal, 2^-2 held out 0.645 against the shares' 0.678,
// and 2^2 scored test log loss 2.35 where 2^-2 scored 0.79.
bool holdout_sees_no_signal(int best, double best_loss, double prior) {
  if (best_loss < (1 - kClearGain) * prior) return false;
  return !(best_loss < prior) || best <= kLearnsLeast;
}

// Rows the candidates are judged on, over all splits.
double judged_rows(const std::vector<Split>& splits) {
  double rows = 0;
  for (const Split& split : splits)
    rows += static_cast<double>(split.judge.x.rows() > 0 ? split.judge.x.rows() : split.fit.x.rows());
  return rows;
}

}  // namespace

namespace detail {

// Where the held-out loss sees no signal, whether the search's start
// predicts the held-out rows clearly better than the candidate of lowest
// loss: by more than one standard error of an accuracy over those rows. On
// the long licence texts the rates that learn least got 0.11-0.34 of the 45
// held-out rows right and 2^2 0.34-0.48 (test: 0.28-0.33 against 0.53-0.57);
// on 1,000 rows of a weak binary signal the two were within 0.02 of 200
// rows, and 2^2 scored test log loss 1.32 against 0.69.
bool predicts_clearly_better(const RateTrial& candidate, const RateTrial& best, double judged) {
  const double p = (candidate.holdout_accuracy + best.holdout_accuracy) / 2;
  const double standard_error = std::sqrt(p * (1 - p) / std::max(judged, 1.0));
  return candidate.holdout_accuracy > best.holdout_accuracy + standard_error;
}

}  // namespace detail

RateCalibration calibrate_learning_rate(const Dataset& train, int classes, Head head,
                                        const OptimizerConfig& c, std::int64_t sample_rows) {
  const auto t0 = std::chrono::steady_clock::now();
  RateCalibration out;
  // A seeded sample, drawn apart from the training shuffle's stream.
  std::vector<Index> order(static_cast<std::size_t>(train.x.rows()));
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<Index>(i);
  std::mt19937_64 rng(c.seed ^ 0x9e3779b97f4a7c15ull);
  shuffle_rows(order, rng);
  // Rows of weight 0 teach nothing: neither the candidates nor the scale
  // of the rows that centres them (a copy of the data at 30 times the
  // counts, weighted 0, had set the rate 27 times too low).
  if (!train.weight.empty())
    std::erase_if(order, [&](Index r) { return !(train.weight[static_cast<std::size_t>(r)] > 0); });
  order.resize(std::min(order.size(), static_cast<std::size_t>(sample_rows)));
  out.sample_rows = static_cast<std::int64_t>(order.size());
  // The splits the candidates are judged on: 80% to train, 20% to judge;
  // on a sample of few rows, every fifth of it judged in turn (the loss of
  // a dozen rows alone picks rates 2^10 apart from one draw to the next).
  const std::span<const Index> sample(order);
  const std::size_t folds = order.size() < kFoldedBelow && order.size() >= kFolds ? kFolds : 1;
  std::vector<Split> splits;
  for (std::size_t f = 0; f < folds; ++f) {
    std::vector<Index> fit_part, judge_part;
    if (folds == 1) {
      const std::size_t fit_rows = std::max<std::size_t>(
          1, order.size() - static_cast<std::size_t>(order.size() * kHoldoutFraction));
      fit_part.assign(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(fit_rows));
      judge_part.assign(sample.begin() + static_cast<std::ptrdiff_t>(fit_rows), sample.end());
    } else {
      for (std::size_t i = 0; i < order.size(); ++i)
        (i * folds / order.size() == f ? judge_part : fit_part).push_back(order[i]);
    }
    std::vector<Index> new_of_old(static_cast<std::size_t>(train.x.cols()), -1);
    Index used = 0;
    SampleRows fit_copy = copy_rows(train, fit_part, new_of_old, used);
    SampleRows judge_copy = copy_rows(train, judge_part, new_of_old, used);
    splits.push_back({to_dataset(std::move(fit_copy), used, "calibration sample"),
                      to_dataset(std::move(judge_copy), used, "calibration holdout"), used});
  }
  out.folds = static_cast<int>(folds);
  out.mean_squared_norm = folds == 1 ? mean_squared_norm(splits[0].fit.x) : sample_squared_norm(train, order);
  const double centre = out.mean_squared_norm > 0 ? 1.0 / out.mean_squared_norm : 1.0;
  if (!c.bias_rate_auto)
    out.bias_rate = c.bias_rate;
  else if (out.mean_squared_norm > 0 && out.mean_squared_norm < kSmallRows)
    out.bias_rate = out.mean_squared_norm * kSmallRowsBiasShare;

  std::vector<std::string> names;
  for (int i = 0; i < classes; ++i) names.push_back(std::to_string(i));
  OptimizerConfig trial = c;
  trial.bias_rate = out.bias_rate;
  trial.threads = 1;
  trial.deterministic = false;
  trial.patience = 0;
  trial.epochs = std::min(trial.epochs, kMaxTrialEpochs);

  // Trains the candidates `batch` (index k - kLowest), one thread each.
  const int count = kHighest - kLowest + 1;
  std::vector<RateTrial> all(static_cast<std::size_t>(count));
  const int team = std::max(1, c.threads > 0 ? c.threads : usable_cores());
  auto run = [&](const std::vector<int>& batch) {
    const int n = static_cast<int>(batch.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(std::max(1, std::min(n, team)))
    for (int q = 0; q < n; ++q) {
      RateTrial& t = all[static_cast<std::size_t>(batch[static_cast<std::size_t>(q)])];
      t.rate = centre * std::ldexp(1.0, kLowest + batch[static_cast<std::size_t>(q)]);
      t.holdout_log_loss = std::numeric_limits<double>::infinity();
      if (t.rate * c.l2 >= 1) continue;  // the decay factor 1 - eta l2 would not stay positive
      OptimizerConfig tc = trial;
      tc.learning_rate = t.rate;
      try {
        double loss = 0, accuracy = 0;
        for (const Split& split : splits) {
          Model m = Model::zeros(names, true, split.features, head);
          Progress quiet(Progress::Mode::kQuiet, std::cerr);
          train_fixed_rate(m, split.fit, nullptr, tc, LayerKind::kSparse, quiet);
          const Dataset& judge = split.judge.x.rows() > 0 ? split.judge : split.fit;
          const Judged j = judge_candidate(m, judge);
          loss += j.log_loss / double(splits.size());
          accuracy += j.accuracy / double(splits.size());
        }
        if (std::isfinite(loss)) {
          t.holdout_log_loss = loss;
          t.holdout_accuracy = accuracy;
        }
      } catch (const std::exception&) {
        // A diverged candidate stays at +inf (exceptions must not leave the region).
      }
    }
  };
  // The rate with the lowest held-out loss among every other k and the two
  // neighbours of the best of those (rate_search.h). (Taking the smallest
  // rate within 2% of it instead, against noise in a flat minimum, cost 2
  // points of test accuracy on fortunes-20 and 1 on gen-20class and gained
  // 0.2 on dict-lang: data/PERFORMANCE.md.)
  RateSearch search(count, kStart - kLowest);
  for (std::vector<int> batch = search.next(team); !batch.empty(); batch = search.next(team)) {
    run(batch);
    for (const int i : batch) search.record(i, all[static_cast<std::size_t>(i)].holdout_log_loss);
  }
  int taken = search.chosen();
  double prior = 0;
  for (const Split& split : splits) prior += prior_loss(split, classes) / double(splits.size());
  out.prior_log_loss = prior;
  if (taken >= 0 && holdout_sees_no_signal(taken, all[static_cast<std::size_t>(taken)].holdout_log_loss, prior)) {
    const int start = kStart - kLowest;
    if (!search.tried(start)) run({start});
    const RateTrial& s = all[static_cast<std::size_t>(start)];
    if (std::isfinite(s.holdout_log_loss) &&
        detail::predicts_clearly_better(s, all[static_cast<std::size_t>(taken)], judged_rows(splits))) {
      taken = start;
      out.no_signal = true;
    }
  }
  for (int i = 0; i < count; ++i)
    if (search.tried(i) || (out.no_signal && i == taken)) out.trials.push_back(all[static_cast<std::size_t>(i)]);
  const RateTrial* chosen = &all[static_cast<std::size_t>(taken)];
  const bool l2_ruled_out_all = std::all_of(out.trials.begin(), out.trials.end(),
                                            [&](const RateTrial& t) { return t.rate * c.l2 >= 1; });
  if (!std::isfinite(chosen->holdout_log_loss) && l2_ruled_out_all) {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "is %g: every learning rate tried (%.3g to %.3g) times it is >= 1, where the decay "
                  "factor 1 - rate x l2 of each step is not positive; give a smaller l2 (per row, as "
                  "scikit-learn's alpha: usually 1e-7 to 1e-3)",
                  c.l2, out.trials.front().rate, out.trials.back().rate);
    throw ConfigError("optimizer.l2", buf);
  }
  if (!std::isfinite(chosen->holdout_log_loss))
    throw ConfigError("optimizer.learning_rate",
                      "\"auto\": every rate tried on a sample of " + std::to_string(out.sample_rows) +
                          " training rows diverged" + scale_hint(out.mean_squared_norm) +
                          "; give it as a number");
  out.rate = chosen->rate;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace bagel
