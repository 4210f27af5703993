// Raw text for a model trained on text, read as predict reads it: the
// layout by --text-format (or detected), the model's training settings
// (columns, quoting, decode_error), its vectorizer. predict and
// inspect --explain share it, so that a row is the same row in both.
#pragma once

#include <memory>
#include <string>

#include "bagel/dataset.h"
#include "bagel/input_stream.h"
#include "bagel/model.h"

namespace bagel::cli {

struct ModelTextInput {
  std::string command;              // "predict", "inspect": named in remedies
  std::string model;                // the model's folder, for messages
  std::string input;                // a file, a folder, "-" or a pipe
  std::string text_format = "auto"; // --text-format
  std::string zero_based = "auto";  // --zero-based
  bool has_labels = false;          // --labels given: "auto" reads one document a line
  int threads = 0;                  // resolved
  bool quiet = false;               // no notes on stderr
  // `input` opened, when it is a stream that reads_text had to look into:
  // its first bytes are peeked, not consumed, and whichever reader follows
  // (text or features) must read this one, since a pipe can be read once.
  std::unique_ptr<InputStream> stream;
};

// The model reads `input` as raw text: it has a vectorizer and the input is
// a folder, or neither an .npz nor an .npy (by its first bytes: a stream is
// opened into `in.stream` and peeked) nor named as svmlight (*.svm,
// *.svmlight, *.libsvm): those are taken as already vectorised (an .npy
// then refused as features are). svmlight from a stream has no name to say
// so: it is read as text.
bool reads_text(const Model& model, ModelTextInput& in);

// --text-format other than "auto" where no text is read (a model trained on
// numbers, or an .npz) is a usage error: ignored, the input would be read
// as features and a text file fail as svmlight with no word about why.
void check_text_format_applies(const Model& model, ModelTextInput& in);

// --zero-based for an input read as text is a usage error: ignored, an
// svmlight file not named as one would be read as words (and predicted
// with exit 0) with no word about why.
void check_zero_based_applies(const Model& model, ModelTextInput& in);

// The base svmlight is read with. A text model's columns count from 0, as
// vectorize writes them and convert writes svmlight by default: "auto"
// would take a file without a 0 for one-based and shift every word.
ZeroBased input_zero_based(const Model& model, const ModelTextInput& in);

// The documents vectorised, with their labels where the input has them.
// Errors that a training setting would lift name the model's setting and
// how to change it, in `in.command`'s terms (it takes no such option).
LabeledData read_model_text(const Model& model, const ModelTextInput& in);

}  // namespace bagel::cli
