// Double-word arithmetic (oracles/double_word.h) in Highway vectors of
// doubles: the same operations in the same order on every lane, so each lane
// gets the bits the scalar functions give, and their error bounds hold as they
// stand. Only for targets with fused multiply-adds (HWY_NATIVE_FMA): the
// scalar code's std::fma is one rounding, which a vector without FMA would
// make two. Included inside a caller's per-target namespace setup, as any
// Highway -inl header.

#if defined(ULPGATE_ORACLES_DOUBLE_WORD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#undef ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#else
#define ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "oracles/double_word.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace double_word {

#if HWY_NATIVE_FMA

namespace hn = hwy::HWY_NAMESPACE;

using DD = hn::ScalableTag<double>;
using DI = hn::RebindToSigned<DD>;
using VD = hn::Vec<DD>;
using VI = hn::Vec<DI>;

// A double-word per lane (DoubleWord's hi and lo).
struct VDW {
  VD hi, lo;
};

HWY_INLINE VDW TwoSum(VD a, VD b) {
  const VD s = hn::Add(a, b);
  const VD bb = hn::Sub(s, a);
  return {s, hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb))};
}
HWY_INLINE VDW FastTwoSum(VD a, VD b) {
  const VD s = hn::Add(a, b);
  return {s, hn::Sub(b, hn::Sub(s, a))};
}
// std::fma(a, b, -p) is MulSub(a, b, p): one rounding of a b - p.
HWY_INLINE VDW TwoProd(VD a, VD b) {
  const VD p = hn::Mul(a, b);
  return {p, hn::MulSub(a, b, p)};
}
HWY_INLINE VDW Add(VDW x, VDW y) {
  const VDW s = TwoSum(x.hi, y.hi);
  const VDW t = TwoSum(x.lo, y.lo);
  const VDW v = FastTwoSum(s.hi, hn::Add(s.lo, t.hi));
  return FastTwoSum(v.hi, hn::Add(t.lo, v.lo));
}
HWY_INLINE VDW Neg(VDW x) { return {hn::Neg(x.hi), hn::Neg(x.lo)}; }
HWY_INLINE VDW Mul(VDW x, VDW y) {
  const VDW c = TwoProd(x.hi, y.hi);
  const VD tl1 = hn::MulAdd(x.hi, y.lo, hn::Mul(x.lo, y.lo));
  const VD cl2 = hn::MulAdd(x.lo, y.hi, tl1);
  return FastTwoSum(c.hi, hn::Add(c.lo, cl2));
}
HWY_INLINE VDW Constant(const DoubleWord& c) {
  const DD d;
  return {hn::Set(d, c.hi), hn::Set(d, c.lo)};
}

// Renormalize's three parts.
HWY_INLINE void Renormalize(VD a, VD b, VD c, VD& f0, VD& f1, VD& f2) {
  const VDW s = TwoSum(b, c);
  const VDW t = TwoSum(a, s.hi);
  const VDW u = TwoSum(t.lo, s.lo);
  const VDW w = TwoSum(t.hi, u.hi);
  const VDW z = TwoSum(w.lo, u.lo);
  const VDW head = TwoSum(w.hi, z.hi);
  const VDW rest = TwoSum(head.lo, z.lo);
  f0 = head.hi;
  f1 = rest.hi;
  f2 = rest.lo;
}

// Exp (double_word.cc's ExpSteps) of each lane, |v| <= kDoubleWordExpLimit.
HWY_INLINE VDW Exp(VDW w) {
  const DD d;
  const DI di;
  const DoubleWordExpTables& t = ExpTables();
  const VD magic = hn::Set(d, 0x1.8p52);
  // k = round(v.hi 64/ln2); its integer is the low bits of k + 1.5 * 2^52.
  const VD shifted = hn::Add(hn::Mul(w.hi, hn::Set(d, 64 / 0.6931471805599453)), magic);
  const VD k = hn::Sub(shifted, magic);
  const VD minus_k = hn::Neg(k);
  VDW r = TwoSum(w.hi, hn::Mul(minus_k, hn::Set(d, t.l1)));
  r = Add(r, {w.lo, hn::Zero(d)});
  r = Add(r, Neg(TwoProd(k, hn::Set(d, t.l2))));
  r = Add(r, {hn::Mul(minus_k, hn::Set(d, t.l3)), hn::Zero(d)});
  const auto& c = t.inverse_factorial;
  VD tail = hn::Set(d, c[11].hi);
  for (int m = 10; m >= 6; --m) {
    tail = hn::Add(hn::Mul(tail, r.hi), hn::Set(d, c[static_cast<size_t>(m)].hi));
  }
  VDW p{tail, hn::Zero(d)};
  for (int m = 5; m >= 0; --m) p = Add(Constant(c[static_cast<size_t>(m)]), Mul(p, r));
  // k = 64 m + j, 0 <= j < 64: j's bits are k's lowest (two's complement in
  // the integer of `shifted`), and 2^m's exponent field is (k - j) 2^46 +
  // 1023 2^52.
  const VI ki = hn::Sub(hn::BitCast(di, shifted), hn::BitCast(di, magic));
  const VI j = hn::And(ki, hn::Set(di, 63));
  const VI two_j = hn::Add(j, j);  // the table's double-words are (hi, lo) pairs
  const double* table = &t.two_to_j64[0].hi;
  const VDW two_to_j{hn::GatherIndex(d, table, two_j), hn::GatherIndex(d, table + 1, two_j)};
  const VDW e = Mul(two_to_j, p);
  const VD scale =
      hn::BitCast(d, hn::Add(hn::ShiftLeft<46>(hn::Sub(ki, j)), hn::Set(di, int64_t{1023} << 52)));
  return {hn::Mul(e.hi, scale), hn::Mul(e.lo, scale)};
}

#endif  // HWY_NATIVE_FMA

}  // namespace double_word
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
