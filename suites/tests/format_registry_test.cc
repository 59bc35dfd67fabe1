// A format registered by a test (ScopedFormatRegistration) goes through every
// place that takes a format as data: decode, encode, rounding, the ULP
// metric, casts, the model language, `list`'s rows, .npy files. Where an op
// family has no kernels in it, the one table that decides
// (kernels/narrow_formats.h) refuses it with a clear error: a second 16-bit
// format must never take f16's or bf16's road. Expected values are worked by
// hand from the formats' definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "kernels/elementwise_ops.h"
#include "kernels/iut/iut_protocol.h"
#include "kernels/narrow_formats.h"
#include "oracles/cast_policy.h"
#include "oracles/format.h"
#include "oracles/model_expr.h"
#include "oracles/mpfr_number.h"
#include "oracles/ulp_metric.h"
#include "suites/drift/precision.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/op_table.h"
#include "suites/inputs/inputs.h"
#include "suites/inputs/numpy_files.h"
#include "suites/reports/format_list.h"
#include "suites/sweep/sweep.h"

namespace ulpgate {
namespace {

// IEEE-style E3M4: bias 3, normals 2^-2 .. 2^3 x 1.1111b, infinities and
// NaNs at exponent field 7 (as ml_dtypes' float8_e3m4).
constexpr FloatFormat kE3M4{"float8_e3m4_test", 5, -2, 3, 8, NanEncoding::kIeee};
// IEEE-style E6M9: a 16-bit format beside bf16 and f16, with no kernels.
constexpr FloatFormat kE6M9{"float16_e6m9_test", 10, -30, 31, 16, NanEncoding::kIeee};

class FormatRegistry : public ::testing::Test {
 protected:
  ScopedFormatRegistration e3m4_{kE3M4};
  ScopedFormatRegistration e6m9_{kE6M9};
};

TEST_F(FormatRegistry, TheRegistryNamesThem) {
  EXPECT_EQ(FindFormat("float8_e3m4_test"), &kE3M4);
  EXPECT_EQ(FindFormat("float16_e6m9_test"), &kE6M9);
  ASSERT_GE(Formats().size(), 2u);  // after the built-in ones, in registration order
  EXPECT_EQ(Formats()[Formats().size() - 2], &kE3M4);
  EXPECT_EQ(Formats().back(), &kE6M9);
}

TEST_F(FormatRegistry, DecodeEncodeAndRound) {
  // 0 011 0000 = 1; 0 011 1000 = 1.5; 0 000 0001 = 2^-2 x 2^-4; 0 110 1111 =
  // 2^3 x 1.9375; 0 111 0000 = inf; 1 000 0000 = -0.
  EXPECT_EQ(DecodeBits(kE3M4, 0x30), 1.0);
  EXPECT_EQ(DecodeBits(kE3M4, 0x38), 1.5);
  EXPECT_EQ(DecodeBits(kE3M4, 0xb0), -1.0);
  EXPECT_EQ(DecodeBits(kE3M4, 0x01), std::ldexp(1.0, -6));
  EXPECT_EQ(DecodeBits(kE3M4, 0x6f), 15.5);
  EXPECT_EQ(DecodeBits(kE3M4, 0x70), INFINITY);
  EXPECT_TRUE(std::isnan(DecodeBits(kE3M4, 0x71)));
  EXPECT_TRUE(std::signbit(DecodeBits(kE3M4, 0x80)));
  EXPECT_EQ(LargestFinite(kE3M4), 15.5);
  EXPECT_EQ(SmallestPositive(kE3M4), std::ldexp(1.0, -6));
  for (uint64_t code = 0; code < 256; ++code) {
    const double v = DecodeBits(kE3M4, code);
    if (!std::isnan(v)) {
      EXPECT_EQ(EncodeBits(kE3M4, v), code) << code;
    }
  }
  // Ties to even at 1 + 2^-5 (to 1) and 1 + 3 x 2^-5 (to 1.125); 15.75 is
  // the midpoint of 15.5 and 16 = 2^(emax+1): infinity.
  EXPECT_EQ(RoundToFormat(kE3M4, 1.0 + std::ldexp(1.0, -5)), 1.0);
  EXPECT_EQ(RoundToFormat(kE3M4, 1.09375), 1.125);
  EXPECT_EQ(RoundToFormat(kE3M4, 15.7), 15.5);
  EXPECT_EQ(RoundToFormat(kE3M4, 15.75), INFINITY);
  EXPECT_EQ(RoundDouble(kE3M4, 1.09375, /*toward_zero=*/true), 1.0625);
  EXPECT_THROW(EncodeBits(kE3M4, 1.03125), std::invalid_argument);
  // E6M9: 1 = exponent field 31; the largest 0 111110 1..1; the smallest
  // subnormal 2^(-30-9).
  EXPECT_EQ(EncodeBits(kE6M9, 1.0), 0x3e00u);
  EXPECT_EQ(DecodeBits(kE6M9, 0x7dff), std::ldexp(2.0 - std::ldexp(1.0, -9), 31));
  EXPECT_EQ(DecodeBits(kE6M9, 0x7e00), INFINITY);
  EXPECT_EQ(DecodeBits(kE6M9, 0x0001), std::ldexp(1.0, -39));
  EXPECT_EQ(RoundToFormat(kE6M9, 1.0 + std::ldexp(1.0, -10)), 1.0);
}

TEST_F(FormatRegistry, UlpMetricAndCasts) {
  MpfrNumber one(64, 1.0f);
  // ulp(1) is 2^-4 in E3M4, 2^-9 in E6M9.
  EXPECT_EQ(MeasureUlpError(one.get(), 1.0625, kE3M4).ulp, 1.0);
  EXPECT_EQ(MeasureUlpError(one.get(), 1.0 + std::ldexp(1.0, -8), kE6M9).ulp, 2.0);
  EXPECT_TRUE(MeasureUlpError(one.get(), 1.0, kE3M4).correctly_rounded);
  const CastPolicy nearest_saturate{};
  EXPECT_EQ(CastValue(kBinary32, kE3M4, 1.09375, nearest_saturate), 1.125);
  EXPECT_EQ(CastValue(kBinary32, kE3M4, 100.0, nearest_saturate), 15.5);
  EXPECT_EQ(CastValue(kE3M4, kBinary32, 15.5, nearest_saturate), 15.5);
}

TEST_F(FormatRegistry, TheModelLanguageRoundsToAnyRegisteredName) {
  const std::vector<std::string> operands = {"grad", "t"};
  const double in[] = {1.0, 1.09375};
  EXPECT_EQ(ParseModel("m", "out = float8_e3m4_test(grad*t)", operands, kBinary32).Evaluate(in), 1.125);
  EXPECT_EQ(ParseModel("m", "out = float8_e3m4_test_rz(grad*t)", operands, kBinary32).Evaluate(in),
            1.0625);
  EXPECT_EQ(ParseModel("m", "working float8_e3m4_test; out = grad*t", operands, kBinary32).Evaluate(in),
            1.125);
  const double wide[] = {1.0, 1.0 + 3 * std::ldexp(1.0, -11)};  // 3/4 of the way to 1 + 2^-9
  EXPECT_EQ(ParseModel("m", "out = float16_e6m9_test(grad*t)", operands, kBinary32).Evaluate(wide),
            1.0 + std::ldexp(1.0, -9));
}

TEST_F(FormatRegistry, ListRowsTheirTraits) {
  EXPECT_EQ(FormatRow(kE3M4), (std::vector<std::string>{"float8_e3m4_test", "8", "5", "-2", "3", "3",
                                                         "ieee", "15.5", "2^-6", "1 byte", "none"}));
  EXPECT_EQ(FormatRow(kE6M9)[7], "4.29077e+09");  // (2 - 2^-9) x 2^31
  EXPECT_EQ(FormatRow(kE6M9)[9], "2 bytes");
  EXPECT_EQ(FormatJson(kE3M4)["bias"], 3);
  EXPECT_EQ(FormatJson(kE3M4)["ops"], nlohmann::ordered_json::array());
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("ulpgate_registry_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST_F(FormatRegistry, NpyRoundTrips) {
  const std::string path = TempPath("e3m4.npy");
  const std::vector<float> values = {1.5f, -1.0f, 15.5f};
  WriteNumpyFile(path, {{"x", {3}, values, &kE3M4}});
  const std::string bytes = FileBytes(path);
  EXPECT_NE(bytes.find("'descr': '<V1'"), std::string::npos);
  EXPECT_EQ(bytes.substr(bytes.size() - 3), std::string("\x38\xb0\x6f"));
  EXPECT_EQ(ArrayValues(ReadNumpyFile(path)[0], kE3M4, "x"), values);
  // A 16-bit format NumPy and ml_dtypes have no type for: uint16 codes.
  const std::vector<float> wide = {1.0f, -2.0f};
  WriteNumpyFile(path, {{"x", {2}, wide, &kE6M9}});
  const std::string wide_bytes = FileBytes(path);
  EXPECT_NE(wide_bytes.find("'descr': '<u2'"), std::string::npos);
  EXPECT_EQ(wide_bytes.substr(wide_bytes.size() - 4), std::string("\x00\x3e\x00\xc0", 4));
  EXPECT_EQ(ArrayValues(ReadNumpyFile(path)[0], kE6M9, "x"), wide);
  // The type string may name it.
  const NumpyArray named{"x", "float8_e3m4_test", {1}, {0x38}};
  EXPECT_EQ(NumpyFormat(named), &kE3M4);
  std::filesystem::remove(path);
}

// The kernels run in f32, bf16 and f16 only: E6M9 is 16 bits too, and is
// refused, never run as f16.
TEST_F(FormatRegistry, OpsWithoutKernelsInItRefuseIt) {
  EXPECT_EQ(FindNarrowFormat(kE6M9), nullptr);
  try {
    RequireNarrowFormat(kE6M9, "staged elementwise models");
    FAIL() << "a row for E6M9";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "staged elementwise models: not supported in float16_e6m9_test (the kernels "
                           "run in f32, bf16, f16)");
  }
  const ElementwiseOpInfo& tanh_bwd = *FindElementwiseOp("tanh_bwd");
  EXPECT_FALSE(RunsIn(tanh_bwd, kE6M9));
  EXPECT_FALSE(RunsIn(tanh_bwd, kE3M4));
  try {
    VariantNames(tanh_bwd, kE6M9);
    FAIL() << "variants in E6M9";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "tanh_bwd has no kernels in float16_e6m9_test");
  }
  EXPECT_THROW(NarrowModelInfos(tanh_bwd, kE6M9), InputError);
  try {
    MakeSweepDomain(kE6M9, SweepDomain::Kind::kPairs, {}, {"grad", "t"});
    FAIL() << "a sweep of E6M9";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("all pairs are swept in bf16 or f16, not float16_e6m9_test"),
              std::string::npos);
  }
  EXPECT_THROW(ParseDriftPrecision("float16_e6m9_test"), InputError);
  EXPECT_THROW(ParseDriftPrecision("mixed_float16_e6m9_test"), InputError);
  EXPECT_EQ(IutElementBytes("float16_e6m9_test"), 0u);
  EXPECT_TRUE(OpsIn(kE6M9).empty());
  for (const OpInfo& op : OpTable()) {
    for (const std::string& dtype : op.dtypes) EXPECT_NE(dtype, kE6M9.name) << op.name;
  }
}

}  // namespace
}  // namespace ulpgate
