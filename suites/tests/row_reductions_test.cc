// The row reductions (RMSNorm, softmax, log-softmax, forward and backward;
// kernels/reductions/row_ops.h) on every target, variant and format: every
// kernel output equals its model's bit for bit (the variant's sequence over
// the binary32 emulation with the target's MulAdd and lane count), rows of
// several lengths (tails for 4, 8 and 16 lanes) read from misaligned
// addresses, and every output stays within its first-order bound (bound
// fraction <= 1) against the MPFR oracle. Smoke: two lengths; Sampled: more
// lengths and rows. Also: Highway's Log ported, every target's vector Log
// against the port, and the Exp/Log allowances of the bounds against MPFR.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/reductions/row_ops.h"
#include "kernels/registry.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "oracles/highway_math.h"
#include "oracles/reduction_bound.h"
#include "oracles/ulp_metric.h"
#include "suites/engine/reductions/row_models.h"
#include "suites/engine/reductions/row_oracle.h"
#include "suites/inputs/row_suites.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

const FloatFormat* const kFormats[] = {&kBinary32, &kBFloat16, &kBinary16};

// The worst of one (op, variant, format) over everything a test ran.
struct Worst {
  double ulp = 0;
  double fraction = 0;
  size_t outputs = 0;
};

// Runs every variant of `op` in `format` on `target` over a problem, checks
// bits and bounds, and folds the worst into `worst`.
void CheckProblem(const RowProblem& p, const TargetInfo& target,
                  std::map<std::string, Worst>& worst) {
  const RowOpInfo& op = *p.op;
  const FloatFormat& format = *p.format;
  const bool binary32 = format.bits == 32;
  const RowModel model = ExpectedRowModel(target.fused_muladd, target.f32_lanes);
  // Operands one element past an aligned start: misaligned for every vector.
  std::vector<std::vector<float>> f32(p.operands.size());
  std::vector<std::vector<uint16_t>> u16(p.operands.size());
  std::vector<const void*> pointers;
  std::vector<const float*> tensors;
  for (size_t k = 0; k < p.operands.size(); ++k) {
    const std::vector<float>& v = p.operands[k];
    f32[k].assign(v.size() + 1, 0.0f);
    std::copy(v.begin(), v.end(), f32[k].begin() + 1);
    u16[k].assign(v.size() + 1, 0);
    for (size_t i = 0; i < v.size(); ++i) {
      u16[k][i + 1] = static_cast<uint16_t>(EncodeBits(format, v[i]));
    }
    pointers.push_back(binary32 ? static_cast<const void*>(f32[k].data() + 1)
                                : static_cast<const void*>(u16[k].data() + 1));
    tensors.push_back(v.data());
  }
  std::vector<RowExact> exact;
  for (size_t r = 0; r < p.rows; ++r) {
    exact.push_back(ExactRow(op, RowOperandsOf(op, tensors, r, p.n), p.n, p.eps));
  }
  for (const RowVariant& variant : op.variants) {
    const RowKernel kernel = FindRowKernel(op.op, format.name, variant.name, target.bits);
    ASSERT_NE(kernel, nullptr) << op.name << " " << variant.name << " " << format.name;
    std::vector<float> out_f32(p.rows * p.n + 1);
    std::vector<uint16_t> out_u16(p.rows * p.n + 1);
    kernel(pointers.data(), binary32 ? static_cast<void*>(out_f32.data() + 1)
                                     : static_cast<void*>(out_u16.data() + 1),
           p.rows, p.n, p.eps);
    Worst& w = worst[std::string(op.name) + " " + std::string(variant.name) + " " + format.name];
    size_t mismatches = 0, above = 0;
    std::string first_mismatch, first_above;
    for (size_t r = 0; r < p.rows; ++r) {
      const RowOperands row = RowOperandsOf(op, tensors, r, p.n);
      const std::vector<float> expected = RowModelOutputs(op, variant, model, row, p.n, p.eps);
      for (size_t i = 0; i < p.n; ++i) {
        const size_t at = r * p.n + i;
        const float got = binary32 ? out_f32[at + 1]
                                   : static_cast<float>(DecodeBits(format, out_u16[at + 1]));
        const float want =
            binary32 ? expected[i] : static_cast<float>(RoundToFormat(format, expected[i]));
        const bool same = std::isnan(got) ? std::isnan(want)
                                          : FloatBits(got) == FloatBits(want);
        std::ostringstream where;
        where << op.name << " " << variant.name << " " << format.name << " on " << target.name
              << ", suite " << p.suite << " seed " << p.seed << " n " << p.n << " row " << r
              << " element " << i << ": got " << HexFloat(got) << " (" << BitsHex(got)
              << "), model " << model.Name(variant) << " " << HexFloat(want) << " ("
              << BitsHex(want) << "), exact " << exact[r].values[i].ToDecimal(20);
        if (!same && mismatches++ == 0) first_mismatch = where.str();
        const ReductionBound bound = RowBound(op, variant, exact[r], i, p.n);
        // The op's one bound holds every variant's (it only widens).
        const ReductionBound every = RowBoundOfEveryVariant(op, exact[r], i, p.n);
        if (every.roundings < bound.roundings ||
            mpfr_cmp(every.underflow.get(), bound.underflow.get()) < 0) {
          ADD_FAILURE() << where.str() << ": the op's bound is narrower than the variant's";
        }
        const BoundFraction f =
            MeasureBoundFraction(exact[r].values[i].get(), 1, got, bound, format);
        const UlpError ulp = MeasureUlpError(exact[r].values[i].get(), got, format);
        if (f.above_one && above++ == 0) {
          first_above = where.str() + ", bound fraction " + std::to_string(f.fraction) +
                        " with m = " + std::to_string(bound.roundings);
        }
        w.fraction = std::max(w.fraction, f.fraction);
        if (!ulp.special_mismatch) w.ulp = std::max(w.ulp, ulp.ulp);
        ++w.outputs;
      }
    }
    EXPECT_EQ(mismatches, 0u) << mismatches << " outputs differ from the model; first: "
                              << first_mismatch;
    EXPECT_EQ(above, 0u) << above << " outputs break the bound; first: " << first_above;
  }
}

void RunTier(const TargetInfo& target, const std::vector<size_t>& lengths, size_t rows,
             uint64_t seed) {
  std::map<std::string, Worst> worst;
  for (const RowOpInfo& op : RowOps()) {
    for (const FloatFormat* format : kFormats) {
      for (const std::string& suite : RowSuiteNames()) {
        for (size_t n : lengths) {
          CheckProblem(MakeRowProblem(op, *format, suite, seed, rows, n), target, worst);
        }
      }
    }
  }
  std::ostringstream summary;
  summary << "worst per op, variant and format on " << target.name << ":\n";
  for (const auto& [name, w] : worst) {
    summary << "  " << name << ": max ULP " << w.ulp << ", max bound fraction " << w.fraction
            << " (" << w.outputs << " outputs)\n";
  }
  std::printf("%s", summary.str().c_str());
  // The bounds are not vacuous: in f32 (where no output rounding to a
  // narrower format fills them) every variant's worst output uses at least
  // 1/64 of its bound (measured: 0.06 to 0.7), so a bound grown by two orders
  // of magnitude fails here.
  for (const auto& [name, w] : worst) {
    if (name.size() > 4 && name.compare(name.size() - 4, 4, " f32") == 0) {
      EXPECT_GE(w.fraction, 1.0 / 64) << name << " on " << target.name
                                      << ": the bound is far above every error";
    }
  }
}

class RowKernelsSmoke : public PerTargetTest {};
class RowKernelsSampled : public PerTargetTest {};

TEST_P(RowKernelsSmoke, MatchModelsAndStayWithinBounds) { RunTier(*GetParam(), {3, 17}, 5, 1); }

TEST_P(RowKernelsSampled, MatchModelsAndStayWithinBounds) {
  RunTier(*GetParam(), {1, 8, 33, 100, 256}, 10, 2);
}

// Rows of special values, kernels against models only (the bounds assume
// finite values): zeros of both signs, squares that overflow (2^70) and that
// underflow (2^-140), +inf in RMSNorm's x, -inf in softmax's (masked logits),
// a row that is -inf but for one element. NaN stays out: Highway 1.0.3's Exp
// gives 0 for NaN on the SIMD targets, NaN on SCALAR (kernels/
// vector_arith-inl.h), which no model tells apart.
class RowKernelsSpecials : public PerTargetTest {};
TEST_P(RowKernelsSpecials, MatchModelsBitForBit) {
  const TargetInfo& target = *GetParam();
  const RowModel model = ExpectedRowModel(target.fused_muladd, target.f32_lanes);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const size_t n = 19;
  const std::vector<std::vector<float>> rows = {
      std::vector<float>(n, 0.0f),
      {-0.0f, 0.0f, -0.0f, -0.0f, 0.0f, -0.0f, -0.0f, 0.0f, -0.0f, 0.0f,
       -0.0f, -0.0f, 0.0f, -0.0f, 0.0f, 0.0f, -0.0f, -0.0f, -0.0f},
      {0x1p70f, 1.0f, -2.0f, 0x1p70f, 3.0f, -0x1p70f, 0.5f, 1.0f, 2.0f, 0.25f,
       1.0f, 1.0f, -1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
      {0x1p-140f, -0x1p-141f, 0x1p-149f, 0.0f, 0x1p-130f, -0x1p-149f, 0x1p-140f, 0x1p-140f,
       0x1p-140f, 0x1p-140f, 0x1p-140f, 0x1p-140f, 0x1p-140f, 0x1p-140f, 0x1p-140f,
       0x1p-140f, 0x1p-140f, 0x1p-140f, -0x1p-140f},
      {1.0f, -kInf, 2.0f, -kInf, -kInf, 0.5f, -kInf, 3.0f, 1.0f, -kInf,
       -kInf, -1.0f, -kInf, 2.0f, -kInf, -kInf, 0.0f, -kInf, -kInf},
      {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, 7.0f,
       -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf, -kInf},
      {1.0f, kInf, 2.0f, 0.0f, -1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
       1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f},
  };
  for (const RowOpInfo& op : RowOps()) {
    const bool softmax_fwd = op.op == RowOp::kSoftmaxFwd || op.op == RowOp::kLogSoftmaxFwd;
    for (const FloatFormat* format : kFormats) {
      for (size_t r = 0; r < rows.size(); ++r) {
        const bool has_neg_inf = r == 4 || r == 5;
        if (has_neg_inf != softmax_fwd && (has_neg_inf || r == 6)) continue;  // see above
        // Every operand takes the row, in the format (g a constant row).
        std::vector<std::vector<float>> values(op.operands.size());
        std::vector<std::vector<uint16_t>> bits(op.operands.size());
        std::vector<const void*> pointers;
        std::vector<const float*> tensors;
        for (size_t k = 0; k < op.operands.size(); ++k) {
          for (size_t j = 0; j < n; ++j) {
            const float v = IsRowWeight(op, k) ? 0.75f : rows[r][j];
            values[k].push_back(static_cast<float>(RoundToFormat(*format, v)));
            bits[k].push_back(static_cast<uint16_t>(EncodeBits(*format, values[k].back())));
          }
          pointers.push_back(format->bits == 32 ? static_cast<const void*>(values[k].data())
                                                : static_cast<const void*>(bits[k].data()));
          tensors.push_back(values[k].data());
        }
        for (const RowVariant& variant : op.variants) {
          const RowKernel kernel = FindRowKernel(op.op, format->name, variant.name, target.bits);
          std::vector<float> out_f32(n);
          std::vector<uint16_t> out_u16(n);
          kernel(pointers.data(), format->bits == 32 ? static_cast<void*>(out_f32.data())
                                                     : static_cast<void*>(out_u16.data()),
                 1, n, kDefaultRmsNormEps);
          const std::vector<float> expected = RowModelOutputs(
              op, variant, model, RowOperandsOf(op, tensors, 0, n), n, kDefaultRmsNormEps);
          for (size_t i = 0; i < n; ++i) {
            const float got = format->bits == 32
                                  ? out_f32[i]
                                  : static_cast<float>(DecodeBits(*format, out_u16[i]));
            const float want = format->bits == 32
                                   ? expected[i]
                                   : static_cast<float>(RoundToFormat(*format, expected[i]));
            const bool same =
                std::isnan(got) ? std::isnan(want) : FloatBits(got) == FloatBits(want);
            EXPECT_TRUE(same) << op.name << " " << variant.name << " " << format->name << " on "
                              << target.name << ", special row " << r << " element " << i
                              << ": got " << HexFloat(got) << " (" << BitsHex(got) << "), model "
                              << model.Name(variant) << " " << HexFloat(want) << " ("
                              << BitsHex(want) << ")";
          }
        }
      }
    }
  }
}
ULPGATE_INSTANTIATE_PER_TARGET(RowKernelsSpecials);

// Where an intermediate overflows the bound holds the output only to be
// finite: RMSNorm of a row with x = 2^70 (its square +inf in binary32) gives
// y = 0 for every element, far from the exact value, and stays within the
// bound; the same row scaled to 2^40 overflows nothing and is held to the
// first-order bound, which 0 would break.
// log_softmax_bwd's y drawn at random, not a log-probability: exp(2^100)
// is beyond MPFR's range; the exact value and bound stay numbers (a stand-in
// far beyond every format), whether the sum of dy is zero or not.
TEST(RowBounds, ExponentialsBeyondMpfrsRangeStayNumbers) {
  const RowOpInfo& op = GetRowOp(RowOp::kLogSoftmaxBwd);
  for (const std::vector<float>& dy :
       {std::vector<float>{1.0f, -1.0f, 0.5f}, std::vector<float>{1.0f, -1.0f, 0.0f}}) {
    const std::vector<float> y = {0x1p100f, -0x1p100f, 2.0f};
    RowOperands row;
    row.dy = dy.data();
    row.y = y.data();
    const RowExact exact = ExactRow(op, row, y.size(), kDefaultRmsNormEps);
    for (size_t i = 0; i < y.size(); ++i) {
      const ReductionBound bound = RowBoundOfEveryVariant(op, exact, i, y.size());
      EXPECT_TRUE(exact.values[i].IsFinite() && mpfr_number_p(bound.abs_sum.get()) &&
                  mpfr_number_p(bound.underflow.get()) && mpfr_number_p(bound.peak.get()))
          << "element " << i;
      const float kernel_like = -std::numeric_limits<float>::infinity();
      EXPECT_NO_THROW(MeasureBoundFraction(exact.values[i].get(), 1, kernel_like, bound));
    }
  }
}

TEST(RowBounds, OverflowingIntermediatesHoldTheOutputOnlyToBeFinite) {
  const RowOpInfo& op = GetRowOp(RowOp::kRmsNormFwd);
  const std::vector<float> g(4, 1.0f);
  for (const float big : {0x1p70f, 0x1p40f}) {
    const std::vector<float> x = {big, 1.0f, -2.0f, 3.0f};
    RowOperands row;
    row.x = x.data();
    row.g = g.data();
    const RowExact exact = ExactRow(op, row, x.size(), kDefaultRmsNormEps);
    for (size_t i = 0; i < x.size(); ++i) {
      const ReductionBound bound = RowBoundOfEveryVariant(op, exact, i, x.size());
      const BoundFraction f = MeasureBoundFraction(exact.values[i].get(), 1, 0.0f, bound);
      EXPECT_EQ(f.above_one, big == 0x1p40f)
          << "x_0 = " << HexFloat(big) << ", output 0 at element " << i << ": bound fraction "
          << f.fraction;
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(RowKernelsSmoke);
ULPGATE_INSTANTIATE_PER_TARGET(RowKernelsSampled);

}  // namespace
}  // namespace ulpgate

namespace ulpgate {
namespace {

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// Highway's vector Log on this target against its port, bit for bit: every
// 4099th positive finite binary32 value (subnormals included) and every
// 1021st of [1, 2^21], log-softmax's sums.
class RowLogPort : public PerTargetTest {};
TEST_P(RowLogPort, VectorLogEqualsThePort) {
  const TargetInfo& target = *GetParam();
  const RowLogKernel log = FindRowLogKernel(target.bits);
  ASSERT_NE(log, nullptr);
  std::vector<float> in;
  for (uint32_t b = 1; b < 0x7f800000u; b += 4099) in.push_back(FromBits(b));
  for (uint32_t b = FloatBits(1.0f); b <= FloatBits(0x1p21f); b += 1021) in.push_back(FromBits(b));
  std::vector<float> out(in.size());
  log(in.data(), out.data(), in.size());
  size_t mismatches = 0;
  std::string first;
  for (size_t i = 0; i < in.size(); ++i) {
    const float port = HighwayLog(in[i], target.fused_muladd);
    if (FloatBits(port) != FloatBits(out[i]) && mismatches++ == 0) {
      first = "Log(" + HexFloat(in[i]) + ") on " + target.name + ": vector " + HexFloat(out[i]) +
              " (" + BitsHex(out[i]) + "), port " + HexFloat(port) + " (" + BitsHex(port) + ")";
    }
  }
  EXPECT_EQ(mismatches, 0u) << mismatches << " of " << in.size() << " differ; first: " << first;
}
ULPGATE_INSTANTIATE_PER_TARGET(RowLogPort);

// The bounds' allowances for Highway's Exp and Log (kExpAllowance,
// kLogAllowance u of relative error) hold on a sample, fused and not, against
// MPFR at 128 bits: every 65537th binary32 value of Exp's normal range
// [-87.3, 88.7] and of Log's [1, 2^21].
TEST(RowFunctionAllowances, HoldOnASample) {
  for (const bool fused : {false, true}) {
    double worst_exp = 0, worst_log = 0;
    const auto relative = [](float got, int (*f)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), float x) {
      MpfrNumber exact(128), arg(128, x), diff(128);
      f(exact.get(), arg.get(), MPFR_RNDN);
      if (mpfr_zero_p(exact.get())) return got == 0.0f ? 0.0 : 1e9;
      mpfr_sub(diff.get(), MpfrNumber(24, got).get(), exact.get(), MPFR_RNDN);
      mpfr_div(diff.get(), diff.get(), exact.get(), MPFR_RNDN);
      return std::fabs(mpfr_get_d(diff.get(), MPFR_RNDN)) * 0x1p24;
    };
    for (uint32_t b = 0; b < 0x80000000u; b += 65537) {
      for (const float x : {FromBits(b), -FromBits(b)}) {
        if (!(x >= -87.3f && x <= 88.7f)) continue;
        worst_exp = std::max(worst_exp, relative(HighwayExp(x, fused), mpfr_exp, x));
      }
    }
    for (uint32_t b = FloatBits(1.0f); b <= FloatBits(0x1p21f); b += 65537) {
      const float x = FromBits(b);
      worst_log = std::max(worst_log, relative(HighwayLog(x, fused), mpfr_log, x));
    }
    std::printf("fused %d: Exp %.4f u, Log %.4f u\n", fused, worst_exp, worst_log);
    EXPECT_LE(worst_exp, kExpAllowance);
    EXPECT_LE(worst_log, kLogAllowance);
    // Not vacuous: both are above one rounding somewhere.
    EXPECT_GT(worst_exp, 0.5);
    EXPECT_GT(worst_log, 0.5);
  }
}

}  // namespace
}  // namespace ulpgate
