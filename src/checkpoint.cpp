#include "bagel/checkpoint.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <system_error>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/json_parse.h"
#include "bagel/npy.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

constexpr int kFormatVersion = 2;
constexpr const char* kStateFile = "checkpoint.json";

// FNV-1a over 8-byte words: fast enough for gigabytes (one multiply per
// word) and any change of a value, an index or the order shows.
class Digest {
 public:
  template <typename T>
  void add(std::span<const T> values) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(values.data());
    const std::size_t size = values.size_bytes();
    std::size_t i = 0;
    for (; i + 8 <= size; i += 8) {
      std::uint64_t word;
      std::memcpy(&word, bytes + i, 8);
      mix(word);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, bytes + i, size - i);
    mix(tail ^ size);
  }
  std::uint64_t value() const { return h_; }

 private:
  void mix(std::uint64_t word) { h_ = (h_ ^ word) * 0x100000001b3ULL; }
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

double number_or(const nlohmann::json& j, double otherwise) {
  return j.is_null() ? otherwise : j.get<double>();
}

nlohmann::json history_json(const std::vector<EpochRecord>& history) {
  nlohmann::json out = nlohmann::json::array();
  for (const EpochRecord& r : history) {
    nlohmann::json e = {{"epoch", r.epoch}, {"train_loss", number_or_null(r.train_loss)},
                        {"seconds", r.seconds}, {"samples_per_second", r.samples_per_second},
                        {"learning_rate", r.learning_rate}};
    if (r.valid)
      e["valid"] = {{"rows", r.valid->rows}, {"accuracy", r.valid->accuracy},
                    {"log_loss", number_or_null(r.valid->log_loss)},
                    {"macro_f1", r.valid->macro_f1}};
    out.push_back(e);
  }
  return out;
}

std::vector<EpochRecord> history_from(const nlohmann::json& j) {
  std::vector<EpochRecord> out;
  for (const auto& e : j) {
    EpochRecord r;
    r.epoch = e.at("epoch").get<int>();
    r.train_loss = number_or(e.at("train_loss"), NAN);
    r.seconds = e.at("seconds").get<double>();
    r.samples_per_second = e.at("samples_per_second").get<double>();
    r.learning_rate = e.at("learning_rate").get<double>();
    if (e.contains("valid")) {
      Metrics m;
      m.rows = e["valid"].at("rows").get<std::int64_t>();
      m.accuracy = e["valid"].at("accuracy").get<double>();
      m.log_loss = number_or(e["valid"].at("log_loss"), NAN);
      m.macro_f1 = e["valid"].at("macro_f1").get<double>();
      r.valid = m;
    }
    out.push_back(r);
  }
  return out;
}

void write_array(const fs::path& folder, const char* name, const std::vector<float>& values,
                 int outputs) {
  write_npy((folder / name).string(), values,
            {static_cast<std::int64_t>(values.size()) / outputs, outputs});
}

// FOLDER/NAME: `expected` finite values; with `rows` > 0, of shape (rows,
// expected / rows), as write_array writes them.
std::vector<float> read_array(const fs::path& folder, const char* name, std::size_t expected,
                              std::int64_t rows = 0) {
  const std::string path = (folder / name).string();
  const NpyArray a = read_npy(path);
  std::vector<float> values = npy_to_float32(a.header, a.payload(), path);
  if (values.size() != expected)
    throw FileError(path, "holds " + std::to_string(values.size()) + " weights, expected " +
                              std::to_string(expected));
  if (rows > 0 && (a.header.shape.size() != 2 || a.header.shape[0] != rows))
    throw FileError(path, "is not of shape (" + std::to_string(rows) + ", " +
                              std::to_string(expected / static_cast<std::size_t>(rows)) + ")");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      throw FileError(path, "holds a non-finite value at position " + std::to_string(i));
  return values;
}

// The config keys a resume may change: where it runs, not what it computes.
nlohmann::json comparable(nlohmann::json config) {
  config.erase("output");
  if (config.contains("optimizer")) config["optimizer"].erase("threads");
  return config;
}

}  // namespace

std::string checkpoint_folder(const std::string& output) {
  fs::path folder = fs::path(output).lexically_normal();
  if (!folder.has_filename() && folder.has_relative_path()) folder = folder.parent_path();  // dir/
  // `.` and `..` name no folder of their own: `.` + ".bagel-resume" would put
  // the state inside the model folder, which --resume then refuses as a
  // folder of other files. The state goes beside the folder's real name
  // (`-o .` in out/ saves ../out.bagel-resume), as the claim's lock does.
  const fs::path last = folder.filename();
  if (last == "." || last == "..") {
    const fs::path real = fs::absolute(folder).lexically_normal();
    const fs::path named = real.has_filename() ? real : real.parent_path();
    if (named.has_filename()) {
      fs::path state = named;
      state += ".bagel-resume";
      return state.lexically_relative(fs::current_path()).string();
    }
  }
  std::string name = folder.string();
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  return name + ".bagel-resume";
}

std::uint64_t data_fingerprint(const TrainingData& data) {
  Digest d;
  for (const Dataset* split : {&data.train, data.valid ? &*data.valid : nullptr}) {
    if (split == nullptr) continue;
    const std::int64_t shape[] = {split->x.rows(), split->x.cols()};
    d.add(std::span<const std::int64_t>(shape));
    d.add(split->x.indptr());
    d.add(split->x.indices());
    d.add(split->x.data());
    d.add(std::span<const std::int32_t>(split->y));
    d.add(std::span<const float>(split->weight));
  }
  return d.value();
}

void save_checkpoint(const TrainingCheckpoint& k, const nlohmann::json& config,
                     std::uint64_t fingerprint, const std::string& folder) {
  const int outputs = static_cast<int>(k.bias.size());
  nlohmann::json restarts = nlohmann::json::array();
  for (const RateRestart& r : k.restarts)
    restarts.push_back({{"learning_rate", r.learning_rate}, {"epoch", r.epoch}, {"rows", r.rows},
                        {"mean_loss", number_or_null(r.mean_loss)}, {"limited_rows", r.limited_rows}});
  const nlohmann::json state = {
      {"format_version", kFormatVersion}, {"epoch", k.epoch}, {"step", k.step},
      {"learning_rate", k.learning_rate}, {"bias_rate", k.bias_rate}, {"epochs", k.epochs},
      {"history", history_json(k.history)}, {"restarts", restarts},
      {"calibration", k.calibration}, {"best_loss", number_or_null(k.best_loss)},
      {"best_epoch", k.best_epoch}, {"bad_epochs", k.bad_epochs},
      {"averaging", k.averaging}, {"average_bias_sum", k.average_bias_sum},
      {"average_steps", k.average_steps},
      {"data_fingerprint", std::to_string(fingerprint)}, {"config", config}};
  AtomicPath out{fs::path(folder)};
  try {
    std::error_code ec;
    fs::create_directory(out.temp(), ec);
    if (ec) throw FileError(out.temp().string(), "cannot create: " + ec.message());
    write_file_atomic(out.temp() / kStateFile, state.dump(1) + "\n");
    write_array(out.temp(), "weight.npy", k.weight, outputs);
    write_array(out.temp(), "bias.npy", k.bias, outputs);
    if (!k.best_weight.empty()) {
      write_array(out.temp(), "best_weight.npy", k.best_weight, outputs);
      write_array(out.temp(), "best_bias.npy", k.best_bias, outputs);
    }
    if (k.averaging) write_array(out.temp(), "average_weight_sum.npy", k.average_weight_sum, outputs);
  } catch (const FileError& e) {
    // Its temporary is gone with `out`: the folder the user knows is named.
    throw FileError(folder, "cannot save the stopped run's state: " + e.message());
  }
  if (!fs::exists(folder) || !out.commit_by_exchange()) out.commit();
}

bool checkpoint_exists(const std::string& folder) {
  std::error_code ec;
  return fs::exists(fs::path(folder) / kStateFile, ec);
}

void require_checkpoint(const std::string& folder) {
  if (checkpoint_exists(folder)) return;
  std::error_code ec;
  const fs::file_status st = fs::status(folder, ec);
  const std::string what = !fs::exists(st)       ? " does not exist"
                           : !fs::is_directory(st) ? " is a file, not the folder a stopped run saves"
                                                   : " holds no saved state (" + std::string(kStateFile) + ")";
  throw UsageError("--resume", "no stopped run to resume: " + folder + what +
                                   " (a run saves it there when stopped by Ctrl-C or kill after a "
                                   "completed epoch)");
}

TrainingCheckpoint load_checkpoint(const std::string& folder, const nlohmann::json& config,
                                   std::uint64_t fingerprint, std::int64_t features, int outputs) {
  const fs::path dir(folder);
  require_checkpoint(folder);
  const std::string state_path = (dir / kStateFile).string();
  const nlohmann::json s = read_json_file(state_path, "checkpoint");
  try {
    if (s.at("format_version").get<int>() != kFormatVersion)
      throw FileError(state_path, "was written by another version of bagel; train from scratch");
    const nlohmann::json patch =
        nlohmann::json::diff(comparable(s.at("config")), comparable(config));
    if (!patch.empty()) {
      const std::string where = patch[0].at("path").get<std::string>();
      throw UsageError("--resume", "the config differs from the stopped run's (at " + where +
                                        "); resume with the config it ran with, or train without "
                                        "--resume");
    }
    if (s.at("data_fingerprint").get<std::string>() != std::to_string(fingerprint))
      throw ConfigError("--resume", "the training data differs from the stopped run's (rows, "
                                    "values, order or labels); resume on the same data, or train "
                                    "without --resume");
    TrainingCheckpoint k;
    k.epoch = s.at("epoch").get<int>();
    k.step = s.at("step").get<std::int64_t>();
    k.learning_rate = s.at("learning_rate").get<double>();
    k.bias_rate = s.value("bias_rate", 1.0);  // absent: saved before it existed, when it was 1
    k.epochs = s.at("epochs").get<int>();
    k.history = history_from(s.at("history"));
    for (const auto& r : s.at("restarts"))
      k.restarts.push_back({r.at("learning_rate").get<double>(), r.at("epoch").get<int>(),
                            r.at("rows").get<std::int64_t>(), number_or(r.at("mean_loss"), NAN),
                            r.value("limited_rows", std::int64_t{0})});
    k.calibration = s.at("calibration");
    k.best_loss = number_or(s.at("best_loss"), std::numeric_limits<double>::infinity());
    k.best_epoch = s.at("best_epoch").get<int>();
    k.bad_epochs = s.at("bad_epochs").get<int>();
    k.bias = read_array(dir, "bias.npy", static_cast<std::size_t>(outputs));
    const std::size_t weights = static_cast<std::size_t>(features) * static_cast<std::size_t>(outputs);
    k.weight = read_array(dir, "weight.npy", weights, features);
    if (k.best_epoch > 0) {
      k.best_weight = read_array(dir, "best_weight.npy", k.weight.size(), features);
      k.best_bias = read_array(dir, "best_bias.npy", k.bias.size());
    }
    k.averaging = s.at("averaging").get<bool>();
    if (k.averaging) {
      k.average_weight_sum = read_array(dir, "average_weight_sum.npy", k.weight.size(), features);
      k.average_bias_sum = s.at("average_bias_sum").get<std::vector<double>>();
      k.average_steps = s.at("average_steps").get<std::int64_t>();
      if (k.average_bias_sum.size() != k.bias.size() || k.average_steps < 0)
        throw FileError(state_path, "holds averaged sums that do not fit the weights");
    }
    if (k.epoch < 1 || k.epoch > k.epochs || k.step < 0)
      throw FileError(state_path, "holds an impossible state (epoch " + std::to_string(k.epoch) +
                                      " of " + std::to_string(k.epochs) + ")");
    return k;
  } catch (const nlohmann::json::exception& e) {
    throw FileError(state_path, std::string("is not a bagel checkpoint: ") + e.what());
  }
}

void remove_checkpoint(const std::string& folder) {
  const fs::path dir(folder);
  std::error_code ec;
  if (!fs::exists(dir / kStateFile, ec)) return;
  for (const char* name :
       {"weight.npy", "bias.npy", "best_weight.npy", "best_bias.npy", "average_weight_sum.npy",
        kStateFile})
    fs::remove(dir / name, ec);
  fs::remove(dir, ec);  // only if empty: a file someone put there stays
}

}  // namespace bagel
