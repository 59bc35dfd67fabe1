// gelu_bwd's factor over its main range in Highway vectors, compiled per
// target by gelu_bwd_factor_vectors.cc: gelu_bwd_factor.cc's MainSteps and
// MainFactor, the same operations in the same order on every lane (the
// Mills ratio's coefficients gathered per lane), so the same bits and the
// same bounds. Targets without fused multiply-adds leave it to the scalar
// code.

#if defined(ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#undef ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#else
#define ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/ops/gelu_bwd/gelu_bwd_tables.h"
#include "oracles/double_word-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace gelu_bwd_factor {

#if HWY_NATIVE_FMA

namespace hn = hwy::HWY_NAMESPACE;
using double_word::DD;
using double_word::DI;
using double_word::VD;
using double_word::VDW;
using double_word::VI;
using DF = hn::Rebind<float, DD>;

// R(t) for 0 <= t < 32 (MillsRatioSteps), and its bound.
HWY_INLINE VDW MillsRatio(const GeluBwdTables& tab, VD t, VD& error) {
  const DD d;
  const DI di;
  // The center: i = trunc(32 t + 1/2) below 2; from 2 on, 65 + 32 (e - 1)
  // plus t's top five fraction bits, e = t's exponent: t's bits shifted
  // right by 47 are (e + 1023) 32 plus those five bits.
  const VI uniform = hn::ConvertTo(di, hn::Add(hn::Mul(t, hn::Set(d, 32.0)), hn::Set(d, 0.5)));
  const VI binades = hn::Add(hn::ShiftRight<47>(hn::BitCast(di, t)),
                             hn::Set(di, int64_t{kMillsUniform} - 32768));
  const VI index = hn::IfThenElse(hn::RebindMask(di, t < hn::Set(d, 2.0)), uniform, binades);
  static_assert(kMillsCenterDoubles == 30, "the index times 30 below");
  const VI at = hn::Sub(hn::ShiftLeft<5>(index), hn::ShiftLeft<1>(index));
  const double* base = &tab.centers[0].r[0].hi;
  constexpr size_t kRd = offsetof(MillsRatioCenter, rd) / sizeof(double);
  constexpr size_t kC = offsetof(MillsRatioCenter, c) / sizeof(double);
  constexpr size_t kError = offsetof(MillsRatioCenter, error) / sizeof(double);
  const auto coefficient = [&](size_t offset) { return hn::GatherIndex(d, base + offset, at); };
  const VD h = hn::Sub(t, coefficient(kC));  // exact
  VD q = coefficient(kRd + kMillsDoubles - 1);
  for (int k = kMillsDoubles - 2; k >= 0; --k) q = hn::MulAdd(q, h, coefficient(kRd + static_cast<size_t>(k)));
  VD s = q;
  VD c = hn::Zero(d);
  for (int j = kMillsWords - 1; j >= 0; --j) {
    const VD r_hi = coefficient(2 * static_cast<size_t>(j));
    const VD r_lo = coefficient(2 * static_cast<size_t>(j) + 1);
    const VDW product = double_word::TwoProd(s, h);
    const VDW sum = double_word::TwoSum(product.hi, r_hi);
    s = sum.hi;
    c = hn::MulAdd(c, h, hn::Add(hn::Add(product.lo, sum.lo), r_lo));
  }
  error = coefficient(kError);
  return double_word::FastTwoSum(s, c);
}

void MainFactors(const float* x_in, size_t n, MainFactorColumns* out) {
  const DD d;
  const DF df;
  const size_t lanes = hn::Lanes(d);
  const GeluBwdTables& tab = GeluBwdTablesOnce();
  // Whole vectors: the lanes past n any value in range (MainSteps's 1).
  alignas(64) float padded[kMainFactorBlock];
  for (size_t i = 0; i < kMainFactorBlock; ++i) padded[i] = i < n ? x_in[i] : 1.0f;
  const VD zero = hn::Zero(d);
  const VD one = hn::Set(d, 1.0);
  const VD eps2 = hn::Set(d, kMainPhiError + 2 * kMainEps);
  const VD slack = hn::Set(d, kMainSlack);
  const VD oracle = hn::Set(d, 0x1p-299);
  for (size_t i = 0; i < n; i += lanes) {
    const VD x = hn::PromoteTo(d, hn::LoadU(df, padded + i));
    const VD t = hn::Abs(x);
    const VD arg = hn::Mul(hn::Set(d, -0.5), hn::Mul(x, x));  // exact
    const VDW e = double_word::Exp({arg, zero});
    const VDW p = double_word::Mul(e, double_word::Constant(tab.inv_sqrt_2pi));  // phi(t)
    VD r_error;
    const VDW r = MillsRatio(tab, t, r_error);
    const auto positive = x > zero;
    // MainFactor's two branches, each as written there.
    const VDW d_pos = double_word::Mul(p, double_word::Add({t, zero}, double_word::Neg(r)));
    const VDW d_neg = double_word::Mul(p, double_word::Add(r, {hn::Neg(t), zero}));
    const VDW dw{hn::IfThenElse(positive, d_pos.hi, d_neg.hi),
                 hn::IfThenElse(positive, d_pos.lo, d_neg.lo)};
    const VD own = hn::Mul(hn::Add(hn::Mul(hn::Abs(dw.hi), eps2), hn::Mul(p.hi, r_error)), slack);
    const VD terms_pos = hn::Add(one, hn::Mul(p.hi, t));
    const VD error_pos = hn::Add(own, hn::Mul(hn::Mul(oracle, terms_pos), slack));
    const VD error_neg = hn::Add(own, hn::Mul(hn::Mul(hn::Mul(oracle, p.hi), hn::Add(r.hi, t)), slack));
    const VD error = hn::IfThenElse(positive, error_pos, error_neg);
    VD f0, f1, f2;
    double_word::Renormalize(hn::IfThenElseZero(positive, one), dw.hi, dw.lo, f0, f1, f2);
    // The term factor (gelu_bwd_factor.cc, WithTerm): F for x > 0, 1 - F
    // for x < 0, where F's error is at most 2^-60.
    const VDW one_minus = double_word::TwoSum(one, hn::Neg(f0));
    const VD complement = hn::Add(one_minus.hi, hn::Sub(one_minus.lo, hn::Add(f1, f2)));
    const VD term = hn::IfThenElse(error <= hn::Set(d, 0x1p-60),
                                   hn::IfThenElse(positive, f0, complement), hn::Set(d, std::nan("")));
    hn::Store(f0, d, out->f0 + i);
    hn::Store(f1, d, out->f1 + i);
    hn::Store(f2, d, out->f2 + i);
    hn::Store(error, d, out->error + i);
    hn::Store(term, d, out->term + i);
    hn::Store(dw.hi, d, out->dhi + i);
    hn::Store(dw.lo, d, out->dlo + i);
  }
}

bool MainFactorsOrNot(const float* x, size_t n, MainFactorColumns* out) {
  MainFactors(x, n, out);
  return true;
}

#else

bool MainFactorsOrNot(const float*, size_t, MainFactorColumns*) { return false; }

#endif  // HWY_NATIVE_FMA

}  // namespace gelu_bwd_factor

bool GeluBwdMainFactors(const float* x, size_t n, MainFactorColumns* out) {
  return gelu_bwd_factor::MainFactorsOrNot(x, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
