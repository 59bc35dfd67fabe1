// Golden files: a measured case survives the trip through its file unchanged;
// a changed output bit or statistic is reported with the input and the old
// and new values; malformed files fail with the file and the place.
#include "suites/release/golden.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "oracles/float_text.h"
#include "suites/inputs/inputs.h"
#include "suites/reports/report.h"
#include "suites/inputs/tanh_bwd_suites.h"

namespace ulpgate {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const TargetInfo& Scalar() { return *FindTarget("SCALAR"); }

MeasureSpec Spec(const std::string& op, const std::string& suite, uint64_t n,
                 std::vector<std::string> variants, const std::string& shape = "") {
  MeasureSpec spec;
  spec.op = op;
  spec.suite = suite;
  spec.n = n;
  spec.shape = shape;
  spec.variants = std::move(variants);
  return spec;
}

class GoldenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("golden_test." + std::to_string(::getpid()));
    fs::create_directories(dir_ / "SCALAR");
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Measures a small tanh_bwd golden on SCALAR, writes it, reads it back.
  GoldenFile Write(const GoldenFile& file) {
    const std::string path = GoldenPath(dir_.string(), file.target, file.op);
    WriteJsonFile(path, file.json);
    return ReadGoldenFile(path);
  }
  static GoldenFile SmallTanhBwd() {
    return MeasureGolden({Spec("tanh_bwd", "adversarial", 100, {"mac", "mulsub"}),
                          Spec("tanh_bwd", "domain", 40, {"mac_unfused"})},
                         Scalar(), "tanh_bwd", 1, GoldenSource::kKernels);
  }
  std::string PathOf(const std::string& target, const std::string& op) const {
    return GoldenPath(dir_.string(), target, op);
  }
  // Writes text as golden/<target>/<op>.json and returns the error reading it.
  std::string ErrorReading(const std::string& text, const std::string& target = "SCALAR",
                           const std::string& op = "tanh_bwd") {
    fs::create_directories(dir_ / target);
    std::ofstream(PathOf(target, op), std::ios::trunc) << text;
    try {
      ReadGoldenFile(PathOf(target, op));
    } catch (const InputError& e) {
      return e.what();
    }
    return "(no error)";
  }

  fs::path dir_;
};

TEST_F(GoldenTest, RoundTripOfEveryKindOfCaseComparesEqual) {
  const GoldenFile tanh = SmallTanhBwd();
  EXPECT_TRUE(CompareGolden(Write(tanh), tanh).empty());
  const GoldenFile linear = MeasureGolden(
      {Spec("linear_fwd", "cancellation", 2, {"sequential_fma", "pairwise"}, "7,13,9")}, Scalar(),
      "linear_fwd", 1, GoldenSource::kKernels);
  EXPECT_TRUE(CompareGolden(Write(linear), linear).empty());
  const GoldenFile drift =
      MeasureGolden({Spec("drift", "seed", 23, {"tanh_bwd=mac", "tanh_bwd=mulsub_fma,sgd=fused"})},
                    Scalar(), "drift", 1, GoldenSource::kKernels);
  EXPECT_TRUE(CompareGolden(Write(drift), drift).empty());
  EXPECT_EQ(drift.json["cases"][0]["loss"].size(), 4u);  // epochs 0, 10, 20 and 22
  // The bytes read back are the bytes written.
  std::ifstream in(PathOf("SCALAR", "tanh_bwd"));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, GoldenText(tanh));
}

TEST_F(GoldenTest, ChangedOutputBitNamesTheIndexTheInputAndBothOutputs) {
  const GoldenFile now = SmallTanhBwd();
  GoldenFile old = Write(now);
  // Output 21 of the second case (mulsub): line 1, word 5.
  std::string line = old.json["cases"][1]["outputs"][1];
  const uint32_t new_bits = static_cast<uint32_t>(std::stoul(line.substr(5 * 9, 8), nullptr, 16));
  const uint32_t old_bits = new_bits ^ 1u;
  line.replace(5 * 9, 8, fmt::format("{:08x}", old_bits));
  old.json["cases"][1]["outputs"][1] = line;
  const auto differences = CompareGolden(old, now);
  ASSERT_EQ(differences.size(), 1u);
  const CaseDifference& d = differences[0];
  EXPECT_EQ(d.label, "tanh_bwd mulsub SCALAR suite adversarial seed 1 n 100");
  EXPECT_EQ(d.outputs_differing, 1u);
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_EQ(d.outputs[0].index, 21u);
  EXPECT_EQ(d.outputs[0].old_bits, old_bits);
  EXPECT_EQ(d.outputs[0].new_bits, new_bits);
  const InputSet inputs = GenerateTanhBwdSuite("adversarial", 1, 100);
  EXPECT_EQ(d.outputs[0].input, InputJson(inputs, 21));
}

TEST_F(GoldenTest, ChangedStatisticsAreShownSideBySide) {
  const GoldenFile now = SmallTanhBwd();
  GoldenFile old = Write(now);
  Json& c = old.json["cases"][0];
  c["max_ulp"] = 123.5;
  const Json& fresh = now.json["cases"][0];
  const std::string bin = "(0.5, 1]";
  const std::string fresh_count = fresh["histogram"].contains(bin) ? fresh["histogram"][bin].dump() : "0";
  c["histogram"][bin] = fresh["histogram"].value(bin, uint64_t{0}) + 7;
  c["conformance"]["model"] = "mulsub";
  c["output_digest"] = "0123456789abcdef";
  const auto differences = CompareGolden(old, now);
  ASSERT_EQ(differences.size(), 1u);
  const CaseDifference& d = differences[0];
  EXPECT_EQ(d.label, "tanh_bwd mac SCALAR suite adversarial seed 1 n 100");
  EXPECT_EQ(d.outputs_differing, 0u);
  auto field = [&](const std::string& name) -> const FieldChange* {
    for (const FieldChange& f : d.fields) {
      if (f.field == name) return &f;
    }
    return nullptr;
  };
  EXPECT_EQ(d.fields.size(), 4u);
  ASSERT_NE(field("max_ulp"), nullptr);
  EXPECT_EQ(field("max_ulp")->old_value, "123.5");
  EXPECT_EQ(field("max_ulp")->new_value, fresh["max_ulp"].dump());
  ASSERT_NE(field("histogram " + bin), nullptr);  // only the bin that changed
  EXPECT_EQ(field("histogram " + bin)->new_value, fresh_count);
  ASSERT_NE(field("conformance.model"), nullptr);
  EXPECT_EQ(field("conformance.model")->old_value, "mulsub");
  ASSERT_NE(field("output_digest"), nullptr);
  EXPECT_EQ(field("output_digest")->new_value, fresh["output_digest"]);
}

TEST_F(GoldenTest, MalformedFilesFailNamingTheFileAndThePlace) {
  const GoldenFile good = SmallTanhBwd();
  const std::string text = GoldenText(good);
  const std::string path = PathOf("SCALAR", "tanh_bwd");
  auto edited = [&](const std::function<void(Json&)>& edit) {
    Json j = good.json;
    edit(j);
    return j.dump(2);
  };
  EXPECT_NE(ErrorReading(text.substr(0, text.size() / 2)).find(path + ":"), std::string::npos);
  EXPECT_NE(ErrorReading(text.substr(0, text.size() / 2)).find("truncated"), std::string::npos);
  EXPECT_NE(ErrorReading("cases: none\n").find(path + ":1:1: malformed JSON"), std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["cases"][1]["max_ulp"] = "big"; }))
                .find(path + ": /cases/1/max_ulp: expected a number, found a string"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["cases"][0]["histogram"] = 3; }))
                .find(path + ": /cases/0/histogram: expected an object"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["op"] = "tanh_fwd"; }))
                .find(path + ": /op: unknown op 'tanh_fwd'"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["cases"][2]["variant"] = "mad"; }))
                .find(path + ": /cases/2/variant: unknown variant of tanh_bwd in f32 'mad'"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["target"] = "NEON"; }))
                .find(path + ": /target: unknown target 'NEON'"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["cases"][0]["suite"] = "exhaustive"; }))
                .find(path + ": /cases/0/suite: unknown suite 'exhaustive'"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["format"] = "ulpgate-golden-1"; }))
                .find(path + ": /format: unsupported format 'ulpgate-golden-1'"),
            std::string::npos);
  EXPECT_NE(ErrorReading(edited([](Json& j) { j["cases"][0]["outputs"][0] = "3f80 0000"; }))
                .find(path + ": /cases/0/outputs/0: expected bit patterns"),
            std::string::npos);
  // A file in the wrong place (an AVX2 golden under SSE4/).
  EXPECT_NE(ErrorReading(text, "SSE4").find(PathOf("SSE4", "tanh_bwd") + ": /target:"),
            std::string::npos);
  EXPECT_EQ(ErrorReading(text), "(no error)");
}

// The shipped drift golden with a loss key of more digits than a 64-bit
// number holds: the file's error, not an exception from the number parser.
TEST_F(GoldenTest, AnEpochKeyBeyondSixtyFourBitsIsTheFilesError) {
  const GoldenFile shipped = ReadGoldenFile(GoldenPath(ULPGATE_GOLDEN_DIR, "SCALAR", "drift"));
  Json j = shipped.json;
  j["cases"][0]["loss"]["123456789012345678901234567890"] = "0x1p+0";
  const std::string error = ErrorReading(j.dump(2), "SCALAR", "drift");
  EXPECT_NE(error.find(PathOf("SCALAR", "drift") + ": /cases/0/loss/123456789012345678901234567890: "
                       "expected an epoch number below"),
            std::string::npos)
      << error;
  EXPECT_EQ(ErrorReading(shipped.json.dump(2), "SCALAR", "drift"), "(no error)");
}

}  // namespace
}  // namespace ulpgate
