// bagel._core: the library's model, training pipeline and prediction for
// the Python package (src/python/bagel/). The scikit-learn estimator over it
// is plain Python (_estimator.py); this module only moves arrays across
// without copying them and releases the GIL while it works.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bagel/json_parse.h"
#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/float_env.h"
#include "bagel/labels.h"
#include "bagel/model.h"
#include "bagel/predict.h"
#include "bagel/text/vectorizer.h"
#include "bagel/text/vocabulary.h"
#include "csr_arrays.h"
#include "fit.h"
#include "label_ids.h"

namespace py = pybind11;

namespace bagel::python {

namespace {

// Below this many multiply-adds (non-zeros x outputs, ~100 us) prediction
// runs on the calling thread, holding the GIL, straight into the numpy
// result. Releasing and retaking the GIL, and entering an OpenMP region,
// would cost more than a few rows' work (measured: two futex calls and
// ~5 us of a one-row call that took 7.6 us).
constexpr std::int64_t kSmallWork = std::int64_t{1} << 18;

// Rows of `x` through `rows_fn` (predict_proba_rows or predict_logits_rows)
// for small inputs, else `chunk_fn` (the parallel *_chunk) without the GIL;
// `width` columns a row.
template <typename RowsFn, typename ChunkFn>
py::array_t<double> predict_with(const Model& model, const IndexArray& indptr,
                                 const IndexArray& indices, const FloatArray& data, Index cols,
                                 int threads, int width, RowsFn rows_fn, ChunkFn chunk_fn) {
  const CsrMatrix x = csr_view(indptr, indices, data, cols, "X");
  check_features_fit(model, x, "X");
  if (x.nonZeros() * model.num_outputs < kSmallWork) {
    py::array_t<double> out({static_cast<py::ssize_t>(x.rows()), static_cast<py::ssize_t>(width)});
    const DenormalsAreZero flush_denormals;
    rows_fn(model, x, 0, x.rows(), out.mutable_data());
    return out;
  }
  std::vector<double> out;
  {
    py::gil_scoped_release no_gil;
    out = chunk_fn(model, x, 0, x.rows(), threads);
  }
  return to_numpy(std::move(out), x.rows(), width);
}

// A read-only numpy view of a model's array, kept alive by the model.
py::array_t<float> model_array(const std::vector<float>& values, std::vector<py::ssize_t> shape,
                               py::handle owner) {
  py::array_t<float> a(shape, values.data(), owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

py::array_t<float> copy_of(const std::vector<float>& values) {
  return py::array_t<float>(static_cast<py::ssize_t>(values.size()), values.data());
}

std::vector<float> floats_of(const py::array_t<float, py::array::c_style | py::array::forcecast>& a) {
  return {a.data(), a.data() + a.size()};
}

// Pickling: every field, the arrays as numpy arrays.
// A text model's vectorizer: its settings (model.json's "vectorizer") and
// its terms, one per column; None for a model of vectorised data.
py::tuple model_state(const Model& m) {
  py::object vectorizer = py::none();
  if (m.vectorizer) {
    std::vector<std::string> terms;
    if (m.vectorizer->options().kind != VectorizerKind::hashing)
      for (Index j = 0; j < m.vectorizer->features(); ++j) terms.push_back(m.vectorizer->feature_name(j));
    vectorizer = py::make_tuple(m.vectorizer->to_json().dump(), std::move(terms));
  }
  return py::make_tuple(m.classes, m.numeric_classes, m.num_features, m.num_outputs,
                        copy_of(m.weight), copy_of(m.bias), m.config.dump(), m.training.dump(),
                        m.output_kind(), m.class_type, vectorizer);
}

// Pickles from before the head was a field have 8 fields: softmax (or the
// sigmoid for two classes), the only heads then; from before class_type, 9;
// from before the vectorizer, 10.
Model model_from_state(const py::tuple& t) {
  if (t.size() < 8 || t.size() > 11)
    throw Error("bagel model pickle: expected 11 fields, found " + std::to_string(t.size()));
  Model m;
  m.classes = t[0].cast<std::vector<std::string>>();
  m.numeric_classes = t[1].cast<bool>();
  m.num_features = t[2].cast<Index>();
  m.num_outputs = t[3].cast<int>();
  m.weight = floats_of(t[4].cast<py::array_t<float, py::array::c_style | py::array::forcecast>>());
  m.bias = floats_of(t[5].cast<py::array_t<float, py::array::c_style | py::array::forcecast>>());
  m.config = parse_json(t[6].cast<std::string>(), "pickled model config", false);
  m.training = parse_json(t[7].cast<std::string>(), "pickled model training", false);
  if (t.size() >= 9 && t[8].cast<std::string>() == "ovr") m.multiclass = Head::kOneVsRest;
  if (t.size() >= 10) m.class_type = t[9].cast<std::string>();
  if (t.size() == 11 && !t[10].is_none()) {
    const py::tuple v = t[10].cast<py::tuple>();
    m.vectorizer = std::make_shared<const Vectorizer>(Vectorizer::from_terms(
        parse_json(v[0].cast<std::string>(), "pickled model vectorizer", false),
        v[1].cast<std::vector<std::string>>()));
  }
  if (m.weight.size() != static_cast<std::size_t>(m.num_features) * m.num_outputs ||
      m.bias.size() != static_cast<std::size_t>(m.num_outputs))
    throw Error("bagel model pickle: the weight and bias sizes do not match the model's shape");
  return m;
}

// The array itself when it has T's dtype and is contiguous; a TypeError
// otherwise, never a converted copy (csr_arrays.h).
template <typename T>
py::array_t<T, py::array::c_style> exactly(const py::handle& o, const char* name) {
  if (!py::array_t<T, py::array::c_style>::check_(o))
    throw py::type_error(std::string(name) + ": expected a contiguous numpy array of " +
                         py::str(py::dtype::of<T>()).cast<std::string>() + ", found " +
                         py::repr(o).cast<std::string>().substr(0, 80));
  return py::reinterpret_borrow<py::array_t<T, py::array::c_style>>(o);
}

std::optional<SplitArrays> split_of(const py::object& o) {
  if (o.is_none()) return std::nullopt;
  const py::tuple t = o.cast<py::tuple>();
  if (t.size() != 5) throw py::value_error("expected (indptr, indices, data, n_columns, y)");
  return SplitArrays{exactly<Index>(t[0], "indptr"), exactly<Index>(t[1], "indices"),
                     exactly<float>(t[2], "data"), t[3].cast<Index>(),
                     exactly<std::int32_t>(t[4], "y")};
}

void register_errors(py::module_& m) {
  // A bad parameter is both a ValueError and a TypeError, as scikit-learn's
  // InvalidParameterError is: callers may catch either.
  const py::tuple bases = py::make_tuple(py::handle(PyExc_ValueError), py::handle(PyExc_TypeError));
  static py::exception<ConfigError> invalid_parameter(m, "InvalidParameterError", bases);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      PyErr_SetString(invalid_parameter.ptr(), e.what());
    } catch (const Interrupted& e) {
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const Error& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
}

}  // namespace

}  // namespace bagel::python

PYBIND11_MODULE(_core, m) {
  using namespace bagel;
  using namespace bagel::python;
  m.doc() = "bagel's C++ core: model, training pipeline, prediction";
  m.attr("__version__") = BAGEL_VERSION;
  register_errors(m);

  py::class_<Model>(m, "Model")
      .def_readonly("classes", &Model::classes)
      .def_readonly("numeric_classes", &Model::numeric_classes)
      .def_readwrite("class_type", &Model::class_type)
      .def_readonly("num_features", &Model::num_features)
      .def_readonly("num_outputs", &Model::num_outputs)
      .def_property_readonly("output", &Model::output_kind)
      .def_property_readonly("weight", [](py::object self) {
        const Model& mo = self.cast<const Model&>();
        return model_array(mo.weight, {mo.num_features, mo.num_outputs}, self);
      }, "(num_features, num_outputs) float32, read-only: the embedding layout E = W.T")
      .def_property_readonly("bias", [](py::object self) {
        const Model& mo = self.cast<const Model&>();
        return model_array(mo.bias, {mo.num_outputs}, self);
      })
      .def_property_readonly("has_vectorizer", [](const Model& mo) { return mo.vectorizer != nullptr; },
                             "Trained on raw text: predict takes documents through its vectorizer")
      .def_property_readonly("config_json", [](const Model& mo) { return mo.config.dump(); })
      .def_property_readonly("training_json", [](const Model& mo) { return mo.training.dump(); })
      .def("save", [](const Model& mo, const std::string& dir, bool force) { save_model(mo, dir, force); },
           py::arg("dir"), py::arg("force") = false)
      // Every protocol pickles a model as protocol 2 does, Model.__new__ then
      // __setstate__: protocols 0 and 1 would otherwise rebuild it through
      // object.__new__, which a pybind11 class cannot take (that aborted the
      // process).
      .def("__reduce__", [](const py::object& self) {
        return py::make_tuple(py::module_::import("copyreg").attr("__newobj__"),
                              py::make_tuple(py::type::of(self)), model_state(self.cast<const Model&>()));
      })
      .def(py::pickle(&model_state, &model_from_state));

  m.def("load_model", &load_model, py::arg("dir"));

  m.def("fit",
        [](const std::string& config_json, py::tuple train, py::object valid,
           std::vector<std::string> classes, bool numeric_classes, py::object sample_weight,
           py::object start, bool verbose) {
          FitRequest r;
          r.config_json = config_json;
          r.train = *split_of(train);
          r.valid = split_of(valid);
          r.classes = std::move(classes);
          r.numeric_classes = numeric_classes;
          if (!sample_weight.is_none()) r.sample_weight = exactly<float>(sample_weight, "sample_weight");
          r.verbose = verbose;
          if (!start.is_none()) r.start = start.cast<Model>();
          FitResult out = fit(r);
          return py::make_tuple(std::move(out.model), out.warnings);
        },
        py::arg("config_json"), py::arg("train"), py::arg("valid"), py::arg("classes"),
        py::arg("numeric_classes"), py::arg("sample_weight"), py::arg("start"), py::arg("verbose"),
        "Trains through the library's pipeline; train and valid are (indptr int32, indices int32, "
        "data float32, n_columns, y int32) tuples, used in place");

  m.def("predict_proba",
        [](const Model& mo, const IndexArray& indptr, const IndexArray& indices, const FloatArray& data,
           Index cols, int threads) {
          const auto rows = [](const Model& m, const CsrMatrix& x, Index b, Index e, double* out) {
            predict_proba_rows(m, x, b, e, out);
          };
          return predict_with(mo, indptr, indices, data, cols, threads, mo.num_classes(), rows,
                              &predict_proba_chunk);
        },
        py::arg("model"), py::arg("indptr").noconvert(), py::arg("indices").noconvert(),
        py::arg("data").noconvert(), py::arg("n_columns"), py::arg("threads"));

  m.def("decision_function",
        [](const Model& mo, const IndexArray& indptr, const IndexArray& indices, const FloatArray& data,
           Index cols, int threads) {
          return predict_with(mo, indptr, indices, data, cols, threads, mo.num_outputs,
                              &predict_logits_rows, &predict_logits_chunk);
        },
        py::arg("model"), py::arg("indptr").noconvert(), py::arg("indices").noconvert(),
        py::arg("data").noconvert(), py::arg("n_columns"), py::arg("threads"));

  m.def("vectorize",
        [](const Model& mo, const std::vector<std::string>& documents, int threads) -> py::object {
          if (!mo.vectorizer) return py::none();
          const std::vector<std::string_view> views(documents.begin(), documents.end());
          // Few documents are read on one thread whatever `threads` says:
          // usable_cores() reads the cgroup files (~0.1 ms a call).
          const int team = threads > 0                                ? threads
                           : documents.size() < kParallelDocuments ? 1
                                                                     : usable_cores();
          TextMatrix t;
          {
            py::gil_scoped_release released;
            t = mo.vectorizer->transform(views, team);
          }
          py::array_t<std::int64_t> indptr(static_cast<py::ssize_t>(t.indptr.size()), t.indptr.data());
          py::array_t<Index> indices(static_cast<py::ssize_t>(t.indices.size()), t.indices.data());
          py::array_t<double> values(static_cast<py::ssize_t>(t.values.size()), t.values.data());
          return py::make_tuple(indptr, indices, values, t.cols);
        },
        py::arg("model"), py::arg("documents"), py::arg("threads"),
        "A text model's documents through its vectorizer: (indptr, indices, values, n_columns), "
        "or None for a model not trained on text");

  m.def("csr_addresses",
        [](const IndexArray& indptr, const IndexArray& indices, const FloatArray& data, Index cols) {
          const CsrMatrix x = csr_view(indptr, indices, data, cols, "X");
          return py::make_tuple(reinterpret_cast<std::uintptr_t>(x.indptr().data()),
                                reinterpret_cast<std::uintptr_t>(x.indices().data()),
                                reinterpret_cast<std::uintptr_t>(x.data().data()));
        },
        py::arg("indptr").noconvert(), py::arg("indices").noconvert(), py::arg("data").noconvert(),
        py::arg("n_columns"),
        "Where the matrix that fit and predict read lies: the buffers' addresses (for tests)");

  m.def("first_seen",
        [](const py::array& y) {
          const char kind = y.dtype().kind();
          if (y.ndim() != 1 || (kind != 'U' && kind != 'S') ||
              !(y.flags() & py::array::c_style))
            throw py::type_error("first_seen: expected a contiguous 1-d array of strings");
          const auto rows = static_cast<std::size_t>(y.shape(0));
          const auto size = static_cast<std::size_t>(y.itemsize());
          const FirstSeen seen = first_seen(
              std::span(static_cast<const std::byte*>(y.data()), rows * size), rows, size);
          return py::make_tuple(py::array_t<std::int64_t>(static_cast<py::ssize_t>(seen.first.size()),
                                                          seen.first.data()),
                                py::array_t<std::int32_t>(static_cast<py::ssize_t>(seen.ids.size()),
                                                          seen.ids.data()));
        },
        py::arg("y"),
        "(first, ids) of a 1-d array of strings: the row where each distinct label first "
        "appears, and each row's label as an index into first");

  m.def("default_parameters", [] { return default_parameters().dump(); },
        "The optimizer's and model's defaults (JSON), as a config file resolves them");
  m.def("number_name", &number_name, py::arg("value"),
        "The name bagel gives a numeric class (Python's repr without a trailing .0)");
}
