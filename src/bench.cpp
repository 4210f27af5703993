#include "bagel/bench.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include <omp.h>

#include "bagel/cores.h"
#include "bagel/dataset.h"
#include "bagel/dense_linear.h"
#include "bagel/error.h"
#include "bagel/json_parse.h"
#include "bagel/override_error.h"
#include "bagel/json_reader.h"
#include "bagel/labels.h"
#include "bagel/loss.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/synthetic.h"
#include "bagel/trainer.h"

namespace bagel {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// printf into a string, for the longer messages.
template <class... Args>
std::string format_text(const char* f, Args... args) {
  char buf[600];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

// Reads a "VmHWM:" / "VmRSS:" style line of /proc/self/status, in MiB.
double proc_status_mb(const char* key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(std::strlen(key))) / 1024.0;
  return 0;
}

// Peak resident memory of one path: Linux resets the high-water mark when "5"
// is written to /proc/self/clear_refs, so each path's peak is measured on its
// own inside one process.
class PeakMemory {
 public:
  PeakMemory() {
    malloc_trim(0);  // hand freed memory back first, or reuse hides a path's peak
    std::ofstream("/proc/self/clear_refs") << "5";
    base_ = proc_status_mb("VmRSS:");
  }
  double extra_mb() const { return std::max(0.0, proc_status_mb("VmHWM:") - base_); }

 private:
  double base_ = 0;
};

double available_memory_gb() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb / (1024.0 * 1024.0);
  return 4.0;
}

template <class F>
double time_ms(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// First `rows` rows as an owning matrix.
CsrMatrix head_rows(const CsrMatrix& x, Index rows) {
  rows = std::min(rows, x.rows());
  const auto nnz = static_cast<std::size_t>(x.indptr()[rows]);
  return CsrMatrix(rows, x.cols(), std::vector<Index>(x.indptr().begin(), x.indptr().begin() + rows + 1),
                   std::vector<Index>(x.indices().begin(), x.indices().begin() + nnz),
                   std::vector<float>(x.data().begin(), x.data().begin() + nnz));
}

// Rows densified per GEMM block: bounded so the block stays ~64 MiB.
Index dense_block(Index features) {
  return std::clamp<Index>(static_cast<Index>((64 << 20) / (4.0 * features)), 1, 256);
}

// Bytes the dense path holds at once: W and its gradient (K x F), the
// densified training batch and the inference block (x F each).
double dense_bytes(Index features, int outputs, int batch) {
  return 4.0 * features * (2.0 * outputs + batch + dense_block(features));
}

Model random_model(int classes, Index features, std::uint64_t seed) {
  std::vector<std::string> names;
  for (int c = 0; c < classes; ++c) names.push_back(std::to_string(c));
  Model m = Model::zeros(names, true, features);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  for (float& w : m.weight) w = normal(rng);
  for (float& b : m.bias) b = normal(rng);
  return m;
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(double(a[i]) - b[i]));
  return d;
}

// The settings both paths train with: a constant rate, whatever the
// training defaults (README §7).
OptimizerConfig bench_optimizer(const BenchConfig& c, int batch) {
  OptimizerConfig opt;
  opt.epochs = c.epochs;
  opt.learning_rate = c.learning_rate;
  opt.schedule = ScheduleKind::kConstant;
  opt.l2 = c.l2;
  opt.batch_size = batch;
  opt.seed = c.seed;
  opt.threads = 1;  // the one-thread loops of both layers are what is timed
  return opt;
}

Model train_one(const Dataset& data, const std::vector<std::string>& classes, Index features,
                const OptimizerConfig& opt, LayerKind layer) {
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  Model m = Model::zeros(classes, true, features);
  train_model(m, data, nullptr, opt, layer, quiet);
  return m;
}

// Equivalence first: a fast path that computes something else is no result.
// Different forward passes are an error. Weights that differ after training
// are an error only if they still differ after one epoch at a stable rate;
// otherwise the configured rate amplified rounding differences (the two
// paths sum in different orders), and the timings stand, with a warning.
void check_equivalence(BenchCase& r, const std::string& name, const Dataset& data,
                       const OptimizerConfig& opt, Progress& progress) {
  constexpr double kForwardTol = 1e-4, kWeightTol = 1e-3;
  char where[160];
  std::snprintf(where, sizeof where, "%s (F=%d, batch %d)", name.c_str(), r.features, r.batch_size);
  if (r.forward_max_diff > kForwardTol)
    throw Error(format_text("dense and sparse forward passes disagree on %s: max |dp| %.3g (tolerance %.0e): "
                    "the layers compute different things",
                    where, r.forward_max_diff, kForwardTol));
  if (r.train_max_diff <= kWeightTol) return;
  OptimizerConfig stable = opt;
  stable.epochs = 1;
  stable.learning_rate = std::min(opt.learning_rate, 1e-3);
  std::vector<std::string> classes;
  for (int c = 0; c < r.classes; ++c) classes.push_back(std::to_string(c));
  const Model sparse = train_one(data, classes, r.features, stable, LayerKind::kSparse);
  const Model dense = train_one(data, classes, r.features, stable, LayerKind::kDense);
  r.stable_rate = stable.learning_rate;
  r.stable_max_diff = max_abs_diff(sparse.weight, dense.weight);
  if (r.stable_max_diff > kWeightTol)
    throw Error(format_text("dense and sparse training disagree on %s: max |dw| %.3g after %d epoch(s) at "
                    "learning_rate %g and %.3g after one at %g (tolerance %.0e): the layers train "
                    "differently",
                    where, r.train_max_diff, opt.epochs, opt.learning_rate, r.stable_max_diff,
                    stable.learning_rate, kWeightTol));
  progress.warn(format_text("%s: the weights of the two paths differ by up to %.3g after %d epoch(s) at "
                    "learning_rate %g, but by %.3g after one at %g: the layers agree, and this rate "
                    "amplifies their rounding differences (unstable for this data; lower "
                    "learning_rate with --set learning_rate=...). Timings are kept",
                    where, r.train_max_diff, opt.epochs, opt.learning_rate, r.stable_max_diff,
                    stable.learning_rate));
}

BenchCase run_case(const std::string& name, const Dataset& data, int classes, int batch,
                   const BenchConfig& c, double memory_limit_gb, Progress& progress) {
  BenchCase r;
  r.data = name;
  r.rows = data.x.rows();
  r.features = data.x.cols();
  r.nnz_per_row = r.rows ? double(data.x.nonZeros()) / r.rows : 0;
  r.classes = classes;
  r.outputs = num_outputs_for(classes);
  r.batch_size = batch;
  // Rows without entries cost the sparse path nothing: no ratio to expect
  // (NaN: "n/a" in the table, empty in the CSV, null in the JSON).
  const double nnz_row = r.nnz_per_row > 0 ? r.nnz_per_row : NAN;
  r.expected_infer_ratio = r.features / nnz_row;
  r.expected_train_ratio = r.features * (2.0 * batch + 1) / (2.0 * batch * nnz_row);

  const double need_gb = dense_bytes(r.features, r.outputs, batch) / double(1 << 30);
  if (need_gb > memory_limit_gb) {
    r.dense_skipped = true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "dense path needs %.1f GiB, over the %.1f GiB limit", need_gb,
                  memory_limit_gb);
    r.skip_reason = buf;
  }
  const Model model = random_model(classes, r.features, c.seed);
  const int nc = model.num_classes();
  std::vector<double> p_sparse, p_dense(static_cast<std::size_t>(r.rows) * nc);
  const Index block = dense_block(r.features);

  const OptimizerConfig opt = bench_optimizer(c, batch);
  Progress quiet(Progress::Mode::kQuiet, std::cerr);
  Model trained_sparse, trained_dense;

  for (int rep = 0; rep < c.repetitions; ++rep) {
    {
      PeakMemory peak;
      r.sparse_infer.ms.push_back(time_ms([&] { p_sparse = predict_proba(model, data.x, c.threads); }));
      Model m = Model::zeros(model.classes, true, r.features);
      r.sparse_train.ms.push_back(time_ms([&] { train_model(m, data, nullptr, opt, LayerKind::kSparse, quiet); }));
      r.sparse_peak_mb = std::max(r.sparse_peak_mb, peak.extra_mb());
      trained_sparse = std::move(m);
    }
    if (r.dense_skipped) continue;
    {
      PeakMemory peak;
      r.dense_infer.ms.push_back(
          time_ms([&] { predict_proba_dense(model, data.x, 0, r.rows, p_dense.data(), block); }));
      Model m = Model::zeros(model.classes, true, r.features);
      r.dense_train.ms.push_back(time_ms([&] { train_model(m, data, nullptr, opt, LayerKind::kDense, quiet); }));
      r.dense_peak_mb = std::max(r.dense_peak_mb, peak.extra_mb());
      trained_dense = std::move(m);
    }
    if (rep == 0) {
      for (std::size_t i = 0; i < p_dense.size(); ++i)
        r.forward_max_diff = std::max(r.forward_max_diff, std::abs(p_dense[i] - p_sparse[i]));
      r.train_max_diff = max_abs_diff(trained_dense.weight, trained_sparse.weight);
      check_equivalence(r, name, data, opt, progress);
    }
  }
  char line[200];
  std::snprintf(line, sizeof line, "%s F=%d K=%d batch=%d: sparse epoch %.1f ms, dense %s", name.c_str(),
                r.features, r.outputs, batch, r.sparse_train.median(),
                r.dense_skipped ? "skipped" : fmt("%.1f ms", r.dense_train.median()).c_str());
  progress.message(line);
  return r;
}

}  // namespace

double Timing::median() const {
  if (ms.empty()) return 0;
  std::vector<double> s = ms;
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}
double Timing::min() const { return ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end()); }
double Timing::max() const { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }

namespace {

template <class T>
std::vector<T> narrow(const std::vector<std::int64_t>& v) {
  return std::vector<T>(v.begin(), v.end());
}

std::vector<std::int64_t> widen(const auto& v) { return std::vector<std::int64_t>(v.begin(), v.end()); }

}  // namespace

BenchConfig parse_bench_config(const nlohmann::json& doc, const fs::path& base_dir) {
  BenchConfig c;
  JsonReader root(doc, "");
  if (root.has("sweep") && !doc.at("sweep").is_null()) {
    JsonReader s = root.object("sweep");
    c.features = narrow<Index>(s.get_integer_list("features", widen(c.features), 1, 1 << 26));
    c.classes = narrow<int>(s.get_integer_list("classes", widen(c.classes), 2, 10000));
    c.nnz_per_row = s.get_number("nnz_per_row", c.nnz_per_row);
    c.zipf_exponent = s.get_number("zipf_exponent", c.zipf_exponent);
    if (c.nnz_per_row <= 0) throw ConfigError(s.field("nnz_per_row"), "expected a number > 0");
    s.finish();
  } else {
    c.sweep = !root.has("sweep");  // "sweep": null turns the generated data off
    root.get_string("sweep", "");
  }
  if (root.has("input") && !doc.at("input").is_null()) {
    JsonReader in = root.object("input");
    DataSpec d;
    const auto resolve = [&](const std::string& p) {
      return p.empty() || fs::path(p).is_absolute() ? p : (base_dir / p).lexically_normal().string();
    };
    d.features = resolve(in.require_string("features"));
    d.labels = resolve(in.get_string("labels", ""));
    d.zero_based = parse_zero_based(in.get_string("zero_based", "auto"), in.field("zero_based"));
    in.finish();
    c.input = d;
  } else {
    root.get_string("input", "");
  }
  c.batch_sizes = narrow<int>(root.get_integer_list("batch_sizes", widen(c.batch_sizes), 1, 1 << 16));
  c.rows = static_cast<Index>(root.get_integer("rows", c.rows, 1, std::numeric_limits<Index>::max()));
  c.repetitions = static_cast<int>(root.get_integer("repetitions", c.repetitions, 1, 1000));
  c.learning_rate = root.get_number("learning_rate", c.learning_rate);
  if (!(c.learning_rate > 0)) throw ConfigError("learning_rate", "expected a number > 0 (a constant rate)");
  c.epochs = static_cast<int>(root.get_integer("epochs", c.epochs, 1, 1000));
  c.l2 = root.get_number("l2", c.l2);
  if (!(c.l2 >= 0) || c.l2 * c.learning_rate >= 1)
    throw ConfigError("l2", "expected a number >= 0 with learning_rate * l2 < 1");
  c.threads = static_cast<int>(root.get_integer("threads", c.threads, 0, 1024));  // 0: all cores
  c.max_dense_memory_gb = root.get_number("max_dense_memory_gb", c.max_dense_memory_gb);
  if (!(c.max_dense_memory_gb >= 0))
    throw ConfigError("max_dense_memory_gb", "expected a number >= 0 (0: half of the available memory)");
  c.seed = static_cast<std::uint64_t>(root.get_integer("seed", static_cast<std::int64_t>(c.seed), 0,
                                                       std::numeric_limits<std::int64_t>::max()));
  // null: write nothing (raw() marks the key as known).
  c.output = root.has("output") && root.raw("output").is_null() ? "" : root.get_string("output", c.output);
  if (!c.output.empty() && !fs::path(c.output).is_absolute())
    c.output = (base_dir / c.output).lexically_normal().string();
  root.finish();
  if (!c.sweep && !c.input) throw ConfigError("sweep", "nothing to run: no sweep and no input");
  return c;
}

BenchConfig load_bench_config(const std::string& path, const std::vector<std::string>& overrides) {
  nlohmann::json doc = read_json_file(path, "bench config");
  for (const std::string& o : overrides) apply_override(doc, o);
  try {
    return parse_bench_config(doc, fs::absolute(path).parent_path());
  } catch (const ConfigError& e) {
    rethrow_config_error(e, path, overrides);
  }
}

std::vector<BenchCase> run_bench(const BenchConfig& c, Progress& progress) {
  const int threads = c.threads > 0 ? c.threads : usable_cores();
  omp_set_num_threads(threads);
  Eigen::setNbThreads(threads);
  const double memory_limit = c.max_dense_memory_gb > 0 ? c.max_dense_memory_gb : 0.5 * available_memory_gb();
  std::vector<BenchCase> cases;
  if (c.input) {
    LabeledData raw;  // labels optional here: without them, alternating 0/1 (timing only)
    raw.features = read_features(c.input->features, c.input->zero_based, &raw.labels);
    if (raw.features.rows() == 0) throw FileError(c.input->features, "has no rows to time");
    if (!c.input->labels.empty()) raw.labels = read_labels(c.input->labels);
    if (raw.labels.size() != 0 && static_cast<Index>(raw.labels.size()) != raw.features.rows())
      throw FileError(c.input->labels, "label count does not match the rows of " + c.input->features);
    Dataset d;
    d.name = c.input->features;
    d.x = head_rows(raw.features, c.rows);
    int classes = 2;
    if (raw.labels.size() > 0) {
      const Classes cl = Classes::fit(raw.labels);
      std::vector<std::int32_t> y = cl.encode(raw.labels);
      d.y.assign(y.begin(), y.begin() + d.x.rows());
      classes = static_cast<int>(cl.size());
    } else {
      d.y.resize(static_cast<std::size_t>(d.x.rows()));
      for (std::size_t i = 0; i < d.y.size(); ++i) d.y[i] = static_cast<std::int32_t>(i % 2);
    }
    for (int b : c.batch_sizes) cases.push_back(run_case(d.name, d, classes, b, c, memory_limit, progress));
  }
  if (c.sweep) {
    for (int classes : c.classes)
      for (Index f : c.features) {
        SyntheticSpec spec;
        spec.rows = c.rows;
        spec.features = f;
        spec.nnz_per_row = c.nnz_per_row;
        spec.zipf_exponent = c.zipf_exponent;
        spec.classes = classes;
        spec.seed = c.seed;
        SyntheticData s = make_synthetic(spec);
        Dataset d{"zipf", std::move(s.x), std::move(s.y), {}, false};
        for (int b : c.batch_sizes) cases.push_back(run_case("zipf", d, classes, b, c, memory_limit, progress));
      }
  }
  return cases;
}

std::string bench_table(const std::vector<BenchCase>& cases) {
  std::ostringstream out;
  char buf[400];
  std::snprintf(buf, sizeof buf, "%-10s %8s %9s %7s %4s %5s | %11s %11s %8s %8s | %11s %11s %8s %8s | %9s %9s\n",
                "data", "rows", "features", "nnz/row", "K", "batch", "infer dense", "infer spars",
                "speed-up", "expected", "epoch dense", "epoch spars", "speed-up", "expected",
                "dense MiB", "spars MiB");
  out << buf << std::string(std::strlen(buf) - 1, '-') << "\n";
  for (const BenchCase& r : cases) {
    const std::string name = r.data.size() > 10 ? "..." + r.data.substr(r.data.size() - 7) : r.data;
    const auto ms = [](const Timing& t) { return t.ms.empty() ? std::string("-") : fmt("%.2f ms", t.median()); };
    const auto ratio = [](const Timing& d, const Timing& s) {
      return d.ms.empty() || s.median() <= 0 ? std::string("-") : fmt("%.1fx", d.median() / s.median());
    };
    const auto expected = [](double x) { return std::isnan(x) ? std::string("n/a") : fmt("%.0fx", x); };
    std::snprintf(buf, sizeof buf, "%-10s %8d %9d %7.1f %4d %5d | %11s %11s %8s %8s | %11s %11s %8s %8s | %9s %9s\n",
                  name.c_str(), r.rows, r.features, r.nnz_per_row, r.outputs, r.batch_size,
                  ms(r.dense_infer).c_str(), ms(r.sparse_infer).c_str(),
                  ratio(r.dense_infer, r.sparse_infer).c_str(), expected(r.expected_infer_ratio).c_str(),
                  ms(r.dense_train).c_str(), ms(r.sparse_train).c_str(),
                  ratio(r.dense_train, r.sparse_train).c_str(), expected(r.expected_train_ratio).c_str(),
                  r.dense_skipped ? "-" : fmt("%.1f", r.dense_peak_mb).c_str(),
                  fmt("%.1f", r.sparse_peak_mb).c_str());
    out << buf;
    if (r.dense_skipped) out << "  (dense skipped: " << r.skip_reason << ")\n";
  }
  return out.str();
}

std::string bench_csv(const std::vector<BenchCase>& cases) {
  std::ostringstream out;
  out << "data,rows,features,nnz_per_row,classes,outputs,batch_size,"
         "dense_infer_ms,dense_infer_min_ms,dense_infer_max_ms,sparse_infer_ms,sparse_infer_min_ms,"
         "sparse_infer_max_ms,infer_speedup,expected_infer_ratio,"
         "dense_epoch_ms,dense_epoch_min_ms,dense_epoch_max_ms,sparse_epoch_ms,sparse_epoch_min_ms,"
         "sparse_epoch_max_ms,epoch_speedup,expected_epoch_ratio,dense_peak_mib,sparse_peak_mib,"
         "forward_max_diff,train_max_diff,dense_skipped\n";
  for (const BenchCase& r : cases) {
    const auto t = [](const Timing& x) {
      return x.ms.empty() ? std::string(",,") : fmt("%.4f", x.median()) + "," + fmt("%.4f", x.min()) + "," + fmt("%.4f", x.max());
    };
    const auto ratio = [](const Timing& d, const Timing& s) {
      return d.ms.empty() || s.median() <= 0 ? std::string() : fmt("%.3f", d.median() / s.median());
    };
    const auto expected = [](double x) { return std::isnan(x) ? std::string() : fmt("%.3f", x); };
    out << r.data << "," << r.rows << "," << r.features << "," << fmt("%.3f", r.nnz_per_row) << ","
        << r.classes << "," << r.outputs << "," << r.batch_size << "," << t(r.dense_infer) << ","
        << t(r.sparse_infer) << "," << ratio(r.dense_infer, r.sparse_infer) << ","
        << expected(r.expected_infer_ratio) << "," << t(r.dense_train) << "," << t(r.sparse_train) << ","
        << ratio(r.dense_train, r.sparse_train) << "," << expected(r.expected_train_ratio) << ","
        << (r.dense_skipped ? "" : fmt("%.2f", r.dense_peak_mb)) << "," << fmt("%.2f", r.sparse_peak_mb)
        << "," << fmt("%.3g", r.forward_max_diff) << "," << fmt("%.3g", r.train_max_diff) << ","
        << (r.dense_skipped ? "true" : "false") << "\n";
  }
  return out.str();
}

nlohmann::json bench_json(const std::vector<BenchCase>& cases, const BenchConfig& c) {
  nlohmann::json arr = nlohmann::json::array();
  const auto t = [](const Timing& x) {
    return nlohmann::json{{"median_ms", x.median()}, {"min_ms", x.min()}, {"max_ms", x.max()}, {"samples_ms", x.ms}};
  };
  for (const BenchCase& r : cases) {
    nlohmann::json j = {{"data", r.data}, {"rows", r.rows}, {"features", r.features},
                        {"nnz_per_row", r.nnz_per_row}, {"classes", r.classes}, {"outputs", r.outputs},
                        {"batch_size", r.batch_size}, {"sparse_infer", t(r.sparse_infer)},
                        {"sparse_epoch", t(r.sparse_train)}, {"sparse_peak_mib", r.sparse_peak_mb},
                        {"expected_infer_ratio", r.expected_infer_ratio},
                        {"expected_epoch_ratio", r.expected_train_ratio},
                        {"forward_max_diff", r.forward_max_diff}, {"train_max_diff", r.train_max_diff},
                        {"stable_rate", r.stable_rate}, {"stable_max_diff", r.stable_max_diff},
                        {"dense_skipped", r.dense_skipped}};
    if (r.dense_skipped) j["skip_reason"] = r.skip_reason;
    else {
      j["dense_infer"] = t(r.dense_infer);
      j["dense_epoch"] = t(r.dense_train);
      j["dense_peak_mib"] = r.dense_peak_mb;
      j["infer_speedup"] = r.dense_infer.median() / std::max(r.sparse_infer.median(), 1e-12);
      j["epoch_speedup"] = r.dense_train.median() / std::max(r.sparse_train.median(), 1e-12);
    }
    arr.push_back(j);
  }
  return {{"repetitions", c.repetitions}, {"threads", c.threads > 0 ? c.threads : usable_cores()},
          {"learning_rate", c.learning_rate}, {"epochs", c.epochs}, {"l2", c.l2},
          {"cost_model", {{"infer", "dense rows*F*K vs sparse nnz*K: F / (nnz/row)"},
                          {"epoch", "dense steps*(2*B*F*K + F*K) vs sparse 2*nnz*K: F*(2B+1) / (2*B*nnz/row)"}}},
          {"cases", arr}};
}

}  // namespace bagel
