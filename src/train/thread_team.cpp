#include "train/thread_team.h"

#include <omp.h>

#include <algorithm>
#include <chrono>

namespace bagel::train {

namespace {

// How long a wait spins before it sleeps: long enough for a barrier whose
// threads arrive together and for the trainer's work between two epochs
// (a helper that slept there woke too late for the epoch's second window:
// 0.15 ms an epoch on changelog-era with 45 us of spinning, none with 200;
// data/PERFORMANCE.md), far shorter than the 6 ms GNU OpenMP spins.
constexpr auto kSpinTime = std::chrono::microseconds(200);

inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Returns once `word` no longer holds `old`: spins a while, then sleeps.
template <class T>
void await_change(const std::atomic<T>& word, T old) {
  const auto until = std::chrono::steady_clock::now() + kSpinTime;
  for (unsigned i = 1;; ++i) {
    if (word.load(std::memory_order_acquire) != old) return;
    relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) break;
  }
  while (word.load(std::memory_order_acquire) == old) word.wait(old, std::memory_order_acquire);
}

}  // namespace

ThreadTeam::ThreadTeam(int threads) : size_(std::max(1, threads)) {
  // First, so that the system places the new threads on cores that are
  // not busy spinning: placed beside the caller, a helper stayed off its
  // own core for the first 4 epochs (12 ms) in some runs.
  end_openmp_pool();
  threads_.reserve(static_cast<std::size_t>(size_ - 1));
  try {
    for (int rank = 1; rank < size_; ++rank) threads_.emplace_back([this, rank] { serve(rank); });
  } catch (...) {
    stop_.store(true);
    generation_.fetch_add(1);
    generation_.notify_all();
    for (std::thread& t : threads_) t.join();
    throw;
  }
}

ThreadTeam::~ThreadTeam() {
  stop_.store(true);
  generation_.fetch_add(1);
  generation_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadTeam::call(int rank) noexcept {
  errors_->run([&] { task_(context_, rank); });
}

void ThreadTeam::end_openmp_pool() const {
  if (size_ > 1 && !omp_in_parallel()) omp_pause_resource_all(omp_pause_soft);
}

void ThreadTeam::dispatch() {
  end_openmp_pool();
  pending_.store(size_ - 1);
  generation_.fetch_add(1);
  generation_.notify_all();
  call(0);
  for (std::int32_t left; (left = pending_.load(std::memory_order_acquire)) != 0;) await_change(pending_, left);
}

void ThreadTeam::serve(int rank) {
  std::uint32_t seen = 0;
  for (;;) {
    await_change(generation_, seen);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load()) return;
    call(rank);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void ThreadTeam::barrier() {
  const std::uint32_t round = round_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == size_) {
    arrived_.store(0, std::memory_order_relaxed);
    round_.fetch_add(1, std::memory_order_acq_rel);
    round_.notify_all();
    return;
  }
  await_change(round_, round);
}

}  // namespace bagel::train
