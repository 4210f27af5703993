// An interrupted run leaves no temporary behind: the signal handlers remove
// every registered path (a folder with the files in it) and exit with
// 128 + the signal, and nothing else is touched.
#include <gtest/gtest.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "bagel/atomic_file.h"
#include "bagel/temp_registry.h"
#include "temp_dir.h"

namespace bagel {
namespace {

namespace fs = std::filesystem;

// A test run started in the background by a non-interactive shell inherits
// SIGINT ignored, and remove_temporaries_on_signal() leaves an ignored signal
// ignored (as nohup asks): the tests of the handler start from the default.
void default_disposition(int signal_number) { std::signal(signal_number, SIG_DFL); }

// In the death test's child: a registered folder holding files, a
// registered file, an unregistered file; then the signal.
void register_then_raise(const fs::path& dir, int signal_number) {
  fs::create_directories(dir / "model.tmp");
  for (const char* name : {"weight.npy", "bias.npy", "model.json"})
    std::ofstream(dir / "model.tmp" / name) << "partial";
  std::ofstream(dir / "p.txt.tmp") << "partial";
  std::ofstream(dir / "users-notes.md") << "keep me";
  const TempRegistration folder(dir / "model.tmp");
  const TempRegistration file(dir / "p.txt.tmp");
  default_disposition(signal_number);
  remove_temporaries_on_signal();
  std::raise(signal_number);
}

TEST(TempRegistryDeathTest, SigintRemovesRegisteredPathsAndExits130) {
  TempDir tmp;
  EXPECT_EXIT(register_then_raise(tmp.path(), SIGINT), ::testing::ExitedWithCode(130), "");
  EXPECT_FALSE(fs::exists(tmp.path() / "model.tmp"));
  EXPECT_FALSE(fs::exists(tmp.path() / "p.txt.tmp"));
  EXPECT_TRUE(fs::exists(tmp.path() / "users-notes.md"));
}

TEST(TempRegistryDeathTest, SigtermExits143) {
  TempDir tmp;
  EXPECT_EXIT(register_then_raise(tmp.path(), SIGTERM), ::testing::ExitedWithCode(143), "");
  EXPECT_FALSE(fs::exists(tmp.path() / "model.tmp"));
  EXPECT_TRUE(fs::exists(tmp.path() / "users-notes.md"));
}

TEST(TempRegistryDeathTest, AnAtomicPathIsRegisteredUntilCommitted) {
  TempDir tmp;
  const fs::path target = tmp.path() / "out.txt";
  EXPECT_EXIT(
      {
        AtomicPath path(target);
        std::ofstream(path.temp()) << "half";
        default_disposition(SIGINT);
        remove_temporaries_on_signal();
        std::raise(SIGINT);
      },
      ::testing::ExitedWithCode(130), "");
  EXPECT_TRUE(fs::is_empty(tmp.path()));  // neither the temporary nor the target
}

TEST(TempRegistryDeathTest, AnIgnoredSignalStaysIgnored) {
  EXPECT_EXIT(
      {
        std::signal(SIGINT, SIG_IGN);  // as under nohup
        remove_temporaries_on_signal();
        std::raise(SIGINT);
        std::exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

TEST(TempRegistryDeathTest, AFinishedRegistrationIsNotRemoved) {
  TempDir tmp;
  const fs::path kept = tmp.path() / "kept";
  std::ofstream(kept) << "x";
  { const TempRegistration r(kept); }
  EXPECT_EXIT(
      {
        remove_temporaries_on_signal();
        std::raise(SIGTERM);
      },
      ::testing::ExitedWithCode(143), "");
  EXPECT_TRUE(fs::exists(kept));
}

TEST(TempRegistryDeathTest, FoldersARunCreatedGoWhenEmpty) {
  // new/a/b.lock: the run's file, in folders it created on the way (new/a,
  // new); kept/ holds a user's file, so it stays.
  TempDir tmp;
  const fs::path a = tmp.path() / "new" / "a";
  const fs::path kept = tmp.path() / "kept";
  EXPECT_EXIT(
      {
        fs::create_directories(a);
        fs::create_directories(kept);
        std::ofstream(a / "b.lock") << "1";
        std::ofstream(kept / "notes.md") << "mine";
        const TempRegistration deepest(a, TempRegistration::Kind::kEmptyFolder);
        const TempRegistration parent(tmp.path() / "new", TempRegistration::Kind::kEmptyFolder);
        const TempRegistration other(kept, TempRegistration::Kind::kEmptyFolder);
        const TempRegistration lock(a / "b.lock");  // registered last, removed first
        default_disposition(SIGINT);
        remove_temporaries_on_signal();
        std::raise(SIGINT);
      },
      ::testing::ExitedWithCode(130), "");
  EXPECT_FALSE(fs::exists(tmp.path() / "new"));
  EXPECT_TRUE(fs::exists(kept / "notes.md"));
}

TEST(TempRegistryDeathTest, ASignalWaitsUntilTheDeferredStepEnds) {
  // The step finishes (its output written in full), then the signal ends
  // the process as it would have, removing what is still registered.
  TempDir tmp;
  const fs::path done = tmp.path() / "done";
  const fs::path temp = tmp.path() / "left.tmp";
  EXPECT_EXIT(
      {
        std::ofstream(temp) << "partial";
        const TempRegistration registered(temp);
        default_disposition(SIGTERM);
        default_disposition(SIGINT);
        remove_temporaries_on_signal();
        {
          const DeferSignals outer;
          {
            const DeferSignals inner;  // nested: only the last one out exits
            std::raise(SIGTERM);
            std::raise(SIGINT);  // a second signal waits too
          }
          std::ofstream(done) << "whole";
        }
        std::exit(7);  // not reached
      },
      ::testing::ExitedWithCode(143), "");
  EXPECT_TRUE(fs::exists(done));
  EXPECT_FALSE(fs::exists(temp));
}

TEST(TempRegistryDeathTest, WithoutASignalTheDeferredStepChangesNothing) {
  EXPECT_EXIT(
      {
        default_disposition(SIGTERM);
        remove_temporaries_on_signal();
        { const DeferSignals step; }
        std::raise(SIGTERM);  // after the step: at once
        std::exit(7);
      },
      ::testing::ExitedWithCode(143), "");
}

}  // namespace
}  // namespace bagel

// The reason a write failed is the write's own: errno set by calls made
// after it (predicting the next chunk looked up a missing cgroup file, and
// "No such file or directory" was reported) does not replace it.
TEST(ErrnoKeepingBuf, KeepsTheErrnoOfTheFailingWrite) {
  std::ofstream full("/dev/full", std::ios::binary);
  ASSERT_TRUE(full.is_open());
  bagel::ErrnoKeepingBuf buf(full.rdbuf());
  std::ostream out(&buf);
  const std::string chunk(1 << 17, 'x');  // past any buffer: written at once
  out << chunk;
  EXPECT_FALSE(out.good());
  errno = ENOENT;  // what a later call left
  out << chunk;
  out.flush();
  EXPECT_EQ(buf.error(), ENOSPC);
  EXPECT_EQ(bagel::write_failed_message(buf.error()), "write failed: No space left on device");
}

TEST(ErrnoKeepingBuf, AWriteThatSucceedsKeepsNoErrno) {
  std::ostringstream text;
  bagel::ErrnoKeepingBuf buf(text.rdbuf());
  std::ostream out(&buf);
  errno = ENOENT;
  out << "a line" << '\n';
  out.flush();
  EXPECT_TRUE(out.good());
  EXPECT_EQ(buf.error(), 0);
  EXPECT_EQ(text.str(), "a line\n");
}
