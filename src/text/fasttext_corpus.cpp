// The fasttext format: label words and document of each line (fasttext_line.h),
// turned into rows as TextInput::multi_label and ::unlabeled say. A regular
// file is read in parallel chunks (line_chunks.h), each into a FastTextRows.
#include <algorithm>
#include <iterator>
#include <string_view>
#include <utility>

#include "bagel/error.h"
#include "bagel/text/fasttext_line.h"
#include "bagel/text/line_chunks.h"
#include "bagel/text/text_lines.h"
#include "text/corpus_readers.h"

namespace bagel::detail {

namespace {

// First line with a label and first without one (0: none).
struct LabelPresence {
  std::int64_t labeled = 0;
  std::int64_t unlabeled = 0;
  void join(const LabelPresence& later) {
    if (labeled == 0) labeled = later.labeled;
    if (unlabeled == 0) unlabeled = later.unlabeled;
  }
};

// The rows of one chunk of lines: a line becomes one row per label it keeps
// (MultiLabel), or none, or an unlabeled row (Unlabeled). Every error it
// throws concerns its line alone; Unlabeled::keep, which compares lines, is
// checked once all chunks are read (check_presence).
class FastTextRows {
 public:
  FastTextRows(const TextInput& input, const std::string& source)
      : input_(&input), source_(&source) {}

  void add(std::string_view line, std::int64_t number) {
    parse_fasttext_line(without_cr(line), input_->label_prefix, parsed_);
    if (parsed_.labels.empty()) {
      add_unlabeled(number);
      return;
    }
    if (presence_.labeled == 0) presence_.labeled = number;
    check_names(number);
    count_distinct();
    check_multi_label(number);
    if (input_->multi_label != MultiLabel::split) distinct_.resize(1);
    const float words = static_cast<float>(parsed_.labels.size());
    for (std::size_t k = 0; k < distinct_.size(); ++k) {
      const float weight =
          input_->multi_label == MultiLabel::split ? distinct_[k].second / words : 1.0f;
      add_row(distinct_[k].first, weight, number, k == 0);
    }
  }

  // Moves the rows after those of `corpus` and `names`.
  void move_into(TextCorpus& corpus, std::vector<std::string>& names, LabelPresence& presence) {
    append_rows(corpus, std::move(rows_));
    names.insert(names.end(), std::make_move_iterator(names_.begin()),
                 std::make_move_iterator(names_.end()));
    presence.join(presence_);
  }

 private:
  void check_names(std::int64_t number) const {
    for (const std::string_view label : parsed_.labels)
      if (label.empty())
        throw FileError(*source_,
                        "the word " + quoted(input_->label_prefix) +
                            " names no label; write the label right after the prefix (" +
                            input_->label_prefix + "NAME)",
                        number);
  }

  void check_multi_label(std::int64_t number) const {
    if (distinct_.size() < 2 || input_->multi_label != MultiLabel::error) return;
    throw FileError(*source_,
                    std::to_string(distinct_.size()) + " different labels (" +
                        quoted(distinct_[0].first) + ", " + quoted(distinct_[1].first) +
                        (distinct_.size() > 2 ? ", ..." : "") +
                        "), expected one; set " + setting_name(*input_, "multi_label") +
                        " to \"split\" (one row per label) or \"first\"",
                    number);
  }

  void add_unlabeled(std::int64_t number) {
    switch (input_->unlabeled) {
      case Unlabeled::skip:
        return;
      case Unlabeled::keep:
        if (presence_.unlabeled == 0) presence_.unlabeled = number;
        rows_.documents.push_back(parsed_.document);
        rows_.lines.push_back(number);
        return;
      case Unlabeled::error:
        throw TextSettingError(TextSettingError::Setting::unlabeled, *source_,
                               "no label: expected a word starting with " +
                                   quoted(input_->label_prefix) + " (" + input_->label_prefix +
                                   "NAME text...)",
                               "set unlabeled to \"skip\" to drop such lines as fastText does",
                               number);
    }
  }

  // distinct_: the line's labels in first-seen order, with their counts.
  void count_distinct() {
    distinct_.clear();
    for (const std::string_view label : parsed_.labels) {
      const auto same = std::find_if(distinct_.begin(), distinct_.end(),
                                     [&](const auto& seen) { return seen.first == label; });
      if (same == distinct_.end()) {
        distinct_.emplace_back(label, 1);
      } else {
        ++same->second;
      }
    }
  }

  // The rows of one line share one copy of its document.
  void add_row(std::string_view label, float weight, std::int64_t number, bool first) {
    // Weights are kept only once one differs from 1 (most files never do).
    if (weight != 1.0f && !weighted_) {
      rows_.weights.assign(rows_.size(), 1.0f);
      weighted_ = true;
    }
    if (weighted_) rows_.weights.push_back(weight);
    names_.emplace_back(label);
    if (first)
      rows_.documents.push_back(parsed_.document);
    else
      rows_.documents.push_view(rows_.documents[rows_.documents.size() - 1]);
    rows_.lines.push_back(number);
  }

  const TextInput* input_;
  const std::string* source_;
  TextCorpus rows_;
  std::vector<std::string> names_;  // one per row of rows_ with a label
  LabelPresence presence_;
  bool weighted_ = false;  // rows_.weights holds one weight per row
  FastTextLine parsed_;
  std::vector<std::pair<std::string_view, int>> distinct_;
};

void check_label_prefix(const std::string& prefix) {
  if (prefix.empty()) throw ConfigError("label_prefix", "must not be empty (fastText's is __label__)");
  if (std::any_of(prefix.begin(), prefix.end(), [](char c) { return is_fasttext_space(c) || c == '\n'; }))
    throw ConfigError("label_prefix", "must not contain spaces: label words are single words");
}

// Unlabeled::keep: every line has a label, or none has; the error names the
// first line that breaks the pattern the first line set.
void check_presence(const LabelPresence& presence, const std::string& source) {
  if (presence.labeled == 0 || presence.unlabeled == 0) return;
  const std::string rule = "with unlabeled \"keep\" either every line or no line has a label";
  const auto mixed = TextSettingError::Setting::mixed_labels;
  if (presence.labeled < presence.unlabeled)
    throw TextSettingError(mixed, source, "has no label, but line " + std::to_string(presence.labeled) +
                                              " has one", rule, presence.unlabeled);
  throw TextSettingError(mixed, source, "has a label, but line " + std::to_string(presence.unlabeled) +
                                            " has none", rule, presence.labeled);
}

}  // namespace

TextCorpus read_fasttext(const TextInput& input) {
  check_label_prefix(input.label_prefix);
  TextLines text(input.path, input.decode_error, /*drop_bom=*/true, input.stream);
  TextCorpus corpus;
  corpus.source = text.source();
  std::vector<std::string> names;
  LabelPresence presence;
  for (FastTextRows& part : read_in_parts(text, [&] { return FastTextRows(input, corpus.source); }))
    part.move_into(corpus, names, presence);
  check_not_empty_stream(corpus, text);
  check_presence(presence, corpus.source);
  if (presence.unlabeled == 0) attach_labels(corpus, std::move(names));
  return corpus;
}

}  // namespace bagel::detail
