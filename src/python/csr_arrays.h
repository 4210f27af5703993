// numpy arrays <-> bagel's CSR and results, without copies.
//
// The estimator hands over the three CSR arrays of a scipy matrix. Only
// float32 data and int32 indices and row pointers are accepted here (the
// bindings declare them noconvert), so the matrix bagel trains on is a view
// of the caller's buffers: the Python side converts other dtypes once,
// visibly, and this side never copies.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "bagel/csr.h"

namespace bagel::python {

namespace py = pybind11;

using IndexArray = py::array_t<Index, py::array::c_style>;
using FloatArray = py::array_t<float, py::array::c_style>;

// A view of the arrays (which the caller keeps alive for its lifetime),
// validated once: the CSR invariants, indices below `cols`, finite values.
// Errors name `source` ("X", "eval_set").
CsrMatrix csr_view(const IndexArray& indptr, const IndexArray& indices, const FloatArray& data,
                   Index cols, const std::string& source);

// A rows x cols numpy array that owns `values` (moved, not copied).
py::array_t<double> to_numpy(std::vector<double> values, py::ssize_t rows, py::ssize_t cols);

}  // namespace bagel::python
