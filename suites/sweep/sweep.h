// `ulpgate sweep`: every input of a domain instead of a sample. A domain is
// enumerated by index, so a sweep is a pure function of (domain, range,
// variants, targets) and any range of it can run anywhere: `--shard K/N` runs
// the K-th of N equal parts, and MergeSweeps joins the parts' reports into
// exactly (byte for byte) the report of the whole.
//
// Domains of an elementwise op of two operands, written here (grad, t) for
// its first and second operands, whatever the op calls the second:
//   pairs      every (grad, t) pair of a 16-bit format: 2^32 inputs, index
//              grad_bits << 16 | t_bits (NaN payloads and infinities included)
//   over t     every binary32 t (2^32 bit patterns) at each given grad: index
//              g * 2^32 + t_bits for the g-th grad
//   over grad  every binary32 grad at each given t
//
// RunSweep computes each input's exact value once and shares it among the
// cases; each kernel is called once per tile of inputs; the errors, bins and
// models come from the vectorized exact tier (suites/sweep/sweep_tier.h), MPFR only
// where that tier cannot decide; cases whose outputs over a tile are the same
// bits share that tile's statistics. The reference path (SweepOptions::
// reference) measures every block through the engine (RunElementwise) with MPFR's
// truth and emulated models instead: slow, and what the tests hold the fast
// path equal to, report for report.
//
// Every statistic is kept so that it merges exactly in any order: counts and
// histograms are integers; maxima and first indices are order-free with ties
// to the lower index; the ULP sum is the exact integer sum of floor(e * 2^64);
// the outputs' digest is a sum of per-input hashes mod 2^64.
#ifndef ULPGATE_SUITES_SWEEP_H_
#define ULPGATE_SUITES_SWEEP_H_

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "suites/engine/kernel_fault.h"
#include "oracles/format.h"
#include "suites/engine/engine.h"
#include "suites/reports/json_file.h"

namespace ulpgate {

inline constexpr const char* kSweepFormat = "ulpgate-sweep-2";
inline constexpr uint64_t kSweepBlock = uint64_t{1} << 16;

// The exact sum of ULP errors over a range: the sum of floor(e * 2^64) over
// the outputs measured (special mismatches have no e), an unsigned integer
// of 512 bits (an error in these formats is below 2^300, and a sweep has at
// most 2^42 outputs per case).
class UlpSum {
 public:
  void Add(const UlpSum& other);
  // floor(ulp * 2^64), ulp finite and >= 0.
  void AddUlp(double ulp);
  // units * 2^(32 * shift) in units of 2^-64.
  void AddUnits(uint64_t units, int shift = 0);
  std::string ToDecimal() const;
  static std::optional<UlpSum> FromDecimal(std::string_view text);
  // RN(sum * 2^-64).
  double ToDouble() const;
  bool operator==(const UlpSum& other) const { return limbs_ == other.limbs_; }

 private:
  std::array<uint64_t, 8> limbs_{};  // little-endian
};

// The digest of a case's outputs: the sum mod 2^64 over its inputs of
// SweepDigestTerm(SweepDigestKey(index), output bits), the bits binary32's
// (NaN canonical), so that shards and tiles add up in any order.
uint64_t SweepDigestKey(uint64_t index);
// key * (bits ^ bits >> 16): the xor, a bijection, fills the low half that
// bf16 and f16 values leave zero, and an odd key keeps every single-input
// difference visible (odd * nonzero 32-bit difference is nonzero mod 2^64).
inline uint64_t SweepDigestTerm(uint64_t key, uint32_t bits) { return key * (bits ^ (bits >> 16)); }

struct SweepDomain {
  // kOverT sweeps the second operand at fixed values of the first (grad),
  // kOverGrad the first at fixed values of the second.
  enum class Kind { kPairs, kOverT, kOverGrad };
  const FloatFormat* format = &kBinary32;
  std::array<std::string, 2> operands = {"grad", "t"};  // the op's operand names
  Kind kind = Kind::kPairs;
  std::vector<float> fixed;  // kOverT: the grads; kOverGrad: the t values

  uint64_t size() const;
  // The inputs of indices [begin, begin + count).
  void Inputs(uint64_t begin, uint64_t count, float* grad, float* t) const;
  void Input(uint64_t index, float* grad, float* t) const;
  // "all 2^32 (grad, t) pairs in bf16", "every f32 t at grad = 0x1p+0".
  std::string Description() const;
  // "pairs", "over_" and the swept operand's name ("over_t", "over_grad").
  std::string KindName() const;
};

// Throws InputError: a 16-bit format for pairs, f32 with at least one fixed
// value (each a finite binary32 value) for the others.
SweepDomain MakeSweepDomain(const FloatFormat& format, SweepDomain::Kind kind,
                            const std::vector<float>& fixed,
                            const std::array<std::string, 2>& operands = {"grad", "t"});

struct SweepOptions {
  // The elementwise op swept (two operands: grad and the forward value). The
  // vectorized exact tier (sweep_tier.h) holds the models of the op whose spec
  // declares it (OwnTiers::vector_sweep) and those of every op whose definition
  // and models stage over the second operand; any other op is swept by the
  // reference path below, whatever `reference` says.
  const ElementwiseOpInfo* op = nullptr;
  SweepDomain domain;
  uint64_t begin = 0, end = 0;       // the indices swept; end <= domain.size()
  std::vector<std::string> variants;  // as RunOptions takes them
  std::vector<const TargetInfo*> targets;  // runnable compiled targets and plugins
  unsigned threads = 0;
  std::function<void(uint64_t, uint64_t)> progress;  // (inputs done, inputs in the range)
  // Measure every block through the engine, MPFR and the emulated models
  // (RunElementwise) instead of the fast path: the same report, slowly.
  bool reference = false;
  // Over the pairs of a 16-bit format, a staged op's tiles at grads of one
  // sign and significand measured once and scaled where that is exact
  // (sweep_run.cc, scale reuse): off only to test it.
  bool scale_reuse = true;
};

struct SweepCase {
  std::string variant, target, kind;  // kind: CaseKindName
  ErrorStatistics stats;              // indices are domain indices; its sum_ulp unused
  UlpSum sum_ulp;                     // see UlpSum
  Conformance conformance;            // first_mismatch_index: a domain index
  uint64_t digest = 0;                // SweepDigestKey
  // Set when the case's kernel faulted (crashed, hung, wrote outside its
  // output; domain indices, the lowest input): the case was not measured,
  // and its report is the fault alone.
  std::optional<KernelFault> fault;
  double mean_ulp() const;
};

struct SweepResult {
  std::string op = std::string(DefaultElementwiseOp().name);
  SweepDomain domain;
  uint64_t begin = 0, end = 0;
  std::vector<SweepCase> cases;
  // What MPFR computed (not part of the report, which is the same whichever
  // tier decided): the inputs whose exact value or factor came from MPFR,
  // the entries of the factor tables it filled (a 16-bit format's 65,536
  // values of the second operand, say), and the outputs whose error it
  // measured.
  uint64_t mpfr_exact_values = 0, mpfr_tables = 0, mpfr_errors = 0;
  // Tiles whose statistics were another grad's scaled (SweepOptions::scale_reuse).
  uint64_t scaled_tiles = 0;
};

SweepResult RunSweep(const SweepOptions& options);

// The digest RunSweep reports for a case, computed without measuring any
// error: of a kernel's outputs over [begin, end) of the domain, or of one of
// the op's models there (index into ModelNames of the domain's format).
// Seconds for 2^24 inputs: what golden files and the gate hold kernels to
// between sampled suites (suites/release/golden.h).
struct SweepDigestOptions {
  const ElementwiseOpInfo* op = nullptr;
  SweepDomain domain;
  uint64_t begin = 0, end = 0;
  unsigned threads = 0;
};
uint64_t SweepKernelDigest(const SweepDigestOptions& options, ElementwiseKernel kernel);
uint64_t SweepModelDigest(const SweepDigestOptions& options, size_t model);
// The first index of the range where the kernel's output differs from the
// model's (bit for bit, NaN canonical), with both outputs; nullopt if none.
struct SweepDifference {
  uint64_t index = 0;
  float kernel = 0, model = 0;
};
std::optional<SweepDifference> FirstSweepDifference(const SweepDigestOptions& options,
                                                    ElementwiseKernel kernel, size_t model);

// A domain as reports and golden files write it: its kind ("pairs",
// "over_<operand>") and fixed values (hex floats). Fails the field at fault
// (InputError "PATH: POINTER: what").
SweepDomain ParseSweepDomain(const JsonField& kind, const JsonField& fixed,
                             const FloatFormat& format, const std::array<std::string, 2>& operands);

// The command that shows a case at one input of a domain: explain (f32,
// rounding by rounding, where explain knows the op) or run on that input.
std::string SweepReplayCommand(const std::string& op, const SweepDomain& domain,
                               const std::string& variant, const std::string& target,
                               uint64_t index);

// The shard K (0-based) of N of [begin, end): cut at multiples of kSweepBlock.
// Throws InputError for K >= N or N == 0.
std::pair<uint64_t, uint64_t> SweepShard(uint64_t begin, uint64_t end, uint64_t k, uint64_t n);

// The report (kSweepFormat): everything a merge needs and nothing that
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

// Adds `other` (the statistics of another part of the same sweep's range, in
// any order) to `into`.
void MergeSweepCase(const FloatFormat& format, SweepCase& into, const SweepCase& other);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_SWEEP_H_
