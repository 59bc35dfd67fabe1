// The factor of an op whose derivative has the logistic form
//   F(x) = s + x s (1 - s) w(x),  s = 1/(1 + exp(-z(x))),
// estimated in double-words with a bound (oracles/double_word.h): silu
// backward (z = x, w = 1), GELU backward's tanh approximation (z = 2u, w =
// 2 k (1 + 3 c x^2)). The exact oracle computes s and 1 - s as 1/(1 +
// exp(-z)) and 1/(1 + exp(z)) at 320 bits (no cancellation); the estimate
// follows it within its bound, which includes the oracle's own distance
// from the real value (2^-299 of |s| + |x s (1 - s) w|, its operations' 320-bit
// roundings with exp's argument error amplified by |z| <= 650).
#ifndef ULPGATE_ORACLES_LOGISTIC_FACTOR_H_
#define ULPGATE_ORACLES_LOGISTIC_FACTOR_H_

#include <cstddef>
#include <optional>

#include "oracles/double_word.h"

namespace ulpgate {

struct LogisticTerms {
  DoubleWord z;        // of x's sign, within rho_z |z| of the oracle's z
  double rho_z = 0;
  DoubleWord w;        // positive, within r_w relatively of the oracle's w
  double r_w = 0;
  double w_bound = 0;  // an upper bound on w, in doubles (the tails use only it)
};

// F at a finite nonzero x, |x| >= 2^-40 (nearer 0 the ops' own series are
// cheaper): F = 1/2 + D for |z| < 1, 1 + D for z >= 1, s (1 + g) for z <= -1,
// each difference held to its relative error; exactly 1 for z >= 250 (where
// the oracle's 320 bits round s and F to 1); a negative number below 2^-900
// for z <= -650, bounded using MPFR's exponent range. nullopt where the
// bound would not be of use.
//
// *sigmoid (when given): s at |z| and 1 - s there, within 2^-95 relatively,
// where the estimate computed them (set true; not in the tails), for an
// op's term factor at no second exp.
struct LogisticSigmoid {
  DoubleWord at_abs_z, complement;
  bool set = false;
};
std::optional<FactorEstimate> LogisticFactor(double x, const LogisticTerms& t,
                                             LogisticSigmoid* sigmoid = nullptr);

// LogisticFactor of x[0 .. n), n <= kDoubleWordLanes, bit for bit, their
// double-word exps in lockstep (ExpLanes): out[l] and sigmoid[l] as
// LogisticFactor(x[l], t[l], &sigmoid[l]) gives them.
void LogisticFactorLanes(const double* x, const LogisticTerms* t, size_t n,
                         std::optional<FactorEstimate>* out, LogisticSigmoid* sigmoid);

// An op's batch over the logistic form (kFastFactors): the values it takes
// there eight at a time through LogisticFactorLanes, each estimate finished
// by the op and stored where plain (StorePlainEstimate); the rest one by one.
//   bool terms_at(float x, LogisticTerms* t, Extra* e): false where x is not
//     for the logistic form (zeros, the op's series near 0, NaN, infinities);
//   finish(double x, const Extra& e, std::optional<FactorEstimate> f,
//          const LogisticSigmoid& s): the op's estimate from f (its term factor);
//   one(float x): the op's estimate one by one.
template <class Extra, class TermsAt, class Finish, class One>
void LogisticFactorBatch(const float* x, size_t n, const FactorEstimateColumns& out,
                         const TermsAt& terms_at, const Finish& finish, const One& one) {
  double lanes[kDoubleWordLanes];
  LogisticTerms terms[kDoubleWordLanes];
  Extra extra[kDoubleWordLanes];
  size_t at[kDoubleWordLanes];
  size_t k = 0;
  auto flush = [&] {
    std::optional<FactorEstimate> done[kDoubleWordLanes];
    LogisticSigmoid s[kDoubleWordLanes];
    LogisticFactorLanes(lanes, terms, k, done, s);
    for (size_t l = 0; l < k; ++l) StorePlainEstimate(finish(lanes[l], extra[l], done[l], s[l]), out, at[l]);
    k = 0;
  };
  for (size_t i = 0; i < n; ++i) {
    if (!terms_at(x[i], &terms[k], &extra[k])) {
      StorePlainEstimate(one(x[i]), out, i);
      continue;
    }
    lanes[k] = x[i];
    at[k++] = i;
    if (k == kDoubleWordLanes) flush();
  }
  if (k > 0) flush();
}

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_LOGISTIC_FACTOR_H_
