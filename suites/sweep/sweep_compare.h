// `compare --sweep`: two kernels of an elementwise op over a sweep's domain
// (every pair of a 16-bit format, suites/sweep/sweep.h), enumerated by index
// in blocks of kSweepBlock on the chunk driver and merged in index order, so
// the result is a pure function of (domain, range, kernels), whatever the
// thread count; `--shard K/N` cuts the range as `sweep` does. What it
// measures is what `compare` measures of outputs (suites/investigate/compare.h):
// differing encodings, ULPs apart, the first differing inputs; the models and
// the cause come from compare's own code, run on the differing inputs found.
#ifndef ULPGATE_SUITES_SWEEP_SWEEP_COMPARE_H_
#define ULPGATE_SUITES_SWEEP_SWEEP_COMPARE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "suites/investigate/check.h"
#include "suites/investigate/compare.h"
#include "suites/sweep/sweep.h"

namespace ulpgate {

struct CompareSweepRequest {
  SweepDomain domain;
  uint64_t begin = 0, end = 0;  // domain indices
  StorageKernel a, b;
  size_t keep = 65536;          // differing inputs kept (the first, by index) for the models
  unsigned threads = 0;
  std::function<void(uint64_t, uint64_t)> progress;
};

struct CompareSweepResult {
  CompareResult counts;                 // n, differing, special, signed_zero, nan_payload, max, histogram
  std::vector<uint64_t> first;          // the first differing domain indices, up to keep
  std::vector<float> first_a, first_b;  // the sides' outputs there
};

CompareSweepResult RunCompareSweep(const CompareSweepRequest& request);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_SWEEP_COMPARE_H_
