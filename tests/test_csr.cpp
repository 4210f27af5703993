#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "bagel/csr.h"
#include "bagel/error.h"

namespace bagel {
namespace {

// [[1, 0, 2], [0, 0, 0], [0, 3, 0]] with row 0 stored unsorted.
CsrMatrix small() { return CsrMatrix(3, 3, {0, 2, 2, 3}, {2, 0, 1}, {2.f, 1.f, 3.f}); }

std::string validate_error(const CsrMatrix& m) {
  try {
    m.validate("m.npz");
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

TEST(Csr, RowsAreViewsIntoTheArrays) {
  const CsrMatrix m = small();
  const RowView r0 = m.row(0);
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_EQ(r0.indices.data(), m.indices().data());
  EXPECT_EQ(r0.values[0], 2.f);
  EXPECT_EQ(m.row(1).size(), 0u);
  EXPECT_EQ(m.row(2).indices[0], 1);
  EXPECT_EQ(m.nonZeros(), 3);
}

TEST(Csr, ValidMatrixPasses) { EXPECT_EQ(validate_error(small()), ""); }

TEST(Csr, UnsortedAndRepeatedIndicesAreValid) {
  const CsrMatrix m(1, 4, {0, 3}, {3, 1, 3}, {1.f, 1.f, 1.f});
  EXPECT_EQ(validate_error(m), "");
}

TEST(Csr, ValidationNamesFileAndProblem) {
  EXPECT_NE(validate_error(CsrMatrix(1, 3, {1, 1}, {}, {})).find("indptr[0]"), std::string::npos);
  EXPECT_NE(validate_error(CsrMatrix(2, 3, {0, 2, 1}, {0, 1}, {1.f, 1.f})).find("decreases"),
            std::string::npos);
  EXPECT_NE(validate_error(CsrMatrix(1, 3, {0, 1}, {0, 1}, {1.f, 1.f})).find("nnz"),
            std::string::npos);
  const std::string out = validate_error(CsrMatrix(1, 3, {0, 1}, {3}, {1.f}));
  EXPECT_NE(out.find("m.npz"), std::string::npos);
  EXPECT_NE(out.find("out of range"), std::string::npos);
  EXPECT_NE(validate_error(CsrMatrix(1, 3, {0, 1}, {-1}, {1.f})).find("out of range"),
            std::string::npos);
  EXPECT_NE(validate_error(CsrMatrix(1, 3, {0, 1}, {0}, {std::nanf("")})).find("non-finite"),
            std::string::npos);
  EXPECT_NE(validate_error(CsrMatrix(1, 3, {0, 1}, {0}, {std::numeric_limits<float>::infinity()}))
                .find("non-finite"),
            std::string::npos);
}

TEST(Csr, EigenMapSeesTheSameMatrixWithoutCopy) {
  const CsrMatrix m = small();
  const auto e = m.eigen();
  EXPECT_EQ(e.outerIndexPtr(), m.indptr().data());
  const Eigen::MatrixXf d = Eigen::MatrixXf(e);
  EXPECT_EQ(d(0, 0), 1.f);
  EXPECT_EQ(d(0, 2), 2.f);
  EXPECT_EQ(d(2, 1), 3.f);
  EXPECT_EQ(d.sum(), 6.f);
}

TEST(Csr, SumDuplicatesGivesEachRepeatedIndexOnceWithTheSumOfItsValues) {
  // Row 0 repeats column 2 (out of order), row 1 is empty, row 2 repeats
  // column 0 three times, row 3 is canonical.
  CsrMatrix m(4, 3, {0, 4, 4, 7, 9}, {2, 0, 2, 1, 0, 0, 0, 1, 2},
              {1.f, 5.f, 2.f, 3.f, 0.5f, 0.25f, 0.25f, 4.f, 6.f});
  EXPECT_EQ(m.sum_duplicates("m.npz"), 3);
  EXPECT_EQ(std::vector<Index>(m.indptr().begin(), m.indptr().end()), (std::vector<Index>{0, 3, 3, 4, 6}));
  EXPECT_EQ(std::vector<Index>(m.indices().begin(), m.indices().end()),
            (std::vector<Index>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(std::vector<float>(m.data().begin(), m.data().end()),
            (std::vector<float>{5.f, 3.f, 3.f, 1.f, 4.f, 6.f}));
  EXPECT_EQ(validate_error(m), "");
}

TEST(Csr, SumDuplicatesLeavesAMatrixWithoutRepeatsWhereItIs) {
  const std::vector<Index> indptr{0, 2, 2, 3}, indices{2, 0, 1};
  const std::vector<float> data{2.f, 1.f, 3.f};
  // Unsorted but none repeated (row 0): trained alike, so not copied.
  CsrMatrix view = CsrMatrix::view(3, 3, indptr, indices, data);
  EXPECT_EQ(view.sum_duplicates("m.npz"), 0);
  EXPECT_EQ(view.indices().data(), indices.data());
  EXPECT_EQ(view.data().data(), data.data());
  CsrMatrix empty;
  EXPECT_EQ(empty.sum_duplicates("m.npz"), 0);
}

TEST(Csr, SumDuplicatesNamesTheRowAndColumnWhoseSumOverflows) {
  const float big = std::numeric_limits<float>::max();
  CsrMatrix m(2, 4, {0, 1, 3}, {1, 3, 3}, {1.f, big, big});
  try {
    m.sum_duplicates("train.npz");
    FAIL() << "expected a FileError";
  } catch (const FileError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("train.npz"), std::string::npos) << what;
    EXPECT_NE(what.find("column 3 of row 1"), std::string::npos) << what;
  }
}

TEST(Csr, CloneIsDeepAndWidenOnlyGrows) {
  CsrMatrix m = small();
  const CsrMatrix c = m.clone();
  EXPECT_NE(c.indices().data(), m.indices().data());
  EXPECT_EQ(c.nonZeros(), 3);
  m.widen(10);
  EXPECT_EQ(m.cols(), 10);
  EXPECT_THROW(m.widen(2), Error);
}

TEST(Csr, MoveKeepsViewsValid) {
  CsrMatrix a = small();
  const float* data = a.data().data();
  CsrMatrix b = std::move(a);
  EXPECT_EQ(b.data().data(), data);
  EXPECT_EQ(b.row(0).values[1], 1.f);
}

}  // namespace
}  // namespace bagel
