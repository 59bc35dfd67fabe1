#include "kernels/ops/sigmoid_bwd/sigmoid_bwd_factor.h"

#include <cmath>

namespace ulpgate {

std::optional<FactorEstimate> SigmoidBwdFactor(float s_in) {
  FactorEstimate f;
  if (std::isnan(s_in)) return f;  // kNaN
  if (std::isinf(s_in)) return std::nullopt;
  const double s = s_in;
  if (s == 0 || s == 1) {
    // The oracle's exact product of the factors s and 1 - s: (+-0) * 1 keeps
    // s's sign, 1 * (+0) is +0.
    f.kind = FactorEstimate::kZero;
    f.sign = std::signbit(s) ? -1 : 1;
    return f;
  }
  // s^2 has at most 48 bits and lies in [2^-298, 2^256]: one double, exact.
  // s - s^2 is then exactly the pair TwoSum gives, whatever their exponents.
  const DoubleWord d = TwoSum(s, -(s * s));
  f.kind = FactorEstimate::kFinite;
  f.f0 = d.hi;
  f.f1 = d.lo;
  f.exact = true;  // the definition is exact (a ring expression), and so is this
  f.term = std::fabs(s) + s * s;  // SigmoidBwdTermFactor's, carried along
  return f;
}

std::optional<double> SigmoidBwdTermFactor(float s_in) {
  if (!std::isfinite(s_in) || s_in == 0) return std::nullopt;
  const double s = std::fabs(static_cast<double>(s_in));
  return s + s * s;
}

}  // namespace ulpgate
