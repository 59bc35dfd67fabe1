// The model language (oracles/model_expr.h): its exact evaluation against
// MPFR, its errors, and the built-in models it prints against the templates.
#include "suites/tests/tanh_bwd_kernels.h"
#include "oracles/model_expr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "oracles/ieee_emulation.h"
#include "oracles/mpfr_number.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

const std::vector<std::string> kOperands = {"grad", "t"};
const FloatFormat* const kSmallFormats[] = {&kBinary32, &kBFloat16, &kBinary16};

bool SameValue(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Doubles that stress a rounding: random bit patterns over a wide exponent
// range, the format's values, its midpoints and their neighbours, overflow.
std::vector<double> RoundingProbes(const FloatFormat& f, std::mt19937_64& rng) {
  std::vector<double> xs;
  std::uniform_int_distribution<int> exponent(f.emin - f.precision - 3, f.emax + 2);
  for (int k = 0; k < 20000; ++k) {
    const double m = std::ldexp(static_cast<double>(rng() >> 11), -53);  // [0, 1)
    const double x = std::ldexp(1.0 + m, exponent(rng));
    const int q = std::max(exponent(rng), f.emin) - (f.precision - 1);
    const double value = std::ldexp(std::floor(std::ldexp(x, -q)), q);
    const double midpoint = value + std::ldexp(0.5, q);
    for (double y : {x, value, midpoint, std::nextafter(midpoint, 0.0),
                     std::nextafter(midpoint, INFINITY)}) {
      xs.push_back(y);
      xs.push_back(-y);
    }
  }
  const double largest = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax);
  const double threshold = std::ldexp(2.0 - std::ldexp(1.0, -f.precision), f.emax);
  // Far outside the format both ways: double subnormals, numbers near
  // binary64's largest.
  for (double y : {largest, threshold, std::nextafter(threshold, 0.0), 0.0, -0.0,
                   std::ldexp(1.0, f.emin - f.precision), std::ldexp(1.5, f.emin - f.precision),
                   std::ldexp(0.75, f.emin - f.precision), 0x1p-1074, 0x1.8p-1060, 0x1p-1022,
                   0x1.fffffffffffffp+1023, 0x1p+1000, 0x1.0000000000001p+300}) {
    xs.push_back(y);
    xs.push_back(-y);
  }
  return xs;
}

TEST(ModelExpr, RoundDoubleIsMpfrsRounding) {
  std::mt19937_64 rng(7);
  for (const FloatFormat* f : kSmallFormats) {
    for (double x : RoundingProbes(*f, rng)) {
      MpfrNumber exact(53);
      mpfr_set_d(exact.get(), x, MPFR_RNDN);
      ASSERT_TRUE(SameValue(RoundDouble(*f, x), RoundToFormat(*f, exact.get())))
          << f->name << " " << std::hexfloat << x;
      ASSERT_TRUE(SameValue(RoundDouble(*f, x, true), TruncateToFormat(*f, exact.get())))
          << f->name << " toward zero " << std::hexfloat << x;
    }
  }
}

TEST(ModelExpr, RoundPairRoundsTheExactSumOnce) {
  // 1 + 2^-11 is a midpoint of f16 (p = 11); 2^-80 above it the exact sum
  // rounds up, although the double nearest to it is the midpoint itself,
  // which rounds to even (down).
  const double mid = 1.0 + std::ldexp(1.0, -11);
  EXPECT_EQ(RoundDouble(kBinary16, mid), 1.0);
  EXPECT_EQ(RoundPair(kBinary16, mid, std::ldexp(1.0, -80)), 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(RoundPair(kBinary16, mid, -std::ldexp(1.0, -80)), 1.0);
  // Toward zero: a value of the format minus a little truncates below it.
  EXPECT_EQ(RoundPair(kBinary16, 1.0, -std::ldexp(1.0, -80), true), 1.0 - std::ldexp(1.0, -11));
  EXPECT_EQ(RoundPair(kBinary16, 1.0, std::ldexp(1.0, -80), true), 1.0);
}

// Each operation against FormatArith (MPFR, one rounding per operation) on
// random values of the formats, and on operands built to round twice when
// the sum is first rounded to a double.
TEST(ModelExpr, EveryOperationRoundsOnceInTheWorkingFormat) {
  std::mt19937_64 rng(11);
  for (const FloatFormat* working : kSmallFormats) {
    const std::string w = working->name;
    const std::vector<std::string> abc = {"a", "b", "c"};
    const ModelProgram add = ParseModel("add", "working " + w + "; out = a + b", abc, kBinary32);
    const ModelProgram sub = ParseModel("sub", "working " + w + "; out = a - b", abc, kBinary32);
    const ModelProgram mul = ParseModel("mul", "working " + w + "; out = a*b", abc, kBinary32);
    const ModelProgram fma = ParseModel("fma", "working " + w + "; out = fma(a, b, c)", abc, kBinary32);
    const FormatArith arith(*working, true);
    std::uniform_int_distribution<uint32_t> bits;
    std::uniform_int_distribution<int> shift(-40, 40);
    for (int k = 0; k < 200000; ++k) {
      double ops[3] = {0, 0, std::ldexp(1.0, -80)};
      for (int j = 0; j < 2; ++j) {
        double& v = ops[j];
        float x;
        do {
          const uint32_t b = bits(rng);
          std::memcpy(&x, &b, 4);
        } while (!std::isfinite(x));
        v = k % 2 ? x : std::ldexp(1.0 + std::ldexp(static_cast<double>(bits(rng) & 0xfff), -11),
                                   shift(rng));
        if (k % 2 == 0) v = static_cast<float>(v);
      }
      ASSERT_TRUE(SameValue(add.Evaluate(ops), RoundDouble(kBinary32, arith.Add(ops[0], ops[1]))))
          << w << std::hexfloat << " " << ops[0] << " + " << ops[1];
      ASSERT_TRUE(SameValue(sub.Evaluate(ops), RoundDouble(kBinary32, arith.Sub(ops[0], ops[1]))))
          << w << std::hexfloat << " " << ops[0] << " - " << ops[1];
      ASSERT_TRUE(SameValue(mul.Evaluate(ops), RoundDouble(kBinary32, arith.Mul(ops[0], ops[1]))))
          << w << std::hexfloat << " " << ops[0] << " * " << ops[1];
      ASSERT_TRUE(SameValue(fma.Evaluate(ops),
                            RoundDouble(kBinary32, arith.MulAdd(ops[0], ops[1], std::ldexp(1.0, -80)))))
          << w << std::hexfloat << " fma " << ops[0] << " " << ops[1];
    }
  }
}

TEST(ModelExpr, TruncationAndStorageRounding) {
  // Truncation drops the low bits: 1 + 2^-8 + 2^-9 in bf16 (p = 8) is
  // 1 + 2^-7 to nearest, 1 toward zero.
  const ModelProgram rz = ParseModel("rz", "out = bf16_rz(grad + t)", kOperands, kBinary32);
  const ModelProgram rn = ParseModel("rn", "out = bf16(grad + t)", kOperands, kBinary32);
  const double ops[2] = {1.0, std::ldexp(3.0, -9)};
  EXPECT_EQ(rz.Evaluate(ops), 1.0);
  EXPECT_EQ(rn.Evaluate(ops), 1.0 + std::ldexp(1.0, -7));
  // The result is rounded to the storage format once more.
  const ModelProgram stored = ParseModel("stored", "out = grad + t", kOperands, kBFloat16);
  EXPECT_EQ(stored.Evaluate(ops), 1.0 + std::ldexp(1.0, -7));
  // Python's grad - grad*t*t is (grad*t)*t: another model than grad*(t*t).
  const ModelProgram left = ParseModelSpec("mac_left: p = grad*t; out = fma(-p, t, grad)",
                                           kOperands, kBinary32);
  EXPECT_EQ(left.name, "mac_left");
  const double g[2] = {3.0, 0.5};
  EXPECT_EQ(left.Evaluate(g), 2.25);
}

std::string ErrorOf(const std::string& spec, size_t* column = nullptr) {
  try {
    ParseModelSpec(spec, kOperands, kBFloat16);
  } catch (const ModelSyntaxError& e) {
    if (column) *column = e.column();
    return e.what();
  }
  return "(parsed)";
}

TEST(ModelExpr, ErrorsNameTheColumn) {
  size_t column = 0;
  EXPECT_EQ(ErrorOf("m: out = grad*(t + 1", &column), "model 'm', column 21: expected ')', found the end");
  EXPECT_EQ(column, 21u);
  EXPECT_EQ(ErrorOf("m: out = grad*x"), "model 'm', column 15: unknown name 'x' (defined here: grad, t)");
  EXPECT_EQ(ErrorOf("m: r = t*t; out = fma(r, grad)"),
            "model 'm', column 19: fma() takes 3 arguments, got 2");
  EXPECT_EQ(ErrorOf("m: out = bf17(t)"),
            "model 'm', column 10: unknown function 'bf17' (fma, neg, sqrt, abs, copysign, min, max, if_less, scalb, "
            "exp, erf, tanh, log, or a format to round to, NAME or "
            "NAME_rz: f32, bf16, f16, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, "
            "float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, float8_e8m0fnu)");
  EXPECT_EQ(ErrorOf("m: working f32; out = t*0.1"),
            "model 'm', column 25: 0.1 is not a value of the working format f32");
  EXPECT_EQ(ErrorOf("m: out = t; working bf16"),
            "model 'm', column 13: 'working FORMAT' must be the first statement");
  EXPECT_EQ(ErrorOf("m: working f64; out = t"),
            "model 'm', column 12: unknown working format 'f64' (f32, bf16, f16, float8_e4m3fn, "
            "float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float6_e2m3fn, float6_e3m2fn, "
            "float4_e2m1fn, float8_e8m0fnu)");
  EXPECT_EQ(ErrorOf("m: r = t*t"), "model 'm', column 11: no 'out = ...': the model's result is out");
  EXPECT_EQ(ErrorOf("m: t = grad"), "model 'm', column 4: 't' is an operand: it cannot be assigned");
  EXPECT_EQ(ErrorOf("m: out = grad t"), "model 'm', column 15: expected ';', found 't'");
  EXPECT_EQ(ErrorOf("m:"), "model 'm', column 3: empty model: expected statements such as 'out = grad*t'");
  EXPECT_NE(ErrorOf("grad*t").find("expected NAME: statements"), std::string::npos);
}

// A number is the value its text writes, or an error: strtod's rounding
// must not turn a decimal that is no binary value (or one below double's
// range) into a value of the format.
TEST(ModelExpr, NumbersThatAreNoValueOfTheFormatAreRefused) {
  EXPECT_EQ(ErrorOf("m: out = t*1.00000000000000000001"),
            "model 'm', column 12: 1.00000000000000000001 is not a value of the working format f32");
  EXPECT_EQ(ErrorOf("m: out = t*0x1.00000000000001p0"),
            "model 'm', column 12: 0x1.00000000000001p0 is not a value of the working format f32");
  EXPECT_EQ(ErrorOf("m: out = t + 1e-400"),
            "model 'm', column 14: 1e-400 is not a value of the working format f32");
  EXPECT_EQ(ErrorOf("m: out = t + 0x1p-2000"),
            "model 'm', column 14: 0x1p-2000 is not a value of the working format f32");
  EXPECT_EQ(ErrorOf("m: working bf16; out = t*1.00390625"),
            "model 'm', column 26: 1.00390625 is not a value of the working format bf16");
  // Exact ones in every spelling still parse, and are the values they write.
  EXPECT_EQ(ErrorOf("m: out = t*0.5 + .25 + 2.5e-1 + 1. + 0x.8p1 + 0X1P+3 + 0x1p-149 + 0e99999"),
            "(parsed)");
  const ModelProgram largest =
      ParseModelSpec("m: out = 340282346638528859811704183484516925440 + 0x1p-149*t", kOperands,
                     kBinary32);
  const double zero[2] = {0.0, 0.0};
  EXPECT_EQ(largest.Evaluate(zero), 0x1.fffffep+127);
}

// A machine-written model nested thousands of levels deep is one error, not a
// stack overflow; kMaxModelNesting levels still parse.
TEST(ModelExpr, NestingPastTheLimitIsAnError) {
  const auto nested = [](int levels, const std::string& open, const std::string& close) {
    std::string text = "m: out = ";
    for (int i = 0; i < levels; ++i) text += open;
    text += "grad";
    for (int i = 0; i < levels; ++i) text += close;
    return text;
  };
  const std::vector<std::string> operands = {"grad", "t"};
  for (const auto& [open, close] : std::vector<std::pair<std::string, std::string>>{
           {"(", ")"}, {"neg(", ")"}, {"-", ""}}) {
    // Each level of text opens one of the parser's; the statement itself is one more.
    EXPECT_NO_THROW(ParseModelSpec(nested(kMaxModelNesting - 1, open, close), operands, kBinary32))
        << open;
    const std::string error = ErrorOf(nested(20000, open, close));
    EXPECT_NE(error.find("nested more than 200 levels deep"), std::string::npos) << open << error;
  }
}

// The printed models are the models: every built-in program equals the
// template's model of the same name on every suite of its format, and covers
// every template model but Highway's software f16 conversion.
TEST(ModelExpr, BuiltinExpressionsAreTheTemplateModels) {
  for (const FloatFormat* format : kSmallFormats) {
    const std::vector<ModelProgram> programs = TanhBwdModelPrograms(*format);
    const std::vector<std::string> names = TanhBwdModelNames(*format);
    std::vector<std::pair<size_t, const ModelProgram*>> pairs;
    for (size_t m = 0; m < names.size(); ++m) {
      for (const ModelProgram& p : programs) {
        if (p.name == names[m]) pairs.push_back({m, &p});
      }
      const bool soft = names[m].find("hwy_soft") != std::string::npos;
      EXPECT_TRUE(soft || (!pairs.empty() && pairs.back().first == m))
          << names[m] << " in " << format->name << " has no program";
    }
    for (const SuiteInfo& suite : TanhBwdSuites()) {
      const InputSet inputs = GenerateTanhBwdSuite(*format, suite.name, 1, 20000);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const double ops[2] = {inputs.columns[0][i], inputs.columns[1][i]};
        const std::vector<float> expected = TanhBwdModelOutputs(*format, inputs.columns[0][i],
                                                                inputs.columns[1][i]);
        for (const auto& [m, program] : pairs) {
          ASSERT_TRUE(SameValue(program->Evaluate(ops), expected[m]))
              << format->name << " " << suite.name << " #" << i << " " << program->name << ": "
              << program->text << std::hexfloat << " grad " << ops[0] << " t " << ops[1];
        }
      }
    }
  }
}

// a / b and sqrt(a) round once, as MPFR's correctly rounded ones do.
TEST(ModelExpr, DivisionAndSquareRootRoundOnce) {
  const std::vector<std::string> operands = {"grad", "t"};
  const ModelProgram div = ParseModel("d", "out = grad/t", operands, kBinary32);
  const ModelProgram root = ParseModel("r", "out = sqrt(grad)", operands, kBinary32);
  const ModelProgram narrow = ParseModel("n", "working bf16; out = grad/t", operands, kBinary32);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pick(0.001f, 1000.0f);
  for (int k = 0; k < 20000; ++k) {
    const float a = pick(rng), b = pick(rng);
    const double ops[2] = {a, b};
    MpfrNumber q(24), r(24), n(8);
    mpfr_div_d(q.get(), MpfrNumber(24, a).get(), b, MPFR_RNDN);
    mpfr_sqrt(r.get(), MpfrNumber(24, a).get(), MPFR_RNDN);
    mpfr_div_d(n.get(), MpfrNumber(24, RoundDouble(kBFloat16, a)).get(), RoundDouble(kBFloat16, b), MPFR_RNDN);
    ASSERT_EQ(div.Evaluate(ops), mpfr_get_d(q.get(), MPFR_RNDN)) << std::hexfloat << a << " / " << b;
    ASSERT_EQ(root.Evaluate(ops), mpfr_get_d(r.get(), MPFR_RNDN)) << std::hexfloat << a;
    const double bf[2] = {RoundDouble(kBFloat16, a), RoundDouble(kBFloat16, b)};
    ASSERT_EQ(narrow.Evaluate(bf), mpfr_get_d(n.get(), MPFR_RNDN)) << std::hexfloat << bf[0] << " / " << bf[1];
  }
}

// A free function stands for every binary32 within kModelFunctionUlps of the
// function: an output made with exp's value 3 ULPs off is followed, one made
// 5 ULPs off is not, and the values found are the ones that made it.
TEST(ModelExpr, FreeFunctionsAreSearchedWithinTheirUlps) {
  const std::vector<std::string> operands = {"grad", "x"};
  const ModelProgram m = ParseModel("m", "e = exp(-x); out = grad*e", operands, kBinary32);
  EXPECT_EQ(m.function_calls, 1);
  auto off = [](float v, int ulps) {
    for (; ulps > 0; --ulps) v = std::nextafter(v, INFINITY);
    for (; ulps < 0; ++ulps) v = std::nextafter(v, -INFINITY);
    return v;
  };
  const float grad = 1.0f;
  for (const float x : {0.75f, -3.5f, 10.25f, 0x1p-20f}) {
    const double ops[2] = {grad, x};
    const float nearest = static_cast<float>(std::exp(-static_cast<double>(x)));
    EXPECT_EQ(m.Evaluate(ops), nearest);
    for (const int ulps : {-4, -3, 1, 3, 4}) {
      const double target = off(nearest, ulps);
      EXPECT_EQ(m.EvaluateToward(ops, target), target) << x << " " << ulps;
      const auto values = m.FunctionValuesToward(ops, target, 10);
      ASSERT_EQ(values.size(), 1u);
      EXPECT_EQ(values[0][0].ulps, ulps);
      EXPECT_EQ(values[0][0].argument, -x);
      EXPECT_EQ(values[0][0].value, target);
    }
    for (const int ulps : {-6, 5, 100}) {
      const double target = off(nearest, ulps);
      EXPECT_EQ(m.EvaluateToward(ops, target), nearest) << x << " " << ulps;
      EXPECT_TRUE(m.FunctionValuesToward(ops, target, 10).empty());
    }
  }
  // In a narrower working format the binary32 value is rounded to it.
  const ModelProgram per_op = ParseModel("p", "working bf16; out = tanh(x)", operands, kBFloat16);
  const double ops[2] = {1, 0.5};
  EXPECT_EQ(per_op.Evaluate(ops), RoundDouble(kBFloat16, std::tanh(0.5)));
  // A model of no functions is Evaluate whatever the target.
  const ModelProgram plain = ParseModel("q", "out = grad*x", operands, kBinary32);
  EXPECT_EQ(plain.EvaluateToward(ops, 7.0), 0.5);
}

// abs, copysign, min, max and if_less are exact: a kernel's sign handling,
// clamps and branches. Each against the C library's answer (min and max as
// IEEE 754-2019's minimum and maximum on zeros and NaN), and an erf written
// inline by its branch on the sign of its argument.
TEST(ModelExpr, ExactFunctions) {
  const std::vector<std::string> operands = {"grad", "x"};
  auto eval = [&](const char* text, double grad, double x) {
    const double ops[2] = {grad, x};
    return ParseModel("m", text, operands, kBinary32).Evaluate(ops);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> values = {0.0, -0.0, 1.5, -1.5, 0x1p-149, -0x1p-149, 3.0, INFINITY, -INFINITY, nan};
  for (const double a : values) {
    for (const double b : values) {
      const auto same = [](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) || (x == y && std::signbit(x) == std::signbit(y));
      };
      EXPECT_TRUE(same(eval("out = abs(grad)", a, b), std::fabs(a))) << a;
      EXPECT_TRUE(same(eval("out = copysign(grad, x)", a, b), std::copysign(a, b))) << a << " " << b;
      double lo = std::isnan(a) || std::isnan(b) ? nan : a < b ? a : b < a ? b : std::signbit(a) ? a : b;
      double hi = std::isnan(a) || std::isnan(b) ? nan : a > b ? a : b > a ? b : std::signbit(a) ? b : a;
      EXPECT_TRUE(same(eval("out = min(grad, x)", a, b), lo)) << a << " " << b;
      EXPECT_TRUE(same(eval("out = max(grad, x)", a, b), hi)) << a << " " << b;
      EXPECT_TRUE(same(eval("out = if_less(grad, x, 1, 2)", a, b), a < b ? 1.0 : 2.0)) << a << " " << b;
    }
  }
  // No rounding: abs and a clamp keep every value of the format.
  EXPECT_EQ(eval("out = max(min(grad, 9), -9)", 0x1.fffffep+2, 0), 0x1.fffffep+2);
  EXPECT_EQ(eval("out = max(min(grad, 9), -9)", -12, 0), -9);
  // x < 0 ? -g(-x) : g(x) with g(v) = v*v + 1, as a sign branch writes it.
  const char* odd = "g = abs(x)*abs(x) + 1; out = if_less(x, 0, -g, g)";
  EXPECT_EQ(eval(odd, 0, -2), -5.0);
  EXPECT_EQ(eval(odd, 0, 2), 5.0);
  EXPECT_EQ(eval("out = copysign(abs(x)*abs(x) + 1, x)", 0, -2), -5.0);
  // They are no free functions: no search, no limit.
  const ModelProgram m =
      ParseModel("m", "out = exp(abs(x)) + erf(min(x, grad)) + tanh(max(x, 1)) + copysign(x, grad)", operands,
                 kBinary32);
  EXPECT_EQ(m.function_calls, 3);
  EXPECT_THROW(ParseModel("m", "out = if_less(x, grad, 1)", operands, kBinary32), ModelSyntaxError);
  EXPECT_THROW(ParseModel("m", "abs = x; out = abs", operands, kBinary32), ModelSyntaxError);
}

// scalb(a, n) is IEEE 754's scaleB: a*2^n rounded once, exact but where it
// overflows or lands among the subnormals; NaN where n is no integer. Against
// hand-computed values and the C library's ldexpf (scalbnf, which rounds once
// to nearest even), on every float class and exponents past both ends.
TEST(ModelExpr, Scalb) {
  const std::vector<std::string> operands = {"grad", "x"};
  const ModelProgram f32 = ParseModel("m", "out = scalb(grad, x)", operands, kBinary32);
  auto eval = [&](double a, double n) {
    const double ops[2] = {a, n};
    return f32.Evaluate(ops);
  };
  auto bits = [](double v) {
    const float f = static_cast<float>(v);
    uint32_t b = 0;
    std::memcpy(&b, &f, 4);
    return b;
  };
  // Normal results: exact, either sign of n.
  EXPECT_EQ(eval(1.5, 3), 12.0);
  EXPECT_EQ(eval(12, -3), 1.5);
  EXPECT_EQ(eval(-0x1.fffffep+0, -10), -0x1.fffffep-10);
  EXPECT_EQ(eval(1, 127), 0x1p+127);
  EXPECT_EQ(eval(0x1p-149, 149), 1.0);  // a subnormal scaled up
  EXPECT_EQ(eval(1, -126), 0x1p-126);
  // Among the subnormals (quantum 2^-149), rounded once to nearest even:
  // 1.5*2^-150 = 0.75 quantum rounds up; 2^-150, a tie, to +0 or -0;
  // (1 - 2^-24)*2^-126 = 2^-126 - 2^-150, a tie between 0x7fffff and 2^-126,
  // to the even 2^-126; 1.25 quanta down to one.
  EXPECT_EQ(eval(1.5, -150), 0x1p-149);
  EXPECT_EQ(bits(eval(1, -150)), 0x00000000u);
  EXPECT_EQ(bits(eval(-1, -150)), 0x80000000u);
  EXPECT_EQ(eval(0x1.fffffep-1, -126), 0x1p-126);
  EXPECT_EQ(eval(1.25, -149), 0x1p-149);
  EXPECT_EQ(eval(-0x1.8p-1, -126), -0x1.8p-127);  // exact: a subnormal of the format
  // Overflow to infinity.
  EXPECT_EQ(eval(1, 128), INFINITY);
  EXPECT_EQ(eval(0x1.fffffep+127, 1), INFINITY);
  EXPECT_EQ(eval(-1.5, 200), -INFINITY);
  EXPECT_EQ(eval(0x1p-149, 0x1p+100), INFINITY);   // n far past every exponent
  EXPECT_EQ(bits(eval(-0x1p+127, -0x1p+100)), 0x80000000u);
  // Zeros, infinities and NaN keep themselves.
  EXPECT_EQ(bits(eval(-0.0, 5)), 0x80000000u);
  EXPECT_EQ(eval(-INFINITY, -1000), -INFINITY);
  EXPECT_TRUE(std::isnan(eval(std::numeric_limits<double>::quiet_NaN(), 1)));
  // n no integer: NaN, as evaluation has no other way to refuse.
  EXPECT_TRUE(std::isnan(eval(1, 0.5)));
  EXPECT_TRUE(std::isnan(eval(1, -0x1.000002p+0)));
  EXPECT_TRUE(std::isnan(eval(1, INFINITY)));
  EXPECT_TRUE(std::isnan(eval(0, -INFINITY)));
  EXPECT_TRUE(std::isnan(eval(1, std::numeric_limits<double>::quiet_NaN())));
  // Against ldexpf on values of every class and every exponent that matters;
  // scaled back, so that the rounding is seen inside the model, not only in
  // the output's rounding to the storage format.
  const ModelProgram there_and_back = ParseModel("m", "s = scalb(grad, x); out = scalb(s, -x)", operands, kBinary32);
  for (const float a : {1.0f, -1.0f, 0x1.fffffep+127f, 0x1.000002p+0f, -0x1.7ffffep+0f, 0x1.800002p-3f,
                        0x1p-149f, -0x1.fffffcp-127f, 0x1.234568p-140f, 0x1.fffffep-1f, 3.0f, 0.0f, -0.0f}) {
    for (int n = -330; n <= 330; ++n) {
      const float want = std::ldexp(a, n);
      EXPECT_EQ(bits(eval(a, n)), bits(want)) << std::hexfloat << a << " " << std::dec << n;
      const double ops[2] = {a, static_cast<double>(n)};
      EXPECT_EQ(bits(there_and_back.Evaluate(ops)), bits(std::ldexp(want, -n)))
          << std::hexfloat << a << " " << std::dec << n;
    }
  }
  // The working format's rounding: bf16 has 8 bits, subnormals from 2^-133.
  const ModelProgram bf16 = ParseModel("b", "working bf16; out = scalb(grad, x)", operands, kBFloat16);
  const double in1[2] = {3, -135};  // 0.75*2^-133
  EXPECT_EQ(bf16.Evaluate(in1), 0x1p-133);
  const double in2[2] = {0x1.fep+0, 127};  // bf16's largest is 0x1.fep+127
  EXPECT_EQ(bf16.Evaluate(in2), 0x1.fep+127);
  const double in3[2] = {0x1.fep+0, 128};
  EXPECT_EQ(bf16.Evaluate(in3), INFINITY);
  // Inside the model, before the output's rounding: 3*2^-135 is 2^-133 in bf16.
  const ModelProgram bf16_back = ParseModel("b", "working bf16; s = scalb(grad, x); out = scalb(s, -x)", operands,
                                            kBFloat16);
  EXPECT_EQ(bf16_back.Evaluate(in1), 4.0);
  EXPECT_THROW(ParseModel("m", "out = scalb(x)", operands, kBinary32), ModelSyntaxError);
  EXPECT_THROW(ParseModel("m", "scalb = x; out = scalb", operands, kBinary32), ModelSyntaxError);
}

// `f(ARG) as EXPRESSION`: the value is the expression's, no value searched,
// and the call is listed with it among the function values.
TEST(ModelExpr, ImplementedFunctions) {
  const std::vector<std::string> operands = {"grad", "x"};
  const ModelProgram m = ParseModel("m", "e = exp(x) as 1 + x + x*x*0.5; out = grad*e", operands, kBinary32);
  EXPECT_EQ(m.function_calls, 0);
  EXPECT_EQ(m.implemented_calls, 1);
  const double ops[2] = {2, 0.25};
  const double e = 1 + 0.25 + 0.03125;
  EXPECT_EQ(m.Evaluate(ops), 2 * e);
  const auto values = m.FunctionValuesToward(ops, 2 * e, 10);
  ASSERT_EQ(values.size(), 1u);
  ASSERT_EQ(values[0].size(), 1u);
  EXPECT_EQ(values[0][0].function, ModelFunction::kExp);
  EXPECT_EQ(values[0][0].argument, 0.25);
  EXPECT_EQ(values[0][0].value, e);
  // 1.28125 against exp(0.25) = 1.2840254...: that many binary32 values below it.
  const float nearest = static_cast<float>(std::exp(0.25));
  const float below = static_cast<float>(e);
  uint32_t bits_nearest = 0, bits_below = 0;
  std::memcpy(&bits_nearest, &nearest, 4);
  std::memcpy(&bits_below, &below, 4);
  EXPECT_EQ(values[0][0].ulps, -static_cast<int>(bits_nearest - bits_below));
  EXPECT_TRUE(m.FunctionValuesToward(ops, 2 * e + 1, 10).empty());
  // Free calls inside the implementation are searched; the implemented one is listed last.
  const ModelProgram inner = ParseModel("i", "t = tanh(x) as exp(x) - 1; out = t", operands, kBinary32);
  EXPECT_EQ(inner.function_calls, 1);
  EXPECT_EQ(inner.FunctionValuesToward(ops, RoundDouble(kBinary32, std::exp(0.25)) - 1, 10).front().size(), 2u);
  // Only at the start of a statement.
  EXPECT_THROW(ParseModel("m", "out = 1 + exp(x) as x", operands, kBinary32), ModelSyntaxError);
  EXPECT_THROW(ParseModel("m", "out = (exp(x) as x)", operands, kBinary32), ModelSyntaxError);
}

TEST(ModelExpr, FunctionCallsAreLimited) {
  const std::vector<std::string> operands = {"grad", "x"};
  EXPECT_NO_THROW(ParseModel("m", "out = exp(x) + erf(x) + tanh(x)", operands, kBinary32));
  try {
    ParseModel("m", "out = exp(x) + erf(x) + tanh(x) + log(x)", operands, kBinary32);
    ADD_FAILURE() << "four calls accepted";
  } catch (const ModelSyntaxError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 3 calls"), std::string::npos) << e.what();
    EXPECT_EQ(e.column(), 35u);  // the fourth call, log
  }
  EXPECT_THROW(ParseModel("m", "exp = x; out = exp", operands, kBinary32), ModelSyntaxError);
  EXPECT_THROW(ParseModel("m", "out = sqrt(x, x)", operands, kBinary32), ModelSyntaxError);
}

}  // namespace
}  // namespace ulpgate
