// Double-word arithmetic with error bounds: a value as the unevaluated sum of
// two doubles (hi = RN(hi + lo)), the operations of Joldes, Muller and Popescu
// ("Tight and rigorous error bounds for basic building blocks of double-word
// arithmetic", ACM TOMS 44(2), 2017) and exp and expm1 built on them. What the
// sweep's exact tier uses where an op's value calls a function: a double-word
// estimate whose error is bounded, so that MPFR is left only what the bound
// cannot decide.
//
// Every bound below is relative to the exact result of the operation on the
// double-word operands as given (their own errors are the caller's to carry),
// and holds while no intermediate leaves the normal range of binary64 (the
// callers keep magnitudes within [2^-900, 2^900]). The published bounds are
// smaller; kDoubleWordOpError rounds them up by a factor of 4 or more.
#ifndef ULPGATE_ORACLES_DOUBLE_WORD_H_
#define ULPGATE_ORACLES_DOUBLE_WORD_H_

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>

// For the definitions of functions that do many double-word operations or
// fused multiply-adds (internal ones, called through a plain function):
// compiled twice on x86 with GCC, with FMA instructions and for the baseline
// (where std::fma is a library call, several times slower). Both round every operation the same
// way (fma is correctly rounded either way), so they return the same bits;
// the loader picks the one the CPU runs.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ULPGATE_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define ULPGATE_FMA_CLONES
#endif

namespace ulpgate {

struct DoubleWord {
  double hi = 0, lo = 0;
  double Value() const { return hi + lo; }
};

// 2^-100: at least 4 times the bound of every operation below (Add 3u^2,
// Mul 4u^2, MulDouble 2u^2, Div 15u^2 + 56u^3, u = 2^-53; Joldes et al.,
// Theorems 2.3 (AccurateDWPlusDW), 5.1 (DWTimesDW3), 4.4 (DWTimesFP3) and
// 6.1 (DWDivDW2); AddSmall 3.1u^2 where its operands are as it asks, derived
// beside it).
inline constexpr double kDoubleWordOpError = 0x1p-100;

// ---- Error-free transformations: the one scalar home of TwoSum, FastTwoSum
// and TwoProd (their vector form, for Highway lanes of any target, is in
// oracles/double_word-inl.h; everything else calls one of the two). Each
// returns hi = RN(exact) and lo = exact - hi, the exact result as two doubles.
// They hold in round to nearest (ulpgate never changes the rounding mode)
// while nothing overflows, and TwoProd while its lo does not underflow (the
// callers keep magnitudes far inside the normal range).
//
// Each step must be computed exactly as written: one rounding per operation,
// no reassociation, and no a * b + c fused into one FMA behind the code's
// back. The build compiles everything with -ffp-contract=off and without
// -ffast-math (CMakeLists.txt). Under GCC's default -ffp-contract=fast, an
// inlined TwoSum(x * y, c) (model_expr.cc's fused step) could become s =
// fma(x, y, c) while bb = s - a still subtracts the separately rounded x * y:
// s would round a different sum than the a the later steps take apart, and lo
// would no longer be the error; TwoProd's p = a * b could likewise be fused
// into whatever adds it next. Where an FMA is wanted it is written (std::fma,
// hn::MulAdd / MulSub).

// Knuth's TwoSum (TAOCP vol. 2, 4.2.2, Theorem B; Moller): hi + lo = a + b
// exactly, hi = RN(a + b), for any a and b, no ordering needed: bb is the
// part of b that reached s, s - bb the part of a, and each of the four
// remaining differences is exact (Knuth's proof), so lo is the rounding error
// of a + b, which is itself a double. 6 operations.
inline DoubleWord TwoSum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// Dekker's FastTwoSum (Fast2Sum): the same pair in 3 operations, exact only
// when a's exponent is at least b's (|a| >= |b| suffices, or a = 0): then
// s - a is exact (Sterbenz and Dekker's lemma) and b - (s - a) is the
// rounding error. Without the precondition lo can be wrong: callers use it
// only where it holds (TwoSum where they cannot tell).
inline DoubleWord FastTwoSum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}
// TwoProd through a fused multiply-add: a * b - p is a double whenever lo
// does not underflow (the error of a rounded product is representable), and
// fma computes it with one rounding of the exact a * b - p, so exactly. With
// -ffp-contract=off p stays the separately rounded product. std::fma is
// correctly rounded with or without FMA hardware (a library call there), so
// the bits never depend on the CPU.
inline DoubleWord TwoProd(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// AccurateDWPlusDW (any signs; relative to |x + y|).
inline DoubleWord Add(DoubleWord x, DoubleWord y) {
  const DoubleWord s = TwoSum(x.hi, y.hi);
  const DoubleWord t = TwoSum(x.lo, y.lo);
  const DoubleWord v = FastTwoSum(s.hi, s.lo + t.hi);
  return FastTwoSum(v.hi, t.lo + v.lo);
}
// SloppyDWPlusDW (Joldes et al., Algorithm 5, whose bound needs no
// cancellation), for |y| <= |x|/64 only, so its first step is Fast2Sum: the
// low words' sum rounds once (u^2 (|x.hi| + |y.hi|) at most), then with s's
// low part once more (u^2 (|s| + |x.hi| + |y.hi|)), and the last Fast2Sum is
// exact; |x| + |y| <= 65/63 |x + y| makes it 3.1 u^2 of |x + y| in all,
// AccurateDWPlusDW's 3 u^2 for 8 operations instead of 20.
inline DoubleWord AddSmall(DoubleWord x, DoubleWord y) {
  const DoubleWord s = FastTwoSum(x.hi, y.hi);
  return FastTwoSum(s.hi, s.lo + (x.lo + y.lo));
}
inline DoubleWord Neg(DoubleWord x) { return {-x.hi, -x.lo}; }
// DWTimesDW3.
inline DoubleWord Mul(DoubleWord x, DoubleWord y) {
  const DoubleWord c = TwoProd(x.hi, y.hi);
  const double tl1 = std::fma(x.hi, y.lo, x.lo * y.lo);
  const double cl2 = std::fma(x.lo, y.hi, tl1);
  return FastTwoSum(c.hi, c.lo + cl2);
}
// DWTimesFP3.
inline DoubleWord MulDouble(DoubleWord x, double y) {
  const DoubleWord c = TwoProd(x.hi, y);
  return FastTwoSum(c.hi, std::fma(x.lo, y, c.lo));
}
// DWDivDW2.
inline DoubleWord Div(DoubleWord x, DoubleWord y) {
  const double th = x.hi / y.hi;
  const DoubleWord r = MulDouble(y, th);
  const double pi_h = x.hi - r.hi;  // exact (Sterbenz)
  const double d = pi_h + (x.lo - r.lo);
  return FastTwoSum(th, d / y.hi);
}

// exp(v) for |v| <= kDoubleWordExpLimit, within kDoubleWordExpError of
// exp(v.hi + v.lo) relatively: v = k ln2/64 + r with ln2/64 in three parts
// (k ln2/64's first part exact), |r| <= ln2/128 + 2^-60; exp(r) by its Taylor
// polynomial of degree 11 (the rest below 2^-118), terms 6 to 11 in doubles
// (their sum times r^6 is below 2^-54, its rounding below 2^-104), the others
// by Horner's rule in double-words (6 steps of Mul and AddSmall, each
// adding 1/m! to at most 0.0055/m!: 12 * 2^-104 at most, the relative errors
// of the steps carried to the sum with weights below 1); 2^(k/64) from a table
// of double-words (2^-106) and one more Mul (2^-104). In all below 2^-100.7.
inline constexpr double kDoubleWordExpLimit = 650;
inline constexpr double kDoubleWordExpError = 0x1p-100;
DoubleWord Exp(DoubleWord v);
// Exp of v[0 .. n), n <= kDoubleWordLanes, bit for bit what Exp gives each:
// the same operations in lockstep across the elements, so that their long
// chains of dependent roundings overlap (several times Exp's throughput).
inline constexpr size_t kDoubleWordLanes = 8;
void ExpLanes(const DoubleWord* v, DoubleWord* out, size_t n);
// expm1(v) for |v| <= 2 within *relative_error (returned) of expm1(v.hi +
// v.lo) relatively: for |v| < 2^-5 its Taylor polynomial of degree 14 (the
// rest below 2^-110 relatively; terms 9 to 14 in doubles, terms 1 to 8 in
// double-words: below 2^-99.5 in all), else Exp(v) - 1 with Exp's error over
// |expm1(v)|.
// exp_v (when given) is Exp(v), bit for bit, computed already (ExpLanes):
// used where Expm1 would call Exp.
DoubleWord Expm1(DoubleWord v, double* relative_error, const DoubleWord* exp_v = nullptr);
// Whether Expm1(v) calls Exp(v) (else its Taylor polynomial).
inline bool Expm1CallsExp(DoubleWord v) { return !(std::fabs(v.hi) < 0x1p-5); }

// Exp's constants, for the vectors that give its bits
// (oracles/double_word-inl.h): ln2/64 = l1 + l2 + l3 (+ 2^-150), l1 of 36
// bits; 2^(j/64) and 1/n! (n <= 14) as double-words.
struct DoubleWordExpTables {
  double l1 = 0, l2 = 0, l3 = 0;
  std::array<DoubleWord, 64> two_to_j64{};
  std::array<DoubleWord, 15> inverse_factorial{};
};
const DoubleWordExpTables& ExpTables();

// 2^m for a normal m (-1022 <= m <= 1023), from its bits.
inline double PowerOfTwo(int m) {
  const unsigned long long bits = static_cast<unsigned long long>(m + 1023) << 52;
  double d;
  __builtin_memcpy(&d, &bits, sizeof d);
  return d;
}

// The sum of three doubles a + b + c renormalized without error into f0 + f1
// + f2, with f0 = RN(f0 + f1) and f1 = RN(f1 + f2).
void Renormalize(double a, double b, double c, double* f0, double* f1, double* f2);

// A staged op's factor f (the value the exact oracle multiplies the first
// operand by) estimated without MPFR: elementwise_oracle.h's FastFactor.
struct FactorEstimate {
  enum Kind {
    kFinite,  // |f - (f0 + f1 + f2)| <= error
    kTiny,    // 0 < |f| < 2^log2_bound, f's sign `sign`
    kZero,    // f = +-0 (sign)
    kNaN,
  } kind = kNaN;
  double f0 = 0, f1 = 0, f2 = 0;
  double error = 0;
  // kFinite: f has so few bits that the oracle's product with any binary32
  // operand is exact (f = 1/2, f = 1), and error = 0.
  bool exact = false;
  double sign = 1;
  double log2_bound = 0;
  // The op's term factor at the same operand (its kFastTermFactor's value,
  // within the same bound) where the op gets it from the factor for little
  // more; NaN where it does not.
  double term = std::nan("");
};

// A batch of estimates in columns (an op's FastFactors): where plain[i] is 1,
// entry i holds a kFinite estimate that is not `exact`, its f0, f1, f2, error
// and term as FactorEstimate has them; where plain[i] is 0 the batch wrote
// nothing else there and the caller takes that entry's estimate one by one.
// The common estimate so costs no FactorEstimate on its way to the columns
// the sweep's tier reads.
struct FactorEstimateColumns {
  double *f0, *f1, *f2, *error, *term;
  uint8_t* plain;
};

// f into entry i of out if it is plain (as above); plain[i] says whether.
inline void StorePlainEstimate(const std::optional<FactorEstimate>& f,
                               const FactorEstimateColumns& out, size_t i) {
  const bool plain = f && f->kind == FactorEstimate::kFinite && !f->exact;
  out.plain[i] = plain ? 1 : 0;
  if (!plain) return;
  out.f0[i] = f->f0;
  out.f1[i] = f->f1;
  out.f2[i] = f->f2;
  out.error[i] = f->error;
  out.term[i] = f->term;
}

// A finite factor base + d, renormalized, within `error`.
inline FactorEstimate FiniteFactor(double base, DoubleWord d, double error) {
  FactorEstimate f;
  f.kind = FactorEstimate::kFinite;
  Renormalize(base, d.hi, d.lo, &f.f0, &f.f1, &f.f2);
  f.error = error;
  return f;
}

// A factor d within `error`: finite where |d| >= 2^-600, below that its sign
// and a bound on its magnitude where they are sure (|d| beyond twice the
// error), else nullopt (MPFR decides).
inline std::optional<FactorEstimate> FiniteOrTinyFactor(DoubleWord d, double error) {
  if (std::fabs(d.hi) >= 0x1p-600) return FiniteFactor(0, d, error);
  if (std::fabs(d.hi) <= 2 * error) return std::nullopt;
  FactorEstimate f;
  f.kind = FactorEstimate::kTiny;
  f.sign = d.hi < 0 ? -1 : 1;
  f.log2_bound = std::floor(std::log2((std::fabs(d.hi) + error) * (1 + 0x1p-40))) + 1;
  return f;
}

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_DOUBLE_WORD_H_
