// check_features_fit: an .npz's stored column count must be the model's (as
// scikit-learn requires), an svmlight file's inferred one may be smaller.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "bagel/error.h"
#include "bagel/model.h"
#include "bagel/predict.h"

namespace bagel {
namespace {

CsrMatrix empty_rows(Index rows, Index cols) {
  return CsrMatrix(rows, cols, std::vector<Index>(static_cast<std::size_t>(rows) + 1, 0), {}, {});
}

std::string error_of(const Model& m, const CsrMatrix& x, ColumnCount columns) {
  try {
    check_features_fit(m, x, "test.npz", columns);
  } catch (const FileError& e) {
    return e.what();
  }
  return "";
}

TEST(CheckFeaturesFit, StoredColumnCountMustEqualTheModels) {
  const Model m = Model::zeros({"a", "b"}, false, 57575);
  EXPECT_EQ(error_of(m, empty_rows(3, 57575), ColumnCount::kStored), "");
  for (const Index cols : {27611, 57576}) {
    const std::string msg = error_of(m, empty_rows(3, cols), ColumnCount::kStored);
    EXPECT_NE(msg.find("test.npz: has " + std::to_string(cols) + " features"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("expecting 57575"), std::string::npos) << msg;
  }
  // The default is the strict check: a library user's .npz gets it too.
  EXPECT_THROW(check_features_fit(m, empty_rows(3, 27611), "test.npz"), FileError);
}

TEST(CheckFeaturesFit, InferredColumnCountMayBeSmallerNeverLarger) {
  const Model m = Model::zeros({"a", "b"}, false, 100);
  EXPECT_EQ(error_of(m, empty_rows(3, 40), ColumnCount::kInferred), "");
  EXPECT_EQ(error_of(m, empty_rows(3, 100), ColumnCount::kInferred), "");
  const std::string msg = error_of(m, empty_rows(3, 101), ColumnCount::kInferred);
  EXPECT_NE(msg.find("101"), std::string::npos) << msg;
  EXPECT_NE(msg.find("100"), std::string::npos) << msg;
}

TEST(PredictRegion, AnExceptionInsideTheParallelRegionBecomesAnError) {
  // num_outputs -1 makes each block's logits allocation throw (length_error)
  // inside the OpenMP region, on enough non-zeros to run it on every thread.
  Model m = Model::zeros({"a", "b"}, false, 10);
  m.num_outputs = -1;
  const Index rows = 4096;
  std::vector<Index> indptr(static_cast<std::size_t>(rows) + 1);
  for (Index r = 0; r <= rows; ++r) indptr[static_cast<std::size_t>(r)] = r * 100;
  const CsrMatrix x(rows, 10, std::move(indptr), std::vector<Index>(rows * 100, 0),
                    std::vector<float>(rows * 100, 1.0f));
  EXPECT_THROW(predict_proba_chunk(m, x, 0, rows, 2), std::length_error);
}

}  // namespace
}  // namespace bagel

namespace bagel {
namespace {

TEST(PredictChunks, ManyClassesPredictFewerRowsAtATime) {
  // A chunk of probabilities is at most 2^22 doubles: 2^16 rows of 2 or 20
  // classes, 419 of 10,000 (2^16 of them had held 5 GiB).
  EXPECT_EQ(rows_per_chunk(2), kRowsPerChunk);
  EXPECT_EQ(rows_per_chunk(20), kRowsPerChunk);
  EXPECT_EQ(rows_per_chunk(10000), 419);
  EXPECT_EQ(rows_per_chunk(1 << 30), 64);
}

}  // namespace
}  // namespace bagel
