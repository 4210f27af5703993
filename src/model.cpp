#include "bagel/model.h"

#include <cmath>
#include <filesystem>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/huge_pages.h"
#include "bagel/json_parse.h"
#include "bagel/labels.h"
#include "bagel/loss.h"
#include "bagel/model_dir.h"
#include "bagel/npy.h"

namespace bagel {

namespace fs = std::filesystem;

Model Model::zeros(std::vector<std::string> classes, bool numeric_classes, Index num_features) {
  Model m;
  m.num_outputs = num_outputs_for(static_cast<int>(classes.size()));
  m.classes = std::move(classes);
  m.numeric_classes = numeric_classes;
  m.num_features = num_features;
  m.weight = huge_vector<float>(static_cast<std::size_t>(num_features) * m.num_outputs);
  m.bias.assign(m.num_outputs, 0.0f);
  return m;
}

void save_model(const Model& model, const std::string& dir, bool force) {
  ModelDirWriter out(dir, force);
  nlohmann::json j;
  j["format"] = kModelFormat;
  j["version"] = kModelVersion;
  j["classes"] = model.classes;
  j["numeric_classes"] = model.numeric_classes;
  j["num_features"] = model.num_features;
  j["num_outputs"] = model.num_outputs;
  j["output"] = model.output_kind();
  j["weight"] = {{"file", "weight.npy"}, {"dtype", "float32"},
                 {"shape", {model.num_features, model.num_outputs}},
                 {"layout", "embedding (num_features, num_outputs) = Linear weight transposed"}};
  j["bias"] = {{"file", "bias.npy"}, {"dtype", "float32"}, {"shape", {model.num_outputs}}};
  j["config"] = model.config;
  j["training"] = model.training;
  write_npy(out.path_for("weight.npy").string(), model.weight,
            {model.num_features, model.num_outputs});
  write_npy(out.path_for("bias.npy").string(), model.bias, {model.num_outputs});
  // Paths in the config may hold bytes that are not UTF-8 (file names are
  // bytes); they are informational here, so they are written with U+FFFD
  // rather than failing after the training. Class names were checked at load.
  write_file_atomic(out.path_for("model.json"),
                    j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  out.commit();
}

namespace {

std::vector<float> read_float_array(const fs::path& path, const std::vector<std::int64_t>& shape) {
  const NpyArray a = read_npy(path.string());
  if (a.header.shape != shape) {
    std::string expected = "(", found = "(";
    for (auto s : shape) expected += std::to_string(s) + ",";
    for (auto s : a.header.shape) found += std::to_string(s) + ",";
    throw FileError(path.string(), "shape " + found + ") does not match model.json's " +
                                       expected + ")");
  }
  std::vector<float> v = npy_to_float32(a.header, a.payload(), path.string());
  for (float x : v)
    if (!std::isfinite(x)) throw FileError(path.string(), "contains a non-finite weight");
  return v;
}

}  // namespace

Model load_model(const std::string& dir) {
  const fs::path json_path = fs::path(dir) / "model.json";
  if (!fs::is_directory(dir)) throw FileError(dir, "is not a model directory (no such folder)");
  const std::string src = json_path.string();
  const nlohmann::json j = read_json_file(src, "the model (is this a bagel model directory?)");
  if (!j.is_object()) throw FileError(src, "expected a JSON object, found " + std::string(j.type_name()));
  auto field = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key)) throw FileError(src, std::string("missing field '") + key + "'");
    return j.at(key);
  };
  if (field("format") != kModelFormat)
    throw FileError(src, "format is " + field("format").dump() + ", expected \"" + kModelFormat + "\"");
  if (!field("version").is_number_integer() || field("version").get<int>() < 1 ||
      field("version").get<int>() > kModelVersion)
    throw FileError(src, "version " + field("version").dump() + " is not supported (this bagel reads <= " +
                             std::to_string(kModelVersion) + ")");
  Model m;
  try {
    m.classes = field("classes").get<std::vector<std::string>>();
    m.numeric_classes = j.value("numeric_classes", false);
    m.num_features = field("num_features").get<Index>();
    m.num_outputs = field("num_outputs").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw FileError(src, "bad field type: " + json_error_reason(e));
  }
  if (m.classes.size() < 2) throw FileError(src, "classes: expected at least 2");
  check_class_count(m.classes.size(), src);
  if (m.num_outputs != num_outputs_for(m.num_classes()))
    throw FileError(src, "num_outputs is " + std::to_string(m.num_outputs) + ", expected " +
                             std::to_string(num_outputs_for(m.num_classes())) + " for " +
                             std::to_string(m.num_classes()) + " classes");
  if (m.num_features < 0) throw FileError(src, "num_features: expected >= 0");
  m.config = j.value("config", nlohmann::json::object());
  m.training = j.value("training", nlohmann::json::object());
  m.weight = read_float_array(fs::path(dir) / "weight.npy", {m.num_features, m.num_outputs});
  m.bias = read_float_array(fs::path(dir) / "bias.npy", {m.num_outputs});
  return m;
}

}  // namespace bagel
