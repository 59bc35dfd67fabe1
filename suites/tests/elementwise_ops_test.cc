// Every registered elementwise op (kernels/ops/registered_ops.h), in every
// format, on every target: each kernel follows the model its target implies,
// bit for bit, on the op's suites; the spec's sequences all stand for the
// op's value; the models in the model language are the templates' models;
// the error bound is defined exactly where it should be.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "oracles/float_text.h"
#include "oracles/reduction_bound.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

const std::vector<const FloatFormat*>& Formats() {
  static const std::vector<const FloatFormat*> formats = {&kBinary32, &kBFloat16, &kBinary16};
  return formats;
}

std::string Describe(const ElementwiseOpInfo& op, const CaseResult& r, const InputSet& inputs) {
  std::ostringstream out;
  out << op.name << " " << r.variant << " (" << r.dtype << ") on " << r.target << ", suite "
      << r.suite << ": " << r.conformance.mismatches << " outputs differ from model "
      << r.conformance.expected_model;
  const int64_t i = r.conformance.first_mismatch_index;
  if (i >= 0) {
    out << "; the first at input #" << i << ":";
    for (size_t k = 0; k < op.arity(); ++k) {
      out << " " << op.operands[k].name << " = " << HexFloat(inputs.columns[k][i]);
    }
    if (!r.outputs.empty()) out << ", kernel " << HexFloat(r.outputs[i]);
  }
  return out.str();
}

// Every op in every format on one target: the kernels follow their models.
void ExpectConformance(const TargetInfo* target, size_t n) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    for (const FloatFormat* format : Formats()) {
      if (!RunsIn(op, *format)) continue;
      for (const SuiteInfo& suite : ElementwiseSuites(op)) {
        SCOPED_TRACE(std::string(op.name) + " " + format->name + " " + suite.name);
        const InputSet inputs = GenerateElementwiseSuite(op, *format, suite.name, 5, n);
        RunOptions options;
        options.format = format;
        options.targets = {target};
        options.keep_outputs = true;
        const std::vector<CaseResult> results = RunElementwise(op, inputs, options);
        EXPECT_EQ(results.size(), VariantNames(op, *format).size());
        for (const CaseResult& r : results) {
          EXPECT_EQ(r.conformance.expected_model, ExpectedModel(op, *format, r.variant, *target));
          EXPECT_EQ(r.conformance.mismatches, 0u) << Describe(op, r, inputs);
          EXPECT_EQ(r.n, inputs.size());
        }
      }
    }
  }
}

class ElementwiseConformance : public PerTargetTest {};

TEST_P(ElementwiseConformance, EveryOpFormatAndSuite) { ExpectConformance(GetParam(), 800); }

ULPGATE_INSTANTIATE_PER_TARGET(ElementwiseConformance);

// Every registered op has at least two f32 sequences and two models, and is
// found by its name; the ops the issue of op-genericity named are among them,
// in their order (an op registered since needs no line here).
TEST(ElementwiseOps, TheBuiltInOpsAreRegistered) {
  const std::vector<std::string> built_in = {"tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd",
                                             "gelu_tanh_bwd"};
  std::vector<std::string> names;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    if (std::find(built_in.begin(), built_in.end(), op.name) != built_in.end()) {
      names.emplace_back(op.name);
    }
    EXPECT_GE(op.variants.size(), 2u) << op.name;
    EXPECT_GE(op.models.size(), 2u) << op.name;
    EXPECT_EQ(FindElementwiseOp(op.name), &op);
  }
  EXPECT_EQ(names, built_in);
  EXPECT_EQ(FindElementwiseOp("gelu"), nullptr);
}

// The tiers written for one op are tanh_bwd's, as its spec declares; every
// other op takes the generic suites, MPFR truth and the staged sweep. The op
// commands take by default is the first registered.
TEST(ElementwiseOps, OwnTiersAreWhatTheSpecsDeclare) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const bool tanh_bwd = op.name == "tanh_bwd";
    EXPECT_EQ(op.own_tiers.suites, tanh_bwd) << op.name;
    EXPECT_EQ(op.own_tiers.two_double_exact, tanh_bwd) << op.name;
    EXPECT_EQ(op.own_tiers.vector_sweep, tanh_bwd) << op.name;
  }
  EXPECT_EQ(&DefaultElementwiseOp(), &ElementwiseOps().front());
}

// Every sequence of an op stands for the op's value: exactly for a ring
// definition, to the oracle's working precision for one with a function.
TEST(ElementwiseOps, EverySequenceIsTheOpsValue) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    const InputSet inputs = GenerateElementwiseSuite(op, kBinary32, "domain", 9, 300);
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<float> x(op.arity());
      for (size_t k = 0; k < op.arity(); ++k) x[k] = inputs.columns[k][i];
      const MpfrNumber exact = oracle.Exact(x.data());
      // The variants' sequences, then those only models evaluate.
      for (size_t v = 0; v < op.variants.size() + op.model_sequences.size(); ++v) {
        const std::string_view name = v < op.variants.size()
                                          ? op.variants[v].name
                                          : op.model_sequences[v - op.variants.size()].name;
        const MpfrNumber value = oracle.VariantExact(v, x.data());
        MpfrNumber difference(kElementwiseFunctionPrecision + 64);
        mpfr_sub(difference.get(), value.get(), exact.get(), MPFR_RNDN);
        mpfr_abs(difference.get(), difference.get(), MPFR_RNDN);
        // A sequence with a function multiplies by its constants as the
        // kernels round them (sqrt(2/pi), 0.044715, 1/sqrt(2) to binary32),
        // the op's value by the exact ones: each rounding moves a term by at
        // most 2^-24 of itself, a few of them 2^-20 of the terms' magnitude.
        // A wrong formula moves the value by the order of the terms.
        MpfrNumber allowed = oracle.TermMagnitude(x.data());
        mpfr_mul_2si(allowed.get(), allowed.get(), -20, MPFR_RNDN);
        if (op.exact_definition) {
          EXPECT_TRUE(mpfr_zero_p(difference.get())) << op.name << " " << name;
        } else {
          EXPECT_LE(mpfr_cmp(difference.get(), allowed.get()), 0)
              << op.name << " " << name << " at input #" << i;
        }
      }
    }
  }
}

// The models `check` runs as programs of the model language are, where a
// name is also a built-in model, that model bit for bit.
TEST(ElementwiseOps, ModelProgramsAreTheTemplatesModels) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    for (const FloatFormat* format : Formats()) {
      if (!RunsIn(op, *format)) continue;
      const std::vector<std::string> names = ModelNames(op, *format);
      const std::vector<ModelProgram> programs = ModelPrograms(op, *format);
      const InputSet inputs = GenerateElementwiseSuite(op, *format, "adversarial", 3, 2000);
      size_t compared = 0;
      for (const ModelProgram& program : programs) {
        const auto it = std::find(names.begin(), names.end(), program.name);
        if (it == names.end()) continue;
        const size_t m = static_cast<size_t>(it - names.begin());
        ++compared;
        uint64_t differ = 0;
        for (size_t i = 0; i < inputs.size(); ++i) {
          std::vector<float> x(op.arity());
          std::vector<double> wide(op.arity());
          for (size_t k = 0; k < op.arity(); ++k) wide[k] = x[k] = inputs.columns[k][i];
          const float model = ModelOutput(op, *format, m, x.data());
          const float evaluated = static_cast<float>(program.Evaluate(wide.data()));
          differ += !(SameFloat(model, evaluated) || (std::isnan(model) && std::isnan(evaluated)));
        }
        EXPECT_EQ(differ, 0u) << op.name << " " << format->name << " " << program.name;
      }
      if (op.name == "tanh_bwd") {
        EXPECT_GT(compared, 0u) << format->name;
      }
    }
  }
}

// The op's sequences with their functions free (FreeFunctionModels) hold
// the built-in models of those sequences: Highway's exp, erf and tanh are
// within an ULP or two of the functions, so every built-in model's output
// is one of its free form's (which a slip in a sequence's op_sequence text,
// or in its reading, breaks); and a free form does not hold what another
// form computes (the search is not so wide that any output fits).
TEST(ElementwiseOps, FreeFunctionModelsHoldTheTemplatesModels) {
  size_t ops_with_functions = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    for (const FloatFormat* format : Formats()) {
      if (!RunsIn(op, *format)) continue;
      const std::vector<ModelProgram> free = FreeFunctionModels(op, *format);
      if (op.name == "tanh_bwd" || op.name == "sigmoid_bwd") {
        EXPECT_TRUE(free.empty()) << op.name << ": no functions to free";
        continue;
      }
      ASSERT_FALSE(free.empty()) << op.name << " " << format->name;
      ops_with_functions += IsBinary32(*format);
      auto find = [&](const std::string& name) -> const ModelProgram* {
        for (const ModelProgram& p : free) {
          if (p.name == name) return &p;
        }
        return nullptr;
      };
      // The free form of each built-in model: its sequence, fused or not.
      auto form = [&](const ElementwiseModelInfo& m, const std::string& suffix) -> const ModelProgram* {
        const std::string base(m.sequence_of);
        if (const ModelProgram* p = find(base + suffix)) return p;
        return find(base + (m.fused ? "_fma" : "_nofma") + suffix);
      };
      const std::vector<std::string> names = ModelNames(op, *format);
      std::vector<std::pair<size_t, const ModelProgram*>> pairs;
      if (IsBinary32(*format)) {
        for (size_t m = 0; m < op.models.size(); ++m) pairs.emplace_back(m, form(op.models[m], ".free"));
      } else {
        const auto& infos = NarrowModelInfos(op, *format);
        for (size_t m = 0; m < infos.size(); ++m) {
          if (infos[m].kind == NarrowModelInfo::kOpmath) {
            pairs.emplace_back(m, form(op.models[infos[m].f32_model], "_opmath.free"));
          } else if (infos[m].kind == NarrowModelInfo::kPerOp) {
            const std::string variant(op.narrow_variants[infos[m].sequence].sequence);
            pairs.emplace_back(m, find(variant + "_per_op.free"));
          }
        }
      }
      ASSERT_FALSE(pairs.empty()) << op.name << " " << format->name;
      const InputSet inputs = GenerateElementwiseSuite(op, *format, "adversarial", 5, 1500);
      for (const auto& [m, program] : pairs) {
        ASSERT_NE(program, nullptr) << op.name << " " << format->name << " " << names[m] << ": no free form";
        uint64_t outside = 0, other_outside = 0;
        for (size_t i = 0; i < inputs.size(); ++i) {
          std::vector<float> x(op.arity());
          std::vector<double> wide(op.arity());
          for (size_t k = 0; k < op.arity(); ++k) wide[k] = x[k] = inputs.columns[k][i];
          const double model = ModelOutput(op, *format, m, x.data());
          const double toward = program->EvaluateToward(wide.data(), model);
          outside += !(SameFloat(static_cast<float>(toward), static_cast<float>(model)) ||
                       (std::isnan(model) && std::isnan(toward)));
          // The other forms of the format, for the second claim.
          for (const ModelProgram& other : free) {
            if (&other == program || other.text == program->text) continue;
            const double o = other.EvaluateToward(wide.data(), model);
            other_outside += !(SameFloat(static_cast<float>(o), static_cast<float>(model)) ||
                               (std::isnan(model) && std::isnan(o)));
          }
        }
        EXPECT_EQ(outside, 0u) << op.name << " " << format->name << " " << names[m] << " outside "
                               << program->name << " (" << program->text << ")";
        if (free.size() > 1) {
          EXPECT_GT(other_outside, 0u) << op.name << " " << format->name << " " << names[m]
                                       << ": every free form holds it";
        }
      }
    }
  }
  EXPECT_EQ(ops_with_functions, 3u);  // silu_bwd, gelu_bwd, gelu_tanh_bwd
}

// Staged models (the sweep's tier for ops other than tanh_bwd): the chain
// staged at the trailing operands, applied to the first, is ModelOutput bit
// for bit (NaN canonical), on every op, format and model; and the ops whose
// sequences only scale grad stage every model of every format.
TEST(ElementwiseOps, StagedModelsAreTheModels) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    for (const FloatFormat* format : Formats()) {
      if (!RunsIn(op, *format)) continue;
      const std::vector<std::string> names = ModelNames(op, *format);
      for (const char* suite : {"adversarial", "random"}) {
        const InputSet inputs = GenerateElementwiseSuite(op, *format, suite, 11, 3000);
        for (size_t m = 0; m < names.size(); ++m) {
          uint64_t staged = 0, differ = 0;
          for (size_t i = 0; i < inputs.size(); ++i) {
            std::vector<float> x(op.arity());
            for (size_t k = 0; k < op.arity(); ++k) x[k] = inputs.columns[k][i];
            const auto chain = StageModelOutput(op, *format, m, x.data());
            if (!chain) continue;
            ++staged;
            StagedColumns columns;
            columns.steps = chain->steps;
            for (size_t s = 0; s < chain->steps.size(); ++s) {
              columns.c.push_back({chain->c[s]});
              columns.d.push_back({chain->d[s]});
            }
            const auto bits = static_cast<uint16_t>(EncodeBits(*format, x[0]));
            float out = 0;
            ApplyStagedModel(op, *format, m, columns, 0, true, &x[0], &bits, 1, &out);
            const float model = CanonicalNan(ModelOutput(op, *format, m, x.data(), true));
            differ += FloatBits(out) != FloatBits(model);
          }
          EXPECT_EQ(differ, 0u) << op.name << " " << format->name << " " << names[m] << " " << suite;
          // Every model of the ops that only scale grad stages; tanh_bwd's
          // two-rounding MAC form (grad - grad*r: grad used twice) does not.
          if (op.name != "tanh_bwd") {
            EXPECT_EQ(staged, inputs.size()) << op.name << " " << format->name << " " << names[m];
          }
        }
      }
    }
  }
}

// The staged exact value: Exact(g, rest) = g * ExactFactor(rest), to within
// the 320-bit roundings of Exact for a definition that calls a function and
// exactly for a ring definition, NaN, infinities and zero signs alike.
TEST(ElementwiseOps, ExactFactorScalesTheFirstOperand) {
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    const ElementwiseOracle& oracle = OracleOf(op);
    const InputSet inputs = GenerateElementwiseSuite(op, kBinary32, "adversarial", 4, 3000);
    uint64_t differ = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<float> x(op.arity());
      for (size_t k = 0; k < op.arity(); ++k) x[k] = inputs.columns[k][i];
      const auto f = oracle.ExactFactor(x.data());
      ASSERT_TRUE(f.has_value()) << op.name;
      const MpfrNumber exact = oracle.Exact(x.data());
      MpfrNumber scaled(mpfr_get_prec(f->get()) + 24);
      mpfr_mul_d(scaled.get(), f->get(), x[0], MPFR_RNDN);  // exact: 24 bits more
      bool same;
      if (mpfr_nan_p(exact.get()) || mpfr_nan_p(scaled.get())) {
        same = mpfr_nan_p(exact.get()) && mpfr_nan_p(scaled.get());
      } else if (mpfr_inf_p(exact.get()) || mpfr_zero_p(exact.get())) {
        same = mpfr_equal_p(exact.get(), scaled.get()) &&
               mpfr_signbit(exact.get()) == mpfr_signbit(scaled.get());
      } else if (x[0] != 0 && !mpfr_zero_p(f->get()) &&
                 (mpfr_get_exp(exact.get()) < mpfr_get_emin() / 2 ||
                  mpfr_get_exp(f->get()) + 128 < mpfr_get_emin() / 2)) {
        // Beyond MPFR's exponent range the oracle holds a value at the least
        // number of its sign (oracles/exact.h), so g * f and the value agree in
        // sign and in lying far below every format, not in their bits.
        same = mpfr_sgn(exact.get()) == mpfr_sgn(f->get()) * (x[0] < 0 ? -1 : 1) &&
               mpfr_get_exp(exact.get()) < mpfr_get_emin() / 2;
      } else if (op.exact_definition) {
        same = mpfr_equal_p(exact.get(), scaled.get());
      } else {
        MpfrNumber d(64);
        mpfr_sub(d.get(), exact.get(), scaled.get(), MPFR_RNDN);
        mpfr_div(d.get(), d.get(), exact.get(), MPFR_RNDN);
        same = mpfr_zero_p(d.get()) || mpfr_get_exp(d.get()) <= -316;
      }
      differ += !same;
    }
    EXPECT_EQ(differ, 0u) << op.name;
  }
}

// Far in the tails the exact value leaves MPFR's exponent range (exp(-x^2/2)
// at x = -2^121 is about 2^-(2^241)); it must still be a nonzero number of the
// right sign, or a kernel's correctly signed zero reads as a mismatch. Every
// op whose definition calls a function (exp, erf, tanh: not exact) is held
// there, its sign the one it has at x = -64, inside the range: gelu's
// Phi(x) + x phi(x) ~ phi(x) (x + 1/|x|), silu's s (1 + x (1 - s)) ~ s (1 + x)
// and the tanh form's derivative all tend to 0 from below (grad = 1).
TEST(ElementwiseOps, ExactValuesBeyondMpfrsRangeKeepTheirSign) {
  size_t held = 0;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    if (op.exact_definition) continue;
    ASSERT_EQ(op.arity(), 2u) << op.name << ": this test takes (grad, x); write its operands";
    ++held;
    const ElementwiseOracle& oracle = OracleOf(op);
    for (const float grad : {1.0f, -1.0f, 0x1p-149f}) {
      const float inside[2] = {grad, -64.0f};
      const MpfrNumber reference = oracle.Exact(inside);
      ASSERT_TRUE(mpfr_regular_p(reference.get())) << op.name;
      for (const float x : {-0x1p121f, -0x1p127f, -3.4028235e38f, -0x1p40f}) {
        const float operands[2] = {grad, x};
        const MpfrNumber exact = oracle.Exact(operands);
        SCOPED_TRACE(std::string(op.name) + " grad " + std::to_string(grad) + " x " +
                     std::to_string(x));
        EXPECT_TRUE(mpfr_regular_p(exact.get()));
        EXPECT_EQ(mpfr_sgn(exact.get()), mpfr_sgn(reference.get()));
      }
    }
  }
  EXPECT_GE(held, 3u);  // gelu_bwd, gelu_tanh_bwd and silu_bwd at least
}

// The error bound: none where an operand is infinite or NaN or the terms
// leave MPFR's exponent range (exp of a large operand); a finite bound
// elsewhere; and the bound fraction refuses values that are not numbers
// rather than computing with them.
TEST(ElementwiseOps, BoundOnlyWhereTheTermsAreFinite) {
  const ElementwiseOpInfo& gelu = *FindElementwiseOp("gelu_bwd");
  const ElementwiseOpInfo& sigmoid = *FindElementwiseOp("sigmoid_bwd");
  const float inf = INFINITY;
  const float finite[2] = {1.5f, -3.0f};
  ASSERT_TRUE(ElementwiseBound(gelu, finite, kBinary32).has_value());
  EXPECT_TRUE(mpfr_number_p(ElementwiseBound(gelu, finite, kBinary32)->abs_sum.get()));
  const float infinite_grad[2] = {inf, 0.5f};
  EXPECT_FALSE(ElementwiseBound(gelu, infinite_grad, kBinary32).has_value());
  const float nan_operand[2] = {1.0f, NAN};
  EXPECT_FALSE(ElementwiseBound(sigmoid, nan_operand, kBFloat16).has_value());

  MpfrNumber x(64);
  mpfr_set_inf(x.get(), 1);
  const float ok[2] = {1.0f, 0.5f};
  const ReductionBound bound = *ElementwiseBound(sigmoid, ok, kBinary32);
  EXPECT_THROW(MeasureBoundFraction(x.get(), 1, 1.0f, bound), std::invalid_argument);
}

}  // namespace
}  // namespace ulpgate
