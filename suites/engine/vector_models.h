// The models of the elementwise ops in binary32 (ElementwiseOracle::Model,
// native) a vector at a time, for the engine's vectorized tier: each op's
// sequence templates over Highway vectors with MulAdd fused or not as the
// model says and the functions of oracles/highway_math-inl.h, bit for bit the
// scalar models' outputs.
#ifndef ULPGATE_SUITES_ENGINE_VECTOR_MODELS_H_
#define ULPGATE_SUITES_ENGINE_VECTOR_MODELS_H_

#include <cstddef>

namespace ulpgate {

struct ElementwiseOpInfo;

// Model `model` (the op's models' order) of `op` at the binary32 operands
// operands[k][0 .. n) into out[0 .. n), NaNs canonical (0x7fc00000): what
// CanonicalNan(ModelOutput(op, kBinary32, model, x, true)) gives each. In the
// vectors of the best Highway target this CPU runs; false, nothing written,
// where that target has no fused multiply-add (the scalar models then). Reads
// and writes whole vectors: n rounded up to 16 entries.
bool VectorModelOutputs(const ElementwiseOpInfo& op, size_t model, const float* const* operands,
                        size_t n, float* out);

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_VECTOR_MODELS_H_
