#include "csr_arrays.h"

#include "bagel/error.h"

namespace bagel::python {

namespace {

template <typename T>
std::span<const T> span_of(const py::array_t<T, py::array::c_style>& a, const std::string& source,
                           const char* name) {
  if (a.ndim() != 1)
    throw FileError(source, std::string(name) + ": expected a 1-d array, found " +
                                std::to_string(a.ndim()) + " dimensions");
  return {a.data(), static_cast<std::size_t>(a.size())};
}

}  // namespace

CsrMatrix csr_view(const IndexArray& indptr, const IndexArray& indices, const FloatArray& data,
                   Index cols, const std::string& source) {
  const std::span<const Index> p = span_of(indptr, source, "indptr");
  if (p.empty()) throw FileError(source, "indptr: expected rows + 1 entries, found none");
  CsrMatrix x = CsrMatrix::view(static_cast<Index>(p.size() - 1), cols, p,
                                span_of(indices, source, "indices"), span_of(data, source, "data"));
  x.validate(source);
  return x;
}

py::array_t<double> to_numpy(std::vector<double> values, py::ssize_t rows, py::ssize_t cols) {
  auto* owned = new std::vector<double>(std::move(values));
  py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<double>*>(p); });
  return py::array_t<double>({rows, cols}, owned->data(), free_when_done);
}

}  // namespace bagel::python
