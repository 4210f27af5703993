// bagel: parse the command line, dispatch, and turn any error into exactly
// one line on stderr, "bagel: error: <where>: <what was expected>", with the
// exit status that says whose move it is: 2 when the command line must
// change (usage), 1 when the data, a file or the config must (everything
// else). Nothing else catches.
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bagel/atomic_file.h"
#include "bagel/cores.h"
#include "bagel/error.h"
#include "bagel/temp_registry.h"
#include "cli_paths.h"
#include "commands.h"

namespace {

constexpr int kDataError = 1;
constexpr int kUsageError = 2;

constexpr const char* kExitStatusHelp =
    "Exit status: 0 success; 1 an error in the data, a file or the config; 2 a usage error "
    "(unknown command, bad or missing argument, an input file or folder named here that does not exist, "
    "--set); 129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM (temporary files are removed).";

// Other libraries' messages (CLI11's, a JSON parser's) may span lines.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

int fail(const std::string& message, int status) {
  std::cerr << "bagel: error: " << one_line(message) << "\n";
  return status;
}

std::string command_list(const std::vector<CLI::App*>& commands) {
  std::string names;
  for (const CLI::App* c : commands) names += (names.empty() ? "" : ", ") + c->get_name();
  return names;
}

// The first argument, when it is a word that names no command ("fit").
// CLI11 would take it for a stray positional and only say that a command is
// required.
std::optional<std::string> unknown_command(int argc, char** argv,
                                           const std::vector<CLI::App*>& commands) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  for (const CLI::App* c : commands)
    if (c->get_name() == word) return std::nullopt;
  return word;
}

// The first argument that looks like an option ("--bogus", "-x") and is
// none of `command`'s (nor bagel's own, --help and --version). CLI11 checks
// the required options first, so without this a mistyped option is
// reported as "--config is required".
std::optional<std::string> unknown_option(int argc, char** argv, const CLI::App* command) {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (word.size() < 2 || word[0] != '-' || (word[1] >= '0' && word[1] <= '9') || word[1] == '.')
      continue;  // a value: "-", a negative number
    const bool joined_value = word.find('=') != std::string::npos;
    word = word.substr(0, word.find('='));
    if (word == "-h" || word == "--help" || word == "--version") continue;
    if (const CLI::Option* option = command != nullptr ? command->get_option_no_throw(word) : nullptr) {
      if (!joined_value && option->get_expected_min() > 0) ++i;  // its value ("-o -y"), no option
      continue;
    }
    if (command == nullptr || word.rfind("--", 0) == 0 || word.size() == 2) return word;
  }
  return std::nullopt;
}

// CLI11's words for an option given too often, "--rows: At Most 1 required
// but received 2", said as people would: "--rows: given twice, expected once".
std::string plain_words(const std::string& message) {
  const std::string at_most = ": At Most ";
  const std::string received = " required but received ";
  const std::size_t a = message.find(at_most);
  const std::size_t r = message.find(received);
  if (a == std::string::npos || r == std::string::npos || r < a) return message;
  const std::string most = message.substr(a + at_most.size(), r - a - at_most.size());
  const std::string given = message.substr(r + received.size());
  const auto times = [](const std::string& n) {
    return n == "1" ? std::string("once") : n == "2" ? std::string("twice") : n + " times";
  };
  return message.substr(0, a) + ": given " + times(given) + ", expected " +
         (most == "1" ? "once" : "at most " + times(most));
}

// CLI11's message, prefixed by the command it concerns.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv,
                                const std::vector<CLI::App*>& commands) {
  const std::vector<CLI::App*> chosen = app.get_subcommands();
  const CLI::App* command = chosen.empty() ? nullptr : chosen.front();
  const std::optional<std::string> stray = unknown_option(argc, argv, command);
  if (command == nullptr)
    return (stray ? "unknown option '" + *stray + "': " : std::string()) +
           "a command is required (expected " + command_list(commands) + "); see bagel --help";
  const std::string name = command->get_name();
  if (stray && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
    return name + ": unknown option '" + *stray + "' (see bagel " + name + " --help)";
  return name + ": " + plain_words(e.what()) + " (see bagel " + name + " --help)";
}

// Runs a command whose product is what it prints: a full disk (or
// /dev/full) is an error, not a success with nothing written. The errno of
// the failing write is kept as it happens (ErrnoKeepingBuf): by the flush
// at the end, errno holds whatever failed since ("No such file or directory").
template <typename Command>
int printed(const Command& command) {
  bagel::ErrnoKeepingBuf keeping(std::cout.rdbuf());
  std::streambuf* const original = std::cout.rdbuf(&keeping);
  struct Restore {
    std::streambuf* buf;
    ~Restore() { std::cout.rdbuf(buf); }
  } restore{original};
  const int status = command();
  std::cout.flush();
  if (status == 0 && !std::cout) throw bagel::FileError("<stdout>", bagel::write_failed_message(keeping.error()));
  return status;
}

// Whether standard output is a pipe whose reader has gone (`| head -0`).
bool stdout_reader_gone() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode)) return false;
  pollfd p{STDOUT_FILENO, 0, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLERR) != 0;
}

// A command that ignores SIGPIPE (so that a closed stderr only loses
// progress lines) and failed writing its output to a pipe whose reader
// has gone ends as predict and inspect do there: killed by SIGPIPE, without
// a message, once the error has unwound and removed the temporaries.
void end_quietly_on_broken_stdout(const bagel::Error& e) {
  const auto* file = dynamic_cast<const bagel::FileError*>(&e);
  if (file == nullptr || !(file->file() == "<stdout>" || bagel::cli::is_standard_output(file->file())) ||
      !stdout_reader_gone())
    return;
  std::signal(SIGPIPE, SIG_DFL);
  std::raise(SIGPIPE);
}

}  // namespace

int main(int argc, char** argv) {
  bagel::remove_temporaries_on_signal();
  // Past a file-size limit (ulimit -f) a write fails with EFBIG instead of
  // ending the process without a word: the error is reported ("File too
  // large") and the temporaries and the claim are removed, as on a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  bagel::limit_default_threads();
  CLI::App app{"bagel: sparse bag-of-words classifiers (logistic regression on an "
               "EmbeddingBag-sum layer, trained with SGD)"};
  app.set_version_flag("--version", std::string("bagel ") + BAGEL_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);
  app.footer(kExitStatusHelp);

  bagel::cli::TrainOptions train;
  bagel::cli::TuneOptions tune;
  bagel::cli::PredictOptions predict;
  bagel::cli::InspectOptions inspect;
  bagel::cli::ConvertOptions convert;
  bagel::cli::BenchOptions bench;
  bagel::cli::GenerateOptions generate;
  bagel::cli::VectorizeOptions vectorize;
  CLI::App* train_cmd = bagel::cli::add_train_command(app, train);
  CLI::App* tune_cmd = bagel::cli::add_tune_command(app, tune);
  CLI::App* predict_cmd = bagel::cli::add_predict_command(app, predict);
  CLI::App* inspect_cmd = bagel::cli::add_inspect_command(app, inspect);
  CLI::App* bench_cmd = bagel::cli::add_bench_command(app, bench);
  CLI::App* convert_cmd = bagel::cli::add_convert_command(app, convert);
  CLI::App* generate_cmd = bagel::cli::add_generate_command(app, generate);
  CLI::App* vectorize_cmd = bagel::cli::add_vectorize_command(app, vectorize);
  const std::vector<CLI::App*> commands = {train_cmd,   tune_cmd,     predict_cmd,  inspect_cmd,
                                           bench_cmd,   convert_cmd,  generate_cmd, vectorize_cmd};
  for (CLI::App* c : commands) c->footer(kExitStatusHelp);

  if (const auto word = unknown_command(argc, argv, commands))
    return fail("unknown command '" + *word + "' (expected " + command_list(commands) + ")",
                kUsageError);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return fail(parse_error_message(app, e, argc, argv, commands), kUsageError);
  }
  // The commands whose work is files: a closed pipe on stderr (`2>&1 | head`)
  // or stdout only loses the progress lines, never the run (SIGPIPE would
  // end it as kill -9 does, the model and its resume state lost).
  for (CLI::App* c : {train_cmd, tune_cmd, convert_cmd, generate_cmd, vectorize_cmd})
    if (c->parsed()) std::signal(SIGPIPE, SIG_IGN);
  try {
    if (train_cmd->parsed()) return bagel::cli::run_train(train);
    if (tune_cmd->parsed()) return bagel::cli::run_tune(tune);
    if (predict_cmd->parsed()) return bagel::cli::run_predict(predict);
    if (inspect_cmd->parsed()) return printed([&] { return bagel::cli::run_inspect(inspect); });
    if (bench_cmd->parsed()) return printed([&] { return bagel::cli::run_bench(bench); });
    if (convert_cmd->parsed()) return bagel::cli::run_convert(convert);
    if (generate_cmd->parsed()) return bagel::cli::run_generate(generate);
    if (vectorize_cmd->parsed()) return bagel::cli::run_vectorize(vectorize);
    return 0;
  } catch (const bagel::Interrupted&) {
    // Stopped by a signal (StopOnSignal): exit as a shell reports that signal.
    const int signal_number = bagel::StopOnSignal::signal_received();
    return 128 + (signal_number > 0 ? signal_number : SIGINT);
  } catch (const bagel::UsageError& e) {
    return fail(e.what(), kUsageError);
  } catch (const bagel::Error& e) {
    end_quietly_on_broken_stdout(e);
    return fail(e.what(), kDataError);
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(e.path1().string() + ": " + e.code().message(), kDataError);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", kDataError);
  } catch (const std::length_error& e) {
    // A size no check caught before allocating ("vector::reserve"): say
    // what it means rather than the container's name.
    return fail(std::string("a size in the input is too large to hold in memory (") + e.what() + ")",
                kDataError);
  } catch (const std::exception& e) {
    return fail(e.what(), kDataError);
  }
}
