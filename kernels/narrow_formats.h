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
#include <cstddef>
#include <stdexcept>
#include <string>
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

// The row of a format, or nullptr: this table alone says which narrow formats
// the kernels run in, so that a format without a row (a registered 8-bit
// one, say) is refused here rather than taken for another 16-bit format.
constexpr const NarrowFormat* FindNarrowFormat(const FloatFormat& format) {
  const int row = NarrowFormatIndex(format.name);
  return row < 0 ? nullptr : &kNarrowFormats[static_cast<size_t>(row)];
}

// The kernels' formats by name, "f32, bf16, f16", for errors.
inline std::string KernelFormatNames() {
  std::string names = kBinary32.name;
  for (const NarrowFormat& f : kNarrowFormats) names += std::string(", ") + f.format->name;
  return names;
}

// The row of a format; throws std::invalid_argument "WHAT: not supported in
// FORMAT (the kernels run in f32, bf16, f16)" for a format without one.
inline const NarrowFormat& RequireNarrowFormat(const FloatFormat& format, std::string_view what) {
  if (const NarrowFormat* row = FindNarrowFormat(format)) return *row;
  throw std::invalid_argument(std::string(what) + ": not supported in " + format.name +
                              " (the kernels run in " + KernelFormatNames() + ")");
}

// A row's index in kNarrowFormats, for tables kept per row.
inline size_t NarrowRow(const NarrowFormat& row) {
  return static_cast<size_t>(&row - kNarrowFormats.data());
}

// True when a format's pattern is the top half of binary32's (bf16's traits):
// widening is a shift, which DecodeNarrow uses; false for every other format.
constexpr bool IsBinary32TopHalf(const FloatFormat& f) {
  return f.bits == 16 && f.exponent_bits() == kBinary32.exponent_bits() &&
         f.emin == kBinary32.emin && f.emax == kBinary32.emax && f.has_sign &&
         f.nan == NanEncoding::kIeee && f.packing == Packing::kOnePerUnit;
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_NARROW_FORMATS_H_
