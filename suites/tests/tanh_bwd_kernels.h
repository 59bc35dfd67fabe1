// Test support: tanh_bwd through the op-generic registry, engine and oracle,
// under the names these tests were written with.
#ifndef ULPGATE_SUITES_TESTS_TANH_BWD_KERNELS_H_
#define ULPGATE_SUITES_TESTS_TANH_BWD_KERNELS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/registry.h"
#include "oracles/format.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {

inline const ElementwiseOpInfo& TanhBwdOp() { return *FindElementwiseOp("tanh_bwd"); }

inline std::vector<CaseResult> RunTanhBwd(const InputSet& inputs, const RunOptions& options) {
  return RunElementwise(TanhBwdOp(), inputs, options);
}
inline std::vector<std::string> TanhBwdModelNames(const FloatFormat& format) {
  return ModelNames(TanhBwdOp(), format);
}
inline std::vector<std::string> TanhBwdVariantNames(const FloatFormat& format) {
  return VariantNames(TanhBwdOp(), format);
}
inline std::vector<float> TanhBwdModelOutputs(const FloatFormat& format, float grad, float t) {
  const float x[2] = {grad, t};
  return ModelOutputs(TanhBwdOp(), format, x);
}

// A kernel as a function of typed arrays; empty for an unknown variant or a
// target not compiled.
using TanhBwdKernel = std::function<void(const float*, const float*, float*, size_t)>;
using TanhBwdNarrowKernel =
    std::function<void(const uint16_t*, const uint16_t*, uint16_t*, size_t)>;

inline TanhBwdKernel FindTanhBwdKernel(std::string_view variant, int64_t target) {
  const ElementwiseKernel k = FindElementwiseKernel("tanh_bwd", "f32", variant, target);
  if (k == nullptr) return nullptr;
  return [k](const float* grad, const float* t, float* out, size_t n) {
    const void* in[2] = {grad, t};
    k(in, out, n);
  };
}
inline TanhBwdNarrowKernel FindTanhBwdNarrowKernel(std::string_view format,
                                                   std::string_view variant, int64_t target) {
  const ElementwiseKernel k = FindElementwiseKernel("tanh_bwd", format, variant, target);
  if (k == nullptr) return nullptr;
  return [k](const uint16_t* grad, const uint16_t* t, uint16_t* out, size_t n) {
    const void* in[2] = {grad, t};
    k(in, out, n);
  };
}

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_TESTS_TANH_BWD_KERNELS_H_
