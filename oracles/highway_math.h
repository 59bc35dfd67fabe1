// Highway 1.0.3's contrib math (hwy/contrib/math/math-inl.h) on one float: Exp,
// Expm1 and Tanh as the vector code computes them on x86, operation by
// operation, with MulAdd one rounding when `fused_muladd` (AVX2, AVX3,
// AVX3_DL) and two elsewhere (SSSE3, SSE4, SCALAR). What a target's kernel
// that calls these functions gives, bit for bit: the ground of the models of
// every op sequence that calls them.
//
// The exponential of the op sequences (kernels/vector_arith-inl.h, and the
// models' arithmetics) is ExpOfSequences: Highway's Exp, with x above its valid
// range (104) giving +inf, as the true exponential does from 88.72 on (Highway's
// own result there is garbage: its 2^q reconstruction wraps). Its erf, which
// Highway lacks, is ours (ErfOfSequences), built on that Exp.
#ifndef ULPGATE_ORACLES_HIGHWAY_MATH_H_
#define ULPGATE_ORACLES_HIGHWAY_MATH_H_

#include <cmath>
#include <limits>

namespace ulpgate {

float HighwayExp(float x, bool fused_muladd);
float HighwayExpm1(float x, bool fused_muladd);
float HighwayTanh(float x, bool fused_muladd);
// Highway 1.0.3's Log (impl::Log with subnormals allowed, as hn::Log calls
// it): musl's reduction to [sqrt(2)/2, sqrt(2)) by the bits, then
// 2 atanh((y-1)/(y+1)) as a degree-8 odd polynomial; MulSub fused as MulAdd is.
// For the finite positive x of the op sequences (log_softmax's sum, >= 1).
float HighwayLog(float x, bool fused_muladd);

// Above this, ExpOfSequences is +inf.
inline constexpr float kHighwayExpUpperBound = 104.0f;
inline float ExpOfSequences(float x, bool fused_muladd) {
  return x > kHighwayExpUpperBound ? std::numeric_limits<float>::infinity()
                                   : HighwayExp(x, fused_muladd);
}

// The erf of the op sequences (oracles/erf_polynomial.h): a polynomial for
// |x| < 1, 1 - Exp of a polynomial above, its multiply-adds fused or not.
float ErfOfSequences(float x, bool fused_muladd);

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_HIGHWAY_MATH_H_
