// Casts from f32, bf16 and f16 to the 8-, 6- and 4-bit formats, and the
// decoding of those formats' codes back to f32: the kernels' tables. Plain
// C++, no Highway types: suites/ and tools/ include it directly; the kernels
// themselves are kernels/cast-inl.h, compiled for every target by
// kernels/cast.cc.
//
// Every kernel writes one code per byte, the 4-bit format (float4_e2m1fn)
// included: the code in the byte's low bits, the high bits zero. Packing two
// 4-bit codes to a byte (FloatFormat::Packing) is storage, not the cast;
// PackNibbles below does it where a caller wants the packed form.
//
// A variant is what real code does, each the exact cast model's policy
// (oracles/cast_policy.h) that it follows bit for bit:
//   rne_sat   one rounding to nearest, ties to even, saturating to the largest
//             finite value (OCP's satfinite; an infinite source saturates
//             too): "nearest_even.saturate";
//   via_bf16  the source rounded to nearest even to bf16 first (IEEE, a
//             finite value past bf16's range becoming infinite), then
//             rne_sat: a double rounding, as code that casts a bf16 tensor
//             does; "nearest_even.saturate.via_bf16"; only where bf16 lies
//             between source and destination (from f32, not to E8M0, whose
//             exponent range bf16 lacks);
//   trunc     toward zero, saturating: "toward_zero.saturate".
// In all three a NaN source gives the destination's NaN (the quiet NaN of
// the source's sign for E5M2, 0x7f or 0xff by sign for E4M3FN, 0x80 for the
// FNUZ formats, 0xff for E8M0; the code of -0 in FP6 and FP4, which have no
// NaN); a zero result is +0 where the destination has no -0; E8M0, unsigned
// and without zero, takes a negative source or a zero as NaN and a positive
// one below 2^-127 as 2^-127.
#ifndef ULPGATE_KERNELS_CAST_H_
#define ULPGATE_KERNELS_CAST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "oracles/float_format.h"

namespace ulpgate {

enum class CastVariant : uint8_t { kRneSat, kViaBf16, kTrunc };

struct CastVariantInfo {
  CastVariant variant;
  const char* name;    // as the CLI and reports name it
  const char* policy;  // the cast model's policy it follows (CastPolicy::Name())
};

inline constexpr std::array<CastVariantInfo, 3> kCastVariants = {{
    {CastVariant::kRneSat, "rne_sat", "nearest_even.saturate"},
    {CastVariant::kViaBf16, "via_bf16", "nearest_even.saturate.via_bf16"},
    {CastVariant::kTrunc, "trunc", "toward_zero.saturate"},
}};

// The sources, in their storage: float for f32, the bit patterns (uint16_t)
// of bf16 and f16.
inline constexpr std::array<const FloatFormat*, 3> kCastSources = {
    {&kBinary32, &kBFloat16, &kBinary16}};

// The destinations: every 8-, 6- and 4-bit format of oracles/float_format.h.
inline constexpr std::array<const FloatFormat*, 8> kCastDestinations = {
    {&kFloat8E4M3FN, &kFloat8E4M3FNUZ, &kFloat8E5M2, &kFloat8E5M2FNUZ, &kFloat6E2M3FN,
     &kFloat6E3M2FN, &kFloat4E2M1FN, &kFloat8E8M0FNU}};

// Whether a variant exists for (from, to): via_bf16 needs bf16 to hold every
// value of `to` (precision and exponent range) and to be narrower than
// `from`; the others always exist.
constexpr bool CastVariantApplies(const FloatFormat& from, const FloatFormat& to,
                                  CastVariant variant) {
  if (variant != CastVariant::kViaBf16) return true;
  const FloatFormat& bf16 = kBFloat16;
  const bool holds_to = bf16.precision >= to.precision && bf16.emax >= to.emax &&
                        bf16.emin <= to.emin;
  const bool narrower_than_from = from.precision > bf16.precision && from.emax >= bf16.emax &&
                                  from.emin <= bf16.emin;
  return holds_to && narrower_than_from;
}

// in: n source elements (float, or uint16_t patterns); out: n codes, one a byte.
using CastKernel = void (*)(const void* in, uint8_t* out, size_t n);
// codes: n codes, one a byte (only the format's low bits are read); out: their
// values, exactly (every code's value is a binary32 value). A NaN code gives a
// quiet NaN (E5M2's keeps its sign and payload, as a wider IEEE format does).
using CastDecodeKernel = void (*)(const uint8_t* codes, float* out, size_t n);

// The kernel of a cast from `from` ("f32", "bf16", "f16") to `to` (a format of
// kCastDestinations by name) in `variant` (kCastVariants' names) on `target`
// (a Highway target bit); nullptr for an unknown name, a variant that does not
// apply, or a target not compiled.
CastKernel FindCastKernel(std::string_view from, std::string_view to, std::string_view variant,
                          int64_t target);
CastDecodeKernel FindCastDecodeKernel(std::string_view to, int64_t target);

// The test seam of the mutant build (kernels/testing/cast_mutants.h): from now
// on FindCastKernel(from, to, variant, target) returns `kernel`. Production
// code never calls it.
void ReplaceCastKernelForTesting(std::string_view from, std::string_view to,
                                 std::string_view variant, int64_t target, CastKernel kernel);

// nullptr for an unknown variant name.
const CastVariantInfo* FindCastVariant(std::string_view name);
// nullptr for a name that is no source (destination).
const FloatFormat* FindCastSource(std::string_view name);
const FloatFormat* FindCastDestination(std::string_view name);

// Two 4-bit codes a byte, element 2i in the low nibble (Packing::kNibblePairs):
// out holds (n + 1) / 2 bytes, the last one's high nibble zero for odd n.
inline void PackNibbles(const uint8_t* codes, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; i += 2) {
    const uint8_t high = i + 1 < n ? static_cast<uint8_t>(codes[i + 1] & 0xf) : 0;
    out[i / 2] = static_cast<uint8_t>((codes[i] & 0xf) | (high << 4));
  }
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_CAST_H_
