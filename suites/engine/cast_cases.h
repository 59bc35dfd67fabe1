// The cast ops (cast_f32, cast_bf16, cast_f16: the source format; the dtype
// the destination): each variant's kernel (kernels/cast.h) on each target over
// the cast suites, measured against the exact cast model
// (oracles/cast_policy.h). A case says which policies of the catalogue its
// outputs follow bit for bit (conformance: every policy is a model), how
// many outputs leave the policy its variant claims per suite, the nearest
// policy with its first differing inputs where none is followed, and the ULP
// error of each output in the destination's ULPs. Outputs made elsewhere
// (`check`) are measured the same way, without a variant.
#ifndef ULPGATE_SUITES_ENGINE_CAST_CASES_H_
#define ULPGATE_SUITES_ENGINE_CAST_CASES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/registry.h"
#include "oracles/cast_policy.h"
#include "oracles/float_format.h"
#include "suites/engine/cast_conformance.h"
#include "suites/engine/kernel_fault.h"

namespace ulpgate {

// The op's name for a source ("cast_f32"), and back (nullptr when `op` is no
// cast op).
std::string CastOpName(const FloatFormat& from);
const FloatFormat* CastOpSource(const std::string& op);

// Inputs of a cast: source patterns, their values, and the suite of each run
// of them.
struct CastInputs {
  struct Part {
    std::string suite;  // "boundary", "random", "scaled", or a file's name
    size_t begin = 0, count = 0;
  };
  const FloatFormat* from = nullptr;
  std::vector<uint32_t> patterns;
  std::vector<double> values;
  std::vector<Part> parts;
  void Add(const std::string& suite, const std::vector<uint32_t>& source_patterns);
};

// Every policy of the catalogue's codes on the inputs, computed once and
// compared with every case's outputs.
struct CastModels {
  std::vector<CastPolicy> policies;
  std::vector<std::vector<uint8_t>> codes;  // [policy][input]
};
CastModels EvaluateCastModels(const FloatFormat& from, const FloatFormat& to,
                              const CastInputs& inputs, unsigned threads = 0);

struct CastSuiteCount {
  std::string suite;
  uint64_t n = 0;
  uint64_t mismatches = 0;  // against the claimed policy (0 without one)
};

struct CastCaseResult {
  std::string variant;  // "" for outputs made elsewhere
  std::string target;
  std::string claimed;  // the policy the variant claims ("" for none)
  uint64_t n = 0;
  std::vector<CastSuiteCount> per_suite;
  std::vector<CastPolicyFit> fits;  // every policy, followed first, then by mismatches
  std::vector<std::string> followed;  // the names of those with no mismatch
  std::optional<CastPolicyFit> claimed_fit;
  // ULP errors in the destination's ULPs, over inputs whose value the
  // destination's range holds (finite, |x| <= its largest; > 0 for E8M0).
  double max_ulp = 0;
  uint64_t max_ulp_index = 0;
  uint64_t in_range = 0;
  uint64_t correctly_rounded = 0;  // in range, the code nearest_even gives
  uint64_t special = 0;            // in range, but NaN or infinite
  std::vector<uint8_t> codes;
  // A plugin's or an IUT's kernel that crashed, hung, wrote outside its
  // output or was refused: nothing measured (n holds the inputs, the rest
  // is empty).
  std::optional<KernelFault> fault;
};

// One output set's measurement.
CastCaseResult MeasureCastOutputs(const FloatFormat& to, const CastInputs& inputs,
                                  const CastModels& models, std::vector<uint8_t> codes,
                                  const std::optional<CastPolicy>& claimed);

// The destination's ULP at an exact value x (finite): 2^(max(E, emin) - p + 1),
// E = floor(log2 |x|) capped at emax; at 0 the smallest positive value.
double CastUlp(const FloatFormat& to, double x);

// Each variant's kernel on each target (runnable targets only; `variants`
// empty: every variant that applies). A plugin's or an IUT's target
// (suites/engine/plugins.h) runs its kernels of the cast, each held to the
// policy it claims: those `variants` names, or all where it is empty or
// holds "none" (which names no built-in variant); a kernel that faults is a
// result with `fault` set.
std::vector<CastCaseResult> RunCastKernels(const FloatFormat& from, const FloatFormat& to,
                                           const CastInputs& inputs, const CastModels& models,
                                           const std::vector<std::string>& variants,
                                           const std::vector<const TargetInfo*>& targets);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_CAST_CASES_H_
