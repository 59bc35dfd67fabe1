// Every tanh_bwd variant on every target conforms bit for bit to the model its
// target's NegMulAdd implies (kTanhBwdVariants), on every suite. The smoke
// tier runs the adversarial catalogue, the sampled tier every suite.
#include <gtest/gtest.h>

#include <sstream>

#include "suites/tests/tanh_bwd_kernels.h"
#include "oracles/float_text.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/reports/replay.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

// One message per failing case, built first so parallel tests do not interleave.
std::string Describe(const CaseResult& r, const InputSet& inputs) {
  std::ostringstream out;
  out << "tanh_bwd " << r.variant << " on " << r.target << ", suite " << r.suite << ": "
      << r.conformance.mismatches << " outputs differ from model " << r.conformance.expected_model;
  const int64_t i = r.conformance.first_mismatch_index;
  if (i >= 0) {
    const float g = inputs.columns[0][i], t = inputs.columns[1][i];
    float y;
    FindTanhBwdKernel(r.variant, FindTarget(r.target)->bits)(&g, &t, &y, 1);
    const float m = TanhBwdModel(r.conformance.expected_model, g, t);
    out << "; first at input #" << i << ": grad = " << HexFloat(g) << " (" << BitsHex(g)
        << "), t = " << HexFloat(t) << " (" << BitsHex(t) << "): kernel " << HexFloat(y) << " ("
        << BitsHex(y) << "), model " << HexFloat(m) << " (" << BitsHex(m) << "), exact "
        << TanhBwdExact(g, t).ToDecimal()
        << "\n  replay: " << ReplayInputCommand(ReplayKernelOf(r), inputs.operand_names, {g, t});
  }
  return out.str();
}

void ExpectConformance(const TargetInfo* target, const InputSet& inputs) {
  RunOptions options;
  options.targets = {target};
  for (const CaseResult& r : RunTanhBwd(inputs, options)) {
    const auto& info = kTanhBwdVariants[TanhBwdVariantIndex(r.variant)];
    EXPECT_EQ(r.conformance.expected_model,
              target->fused_negmuladd ? info.model_fused_target : info.model_unfused_target);
    EXPECT_EQ(r.conformance.mismatches, 0u) << Describe(r, inputs);
    EXPECT_EQ(r.conformance.model(), r.conformance.expected_model);
  }
}

class TanhBwdConformance : public PerTargetTest {};

TEST_P(TanhBwdConformance, AdversarialCatalogue) {
  ExpectConformance(GetParam(), GenerateTanhBwdSuite("adversarial", 1,
                                                     TanhBwdAdversarialCatalogueSize() + 7000));
}

class TanhBwdConformanceSampled : public PerTargetTest {};

TEST_P(TanhBwdConformanceSampled, EverySuite) {
  for (const SuiteInfo& suite : TanhBwdSuites()) {
    SCOPED_TRACE(suite.name);
    ExpectConformance(GetParam(), GenerateTanhBwdSuite(suite.name, 2, 30000));
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(TanhBwdConformance);
ULPGATE_INSTANTIATE_PER_TARGET(TanhBwdConformanceSampled);

// The models are distinct: on the suites, the fused and unfused models of
// each form disagree somewhere, so matching one is evidence of which rounding
// the target performed.
TEST(TanhBwdModels, FusedAndUnfusedModelsDisagreeOnTheSuites) {
  const InputSet inputs = GenerateTanhBwdSuite("domain", 3, 20000);
  uint64_t mac_differ = 0, mulsub_differ = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto m = TanhBwdModels(inputs.columns[0][i], inputs.columns[1][i]);
    mac_differ += !SameFloat(m[0], m[1]);     // mac_fused vs mac_unfused
    mulsub_differ += !SameFloat(m[2], m[3]);  // mulsub vs mulsub_fused
  }
  EXPECT_GT(mac_differ, 1000u);
  EXPECT_GT(mulsub_differ, 1000u);
}

}  // namespace
}  // namespace ulpgate
