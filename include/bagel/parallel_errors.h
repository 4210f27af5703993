// An exception may not leave an OpenMP region: the runtime would call
// std::terminate and the user would see "terminate called ..." instead of
// bagel's one-line error. A region whose body can throw (an allocation, a
// bad row, a cancelled run) runs it through RegionErrors::run(), which keeps
// the first exception; the caller rethrows it after the region (LightGBM's
// OMP_LOOP_EX_BEGIN / OMP_THROW_EX do the same).
//
//   RegionErrors errors;
//   #pragma omp parallel for
//   for (...) errors.run([&] { ... });
//   errors.rethrow();
//
// Bodies between barriers must still reach every barrier: run() returns
// normally after catching, so a thread that failed goes on to the barrier,
// and loops may poll failed() to stop early.
#pragma once

#include <atomic>
#include <exception>
#include <mutex>

namespace bagel {

class RegionErrors {
 public:
  template <class Body>
  void run(Body&& body) noexcept {
    try {
      body();
    } catch (...) {
      keep(std::current_exception());
    }
  }
  // Some thread's body has thrown (cheap: a relaxed load).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // After the region: throws the first exception kept, if any.
  void rethrow() {
    if (failed()) std::rethrow_exception(first_);
  }

 private:
  void keep(std::exception_ptr e) noexcept {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (!first_) first_ = e;
    failed_.store(true, std::memory_order_relaxed);
  }

  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace bagel
