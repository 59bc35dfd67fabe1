// The one parallel driver of the engines and of training runs: units of work
// (chunks of inputs, float training runs) taken by worker threads in any
// order. Each unit writes only its own results and callers merge them in unit
// order, so nothing depends on the thread count.
#ifndef ULPGATE_SUITES_CHUNK_DRIVER_H_
#define ULPGATE_SUITES_CHUNK_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <functional>

namespace ulpgate {

// The threads a run uses: `requested` (0: every core), at most one per unit
// and at least one.
unsigned WorkerCount(unsigned requested, size_t units);

// Calls run_unit(u) for every u in [0, units) on WorkerCount(threads, units)
// threads, the calling thread among them. The first exception stops the
// workers from starting more units and is rethrown here once all have
// stopped. When `progress` is given, it is called on the calling thread after
// each unit that thread finishes, with the summed weight(u) of the units
// finished so far (any thread) and the total weight, and once more after all
// units ended, so the last report is always the total.
void RunUnits(size_t units, unsigned threads, const std::function<void(size_t)>& run_unit,
              const std::function<uint64_t(size_t)>& weight = nullptr,
              const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

// The same, telling run_unit which worker (0 .. workers-1, the calling thread
// is 0) runs it, so that each can keep state of its own; returns the number
// of workers, WorkerCount(threads, units).
unsigned RunUnitsByWorker(size_t units, unsigned threads,
                          const std::function<void(size_t unit, unsigned worker)>& run_unit,
                          const std::function<uint64_t(size_t)>& weight = nullptr,
                          const std::function<void(uint64_t, uint64_t)>& progress = nullptr);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_CHUNK_DRIVER_H_
