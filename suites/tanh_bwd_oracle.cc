#include "suites/tanh_bwd_oracle.h"

#include <stdexcept>
#include <string>

namespace ulpgate {

MpfrNumber TanhBwdExact(float grad, float t) {
  ExactArith exact(kTanhBwdExactPrecision);
  return tanh_bwd_spec::Canonical(exact, exact.FromFloat(grad), exact.FromFloat(t));
}

MpfrNumber TanhBwdVariantExact(std::string_view variant, float grad, float t) {
  ExactArith exact(kTanhBwdExactPrecision);
  return TanhBwdSequence(variant, exact, exact.FromFloat(grad), exact.FromFloat(t));
}

int TanhBwdVariantIndex(std::string_view variant) {
  for (size_t i = 0; i < kTanhBwdVariants.size(); ++i) {
    if (kTanhBwdVariants[i].name == variant) return static_cast<int>(i);
  }
  return -1;
}

int TanhBwdModelIndex(std::string_view model) {
  for (size_t i = 0; i < kTanhBwdModels.size(); ++i) {
    if (kTanhBwdModels[i].name == model) return static_cast<int>(i);
  }
  return -1;
}

float TanhBwdModel(std::string_view model, float grad, float t) {
  const int index = TanhBwdModelIndex(model);
  if (index < 0) {
    throw std::invalid_argument("unknown tanh_bwd model '" + std::string(model) + "'");
  }
  Binary32Arith arith(kTanhBwdModels[index].fused);
  return TanhBwdSequence(kTanhBwdModels[index].sequence_of, arith, grad, t);
}

std::array<float, 4> TanhBwdModels(float grad, float t) {
  std::array<float, 4> out;
  for (size_t m = 0; m < kTanhBwdModels.size(); ++m) {
    Binary32Arith arith(kTanhBwdModels[m].fused);
    out[m] = TanhBwdSequence(kTanhBwdModels[m].sequence_of, arith, grad, t);
  }
  return out;
}

}  // namespace ulpgate
