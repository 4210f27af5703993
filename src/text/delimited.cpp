#include "bagel/text/delimited.h"

#include <algorithm>
#include <cstring>

namespace bagel {

DelimitedParser::DelimitedParser(char delimiter, Quoting quoting, Take take)
    : delimiter_(delimiter), quoting_(quoting), take_(std::move(take)) {}

void DelimitedParser::feed(std::string_view line, std::int64_t number, bool newline) {
  if (quoting_ == Quoting::none) {
    feed_unquoted(line, number);
  } else {
    feed_quoted(line, number, newline);
  }
}

void DelimitedParser::feed_unquoted(std::string_view line, std::int64_t number) {
  if (line.ends_with('\r')) line.remove_suffix(1);
  if (line.empty()) return;
  begin_record(number);
  while (true) {
    const std::size_t end = line.find(delimiter_);
    field().assign(line.substr(0, end));
    end_field();
    if (end == std::string_view::npos) break;
    line.remove_prefix(end + 1);
  }
  end_record();
}

// Python's csv reader (Modules/_csv.c, parse_process_char) for the default
// dialect, non-strict, without escapechar. Position line.size() stands for
// the '\n' that ended the line, when one did.
void DelimitedParser::feed_quoted(std::string_view line, std::int64_t number, bool newline) {
  const std::size_t n = line.size();
  std::size_t i = 0;
  while (i < n || (newline && i == n)) {
    const char c = i < n ? line[i] : '\n';
    const bool line_end = c == '\n' || c == '\r';
    switch (state_) {
      case State::start_record:
        if (line_end) {  // a blank line: no record
          state_ = State::eat_newline;
          ++i;
        } else {
          begin_record(number);
          state_ = State::start_field;
        }
        break;
      case State::start_field:
        if (line_end) {
          end_field();
          end_record();
        } else if (c == '"') {
          field();
          state_ = State::in_quoted;
        } else if (c == delimiter_) {
          end_field();
        } else {
          state_ = State::in_field;
          break;  // c is read again as part of the field
        }
        ++i;
        break;
      case State::in_field: {
        std::size_t end = std::min(line.find(delimiter_, i), n);
        if (const void* cr = std::memchr(line.data() + i, '\r', end - i))
          end = static_cast<std::size_t>(static_cast<const char*>(cr) - line.data());
        field().append(line.substr(i, end - i));
        i = end;
        if (i == n && !newline) break;  // the input ends inside this field
        end_field();
        if (i < n && line[i] == delimiter_) {
          state_ = State::start_field;
        } else {
          end_record();
        }
        ++i;
        break;
      }
      case State::in_quoted: {
        const std::size_t quote = std::min(line.find('"', i), n);
        field().append(line.substr(i, quote - i));
        if (quote == n) {
          if (newline) field().push_back('\n');  // a line break inside quotes is text
          i = n + 1;
        } else {
          state_ = State::quote_in_quoted;
          i = quote + 1;
        }
        break;
      }
      case State::quote_in_quoted:
        if (c == '"') {  // "" is one quote
          field().push_back('"');
          state_ = State::in_quoted;
        } else if (c == delimiter_) {
          end_field();
          state_ = State::start_field;
        } else if (line_end) {
          end_field();
          end_record();
        } else {  // text after the closing quote joins the field
          field().push_back(c);
          state_ = State::in_field;
        }
        ++i;
        break;
      case State::eat_newline:
        if (line_end) {
          ++i;
        } else {
          state_ = State::start_record;
        }
        break;
    }
  }
}

void DelimitedParser::finish() {
  if (state_ != State::start_record && state_ != State::eat_newline) {
    end_field();
    end_record();
  }
  state_ = State::start_record;
}

void DelimitedParser::begin_record(std::int64_t number) {
  count_ = 0;
  open_field_ = false;
  record_line_ = number;
}

std::string& DelimitedParser::field() {
  if (!open_field_) {
    if (fields_.size() <= count_) fields_.emplace_back();
    fields_[count_].clear();
    open_field_ = true;
  }
  return fields_[count_];
}

void DelimitedParser::end_field() {
  field();
  ++count_;
  open_field_ = false;
}

void DelimitedParser::end_record() {
  state_ = State::eat_newline;
  take_(std::span<std::string>(fields_.data(), count_), record_line_);
  count_ = 0;
}

}  // namespace bagel
