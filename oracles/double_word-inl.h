// Double-word arithmetic (oracles/double_word.h) in Highway vectors of
// doubles: the same operations in the same order on every lane, so each lane
// gets the bits the scalar functions give, and their error bounds hold as they
// stand. The double-word operations only for targets with fused
// multiply-adds (HWY_NATIVE_FMA): the scalar code's std::fma is one rounding,
// which a vector without FMA would make two. The error-free transformations
// they are built on (TwoSum, FastTwoSum, TwoProd) on one vector of any lanes,
// for every target: their one vector home. Included inside a caller's
// per-target namespace setup, as any Highway -inl header.
//
// Every value is a pack of U vectors, each operation done on all U before the
// next: one double-word operation is a chain of a dozen dependent roundings,
// and an exp or a polynomial of them is latency-bound on one vector; U
// independent chains side by side keep the floating-point units busy.

#if defined(ULPGATE_ORACLES_DOUBLE_WORD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#undef ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#else
#define ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "oracles/double_word.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace double_word {

namespace hn = hwy::HWY_NAMESPACE;

// ---- Error-free transformations on one vector of any floating-point lanes,
// on every target (FMA or not): the one vector home of double_word.h's
// TwoSum, FastTwoSum and TwoProd, the same operations in the same order per
// lane, so each lane gets the scalar functions' bits. Why each is exact, and
// why it needs -ffp-contract=off: double_word.h. (s, e) = (RN(exact), exact -
// s).

// Knuth's TwoSum, for any a and b.
template <class V>
HWY_INLINE void TwoSum(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  const V bb = hn::Sub(s, a);
  e = hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb));
}
// Dekker's FastTwoSum: only where each lane's a has an exponent at least b's
// (|a| >= |b| suffices).
template <class V>
HWY_INLINE void FastTwoSum(V a, V b, V& s, V& e) {
  s = hn::Add(a, b);
  e = hn::Sub(b, hn::Sub(s, a));
}
// TwoProd: with FMA, e = MulSub(a, b, p) (std::fma(a, b, -p)), one rounding
// of a double, so exact. Without, Dekker's product: each operand split by
// Veltkamp's constant 2^ceil(p/2) + 1 into halves whose products are exact,
// their sum with -p exact term by term; it gives the same e wherever nothing
// overflows (|a|, |b| below 2^(emax - ceil(p/2))) and e does not underflow.
template <class V>
HWY_INLINE void TwoProd(V a, V b, V& p, V& e) {
  p = hn::Mul(a, b);
#if HWY_NATIVE_FMA
  e = hn::MulSub(a, b, p);
#else
  using T = hn::TFromV<V>;
  const hn::DFromV<V> d;
  // 2^27 + 1 for doubles, 2^12 + 1 for floats.
  const V split = hn::Set(d, static_cast<T>(sizeof(T) == 8 ? 134217729.0 : 4097.0));
  const V ca = hn::Mul(split, a);
  const V ah = hn::Sub(ca, hn::Sub(ca, a));
  const V al = hn::Sub(a, ah);
  const V cb = hn::Mul(split, b);
  const V bh = hn::Sub(cb, hn::Sub(cb, b));
  const V bl = hn::Sub(b, bh);
  e = hn::Add(hn::Add(hn::Add(hn::Sub(hn::Mul(ah, bh), p), hn::Mul(ah, bl)), hn::Mul(al, bh)),
              hn::Mul(al, bl));
#endif
}

#if HWY_NATIVE_FMA

using DD = hn::ScalableTag<double>;
using DI = hn::RebindToSigned<DD>;
using VD = hn::Vec<DD>;
using VI = hn::Vec<DI>;
using MD = hn::Mask<DD>;

// U vectors of doubles, of int64 lanes, of masks. Copied vector by vector:
// GCC copies an array of vectors as a block, through the stack and general
// registers 16 bytes at a time, which cost more than the arithmetic on AVX2.
template <class Vec, size_t U>
struct Pack {
  Vec v[U];
  Pack() = default;
  HWY_INLINE Pack(const Pack& o) { *this = o; }
  HWY_INLINE Pack& operator=(const Pack& o) {
    for (size_t u = 0; u < U; ++u) v[u] = o.v[u];
    return *this;
  }
};
template <size_t U>
using P = Pack<VD, U>;
template <size_t U>
using PI = Pack<VI, U>;
template <size_t U>
using PM = Pack<MD, U>;

#define ULPGATE_PACK_BINARY(Name, Op)                                  \
  template <size_t U>                                                  \
  HWY_INLINE P<U> Name(const P<U>& a, const P<U>& b) {                 \
    P<U> r;                                                            \
    for (size_t u = 0; u < U; ++u) r.v[u] = hn::Op(a.v[u], b.v[u]);    \
    return r;                                                          \
  }
ULPGATE_PACK_BINARY(Add, Add)
ULPGATE_PACK_BINARY(Sub, Sub)
ULPGATE_PACK_BINARY(Mul, Mul)
#undef ULPGATE_PACK_BINARY

#define ULPGATE_PACK_TERNARY(Name, Op)                                       \
  template <size_t U>                                                        \
  HWY_INLINE P<U> Name(const P<U>& a, const P<U>& b, const P<U>& c) {        \
    P<U> r;                                                                  \
    for (size_t u = 0; u < U; ++u) r.v[u] = hn::Op(a.v[u], b.v[u], c.v[u]);  \
    return r;                                                                \
  }
ULPGATE_PACK_TERNARY(MulAdd, MulAdd)
ULPGATE_PACK_TERNARY(MulSub, MulSub)
#undef ULPGATE_PACK_TERNARY
#define ULPGATE_PACK_UNARY(Name, Op)                       \
  template <size_t U>                                      \
  HWY_INLINE P<U> Name(const P<U>& a) {                    \
    P<U> r;                                                \
    for (size_t u = 0; u < U; ++u) r.v[u] = hn::Op(a.v[u]); \
    return r;                                              \
  }
ULPGATE_PACK_UNARY(Neg, Neg)
ULPGATE_PACK_UNARY(Abs, Abs)
#undef ULPGATE_PACK_UNARY
template <size_t U>
HWY_INLINE P<U> Splat(double c) {
  P<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = hn::Set(DD(), c);
  return r;
}
template <size_t U>
HWY_INLINE P<U> IfThenElse(const PM<U>& m, const P<U>& yes, const P<U>& no) {
  P<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = hn::IfThenElse(m.v[u], yes.v[u], no.v[u]);
  return r;
}
// a < b, a > b, a <= b, a >= b per lane; a or b.
template <size_t U>
HWY_INLINE PM<U> Less(const P<U>& a, const P<U>& b) {
  PM<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = a.v[u] < b.v[u];
  return r;
}
template <size_t U>
HWY_INLINE PM<U> Greater(const P<U>& a, const P<U>& b) {
  return Less(b, a);
}
template <size_t U>
HWY_INLINE PM<U> AtMost(const P<U>& a, const P<U>& b) {
  PM<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = a.v[u] <= b.v[u];
  return r;
}
template <size_t U>
HWY_INLINE PM<U> AtLeast(const P<U>& a, const P<U>& b) {
  return AtMost(b, a);
}
template <size_t U>
HWY_INLINE PM<U> Or(const PM<U>& a, const PM<U>& b) {
  PM<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = hn::Or(a.v[u], b.v[u]);
  return r;
}
// base[index] per lane.
template <size_t U>
HWY_INLINE P<U> Gather(const double* base, const PI<U>& index) {
  P<U> r;
  for (size_t u = 0; u < U; ++u) r.v[u] = hn::GatherIndex(DD(), base, index.v[u]);
  return r;
}

// A double-word per lane (DoubleWord's hi and lo).
template <size_t U>
struct DW {
  P<U> hi, lo;
  DW() = default;
  HWY_INLINE DW(const P<U>& h, const P<U>& l) : hi(h), lo(l) {}
  HWY_INLINE DW(const DW& o) : hi(o.hi), lo(o.lo) {}
  HWY_INLINE DW& operator=(const DW& o) {
    hi = o.hi;
    lo = o.lo;
    return *this;
  }
};

// The error-free transformations above, vector by vector.
template <size_t U>
HWY_INLINE DW<U> TwoSum(const P<U>& a, const P<U>& b) {
  DW<U> r;
  for (size_t u = 0; u < U; ++u) TwoSum(a.v[u], b.v[u], r.hi.v[u], r.lo.v[u]);
  return r;
}
template <size_t U>
HWY_INLINE DW<U> FastTwoSum(const P<U>& a, const P<U>& b) {
  DW<U> r;
  for (size_t u = 0; u < U; ++u) FastTwoSum(a.v[u], b.v[u], r.hi.v[u], r.lo.v[u]);
  return r;
}
template <size_t U>
HWY_INLINE DW<U> TwoProd(const P<U>& a, const P<U>& b) {
  DW<U> r;
  for (size_t u = 0; u < U; ++u) TwoProd(a.v[u], b.v[u], r.hi.v[u], r.lo.v[u]);
  return r;
}
template <size_t U>
HWY_INLINE DW<U> Add(const DW<U>& x, const DW<U>& y) {
  const DW<U> s = TwoSum(x.hi, y.hi);
  const DW<U> t = TwoSum(x.lo, y.lo);
  const DW<U> v = FastTwoSum(s.hi, Add(s.lo, t.hi));
  return FastTwoSum(v.hi, Add(t.lo, v.lo));
}
// AddSmall's (double_word.h) steps, for |y| <= |x|/64.
template <size_t U>
HWY_INLINE DW<U> AddSmall(const DW<U>& x, const DW<U>& y) {
  const DW<U> s = FastTwoSum(x.hi, y.hi);
  return FastTwoSum(s.hi, Add(s.lo, Add(x.lo, y.lo)));
}
template <size_t U>
HWY_INLINE DW<U> Neg(const DW<U>& x) {
  return {Neg(x.hi), Neg(x.lo)};
}
template <size_t U>
HWY_INLINE DW<U> Mul(const DW<U>& x, const DW<U>& y) {
  const DW<U> c = TwoProd(x.hi, y.hi);
  const P<U> tl1 = MulAdd(x.hi, y.lo, Mul(x.lo, y.lo));
  const P<U> cl2 = MulAdd(x.lo, y.hi, tl1);
  return FastTwoSum(c.hi, Add(c.lo, cl2));
}
template <size_t U>
HWY_INLINE DW<U> Constant(const DoubleWord& c) {
  return {Splat<U>(c.hi), Splat<U>(c.lo)};
}

// Renormalize's three parts.
template <size_t U>
HWY_INLINE void Renormalize(const P<U>& a, const P<U>& b, const P<U>& c, P<U>& f0, P<U>& f1,
                            P<U>& f2) {
  const DW<U> s = TwoSum(b, c);
  const DW<U> t = TwoSum(a, s.hi);
  const DW<U> u = TwoSum(t.lo, s.lo);
  const DW<U> w = TwoSum(t.hi, u.hi);
  const DW<U> z = TwoSum(w.lo, u.lo);
  const DW<U> head = TwoSum(w.hi, z.hi);
  const DW<U> rest = TwoSum(head.lo, z.lo);
  f0 = head.hi;
  f1 = rest.hi;
  f2 = rest.lo;
}

// Exp (double_word.cc's ExpSteps) of each lane, |v| <= kDoubleWordExpLimit.
// kDoubleArgument: every w.lo is zero, and the step that adds it to the
// reduced argument r is left out: Add(r, (0, 0)) gives r bit for bit, r being
// TwoSum's normalized pair (r.hi = RN(r.hi + r.lo)), but for a zero's sign.
template <size_t U, bool kDoubleArgument = false>
HWY_INLINE DW<U> Exp(const DW<U>& w) {
  const DI di;
  const DoubleWordExpTables& t = ExpTables();
  const P<U> magic = Splat<U>(0x1.8p52);
  // k = round(v.hi 64/ln2); its integer is the low bits of k + 1.5 * 2^52.
  const P<U> shifted = Add(Mul(w.hi, Splat<U>(64 / 0.6931471805599453)), magic);
  const P<U> k = Sub(shifted, magic);
  const P<U> minus_k = Neg(k);
  const P<U> zero = Splat<U>(0.0);
  DW<U> r = TwoSum(w.hi, Mul(minus_k, Splat<U>(t.l1)));
  if (!kDoubleArgument) r = Add(r, DW<U>{w.lo, zero});
  r = Add(r, Neg(TwoProd(k, Splat<U>(t.l2))));
  r = Add(r, DW<U>{Mul(minus_k, Splat<U>(t.l3)), zero});
  const auto& c = t.inverse_factorial;
  P<U> tail = Splat<U>(c[11].hi);
  for (int m = 10; m >= 6; --m) tail = Add(Mul(tail, r.hi), Splat<U>(c[static_cast<size_t>(m)].hi));
  DW<U> p{tail, zero};
  for (int m = 5; m >= 0; --m) p = AddSmall(Constant<U>(c[static_cast<size_t>(m)]), Mul(p, r));
  // k = 64 m + j, 0 <= j < 64: j's bits are k's lowest (two's complement in
  // the integer of `shifted`), and 2^m's exponent field is (k - j) 2^46 +
  // 1023 2^52; the table's double-words are (hi, lo) pairs, 2 j apart.
  PI<U> ki, two_j;
  P<U> scale;
  for (size_t u = 0; u < U; ++u) {
    ki.v[u] = hn::Sub(hn::BitCast(di, shifted.v[u]), hn::BitCast(di, magic.v[u]));
    const VI j = hn::And(ki.v[u], hn::Set(di, 63));
    two_j.v[u] = hn::Add(j, j);
    scale.v[u] = hn::BitCast(DD(), hn::Add(hn::ShiftLeft<46>(hn::Sub(ki.v[u], j)),
                                           hn::Set(di, int64_t{1023} << 52)));
  }
  const double* table = &t.two_to_j64[0].hi;
  const DW<U> two_to_j{Gather(table, two_j), Gather(table + 1, two_j)};
  const DW<U> e = Mul(two_to_j, p);
  return {Mul(e.hi, scale), Mul(e.lo, scale)};
}

#endif  // HWY_NATIVE_FMA

}  // namespace double_word
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_ORACLES_DOUBLE_WORD_INL_H_
