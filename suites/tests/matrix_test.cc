// matrix: mac conforms to the fused model on FMA targets and to the
// two-rounding model elsewhere (likewise mulsub_fma), the digest groups put
// bit-identical kernels together and only those, and the matrix does not
// depend on the thread count.
#include "suites/tests/tanh_bwd_kernels.h"
#include "suites/investigate/matrix.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "oracles/float_text.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

constexpr uint64_t kInputsPerSuite = 3000;

const ConformanceMatrix& Matrix() {
  static const ConformanceMatrix m = BuildMatrix(*FindElementwiseOp("tanh_bwd"), kInputsPerSuite, 1);
  return m;
}

bool Matches(const MatrixCell& c, const std::string& model) {
  return std::find(c.matching.begin(), c.matching.end(), model) != c.matching.end();
}

TEST(MatrixTest, MacIsFusedOnFmaTargetsAndTwoRoundingsElsewhere) {
  const ConformanceMatrix& m = Matrix();
  ASSERT_EQ(m.cells.size(), m.variants.size() * CompiledTargets().size());
  int run = 0;
  for (const TargetInfo& t : CompiledTargets()) {
    SCOPED_TRACE(t.name);
    const MatrixCell& mac = *m.Find("mac", t.name);
    const MatrixCell& mulsub_fma = *m.Find("mulsub_fma", t.name);
    EXPECT_EQ(mac.expected_model, t.fused_negmuladd ? "mac_fused" : "mac_unfused");
    EXPECT_EQ(mulsub_fma.expected_model, t.fused_negmuladd ? "mulsub_fused" : "mulsub");
    EXPECT_EQ(mac.run, t.supported);
    if (!t.supported) {
      EXPECT_EQ(mac.group, -1);
      continue;
    }
    ++run;
    // Measured, not assumed: the conformance check found these models, and
    // found the other rounding model violated.
    EXPECT_EQ(mac.model, t.fused_negmuladd ? "mac_fused" : "mac_unfused");
    EXPECT_FALSE(Matches(mac, t.fused_negmuladd ? "mac_unfused" : "mac_fused"));
    EXPECT_EQ(mulsub_fma.model, t.fused_negmuladd ? "mulsub_fused" : "mulsub");
    EXPECT_FALSE(Matches(mulsub_fma, t.fused_negmuladd ? "mulsub" : "mulsub_fused"));
    EXPECT_EQ(m.Find("mac_unfused", t.name)->model, "mac_unfused");
    EXPECT_EQ(m.Find("mulsub", t.name)->model, "mulsub");
    for (const std::string& v : m.variants) EXPECT_TRUE(m.Find(v, t.name)->as_expected()) << v;
  }
  EXPECT_GT(run, 0);
  EXPECT_TRUE(m.AllAsExpected());
}

TEST(MatrixTest, DigestGroupsHoldExactlyTheBitIdenticalKernels) {
  const ConformanceMatrix& m = Matrix();
  const MatrixCell& scalar_mac = *m.Find("mac", "SCALAR");
  const MatrixCell& scalar_mac_unfused = *m.Find("mac_unfused", "SCALAR");
  // On SCALAR NegMulAdd is two roundings: mac is mac_unfused, bit for bit.
  EXPECT_EQ(scalar_mac.group, scalar_mac_unfused.group);
  EXPECT_NE(scalar_mac.group, m.Find("mulsub", "SCALAR")->group);
  for (const TargetInfo& t : CompiledTargets()) {
    if (!t.supported) continue;
    SCOPED_TRACE(t.name);
    // mulsub has no NegMulAdd: the same on every target.
    EXPECT_EQ(m.Find("mulsub", t.name)->group, m.Find("mulsub", "SCALAR")->group);
    EXPECT_EQ(m.Find("mac_unfused", t.name)->group, scalar_mac_unfused.group);
    const bool fused = t.fused_negmuladd;
    EXPECT_EQ(m.Find("mac", t.name)->group == scalar_mac.group, !fused);
  }
  // Groups partition the cells that ran, and members share the digest.
  size_t members = 0;
  for (size_t g = 0; g < m.groups.size(); ++g) {
    for (size_t i : m.groups[g]) {
      EXPECT_EQ(m.cells[i].group, static_cast<int>(g));
      EXPECT_EQ(m.cells[i].digest, m.cells[m.groups[g].front()].digest);
      ++members;
    }
    for (size_t h = g + 1; h < m.groups.size(); ++h) {
      EXPECT_NE(m.cells[m.groups[g].front()].digest, m.cells[m.groups[h].front()].digest);
    }
  }
  EXPECT_EQ(members, static_cast<size_t>(std::count_if(m.cells.begin(), m.cells.end(),
                                                       [](const MatrixCell& c) { return c.run; })));
}

TEST(MatrixTest, MaxUlpPerSuiteShowsTheFormsApart) {
  const ConformanceMatrix& m = Matrix();
  ASSERT_EQ(m.suites, (std::vector<std::string>{"random", "domain", "training", "adversarial"}));
  const size_t adversarial = 3;
  for (const TargetInfo& t : CompiledTargets()) {
    if (!t.supported) continue;
    SCOPED_TRACE(t.name);
    const MatrixCell& mac_unfused = *m.Find("mac_unfused", t.name);
    const MatrixCell& mulsub = *m.Find("mulsub", t.name);
    ASSERT_EQ(mac_unfused.max_ulp.size(), m.suites.size());
    // Near |t| = 1 (the adversarial suite has t within k ULP of 1): millions
    // of ULP for the MAC form with two roundings, about a thousand for mulsub.
    EXPECT_GE(mac_unfused.max_ulp[adversarial], 1e6);
    EXPECT_LT(mulsub.max_ulp[adversarial], 1e4);
    EXPECT_GT(mulsub.max_ulp[adversarial], 100);
    if (t.fused_negmuladd) {
      for (size_t s = 0; s < m.suites.size(); ++s) {
        EXPECT_LT(m.Find("mulsub_fma", t.name)->max_ulp[s], 2) << m.suites[s];
      }
    }
  }
}

// Matching models and groups, recomputed from the kernels' outputs on every
// suite: a model counts only if matched on every suite, and two cells share a
// group exactly when their outputs are bit-identical on every input. With 8
// inputs per suite the suites disagree (on few inputs several models
// coincide), so an intersection or digest that looked at one suite would show.
class MatrixAgainstOutputs : public testing::TestWithParam<uint64_t> {};

TEST_P(MatrixAgainstOutputs, MatchingAndGroupsFollowTheOutputs) {
  const uint64_t n = GetParam();
  const ConformanceMatrix m = BuildMatrix(*FindElementwiseOp("tanh_bwd"), n, 1);
  std::vector<std::vector<std::string>> matching(m.cells.size());
  std::vector<std::vector<uint32_t>> outputs(m.cells.size());
  bool first = true;
  RunOptions options;
  options.keep_outputs = true;
  for (const std::string& suite : m.suites) {
    const InputSet inputs = GenerateTanhBwdSuite(suite, m.seed, n);
    for (const CaseResult& r : RunTanhBwd(inputs, options)) {
      for (size_t i = 0; i < m.cells.size(); ++i) {
        const MatrixCell& c = m.cells[i];
        if (c.variant != r.variant || c.target->name != r.target) continue;
        std::vector<std::string> kept;
        for (const auto& model : r.conformance.matching) {
          if (first || std::find(matching[i].begin(), matching[i].end(), model) != matching[i].end()) {
            kept.push_back(model);
          }
        }
        matching[i] = kept;
        for (float y : r.outputs) outputs[i].push_back(FloatBits(y));
      }
    }
    first = false;
  }
  for (size_t i = 0; i < m.cells.size(); ++i) {
    const MatrixCell& c = m.cells[i];
    SCOPED_TRACE(c.variant + "@" + c.target->name);
    EXPECT_EQ(c.matching, matching[i]);
    if (!c.run) continue;
    for (size_t j = 0; j < m.cells.size(); ++j) {
      if (!m.cells[j].run) continue;
      EXPECT_EQ(c.group == m.cells[j].group, outputs[i] == outputs[j])
          << "against " << m.cells[j].variant << "@" << m.cells[j].target->name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(InputsPerSuite, MatrixAgainstOutputs, testing::Values(8, kInputsPerSuite));

TEST(MatrixTest, IndependentOfThreadCount) {
  const ConformanceMatrix one = BuildMatrix(*FindElementwiseOp("tanh_bwd"), kInputsPerSuite, 1, 1);
  const ConformanceMatrix& two = Matrix();
  ASSERT_EQ(one.cells.size(), two.cells.size());
  for (size_t i = 0; i < one.cells.size(); ++i) {
    EXPECT_EQ(one.cells[i].digest, two.cells[i].digest);
    EXPECT_EQ(one.cells[i].max_ulp, two.cells[i].max_ulp);
    EXPECT_EQ(one.cells[i].group, two.cells[i].group);
  }
}

TEST(MatrixTest, GroupNamesAndJson) {
  EXPECT_EQ(GroupName(0), "A");
  EXPECT_EQ(GroupName(25), "Z");
  EXPECT_EQ(GroupName(26), "AA");
  const nlohmann::ordered_json j = MatrixJson(Matrix());
  EXPECT_EQ(j["as_expected"], true);
  EXPECT_EQ(j["cells"].size(), Matrix().cells.size());
  EXPECT_EQ(j["cells"][0]["variant"], "mac");
  EXPECT_EQ(j["cells"][0]["target"], CompiledTargets().front().name);
}

}  // namespace
}  // namespace ulpgate
