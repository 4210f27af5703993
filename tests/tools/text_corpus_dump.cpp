// Test tool: reads a text corpus as read_text_corpus does and prints it as
// JSON, so that tests/interop/test_text_formats.py can compare it with
// Python's readers (csv, bytes.decode, scikit-learn's load_files, fastText).
// Usage: text_corpus_dump KEY=VALUE... (the TextInput fields by name; enum
// values by name; output=count prints only the documents' count and bytes,
// to time the reading). An error prints "error: MESSAGE" on stderr and
// exits 1.
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "bagel/error.h"
#include "bagel/text/text_corpus.h"

namespace {

template <typename Enum>
Enum pick(const std::string& key, const std::string& value,
          const std::map<std::string, Enum>& choices) {
  const auto it = choices.find(value);
  if (it == choices.end()) throw bagel::UsageError(key, "unknown value '" + value + "'");
  return it->second;
}

bagel::TextInput parse_arguments(int argc, char** argv, bool& count_only) {
  using namespace bagel;
  TextInput input;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (eq == std::string::npos) throw UsageError(arg, "expected KEY=VALUE");
    const std::string key = arg.substr(0, eq);
    const std::string value = arg.substr(eq + 1);
    if (key == "path") input.path = value;
    else if (key == "format")
      input.format = pick<TextFormat>(key, value, {{"lines", TextFormat::lines},
                                                   {"fasttext", TextFormat::fasttext},
                                                   {"tsv", TextFormat::tsv},
                                                   {"csv", TextFormat::csv},
                                                   {"folder", TextFormat::folder}});
    else if (key == "output") count_only = value == "count";
    else if (key == "labels_path") input.labels_path = value;
    else if (key == "label_prefix") input.label_prefix = value;
    else if (key == "multi_label")
      input.multi_label = pick<MultiLabel>(
          key, value, {{"split", MultiLabel::split}, {"first", MultiLabel::first},
                       {"error", MultiLabel::error}});
    else if (key == "unlabeled")
      input.unlabeled = pick<Unlabeled>(
          key, value, {{"error", Unlabeled::error}, {"skip", Unlabeled::skip},
                       {"keep", Unlabeled::keep}});
    else if (key == "tsv_label_column") input.tsv_label_column = std::stoi(value);
    else if (key == "tsv_text_column") input.tsv_text_column = std::stoi(value);
    else if (key == "tsv_header") input.tsv_header = value == "true";
    else if (key == "tsv_label_name") input.tsv_label_name = value;
    else if (key == "tsv_text_name") input.tsv_text_name = value;
    else if (key == "quoting")
      input.quoting = pick<Quoting>(key, value, {{"csv", Quoting::csv}, {"none", Quoting::none}});
    else if (key == "decode_error")
      input.decode_error = pick<DecodeError>(
          key, value, {{"strict", DecodeError::strict}, {"ignore", DecodeError::ignore},
                       {"replace", DecodeError::replace}});
    else throw UsageError(key, "unknown key");
  }
  return input;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    bool count_only = false;
    const bagel::TextCorpus corpus = bagel::read_text_corpus(parse_arguments(argc, argv, count_only));
    if (count_only) {
      std::size_t bytes = 0;
      for (const std::string_view document : corpus.documents) bytes += document.size();
      std::cout << corpus.size() << " documents, " << bytes << " bytes\n";
      return 0;
    }
    nlohmann::json out;
    out["source"] = corpus.source;
    out["documents"] = std::vector<std::string>(corpus.documents.begin(), corpus.documents.end());
    out["labels"] = corpus.labels ? nlohmann::json(corpus.labels->names) : nlohmann::json();
    out["numeric"] = corpus.labels && corpus.labels->numeric;
    out["weights"] = corpus.weights;
    out["lines"] = corpus.lines;
    out["files"] = corpus.files;
    std::cout << out.dump() << '\n';
  } catch (const bagel::Error& e) {
    std::cerr << "error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
