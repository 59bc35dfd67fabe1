// gelu_bwd's factor over its main range in Highway vectors, compiled per
// target by gelu_bwd_factor_vectors.cc: gelu_bwd_factor.cc's MainSteps and
// MainFactor, the same operations in the same order on every lane (the
// Mills ratio's coefficients per lane: gathered, or on AVX2 loaded by rows and
// transposed), so the same bits and the
// same bounds. Targets without fused multiply-adds leave it to the scalar
// code, as does any other architecture than x86 (whose vectors hold at most 8
// doubles, which the block's packs assume).

#if defined(ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#undef ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#else
#define ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "suites/engine/ops/gelu_bwd/gelu_bwd_tables.h"
#include "oracles/double_word-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace gelu_bwd_factor {

#if HWY_NATIVE_FMA && HWY_ARCH_X86

namespace hn = hwy::HWY_NAMESPACE;
using namespace double_word;  // NOLINT: the packs and their operations
using DF = hn::Rebind<float, DD>;

// Vectors side by side (double_word-inl.h), so that the chains of dependent
// roundings of several vectors overlap: 64 values are 2 passes of 4 AVX-512
// vectors (32 registers hold them; 2 vectors a pass gave 64 M factors/s, 4
// give 81, oracle_benchmark on an AVX-512 Xeon), 8 passes of 2 AVX2 ones (16
// registers).
constexpr size_t kPack = HWY_TARGET <= HWY_AVX3 ? 4 : 2;
using V = P<kPack>;
using VW = DW<kPack>;

// R(t) for 0 <= t < 32 (MillsRatioSteps), and its bound.
HWY_INLINE VW MillsRatio(const GeluBwdTables& tab, const V& t, V& error) {
  const DI di;
  // The center: i = trunc(32 t + 1/2) below 2; from 2 on, 65 + 32 (e - 1)
  // plus t's top five fraction bits, e = t's exponent: t's bits shifted
  // right by 47 are (e + 1023) 32 plus those five bits. Its coefficients at
  // 25 i plus their offsets.
  static_assert(kMillsCenterDoubles == 25, "the index times 25 below");
  const V uniform_at = Add(Mul(t, Splat<kPack>(32.0)), Splat<kPack>(0.5));
  const PM<kPack> below_two = Less(t, Splat<kPack>(2.0));
  PI<kPack> at;
  for (size_t u = 0; u < kPack; ++u) {
    const VI uniform = hn::ConvertTo(di, uniform_at.v[u]);
    const VI binades = hn::Add(hn::ShiftRight<47>(hn::BitCast(di, t.v[u])),
                               hn::Set(di, int64_t{kMillsUniform} - 32768));
    const VI index = hn::IfThenElse(hn::RebindMask(di, below_two.v[u]), uniform, binades);
    at.v[u] = hn::Add(hn::Add(hn::ShiftLeft<4>(index), hn::ShiftLeft<3>(index)), index);
  }
  const double* base = &tab.centers[0].r[0].hi;
  constexpr size_t kRd = offsetof(MillsRatioCenter, rd) / sizeof(double);
  constexpr size_t kC = offsetof(MillsRatioCenter, c) / sizeof(double);
  constexpr size_t kError = offsetof(MillsRatioCenter, error) / sizeof(double);
#if HWY_TARGET == HWY_AVX2
  // Four lanes: each lane's row loaded four coefficients at a time and
  // transposed, 4 x 4, into a vector per coefficient. Zen 3 and older cores
  // gather at a fraction of this rate, and the coefficients are 30 of the
  // factor's loads. The last block starts at 26 so as to stay in the row.
  constexpr size_t kLanes = 4;
  static_assert(kMillsCenterDoubles >= kLanes, "a block of 4 within the row");
  HWY_ALIGN double columns[kMillsCenterDoubles][kPack * kLanes];
  const DD d;
  for (size_t u = 0; u < kPack; ++u) {
    HWY_ALIGN int64_t row[kLanes];
    hn::Store(at.v[u], di, row);
    for (size_t block = 0; block < kMillsCenterDoubles; block += kLanes) {
      const size_t k = std::min(block, kMillsCenterDoubles - kLanes);
      const VD r0 = hn::LoadU(d, base + row[0] + k);
      const VD r1 = hn::LoadU(d, base + row[1] + k);
      const VD r2 = hn::LoadU(d, base + row[2] + k);
      const VD r3 = hn::LoadU(d, base + row[3] + k);
      // Within each 128-bit half, then the halves.
      const VD t0 = hn::InterleaveLower(d, r0, r1);  // r0[0] r1[0] | r0[2] r1[2]
      const VD t1 = hn::InterleaveUpper(d, r0, r1);  // r0[1] r1[1] | r0[3] r1[3]
      const VD t2 = hn::InterleaveLower(d, r2, r3);
      const VD t3 = hn::InterleaveUpper(d, r2, r3);
      hn::Store(hn::ConcatLowerLower(d, t2, t0), d, columns[k] + u * kLanes);
      hn::Store(hn::ConcatLowerLower(d, t3, t1), d, columns[k + 1] + u * kLanes);
      hn::Store(hn::ConcatUpperUpper(d, t2, t0), d, columns[k + 2] + u * kLanes);
      hn::Store(hn::ConcatUpperUpper(d, t3, t1), d, columns[k + 3] + u * kLanes);
    }
  }
  const auto coefficient = [&](size_t offset) {
    V r;
    for (size_t u = 0; u < kPack; ++u) r.v[u] = hn::Load(d, columns[offset] + u * kLanes);
    return r;
  };
#else
  const auto coefficient = [&](size_t offset) { return Gather(base + offset, at); };
#endif
  const V h = Sub(t, coefficient(kC));  // exact
  V q = coefficient(kRd + kMillsDoubles - 1);
  for (int k = kMillsDoubles - 2; k >= 0; --k) q = MulAdd(q, h, coefficient(kRd + static_cast<size_t>(k)));
  V s = q;
  V c = Splat<kPack>(0.0);
  for (int j = kMillsWords - 1; j >= 0; --j) {
    const V r_hi = coefficient(2 * static_cast<size_t>(j));
    const V r_lo = coefficient(2 * static_cast<size_t>(j) + 1);
    const VW product = TwoProd(s, h);
    const VW sum = TwoSum(product.hi, r_hi);
    s = sum.hi;
    c = MulAdd(c, h, Add(Add(product.lo, sum.lo), r_lo));
  }
  error = coefficient(kError);
  return FastTwoSum(s, c);
}

void MainFactors(const float* x_in, size_t n, const FactorEstimateColumns& out) {
  const DD d;
  const DF df;
  const size_t lanes = hn::Lanes(d);
  const size_t step = kPack * lanes;
  const GeluBwdTables& tab = GeluBwdTablesOnce();
  // Whole packs: the lanes past n any value in range (MainSteps's 1).
  // (At most 8 doubles a vector on x86, so a pack divides the block.)
  static_assert(kMainFactorBlock % (kPack * 8) == 0, "whole packs in a block");
  alignas(64) float padded[kMainFactorBlock];
  for (size_t i = 0; i < kMainFactorBlock; ++i) padded[i] = i < n ? x_in[i] : 1.0f;
  const V zero = Splat<kPack>(0.0);
  const V one = Splat<kPack>(1.0);
  const V eps2 = Splat<kPack>(kMainPhiError + 2 * kMainEps);
  const V slack = Splat<kPack>(kMainSlack);
  const V oracle = Splat<kPack>(0x1p-299);
  for (size_t i = 0; i < n; i += step) {
    V x;
    for (size_t u = 0; u < kPack; ++u) x.v[u] = hn::PromoteTo(d, hn::LoadU(df, padded + i + u * lanes));
    const V t = Abs(x);
    const V arg = Mul(Splat<kPack>(-0.5), Mul(x, x));  // exact
    const VW e = Exp<kPack, /*kDoubleArgument=*/true>(VW{arg, zero});
    const VW p = Mul(e, Constant<kPack>(tab.inv_sqrt_2pi));  // phi(t)
    V r_error;
    const VW r = MillsRatio(tab, t, r_error);
    const PM<kPack> positive = Greater(x, zero);
    // MainFactor's two branches, each as written there: t - R for x > 0, R -
    // t for x < 0, the operands chosen before the one Add and Mul.
    const VW minus_r = Neg(r);
    const VW first{IfThenElse(positive, t, r.hi), IfThenElse(positive, zero, r.lo)};
    const VW second{IfThenElse(positive, minus_r.hi, Neg(t)), IfThenElse(positive, minus_r.lo, zero)};
    const VW dw = Mul(p, Add(first, second));
    const V own = Mul(Add(Mul(Abs(dw.hi), eps2), Mul(p.hi, r_error)), slack);
    const V terms_pos = Add(one, Mul(p.hi, t));
    const V error_pos = Add(own, Mul(Mul(oracle, terms_pos), slack));
    const V error_neg = Add(own, Mul(Mul(Mul(oracle, p.hi), Add(r.hi, t)), slack));
    const V error = IfThenElse(positive, error_pos, error_neg);
    V f0, f1, f2;
    Renormalize(IfThenElse(positive, one, zero), dw.hi, dw.lo, f0, f1, f2);
    // The term factor (gelu_bwd_factor.cc, WithTerm): F for x > 0, 1 - F
    // for x < 0, where F's error is at most 2^-60.
    const VW one_minus = TwoSum(one, Neg(f0));
    const V complement = Add(one_minus.hi, Sub(one_minus.lo, Add(f1, f2)));
    const V term = IfThenElse(AtMost(error, Splat<kPack>(0x1p-60)), IfThenElse(positive, f0, complement),
                              Splat<kPack>(std::nan("")));
    // Not tiny: x > 0, or |d| >= 2^-600 (FiniteOrTinyFactor's finite case).
    const PM<kPack> plain = Or(positive, AtLeast(Abs(dw.hi), Splat<kPack>(0x1p-600)));
    for (size_t u = 0; u < kPack; ++u) {
      const size_t at = i + u * lanes;
      if (at >= n) break;
      // Whole vectors into out where they fit, the last part through a copy.
      const bool whole = at + lanes <= n;
      alignas(64) double part[5][8];
      static_assert(sizeof(part[0]) >= hn::MaxLanes(DD()) * sizeof(double), "a vector a row");
      double* to[5] = {out.f0 + at, out.f1 + at, out.f2 + at, out.error + at, out.term + at};
      const V* from[5] = {&f0, &f1, &f2, &error, &term};
      for (size_t c = 0; c < 5; ++c) {
        if (whole) {
          hn::StoreU(from[c]->v[u], d, to[c]);
        } else {
          hn::Store(from[c]->v[u], d, part[c]);
          std::copy(part[c], part[c] + (n - at), to[c]);
        }
      }
      const size_t count = whole ? lanes : n - at;
      if (whole && hn::AllTrue(d, plain.v[u])) {
        std::fill(out.plain + at, out.plain + at + count, uint8_t{1});
      } else {
        alignas(64) double flags[8];
        hn::Store(hn::IfThenElseZero(plain.v[u], hn::Set(d, 1.0)), d, flags);
        for (size_t l = 0; l < count; ++l) out.plain[at + l] = flags[l] != 0 ? 1 : 0;
      }
    }
  }
}

bool MainFactorsOrNot(const float* x, size_t n, const FactorEstimateColumns& out) {
  MainFactors(x, n, out);
  return true;
}

#else

bool MainFactorsOrNot(const float*, size_t, const FactorEstimateColumns&) { return false; }

#endif  // HWY_NATIVE_FMA && HWY_ARCH_X86

}  // namespace gelu_bwd_factor

bool GeluBwdMainFactors(const float* x, size_t n, const FactorEstimateColumns& out) {
  return gelu_bwd_factor::MainFactorsOrNot(x, n, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_SUITES_ENGINE_OPS_GELU_BWD_GELU_BWD_FACTOR_INL_H_
