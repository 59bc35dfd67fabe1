#include "suites/engine/chunk_driver.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "oracles/mpfr_number.h"

namespace ulpgate {

unsigned WorkerCount(unsigned requested, size_t units) {
  const unsigned wanted = requested != 0 ? requested : std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max<size_t>(1, std::min<size_t>(wanted, units)));
}

void RunUnits(size_t units, unsigned threads, const std::function<void(size_t)>& run_unit,
              const std::function<uint64_t(size_t)>& weight,
              const std::function<void(uint64_t, uint64_t)>& progress) {
  RunUnitsByWorker(
      units, threads, [&](size_t u, unsigned /*worker*/) { run_unit(u); }, weight, progress);
}

unsigned RunUnitsByWorker(size_t units, unsigned threads,
                          const std::function<void(size_t, unsigned)>& run_unit,
                          const std::function<uint64_t(size_t)>& weight,
                          const std::function<void(uint64_t, uint64_t)>& progress) {
  uint64_t total = 0;
  if (progress) {
    for (size_t u = 0; u < units; ++u) total += weight ? weight(u) : 1;
  }
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> done{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&](unsigned worker) {
    const bool calling_thread = worker == 0;
    // A worker thread frees MPFR's caches as it ends; the calling thread
    // keeps its own for its next call.
    std::optional<MpfrThreadCaches> caches;
    if (!calling_thread) caches.emplace();
    for (;;) {
      const size_t u = next.fetch_add(1);
      if (u >= units) return;
      try {
        run_unit(u, worker);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        next = units;
        return;
      }
      if (progress) {
        done += weight ? weight(u) : 1;
        if (calling_thread) progress(done.load(), total);
      }
    }
  };
  const unsigned count = WorkerCount(threads, units);
  std::vector<std::thread> workers;
  for (unsigned w = 1; w < count; ++w) workers.emplace_back(work, w);
  work(0);
  for (auto& w : workers) w.join();
  if (failure) std::rethrow_exception(failure);
  // The other threads may have finished every unit before the calling thread
  // took one (short units, slow thread start): the last report comes here.
  if (progress && units > 0) progress(done.load(), total);
  return count;
}

}  // namespace ulpgate
