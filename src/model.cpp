#include "bagel/model.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/huge_pages.h"
#include "bagel/json_parse.h"
#include "bagel/labels.h"
#include "bagel/loss.h"
#include "bagel/model_dir.h"
#include "bagel/npy.h"
#include "bagel/text/vectorizer.h"

namespace bagel {

namespace fs = std::filesystem;

Model Model::zeros(std::vector<std::string> classes, bool numeric_classes, Index num_features,
                   Head multiclass) {
  Model m;
  m.num_outputs = num_outputs_for(static_cast<int>(classes.size()));
  // The two-class head names no multiclass one: a K > 2 model gets softmax.
  m.multiclass = multiclass == Head::kSigmoid ? Head::kSoftmax : multiclass;
  m.classes = std::move(classes);
  m.numeric_classes = numeric_classes;
  m.num_features = num_features;
  m.weight = huge_vector<float>(static_cast<std::size_t>(num_features) * m.num_outputs);
  m.bias.assign(m.num_outputs, 0.0f);
  return m;
}

namespace {

// numpy's number types, for the classes a BagelClassifier was fitted on.
bool is_numeric_class_type(const std::string& type) {
  static constexpr const char* kTypes[] = {"int8",   "int16",  "int32",   "int64",   "uint8",
                                           "uint16", "uint32", "uint64",  "float16", "float32",
                                           "float64"};
  return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes);
}

}  // namespace

namespace {

// What this process may use: the physical memory, or less where a cgroup
// (a container's limit) or an address-space limit (ulimit -v) says so.
double usable_memory() {
  double bytes =
      static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  double limit = 0;
  if (cgroup >> limit && limit > 0) bytes = std::min(bytes, limit);  // "max" fails to parse
  struct rlimit address_space {};
  if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY)
    bytes = std::min(bytes, static_cast<double>(address_space.rlim_cur));
  return bytes;
}

std::string gib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

// The writers name the temporary they write to ("m.tmp-4242-17/weight.npy:
// write failed"); the user knows the model's folder and file.
template <class Write>
void write_model_file(const std::string& dir, const std::string& name, Write&& write) {
  try {
    write();
  } catch (const FileError& e) {
    std::string message = e.what();
    if (message.starts_with(e.file() + ": ")) message.erase(0, e.file().size() + 2);
    throw FileError((fs::path(dir) / name).string(), message);
  }
}

}  // namespace

void check_model_size(Index num_features, int num_classes, const std::string& source,
                      double memory_bytes) {
  const double memory = memory_bytes > 0 ? memory_bytes : usable_memory();
  const int outputs = num_outputs_for(num_classes);
  const double bytes = static_cast<double>(num_features) * outputs * sizeof(float);
  if (bytes <= kMaxWeightMemoryFraction * memory) return;
  throw FileError(source, "the model would have " + std::to_string(num_features) + " features x " +
                              std::to_string(outputs) + " outputs = " + gib(bytes) +
                              " of float32 weights, more than a quarter of the " + gib(memory) +
                              " of memory this process may use (training holds about three "
                              "arrays of that size); the column count is the largest "
                              "feature index + 1: is an index wrong, or the vocabulary too large?");
}

void save_model(const Model& model, const std::string& dir, bool force) {
  ModelDirWriter out(dir, force, model.vectorizer ? ModelSource::kText : ModelSource::kFeatures);
  nlohmann::json j;
  j["format"] = kModelFormat;
  j["version"] = kModelVersion;
  j["classes"] = model.classes;
  j["numeric_classes"] = model.numeric_classes;
  if (!model.class_type.empty()) j["class_type"] = model.class_type;
  j["num_features"] = model.num_features;
  j["num_outputs"] = model.num_outputs;
  j["output"] = model.output_kind();
  j["weight"] = {{"file", "weight.npy"}, {"dtype", "float32"},
                 {"shape", {model.num_features, model.num_outputs}},
                 {"layout", "embedding (num_features, num_outputs) = Linear weight transposed"}};
  j["bias"] = {{"file", "bias.npy"}, {"dtype", "float32"}, {"shape", {model.num_outputs}}};
  j["config"] = model.config;
  j["training"] = model.training;
  if (model.vectorizer) {
    j["vectorizer"] = model.vectorizer->to_json();
    write_model_file(dir, "vocabulary.txt", [&] {
      model.vectorizer->write_vocabulary(out.path_for("vocabulary.txt").string());
    });
  }
  write_model_file(dir, "weight.npy", [&] {
    write_npy(out.path_for("weight.npy").string(), model.weight,
              {model.num_features, model.num_outputs});
  });
  write_model_file(dir, "bias.npy", [&] {
    write_npy(out.path_for("bias.npy").string(), model.bias, {model.num_outputs});
  });
  // Paths in the config may hold bytes that are not UTF-8 (file names are
  // bytes); they are informational here, so they are written with U+FFFD
  // rather than failing after the training. Class names were checked at load.
  write_model_file(dir, "model.json", [&] {
    write_file_atomic(out.path_for("model.json"),
                      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  });
  out.commit();
}

namespace {

// Why `dir` did not open as a folder (open's errno `error`): a regular file
// is named as such, as the CLI's folder options name it.
std::string not_a_folder(const std::string& dir, int error) {
  struct stat st {};
  if (error == ENOTDIR && ::stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return "is a file, expected a model folder";
  if (error == ENOENT) return "is not a model directory (no such folder)";
  return std::string("cannot open the model folder: ") + std::strerror(error);
}

// One open handle on the model's folder: the three files are read through it
// (openat), so they all come from one version of the folder, even while a
// new version is swapped in by save_model.
class ModelFolder {
 public:
  explicit ModelFolder(const std::string& dir)
      : dir_(dir), fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0) throw FileError(dir, not_a_folder(dir, errno));
  }
  ~ModelFolder() { ::close(fd_); }
  ModelFolder(const ModelFolder&) = delete;
  ModelFolder& operator=(const ModelFolder&) = delete;

  std::string name_of(const std::string& file) const { return (fs::path(dir_) / file).string(); }

  std::vector<std::byte> read(const std::string& file, const std::string& hint) const {
    const int fd = ::openat(fd_, file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw FileError(name_of(file), "cannot open" + hint + ": " + std::strerror(errno));
    std::vector<std::byte> bytes;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<std::size_t>(st.st_size));
    std::byte buffer[1 << 16];
    ssize_t n = 0;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
    const int error = errno;
    ::close(fd);
    if (n < 0) throw FileError(name_of(file), std::string("cannot read: ") + std::strerror(error));
    return bytes;
  }

  // The folder's name now points to another folder (a new version).
  bool replaced() const {
    struct stat open {}, now {};
    return ::fstat(fd_, &open) != 0 || ::stat(dir_.c_str(), &now) != 0 ||
           open.st_ino != now.st_ino || open.st_dev != now.st_dev;
  }

 private:
  std::string dir_;
  int fd_;
};

std::vector<float> read_float_array(const ModelFolder& folder, const std::string& file,
                                    const std::vector<std::int64_t>& shape) {
  const std::string name = folder.name_of(file);
  const std::vector<std::byte> bytes = folder.read(file, "");
  const NpyHeader header = parse_npy_header(bytes, name);
  if (header.shape != shape) {
    std::string expected = "(", found = "(";
    for (auto s : shape) expected += std::to_string(s) + ",";
    for (auto s : header.shape) found += std::to_string(s) + ",";
    throw FileError(name, "shape " + found + ") does not match model.json's " + expected + ")");
  }
  std::vector<float> v = npy_to_float32(header, std::span(bytes).subspan(header.data_offset), name);
  for (float x : v)
    if (!std::isfinite(x)) throw FileError(name, "contains a non-finite weight");
  return v;
}

Model read_model(const ModelFolder& folder) {
  const std::string src = folder.name_of("model.json");
  const std::vector<std::byte> text = folder.read("model.json", " (is this a bagel model directory?)");
  const nlohmann::json j =
      parse_json(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), src);
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
    m.class_type = j.value("class_type", std::string());
    m.num_features = field("num_features").get<Index>();
    m.num_outputs = field("num_outputs").get<int>();
  } catch (const nlohmann::json::exception& e) {
    throw FileError(src, "bad field type: " + json_error_reason(e));
  }
  if (m.classes.size() < 2) throw FileError(src, "classes: expected at least 2");
  if (!m.class_type.empty() && m.class_type != "bytes" &&
      (m.class_type != "bool" || m.classes != std::vector<std::string>{"False", "True"}) &&
      !(m.numeric_classes && is_numeric_class_type(m.class_type)))
    throw FileError(src, "class_type is \"" + m.class_type + "\", expected \"bytes\", \"bool\" with "
                         "the classes [\"False\", \"True\"], a numpy number type (int8 ... uint64, "
                         "float16 ... float64) with numeric classes, or no class_type");
  check_class_count(m.classes.size(), src);
  if (m.num_outputs != num_outputs_for(m.num_classes()))
    throw FileError(src, "num_outputs is " + std::to_string(m.num_outputs) + ", expected " +
                             std::to_string(num_outputs_for(m.num_classes())) + " for " +
                             std::to_string(m.num_classes()) + " classes");
  if (m.num_features < 0) throw FileError(src, "num_features: expected >= 0");
  if (j.contains("output")) {
    const nlohmann::json& output = j["output"];
    const std::string expected =
        m.num_outputs == 1 ? "\"sigmoid\" for 2 classes" : "\"softmax\" or \"ovr\"";
    if (output == "ovr" && m.num_outputs > 1) m.multiclass = Head::kOneVsRest;
    else if (output != to_string(m.head()))
      throw FileError(src, "output is " + output.dump() + ", expected " + expected);
  }
  m.config = j.value("config", nlohmann::json::object());
  m.training = j.value("training", nlohmann::json::object());
  if (j.contains("vectorizer")) {
    try {
      m.vectorizer = std::make_shared<const Vectorizer>(Vectorizer::load(
          j["vectorizer"], fs::path(folder.name_of("vocabulary.txt")).parent_path().string()));
    } catch (const ConfigError& e) {
      throw FileError(src, e.what());
    }
    if (m.vectorizer->features() != m.num_features)
      throw FileError(src, "its vectorizer makes " + std::to_string(m.vectorizer->features()) +
                               " features, but the weights have " + std::to_string(m.num_features));
  }
  m.weight = read_float_array(folder, "weight.npy", {m.num_features, m.num_outputs});
  m.bias = read_float_array(folder, "bias.npy", {m.num_outputs});
  return m;
}

}  // namespace

Model load_model(const std::string& dir) {
  // A version removed under the read (its files unlinked after the swap)
  // fails to read; the folder's name then leads to the new version.
  for (int attempt = 1;; ++attempt) {
    const ModelFolder folder(dir);
    try {
      return read_model(folder);
    } catch (const FileError&) {
      if (attempt >= 5 || !folder.replaced()) throw;
    }
  }
}

}  // namespace bagel
