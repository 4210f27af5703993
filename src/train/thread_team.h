// A fixed team of threads that sleep while they wait, for every training
// loop on several threads (the split classes, class_shards.h; the replicas,
// replicas.h; Hogwild and "exact"; the helper that copies rows ahead,
// CopyAhead in epoch_loop.h): the caller is rank 0 and `size() - 1`
// threads of the team's own are the others, for as long as the team lives.
//
// Why not an OpenMP region an epoch: GNU OpenMP spins a waiting thread (at
// a barrier, at the end of a region, and in its pool between regions) for
// up to 300,000 rounds before it sleeps. Alone that is free; with another
// process on the same cores each wait keeps a core from the thread the
// wait is for, and two default runs side by side on 2 cores took 2.7 times
// as long as two one-thread runs (data/PERFORMANCE.md, "Threads with the defaults").
// Only the environment, read when the OpenMP library loads, changes that.
// The team's waits spin for up to 0.2 ms (a barrier whose threads arrive
// together costs no system call, and a helper idle between two epochs is
// awake when the next begins) and then sleep on the word they wait for
// (std::atomic::wait: a futex on Linux). Before it hands out work, run()
// also ends OpenMP's pool, which may still be spinning after the caller's
// last region.
//
// Each rank always runs on the same thread, so memory that rank s first
// touches in one run() is near the thread that uses it in the next.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

#include "bagel/parallel_errors.h"

namespace bagel::train {

class ThreadTeam {
 public:
  // A team of `threads` ranks (at least 1); starts threads - 1 threads.
  explicit ThreadTeam(int threads);
  ~ThreadTeam();
  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;

  int size() const { return size_; }

  // body(rank) on every rank, the caller's as rank 0; returns when every
  // rank has returned, and then rethrows the first exception any of them
  // threw. A body with barriers must reach each of them on every rank, so
  // it catches its own exceptions before one (RegionErrors, as in an
  // OpenMP region). Not reentrant: a body does not call run().
  template <class Body>
  void run(Body&& body) {
    using B = std::remove_reference_t<Body>;
    RegionErrors errors;
    errors_ = &errors;
    task_ = [](void* b, int rank) { (*static_cast<B*>(b))(rank); };
    context_ = const_cast<void*>(static_cast<const void*>(&body));
    dispatch();
    errors.rethrow();
  }

  // Inside run(): returns once every rank has called it.
  void barrier();

 private:
  using Task = void (*)(void*, int);
  // OpenMP's pool may be spinning after the caller's last region (up to
  // 300,000 rounds: 6 ms on the 2-core Xeon of data/PERFORMANCE.md) on the cores the
  // team is about to use: the first epoch of a split ran 6 ms longer.
  // Pausing the pool ends its threads; the next region starts new ones.
  void end_openmp_pool() const;
  void dispatch();
  void serve(int rank);
  void call(int rank) noexcept;

  const int size_;
  Task task_ = nullptr;
  void* context_ = nullptr;
  RegionErrors* errors_ = nullptr;
  // run() bumps generation_ (workers wait on it); each rank's return counts
  // down pending_ (the caller waits on it); ~ThreadTeam sets stop_ first.
  alignas(64) std::atomic<std::uint32_t> generation_{0};
  alignas(64) std::atomic<std::int32_t> pending_{0};
  // barrier(): arrivals of the current round, and the round (waited on).
  alignas(64) std::atomic<std::int32_t> arrived_{0};
  alignas(64) std::atomic<std::uint32_t> round_{0};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace bagel::train
