// explain's numbers against hand-derived cases, and against the models and the
// exact arithmetic on sampled inputs it has never seen, for every variant and
// every target this CPU runs. (tools/python/recheck_explain.py re-derives the same
// numbers with no shared code; see suites/tests/CMakeLists.txt.)
#include "suites/investigate/explain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "oracles/exact.h"
#include "oracles/float_text.h"
#include "oracles/ieee_emulation.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"
#include "kernels/elementwise_ops.h"

namespace ulpgate {
namespace {

std::vector<const TargetInfo*> SupportedTargets() {
  std::vector<const TargetInfo*> targets;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.supported) targets.push_back(&t);
  }
  return targets;
}

const ExplainableOp& TanhBwdExplainable() { return *FindExplainableOp("tanh_bwd"); }

Explanation ExplainAll(float grad, float t) {
  return Explain(TanhBwdExplainable(), {grad, t}, {}, SupportedTargets());
}

std::string Where(const ExplainedCase& c) {
  return c.variant + "@" + c.target->name;
}

std::vector<const ExplainedCase*> CasesOf(const Explanation& x, const std::string& variant) {
  std::vector<const ExplainedCase*> cases;
  for (const ExplainedCase& c : x.cases) {
    if (c.variant == variant) cases.push_back(&c);
  }
  return cases;
}

// grad = 1.5, t = 1 - 2^-24 (0x1.fffffep-1), by hand:
//   t*t = 1 - 2^-23 + 2^-48, rounds down by 2^-48 to 1 - 2^-23: -2^-24 ULP of r
//     (ulp(r) = 2^-24 in [1/2, 1));
//   grad*r = 1.5 - 1.5*2^-23 = 1.5 - 3*2^-24, a tie between 1.5 - 2^-23 (odd)
//     and 1.5 - 2^-22 (even): rounds to 1.5 - 2^-22, -2^-24 = -0.5 ULP of p;
//   grad - p = 2^-22, exact;
//   exact value 1.5*(2^-23 - 2^-48) in [2^-23, 2^-22): ulp 2^-46, so the error
//     is (2^-22 - 1.5*2^-23 + 1.5*2^-48) / 2^-46 = 2^22 + 0.375 ULP.
// Contributions: E_0 = exact, E_1 = 1.5 - 1.5*(1 - 2^-23) = 1.5*2^-23
//   (+1.5*2^-48 = +0.375 ULP), E_2 = 2^-22 (+2^-24 = +2^22 ULP), E_3 = E_2 (0).
TEST(ExplainTest, MacUnfusedNearOneHandDerived) {
  const Explanation x = ExplainAll(1.5f, 0x1.fffffep-1f);
  EXPECT_EQ(x.exact.ToHexExact(), "0x1.7fffff4p-23");
  EXPECT_EQ(FloatBits(x.correctly_rounded), FloatBits(0x1.8p-23f));
  // kappa(t) = 2 t^2 / (1 - t^2), exact in double here (t^2 and 1 - t^2 fit).
  const double t2 = 1 - 0x1p-23 + 0x1p-48;
  EXPECT_DOUBLE_EQ(x.condition[0], 1.0);
  EXPECT_DOUBLE_EQ(x.condition[1], 2 * t2 / (1 - t2));
  for (const ExplainedCase* c : CasesOf(x, "mac_unfused")) {
    SCOPED_TRACE(Where(*c));
    EXPECT_EQ(c->traced_model, "mac_unfused");
    ASSERT_EQ(c->steps.size(), 3u);
    const auto& r = c->steps[0];
    const auto& p = c->steps[1];
    const auto& out = c->steps[2];
    EXPECT_EQ(r.step.expression, "t*t");
    EXPECT_EQ(p.step.expression, "grad*(t*t)");
    EXPECT_EQ(out.step.expression, "grad - grad*(t*t)");
    EXPECT_EQ(r.step.exact.ToHexExact(), "0x1.fffffc000002p-1");
    EXPECT_EQ(r.step.value.ToHexExact(), "0x1.fffffcp-1");
    EXPECT_DOUBLE_EQ(r.local_error_ulp, -0x1p-24);
    EXPECT_EQ(p.step.exact.ToHexExact(), "0x1.7ffffdp+0");
    EXPECT_EQ(p.step.value.ToHexExact(), "0x1.7ffffcp+0");
    EXPECT_DOUBLE_EQ(p.local_error_ulp, -0.5);
    EXPECT_EQ(out.step.value.ToHexExact(), "0x1p-22");
    EXPECT_DOUBLE_EQ(out.local_error_ulp, 0);
    EXPECT_DOUBLE_EQ(c->error.ulp, 0x1p22 + 0.375);
    EXPECT_DOUBLE_EQ(c->signed_error_ulp, 0x1p22 + 0.375);
    EXPECT_DOUBLE_EQ(r.contribution_ulp, 0.375);
    EXPECT_DOUBLE_EQ(p.contribution_ulp, 0x1p22);
    EXPECT_DOUBLE_EQ(out.contribution_ulp, 0);
    // Against the ideal 1.5*(1 - t^2), s's whole error shows at the output.
    EXPECT_DOUBLE_EQ(out.error_vs_ideal_ulp, 0x1p22 + 0.375);
    EXPECT_EQ(c->dominant_step, 1);
    EXPECT_EQ(c->amplifier_step, 2);
    EXPECT_DOUBLE_EQ(c->amplification, 0x1p23);
    EXPECT_NE(c->verdict.find("the rounding of grad*(t*t)"), std::string::npos) << c->verdict;
    EXPECT_NE(c->verdict.find("amplified about 8.39e+06 (2^23.0) times by the cancellation in grad - grad*(t*t)"),
              std::string::npos)
        << c->verdict;
    // kappa ~ 2^24 allows this much, but mulsub gets 0.375 ULP: the form matters.
    EXPECT_NE(c->verdict.find("ill-conditioned"), std::string::npos) << c->verdict;
    EXPECT_NE(c->verdict.find("the form matters"), std::string::npos) << c->verdict;
  }
  for (const ExplainedCase* c : CasesOf(x, "mac")) {
    SCOPED_TRACE(Where(*c));
    if (!c->target->fused_negmuladd) continue;
    // Fused: grad - grad*RN(t*t) = 1.5*2^-23 rounds once, exactly.
    EXPECT_EQ(c->traced_model, "mac_fused");
    ASSERT_EQ(c->steps.size(), 2u);
    EXPECT_EQ(c->steps[1].step.operation, "fma");
    EXPECT_EQ(c->steps[1].step.expression, "grad - grad*(t*t)");
    EXPECT_EQ(c->steps[1].step.exact.ToHexExact(), "0x1.8p-23");
    EXPECT_DOUBLE_EQ(c->steps[1].local_error_ulp, 0);
    EXPECT_DOUBLE_EQ(c->steps[0].contribution_ulp, 0.375);
    EXPECT_DOUBLE_EQ(c->error.ulp, 0.375);
  }
  for (const ExplainedCase* c : CasesOf(x, "mulsub")) {
    SCOPED_TRACE(Where(*c));
    // 1 - RN(t*t) = 2^-23 is exact (Sterbenz): only t*t's rounding remains.
    EXPECT_DOUBLE_EQ(c->error.ulp, 0.375);
    EXPECT_TRUE(c->error.correctly_rounded);
    EXPECT_EQ(c->dominant_step, 0);
  }
}

// grad = 1, t = 1/2 + 2^-13 (0x1.001p-1): t*t = 1/4 + 2^-13 + 2^-26, exactly
// half an ULP (ulp 2^-25 in [1/4, 1/2)) above 1/4 + 2^-13, whose last bit is
// even: the tie rounds down, -0.5 ULP of r. 1 - r = 3/4 - 2^-13 is exact and so
// is grad*s. The exact value 3/4 - 2^-13 - 2^-26 has ulp 2^-24, so the output
// is 2^-26 = +0.25 ULP off: the -0.5 ULP of r shrinks by ulp(r)/ulp(out) = 1/2
// and flips sign through 1 - r. The fused 1 - t*t rounds 3/4 - 2^-13 - 2^-26
// once, by +0.25 ULP, to the same value.
TEST(ExplainTest, MulSubTieOfSquareHandDerived) {
  const Explanation x = ExplainAll(1.0f, 0x1.001p-1f);
  EXPECT_EQ(x.exact.ToHexExact(), "0x1.7fefff8p-1");
  for (const ExplainedCase* c : CasesOf(x, "mulsub")) {
    SCOPED_TRACE(Where(*c));
    ASSERT_EQ(c->steps.size(), 3u);
    EXPECT_EQ(c->steps[1].step.expression, "1 - t*t");
    EXPECT_EQ(c->steps[2].step.expression, "grad*(1 - t*t)");
    EXPECT_EQ(c->steps[0].step.exact.ToHexExact(), "0x1.002001p-2");
    EXPECT_EQ(c->steps[0].step.value.ToHexExact(), "0x1.002p-2");
    EXPECT_DOUBLE_EQ(c->steps[0].local_error_ulp, -0.5);
    EXPECT_DOUBLE_EQ(c->steps[1].local_error_ulp, 0);
    EXPECT_DOUBLE_EQ(c->steps[2].local_error_ulp, 0);
    EXPECT_DOUBLE_EQ(c->steps[0].contribution_ulp, 0.25);
    EXPECT_DOUBLE_EQ(c->error.ulp, 0.25);
    EXPECT_TRUE(c->error.correctly_rounded);
    EXPECT_DOUBLE_EQ(c->amplification, 0.5);
    EXPECT_NE(c->verdict.find("correctly rounded"), std::string::npos) << c->verdict;
    EXPECT_NE(c->verdict.find("the rounding of t*t (-0.5 ULP of it)"), std::string::npos)
        << c->verdict;
    EXPECT_EQ(c->verdict.find("amplified"), std::string::npos) << c->verdict;
  }
  for (const ExplainedCase* c : CasesOf(x, "mulsub_fma")) {
    SCOPED_TRACE(Where(*c));
    if (!c->target->fused_negmuladd) continue;
    EXPECT_EQ(c->traced_model, "mulsub_fused");
    ASSERT_EQ(c->steps.size(), 2u);
    EXPECT_EQ(c->steps[0].step.operation, "fma");
    EXPECT_EQ(c->steps[0].step.expression, "1 - t*t");
    EXPECT_DOUBLE_EQ(c->steps[0].local_error_ulp, 0.25);
    EXPECT_DOUBLE_EQ(c->steps[0].contribution_ulp, 0.25);
    EXPECT_DOUBLE_EQ(c->error.ulp, 0.25);
  }
}

TEST(ExplainTest, ExactInputHasNoErrorAnywhere) {
  // t = 1/2: t*t = 1/4, 1 - 1/4 = 3/4, grad*(3/4) = 3/4: nothing rounds.
  const Explanation x = ExplainAll(1.0f, 0.5f);
  EXPECT_DOUBLE_EQ(x.condition[1], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(x.condition_total, 5.0 / 3.0);
  for (const ExplainedCase& c : x.cases) {
    SCOPED_TRACE(Where(c));
    EXPECT_EQ(c.error.ulp, 0);
    EXPECT_EQ(c.dominant_step, -1);
    for (const ExplainedStep& s : c.steps) {
      EXPECT_EQ(s.local_error_ulp, 0);
      EXPECT_EQ(s.contribution_ulp, 0);
    }
    EXPECT_EQ(c.verdict.rfind("exact", 0), 0u) << c.verdict;
  }
}

TEST(ExplainTest, SpecialMismatchNamesTheStepThatMadeTheNaN) {
  // grad = inf, t = 1/2: the op is inf*(3/4) = inf; the MAC form computes
  // inf - inf*(1/4) = NaN (docs/design.md "Numerics").
  const Explanation x = ExplainAll(std::numeric_limits<float>::infinity(), 0.5f);
  EXPECT_TRUE(x.exact.IsInf());
  EXPECT_TRUE(std::isnan(x.condition_total));
  for (const ExplainedCase* c : CasesOf(x, "mac")) {
    SCOPED_TRACE(Where(*c));
    EXPECT_TRUE(std::isnan(c->kernel_output));
    EXPECT_TRUE(c->error.special_mismatch);
    EXPECT_FALSE(c->contributions_defined);
    EXPECT_NE(c->verdict.find("special mismatch"), std::string::npos) << c->verdict;
    EXPECT_NE(c->verdict.find("NaN first appears at step"), std::string::npos) << c->verdict;
    EXPECT_NE(c->verdict.find("grad - grad*(t*t)"), std::string::npos) << c->verdict;
  }
  for (const ExplainedCase* c : CasesOf(x, "mulsub")) {
    SCOPED_TRACE(Where(*c));
    EXPECT_FALSE(c->error.special_mismatch);
    EXPECT_TRUE(c->error.correctly_rounded);
  }
}

TEST(ExplainTest, OnlyTheChosenVariantsAndTargets) {
  const TargetInfo& best = BestTarget();
  const Explanation x = Explain(TanhBwdExplainable(), {1.0f, 0.75f}, {"mulsub_fma"}, {&best});
  ASSERT_EQ(x.cases.size(), 1u);
  EXPECT_EQ(x.cases[0].variant, "mulsub_fma");
  EXPECT_EQ(x.cases[0].target, &best);
  EXPECT_THROW(Explain(TanhBwdExplainable(), {1.0f, 0.75f}, {"fused_mac"}, {&best}),
               std::invalid_argument);
  EXPECT_THROW(Explain(TanhBwdExplainable(), {1.0f}, {}, {&best}), std::invalid_argument);
}

// Every number explain reports, recomputed another way, on inputs from the
// random, domain and adversarial suites with a seed no other test uses.
TEST(ExplainTest, AgreesWithModelsAndExactArithmeticOnSampledInputs) {
  const std::vector<const TargetInfo*> targets = SupportedTargets();
  int inputs_checked = 0;
  for (const char* suite : {"random", "domain", "adversarial"}) {
    for (uint64_t i = 0; i < 40; ++i) {
      // Past the adversarial catalogue's head, into its structured families.
      const uint64_t index = std::string(suite) == "adversarial"
                                 ? TanhBwdAdversarialCatalogueSize() + 977 * i
                                 : i;
      const auto in = TanhBwdInput(suite, 0x5eed0e7a1a, index);
      const float grad = in[0], t = in[1];
      const Explanation x = Explain(TanhBwdExplainable(), {grad, t}, {}, targets);
      const MpfrNumber exact = TanhBwdExact(grad, t);
      ++inputs_checked;
      for (const ExplainedCase& c : x.cases) {
        std::ostringstream where;
        where << Where(c) << " grad=" << HexFloat(grad) << " t=" << HexFloat(t);
        SCOPED_TRACE(where.str());
        const UlpError e = MeasureUlpError(exact.get(), c.kernel_output);
        EXPECT_EQ(c.error.special_mismatch, e.special_mismatch);
        if (!e.special_mismatch) {
          EXPECT_EQ(c.error.ulp, e.ulp);
        }
        // The traced model is the kernel's, and the trace reproduces it.
        EXPECT_TRUE(SameFloat(c.model_output, TanhBwdModel(c.traced_model, grad, t)));
        ASSERT_FALSE(c.matching_models.empty()) << "kernel matches no model";
        EXPECT_TRUE(SameFloat(c.kernel_output, c.model_output));
        EXPECT_EQ(c.traced_model, c.expected_model);
        // E_0 is the sequence's exact value: the op's, for finite inputs.
        const int m = TanhBwdModelIndex(c.traced_model);
        const MpfrNumber sequence =
            TanhBwdVariantExact(kTanhBwdModels[m].sequence_of, grad, t);
        if (sequence.IsFinite()) {
          EXPECT_EQ(mpfr_cmp(c.sequence_exact.get(), sequence.get()), 0);
        }
        if (std::isfinite(grad) && std::isfinite(t)) {
          EXPECT_EQ(mpfr_cmp(c.sequence_exact.get(), exact.get()), 0);
        }
        ExactArith arith(kExactDefinitionPrecision);
        double contributions = 0;
        for (size_t k = 0; k < c.steps.size(); ++k) {
          const ExplainedStep& s = c.steps[k];
          // Each step rounds its own exact value once...
          EXPECT_TRUE(SameFloat(RoundToBinary32(s.step.exact.get()),
                                RoundToBinary32(s.step.value.get())));
          EXPECT_EQ(s.step.value.precision(), 24);
          // ... which is the operation on the previous steps' rounded values.
          const auto& v = s.step.operand_values;
          for (size_t o = 0; o < v.size(); ++o) {
            if (s.step.operand_steps[o] >= 0) {
              EXPECT_EQ(mpfr_cmp(v[o].get(), c.steps[s.step.operand_steps[o]].step.value.get()), 0);
            }
          }
          if (!s.step.exact.IsFinite()) continue;
          MpfrNumber want(24);
          if (s.step.operation == "mul") want = arith.Mul(v[0], v[1]);
          if (s.step.operation == "sub") want = arith.Sub(v[0], v[1]);
          if (s.step.operation == "fma") want = arith.NegMulAdd(v[0], v[1], v[2]);
          EXPECT_EQ(mpfr_cmp(s.step.exact.get(), want.get()), 0) << "step " << k + 1;
          if (c.contributions_defined) contributions += s.contribution_ulp;
        }
        if (c.contributions_defined) {
          // The contributions telescope to the signed error (each rounded to
          // double once, so equal up to a few double roundings).
          EXPECT_NEAR(contributions, c.signed_error_ulp,
                      1e-12 * std::max(1.0, std::fabs(c.signed_error_ulp)));
          if (c.dominant_step >= 0) {
            for (const ExplainedStep& s : c.steps) {
              EXPECT_LE(std::fabs(s.contribution_ulp),
                        std::fabs(c.steps[c.dominant_step].contribution_ulp));
            }
            // The amplifier is the later step, fed by the dominant one, that
            // magnifies relative errors most (none if none magnifies them).
            int amplifier = -1;
            double strongest = 1;
            for (const ExplainedStep& s : c.steps) {
              const auto& deps = s.step.depends_on;
              if (s.index > c.dominant_step &&
                  std::find(deps.begin(), deps.end(), c.dominant_step) != deps.end() &&
                  s.step.cancellation > strongest) {
                strongest = s.step.cancellation;
                amplifier = s.index;
              }
            }
            EXPECT_EQ(c.amplifier_step, amplifier);
          }
        }
      }
    }
  }
  EXPECT_EQ(inputs_checked, 120);
}

TEST(ExplainTest, JsonCarriesExactValues) {
  const Explanation x = ExplainAll(1.5f, 0x1.fffffep-1f);
  const nlohmann::ordered_json j = ExplanationJson(x);
  EXPECT_EQ(j["exact"]["hex"], "0x1.7fffff4p-23");
  EXPECT_EQ(j["inputs"]["t"]["bits"], "0x3f7fffff");
  ASSERT_EQ(j["cases"].size(), x.cases.size());
  const auto& first = j["cases"][0];
  EXPECT_EQ(first["steps"][0]["exact"]["hex"], "0x1.fffffc000002p-1");
  EXPECT_EQ(first["steps"][0]["expression"], "t*t");
}

TEST(MpfrNumberTest, ToHexExactIsNormalizedAndExact) {
  EXPECT_EQ(MpfrNumber(24, 0.75f).ToHexExact(), "0x1.8p-1");
  EXPECT_EQ(MpfrNumber(24, -3.0f).ToHexExact(), "-0x1.8p+1");
  EXPECT_EQ(MpfrNumber(24, 1.0f).ToHexExact(), "0x1p+0");
  EXPECT_EQ(MpfrNumber(24, 0x1p-149f).ToHexExact(), "0x1p-149");
  EXPECT_EQ(MpfrNumber(24, -0.0f).ToHexExact(), "-0x0p+0");
  EXPECT_EQ(MpfrNumber(24, std::numeric_limits<float>::infinity()).ToHexExact(), "inf");
  MpfrNumber wide(200, 1.0f);
  mpfr_add_d(wide.get(), wide.get(), 0x1p-100, MPFR_RNDN);
  EXPECT_EQ(wide.ToHexExact(), "0x1.0000000000000000000000001p+0");
}

// A factor is printed as a number a reader can add up: "kappa = 1 (grad) +
// 6391 (t) = 6392", never a rounded power of two ("2^13 = 6391"). The printed
// value, read back, is within its printed precision of the factor.
TEST(ExplainText, FactorsPrintTheirValue) {
  EXPECT_EQ(FormatFactor(6391.0), "6391");
  EXPECT_EQ(FormatFactor(6392.0), "6392");
  EXPECT_EQ(FormatFactor(1.0), "1");
  EXPECT_EQ(FormatFactor(729000.5), "7.29e+05 (2^19.5)");
  EXPECT_EQ(FormatFactor(std::ldexp(1.0, 60)), "1.15e+18 (2^60.0)");
  for (double v = 1.5; v < 1e15; v *= 1.37) {
    const std::string text = FormatFactor(v);
    const double printed = std::strtod(text.c_str(), nullptr);
    EXPECT_NEAR(printed, v, v * 5e-3) << text;
    const size_t power = text.find("(2^");
    if (power != std::string::npos) {
      EXPECT_NEAR(std::strtod(text.c_str() + power + 3, nullptr), std::log2(v), 0.05) << text;
    }
  }
}

// Every registered op is explainable: on its domain suite every kernel's
// output is traced through the model it follows (its expected one), the
// trace's output is the model's, and the contributions (with the constants')
// add up to the error.
TEST(ExplainEveryOp, TracesEveryKernelThroughItsModel) {
  std::vector<std::string> names;
  for (const ExplainableOp& op : ExplainableOps()) names.push_back(op.name);
  EXPECT_EQ(names.size(), ElementwiseOps().size());
  for (const ElementwiseOpInfo& info : ElementwiseOps()) {
    const ExplainableOp* op = FindExplainableOp(info.name);
    ASSERT_NE(op, nullptr) << info.name;
    const InputSet inputs = GenerateElementwiseSuite(info, kBinary32, "domain", 4, 40);
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<float> x(info.arity());
      for (size_t k = 0; k < info.arity(); ++k) x[k] = inputs.columns[k][i];
      const Explanation e = Explain(*op, x, {}, SupportedTargets());
      for (const ExplainedCase& c : e.cases) {
        SCOPED_TRACE(std::string(info.name) + " " + Where(c) + " input #" + std::to_string(i));
        EXPECT_EQ(c.expected_model, ExpectedModel(info, kBinary32, c.variant, *c.target));
        EXPECT_EQ(c.traced_model, c.expected_model);
        EXPECT_EQ(FloatBits(c.model_output), FloatBits(c.kernel_output));
        if (!c.contributions_defined) continue;
        // The steps' contributions and the sequence's own departure from
        // the op's value (its constants rounded: gelu's sqrt(2/pi) and
        // 0.044715) add up to the error.
        double sum = SignedUlpDifference(e.exact, c.sequence_exact, e.exact);
        if (info.exact_definition) {
          EXPECT_EQ(sum, 0.0);
        }
        for (const ExplainedStep& s : c.steps) sum += s.contribution_ulp;
        EXPECT_NEAR(sum, c.signed_error_ulp, 1e-6 * std::max(1.0, std::fabs(c.signed_error_ulp)));
      }
    }
  }
}

// gelu_bwd at x = -6 in PyTorch's sequence: the error is about 2.8e5 ULP, and
// explain puts it where it comes from: erf's own rounding (well under one
// ULP of erf), amplified by the cancellation in 1 + erf(x/sqrt 2); and says
// the input is well-conditioned, so the form is at fault.
TEST(ExplainEveryOp, GeluCancellationIsTheErfRoundingAmplified) {
  const ExplainableOp& op = *FindExplainableOp("gelu_bwd");
  const TargetInfo* target = SupportedTargets().front();
  const Explanation x = Explain(op, {1.0f, -6.0f}, {"torch"}, {target});
  ASSERT_EQ(x.cases.size(), 1u);
  const ExplainedCase& c = x.cases.front();
  EXPECT_GT(c.error.ulp, 1e5);
  EXPECT_LT(x.condition_total, 100);
  ASSERT_GE(c.dominant_step, 0);
  EXPECT_EQ(c.steps[c.dominant_step].step.operation, "erf");
  EXPECT_LT(std::fabs(c.steps[c.dominant_step].local_error_ulp), 1.0);
  ASSERT_GE(c.amplifier_step, 0);
  EXPECT_EQ(c.steps[c.amplifier_step].step.expression, "1 + erf(x*0.707106769)");
  EXPECT_NE(c.verdict.find("form, not the input"), std::string::npos) << c.verdict;
}

}  // namespace
}  // namespace ulpgate
