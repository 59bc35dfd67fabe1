// The exact shadow run: the training algorithm of a scenario in MPFR at
// kDriftPrecision bits, with exact (correctly rounded at that precision) tanh
// and sqrt, from the same binary32 data, initial parameters and constants as
// the float runs.
#ifndef ULPGATE_SUITES_DRIFT_REFERENCE_H_
#define ULPGATE_SUITES_DRIFT_REFERENCE_H_

#include <functional>
#include <vector>

#include "oracles/mpfr_number.h"
#include "suites/drift_scenario.h"

namespace ulpgate {

// 256 bits: each epoch rounds a few thousand operations at 2^-256 relative,
// and even an amplification of 2^100 over 1000 epochs leaves the reference
// loss good to far better than the 1e-9 it is compared at, and its
// parameters far closer than one binary32 ulp.
inline constexpr mpfr_prec_t kDriftPrecision = 256;

using ExactTensor = std::vector<MpfrNumber>;

struct ReferenceRun {
  std::vector<double> loss;             // per epoch, at w before the perturbation
  std::vector<ExactTensor> parameters;  // after the last epoch
};

// Runs `epochs` epochs (the scenario's when 0). Calls `on_epoch(epoch,
// parameters at its start)` if given, so callers can compare float runs
// epoch by epoch without keeping every epoch's parameters.
ReferenceRun RunReference(const Scenario& scenario, const Batch& batch,
                          const Parameters& initial, size_t epochs = 0,
                          const std::function<void(size_t, const std::vector<ExactTensor>&)>&
                              on_epoch = nullptr);

// One forward and backward pass in exact arithmetic (for tests): returns the
// loss and fills gradients (same layout as Parameters).
MpfrNumber ExactLossAndGradients(const Scenario& scenario, const Batch& batch,
                                 const std::vector<ExactTensor>& parameters,
                                 std::vector<ExactTensor>* gradients);

std::vector<ExactTensor> ToExact(const Parameters& parameters);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_DRIFT_REFERENCE_H_
