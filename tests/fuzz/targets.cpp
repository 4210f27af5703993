#include "targets.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "bagel/config.h"
#include "bagel/error.h"
#include "bagel/input_stream.h"
#include "bagel/json_parse.h"
#include "bagel/labels.h"
#include "bagel/mapped_file.h"
#include "bagel/model.h"
#include "bagel/npy.h"
#include "bagel/npz.h"
#include "bagel/predict.h"
#include "bagel/svmlight.h"
#include "harness.h"

namespace bagel::fuzz {

namespace fs = std::filesystem;

namespace {

bool same_rows(const CsrMatrix& a, Index a_first, const CsrMatrix& b, Index b_first,
               Index count) {
  for (Index r = 0; r < count; ++r) {
    const RowView x = a.row(a_first + r), y = b.row(b_first + r);
    if (!std::equal(x.indices.begin(), x.indices.end(), y.indices.begin(), y.indices.end()))
      return false;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (std::bit_cast<std::uint32_t>(x.values[i]) != std::bit_cast<std::uint32_t>(y.values[i]))
        return false;
  }
  return true;
}

bool same_svmlight(const SvmlightData& a, const SvmlightData& b) {
  return a.features.rows() == b.features.rows() && a.features.cols() == b.features.cols() &&
         a.labels.names == b.labels.names && a.labels.lines == b.labels.lines &&
         same_rows(a.features, 0, b.features, 0, a.features.rows());
}

}  // namespace

std::vector<std::string> split_parts(Bytes input) {
  const std::string text = as_string(input);
  const std::string_view separator(kPartSeparator);
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (std::size_t at; (at = text.find(separator, begin)) != std::string::npos;
       begin = at + separator.size())
    parts.push_back(text.substr(begin, at - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

void npy(Bytes input) {
  const auto bytes = as_bytes(input);
  accepted([&] { parse_npy_prefix(bytes, "fuzz.npy"); });
  std::optional<NpyHeader> header;
  if (!accepted([&] { header = parse_npy_header(bytes, "fuzz.npy"); })) return;
  const NpyHeader& h = *header;
  const auto payload = bytes.subspan(h.data_offset);
  const auto count = static_cast<std::size_t>(h.count());
  if (!h.is_numeric()) {
    accepted([&] {
      require(npy_to_strings(h, payload, "fuzz.npy").size() == count, "strings: count");
    });
    return;
  }
  // Each conversion on its own: one refusing a value must not hide another.
  accepted([&] { require(npy_to_float32(h, payload, "fuzz.npy").size() == count, "f4: count"); });
  accepted([&] { require(npy_to_float64(h, payload, "fuzz.npy").size() == count, "f8: count"); });
  accepted([&] { require(npy_to_int32(h, payload, "fuzz.npy").size() == count, "i4: count"); });
  accepted([&] { require(npy_to_int64(h, payload, "fuzz.npy").size() == count, "i8: count"); });
}

void npz(Bytes input) {
  std::optional<CsrMatrix> whole;
  accepted([&] {
    std::vector<std::byte> copy(as_bytes(input).begin(), as_bytes(input).end());
    whole = read_npz_csr(std::make_unique<MappedFile>(std::move(copy), "fuzz.npz"));
  });
  const std::string path = scratch().write("fuzz.npz", as_string(input));
  accepted([&] { NpzRowChunks::is_compressed(path); });
  // Predict reads a compressed file in row chunks: the same rows, or an error
  // (it checks more, the CRCs of members used in place among them).
  accepted([&] {
    NpzRowChunks chunks(path);
    Index row = 0;
    while (const auto chunk = chunks.next(3)) {
      if (whole) {
        require(row + chunk->rows() <= whole->rows(), "npz chunks: more rows than the whole");
        require(same_rows(*whole, row, *chunk, 0, chunk->rows()), "npz chunks: other rows");
      }
      row += chunk->rows();
    }
    if (whole) require(row == whole->rows(), "npz chunks: fewer rows than the whole");
  });
}

void svmlight(Bytes input) {
  const std::string text = as_string(input);
  const std::span<const char> chars(text.data(), text.size());
  // In one piece and split into chunks parsed apart (as large files are):
  // the same matrix, or the same error.
  const int chunks = 2 + static_cast<int>(text.size() % 4);
  std::optional<SvmlightData> one, split;
  std::string one_error, split_error;
  try {
    one = detail::parse_svmlight(chars, "fuzz.svm", ZeroBased::kAuto, 1);
  } catch (const Error& e) {
    one_error = e.what();
  }
  try {
    split = detail::parse_svmlight(chars, "fuzz.svm", ZeroBased::kAuto, chunks);
  } catch (const Error& e) {
    split_error = e.what();
  }
  require(one_error == split_error, "svmlight: chunks change the error");
  if (one) require(same_svmlight(*one, *split), "svmlight: chunks change the matrix");

  // As a stream, line by line as predict reads a pipe: the rows of the
  // whole text, or an error when the whole text has an error or no row.
  std::optional<SvmlightData> whole;
  accepted([&] { whole = detail::parse_svmlight(chars, "fuzz.svm", ZeroBased::kTrue, 1); });
  const auto pipe = PipeInput::holding(text);
  if (!pipe) return;
  std::vector<SvmlightData> blocks;
  const bool streamed = accepted([&] {
    InputStream in(pipe->path());
    SvmlightStream stream(in, ZeroBased::kTrue);
    while (auto block = stream.next()) blocks.push_back(std::move(*block));
  });
  if (!streamed) {
    require(!whole || whole->features.rows() == 0, "svmlight stream: refused the rows");
    return;
  }
  require(whole.has_value(), "svmlight stream: accepted what the file reader refuses");
  Index row = 0;
  for (const SvmlightData& block : blocks) {
    const Index rows = block.features.rows();
    require(row + rows <= whole->features.rows(), "svmlight stream: more rows");
    require(same_rows(whole->features, row, block.features, 0, rows),
            "svmlight stream: other rows");
    row += rows;
  }
  require(row == whole->features.rows(), "svmlight stream: fewer rows");
}

void labels(Bytes input) {
  const std::string text = as_string(input);
  // read_labels goes by the name for files and by the magic for streams.
  const bool is_npy = has_npy_magic(text);
  const std::string path = scratch().write(is_npy ? "labels.npy" : "labels.txt", text);
  std::optional<RawLabels> raw;
  if (accepted([&] { raw = read_labels(path); })) {
    require(raw->lines.empty() || raw->lines.size() == raw->size(), "labels: lines");
    require(!raw->numeric || raw->values.size() == raw->size(), "labels: values");
    accepted([&] {
      const Classes classes = Classes::fit(*raw);
      for (const std::int32_t id : classes.encode(*raw))
        require(id >= 0 && static_cast<std::size_t>(id) < classes.size(), "labels: class id");
    });
  }
  const auto pipe = PipeInput::holding(text);
  if (!pipe) return;
  std::optional<RawLabels> streamed;
  accepted([&] { streamed = read_labels(pipe->path()); });
  if (raw && raw->size() > 0) {
    require(streamed.has_value(), "labels stream: refused what the file gave");
    require(same_labels(*raw, *streamed), "labels stream: other labels");
  }
}

void config(Bytes input) {
  std::vector<std::string> parts = split_parts(input);
  const std::string path = scratch().write("config.json", parts.front());
  const std::vector<std::string> overrides(parts.begin() + 1, parts.end());
  std::optional<TrainConfig> config;
  if (!accepted([&] { config = load_train_config(path, overrides); })) return;
  // What train and tune then do with it: tune checks that it can be written
  // back, save_model writes it into model.json.
  accepted([&] { check_json_writable(config->resolved, path); });
  static_cast<void>(config->resolved.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
}

void model(Bytes input) {
  const std::vector<std::string> parts = split_parts(input);
  const fs::path dir = scratch().fresh_folder("model");
  // Fewer parts leave files missing, as a half-copied folder would.
  const char* names[] = {"model.json", "weight.npy", "bias.npy"};
  for (std::size_t i = 0; i < parts.size() && i < std::size(names); ++i)
    scratch().write(fs::path("model") / names[i], parts[i]);
  std::optional<Model> model;
  if (!accepted([&] { model = load_model(dir.string()); })) return;
  // One row touching the first few features: a loaded model predicts
  // probabilities, whatever its weights.
  const Index used = std::min<Index>(model->num_features, 3);
  std::vector<Index> indptr = {0, used}, indices;
  for (Index j = 0; j < used; ++j) indices.push_back(j);
  const CsrMatrix x(1, model->num_features, std::move(indptr), std::move(indices),
                    std::vector<float>(static_cast<std::size_t>(used), 1.0f));
  const std::vector<double> proba = predict_proba(*model, x, 1);
  require(proba.size() == model->classes.size(), "model: one probability per class");
  for (const double p : proba) require(p >= 0 && p <= 1, "model: a probability outside [0, 1]");
}

}  // namespace bagel::fuzz
