// The trained model and its directory on disk:
//   model.json  format name and version, classes, sizes, output kind, the
//               config used and the training summary
//   weight.npy  float32, C order, (num_features, num_outputs): the embedding
//               layout, E = W.T, usable as is by
//               torch.nn.EmbeddingBag.from_pretrained(w, mode='sum')
//   bias.npy    float32, (num_outputs,)
//   vocabulary.txt  a model trained on raw text: its vectorizer's terms,
//               one per line (model.json's "vectorizer" has the settings)
// Two classes use one output (sigmoid of the logit is P(classes[1]));
// K > 2 classes use K outputs and a softmax, or K one-vs-rest sigmoids
// (model.json's "output": "sigmoid", "softmax" or "ovr"; loss.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bagel/csr.h"
#include "bagel/loss.h"

namespace bagel {

class Vectorizer;

inline constexpr const char* kModelFormat = "bagel-model";
inline constexpr int kModelVersion = 1;

struct Model {
  std::vector<std::string> classes;
  bool numeric_classes = false;
  // "bool" where the classes are Python's False and True (named so), "bytes"
  // where they are Python bytes (named by their UTF-8 text), a numpy number
  // type ("int8", "uint64", "float32", ...) where numeric classes were not
  // of the type their names give back (int64 for integers, else float64):
  // a BagelClassifier fitted on such labels sets it, and load gives them
  // back as they were; "" for every other model. model.json's "class_type".
  std::string class_type;
  Index num_features = 0;
  int num_outputs = 0;
  // The head of K > 2 classes; two classes (one output) always use the
  // sigmoid, whatever this says: head() is the one to use.
  Head multiclass = Head::kSoftmax;
  std::vector<float> weight;   // num_features x num_outputs, row-major
  std::vector<float> bias;     // num_outputs
  nlohmann::json config;       // resolved training config
  nlohmann::json training;     // summary of the run
  // Trained on raw text: the fitted vectorizer that turns text into its
  // features (predict reads text with it); null for CSR-trained models.
  std::shared_ptr<const Vectorizer> vectorizer;

  int num_classes() const { return static_cast<int>(classes.size()); }
  Head head() const { return num_outputs == 1 ? Head::kSigmoid : multiclass; }
  std::string output_kind() const { return to_string(head()); }

  // All-zero weights for these classes (logistic regression is convex; zeros
  // are scikit-learn's and LIBLINEAR's starting point too). `multiclass` is
  // the head of K > 2 classes (softmax or one-vs-rest; kSigmoid, the
  // two-class head, means softmax).
  static Model zeros(std::vector<std::string> classes, bool numeric_classes, Index num_features,
                     Head multiclass = Head::kSoftmax);
};

// Throws FileError naming `source` (the training features) when the float32
// weights of a model of these sizes, num_features x outputs, would take more
// than kMaxWeightMemoryFraction of the memory this process may use (physical,
// or the cgroup's memory.max or ulimit -v when lower; `memory_bytes` when
// given, for tests): training
// keeps about three arrays of the weights' size (the model, the starting
// weights a divergence restarts from, the saved copy; more with averages or
// replicas: 4.1 GB measured for 1.4 GB of weights), and a 21-byte svmlight
// line with index 2147483646 asks for 2^31 columns. Checked before
// training, so it fails in a second rather than after swapping for hours
// (at half of the memory, 8 GiB of weights on a 23 GiB machine passed and
// the kernel killed the run).
inline constexpr double kMaxWeightMemoryFraction = 0.25;
void check_model_size(Index num_features, int num_classes, const std::string& source,
                      double memory_bytes = 0);

// Writes model.json, weight.npy and bias.npy into `dir` by model_dir.h's
// rules: a new folder appears whole or not at all, an existing model's files
// are replaced and the user's other files kept, a folder of other files is
// refused unless `force`, and no file bagel did not write is ever removed.
void save_model(const Model& model, const std::string& dir, bool force = false);

// Reads and checks a model directory; errors name the file and field.
Model load_model(const std::string& dir);

}  // namespace bagel
