#include "bagel/dataset.h"

#include <filesystem>

#include "bagel/error.h"
#include "bagel/npz.h"
#include "bagel/svmlight.h"

namespace bagel {

CsrMatrix read_features(const std::string& path, ZeroBased zero_based, RawLabels* labels) {
  if (std::filesystem::path(path).extension() == ".npz") return read_npz_csr(path);
  SvmlightData d = read_svmlight(path, zero_based);
  if (labels != nullptr) *labels = std::move(d.labels);
  return std::move(d.features);
}

LabeledData load_labeled(const DataSpec& spec) {
  LabeledData d;
  d.features = read_features(spec.features, spec.zero_based, &d.labels);
  if (!spec.labels.empty()) d.labels = read_labels(spec.labels);
  if (d.labels.size() == 0 && d.features.rows() > 0)
    throw FileError(spec.features, "no labels: give a labels file for .npz features");
  if (static_cast<std::int64_t>(d.labels.size()) != d.features.rows())
    throw FileError(spec.labels.empty() ? spec.features : spec.labels,
                    "has " + std::to_string(d.labels.size()) + " labels but " + spec.features +
                        " has " + std::to_string(d.features.rows()) + " rows");
  return d;
}

}  // namespace bagel
