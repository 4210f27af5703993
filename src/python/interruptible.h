// Long work that Ctrl-C can stop: the work runs on a worker thread without
// the GIL, while the calling (main) thread wakes every 100 ms, takes the GIL
// and lets Python run its signal handlers. Python runs them only on the main
// thread, and only while it holds the GIL, so work that held the calling
// thread until it ended could not be interrupted at all.
//
// When a handler raises (KeyboardInterrupt), the work is asked to stop
// through Progress::request_stop(); it throws Interrupted within a few
// hundred rows, and the Python exception is raised once the worker has
// ended, so that nothing it used is freed under it.
#pragma once

#include <pybind11/pybind11.h>

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "bagel/error.h"
#include "bagel/progress.h"

namespace bagel::python {

namespace py = pybind11;

template <typename Result>
Result run_interruptible(Progress& progress, const std::function<Result()>& work) {
  std::optional<Result> result;
  std::exception_ptr error;
  bool done = false;
  bool interrupted = false;
  std::mutex m;
  std::condition_variable cv;
  {
    py::gil_scoped_release no_gil;
    std::thread worker([&] {
      try {
        result.emplace(work());
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lock(m);
      done = true;
      cv.notify_one();
    });
    std::unique_lock lock(m);
    while (!done) {
      cv.wait_for(lock, std::chrono::milliseconds(100));
      if (done || interrupted) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire gil;
        // Non-zero: a handler raised; its exception stays set on this thread.
        if (PyErr_CheckSignals() != 0) interrupted = true;
      }
      if (interrupted) progress.request_stop();
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (interrupted) throw py::error_already_set();
  if (error) std::rethrow_exception(error);
  return std::move(*result);
}

}  // namespace bagel::python
