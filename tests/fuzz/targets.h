// One fuzz target per reader: each feeds arbitrary bytes to a reader the way
// bagel's commands do and returns normally when the reader either accepts
// them or refuses them with a bagel::Error. Anything else (another
// exception, std::bad_alloc from a size a header claims, a sanitizer
// report, two paths of one reader that disagree) escapes and is a finding.
//
// The libFuzzer binaries (fuzz_main.cpp, clang -DBAGEL_FUZZ=ON) and the
// regression test (test_fuzz_regressions.cpp, every build) call the same
// functions, so a crashing input kept in tests/fuzz/regressions/ is re-run
// by the ordinary test suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bagel::fuzz {

using Bytes = std::span<const std::uint8_t>;
using Target = void (*)(Bytes);

// Inputs that hold several files (a model folder, a config and its --set
// values, a corpus and its labels) separate them with this line.
inline constexpr const char* kPartSeparator = "\n#--bagel-fuzz-part--#\n";
std::vector<std::string> split_parts(Bytes input);

void npy(Bytes input);          // a .npy, converted to the types its dtype allows
void npz(Bytes input);          // a scipy CSR .npz, whole and in row chunks
void svmlight(Bytes input);     // svmlight text: in chunks, whole, and as a stream
void labels(Bytes input);       // a labels file: text, or .npy when the first byte is odd
void config(Bytes input);       // a train config, then --set values, as `bagel train` reads it
void model(Bytes input);        // model.json, weight.npy, bias.npy, then a prediction
void text_corpus(Bytes input);  // raw text, one document per line, then its labels file
// The other text layouts (text_corpus.h). The first byte of the input
// chooses the reader's options (targets.cpp says how); the rest is the file,
// read as a file and as a stream.
void fasttext(Bytes input);     // fastText's supervised format
void delimited(Bytes input);    // tsv or csv
// A folder in scikit-learn's load_files layout: each part after the first
// (the options byte) is a file, its relative path, '\n', its bytes.
void folder(Bytes input);

struct NamedTarget {
  const char* name;  // the folder under tests/fuzz/corpus/ and tests/fuzz/regressions/
  Target run;
};
inline constexpr NamedTarget kTargets[] = {
    {"npy", npy},       {"npz", npz},       {"svmlight", svmlight},       {"labels", labels},
    {"config", config}, {"model", model},   {"text_corpus", text_corpus},
    {"fasttext", fasttext}, {"delimited", delimited}, {"folder", folder},
};

}  // namespace bagel::fuzz
