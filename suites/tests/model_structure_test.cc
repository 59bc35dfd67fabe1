// compare's causes from the models' structure (suites/investigate/model_structure.h):
// the built-in models of the ops, models of the user's that no table names, and
// built-in models the model language cannot write (their sequences' text).
#include "suites/investigate/model_structure.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "oracles/model_expr.h"
#include "suites/investigate/check_models.h"

namespace ulpgate {
namespace {

// The structure of a model `check` compares with, by name.
ModelStructure Named(const std::string& op_name, const FloatFormat& format, const std::string& name) {
  const ElementwiseOpInfo& op = *FindElementwiseOp(op_name);
  std::vector<bool> user;
  std::vector<int> builtin;
  const std::vector<ModelProgram> models = CheckModels(op, {}, "", format, &user, &builtin);
  for (size_t m = 0; m < models.size(); ++m) {
    if (models[m].name == name) return StructureOf(op, format, models[m], builtin[m]);
  }
  ADD_FAILURE() << "no model " << name << " of " << op_name << " in " << format.name;
  return {};
}

// A model of the user's, in the model language.
ModelStructure Yours(const std::string& op_name, const FloatFormat& format, const std::string& spec) {
  const ElementwiseOpInfo& op = *FindElementwiseOp(op_name);
  return StructureOf(op, format, ParseModelSpec(spec, op.operand_names(), format), -1);
}

std::string Cause(const ModelStructure& a, const ModelStructure& b) {
  EXPECT_NE(a.out, nullptr) << a.error;
  EXPECT_NE(b.out, nullptr) << b.error;
  return FirstParting(a, b).cause;
}

TEST(ModelStructure, TanhBwdBuiltInModels) {
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary32, "mulsub"), Named("tanh_bwd", kBinary32, "mulsub_fused")), "fusion");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary32, "mac_unfused"), Named("tanh_bwd", kBinary32, "mac_fused")), "fusion");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary32, "mac_fused"), Named("tanh_bwd", kBinary32, "mulsub")), "formula");
  // grad - (grad*t)*t against grad - grad*(t*t): association is a formula.
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary32, "mac_left_fused"), Named("tanh_bwd", kBinary32, "mac_fused")),
            "formula");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBFloat16, "mulsub_opmath"), Named("tanh_bwd", kBFloat16, "mulsub_per_op")),
            "rounding format");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary16, "mulsub_fused_opmath"), Named("tanh_bwd", kBinary16, "mulsub_per_op")),
            "rounding format");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBFloat16, "mulsub_opmath"),
                  Named("tanh_bwd", kBFloat16, "mulsub_opmath_truncating")),
            "rounding format");
  EXPECT_EQ(Cause(Named("tanh_bwd", kBinary32, "mulsub"), Named("tanh_bwd", kBinary32, "mulsub")), "");
}

TEST(ModelStructure, ModelsOfTheUserGetACause) {
  // The same computation written otherwise: the same structure.
  EXPECT_EQ(Cause(Yours("tanh_bwd", kBinary32, "mine: out = grad*(1 - t*t)"), Named("tanh_bwd", kBinary32, "mulsub")),
            "");
  EXPECT_EQ(Cause(Yours("tanh_bwd", kBinary32, "mine: s = fma(t, -t, 1); out = s*grad"),
                  Named("tanh_bwd", kBinary32, "mulsub")),
            "fusion");
  // Truncated once where the built-in rounds to nearest.
  EXPECT_EQ(Cause(Yours("tanh_bwd", kBFloat16, "mine: r = t*t; s = 1 - r; out = bf16_rz(grad*s)"),
                  Named("tanh_bwd", kBFloat16, "mulsub_opmath")),
            "rounding format");
  // Each step in working format bf16 is the per-op model.
  EXPECT_EQ(Cause(Yours("tanh_bwd", kBFloat16, "mine: working bf16; s = 1 - t*t; out = s*grad"),
                  Named("tanh_bwd", kBFloat16, "mulsub_per_op")),
            "");
  // Each step rounded to f32, then to bf16: a chain of two roundings, kept apart
  // from one (the structure does not prove that t*t of two bf16 values is exact
  // in f32; compare asks for a cause only where outputs differ).
  EXPECT_EQ(Cause(Yours("tanh_bwd", kBFloat16, "mine: r = bf16(t*t); s = bf16(1 - r); out = bf16(grad*s)"),
                  Named("tanh_bwd", kBFloat16, "mulsub_per_op")),
            "rounding format");
  EXPECT_EQ(Cause(Yours("sigmoid_bwd", kBinary32, "mine: out = grad*(s - s*s)"), Named("sigmoid_bwd", kBinary32, "torch")),
            "formula");
}

TEST(ModelStructure, ModelsOfFunctionsFromTheirSequences) {
  // gelu_bwd's models call erf and exp: built from the spec's op_sequence text.
  EXPECT_EQ(Cause(Named("gelu_bwd", kBinary32, "torch_fma"), Named("gelu_bwd", kBinary32, "torch_nofma")), "fusion");
  // cdf + x*pdf against MulAdd(x, pdf, cdf): one rounding fewer.
  EXPECT_EQ(Cause(Named("gelu_bwd", kBinary32, "torch_fma"), Named("gelu_bwd", kBinary32, "muladd_fma")), "fusion");
  EXPECT_EQ(Cause(Named("silu_bwd", kBFloat16, "torch_fma_opmath"), Named("silu_bwd", kBFloat16, "torch_per_op_fma")),
            "rounding format");
  const ModelStructure gelu = Named("gelu_bwd", kBinary32, "torch_fma");
  ASSERT_NE(gelu.out, nullptr) << gelu.error;
  EXPECT_TRUE(CallsFunction(*gelu.out));
  EXPECT_FALSE(CallsFunction(*Named("tanh_bwd", kBinary32, "mulsub").out));
  // abs, copysign, min, max and if_less are exact: no function to set free,
  // and their arguments part as any formula's do.
  const ModelStructure clamp = Yours("tanh_bwd", kBinary32, "c: out = grad*copysign(1 - min(abs(t), 1)*t, t)");
  ASSERT_NE(clamp.out, nullptr) << clamp.error;
  EXPECT_FALSE(CallsFunction(*clamp.out));
  EXPECT_EQ(Cause(clamp, Yours("tanh_bwd", kBinary32, "d: out = grad*copysign(1 - min(abs(t), 1)*t, grad)")),
            "formula");
  // scalb is no free function either, and it rounds to the working format: the
  // same scaling in f32 and in bf16 parts on the rounding format.
  const ModelStructure scaled = Yours("tanh_bwd", kBinary32, "s: out = scalb(grad, t)");
  ASSERT_NE(scaled.out, nullptr) << scaled.error;
  EXPECT_FALSE(CallsFunction(*scaled.out));
  EXPECT_EQ(Cause(scaled, Yours("tanh_bwd", kBinary32, "b: working bf16; out = scalb(grad, t)")), "rounding format");
  // An implementation written out (`f(ARG) as ...`) is the call of f for the
  // structure: the same formula as the free call; written plainly, another.
  const ModelStructure written = Yours("silu_bwd", kBinary32, "w: e = exp(-x) as 1 - x; out = grad/(1 + e)");
  ASSERT_NE(written.out, nullptr) << written.error;
  EXPECT_TRUE(CallsFunction(*written.out));
  EXPECT_EQ(Cause(written, Yours("silu_bwd", kBinary32, "f: e = exp(-x); out = grad/(1 + e)")), "");
  EXPECT_EQ(Cause(Yours("silu_bwd", kBinary32, "p: e = 1 - x; out = grad/(1 + e)"),
                  Yours("silu_bwd", kBinary32, "f: e = exp(-x); out = grad/(1 + e)")),
            "formula");
}

}  // namespace
}  // namespace ulpgate
