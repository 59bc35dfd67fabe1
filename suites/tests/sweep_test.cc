// sweep: the fast path (the vectorized exact tier) writes the report of the
// reference path (the engine, MPFR and the emulated models) byte for byte, on
// ranges of every domain and format chosen for what is hard (NaN and infinite
// operands, exact zeros and their signs, subnormals, overflow, triple-double
// exact values, ranges cut inside blocks and tiles, every variant on every
// target this CPU runs); a range spanning several blocks gives what one run of
// the engine over the same inputs gives; shards cover the range, cut at
// blocks; a report reads back to the same report; merging reports of the
// shards gives the report of the whole. ULPGATE_SWEEP_REFERENCE_SCALE
// lengthens the compared ranges (4 times the listed lengths by default; the
// exhaustive label runs them 256 times, 25 million inputs in all).
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/sweep/sweep.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "oracles/float_text.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {
namespace {

// Not block-aligned at either end: four blocks, two of them partial.
constexpr uint64_t kBegin = 0x3f7f1234, kEnd = 0x3f82abcd;

SweepOptions Options(uint64_t begin, uint64_t end) {
  SweepOptions o;
  o.op = &TanhBwdOp();
  o.domain = MakeSweepDomain(kBFloat16, SweepDomain::Kind::kPairs, {});
  o.begin = begin;
  o.end = end;
  o.variants = {"mulsub_per_op", "mac_opmath"};
  o.targets = {&CompiledTargets().front()};
  return o;
}

TEST(SweepTest, EqualsOneRunOfTheEngineOverTheSameInputs) {
  const SweepOptions o = Options(kBegin, kEnd);
  const SweepResult sweep = RunSweep(o);
  InputSet inputs;
  inputs.operand_names = {"grad", "t"};
  inputs.columns.assign(2, std::vector<float>(kEnd - kBegin));
  o.domain.Inputs(kBegin, kEnd - kBegin, inputs.columns[0].data(), inputs.columns[1].data());
  RunOptions run;
  run.format = o.domain.format;
  run.variants = o.variants;
  run.targets = o.targets;
  const std::vector<CaseResult> whole = RunTanhBwd(inputs, run);
  ASSERT_EQ(sweep.cases.size(), whole.size());
  for (size_t c = 0; c < whole.size(); ++c) {
    const SweepCase& s = sweep.cases[c];
    const CaseResult& r = whole[c];
    SCOPED_TRACE(r.variant);
    EXPECT_EQ(s.variant, r.variant);
    EXPECT_EQ(s.stats.n(), kEnd - kBegin);
    EXPECT_EQ(s.stats.counts(), r.stats.counts());
    EXPECT_EQ(s.stats.special_mismatch(), r.stats.special_mismatch());
    EXPECT_EQ(s.stats.correctly_rounded(), r.stats.correctly_rounded());
    EXPECT_EQ(s.stats.max_ulp(), r.stats.max_ulp());
    EXPECT_EQ(s.stats.max_index(), r.stats.max_index() + static_cast<int64_t>(kBegin));
    EXPECT_EQ(s.stats.Percentile(99), r.stats.Percentile(99));
    EXPECT_EQ(s.conformance.matching, r.conformance.matching);
    EXPECT_EQ(s.conformance.mismatches, r.conformance.mismatches);
    // Truncating 4 block sums to 2^-32 ULP moves the mean by < 4 * 2^-32 / n.
    EXPECT_NEAR(s.mean_ulp(), r.stats.mean_ulp(), 1e-12);
    EXPECT_GT(s.mean_ulp(), 0);
  }
}

struct RangeCase {
  const char* name;
  const FloatFormat* format;
  SweepDomain::Kind kind;
  std::vector<float> fixed;
  uint64_t begin, length;
};

void PrintTo(const RangeCase& c, std::ostream* out) { *out << c.name; }

uint64_t ReferenceScale() {
  const char* scale = std::getenv("ULPGATE_SWEEP_REFERENCE_SCALE");
  return scale != nullptr ? std::strtoull(scale, nullptr, 10) : 4;
}

class FastEqualsReference : public ::testing::TestWithParam<RangeCase> {};

// Runs o on the fast path and on the reference and requires the same report.
// Returns the fast path's result.
SweepResult ExpectFastEqualsReference(SweepOptions o, const std::string& name) {
  const SweepResult fast = RunSweep(o);
  o.reference = true;
  const SweepResult reference = RunSweep(o);
  const std::string fast_json = SweepJson(fast).dump(1);
  const std::string reference_json = SweepJson(reference).dump(1);
  if (fast_json != reference_json) {
    // The first differing line, with some context.
    size_t at = 0;
    while (at < fast_json.size() && fast_json[at] == reference_json[at]) ++at;
    const size_t from = fast_json.rfind("\"variant\"", at);
    ADD_FAILURE() << name << ": the fast path differs from the reference near\n"
           << fast_json.substr(from == std::string::npos ? 0 : from, at + 200 - std::min(at, from))
           << "\nreference:\n" << reference_json.substr(from == std::string::npos ? 0 : from,
                                                          at + 200 - std::min(at, from));
  }
  // Something was measured.
  EXPECT_FALSE(fast.cases.empty());
  if (!fast.cases.empty()) {
    EXPECT_EQ(fast.cases.front().stats.n(), o.end - o.begin);
  }
  return fast;
}

TEST_P(FastEqualsReference, ByteForByte) {
  const RangeCase& c = GetParam();
  SweepOptions o;
  o.op = &TanhBwdOp();
  o.domain = MakeSweepDomain(*c.format, c.kind, c.fixed);
  o.begin = c.begin;
  o.end = std::min(o.domain.size(), c.begin + c.length * ReferenceScale());
  ExpectFastEqualsReference(o, c.name);
}

constexpr auto kPairs = SweepDomain::Kind::kPairs;
constexpr auto kOverT = SweepDomain::Kind::kOverT;
constexpr auto kOverGrad = SweepDomain::Kind::kOverGrad;

INSTANTIATE_TEST_SUITE_P(
    Ranges, FastEqualsReference,
    ::testing::Values(
        // Blocks and tiles cut anywhere; grad = 1; t through +-1 (exact zeros).
        RangeCase{"bf16_grad_1", &kBFloat16, kPairs, {}, 0x3f7ff123, 0x1a00},
        RangeCase{"bf16_t_near_one", &kBFloat16, kPairs, {}, 0x40133f00, 0x200},
        RangeCase{"bf16_t_near_minus_one", &kBFloat16, kPairs, {}, 0xc013bf00, 0x200},
        // Infinite and NaN grads (blocks of specials), negative zero grads.
        RangeCase{"bf16_inf_nan_grad", &kBFloat16, kPairs, {}, 0x7f7fff00, 0x1200},
        RangeCase{"bf16_minus_zero_grad", &kBFloat16, kPairs, {}, 0x7fffff00, 0x1200},
        // Subnormal grads and t, overflow (t^2 beyond the range).
        RangeCase{"bf16_subnormal", &kBFloat16, kPairs, {}, 0x00077000, 0x1000},
        RangeCase{"bf16_overflow", &kBFloat16, kPairs, {}, 0x42005f00, 0x1400},
        RangeCase{"f16_grad_1", &kBinary16, kPairs, {}, 0x3bfff800, 0x1000},
        RangeCase{"f16_overflow", &kBinary16, kPairs, {}, 0x7bff5a00, 0x1000},
        RangeCase{"f16_inf_nan", &kBinary16, kPairs, {}, 0x7bfffc00, 0x800},
        RangeCase{"f16_nan_t", &kBinary16, kPairs, {}, 0x3c007b80, 0x1000},
        RangeCase{"f16_subnormal", &kBinary16, kPairs, {}, 0x03ff0300, 0x1000},
        // f32: grad = 1 (double-double exact values) through t = 1, tiny,
        // subnormal, huge (overflow to infinity), infinite and NaN t.
        RangeCase{"f32_grad_1_t_near_one", &kBinary32, kOverT, {1.0f}, 0x3f7ff800, 0x1000},
        RangeCase{"f32_grad_1_tiny_t", &kBinary32, kOverT, {1.0f}, 0x2a000000, 0x1000},
        RangeCase{"f32_grad_1_subnormal_t", &kBinary32, kOverT, {1.0f}, 0x007ff800, 0x1000},
        RangeCase{"f32_grad_1_overflow", &kBinary32, kOverT, {1.0f}, 0x5f7ff800, 0x1000},
        RangeCase{"f32_grad_1_inf_nan_t", &kBinary32, kOverT, {1.0f}, 0x7f7ffc00, 0x800},
        // f32: grads whose products with t^2 are not exact in a double
        // (triple-double exact values), negative, tiny and huge.
        RangeCase{"f32_triple_near_one", &kBinary32, kOverT, {0x1.234566p-3f}, 0x3f7ff800, 0x1000},
        RangeCase{"f32_triple_tiny_t", &kBinary32, kOverT, {-0x1.99999ap+1f}, 0x30000000, 0x1000},
        RangeCase{"f32_triple_huge_t", &kBinary32, kOverT, {0x1.fffffep+127f}, 0x3fffff00, 0x1000},
        RangeCase{"f32_triple_subnormal_grad", &kBinary32, kOverT, {0x1.7p-140f}, 0x3f7ffc00, 0x800},
        // Two fixed values (the index's high half), and every grad at t.
        RangeCase{"f32_two_grads", &kBinary32, kOverT, {1.0f, 0x1.8p-1f}, 0x13f7ffc00, 0x800},
        RangeCase{"f32_over_grad_t_one", &kBinary32, kOverGrad, {1.0f}, 0x7ffffc00, 0x800},
        RangeCase{"f32_over_grad_t_half", &kBinary32, kOverGrad, {0.5f}, 0x7f7ffc00, 0x800},
        RangeCase{"f32_over_grad_subnormal", &kBinary32, kOverGrad, {0x1.000002p-1f}, 0x807ffc00,
                  0x800}),
    [](const auto& p) { return std::string(p.param.name); });

// The staged tier of the other ops (every op but tanh_bwd): the same, per
// op, through the ranges where its decisions are hardest: x = 0 and tiny x
// (exact and near-exact values next to the outputs), the far negative tail
// (factors below 2^-600: signed zeros, underflowed errors), infinities and
// NaN, subnormal and huge grads, and f32 over grad.
struct StagedRangeCase {
  const char* op;
  RangeCase range;
};
void PrintTo(const StagedRangeCase& c, std::ostream* out) { *out << c.op << "_" << c.range.name; }

class StagedFastEqualsReference : public ::testing::TestWithParam<StagedRangeCase> {};

TEST_P(StagedFastEqualsReference, ByteForByte) {
  const StagedRangeCase& sc = GetParam();
  const RangeCase& c = sc.range;
  SweepOptions o;
  o.op = FindElementwiseOp(sc.op);
  ASSERT_NE(o.op, nullptr);
  o.domain = MakeSweepDomain(*c.format, c.kind, c.fixed,
                             {std::string(o.op->operands[0].name), std::string(o.op->operands[1].name)});
  o.begin = c.begin;
  o.end = std::min(o.domain.size(), c.begin + c.length * ReferenceScale());
  const SweepResult fast = ExpectFastEqualsReference(o, std::string(sc.op) + " " + c.name);
  if (c.kind == kOverT && OracleOf(*o.op).HasFastFactor()) {
    // The fast path ran per input, not the reference in its place: MPFR
    // computed the factors of few inputs, if any (the infinities).
    EXPECT_LE(fast.mpfr_exact_values, 2u) << c.name;
  }
}

std::vector<StagedRangeCase> StagedRanges() {
  const std::vector<RangeCase> ranges = {
      RangeCase{"bf16_grad_1_x_near_0", &kBFloat16, kPairs, {}, 0x3f7fffc0, 0x100},
      RangeCase{"bf16_grad_1_x_tail", &kBFloat16, kPairs, {}, 0x3f80c180, 0x100},
      RangeCase{"bf16_x_inf_nan", &kBFloat16, kPairs, {}, 0xbf807f40, 0x100},
      RangeCase{"bf16_grad_huge_to_inf", &kBFloat16, kPairs, {}, 0x7f7fffc0, 0x100},
      RangeCase{"bf16_grad_subnormal_x_tail", &kBFloat16, kPairs, {}, 0x0001c200, 0x100},
      RangeCase{"f16_grad_1", &kBinary16, kPairs, {}, 0x3c00bf80, 0x100},
      RangeCase{"f16_x_inf_nan", &kBinary16, kPairs, {}, 0xc3007bc0, 0x100},
      RangeCase{"f32_over_grad", &kBinary32, kOverGrad, {-3.5f}, 0x3f7fffc0, 0x100},
      RangeCase{"f32_over_grad_tail", &kBinary32, kOverGrad, {-30.0f, 0.0f}, 0x17fffffc0, 0x100},
  };
  std::vector<StagedRangeCase> all;
  for (const char* op : {"sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd"}) {
    for (const RangeCase& r : ranges) all.push_back({op, r});
  }
  // Every binary32 x at fixed grads, through FastFactor (gelu_tanh_bwd's,
  // sigmoid_bwd's):
  // each place its estimate changes formula (x = 0, |x| = 2^-30, 2u = +-1,
  // 250 and -650), the derivative's zero, F = 1, the window where the
  // estimate's bound is too loose and MPFR measures every output (2u near
  // 150), factors below 2^-600, infinities and NaNs, subnormal, huge and
  // negative grads, two grads; x next to 1 (sigmoid_bwd's zero), 250 and
  // -650 (silu_bwd's z = x at the thresholds).
  const std::vector<RangeCase> over_x = {
      RangeCase{"f32_x_zero_subnormal", &kBinary32, kOverT, {1.3f}, 0x00000000, 0x1000},
      RangeCase{"f32_x_minus_zero", &kBinary32, kOverT, {-3.5f}, 0x80000000, 0x1000},
      RangeCase{"f32_x_2to_minus30", &kBinary32, kOverT, {1.3f}, 0x307ff800, 0x1000},
      RangeCase{"f32_2u_one", &kBinary32, kOverT, {1.3f}, 0x3f1db6f8, 0x1000},
      RangeCase{"f32_2u_minus_one", &kBinary32, kOverT, {0x1.7p-140f}, 0xbf1db6f8, 0x1000},
      RangeCase{"f32_derivative_zero", &kBinary32, kOverT, {1.3f}, 0xbf40994f, 0x1000},
      RangeCase{"f32_f_crosses_one", &kBinary32, kOverT, {0x1.fffffep+127f}, 0x3f45e86f, 0x1000},
      RangeCase{"f32_x_near_one", &kBinary32, kOverT, {-0x1.8p-3f}, 0x3f7ff800, 0x1000},
      RangeCase{"f32_loose_window", &kBinary32, kOverT, {1.3f}, 0x4143a0b9, 0x1000},
      RangeCase{"f32_2u_250", &kBinary32, kOverT, {1.3f}, 0x416b2119, 0x1000},
      RangeCase{"f32_below_2to_minus600", &kBinary32, kOverT, {1.3f}, 0xc1980000, 0x1000},
      RangeCase{"f32_2u_minus_650", &kBinary32, kOverT, {-0x1p-20f}, 0xc1a4311a, 0x1000},
      RangeCase{"f32_x_huge_inf_nan", &kBinary32, kOverT, {1.3f}, 0x7f7ff800, 0x1000},
      RangeCase{"f32_x_minus_huge_inf_nan", &kBinary32, kOverT, {-3.5f}, 0xff7ff800, 0x1000},
      RangeCase{"f32_two_grads", &kBinary32, kOverT, {1.3f, 0x1.7p-140f}, 0x1bf40994f, 0x1000},
      RangeCase{"f32_x_250", &kBinary32, kOverT, {1.3f}, 0x4379f800, 0x1000},
      RangeCase{"f32_x_minus_650", &kBinary32, kOverT, {1.3f}, 0xc4227800, 0x1000},
  };
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    if (!OracleOf(op).HasFastFactor()) continue;
    for (const RangeCase& r : over_x) all.push_back({op.name.data(), r});
  }
  // GELU (erf)'s own switches (gelu_bwd_factor.h), shorter: MPFR's erfc takes
  // milliseconds there for the reference. Exactly 1 from x = 22, tiny where
  // the estimate falls below 2^-600 (from x = -0x1.cecd86p+4) and by a
  // formula from x = -32.
  const std::vector<RangeCase> gelu_x = {
      RangeCase{"f32_x_22", &kBinary32, kOverT, {1.3f}, 0x41afff80, 0x100},
      RangeCase{"f32_x_tiny_estimate", &kBinary32, kOverT, {-3.5f}, 0xc1e76643, 0x100},
      RangeCase{"f32_x_minus_32", &kBinary32, kOverT, {0x1.fffffep+127f}, 0xc1ffff80, 0x100},
  };
  for (const RangeCase& r : gelu_x) all.push_back({"gelu_bwd", r});
  return all;
}

INSTANTIATE_TEST_SUITE_P(StagedRanges, StagedFastEqualsReference, ::testing::ValuesIn(StagedRanges()),
                         [](const auto& p) {
                           return std::string(p.param.op) + "_" + p.param.range.name;
                         });

// mulsub on SCALAR, one ULP off where t's pattern ends in any of `positions`'
// low 12 bits: a kernel whose outputs differ from the other two-rounding
// targets' at chosen places of each 4096-input tile.
std::vector<uint32_t> g_perturbed;
ElementwiseKernel g_mulsub_scalar = nullptr;
void PerturbedMulsub(const void* const* in, void* result, size_t n) {
  g_mulsub_scalar(in, result, n);
  const float* t = static_cast<const float*>(in[1]);
  float* out = static_cast<float*>(result);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t low = FloatBits(t[i]) & 0xfff;
    if (std::find(g_perturbed.begin(), g_perturbed.end(), low) != g_perturbed.end()) {
      out[i] = std::nextafter(out[i], INFINITY);
    }
  }
}

// The fast path against the reference with mulsub on SCALAR perturbed.
void ExpectPerturbedSweepEqualsReference(const std::vector<uint32_t>& positions) {
  const TargetInfo& scalar = CompiledTargets().front();
  std::vector<const TargetInfo*> targets = {&scalar};
  for (const TargetInfo& t : CompiledTargets()) {
    if (&t != &scalar && t.supported && !t.fused_negmuladd) targets.push_back(&t);
  }
  if (targets.size() < 2) GTEST_SKIP() << "no runnable target beside SCALAR without FMA";
  // The registry keeps the first replacement for good: install it once, and
  // perturb nothing outside these tests.
  static const bool installed = [&] {
    g_mulsub_scalar = FindElementwiseKernel("tanh_bwd", "f32", "mulsub", scalar.bits);
    ReplaceElementwiseKernelForTesting("tanh_bwd", "f32", "mulsub", scalar.bits, &PerturbedMulsub);
    return true;
  }();
  (void)installed;
  g_perturbed = positions;
  SweepOptions o;
  o.op = &TanhBwdOp();
  o.domain = MakeSweepDomain(kBinary32, SweepDomain::Kind::kOverT, {1.0f});
  o.begin = 0x3f7fe000;
  o.end = 0x3f802000;
  o.variants = {"mulsub"};
  o.targets = targets;
  const SweepResult fast = RunSweep(o);
  o.reference = true;
  const SweepResult reference = RunSweep(o);
  g_perturbed.clear();
  EXPECT_EQ(SweepJson(fast).dump(1), SweepJson(reference).dump(1));
  // Each perturbed place of each of the 4 tiles is a mismatch on SCALAR only.
  EXPECT_EQ(fast.cases[0].conformance.mismatches, 4 * positions.size());
  EXPECT_EQ(fast.cases[1].conformance.mismatches, 0u);
}

// A case whose outputs differ from another's only at a tile's last input has
// statistics of its own (not those of the case it nearly equals).
TEST(SweepTest, OutputsDifferingOnlyAtATilesEndAreMeasuredApart) {
  ExpectPerturbedSweepEqualsReference({0xfff});
}

// Several mismatches with the expected model within one tile are all counted.
TEST(SweepTest, EveryMismatchWithinATileCounts) {
  ExpectPerturbedSweepEqualsReference({0x7ff, 0x800, 0xabc});
}

// Scale reuse (a staged op over 16-bit pairs): tiles at grads of one sign
// and significand measured once and scaled give the report of every tile
// measured, over ranges spanning several exponents of every significand:
// moderate grads (most tiles scaled), subnormal and tiny grads, huge grads
// into infinity and NaN, negative grads.
TEST(SweepTest, ScaleReuseGivesTheReportOfEveryTileMeasured) {
  struct Range {
    const char* op;
    const FloatFormat* format;
    uint64_t begin, end;
    bool mostly_scaled;
  };
  // (A 16-bit format's grads of one significand are 2^(p-1) patterns apart:
  // 128 in bf16, 1024 in f16, whose range here is one significand's pair.)
  for (const Range& r : {Range{"gelu_tanh_bwd", &kBFloat16, 0x3f800000, 0x40800000, true},
                         Range{"gelu_tanh_bwd", &kBFloat16, 0x00000000, 0x02000000, false},
                         Range{"silu_bwd", &kBFloat16, 0x7e000000, 0x7fc10000, false},
                         Range{"silu_bwd", &kBFloat16, 0xbf800000, 0xc0800000, true},
                         Range{"sigmoid_bwd", &kBinary16, 0x3bff0000, 0x3c000000 + 0x4000000, false}}) {
    SCOPED_TRACE(std::string(r.op) + " " + r.format->name);
    SweepOptions o;
    o.op = FindElementwiseOp(r.op);
    ASSERT_NE(o.op, nullptr);
    o.domain = MakeSweepDomain(*r.format, SweepDomain::Kind::kPairs, {},
                               {std::string(o.op->operands[0].name), std::string(o.op->operands[1].name)});
    o.begin = r.begin;
    o.end = r.end;
    o.targets = {&BestTarget()};
    const SweepResult reused = RunSweep(o);
    o.scale_reuse = false;
    const SweepResult measured = RunSweep(o);
    EXPECT_EQ(SweepJson(reused).dump(1), SweepJson(measured).dump(1));
    EXPECT_EQ(measured.scaled_tiles, 0u);
    const uint64_t tiles = (r.end - r.begin + kSweepTile - 1) / kSweepTile;
    if (r.mostly_scaled) {
      EXPECT_GT(reused.scaled_tiles, tiles / 4);
    } else {
      EXPECT_GT(reused.scaled_tiles, 0u);
    }
  }
}

// A kernel one ULP off at a single input of a grad whose tiles would be
// scaled from another grad's: the sweep still sees it there, and only there.
uint16_t g_wrong_grad = 0, g_wrong_t = 0;
ElementwiseKernel g_gelu_tanh_opmath = nullptr;
void WrongAtOneInput(const void* const* in, void* result, size_t n) {
  g_gelu_tanh_opmath(in, result, n);
  const auto* grad = static_cast<const uint16_t*>(in[0]);
  const auto* t = static_cast<const uint16_t*>(in[1]);
  auto* out = static_cast<uint16_t*>(result);
  for (size_t i = 0; i < n; ++i) {
    if (grad[i] == g_wrong_grad && t[i] == g_wrong_t) ++out[i];
  }
}

TEST(SweepTest, ScaleReuseSeesAKernelWrongAtOneInputOfAScaledTile) {
  const TargetInfo& scalar = CompiledTargets().front();
  // The registry keeps the first replacement for good: wrong nowhere unless
  // g_wrong_grad is set, which only this test does.
  static const bool installed = [&] {
    g_gelu_tanh_opmath = FindElementwiseKernel("gelu_tanh_bwd", "bf16", "torch_opmath", scalar.bits);
    ReplaceElementwiseKernelForTesting("gelu_tanh_bwd", "bf16", "torch_opmath", scalar.bits,
                                       &WrongAtOneInput);
    return true;
  }();
  (void)installed;
  ASSERT_NE(g_gelu_tanh_opmath, nullptr);
  SweepOptions o;
  o.op = FindElementwiseOp("gelu_tanh_bwd");
  o.domain = MakeSweepDomain(kBFloat16, SweepDomain::Kind::kPairs, {}, {"grad", "x"});
  // grad 1, 2, 4, 8 (one significand) and every x: the tiles at 4 scale from 1's.
  o.begin = 0x3f800000;
  o.end = 0x41010000;
  o.variants = {"torch_opmath"};
  o.targets = {&scalar};
  const SweepResult clean = RunSweep(o);
  ASSERT_EQ(clean.cases.size(), 1u);
  EXPECT_EQ(clean.cases[0].conformance.mismatches, 0u);
  g_wrong_grad = 0x4080;  // 4
  g_wrong_t = 0x3f20;     // x = 0.625
  const SweepResult wrong = RunSweep(o);
  o.scale_reuse = false;
  const SweepResult measured = RunSweep(o);
  g_wrong_grad = 0;
  EXPECT_GT(clean.scaled_tiles, 0u);
  EXPECT_EQ(wrong.cases[0].conformance.mismatches, 1u);
  EXPECT_EQ(wrong.cases[0].conformance.first_mismatch_index, int64_t{0x40803f20});
  EXPECT_EQ(SweepJson(wrong).dump(1), SweepJson(measured).dump(1));
  EXPECT_NE(wrong.cases[0].digest, clean.cases[0].digest);
}

TEST(SweepTest, ShardsCoverTheRangeCutAtBlocks) {
  for (uint64_t n : {1, 2, 3, 4, 7, 100}) {
    uint64_t at = kBegin;
    for (uint64_t k = 0; k < n; ++k) {
      const auto [b, e] = SweepShard(kBegin, kEnd, k, n);
      EXPECT_EQ(b, at) << k << "/" << n;
      EXPECT_LE(b, e);
      if (b != kBegin) {
        EXPECT_EQ(b % kSweepBlock, 0u) << k << "/" << n;
      }
      at = e;
    }
    EXPECT_EQ(at, kEnd) << n;
  }
  EXPECT_THROW(SweepShard(kBegin, kEnd, 3, 3), InputError);
}

TEST(SweepTest, ShardsMergeIntoTheWholeAndReportsReadBack) {
  const SweepResult whole = RunSweep(Options(kBegin, kEnd));
  const nlohmann::ordered_json whole_json = SweepJson(whole);
  EXPECT_EQ(SweepJson(SweepFromJson("whole.json", whole_json)), whole_json);
  std::vector<std::pair<std::string, SweepResult>> parts;
  for (uint64_t k : {2, 0, 1}) {
    const auto [b, e] = SweepShard(kBegin, kEnd, k, 3);
    parts.emplace_back("shard" + std::to_string(k),
                       SweepFromJson("shard", SweepJson(RunSweep(Options(b, e)))));
  }
  EXPECT_EQ(SweepJson(MergeSweeps(parts)), whole_json);
  parts.pop_back();  // shard 1: a gap between 0 and 2
  EXPECT_THROW(MergeSweeps(parts), InputError);
}

TEST(SweepTest, DomainsEnumerateTheirInputs) {
  const SweepDomain pairs = MakeSweepDomain(kBinary16, SweepDomain::Kind::kPairs, {});
  float grad, t;
  pairs.Input(0x3c00c000, &grad, &t);  // f16 1.0 and -2.0
  EXPECT_EQ(grad, 1.0f);
  EXPECT_EQ(t, -2.0f);
  const SweepDomain over_t = MakeSweepDomain(kBinary32, SweepDomain::Kind::kOverT, {1.0f, 0.5f});
  EXPECT_EQ(over_t.size(), uint64_t{2} << 32);
  over_t.Input((uint64_t{1} << 32) | 0x3f800000, &grad, &t);
  EXPECT_EQ(grad, 0.5f);
  EXPECT_EQ(t, 1.0f);
  EXPECT_THROW(MakeSweepDomain(kBinary32, SweepDomain::Kind::kPairs, {}), InputError);
  EXPECT_THROW(MakeSweepDomain(kBFloat16, SweepDomain::Kind::kOverT, {1.0f}), InputError);
}

}  // namespace
}  // namespace ulpgate
