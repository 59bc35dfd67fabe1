// The parallel driver shared by the engines and training runs.
#include "suites/engine/chunk_driver.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <stdexcept>
#include <vector>

namespace ulpgate {
namespace {

TEST(ChunkDriver, EveryUnitRunsOnceWhateverTheThreads) {
  for (unsigned threads : {1u, 2u, 3u, 8u, 0u}) {
    std::vector<std::atomic<int>> runs(1000);
    RunUnits(runs.size(), threads, [&](size_t u) { ++runs[u]; });
    for (size_t u = 0; u < runs.size(); ++u) ASSERT_EQ(runs[u].load(), 1) << u << " " << threads;
  }
  RunUnits(0, 4, [](size_t) { FAIL() << "no unit to run"; });
}

TEST(ChunkDriver, AWorkerExceptionReachesTheCaller) {
  for (unsigned threads : {1u, 4u}) {
    std::atomic<int> started{0};
    EXPECT_THROW(RunUnits(
                     10000, threads,
                     [&](size_t u) {
                       ++started;
                       if (u == 7) throw std::runtime_error("unit 7");
                       // Slow units: the other workers must not get through all
                       // of them in the moment before the throwing one stops
                       // them (on a loaded machine it may be descheduled).
                       std::this_thread::sleep_for(std::chrono::milliseconds(1));
                     }),
                 std::runtime_error);
    EXPECT_LT(started.load(), 10000) << "units kept starting after the failure";
  }
}

TEST(ChunkDriver, ProgressReachesTheTotalWeight) {
  uint64_t last_done = 0, last_total = 0;
  RunUnits(
      50, 3, [](size_t) {}, [](size_t u) { return static_cast<uint64_t>(u + 1); },
      [&](uint64_t done, uint64_t total) {
        EXPECT_GE(done, last_done);
        last_done = done;
        last_total = total;
      });
  EXPECT_EQ(last_total, 50u * 51u / 2u);
  EXPECT_EQ(last_done, last_total);
  // A unit another thread finishes after the calling thread ran out of units
  // still ends in a report of the total.
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<uint64_t> reports;
  RunUnits(
      2, 2,
      [&](size_t) {
        if (std::this_thread::get_id() != caller) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      },
      nullptr, [&](uint64_t done, uint64_t total) { reports.push_back(done * 100 + total); });
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports.back(), 202u);
  EXPECT_EQ(WorkerCount(0, 1), 1u);
  EXPECT_EQ(WorkerCount(8, 3), 3u);
  EXPECT_EQ(WorkerCount(2, 0), 1u);
}

}  // namespace
}  // namespace ulpgate
