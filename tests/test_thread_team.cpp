// ThreadTeam (train/thread_team.h): every rank runs once a run, each on its
// own thread and always the same one; barriers hold every rank until all
// arrive; an exception comes back to the caller; and a waiting thread
// sleeps instead of spinning on a core another process may need.
#include "train/thread_team.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace bagel::train {
namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

TEST(ThreadTeam, EachRankOnceOnItsOwnThreadTheCallerRankZero) {
  ThreadTeam team(4);
  ASSERT_EQ(team.size(), 4);
  std::vector<std::thread::id> first(4), again(4);
  std::vector<int> calls(4, 0);
  team.run([&](int rank) {
    first[static_cast<std::size_t>(rank)] = std::this_thread::get_id();
    ++calls[static_cast<std::size_t>(rank)];
  });
  for (int r = 0; r < 50; ++r)
    team.run([&](int rank) {
      again[static_cast<std::size_t>(rank)] = std::this_thread::get_id();
      ++calls[static_cast<std::size_t>(rank)];
    });
  EXPECT_EQ(first[0], std::this_thread::get_id());
  EXPECT_EQ(std::set<std::thread::id>(first.begin(), first.end()).size(), 4u);
  EXPECT_EQ(again, first);  // the same thread for a rank in every run
  EXPECT_EQ(calls, std::vector<int>(4, 51));
}

TEST(ThreadTeam, OneRankRunsOnTheCaller) {
  ThreadTeam team(1);
  std::thread::id id;
  team.run([&](int rank) {
    EXPECT_EQ(rank, 0);
    team.barrier();  // alone: returns at once
    id = std::this_thread::get_id();
  });
  EXPECT_EQ(id, std::this_thread::get_id());
}

// Each phase every rank writes its own slot, then after a barrier reads
// every slot: it must see the whole phase, never a slot of the phase before
// or after. Ranks are staggered so that each arrives first sometimes.
TEST(ThreadTeam, BarrierHoldsEveryRankUntilAllArrive) {
  constexpr int kRanks = 3;
  constexpr int kPhases = 400;
  ThreadTeam team(kRanks);
  std::vector<std::atomic<int>> slot(kRanks);
  std::atomic<int> wrong{0};
  team.run([&](int rank) {
    for (int p = 1; p <= kPhases; ++p) {
      if ((p + rank) % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      slot[static_cast<std::size_t>(rank)].store(p);
      team.barrier();
      for (const std::atomic<int>& s : slot)
        if (s.load() != p) ++wrong;
      team.barrier();  // nobody writes phase p + 1 before all have read p
    }
  });
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ThreadTeam, RethrowsARanksExceptionAfterEveryRankReturned) {
  ThreadTeam team(3);
  std::atomic<int> returned{0};
  EXPECT_THROW(team.run([&](int rank) {
                 if (rank == 2) throw std::runtime_error("rank 2 failed");
                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                 ++returned;
               }),
               std::runtime_error);
  EXPECT_EQ(returned.load(), 2);  // the others had finished when run() threw
  int after = 0;
  team.run([&](int rank) {
    if (rank == 0) after = 1;
  });
  EXPECT_EQ(after, 1);  // still usable
}

// A rank that waits 100 ms at a barrier, and a worker idle for 100 ms
// between runs, use a few milliseconds of CPU at most: they sleep (a
// spinning wait would use the whole 100 ms).
TEST(ThreadTeam, WaitingRanksSleep) {
  ThreadTeam team(2);
  double waiting_cpu = 0;
  team.run([&](int rank) {
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else {
      const double t0 = thread_cpu_seconds();
      team.barrier();
      waiting_cpu = thread_cpu_seconds() - t0;
      return;
    }
    team.barrier();
  });
  EXPECT_LT(waiting_cpu, 0.02);

  double idle_cpu = 0;
  double before = 0;
  team.run([&](int rank) {
    if (rank == 1) before = thread_cpu_seconds();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  team.run([&](int rank) {
    if (rank == 1) idle_cpu = thread_cpu_seconds() - before;
  });
  EXPECT_LT(idle_cpu, 0.02);
}

}  // namespace
}  // namespace bagel::train
