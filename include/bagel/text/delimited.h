// Records of delimiter-separated text (tsv, csv), fed line by line as
// TextLines gives them. With Quoting::csv the fields are what Python's csv
// module reads (text_corpus.h says which rules); with Quoting::none every
// delimiter splits and every line is a record. Blank lines (no field at
// all) are no record, as pandas.read_csv skips them (Python's csv.reader
// gives them as []).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bagel/text/text_corpus.h"

namespace bagel {

class DelimitedParser {
 public:
  // take(fields, line): a record and the line it starts on. The fields'
  // strings may be moved from; they are reused for the next record.
  using Take = std::function<void(std::span<std::string> fields, std::int64_t line)>;

  DelimitedParser(char delimiter, Quoting quoting, Take take);

  // One line, without its '\n' (`newline` says whether one followed).
  void feed(std::string_view line, std::int64_t number, bool newline);
  // The end of the input: completes a record left open (an unclosed quote
  // takes the rest of the input, as in Python's non-strict mode; callers
  // check open_quote() first).
  void finish();
  // The input so far ends inside a quoted field, whose record starts on
  // record_line().
  bool open_quote() const { return state_ == State::in_quoted; }
  std::int64_t record_line() const { return record_line_; }

 private:
  enum class State { start_record, start_field, in_field, in_quoted, quote_in_quoted, eat_newline };

  void feed_quoted(std::string_view line, std::int64_t number, bool newline);
  void feed_unquoted(std::string_view line, std::int64_t number);
  void begin_record(std::int64_t number);
  std::string& field();  // the field being read
  void end_field();
  void end_record();

  char delimiter_;
  Quoting quoting_;
  Take take_;
  State state_ = State::start_record;
  std::vector<std::string> fields_;  // reused; the first count_ are the record's
  std::size_t count_ = 0;
  bool open_field_ = false;  // fields_[count_] is being read
  std::int64_t record_line_ = 0;
};

}  // namespace bagel
