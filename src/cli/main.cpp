// bagel: parse the command line, dispatch, and turn any error into one line
// on stderr and a non-zero exit status. Nothing else catches.
#include <iostream>
#include <new>

#include "bagel/error.h"
#include "bagel/temp_registry.h"
#include "commands.h"

int main(int argc, char** argv) {
  bagel::remove_temporaries_on_signal();
  CLI::App app{"bagel: sparse bag-of-words classifiers (logistic regression on an "
               "EmbeddingBag-sum layer, trained with SGD)"};
  app.set_version_flag("--version", std::string("bagel ") + BAGEL_VERSION);
  app.require_subcommand(1);
  app.fallthrough(false);

  bagel::cli::TrainOptions train;
  bagel::cli::PredictOptions predict;
  bagel::cli::ConvertOptions convert;
  bagel::cli::BenchOptions bench;
  bagel::cli::GenerateOptions generate;
  CLI::App* train_cmd = bagel::cli::add_train_command(app, train);
  CLI::App* predict_cmd = bagel::cli::add_predict_command(app, predict);
  CLI::App* bench_cmd = bagel::cli::add_bench_command(app, bench);
  CLI::App* convert_cmd = bagel::cli::add_convert_command(app, convert);
  CLI::App* generate_cmd = bagel::cli::add_generate_command(app, generate);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    if (train_cmd->parsed()) return bagel::cli::run_train(train);
    if (predict_cmd->parsed()) return bagel::cli::run_predict(predict);
    if (bench_cmd->parsed()) return bagel::cli::run_bench(bench);
    if (convert_cmd->parsed()) return bagel::cli::run_convert(convert);
    if (generate_cmd->parsed()) return bagel::cli::run_generate(generate);
  } catch (const bagel::Error& e) {
    std::cerr << "bagel: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "bagel: error: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "bagel: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
