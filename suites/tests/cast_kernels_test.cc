// The cast kernels (kernels/cast.h) on every target, held bit for bit to the
// exact cast model (oracles/cast_policy.h's CastCode) under the policy each
// variant claims: on the boundaries of every destination (every midpoint
// between adjacent codes and its binary32 neighbours, whose lowest bit is a
// sticky bit far below the rounding bit, the codes themselves, the
// saturation threshold, the largest finite value, the subnormal edge, +-0,
// NaN payloads, +-inf), on random bit patterns, on every bf16 and f16 source,
// on tails of every length and misaligned starts; the decoders on every code;
// and the test-only mutants caught, each named by the policy it follows
// instead.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernels/cast.h"
#include "kernels/testing/cast_mutants.h"
#include "oracles/cast_policy.h"
#include "oracles/cast_reference.h"
#include "oracles/float_text.h"
#include "oracles/format.h"
#include "suites/engine/cast_cases.h"
#include "suites/engine/cast_conformance.h"
#include "suites/tests/test_targets.h"

namespace ulpgate {
namespace {

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The positive values of `to` (0 where it has one), ascending, from its codes.
std::vector<double> PositiveValues(const FloatFormat& to) {
  std::set<double> values;
  for (uint64_t c = 0; c < (uint64_t{1} << to.bits); ++c) {
    const double v = DecodeBits(to, c);
    if (std::isfinite(v) && v >= 0) values.insert(v);
  }
  return {values.begin(), values.end()};
}

// The boundary inputs of a cast to `to`, as binary32 patterns, both signs.
std::vector<uint32_t> BoundaryInputs(const FloatFormat& to) {
  std::vector<float> positive;
  const auto with_neighbours = [&](float x) {
    positive.push_back(x);
    positive.push_back(std::nextafter(x, 0.0f));
    positive.push_back(std::nextafter(x, std::numeric_limits<float>::infinity()));
  };
  std::vector<double> values = PositiveValues(to);
  // The value past the largest finite one, where the grid would go on: the
  // midpoint between them is the saturation threshold of rounding to nearest.
  const double largest = values.back();
  const double quantum = std::ldexp(1.0, std::ilogb(largest) - (to.precision - 1));
  values.push_back(largest + quantum);
  values.push_back(std::ldexp(1.0, to.emax + 1));
  for (size_t i = 0; i < values.size(); ++i) {
    with_neighbours(static_cast<float>(values[i]));
    if (i + 1 < values.size() && values[i + 1] <= std::numeric_limits<float>::max()) {
      const double mid = (values[i] + values[i + 1]) / 2;
      EXPECT_EQ(static_cast<double>(static_cast<float>(mid)), mid) << "a midpoint is a binary32 value";
      with_neighbours(static_cast<float>(mid));
      // A quarter and three quarters of the way: the rounding bit clear and
      // set with no tie.
      with_neighbours(static_cast<float>(values[i] + (values[i + 1] - values[i]) / 4));
      with_neighbours(static_cast<float>(values[i] + 3 * (values[i + 1] - values[i]) / 4));
    }
  }
  // Below the smallest value: half of it and around (the subnormal edge, and
  // E8M0's values below 2^-127, binary32 subnormals themselves).
  with_neighbours(static_cast<float>(values[values[0] == 0 ? 1 : 0] / 2));
  with_neighbours(static_cast<float>(values[values[0] == 0 ? 1 : 0] / 4));
  with_neighbours(std::numeric_limits<float>::min());
  with_neighbours(std::numeric_limits<float>::denorm_min());
  with_neighbours(std::numeric_limits<float>::max());
  with_neighbours(0x1.8p-127f);
  with_neighbours(0x1.8p-128f);
  with_neighbours(1.0f);
  positive.push_back(0.0f);
  positive.push_back(std::numeric_limits<float>::infinity());
  std::vector<uint32_t> out;
  for (float x : positive) {
    if (std::isnan(x)) continue;
    out.push_back(FloatBits(x));
    out.push_back(FloatBits(x) ^ 0x80000000u);
  }
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fbfffffu,
                       0x7fffffffu, 0xffffffffu, 0x7fa00000u}) {
    out.push_back(nan);
  }
  return out;
}

// Random patterns: every bit pattern, and patterns in and around the
// destination's range (exponents from below its subnormals to past emax).
std::vector<uint32_t> RandomInputs(const FloatFormat& to, uint64_t seed, size_t n) {
  std::vector<uint32_t> out;
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t r = SplitMix(state);
    if (i % 2 == 0) {
      out.push_back(static_cast<uint32_t>(r));
    } else {
      const int lo = to.emin - to.precision - 2, hi = to.emax + 2;
      const int e = lo + static_cast<int>((r >> 32) % static_cast<uint64_t>(hi - lo + 1));
      const uint32_t biased = static_cast<uint32_t>(std::max(e + 127, 0));
      out.push_back((static_cast<uint32_t>(r >> 63) << 31) | (biased << 23) |
                    static_cast<uint32_t>(r & 0x7fffff));
    }
  }
  return out;
}

struct CastParam {
  const TargetInfo* target;
  const FloatFormat* from;
  const FloatFormat* to;
  const CastVariantInfo* variant;
};

std::vector<CastParam> CastParams() {
  std::vector<CastParam> out;
  for (const TargetInfo* t : CompiledTestTargets()) {
    for (const FloatFormat* from : kCastSources) {
      for (const FloatFormat* to : kCastDestinations) {
        for (const CastVariantInfo& v : kCastVariants) {
          if (CastVariantApplies(*from, *to, v.variant)) out.push_back({t, from, to, &v});
        }
      }
    }
  }
  return out;
}

void PrintTo(const CastParam& p, std::ostream* out) {
  *out << p.target->name << " " << p.from->name << " -> " << p.to->name << " " << p.variant->name;
}

class CastKernelTest : public testing::TestWithParam<CastParam> {
 protected:
  void SetUp() override {
    if (!GetParam().target->supported) {
      GTEST_SKIP() << GetParam().target->name << " is " << NotRunnableReason(*GetParam().target);
    }
    kernel_ = FindCastKernel(GetParam().from->name, GetParam().to->name, GetParam().variant->name,
                             GetParam().target->bits);
    ASSERT_NE(kernel_, nullptr);
    const std::optional<CastPolicy> p = ParseCastPolicy(GetParam().variant->policy);
    ASSERT_TRUE(p.has_value()) << GetParam().variant->policy;
    policy_ = *p;
    ASSERT_EQ(CastPolicyProblem(*GetParam().from, *GetParam().to, policy_), "");
  }

  // The inputs as the kernel's storage (binary32 patterns, or bf16 and f16
  // patterns) and as their values.
  struct Inputs {
    std::vector<uint32_t> f32;
    std::vector<uint16_t> narrow;
    std::vector<double> values;
    const void* data() const {
      return f32.empty() ? static_cast<const void*>(narrow.data()) : f32.data();
    }
  };
  Inputs FromF32(std::vector<uint32_t> bits) const {
    Inputs in;
    for (uint32_t b : bits) in.values.push_back(static_cast<double>(FloatFromBits(b)));
    in.f32 = std::move(bits);
    return in;
  }
  // Every pattern of a 16-bit source.
  Inputs EveryNarrowPattern() const {
    Inputs in;
    for (uint32_t b = 0; b < 0x10000; ++b) {
      in.narrow.push_back(static_cast<uint16_t>(b));
      in.values.push_back(DecodeBits(*GetParam().from, b));
    }
    return in;
  }
  Inputs SourceInputs(const std::vector<uint32_t>& f32) const {
    return IsBinary32(*GetParam().from) ? FromF32(f32) : EveryNarrowPattern();
  }

  std::string Describe(const Inputs& in, size_t i) const {
    return in.f32.empty() ? fmt::format("input {} = {}", BitsText(*GetParam().from, in.narrow[i]),
                                        in.values[i])
                          : fmt::format("input 0x{:08x} = {:a}", in.f32[i], in.values[i]);
  }

  // The kernel over `in` equals the model code for code.
  void ExpectModel(const Inputs& in) const {
    std::vector<uint8_t> out(in.values.size());
    kernel_(in.data(), out.data(), out.size());
    size_t wrong = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const uint64_t want = CastCode(*GetParam().from, *GetParam().to, in.values[i], policy_);
      if (out[i] == want) continue;
      if (++wrong <= 5) {
        ADD_FAILURE() << Describe(in, i) << ": kernel 0x" << std::hex << int{out[i]}
                      << ", model (" << policy_.Name() << ") 0x" << want;
      }
    }
    EXPECT_EQ(wrong, 0u) << "outputs off the model " << policy_.Name();
  }

  CastKernel kernel_ = nullptr;
  CastPolicy policy_;
};

TEST_P(CastKernelTest, FollowsItsPolicyOnTheBoundaries) {
  ExpectModel(SourceInputs(BoundaryInputs(*GetParam().to)));
}

TEST_P(CastKernelTest, FollowsItsPolicyOnRandomPatterns) {
  if (!IsBinary32(*GetParam().from)) GTEST_SKIP() << "every 16-bit pattern is a boundary input";
  ExpectModel(FromF32(RandomInputs(*GetParam().to, 0x5eed, 1 << 14)));
}

// Calls of every length 0..2 lanes + 1 at starts 0..3 elements past the
// buffers' own: each output as a whole call gives it, and nothing written
// outside the output.
TEST_P(CastKernelTest, TailsAndMisalignedStarts) {
  const Inputs all = SourceInputs(BoundaryInputs(*GetParam().to));
  std::vector<uint8_t> whole(all.values.size());
  kernel_(all.data(), whole.data(), whole.size());
  const size_t width = IsBinary32(*GetParam().from) ? 4 : 2;
  const size_t lanes = GetParam().target->f32_lanes;
  constexpr size_t kGuard = 64;
  constexpr uint8_t kGuardByte = 0xa5;
  for (size_t n = 0; n <= 2 * lanes + 1; ++n) {
    for (size_t offset = 0; offset < 4; ++offset) {
      const size_t first = (n * 7 + offset * 13) % (all.values.size() - n);
      std::vector<uint8_t> in((n + 4) * width);
      std::memcpy(in.data() + offset * width,
                  static_cast<const uint8_t*>(all.data()) + first * width, n * width);
      std::vector<uint8_t> out(n + 2 * kGuard + 4, kGuardByte);
      kernel_(in.data() + offset * width, out.data() + kGuard + offset, n);
      for (size_t i = 0; i < out.size(); ++i) {
        const bool inside = i >= kGuard + offset && i < kGuard + offset + n;
        if (inside) {
          ASSERT_EQ(out[i], whole[first + i - kGuard - offset])
              << "n " << n << ", start offset " << offset << ", element " << i - kGuard - offset;
        } else {
          ASSERT_EQ(out[i], kGuardByte) << "n " << n << ", start offset " << offset
                                        << ": wrote byte " << static_cast<long>(i) -
                                               static_cast<long>(kGuard + offset);
        }
      }
    }
  }
}

std::string CastParamName(const testing::TestParamInfo<CastParam>& info) {
  return fmt::format("{}_{}_to_{}_{}", info.param.target->name, info.param.from->name,
                     info.param.to->name, info.param.variant->name);
}

INSTANTIATE_TEST_SUITE_P(PerTarget, CastKernelTest, testing::ValuesIn(CastParams()),
                         CastParamName);

// The variants' table against the model's catalogue: each variant exists
// exactly where its policy makes sense, and its policy is in the catalogue.
TEST(CastVariants, ExistWhereTheirPolicyIsInTheCatalogue) {
  for (const FloatFormat* from : kCastSources) {
    for (const FloatFormat* to : kCastDestinations) {
      for (const CastVariantInfo& v : kCastVariants) {
        const std::optional<CastPolicy> p = ParseCastPolicy(v.policy);
        ASSERT_TRUE(p.has_value()) << v.policy;
        EXPECT_EQ(CastVariantApplies(*from, *to, v.variant),
                  CastPolicyProblem(*from, *to, *p).empty())
            << from->name << " -> " << to->name << " " << v.name;
        bool listed = false;
        for (const CastPolicy& c : CastPolicies(*from, *to)) listed = listed || c == *p;
        EXPECT_EQ(listed, CastVariantApplies(*from, *to, v.variant))
            << from->name << " -> " << to->name << " " << v.name;
        EXPECT_EQ(FindCastKernel(from->name, to->name, v.name, BestTarget().bits) != nullptr,
                  CastVariantApplies(*from, *to, v.variant));
      }
    }
  }
  EXPECT_EQ(FindCastKernel("f64", "float8_e4m3fn", "rne_sat", BestTarget().bits), nullptr);
  EXPECT_EQ(FindCastKernel("f32", "f16", "rne_sat", BestTarget().bits), nullptr);
  EXPECT_EQ(FindCastKernel("f32", "float8_e4m3fn", "rne", BestTarget().bits), nullptr);
}

// The exhaustive check's fast reference (oracles/cast_reference.h) against
// the model itself: every policy it takes, on the boundaries and random
// patterns of every destination; and its runs (Fill) against its codes one by
// one across the sign change, the NaN patterns and infinity.
TEST(CastReference, EqualsTheModel) {
  const char* policies[] = {"nearest_even.saturate", "nearest_even.saturate.via_bf16",
                            "toward_zero.saturate",  "nearest_away.saturate",
                            "nearest_even.nan",      "toward_zero.nan",
                            "nearest_away.nan.via_bf16", "nearest_even.saturate.flush_input",
                            "toward_zero.nan.flush_input.via_bf16"};
  for (const FloatFormat* to : kCastDestinations) {
    std::vector<uint32_t> inputs = BoundaryInputs(*to);
    const std::vector<uint32_t> random = RandomInputs(*to, 0xcafe, 1 << 16);
    inputs.insert(inputs.end(), random.begin(), random.end());
    for (const char* name : policies) {
      const CastPolicy policy = *ParseCastPolicy(name);
      if (!CastPolicyProblem(kBinary32, *to, policy).empty()) continue;
      const Binary32CastReference reference(*to, policy);
      size_t wrong = 0;
      for (uint32_t b : inputs) {
        const uint64_t want = CastCode(kBinary32, *to, static_cast<double>(FloatFromBits(b)), policy);
        const uint8_t got = reference.Code(b);
        if (got != want && ++wrong <= 3) {
          ADD_FAILURE() << to->name << " " << name << " input 0x" << std::hex << b << ": reference 0x"
                        << int{got} << ", model 0x" << want;
        }
      }
      EXPECT_EQ(wrong, 0u) << to->name << " " << name;
      for (uint32_t first : {0u, 0x007fff00u, 0x807fff00u, 0x7f7fff00u, 0x7fffff00u, 0xff7fff00u, 0x3f7ff000u,
                             0xfffffe00u}) {
        std::vector<uint8_t> run(0x200);
        reference.Fill(first, run.size(), run.data());
        for (size_t j = 0; j < run.size(); ++j) {
          ASSERT_EQ(run[j], reference.Code(static_cast<uint32_t>(first + j)))
              << to->name << " " << name << " pattern 0x" << std::hex << first + j;
        }
      }
    }
  }
}

// The decoders: every code's value, exactly.
class CastDecodeTest : public PerTargetTest {};

TEST_P(CastDecodeTest, EveryCodeDecodesExactly) {
  for (const FloatFormat* to : kCastDestinations) {
    const CastDecodeKernel decode = FindCastDecodeKernel(to->name, GetParam()->bits);
    ASSERT_NE(decode, nullptr) << to->name;
    const size_t count = size_t{1} << to->bits;
    std::vector<uint8_t> codes(count);
    for (size_t c = 0; c < count; ++c) codes[c] = static_cast<uint8_t>(c);
    std::vector<float> values(count);
    decode(codes.data(), values.data(), count);
    for (size_t c = 0; c < count; ++c) {
      const double want = DecodeBits(*to, c);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(values[c])) << to->name << " code " << c;
      } else {
        EXPECT_EQ(FloatBits(values[c]), FloatBits(static_cast<float>(want)))
            << to->name << " code 0x" << std::hex << c << ": " << values[c] << " vs " << want;
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(CastDecodeTest);

// A mutant kernel leaves nearest_even.saturate, and the fit names what it
// follows instead: ties away nearest_away.saturate, an overflow to NaN
// nearest_even.nan (where the format has a NaN), a dropped sticky bit nothing.
class CastMutantTest : public PerTargetTest {};

// The boundary inputs of each destination and every policy's codes on them,
// once for every target's test.
struct MutantInputs {
  CastInputs inputs;
  CastModels models;
};
const MutantInputs& MutantInputsOf(const FloatFormat& to) {
  static std::map<const FloatFormat*, MutantInputs> cache;
  auto it = cache.find(&to);
  if (it == cache.end()) {
    MutantInputs m;
    m.inputs.from = &kBinary32;
    m.inputs.Add("boundary", BoundaryInputs(to));
    m.models = EvaluateCastModels(kBinary32, to, m.inputs);
    it = cache.emplace(&to, std::move(m)).first;
  }
  return it->second;
}

TEST_P(CastMutantTest, AreCaughtAndNamed) {
  for (const FloatFormat* to : kCastDestinations) {
    const MutantInputs& in = MutantInputsOf(*to);
    const std::vector<uint32_t>& bits = in.inputs.patterns;
    for (CastMutant m : kCastMutants) {
      const CastKernel kernel = FindCastMutantKernel(to->name, m, GetParam()->bits);
      ASSERT_NE(kernel, nullptr);
      std::vector<uint8_t> out(bits.size());
      kernel(bits.data(), out.data(), out.size());
      // As run, check and sweep measure outputs.
      const CastCaseResult r = MeasureCastOutputs(*to, in.inputs, in.models, out, CastPolicy{});
      const std::vector<CastPolicyFit>& fits = r.fits;
      const std::vector<std::string>& followed = r.followed;
      const std::string where = fmt::format("{} {}", to->name, CastMutantName(m));
      // E8M0 (p = 1) has a significand of 1 alone: every kept part is odd, so
      // ties to even round up as ties away do and every half up is a tie:
      // those two bugs change nothing there.
      if (to->precision == 1 && m != CastMutant::kOverflowNan) continue;
      // A route through bf16 is no policy of E8M0 (CastVariantApplies).
      if (to->precision == 1 && m == CastMutant::kViaBf16) continue;
      EXPECT_GT(r.claimed_fit->mismatches, 0u) << where;
      for (const std::string& f : followed) {
        EXPECT_NE(f, "nearest_even.saturate") << where;
      }
      switch (m) {
        case CastMutant::kTiesAway:
          ASSERT_FALSE(followed.empty()) << where;
          EXPECT_EQ(followed.front(), "nearest_away.saturate") << where;
          break;
        case CastMutant::kOverflowNan:
          if (to->has_nan()) {
            ASSERT_FALSE(followed.empty()) << where;
            EXPECT_EQ(followed.front(), "nearest_even.nan") << where;
          } else {
            EXPECT_TRUE(followed.empty()) << where << " follows " << followed.front();
          }
          break;
        case CastMutant::kViaBf16:
          ASSERT_FALSE(followed.empty()) << where;
          EXPECT_EQ(followed.front(), "nearest_even.saturate.via_bf16") << where;
          break;
        case CastMutant::kStickyDropped:
          EXPECT_TRUE(followed.empty()) << where << " follows " << followed.front();
          ASSERT_FALSE(fits.empty());
          EXPECT_GT(fits.front().mismatches, 0u);
          break;
      }
    }
  }
}

ULPGATE_INSTANTIATE_PER_TARGET(CastMutantTest);

}  // namespace
}  // namespace ulpgate
