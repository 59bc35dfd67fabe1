// oracles/highway_math.h's functions in Highway vectors of floats: Highway's
// Exp, Expm1 and Tanh as its x86 code computes them and the sequences' erf,
// with MulAdd fused or not as the template argument says, whatever the target
// running them does. The scalar functions, operation by operation, on every
// lane (both branches computed where they choose one, the chosen one kept),
// so the same bits: what the models of the op sequences need, a vector at a
// time. For targets with fused multiply-adds (HWY_NATIVE_FMA), where both
// kinds of MulAdd are an instruction or two; x86's conversion to int32
// (Highway's ConvertTo) is what ToInt32 there emulates.
//
// Not Highway's own functions: a kernel's Exp is hn::Exp, and a model built on
// it would follow any change of it; these follow the emulation the models are
// held to.

#if defined(ULPGATE_ORACLES_HIGHWAY_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_ORACLES_HIGHWAY_MATH_INL_H_
#undef ULPGATE_ORACLES_HIGHWAY_MATH_INL_H_
#else
#define ULPGATE_ORACLES_HIGHWAY_MATH_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>

#include "hwy/highway.h"
#include "oracles/erf_polynomial.h"
#include "oracles/highway_math.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace highway_math {

#if HWY_NATIVE_FMA && HWY_ARCH_X86

namespace hn = hwy::HWY_NAMESPACE;

template <class D, bool kFused>
struct ModelMath {
  using V = hn::Vec<D>;
  using DI = hn::RebindToSigned<D>;
  using VI = hn::Vec<DI>;
  D d;

  HWY_INLINE V MulAdd(V a, V b, V c) const {
    return kFused ? hn::MulAdd(a, b, c) : hn::Add(hn::Mul(a, b), c);
  }
  HWY_INLINE V Set(float c) const { return hn::Set(d, c); }

  // Pow2I: the bits (x + 127) << 23 as a float, wrapping.
  HWY_INLINE V Pow2I(VI x) const {
    const DI di;
    return hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(x, hn::Set(di, 0x7F))));
  }
  HWY_INLINE V LoadExpShortRange(V x, VI e) const {
    const VI y = hn::ShiftRight<1>(e);  // arithmetic
    const VI rest = hn::Sub(e, y);
    return hn::Mul(hn::Mul(x, Pow2I(y)), Pow2I(rest));
  }
  HWY_INLINE V Estrin(V x, float c0, float c1, float c2, float c3, float c4, float c5) const {
    const V x2 = hn::Mul(x, x);
    const V x4 = hn::Mul(x2, x2);
    return MulAdd(x4, MulAdd(Set(c5), x, Set(c4)),
                  MulAdd(x2, MulAdd(Set(c3), x, Set(c2)), MulAdd(Set(c1), x, Set(c0))));
  }
  // ReduceAndApproximate: q, and ExpPoly of the reduced argument.
  HWY_INLINE V Reduce(V x, VI& q) const {
    const DI di;
    const float kOneOverLog2 = static_cast<float>(+1.442695040888963407359924681);
    const V half = hn::CopySign(Set(0.5f), x);
    q = hn::ConvertTo(di, MulAdd(x, Set(kOneOverLog2), half));
    const V qf = hn::ConvertTo(d, q);
    V r = MulAdd(qf, Set(-0.693145751953125f), x);
    r = MulAdd(qf, Set(-1.428606765330187045e-6f), r);
    const V poly = Estrin(r, +0.5f, +0.166666671633720397949219f, +0.0416664853692054748535156f,
                          +0.00833336077630519866943359f, +0.00139304355252534151077271f,
                          +0.000198527617612853646278381f);
    return MulAdd(poly, hn::Mul(r, r), r);
  }

  HWY_INLINE V Exp(V x) const {  // HighwayExp
    VI q;
    const V poly = Reduce(x, q);
    const V y = LoadExpShortRange(hn::Add(poly, Set(1.0f)), q);
    return hn::IfThenElseZero(x >= Set(-104.0f), y);
  }
  HWY_INLINE V Expm1(V x) const {  // HighwayExpm1
    const float kLn2Over2 = static_cast<float>(+0.346573590279972654708616);
    VI q;
    const V poly = Reduce(x, q);
    const V far = hn::Sub(LoadExpShortRange(hn::Add(poly, Set(1.0f)), q), Set(1.0f));
    const V z = hn::IfThenElse(hn::Abs(x) < Set(kLn2Over2), poly, far);
    return hn::IfThenElse(x < Set(-104.0f), Set(-1.0f), z);
  }
  HWY_INLINE V Tanh(V x) const {  // HighwayTanh
    const hn::RebindToUnsigned<D> du;
    const float kLimit = static_cast<float>(18.714973875);
    const auto sign = hn::And(hn::BitCast(du, x), hn::Set(du, 0x80000000u));
    const V abs_x = hn::BitCast(d, hn::Xor(hn::BitCast(du, x), sign));
    const V y = Expm1(hn::Mul(abs_x, Set(2.0f)));
    const V z = hn::IfThenElse(abs_x > Set(kLimit), Set(1.0f), hn::Div(y, hn::Add(y, Set(2.0f))));
    return hn::BitCast(d, hn::Xor(hn::BitCast(du, z), sign));
  }
  HWY_INLINE V ExpOfSequences(V x) const {
    return hn::IfThenElse(x > Set(kHighwayExpUpperBound),
                          Set(std::numeric_limits<float>::infinity()), Exp(x));
  }
  template <size_t kN>
  HWY_INLINE V Horner(const float (&c)[kN], V v) const {
    V p = Set(c[kN - 1]);
    for (size_t k = kN - 1; k-- > 0;) p = MulAdd(p, v, Set(c[k]));
    return p;
  }
  HWY_INLINE V Erf(V x) const {  // ErfOfSequences
    const V a = hn::Abs(x);
    const V small = MulAdd(x, Horner(kErfSmall, hn::Mul(x, x)), x);
    // std::min(a, clamp) for a number a; a NaN lane is put back at the end.
    const V clamped = hn::Min(hn::IfThenZeroElse(hn::IsNaN(a), a), Set(kErfClamp));
    const V q = hn::IfThenElse(clamped < Set(kErfNearEnd), Horner(kErfNear, hn::Sub(clamped, Set(1.0f))),
                               Horner(kErfFar, hn::Sub(clamped, Set(3.0f))));
    const V large = hn::CopySign(hn::Sub(Set(1.0f), ExpOfSequences(q)), x);
    const V y = hn::IfThenElse(a < Set(kErfSmallEnd), small, large);
    return hn::IfThenElse(hn::IsNaN(x), hn::Add(x, x), y);
  }
};

#endif  // HWY_NATIVE_FMA && HWY_ARCH_X86

}  // namespace highway_math
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_ORACLES_HIGHWAY_MATH_INL_H_
