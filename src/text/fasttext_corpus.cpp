// The fasttext format: label words and document of each line (fasttext_line.h),
// turned into rows as TextInput::multi_label and ::unlabeled say.
#include <algorithm>
#include <string_view>
#include <utility>

#include "bagel/error.h"
#include "bagel/text/fasttext_line.h"
#include "bagel/text/text_lines.h"
#include "text/corpus_readers.h"

namespace bagel::detail {

namespace {

// fastText rows: a line becomes one row per label it keeps (MultiLabel).
class FastTextRows {
 public:
  FastTextRows(const TextInput& input, TextCorpus& corpus) : input_(input), corpus_(corpus) {}

  void add(std::string_view line, std::int64_t number) {
    parse_fasttext_line(line, input_.label_prefix, parsed_);
    if (parsed_.labels.empty()) {
      add_unlabeled(number);
      return;
    }
    if (first_unlabeled_ > 0)
      throw FileError(corpus_.source,
                      "has a label, but line " + std::to_string(first_unlabeled_) +
                          " has none; with unlabeled \"keep\" either every line or no line "
                          "has a label",
                      number);
    if (first_labeled_ == 0) first_labeled_ = number;
    for (const std::string_view label : parsed_.labels)
      if (label.empty())
        throw FileError(corpus_.source,
                        "the word " + quoted(input_.label_prefix) +
                            " names no label; write the label right after the prefix (" +
                            input_.label_prefix + "NAME)",
                        number);
    count_distinct();
    if (distinct_.size() > 1 && input_.multi_label == MultiLabel::error)
      throw FileError(corpus_.source,
                      std::to_string(distinct_.size()) + " different labels (" +
                          quoted(distinct_[0].first) + ", " + quoted(distinct_[1].first) +
                          (distinct_.size() > 2 ? ", ..." : "") +
                          "), expected one; set multi_label to \"split\" (one row per label) "
                          "or \"first\"",
                      number);
    if (input_.multi_label != MultiLabel::split) distinct_.resize(1);
    const float words = static_cast<float>(parsed_.labels.size());
    for (std::size_t k = 0; k < distinct_.size(); ++k) {
      const float weight =
          input_.multi_label == MultiLabel::split ? distinct_[k].second / words : 1.0f;
      add_row(distinct_[k].first, weight, number, k + 1 == distinct_.size());
    }
  }

  // The labels, once every line is in.
  void finish() {
    if (first_unlabeled_ == 0) attach_labels(corpus_, std::move(names_));
  }

 private:
  void add_unlabeled(std::int64_t number) {
    switch (input_.unlabeled) {
      case Unlabeled::skip:
        return;
      case Unlabeled::keep:
        if (first_labeled_ > 0)
          throw FileError(corpus_.source,
                          "has no label, but line " + std::to_string(first_labeled_) +
                              " has one; with unlabeled \"keep\" either every line or no line "
                              "has a label",
                          number);
        if (first_unlabeled_ == 0) first_unlabeled_ = number;
        corpus_.documents.push_back(std::move(parsed_.document));
        corpus_.lines.push_back(number);
        return;
      case Unlabeled::error:
        throw FileError(corpus_.source,
                        "no label: expected a word starting with " +
                            quoted(input_.label_prefix) + " (" + input_.label_prefix +
                            "NAME text...); set unlabeled to \"skip\" to drop such lines as "
                            "fastText does",
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

  // `last`: the line's last row, which takes its document instead of a copy.
  void add_row(std::string_view label, float weight, std::int64_t number, bool last) {
    // Weights are kept only once one differs from 1 (most files never do).
    if (weight != 1.0f && !weighted_) {
      corpus_.weights.assign(corpus_.size(), 1.0f);
      weighted_ = true;
    }
    if (weighted_) corpus_.weights.push_back(weight);
    names_.emplace_back(label);
    if (last) {
      corpus_.documents.push_back(std::move(parsed_.document));
    } else {
      corpus_.documents.push_back(parsed_.document);
    }
    corpus_.lines.push_back(number);
  }

  const TextInput& input_;
  TextCorpus& corpus_;
  FastTextLine parsed_;
  std::vector<std::pair<std::string_view, int>> distinct_;
  std::vector<std::string> names_;
  std::int64_t first_labeled_ = 0;
  std::int64_t first_unlabeled_ = 0;
  bool weighted_ = false;  // corpus_.weights holds one weight per row
};

void check_label_prefix(const std::string& prefix) {
  if (prefix.empty()) throw ConfigError("label_prefix", "must not be empty (fastText's is __label__)");
  if (std::any_of(prefix.begin(), prefix.end(), [](char c) { return is_fasttext_space(c) || c == '\n'; }))
    throw ConfigError("label_prefix", "must not contain spaces: label words are single words");
}

}  // namespace

TextCorpus read_fasttext(const TextInput& input) {
  check_label_prefix(input.label_prefix);
  TextLines text(input.path, input.decode_error, /*drop_bom=*/true);
  TextCorpus corpus;
  corpus.source = text.source();
  FastTextRows rows(input, corpus);
  text.for_each([&](std::string_view line, std::int64_t number, bool) {
    rows.add(without_cr(line), number);
  });
  check_not_empty_stream(corpus, text);
  rows.finish();
  return corpus;
}


}  // namespace bagel::detail
