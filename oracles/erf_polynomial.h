// The erf of the op sequences, in binary32: one algorithm, written twice
// operation by operation, as Highway vector code in the kernels
// (kernels/vector_arith-inl.h, VectorArith::Erf) and in scalar code for the
// models (ErfOfSequences, oracles/highway_math.h), every multiply-add fused or
// two roundings as the target's MulAdd is. Highway 1.0.3 has no erf.
//
// With a = |x|:
//  - a < 1: erf(x) = x + x P(x^2), P(s) ~ erf(sqrt s)/sqrt s - 1 of degree 6
//    (Horner, then one multiply-add: the term added to x is about a tenth of
//    it, so P's rounding errors reach the result divided by 10);
//  - 1 <= a: erf(x) = sign(x) (1 - Exp(Q(min(a, 4)))), Q ~ log(erfc(a)) of
//    degree 8 in a - 1 on [1, 2) and of degree 9 in a - 3 on [2, 4] (both
//    shifts exact), Exp Highway's (oracles/highway_math.h). erfc(4) is below a
//    quarter of binary32's ulp of 1, so the clamp gives 1 from a = 3.92 on, as
//    the correctly rounded erf does; a NaN gives a NaN.
// The coefficients are least-squares fits at Chebyshev nodes (within 2^-29.6
// of erf(sqrt s)/sqrt s - 1 and 2^-35.5 of log erfc before their rounding to
// binary32; tools/python/erf_coefficients.py derives them again).
// Error, measured on every binary32 value of [0, 4.5] (1,083,179,008 of
// them; erf is odd and exactly +-1 beyond) against the C library's double
// erf: at most 1.415 ULP with two roundings per multiply-add (at x =
// 0x1.fd2784p-1), 1.109 ULP fused (0x1.f8613p-1); not correctly rounded on
// 5.87% and 1.40% of them. sequence_erf_test holds a sample to these bounds
// against MPFR.
#ifndef ULPGATE_ORACLES_ERF_POLYNOMIAL_H_
#define ULPGATE_ORACLES_ERF_POLYNOMIAL_H_

namespace ulpgate {

inline constexpr float kErfSmall[] = {0x1.06eba8p-3f,  -0x1.81273ep-2f, 0x1.ce2d18p-4f,
                                      -0x1.b7fb38p-6f, 0x1.541636p-8f,  -0x1.a46b40p-11f,
                                      0x1.4a9dacp-14f};
inline constexpr float kErfNear[] = {-0x1.d97fc0p+0f, -0x1.51c9b0p+1f,  -0x1.afabbep-1f,
                                     -0x1.547a08p-5f, 0x1.48f6b8p-7f,   -0x1.056638p-9f,
                                     0x1.18c546p-12f, -0x1.1b12aep-17f, -0x1.a8e300p-19f};
inline constexpr float kErfFar[] = {-0x1.570d36p+3f,  -0x1.9370b4p+2f, -0x1.ea2f94p-1f,
                                    -0x1.e5beeap-8f,  0x1.62c3a4p-10f, -0x1.01a01ap-12f,
                                    0x1.6936a8p-15f,  -0x1.ddb74ep-18f, 0x1.2601b2p-20f,
                                    -0x1.1e96ccp-23f};
// Where the three pieces meet, and the clamp.
inline constexpr float kErfSmallEnd = 1.0f;
inline constexpr float kErfNearEnd = 2.0f;
inline constexpr float kErfClamp = 4.0f;
// The largest errors in ULPs measured (above), two roundings and fused.
inline constexpr double kErfMaxUlp = 1.4146;
inline constexpr double kErfMaxUlpFused = 1.1082;

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_ERF_POLYNOMIAL_H_
