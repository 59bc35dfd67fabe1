// The ops ulpgate measures, in one table: each op's name, family, the formats
// it runs in and its suites (drift: scenarios). Whatever asks what kind of op
// a name is asks here; the variants of each family live in their own tables
// (kernels/ops/<op>/<op>_spec.h, kernels/reductions/registered_reductions.h, the drift run specs).
#ifndef ULPGATE_SUITES_OP_TABLE_H_
#define ULPGATE_SUITES_OP_TABLE_H_

#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {

inline constexpr const char* kDriftOp = "drift";

// Bit values, so that a set of families is a mask.
enum class OpFamily : unsigned {
  kElementwise = 1,  // one output per input tuple (kernels/ops/registered_ops.h)
  kReduction = 2,    // the linear and MSE ops: dot products and sums over a shape
  kDrift = 4,        // a training run (scenario) composed of the kernels
  kCast = 8,         // a cast to a narrow format (kernels/cast.h): cast_f32, cast_bf16, cast_f16
  // Block quantization (kernels/block_quant.h): mx_quantize (dtype an MX
  // spec, variants the scale rules), nvfp4_quantize.
  kBlockQuant = 16,
};

struct OpInfo {
  std::string name;
  OpFamily family;
  // The formats it runs in, f32 first (drift: precisions; a cast: its
  // destinations, the source being in its name; a block quantizer: its
  // block specs).
  std::vector<std::string> dtypes;
  std::vector<std::string> suites;  // its suites; for drift the built-in scenarios
  // Variants run by another library beside the kernels, in f32 only
  // (linear_fwd: "eigen", Eigen's own product).
  std::vector<std::string> peers;
  // "suite", or "scenario" for drift: what messages call an entry of suites.
  std::string suite_word() const { return family == OpFamily::kDrift ? "scenario" : "suite"; }
};

// The elementwise ops (registered_ops.h's order), the reduction ops
// (registered_reductions.h's order), drift, the casts (kernels/cast.h's sources),
// the block quantizers.
const std::vector<OpInfo>& OpTable();
// nullptr for an unknown name.
const OpInfo* FindOp(std::string_view name);
// Throws InputError "unknown op 'x' (every op's name)".
const OpInfo& GetOp(std::string_view name);
// The family of a known op (GetOp's error otherwise).
inline OpFamily FamilyOf(std::string_view name) { return GetOp(name).family; }
// The op's peer variants in `dtype`: empty but in f32, or for an unknown op.
std::vector<std::string> PeerVariants(std::string_view op, std::string_view dtype);
inline bool IsPeerVariant(std::string_view op, std::string_view dtype, std::string_view variant) {
  for (const std::string& p : PeerVariants(op, dtype)) {
    if (p == variant) return true;
  }
  return false;
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_OP_TABLE_H_
