#include "suites/engine/op_table.h"

#include "kernels/cast.h"
#include "suites/engine/block_quant_cases.h"
#include "kernels/narrow_formats.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/drift/scenario.h"
#include "suites/inputs/cast_suites.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/reduction_cases.h"
#include "suites/inputs/reduction_suites.h"
#include "kernels/elementwise_ops.h"
#include "suites/inputs/elementwise_suites.h"

namespace ulpgate {

const std::vector<OpInfo>& OpTable() {
  static const std::vector<OpInfo> table = [] {
    auto names = [](const std::vector<SuiteInfo>& suites) {
      std::vector<std::string> v;
      for (const SuiteInfo& s : suites) v.push_back(s.name);
      return v;
    };
    std::vector<OpInfo> ops;
    // Every op runs in binary32 and in every 16-bit format the kernels have.
    std::vector<std::string> formats = {kBinary32.name};
    for (const NarrowFormat& f : kNarrowFormats) formats.emplace_back(f.format->name);
    for (const ElementwiseOpInfo& op : ElementwiseOps()) {
      ops.push_back({std::string(op.name), OpFamily::kElementwise, formats,
                     names(ElementwiseSuites(op)), {}});
    }
    for (const ReductionOpInfo& op : ReductionOps()) {
      ops.push_back({std::string(op.name), OpFamily::kReduction, formats,
                     names(ReductionSuites()), {}});
      if (op.eigen_peer) ops.back().peers = {kEigenPeerVariant};
    }
    // Drift's "formats" are the precisions a training run takes (f32, bf16,
    // f16 and the mixed ones).
    ops.push_back({kDriftOp, OpFamily::kDrift, DriftPrecisionNames(), BuiltinScenarioNames(), {}});
    // A cast op per source; its "formats" are the destinations.
    std::vector<std::string> destinations;
    for (const FloatFormat* f : kCastDestinations) destinations.emplace_back(f->name);
    for (const FloatFormat* from : kCastSources) {
      ops.push_back({std::string("cast_") + from->name, OpFamily::kCast, destinations,
                     CastSuiteNames(), {}});
    }
    // The block quantizers; their "formats" are the block specs.
    for (const char* op : {kMxQuantizeOp, kNvfp4QuantizeOp}) {
      ops.push_back({op, OpFamily::kBlockQuant, BlockQuantSpecNames(op), {kBlockQuantSuite}, {}});
    }
    return ops;
  }();
  return table;
}

const OpInfo* FindOp(std::string_view name) {
  for (const OpInfo& op : OpTable()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

std::vector<std::string> PeerVariants(std::string_view op, std::string_view dtype) {
  const OpInfo* info = FindOp(op);
  if (info == nullptr || dtype != kBinary32.name) return {};
  return info->peers;
}

const OpInfo& GetOp(std::string_view name) {
  if (const OpInfo* op = FindOp(name)) return *op;
  std::string known;
  for (const OpInfo& op : OpTable()) known += (known.empty() ? "" : ", ") + op.name;
  throw InputError("unknown op '" + std::string(name) + "' (" + known + ")");
}

}  // namespace ulpgate
