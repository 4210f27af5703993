// The folder a model is written to, and the rules that keep the user's files
// safe in it. bagel writes three files, model.json, weight.npy and bias.npy
// (the model files), and never removes or overwrites a file it did not
// write. So the folder `-o DIR` names may be:
//   missing         the model is written to a temporary sibling that is then
//                   renamed to DIR: DIR appears whole or not at all.
//   empty           the model files are written into it.
//   a bagel model   (its model.json says "format": "bagel-model") its model
//                   files are replaced and every other file in it is kept.
//   anything else   refused, with what to do: another folder, or `force`,
//                   which writes the model files beside the files there but
//                   still refuses to overwrite a model file bagel did not
//                   write. A regular file at DIR is always refused.
// Every file is flushed (fsync) before it is renamed, its folder after. An
// existing folder that holds a bagel model and nothing else is replaced
// whole: the new
// model is written to a sibling folder swapped with DIR in one step
// (renameat2 RENAME_EXCHANGE), and load_model reads through one handle on
// the folder, so readers always see one whole version. An empty folder, one
// with the user's files, the current folder or one that cannot be swapped
// (a mount point, one whose parent takes no new entries) is written file by
// file instead:
// only when all three are complete is the old model.json removed (and the old
// model's vocabulary.txt, when the new model has none), the arrays renamed
// into place and the new model.json renamed last. Whenever a
// model.json is present, the arrays beside it are the ones it describes; a
// run killed in that instant leaves no model.json (load_model then says so)
// rather than a model.json over the wrong weights. Only one run writes into
// a folder at a time (model_dir_claim.h).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bagel/atomic_file.h"
#include "bagel/model_dir_claim.h"

namespace bagel {

// vocabulary.txt only for a model trained on text (its vectorizer's terms).
inline constexpr const char* kModelFiles[] = {"weight.npy", "bias.npy", "vocabulary.txt",
                                              "model.json"};

enum class ModelDirState { kMissing, kEmpty, kModel, kOtherFiles, kNotAFolder };

// What the model to be written was trained on: a text model's columns are its
// vectorizer's terms (or hash buckets), not those of a user's vocabulary.txt.
enum class ModelSource { kFeatures, kText };

// What `dir` is now (see the header comment).
ModelDirState model_dir_state(const std::filesystem::path& dir);

// Throws FileError naming `dir`, with what to do instead, when a model may
// not be written there. Cheap: train calls it before loading any data, so
// that a refusal costs no training time.
void check_model_dir(const std::filesystem::path& dir, bool force, ModelSource source);

// check_model_dir(), then the claim on `dir` for the whole run (train calls
// it before loading any data): a second run onto the same folder fails at
// once instead of after its training.
[[nodiscard]] ModelDirClaim claim_model_dir(const std::filesystem::path& dir, bool force,
                                            ModelSource source);

// Removes what runs killed by SIGKILL (or a power cut) left of their work on
// `dir`, and only what is provably bagel's and provably abandoned: entries
// named as bagel names its temporaries (NAME.tmp-PID-N) whose process PID
// no longer exists, and among folders only those holding nothing but model
// files. ModelDirWriter calls it before writing.
void remove_dead_temporaries(const std::filesystem::path& dir);

// Writes the model files of one model into `dir` by the rules above:
//   ModelDirWriter out(dir, force, source);
//   write_npy(out.path_for("weight.npy"), ...);  ... for each model file
//   out.commit();
// Without commit(), every temporary is removed (and on SIGINT/SIGTERM too).
class ModelDirWriter {
 public:
  ModelDirWriter(const std::filesystem::path& dir, bool force, ModelSource source);
  ModelDirWriter(const ModelDirWriter&) = delete;
  ModelDirWriter& operator=(const ModelDirWriter&) = delete;

  // Where to write the model file `name` (one of kModelFiles) now.
  std::filesystem::path path_for(const std::string& name);
  void commit();

 private:
  void commit_files();

  std::filesystem::path dir_;
  bool force_ = false;
  ModelSource source_ = ModelSource::kFeatures;
  ModelDirClaim claim_;
  // The whole new folder, when dir_ is missing or holds only model files.
  std::unique_ptr<AtomicPath> new_folder_;
  bool replacing_folder_ = false;  // dir_ exists: swap it with new_folder_
  std::vector<std::pair<std::string, std::unique_ptr<AtomicPath>>> files_;  // otherwise
};

}  // namespace bagel
