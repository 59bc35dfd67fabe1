// The kernel registry: (op, variant, target) -> function pointer.
//
// Plain C++, no Highway types: callers pick a target by name and call the
// kernel compiled for it, whether or not it is the best target this CPU has.
#ifndef ULPGATE_KERNELS_REGISTRY_H_
#define ULPGATE_KERNELS_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/reductions/reduction_spec.h"

namespace ulpgate {

// An elementwise op's kernel (kernels/elementwise-inl.h): out[i] = op(in[0][i],
// in[1][i], ...) over the op's operands in its spec's order, in storage lanes
// of the format: float for f32, the bit patterns (uint16_t) of bf16 and f16.
using ElementwiseKernel = void (*)(const void* const* in, void* out, size_t n);

// A reduction's kernel (kernels/reductions/reduction_spec.h): one signature
// for every registered reduction, ReductionKernel(operands, out, extents), in
// the storage of its format.

// One Highway target this binary was compiled for.
struct TargetInfo {
  int64_t bits = 0;           // the HWY_* target bit
  std::string name;           // as hwy::TargetName names it: SCALAR, SSE4, AVX2 ...
  bool supported = false;     // runnable here: this CPU has it and no restriction removed it
  bool cpu_supported = false; // this CPU has it, whatever the restriction
  bool fused_negmuladd = false;  // Highway's NegMulAdd is one FMA instruction
  bool fused_muladd = false;     // Highway's MulAdd is one FMA instruction
  bool f16c_conversions = false; // Highway's f16 PromoteTo/DemoteTo are hardware conversions (F16C; ARM's vcvt)
  size_t f32_lanes = 0;       // float lanes of a full vector
};

// Every compiled target, from the narrowest (SCALAR) to the widest.
const std::vector<TargetInfo>& CompiledTargets();

// Running as if this CPU had fewer targets, so that a machine with AVX-512
// runs every test, the goldens and the gate as an AVX2 or SSE4 machine would.
// A restriction, names as TargetInfo::name, case-insensitive, is one of
//   max:T      every compiled target up to T in CompiledTargets()' order
//              (max:AVX2: SCALAR, SSSE3, SSE4, AVX2)
//   T1,T2,...  the targets named
//   all        no restriction (to lift the environment's from the command line)
// It only removes targets: a named target this CPU lacks stays not runnable
// (recorded in `lacking`, so one setting serves machines of every size), and
// SCALAR stays runnable, as it is on every CPU. An unknown or empty name is an
// error. The restriction reaches Highway too (hwy::DisableTargets), so that
// hwy::SupportedTargets() and dynamic dispatch agree with TargetInfo::supported.
struct CpuTargetsRestriction {
  std::string spec;    // as given
  std::string source;  // where it came from: kCpuTargetsVariable or "--cpu-targets"
  std::vector<std::string> lacking;  // named (or below max:T) but not on this CPU
};

// Read when the registry is first used, unless InitRegistry gave a restriction;
// unset or empty means no restriction.
inline constexpr char kCpuTargetsVariable[] = "ULPGATE_CPU_TARGETS";

// Initialises the registry now, restricted by `spec` (`source` names it in
// messages) or, without one, by kCpuTargetsVariable. Throws
// std::invalid_argument, with a one-line message naming the source, when the
// restriction is malformed, and std::logic_error when the registry is already
// initialised (it must come before any other call of this header). Without it,
// the first call of any function here reads kCpuTargetsVariable and aborts with
// that message when the variable is malformed.
void InitRegistry(const std::optional<std::string>& spec, std::string_view source);

// nullptr when every target this CPU has is runnable.
const CpuTargetsRestriction* CpuRestriction();

// Why a compiled target is not runnable, to follow its name in a message:
// "not on this CPU" or "left out by ULPGATE_CPU_TARGETS 'max:AVX2'"; empty
// when it is runnable.
std::string NotRunnableReason(const TargetInfo& target);

// nullptr when no compiled target has that name (case-insensitive).
const TargetInfo* FindTarget(std::string_view name);

// The best runnable target.
const TargetInfo& BestTarget();

// The kernel of an elementwise op (kernels/ops/registered_ops.h) in a format
// ("f32", or a format of kNarrowFormats) by its variant's name (the spec's
// kVariants for f32, kNarrowVariants for the 16-bit formats); nullptr for an
// unknown op, format or variant, or a target not compiled.
ElementwiseKernel FindElementwiseKernel(std::string_view op, std::string_view format,
                                        std::string_view variant, int64_t target);

// The test seam of the mutant build (kernels/testing/): from now on
// FindElementwiseKernel(op, format, variant, target) returns `kernel`.
// Production code never calls it.
void ReplaceElementwiseKernelForTesting(std::string_view op, std::string_view format,
                                        std::string_view variant, int64_t target,
                                        ElementwiseKernel kernel);

// The kernel of a registered reduction (kernels/reductions/
// registered_reductions.h) in a format ("f32", or a format of kNarrowFormats:
// binary32 accumulation) by its variant's name (a row of its spec's
// kVariants); nullptr for an unknown op, format or variant, or a target not
// compiled.
ReductionKernel FindReductionKernel(std::string_view op, std::string_view format,
                                    std::string_view variant, int64_t target);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REGISTRY_H_
