// Progress lines (progress.h): the rate and ETA come from rows trained, not
// from the time the epoch spent setting up before its first row.
#include <gtest/gtest.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "bagel/progress.h"

namespace bagel {
namespace {

using namespace std::chrono_literals;

double printed_rate(const std::string& text) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(text, m, std::regex(R"(([0-9]+) samples/s)"))) << text;
  return m.empty() ? 0.0 : std::stod(m[1]);
}

TEST(Progress, TheFirstReportIsNotExtrapolated) {
  // The epoch's set-up (a copy of its rows) took 250 ms before row 1: a
  // rate of one row over that time read "4 samples/s, ETA 70h".
  std::ostringstream out;
  Progress p(Progress::Mode::kTerminal, out);
  p.start_epoch(1, 2, 1'000'000);
  std::this_thread::sleep_for(250ms);
  // Read before the first report, so that `seconds` below holds the time
  // the report's rate is over however the threads are scheduled.
  const auto t0 = std::chrono::steady_clock::now();
  p.update(1, 0.7);
  EXPECT_EQ(out.str(), "") << "no rate from a single row";
  std::this_thread::sleep_for(250ms);
  p.update(100'001, 0.6);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_NE(out.str(), "");
  // 100,000 rows since the first report, in at most `seconds`.
  EXPECT_GE(printed_rate(out.str()), 100'000 / seconds - 1);
  EXPECT_NE(out.str().find("loss 0.600000"), std::string::npos) << out.str();
}

TEST(Progress, AnEpochNotDoneNeverReadsAHundredPercent) {
  // 99,999 rows of 100,000: "%5.1f" alone rounds that to "100.0%".
  std::ostringstream out;
  Progress p(Progress::Mode::kTerminal, out);
  p.start_epoch(1, 1, 100'000);
  p.update(1, 0.7);
  std::this_thread::sleep_for(210ms);
  p.update(99'999, 0.6);
  EXPECT_NE(out.str().find(" 99.9%"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("100.0%"), std::string::npos) << out.str();
}

TEST(Progress, QuietPrintsNothing) {
  std::ostringstream out;
  Progress p(Progress::Mode::kQuiet, out);
  p.start_epoch(1, 1, 10);
  p.update(1, 0.5);
  std::this_thread::sleep_for(210ms);
  p.update(5, 0.5);
  p.end_epoch("epoch 1/1");
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace bagel
