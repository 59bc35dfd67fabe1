#include "oracles/double_word.h"

#include <array>
#include <cmath>

#include <mpfr.h>

#include "oracles/mpfr_number.h"

namespace ulpgate {
namespace {

// The constants, from MPFR at 400 bits: each part the double nearest to what
// is left.
struct Tables : DoubleWordExpTables {
  Tables() {
    constexpr mpfr_prec_t kPrecision = 400;
    MpfrNumber v(kPrecision), rest(kPrecision);
    const auto parts = [&](mpfr_srcptr x) {
      mpfr_set(rest.get(), x, MPFR_RNDN);
      DoubleWord d;
      d.hi = mpfr_get_d(rest.get(), MPFR_RNDN);
      mpfr_sub_d(rest.get(), rest.get(), d.hi, MPFR_RNDN);
      d.lo = mpfr_get_d(rest.get(), MPFR_RNDN);
      return d;
    };
    mpfr_const_log2(v.get(), MPFR_RNDN);
    mpfr_div_ui(v.get(), v.get(), 64, MPFR_RNDN);
    MpfrNumber head(36);
    mpfr_set(head.get(), v.get(), MPFR_RNDN);
    l1 = mpfr_get_d(head.get(), MPFR_RNDN);  // exact: 36 bits
    mpfr_sub_d(v.get(), v.get(), l1, MPFR_RNDN);
    const DoubleWord tail = parts(v.get());
    l2 = tail.hi;
    l3 = tail.lo;
    for (int j = 0; j < 64; ++j) {
      mpfr_set_si(v.get(), j, MPFR_RNDN);
      mpfr_div_ui(v.get(), v.get(), 64, MPFR_RNDN);
      mpfr_exp2(v.get(), v.get(), MPFR_RNDN);
      two_to_j64[static_cast<size_t>(j)] = parts(v.get());
    }
    for (unsigned n = 0; n < inverse_factorial.size(); ++n) {
      mpfr_fac_ui(v.get(), n, MPFR_RNDN);
      mpfr_ui_div(v.get(), 1, v.get(), MPFR_RNDN);
      inverse_factorial[n] = parts(v.get());
    }
  }
};

const Tables& TablesOnce() {
  static const Tables tables;
  return tables;
}

}  // namespace

const DoubleWordExpTables& ExpTables() { return TablesOnce(); }

namespace {

// exp of v[0 .. kLanes) into out[0 .. n), n <= kLanes, each step across
// every lane before the next: one value (kLanes = 1, Exp) or several whose
// chains of dependent roundings overlap (ExpLanes); the same operations on
// each value either way. Inlined into each FMA clone below.
template <size_t kLanes>
[[gnu::always_inline]] inline void ExpSteps(const DoubleWord* v, DoubleWord* out, size_t n) {
  const Tables& t = TablesOnce();
  DoubleWord w[kLanes], r[kLanes], p[kLanes];
  double k[kLanes], tail[kLanes];
  for (size_t l = 0; l < kLanes; ++l) w[l] = l < n ? v[l] : DoubleWord{};
  // Round to nearest by the 1.5 * 2^52 trick (|v.hi| * 64/ln2 < 2^16).
  for (size_t l = 0; l < kLanes; ++l) k[l] = (w[l].hi * (64 / 0.6931471805599453) + 0x1.8p52) - 0x1.8p52;
  // k l1 is exact (36 + 16 bits), so r = v - k (l1 + l2 + l3) loses only the
  // double-word additions' 2^-104 of |r| <= 0.006 and k l3's rounding.
  for (size_t l = 0; l < kLanes; ++l) r[l] = TwoSum(w[l].hi, -k[l] * t.l1);
  for (size_t l = 0; l < kLanes; ++l) r[l] = Add(r[l], {w[l].lo, 0});
  for (size_t l = 0; l < kLanes; ++l) r[l] = Add(r[l], Neg(TwoProd(k[l], t.l2)));
  for (size_t l = 0; l < kLanes; ++l) r[l] = Add(r[l], {-k[l] * t.l3, 0});
  const std::array<DoubleWord, 15>& c = t.inverse_factorial;
  for (size_t l = 0; l < kLanes; ++l) tail[l] = c[11].hi;
  for (int m = 10; m >= 6; --m) {
    for (size_t l = 0; l < kLanes; ++l) tail[l] = tail[l] * r[l].hi + c[static_cast<size_t>(m)].hi;
  }
  for (size_t l = 0; l < kLanes; ++l) p[l] = {tail[l], 0};
  for (int m = 5; m >= 0; --m) {
    for (size_t l = 0; l < kLanes; ++l) p[l] = AddSmall(c[static_cast<size_t>(m)], Mul(p[l], r[l]));
  }
  for (size_t l = 0; l < n; ++l) {
    const auto kk = static_cast<long>(k[l]);
    const long j = kk & 63;
    const int m = static_cast<int>((kk - j) / 64);
    const DoubleWord e = Mul(t.two_to_j64[static_cast<size_t>(j)], p[l]);
    // |m| <= 938 for |v| <= 650, and e's words are normal after scaling: exact.
    const double scale = PowerOfTwo(m);
    out[l] = {e.hi * scale, e.lo * scale};
  }
}

ULPGATE_FMA_CLONES DoubleWord ExpClones(DoubleWord v) {
  DoubleWord out;
  ExpSteps<1>(&v, &out, 1);
  return out;
}

ULPGATE_FMA_CLONES void ExpLanesClones(const DoubleWord* v, DoubleWord* out, size_t n) {
  ExpSteps<kDoubleWordLanes>(v, out, n);
}

ULPGATE_FMA_CLONES DoubleWord Expm1Clones(DoubleWord v, double* relative_error,
                                          const DoubleWord* exp_v) {
  if (!Expm1CallsExp(v)) {
    const std::array<DoubleWord, 15>& c = TablesOnce().inverse_factorial;
    double tail = c[14].hi;
    for (int n = 13; n >= 9; --n) tail = tail * v.hi + c[static_cast<size_t>(n)].hi;
    DoubleWord p{tail, 0};
    for (int n = 8; n >= 1; --n) p = Add(c[static_cast<size_t>(n)], Mul(p, v));
    *relative_error = 0x1p-99;
    return Mul(p, v);
  }
  const DoubleWord e = exp_v != nullptr ? *exp_v : ExpClones(v);
  const DoubleWord m = Add(e, {-1, 0});
  *relative_error = kDoubleWordExpError * e.hi * (1 + 0x1p-40) / std::fabs(m.hi) * (1 + 0x1p-40) + 0x1p-103;
  return m;
}

}  // namespace

DoubleWord Exp(DoubleWord v) { return ExpClones(v); }
void ExpLanes(const DoubleWord* v, DoubleWord* out, size_t n) { ExpLanesClones(v, out, n); }
DoubleWord Expm1(DoubleWord v, double* relative_error, const DoubleWord* exp_v) {
  return Expm1Clones(v, relative_error, exp_v);
}

void Renormalize(double a, double b, double c, double* f0, double* f1, double* f2) {
  const DoubleWord s = TwoSum(b, c);
  const DoubleWord t = TwoSum(a, s.hi);
  const DoubleWord u = TwoSum(t.lo, s.lo);
  const DoubleWord w = TwoSum(t.hi, u.hi);
  const DoubleWord z = TwoSum(w.lo, u.lo);
  const DoubleWord head = TwoSum(w.hi, z.hi);
  const DoubleWord rest = TwoSum(head.lo, z.lo);
  *f0 = head.hi;
  *f1 = rest.hi;
  *f2 = rest.lo;
}

}  // namespace ulpgate
