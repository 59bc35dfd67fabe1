// The 16-bit storage formats the kernels run in: one row per format, from
// which the registry compiles every 16-bit kernel (the elementwise ops' narrow
// variants, the reductions) on every target, the models follow Highway's own
// conversions, and the op table lists the formats. A format's conversions are
// its specialization of ConversionsOf (kernels/narrow_convert-inl.h).
//
// Plain C++: no Highway types, so suites/ and tools/ include it directly.
#ifndef ULPGATE_KERNELS_NARROW_FORMATS_H_
#define ULPGATE_KERNELS_NARROW_FORMATS_H_

#include <array>
#include <string_view>

#include "oracles/float_format.h"

namespace ulpgate {

// What Highway 1.0.3's own PromoteTo/DemoteTo do in a format: the model of
// the variants that convert with them (NarrowRounding::kHighwayConvert).
enum class HighwayConversion {
  // bf16: PromoteTo exact, DemoteTo drops the low 16 bits (rounds toward
  // zero) on every target.
  kTruncatingDemotion,
  // f16: F16C instructions (IEEE, to nearest even) where the target has them
  // (TargetInfo::f16c_conversions), else Highway's software conversion
  // (oracles/highway_f16.h).
  kF16cOrSoftware,
};

struct NarrowFormat {
  const FloatFormat* format;
  HighwayConversion highway;
};

inline constexpr std::array<NarrowFormat, 2> kNarrowFormats = {{
    {&kBFloat16, HighwayConversion::kTruncatingDemotion},
    {&kBinary16, HighwayConversion::kF16cOrSoftware},
}};

// The row of the format named `name` ("bf16", "f16"), or -1.
constexpr int NarrowFormatIndex(std::string_view name) {
  for (size_t i = 0; i < kNarrowFormats.size(); ++i) {
    if (name == kNarrowFormats[i].format->name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_NARROW_FORMATS_H_
