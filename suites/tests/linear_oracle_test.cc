// Smoke tier: the reductions' oracle and error measures.
//   - The plain-loop exact values agree with an Eigen product over
//     Boost.Multiprecision mpfr_float (an independent path to the same reals).
//   - Every variant's op sequence over exact arithmetic gives the exact value
//     (every variant of an op has the same exact value).
//   - The bound fraction: exact bins, > 1 flagged, the underflow allowance and
//     the overflow exemption.
//   - The ULP error of a quotient (mse: sum / N) decided exactly, also next to
//     a rounding midpoint.
#include <gtest/gtest.h>

#include <Eigen/Core>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <cmath>

#include "oracles/float_text.h"
#include "oracles/ulp_metric.h"
#include "kernels/reductions/linear/linear_spec.h"
#include "kernels/reductions/mse/mse_spec.h"
#include "suites/engine/reduction_oracle.h"
#include "suites/inputs/reduction_suites.h"

namespace ulpgate {
namespace {

namespace mp = boost::multiprecision;

TEST(ReductionOracle, PlainLoopsAgreeWithEigenOverMpfrFloat) {
  // 700 bits hold every sum of these shapes exactly (oracles/exact.h), so the
  // Eigen product, whatever its order, is exact too and must equal the loops.
  using Big = mp::number<mp::mpfr_float_backend<700>, mp::et_off>;
  using Matrix = Eigen::Matrix<Big, Eigen::Dynamic, Eigen::Dynamic>;
  const ReductionShape shape = LinearShape{5, 7, 3}.Extents();
  for (const char* suite : {"cancellation", "adversarial"}) {
    for (uint64_t index = 0; index < 5; ++index) {
      for (const char* name : {"linear_fwd", "linear_bwd_input", "linear_bwd_weight"}) {
        const ReductionOpInfo& op = *FindReductionOp(name);
        const ReductionInstance instance = GenerateReductionInstance(op, shape, suite, 4, index);
        const auto shapes = ReductionOperandShapes(op, shape);
        auto to_matrix = [&](size_t k) {
          Matrix m(shapes[k][0], shapes[k].size() > 1 ? shapes[k][1] : 1);
          for (Eigen::Index r = 0; r < m.rows(); ++r) {
            for (Eigen::Index c = 0; c < m.cols(); ++c) {
              m(r, c) = Big(instance.operands[k][r * m.cols() + c]);  // exact: float -> 700 bits
            }
          }
          return m;
        };
        Matrix expected;
        if (op.name == "linear_fwd") {
          expected = to_matrix(0) * to_matrix(1).transpose();
          const Matrix b = to_matrix(2);
          for (Eigen::Index r = 0; r < expected.rows(); ++r) {
            for (Eigen::Index c = 0; c < expected.cols(); ++c) expected(r, c) += b(c, 0);
          }
        } else if (op.name == "linear_bwd_input") {
          expected = to_matrix(0) * to_matrix(1);
        } else {
          expected = to_matrix(0).transpose() * to_matrix(1);
        }
        for (size_t e = 0; e < ReductionOutputCount(op, shape); ++e) {
          const ElementExact exact =
              ReductionExact(op, GatherElementTerms(op, shape, instance, e));
          const Big& want = expected(e / expected.cols(), e % expected.cols());
          EXPECT_EQ(mpfr_cmp(exact.numerator.get(), want.backend().data()), 0)
              << op.name << " " << suite << " instance " << index << " "
              << ElementName(op, shape, e) << ": loops " << exact.numerator.ToDecimal(40)
              << ", Eigen " << want.str(40);
        }
      }
    }
  }
}

// Each variant's sequence over exact arithmetic (no rounding anywhere) is the
// exact reduction, whatever its order or lane count.
TEST(ReductionOracle, EveryScheduleOverExactArithmeticGivesTheExactValue) {
  const ReductionShape shape = LinearShape{6, 19, 5}.Extents();
  const ReductionShape mse_shape = {{37, 1, 1, 1}, 1};
  const ReductionSchedule schedules[] = {ReductionSchedule::kSequentialFused,
                                         ReductionSchedule::kSequentialUnfused,
                                         ReductionSchedule::kLaneParallel,
                                         ReductionSchedule::kPairwise};
  for (const auto& op : ReductionOps()) {
    if (op.reduction_extent < 0) continue;  // elementwise
    // The sums of products and squares; the row reductions' sequences are not
    // exact in any arithmetic (sqrt, exp, log) and have tests of their own
    // (row_reductions_test).
    if (op.family != "linear" && op.family != "mse") continue;
    const bool mse = op.family == "mse";
    const ReductionShape& s = mse ? mse_shape : shape;
    for (const char* suite : {"cancellation", "adversarial"}) {
      for (uint64_t index = 0; index < 5; ++index) {
        const ReductionInstance instance = GenerateReductionInstance(op, s, suite, 9, index);
        for (size_t e = 0; e < ReductionOutputCount(op, s); ++e) {
          const ElementTerms terms = GatherElementTerms(op, s, instance, e);
          const ElementExact exact = ReductionExact(op, terms);
          for (ReductionSchedule schedule : schedules) {
            for (size_t lanes : kX86LaneCounts) {
              const std::vector<float>& p = terms.vectors[0];
              const float* q = terms.vectors.size() > 1 ? terms.vectors[1].data() : nullptr;
              ExactArith a(ReductionExactPrecision(p.size() + 1));
              MpfrNumber sum(8);
              if (op.name == "linear_bwd_bias") {
                sum = sum_of_terms::RunSchedule<sum_of_terms::PlainTerm>(schedule, a, lanes,
                                                                         p.data(), q, p.size());
              } else if (mse) {
                sum = sum_of_terms::RunSchedule<mse_spec::SquaredDifferenceTerm>(
                    schedule, a, lanes, p.data(), q, p.size());
              } else {
                sum = sum_of_terms::RunSchedule<sum_of_terms::ProductTerm>(schedule, a, lanes,
                                                                           p.data(), q, p.size());
              }
              if (op.name == "linear_fwd") {
                sum = linear_spec::AddBias(a, sum, a.Const(terms.scalars[0]));
              }
              EXPECT_TRUE(mpfr_equal_p(sum.get(), exact.numerator.get()))
                  << op.name << " schedule " << static_cast<int>(schedule) << " lanes " << lanes
                  << " " << ElementName(op, s, e) << ": " << sum.ToDecimal(30) << " vs "
                  << exact.numerator.ToDecimal(30);
            }
          }
        }
      }
    }
  }
}

ReductionBound Bound(double abs_sum, uint64_t roundings, double underflow, double peak) {
  ReductionBound b(200);
  mpfr_set_d(b.abs_sum.get(), abs_sum, MPFR_RNDN);
  b.roundings = roundings;
  mpfr_set_d(b.underflow.get(), underflow, MPFR_RNDN);
  mpfr_set_d(b.peak.get(), peak, MPFR_RNDN);
  return b;
}

TEST(BoundFraction, BinsAreDecidedExactlyAndAboveOneIsABug) {
  // gamma_1 = 1 / (2^24 - 1); with A = 2^24 - 1 the bound is exactly 1.
  const ReductionBound bound = Bound(0x1p24 - 1, 1, 0, 1);
  MpfrNumber x(64);
  mpfr_set_d(x.get(), 4.0, MPFR_RNDN);
  // |y - x| = 1/2: fraction exactly 1/2, in the bin (1/4, 1/2].
  BoundFraction f = MeasureBoundFraction(x.get(), 1, 4.5f, bound);
  EXPECT_EQ(f.fraction, 0.5);
  EXPECT_EQ(BoundFractionBound(f.bin), 0.5);
  EXPECT_FALSE(f.above_one);
  // |y - x| = 1: exactly at the bound, still <= 1.
  f = MeasureBoundFraction(x.get(), 1, 5.0f, bound);
  EXPECT_EQ(f.fraction, 1.0);
  EXPECT_EQ(BoundFractionBound(f.bin), 1.0);
  EXPECT_FALSE(f.above_one);
  // One ulp of 5 further: a bug.
  f = MeasureBoundFraction(x.get(), 1, std::nextafter(5.0f, 6.0f), bound);
  EXPECT_TRUE(f.above_one);
  EXPECT_EQ(f.bin, BoundFractionBoundCount());
  // Exact: 0.
  f = MeasureBoundFraction(x.get(), 1, 4.0f, bound);
  EXPECT_EQ(f.fraction, 0.0);
  EXPECT_EQ(f.bin, 0);
}

TEST(BoundFraction, UnderflowAllowanceCoversSubnormalProducts) {
  // p = q = 2^-75: p*q = 2^-150 rounds (a tie) to 0 in binary32, which is
  // computed as well as binary32 allows. Without U the bound would be
  // gamma_1 * 2^-150 and the fraction 2^24 - 1; with U = 1 * 2^-149 it is
  // (2^24 - 1) / (2^25 - 1), just below 1/2.
  ElementTerms terms;
  terms.vectors = {{0x1p-75f}, {0x1p-75f}};
  const ReductionOpInfo& op = *FindReductionOp("linear_bwd_input");
  const ElementExact exact = ReductionExact(op, terms);
  const float y = ReductionModelOutput(op, ExpectedReductionModel(op, op.variants[1], 4, false),
                                       terms);
  EXPECT_EQ(y, 0.0f);
  const BoundFraction f = MeasureBoundFraction(exact.numerator.get(), 1, y, exact.bound);
  EXPECT_EQ(f.fraction, (0x1p24 - 1) / (0x1p25 - 1));
  EXPECT_FALSE(f.above_one);
  ReductionBound no_underflow = Bound(0x1p-150, 1, 0, 0x1p-150);
  EXPECT_TRUE(MeasureBoundFraction(exact.numerator.get(), 1, y, no_underflow).above_one);
}

TEST(BoundFraction, OverflowIsExemptOnlyWhereAnIntermediateCouldOverflow) {
  MpfrNumber x(64);
  mpfr_set_d(x.get(), 0x1p100, MPFR_RNDN);
  const float inf = INFINITY;
  // Terms summing |.| to 2^128: the partial sums may overflow.
  BoundFraction f = MeasureBoundFraction(x.get(), 1, inf, Bound(0x1p128, 4, 0, 0x1p128));
  EXPECT_TRUE(f.overflow_exempt);
  EXPECT_FALSE(f.above_one);
  // Terms summing to 2^101: no intermediate can overflow, so inf is a bug.
  f = MeasureBoundFraction(x.get(), 1, inf, Bound(0x1p101, 4, 0, 0x1p101));
  EXPECT_FALSE(f.overflow_exempt);
  EXPECT_TRUE(f.above_one);
  // At the threshold 2^128 - 2^103, decided exactly: (1 + gamma_4) peak =
  // peak 2^24 / (2^24 - 4) is 2^128 for peak = 2^128 - 2^106 (exempt), and
  // below the threshold for peak = 2^128 - 2^106 - 2^104 (a NaN is a bug).
  const double at = 0x1p128 - 0x1p106, below = 0x1p128 - 0x1p106 - 0x1p104;
  f = MeasureBoundFraction(x.get(), 1, NAN, Bound(at, 4, 0, at));
  EXPECT_TRUE(f.overflow_exempt);
  f = MeasureBoundFraction(x.get(), 1, NAN, Bound(below, 4, 0, below));
  EXPECT_TRUE(f.above_one);
}

TEST(UlpErrorOfQuotient, DecidesRoundingNextToAMidpointExactly) {
  // x = 2^24 + 4/3: just above the midpoint 2^24 + 1 of 2^24 and 2^24 + 2
  // (ulp 2), so RN(x) = 2^24 + 2. Numerator 3 * 2^24 + 4, denominator 3.
  MpfrNumber numerator(64);
  mpfr_set_d(numerator.get(), 3 * 0x1p24 + 4, MPFR_RNDN);
  UlpError e = MeasureUlpErrorOfQuotient(numerator.get(), 3, 0x1p24f + 2);
  EXPECT_TRUE(e.correctly_rounded);
  EXPECT_EQ(e.ulp, 1.0 / 3.0);  // |2/3| / 2, correctly rounded to double
  EXPECT_EQ(e.bin, 1);          // (0, 0.5]
  e = MeasureUlpErrorOfQuotient(numerator.get(), 3, 0x1p24f);
  EXPECT_FALSE(e.correctly_rounded);
  EXPECT_EQ(e.ulp, 2.0 / 3.0);
  EXPECT_EQ(e.bin, 2);  // (0.5, 1]
  // A quotient that is dyadic after all: 6 / 4 = 1.5 exactly.
  mpfr_set_d(numerator.get(), 6, MPFR_RNDN);
  e = MeasureUlpErrorOfQuotient(numerator.get(), 4, 1.5f);
  EXPECT_TRUE(e.correctly_rounded);
  EXPECT_EQ(e.ulp, 0.0);
  EXPECT_EQ(e.bin, 0);
  // Agrees with the dyadic metric when the denominator is 1.
  mpfr_set_d(numerator.get(), 0.1, MPFR_RNDN);
  const UlpError dyadic = MeasureUlpError(numerator.get(), 0.1f);
  e = MeasureUlpErrorOfQuotient(numerator.get(), 1, 0.1f);
  EXPECT_EQ(e.ulp, dyadic.ulp);
  EXPECT_EQ(e.bin, dyadic.bin);
}

TEST(ExactHex, WritesOddIntegerTimesPowerOfTwo) {
  MpfrNumber x(64);
  mpfr_set_d(x.get(), 0.75, MPFR_RNDN);
  EXPECT_EQ(x.ToHexExact(), "0x1.8p-1");
  mpfr_set_d(x.get(), -40.0, MPFR_RNDN);
  EXPECT_EQ(x.ToHexExact(), "-0x1.4p+5");
  mpfr_set_zero(x.get(), -1);
  EXPECT_EQ(x.ToHexExact(), "-0x0p+0");
  mpfr_set_d(x.get(), 0x1p-149, MPFR_RNDN);
  mpfr_mul_d(x.get(), x.get(), 0x1p-149, MPFR_RNDN);  // 2^-298, exact
  EXPECT_EQ(x.ToHexExact(), "0x1p-298");
}

}  // namespace
}  // namespace ulpgate
