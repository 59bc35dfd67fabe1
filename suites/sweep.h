// `ulpgate sweep`: every input of a domain instead of a sample. A domain is
// enumerated by index, so a sweep is a pure function of (domain, range,
// variants, targets) and any range of it can run anywhere: `--shard K/N` runs
// the K-th of N equal parts, and MergeSweeps joins the parts' reports into
// exactly (byte for byte) the report of the whole.
//
// Domains of tanh_bwd(grad, t):
//   pairs      every (grad, t) pair of a 16-bit format: 2^32 inputs, index
//              grad_bits << 16 | t_bits (NaN payloads and infinities included)
//   over t     every binary32 t (2^32 bit patterns) at each given grad: index
//              g * 2^32 + t_bits for the g-th grad
//   over grad  every binary32 grad at each given t
//
// The sweep runs the engine (RunTanhBwd) block by block, blocks of kSweepBlock
// inputs aligned to multiples of kSweepBlock, and adds their statistics in
// index order. What makes shards merge exactly: counts and histograms are
// integers; maxima and first indices are order-independent with ties to the
// lower index; the ULP sum is kept as an integer in units of 2^-32 ULP of each
// block's sum (so the mean is the same however the range was cut, as long as
// cuts fall on block boundaries, which --shard's do); the outputs' digest is a
// sum over blocks of a hash of (block, block digest).
#ifndef ULPGATE_SUITES_SWEEP_H_
#define ULPGATE_SUITES_SWEEP_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "oracles/format.h"
#include "suites/engine.h"

namespace ulpgate {

inline constexpr const char* kSweepFormat = "ulpgate-sweep-1";
inline constexpr uint64_t kSweepBlock = uint64_t{1} << 16;

struct SweepDomain {
  enum class Kind { kPairs, kOverT, kOverGrad };
  const FloatFormat* format = &kBinary32;
  Kind kind = Kind::kPairs;
  std::vector<float> fixed;  // kOverT: the grads; kOverGrad: the t values

  uint64_t size() const;
  // The inputs of indices [begin, begin + count).
  void Inputs(uint64_t begin, uint64_t count, float* grad, float* t) const;
  void Input(uint64_t index, float* grad, float* t) const;
  // "all 2^32 (grad, t) pairs in bf16", "every f32 t at grad = 0x1p+0".
  std::string Description() const;
  std::string KindName() const;  // "pairs", "over_t", "over_grad"
};

// Throws InputError: a 16-bit format for pairs, f32 with at least one fixed
// value (each a finite binary32 value) for the others.
SweepDomain MakeSweepDomain(const FloatFormat& format, SweepDomain::Kind kind,
                            const std::vector<float>& fixed);

struct SweepOptions {
  SweepDomain domain;
  uint64_t begin = 0, end = 0;       // the indices swept; end <= domain.size()
  std::vector<std::string> variants;  // as RunOptions takes them
  std::vector<const TargetInfo*> targets;  // runnable compiled targets and plugins
  unsigned threads = 0;
  std::function<void(uint64_t, uint64_t)> progress;  // (inputs done, inputs in the range)
};

struct SweepCase {
  std::string variant, target, kind;  // kind: CaseKindName
  ErrorStatistics stats;              // indices are domain indices
  unsigned __int128 sum_ulp = 0;      // in units of 2^-32 ULP (see the header comment)
  Conformance conformance;            // first_mismatch_index: a domain index
  uint64_t digest = 0;
  double mean_ulp() const;
};

struct SweepResult {
  std::string op = "tanh_bwd";
  SweepDomain domain;
  uint64_t begin = 0, end = 0;
  std::vector<SweepCase> cases;
};

SweepResult RunSweep(const SweepOptions& options);

// The shard K (0-based) of N of [begin, end): cut at multiples of kSweepBlock.
// Throws InputError for K >= N or N == 0.
std::pair<uint64_t, uint64_t> SweepShard(uint64_t begin, uint64_t end, uint64_t k, uint64_t n);

// The report ("ulpgate-sweep-1"): everything a merge needs and nothing that
// depends on how it ran (threads, time, shard).
nlohmann::ordered_json SweepJson(const SweepResult& result);
// Reads a report back; throws InputError "PATH: POINTER: what" for a malformed one.
SweepResult SweepFromJson(const std::string& path, const nlohmann::ordered_json& json);

// Joins reports of adjacent ranges of the same sweep (any order) into the
// report of their union. Throws InputError when they are of different sweeps,
// overlap or leave a gap.
SweepResult MergeSweeps(const std::vector<std::pair<std::string, SweepResult>>& parts);

// The input at a domain index, as the reports show it.
nlohmann::ordered_json SweepInputJson(const SweepDomain& domain, uint64_t index);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_H_
