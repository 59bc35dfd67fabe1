// Every op sequence (a variant's or a model sequence), evaluated with no
// rounding, is the op: its exact value equals grad * (1 - t^2) for every
// finite input. (At infinities
// the forms differ by design: inf - inf*r is NaN where the op is inf.)
#include <gtest/gtest.h>

#include <cmath>

#include "oracles/float_text.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

TEST(TanhBwdSpec, EveryVariantEvaluatedExactlyIsTheOp) {
  size_t checked = 0;
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    const InputSet inputs = GenerateTanhBwdSuite(suite.name, 4, 5000);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float g = inputs.columns[0][i], t = inputs.columns[1][i];
      if (!std::isfinite(g) || !std::isfinite(t)) continue;
      const MpfrNumber op = TanhBwdExact(g, t);
      const auto expect_the_op = [&](std::string_view sequence) {
        const MpfrNumber v = TanhBwdVariantExact(sequence, g, t);
        ASSERT_TRUE(mpfr_equal_p(op.get(), v.get()))
            << sequence << " at grad = " << HexFloat(g) << ", t = " << HexFloat(t)
            << ": sequence " << v.ToDecimal() << " vs op " << op.ToDecimal();
        ++checked;
      };
      for (const auto& variant : kTanhBwdVariants) expect_the_op(variant.name);
      for (const auto& sequence : kTanhBwdModelSequences) expect_the_op(sequence.name);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(checked, 90000u);
}

TEST(TanhBwdSpec, ExactArithmeticRefusesToRound) {
  // 1 + 2^-600 needs 601 bits: at 512 the exact arithmetic must throw rather
  // than round silently.
  ExactArith exact(512);
  MpfrNumber tiny = exact.FromFloat(0x1p-100f);
  tiny = exact.Mul(exact.Mul(tiny, tiny), exact.Mul(tiny, tiny));  // 2^-400
  tiny = exact.Mul(tiny, exact.FromFloat(0x1p-100f));               // 2^-500
  EXPECT_THROW(exact.Add(exact.Const(1.0f), exact.Mul(tiny, exact.FromFloat(0x1p-100f))),
               InexactError);
  EXPECT_NO_THROW(exact.Add(exact.Const(1.0f), tiny));  // 501 bits fit
}

TEST(TanhBwdSpec, CanonicalValueAtInfinityIsTheFormulas) {
  // grad = inf, t = 0.5: grad * (1 - 0.25) = inf, while the MAC form computes
  // inf - inf * 0.25 = NaN (docs/design.md "Numerics").
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(TanhBwdExact(inf, 0.5f).IsInf());
  EXPECT_TRUE(TanhBwdVariantExact("mac", inf, 0.5f).IsNan());
  EXPECT_TRUE(std::isnan(TanhBwdModel("mac_fused", inf, 0.5f)));
  EXPECT_TRUE(std::isinf(TanhBwdModel("mulsub", inf, 0.5f)));
}

}  // namespace
}  // namespace ulpgate
