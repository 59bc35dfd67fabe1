// Measure (the runner behind golden files and the gate) and JsonField (the
// reader of their data files).
#include "suites/engine/measure.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "oracles/float_text.h"
#include "suites/engine/digest.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/json_file.h"
#include "suites/reports/report.h"

namespace ulpgate {
namespace {

const TargetInfo* Scalar() { return FindTarget("SCALAR"); }

uint64_t ChunkedDigest(const std::vector<float>& outputs, size_t chunk) {
  uint64_t digest = kFnv1aOffset;
  for (size_t begin = 0; begin < outputs.size(); begin += chunk) {
    const size_t count = std::min(chunk, outputs.size() - begin);
    const uint64_t h = Fnv1a(outputs.data() + begin, count * sizeof(float));
    digest = Fnv1a(&h, sizeof h, digest);
  }
  return digest;
}

TEST(Measure, TanhBwdOutputsAreTheDigestedOnes) {
  MeasureSpec spec;
  spec.op = "tanh_bwd";
  spec.suite = "adversarial";
  spec.n = 5000;  // more than one engine chunk
  spec.targets = {Scalar()};
  spec.keep_outputs = true;
  const Measurement m = Measure(spec);
  ASSERT_EQ(m.cases.size(), 4u);  // every variant by default
  EXPECT_EQ(m.spec.variants.size(), 4u);
  for (const MeasuredCase& c : m.cases) {
    EXPECT_EQ(c.record["op"], "tanh_bwd");
    EXPECT_EQ(c.record["target"], "SCALAR");
    EXPECT_EQ(c.record["n"], 5000u);
    ASSERT_EQ(c.outputs.size(), 5000u);
    EXPECT_EQ(c.record["output_digest"], DigestHex(ChunkedDigest(c.outputs, kEngineChunk)));
  }
  // describe() names the input of an output the way the reports do.
  EXPECT_EQ(m.describe(7)["index"], 7u);
  EXPECT_TRUE(m.describe(7).contains("grad"));
}

TEST(Measure, ReductionOutputsInstanceByInstance) {
  MeasureSpec spec;
  spec.op = "linear_fwd";
  spec.suite = "cancellation";
  spec.shape = "5,9,7";
  spec.n = 3;
  spec.variants = {"pairwise"};
  spec.targets = {Scalar()};
  spec.keep_outputs = true;
  const Measurement m = Measure(spec);
  ASSERT_EQ(m.cases.size(), 1u);
  const MeasuredCase& c = m.cases[0];
  EXPECT_EQ(c.record["shape"], "5,9,7");
  ASSERT_EQ(c.outputs.size(), 3u * 5 * 7);
  EXPECT_EQ(c.record["output_digest"], DigestHex(ChunkedDigest(c.outputs, 5 * 7)));
  EXPECT_EQ(m.describe(36)["instance"], 1u);
}

TEST(Measure, DriftRecordsOneRunPerSpecAndTarget) {
  MeasureSpec spec;
  spec.op = kDriftOp;
  spec.suite = "seed";
  spec.n = 12;
  spec.variants = {"tanh_bwd=mulsub", "tanh_bwd=mac,sgd=fused"};
  spec.targets = {Scalar(), FindTarget("SSE4")};
  spec.keep_outputs = true;
  const Measurement m = Measure(spec);
  ASSERT_EQ(m.cases.size(), 4u);  // run specs x targets
  EXPECT_EQ(m.cases[1].record["variant"], "tanh_bwd=mulsub");
  EXPECT_EQ(m.cases[1].record["target"], "SSE4");
  EXPECT_EQ(m.cases[2].record["variant"], "tanh_bwd=mac,sgd=fused");
  EXPECT_EQ(m.cases[2].record["variants"]["sgd"], "fused");
  bool runs_differ = false;
  for (const MeasuredCase& c : m.cases) {
    EXPECT_EQ(c.record["epochs"], 12u);
    ASSERT_EQ(c.outputs.size(), 12u);
    for (size_t e = 0; e < 12; ++e) EXPECT_EQ(c.record["loss"][e], HexFloat(c.outputs[e]));
    EXPECT_TRUE(c.record["summary"].contains("max_relative_loss_deviation"));
    runs_differ |= c.record["final_parameters_digest"] != m.cases[0].record["final_parameters_digest"];
  }
  EXPECT_TRUE(runs_differ);  // mac with a fused SGD step ends elsewhere than mulsub does
}

TEST(Measure, ResultsDoNotDependOnThreads) {
  MeasureSpec spec;
  spec.op = "tanh_bwd";
  spec.suite = "domain";
  spec.n = 9000;
  spec.threads = 1;
  const std::string one = Measure(spec).cases.back().record.dump();
  spec.threads = 2;
  EXPECT_EQ(Measure(spec).cases.back().record.dump(), one);
}

TEST(Measure, UnknownNamesAreInputErrors) {
  auto fails = [](MeasureSpec spec, const char* needle) {
    try {
      Measure(spec);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  auto spec = [](const char* op, const char* suite) {
    MeasureSpec s;
    s.op = op;
    s.suite = suite;
    return s;
  };
  fails(spec("tanh_fwd", "domain"), "unknown op 'tanh_fwd'");
  fails(spec("tanh_bwd", "cancellation"), "unknown suite 'cancellation'");
  fails(spec("drift", "nonesuch"), "unknown scenario 'nonesuch'");
  MeasureSpec variant = spec("mse_fwd", "exact");
  variant.variants = {"eigen"};  // the peer is linear_fwd's only
  fails(variant, "unknown variant 'eigen'");
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonFile, MalformedTextNamesFileLineAndColumn) {
  const std::string path = WriteTemp("bad.json", "{\n  \"a\": 1,\n  \"b\": ]\n}\n");
  EXPECT_EQ(ErrorOf([&] { ReadJsonFile(path); }).rfind(path + ":3:8: malformed JSON", 0), 0u)
      << ErrorOf([&] { ReadJsonFile(path); });
}

TEST(JsonFile, TruncatedAndEmptyFilesAreNamed) {
  const std::string cut = WriteTemp("cut.json", "{\n  \"cases\": [1, 2");
  EXPECT_NE(ErrorOf([&] { ReadJsonFile(cut); }).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadJsonFile(cut); }).find(cut + ":2:"), std::string::npos);
  const std::string empty = WriteTemp("empty.json", "\n");
  EXPECT_NE(ErrorOf([&] { ReadJsonFile(empty); }).find("empty file"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { ReadJsonFile("/nonexistent/x.json"); }).find("cannot open"),
            std::string::npos);
}

TEST(JsonFile, FieldsFailWithTheirPointer) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(
      R"({"rules": [{"id": "r", "limits": {"max_ulp": "1", "a/b": -1}}]})");
  const JsonField root("ledger.json", "", j);
  const JsonField limits = root["rules"][0]["limits"];
  EXPECT_EQ(ErrorOf([&] { limits["max_ulp"].Number(); }),
            "ledger.json: /rules/0/limits/max_ulp: expected a number, found a string");
  EXPECT_EQ(ErrorOf([&] { limits["a/b"].Unsigned(); }),
            "ledger.json: /rules/0/limits/a~1b: expected a non-negative integer, found -1");
  EXPECT_EQ(ErrorOf([&] { root["rules"][1]; }), "ledger.json: /rules: missing element 1");
  EXPECT_EQ(ErrorOf([&] { root["rules"][0]["match"]; }),
            "ledger.json: /rules/0: missing field \"match\"");
  EXPECT_EQ(ErrorOf([&] { root["rules"][0].OnlyKeys({"id"}); }),
            "ledger.json: /rules/0: unknown field \"limits\" (expected: id)");
  EXPECT_EQ(root["rules"][0]["id"].String(), "r");
}

}  // namespace
}  // namespace ulpgate
