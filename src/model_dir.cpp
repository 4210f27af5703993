#include "bagel/model_dir.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <system_error>

#include <nlohmann/json.hpp>

#include "bagel/atomic_file.h"
#include "bagel/error.h"
#include "bagel/json_parse.h"
#include "bagel/model.h"
#include "bagel/temp_registry.h"

namespace bagel {

namespace fs = std::filesystem;

namespace {

// "runs/model/" names the folder "runs/model".
fs::path folder_name(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

// The model.json that bagel wrote in `dir`, if there is one: the one mark
// that tells bagel's files from the user's.
std::optional<nlohmann::json> bagel_model_json(const fs::path& dir) {
  if (!fs::exists(dir / "model.json")) return std::nullopt;
  nlohmann::json j;
  try {
    j = read_json_file((dir / "model.json").string(), "model.json");
  } catch (const Error&) {
    return std::nullopt;  // unreadable, not JSON, or nested too deep: not bagel's
  }
  if (!j.is_object()) return std::nullopt;
  const auto format = j.find("format");
  if (format == j.end() || *format != kModelFormat) return std::nullopt;
  return j;
}

bool holds_bagel_model(const fs::path& dir) { return bagel_model_json(dir).has_value(); }

// Whether the model this model.json describes wrote a vocabulary.txt: a text
// model whose vectorizer keeps its terms (a hashing one keeps none). Only
// then is a vocabulary.txt beside it bagel's, to be replaced or removed.
bool has_own_vocabulary(const nlohmann::json& model) {
  const auto vectorizer = model.find("vectorizer");
  if (vectorizer == model.end() || !vectorizer->is_object()) return false;
  const auto kind = vectorizer->find("kind");
  return kind == vectorizer->end() || *kind != "hashing";
}

// Present as any kind of entry, a dangling link included (renaming over a
// link would remove the user's link).
bool entry_exists(const fs::path& path) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path, ec));
}

// Beside a features model a vocabulary.txt is the user's (inspect reads it
// there, README section 6). A text model saved over that model would either
// overwrite it or leave it naming columns that are now the model's own terms
// or hash buckets: refused, before training where the folder is checked.
void refuse_users_vocabulary(const fs::path& dir, const std::optional<nlohmann::json>& old_model) {
  if (!old_model || has_own_vocabulary(*old_model) || !entry_exists(dir / "vocabulary.txt")) return;
  const std::string old_kind = old_model->contains("vectorizer")
                                   ? "is a hashing text model, which writes no vocabulary"
                                   : "was trained on features";
  throw FileError((dir / "vocabulary.txt").string(),
                  "is not the model's (the model in " + dir.string() + " " + old_kind +
                      "), and bagel neither overwrites a file it did not write nor leaves it "
                      "naming a text model's columns; move it away to save a text model here");
}

std::size_t file_rank(const std::string& name) {
  const auto* end = std::end(kModelFiles);
  return static_cast<std::size_t>(std::find(std::begin(kModelFiles), end, name) -
                                  std::begin(kModelFiles));
}

// Nothing in `dir` but model files and bagel's temporaries of them: the
// whole folder may be swapped for a new one without moving a user's file.
bool holds_only_model_files(const fs::path& dir, bool vocabulary_is_ours) {
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    const bool ours = std::any_of(std::begin(kModelFiles), std::end(kModelFiles), [&](const char* f) {
      return (name == f && (vocabulary_is_ours || name != "vocabulary.txt")) || temp_owner(name, f) != 0;
    });
    if (!ours) return false;
  }
  return !ec;
}

// The same for the model in `dir`: a vocabulary.txt beside a model of
// features (one the user put there for inspect) is the user's file, and a
// folder holding one is refilled file by file, never swapped away whole.
bool holds_only_its_model_files(const fs::path& dir) {
  const std::optional<nlohmann::json> model = bagel_model_json(dir);
  return holds_only_model_files(dir, model && has_own_vocabulary(*model));
}

// This process's working folder is `dir`: swapping it would leave the
// process (and its user's shell, very likely) in the old, removed one.
bool is_current_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::equivalent(dir, fs::current_path(), ec);
}

// `dir` is a mount point (a tmpfs, a bind mount, a volume), or lies on
// another file system than its parent: the sibling folder a new model is
// written to could be neither swapped with it nor moved into it.
bool is_mount_point(const fs::path& dir) {
#ifdef STATX_ATTR_MOUNT_ROOT
  struct statx sx {};
  if (::statx(AT_FDCWD, dir.c_str(), 0, STATX_BASIC_STATS, &sx) == 0 &&
      (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0)
    return (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
#endif
  struct stat self {};
  struct stat parent {};
  if (::stat(dir.c_str(), &self) != 0 || ::stat((dir / "..").c_str(), &parent) != 0) return false;
  return self.st_dev != parent.st_dev || self.st_ino == parent.st_ino;
}

bool process_gone(long pid) { return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH; }

[[noreturn]] void refuse_foreign_folder(const fs::path& dir) {
  throw FileError(dir.string(),
                  "holds files but no bagel model (no model.json with \"format\": "
                  "\"bagel-model\"), so bagel does not write into it; choose a new or empty "
                  "folder, or force it (--force; save(path, force=True) in Python) to add the "
                  "model files beside the files there (none of them is removed)");
}

void refuse_foreign_model_files(const fs::path& dir) {
  for (const char* name : kModelFiles)
    if (entry_exists(dir / name))
      throw FileError((dir / name).string(),
                      "exists and was not written by bagel (no bagel model.json beside it); "
                      "bagel does not overwrite it, even when forced: move it, or choose "
                      "another folder");
}

// A model file's temporary (weight.npy.tmp-PID-N), or the temporary of one
// (weight.npy.tmp-PID-N.tmp-PID-M: an array written atomically onto the
// temporary of a folder filled file by file), whose every maker is gone.
bool dead_model_file_temporary(std::string name) {
  for (;;) {
    const std::size_t cut = name.rfind(".tmp-");
    if (cut == std::string::npos) return false;
    const std::string inner = name.substr(0, cut);
    const long owner = temp_owner(name, inner);
    if (owner == 0 || !process_gone(owner)) return false;
    if (std::find_if(std::begin(kModelFiles), std::end(kModelFiles),
                     [&](const char* f) { return inner == f; }) != std::end(kModelFiles))
      return true;
    name = inner;
  }
}

void remove_old_file(const fs::path& path) {
  std::error_code ec;
  fs::remove(path, ec);  // a missing one is no error
  if (ec) throw FileError(path.string(), "cannot remove the old model's: " + ec.message());
}

}  // namespace

void remove_dead_temporaries(const fs::path& dir) {
  const fs::path folder = folder_name(fs::absolute(dir));
  const std::string name = folder.filename().string();
  std::error_code ec;
  // Beside it: a new model folder that never got renamed, an old one swapped
  // out but not yet removed, a half-made claim file.
  for (const fs::directory_entry& entry : fs::directory_iterator(folder.parent_path(), ec)) {
    const std::string entry_name = entry.path().filename().string();
    const long folder_owner = temp_owner(entry_name, name);
    const long claim_owner = temp_owner(entry_name, name + ".bagel-lock");
    if (folder_owner != 0 && process_gone(folder_owner) && entry.is_directory(ec) &&
        holds_only_model_files(entry.path(), true)) {
      fs::remove_all(entry.path(), ec);
    } else if (claim_owner != 0 && process_gone(claim_owner) && entry.is_regular_file(ec)) {
      fs::remove(entry.path(), ec);
    }
  }
  // Inside it: model files' temporaries, each a file of its own.
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec))
    if (dead_model_file_temporary(entry.path().filename().string()) && entry.is_regular_file(ec))
      fs::remove(entry.path(), ec);
}

ModelDirState model_dir_state(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  // A file on the way ("model.json/m") or a loop of links: named as for any
  // other output.
  if (ec == std::errc::not_a_directory || ec == std::errc::too_many_symbolic_link_levels)
    check_can_create(dir);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw FileError(dir.string(), "cannot inspect: " + ec.message());
  if (!fs::exists(st)) return ModelDirState::kMissing;
  if (!fs::is_directory(st)) return ModelDirState::kNotAFolder;
  if (holds_bagel_model(dir)) return ModelDirState::kModel;
  const fs::directory_iterator first(dir, ec);
  if (ec) throw FileError(dir.string(), "cannot list the folder: " + ec.message());
  return first == fs::directory_iterator() ? ModelDirState::kEmpty : ModelDirState::kOtherFiles;
}

void check_model_dir(const fs::path& dir, bool force, ModelSource source) {
  if (dir.empty()) throw ConfigError("output", "is empty, expected the model's folder");
  const ModelDirState state = model_dir_state(dir);
  switch (state) {
    case ModelDirState::kMissing:
    case ModelDirState::kEmpty:
    case ModelDirState::kModel:
      break;
    case ModelDirState::kNotAFolder:
      throw FileError(dir.string(),
                      "is a file, not a folder; the model is a folder (model.json, weight.npy, "
                      "bias.npy): choose another path");
    case ModelDirState::kOtherFiles:
      if (!force) refuse_foreign_folder(dir);
      refuse_foreign_model_files(dir);
      break;
  }
  if (source == ModelSource::kText && state != ModelDirState::kMissing)
    refuse_users_vocabulary(dir, bagel_model_json(dir));
  // The temporaries go beside a new folder, or inside an existing one.
  check_can_create(state == ModelDirState::kMissing ? dir : dir / "model.json");
}

ModelDirClaim claim_model_dir(const fs::path& dir, bool force, ModelSource source) {
  check_model_dir(dir, force, source);
  return ModelDirClaim(folder_name(dir));
}

namespace {

// The folder, checked before its claim file is made beside it: a path under
// a file ("afile/m") is named as such, not by the claim file it stops.
fs::path checked_folder(const fs::path& dir, bool force, ModelSource source) {
  fs::path folder = folder_name(dir);
  check_model_dir(folder, force, source);
  return folder;
}

}  // namespace

ModelDirWriter::ModelDirWriter(const fs::path& dir, bool force, ModelSource source)
    : dir_(checked_folder(dir, force, source)), force_(force), source_(source), claim_(dir_) {
  check_model_dir(dir_, force_, source_);
  remove_dead_temporaries(dir_);
  const ModelDirState state = model_dir_state(dir_);
  // An empty folder is the user's (its permissions, a mount point): it is
  // filled file by file, as one with the user's files in it is.
  // A mount point cannot be swapped: it is filled file by file too.
  const bool whole_folder =
      state == ModelDirState::kMissing ||
      (state == ModelDirState::kModel && holds_only_its_model_files(dir_) && !is_current_folder(dir_) &&
       !is_mount_point(dir_));
  if (!whole_folder) return;  // the user's files stay where they are: file by file
  replacing_folder_ = state != ModelDirState::kMissing;
  std::error_code ec;
  if (dir_.has_parent_path()) fs::create_directories(dir_.parent_path(), ec);
  if (ec) throw FileError(dir_.parent_path().string(), "cannot create the folder: " + ec.message());
  new_folder_ = std::make_unique<AtomicPath>(dir_);
  fs::create_directory(new_folder_->temp(), ec);
  if (ec && replacing_folder_) {
    // No new entry can be made beside the folder (its parent is read-only
    // or immutable), but the folder itself was checked writable: file by file.
    new_folder_.reset();
    replacing_folder_ = false;
    return;
  }
  if (ec) throw FileError(new_folder_->temp().string(), "cannot create: " + ec.message());
  // The new version keeps the old folder's permissions.
  if (replacing_folder_) fs::permissions(new_folder_->temp(), fs::status(dir_).permissions(), ec);
}

fs::path ModelDirWriter::path_for(const std::string& name) {
  if (new_folder_) return new_folder_->temp() / name;
  files_.emplace_back(name, std::make_unique<AtomicPath>(dir_ / name));
  return files_.back().second->temp();
}

void ModelDirWriter::commit() {
  const DeferSignals whole;  // the old model or the new one, never neither
  if (new_folder_ && !replacing_folder_) {
    new_folder_->commit();  // refuses a folder that appeared meanwhile with files in it
    return;
  }
  // Training takes a while: look again at what is there now.
  const bool swappable = new_folder_ && holds_only_its_model_files(dir_);
  if (swappable) {
    // Each new file keeps the mode of the one it replaces, as file by file.
    for (const char* name : kModelFiles) keep_mode_of(dir_ / name, new_folder_->temp() / name);
  }
  if (swappable && new_folder_->commit_by_exchange()) {
    // A file the user saved into the folder in the instant before the swap
    // is now in the old folder, which is about to be removed: move it back.
    std::error_code ec;
    for (const fs::directory_entry& entry : fs::directory_iterator(new_folder_->temp(), ec)) {
      const std::string name = entry.path().filename().string();
      if (std::find_if(std::begin(kModelFiles), std::end(kModelFiles),
                       [&](const char* f) { return name == f; }) == std::end(kModelFiles))
        fs::rename(entry.path(), dir_ / name, ec);
    }
    return;
  }
  if (new_folder_) {
    // The user put files into the folder meanwhile, or the file system
    // cannot swap folders: move the new files in one by one instead.
    for (const char* name : kModelFiles)
      if (fs::exists(new_folder_->temp() / name))  // vocabulary.txt is optional
        files_.emplace_back(name, std::make_unique<AtomicPath>(dir_ / name));
    for (auto& [name, file] : files_) {
      std::error_code ec;
      fs::rename(new_folder_->temp() / name, file->temp(), ec);
      if (ec) {
        // Another file system (a mount point the checks did not see): copy.
        ec.clear();
        fs::copy_file(new_folder_->temp() / name, file->temp(), ec);
      }
      if (ec) throw FileError(file->temp().string(), "cannot move into place: " + ec.message());
    }
  }
  commit_files();
}

void ModelDirWriter::commit_files() {
  // The folder holds our temporaries, so only the model files' own names matter.
  const std::optional<nlohmann::json> old_model = bagel_model_json(dir_);
  if (!old_model) refuse_foreign_model_files(dir_);
  // A file asked for but never made (a hashing vectorizer's vocabulary.txt)
  // is no file of the new model: renaming its temporary in would fail.
  std::erase_if(files_, [](const auto& file) { return !entry_exists(file.second->temp()); });
  std::sort(files_.begin(), files_.end(),
            [](const auto& a, const auto& b) { return file_rank(a.first) < file_rank(b.first); });
  const bool new_vocabulary = std::any_of(files_.begin(), files_.end(), [](const auto& file) {
    return file.first == "vocabulary.txt";
  });
  // Again: the user may have put it there while the model trained.
  if (source_ == ModelSource::kText) refuse_users_vocabulary(dir_, old_model);
  if (old_model) {
    // Removed below, model.json would otherwise not pass its mode on.
    for (auto& [name, file] : files_)
      if (name == "model.json") keep_mode_of(dir_ / name, file->temp());
    // From here until the new model.json is in place the folder holds no
    // model.json, never one over arrays it does not describe.
    std::error_code ec;
    fs::remove(dir_ / "model.json", ec);
    if (ec) throw FileError((dir_ / "model.json").string(), "cannot replace: " + ec.message());
    // A features model over a text model: the old words must not stay
    // beside the new model.json (inspect would name its features by them).
    if (has_own_vocabulary(*old_model) && !new_vocabulary) remove_old_file(dir_ / "vocabulary.txt");
  }
  for (auto& [name, file] : files_) file->commit();  // model.json last
}

}  // namespace bagel
