// Block quantization kernels, per Highway target: MX (OCP MX v1.0: E8M0
// scales under one of five scale rules, elements FP8/FP6/FP4) and NVFP4.
//
// Contract. Lanes: binary32 inputs, u32 lanes for patterns and codes, bytes
// out (scales, and element codes unpacked one per byte). Blocks along rows
// (block_size consecutive elements, whole vectors: 4, 8 or 16 float lanes
// divide 16 and 32) or along columns (lanes across adjacent columns, the
// block's rows reduced lane by lane; a column tail one lane at a time). The
// model, bit for bit on every target: oracles/block_scale.h (ScaleByte,
// MxQuantize and Nvfp4Quantize with nearest_even.saturate elements,
// BlockDequantize rounded once to binary32). There is no error budget: a
// kernel conforms or it does not.
//
// Why each step is exact:
//  - The scale 2^-X multiplies: x * 2^-X is exact unless it is below
//    binary32's normal range (X >= -127 keeps it below 2^16 in magnitude);
//    there it is rounded to binary32's subnormal grid (2^-149), but every
//    element format's half smallest subnormal (2^-17 at least) is far
//    above 2^-126, so the element's nearest-even code is its zero either way.
//  - The element rounding is integer rounding of the pattern where the value
//    is normal in the element format (round_bits.h's argument: add 2^(s-1) -
//    1 plus the kept part's lowest bit, shift s = 24 - p bits out; a carry
//    moves into the exponent), and the subnormal grid by one binary32
//    addition of 2^(emin + 24 - p), whose ulp is the element's subnormal
//    quantum. Saturation is the minimum of the magnitude code and the
//    largest finite one: codes order as magnitudes do.
//  - RCEIL's quotient and the reciprocal form's product are Highway's Div and
//    Mul, IEEE binary32 operations on every x86 target.

#if defined(ULPGATE_KERNELS_BLOCK_QUANT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ULPGATE_KERNELS_BLOCK_QUANT_INL_H_
#undef ULPGATE_KERNELS_BLOCK_QUANT_INL_H_
#else
#define ULPGATE_KERNELS_BLOCK_QUANT_INL_H_
#endif

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "oracles/block_format.h"
#include "oracles/float_format.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {
namespace block_quant {

namespace hn = hwy::HWY_NAMESPACE;

// Up to 16 float lanes: the smallest block (16) is whole vectors.
using DF = hn::CappedTag<float, 16>;
using DF1 = hn::CappedTag<float, 1>;

namespace impl {

inline uint32_t Bits(float x) {
  uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float FromBits(uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// An element format's constants, from its traits alone (no name asked).
struct ElementConstants {
  uint32_t shift;           // 24 - p: binary32 mantissa bits the element lacks
  uint32_t half_minus_one;  // 2^(shift-1) - 1
  uint32_t rebias;          // (127 - bias) << 23: a normal pattern less it, shifted, is the code
  uint32_t min_normal;      // 2^emin's binary32 pattern
  uint32_t magic;           // 2^(emin + 24 - p)'s pattern: its ulp is the subnormal quantum
  uint32_t max_code;        // the largest finite magnitude's code
  uint32_t nan_code;        // what a NaN becomes (the sign bit alone without a NaN)
  uint32_t sign_shift;      // 32 - bits
  uint32_t mantissa_bits;
  uint32_t exponent_all_ones;  // IEEE formats: the exponent field of inf/NaN, in place
  float largest;
  float quantum;  // 2^(emin - p + 1)
};

inline ElementConstants ConstantsOf(const FloatFormat& f) {
  ElementConstants c{};
  const int m = f.mantissa_bits();
  const int bias = f.bias();
  c.shift = static_cast<uint32_t>(24 - f.precision);
  c.half_minus_one = (uint32_t{1} << (c.shift - 1)) - 1;
  c.rebias = static_cast<uint32_t>(127 - bias) << 23;
  c.min_normal = static_cast<uint32_t>(f.emin + 127) << 23;
  c.magic = static_cast<uint32_t>(f.emin + 24 - f.precision + 127) << 23;
  const uint32_t top_mantissa = (uint32_t{1} << m) - 1 - (f.largest_loses_top_mantissa() ? 1u : 0u);
  c.max_code = (static_cast<uint32_t>(f.emax + bias) << m) | top_mantissa;
  const uint32_t sign = uint32_t{1} << (f.bits - 1);
  c.exponent_all_ones = ((uint32_t{1} << f.exponent_bits()) - 1) << m;
  switch (f.nan) {
    case NanEncoding::kIeee:
      c.nan_code = c.exponent_all_ones | (uint32_t{1} << (m - 1));
      break;
    case NanEncoding::kAllOnes:
      c.nan_code = sign - 1;
      break;
    case NanEncoding::kNegativeZero:
    case NanEncoding::kNone:
      c.nan_code = sign;
      break;
  }
  c.sign_shift = static_cast<uint32_t>(32 - f.bits);
  c.mantissa_bits = static_cast<uint32_t>(m);
  c.largest = FromBits((c.max_code << c.shift) + c.rebias);
  c.quantum = FromBits(static_cast<uint32_t>(f.emin - m + 127) << 23);
  return c;
}

// a >= b on patterns below 2^31, b >= 1 (Highway 1.0.3 compares integers
// by Gt only).
template <class DU>
HWY_INLINE hn::Mask<DU> AtLeast(DU du, hn::Vec<DU> a, hn::Vec<DU> b) {
  const hn::RebindToSigned<DU> di;
  return hn::RebindMask(du,
                        hn::Gt(hn::BitCast(di, a), hn::BitCast(di, hn::Sub(b, hn::Set(du, 1u)))));
}

// y's element codes, to nearest even, saturating; a NaN lane gets nan_code.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Encode(D d, const ElementConstants& c, hn::Vec<D> y) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, y);
  const auto sign = hn::And(bits, hn::Set(du, 0x80000000u));
  const auto magnitude = hn::Xor(bits, sign);
  const int shift = static_cast<int>(c.shift);
  const auto t =
      hn::Add(magnitude, hn::Add(hn::Set(du, c.half_minus_one),
                                 hn::And(hn::ShiftRightSame(magnitude, shift), hn::Set(du, 1u))));
  // Normal lanes only (magnitude >= 2^emin > rebias): no wrap-around there.
  const auto normal = hn::Min(hn::ShiftRightSame(hn::Sub(t, hn::Set(du, c.rebias)), shift),
                              hn::Set(du, c.max_code));
  const auto magic = hn::Set(du, c.magic);
  const auto small =
      hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(d, magnitude), hn::BitCast(d, magic))), magic);
  auto code = hn::IfThenElse(AtLeast(du, magnitude, hn::Set(du, c.min_normal)), normal, small);
  code = hn::Or(code, hn::ShiftRightSame(sign, static_cast<int>(c.sign_shift)));
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(y)), hn::Set(du, c.nan_code), code);
}

// The values of element codes (u32 lanes), exactly, as binary32.
template <class D>
HWY_INLINE hn::Vec<D> Decode(D d, const ElementConstants& c, const FloatFormat& f,
                             hn::Vec<hn::RebindToUnsigned<D>> code) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const uint32_t sign_bit = uint32_t{1} << (f.bits - 1);
  const auto magnitude = hn::And(code, hn::Set(du, sign_bit - 1));
  const auto sign =
      hn::ShiftLeftSame(hn::And(code, hn::Set(du, sign_bit)), static_cast<int>(c.sign_shift));
  const auto normal = hn::BitCast(
      d, hn::Add(hn::ShiftLeftSame(magnitude, static_cast<int>(c.shift)), hn::Set(du, c.rebias)));
  // Exponent field zero: mantissa times the quantum (exact: a few bits).
  const auto small = hn::Mul(hn::ConvertTo(d, hn::BitCast(di, magnitude)), hn::Set(d, c.quantum));
  auto value = hn::IfThenElse(
      hn::RebindMask(d, AtLeast(du, magnitude, hn::Set(du, uint32_t{1} << c.mantissa_bits))),
      normal, small);
  const auto nan = hn::Set(d, FromBits(0x7fc00000u));
  if (f.nan == NanEncoding::kIeee) {
    const auto special = AtLeast(du, magnitude, hn::Set(du, c.exponent_all_ones));
    const auto infinite = hn::Eq(magnitude, hn::Set(du, c.exponent_all_ones));
    const auto inf = hn::Set(d, FromBits(0x7f800000u));
    value = hn::IfThenElse(hn::RebindMask(d, special),
                           hn::IfThenElse(hn::RebindMask(d, infinite), inf, nan), value);
  } else if (f.nan == NanEncoding::kAllOnes) {
    value =
        hn::IfThenElse(hn::RebindMask(d, hn::Eq(magnitude, hn::Set(du, sign_bit - 1))), nan, value);
  }
  return hn::BitCast(d, hn::Or(hn::BitCast(du, value), sign));
}

// What a scale rule needs of the element format.
struct RuleConstants {
  int emax;
  uint32_t even_half;  // 2^(22 - (p-1)): half a unit in p significant bits
  float largest;       // M
  float reciprocal;    // RN32(1/M)
};

inline RuleConstants RuleConstantsOf(const FloatFormat& f) {
  const ElementConstants c = ConstantsOf(f);
  const float reciprocal = 1.0f / c.largest;  // one IEEE binary32 division
  return {f.emax, uint32_t{1} << (22 - f.mantissa_bits()), c.largest, reciprocal};
}

// A positive binary32 q rounded up to E8M0 (oracles/block_scale.h): the
// exponent field plus one where the mantissa is nonzero; a subnormal q is
// byte 1 above 2^-127 (mantissa 0x400000), byte 0 at or below it; infinity
// and NaN (and a normal q past 2^127) give 0xff.
template <class DU>
HWY_INLINE hn::Vec<DU> RoundUpE8M0(DU du, hn::Vec<DU> q) {
  const auto exponent = hn::ShiftRight<23>(q);
  const auto mantissa = hn::And(q, hn::Set(du, 0x7fffffu));
  const auto zero = hn::Zero(du);
  const auto one = hn::Set(du, 1u);
  const auto up = hn::IfThenElseZero(hn::Not(hn::Eq(mantissa, zero)), one);
  const auto subnormal_up = hn::IfThenElseZero(AtLeast(du, mantissa, hn::Set(du, 0x400001u)), one);
  auto byte = hn::IfThenElse(hn::Eq(exponent, zero), subnormal_up, hn::Add(exponent, up));
  byte = hn::IfThenElse(hn::Eq(exponent, hn::Set(du, 255u)), hn::Set(du, 255u), byte);
  return byte;
}

// x clamped to [0, 254] (signed).
template <class DU>
HWY_INLINE hn::Vec<DU> ClampByte(DU du, hn::Vec<DU> x) {
  const hn::RebindToSigned<DU> di;
  const auto s = hn::BitCast(di, x);
  return hn::BitCast(du, hn::Min(hn::Max(s, hn::Zero(di)), hn::Set(di, 254)));
}

// The E8M0 bytes of amax lanes (>= 0, +infinity, NaN) under kRule.
template <ScaleRule kRule, class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> ScaleBytes(D d, const RuleConstants& r,
                                                       hn::Vec<D> amax) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::BitCast(du, amax);
  const auto exponent = hn::ShiftRight<23>(bits);
  const auto nan_byte = hn::Set(du, 255u);
  const auto nonfinite = hn::Eq(exponent, nan_byte);
  const auto emax = hn::Set(du, static_cast<uint32_t>(r.emax));
  if constexpr (kRule == ScaleRule::kRceil || kRule == ScaleRule::kReciprocal) {
    const auto q = kRule == ScaleRule::kRceil ? hn::Div(amax, hn::Set(d, r.largest))
                                              : hn::Mul(amax, hn::Set(d, r.reciprocal));
    return RoundUpE8M0(du, hn::BitCast(du, q));
  } else {
    hn::Vec<decltype(du)> x;  // X + 127 + emax, before the clamp
    if constexpr (kRule == ScaleRule::kOcpFloor) {
      x = exponent;
    } else if constexpr (kRule == ScaleRule::kCeil) {
      const auto mantissa = hn::And(bits, hn::Set(du, 0x7fffffu));
      x = hn::Add(exponent,
                  hn::IfThenElseZero(hn::Not(hn::Eq(mantissa, hn::Zero(du))), hn::Set(du, 1u)));
    } else {
      // torchao's EVEN: half a unit at p bits added to the pattern; the
      // exponent field that results (255: carried to infinity, NaN).
      x = hn::ShiftRight<23>(hn::Add(bits, hn::Set(du, r.even_half)));
    }
    const auto byte = ClampByte(du, hn::Sub(x, emax));
    const auto carried = kRule == ScaleRule::kEven ? hn::Eq(x, nan_byte) : nonfinite;
    return hn::IfThenElse(hn::Or(nonfinite, carried), nan_byte, byte);
  }
}

// 2^-X for E8M0 bytes: 2^(127 - byte), 2^-127 (binary32's subnormal
// 0x00400000) for byte 254, NaN for 0xff.
template <class D>
HWY_INLINE hn::Vec<D> Multiplier(D d, hn::Vec<hn::RebindToUnsigned<D>> byte) {
  const hn::RebindToUnsigned<D> du;
  const auto normal = hn::ShiftLeft<23>(hn::Sub(hn::Set(du, 254u), byte));
  auto bits = hn::IfThenElse(hn::Eq(byte, hn::Set(du, 254u)), hn::Set(du, 0x00400000u), normal);
  bits = hn::IfThenElse(hn::Eq(byte, hn::Set(du, 255u)), hn::Set(du, 0x7fc00000u), bits);
  return hn::BitCast(d, bits);
}

// 2^X for E8M0 bytes, as Multiplier's inverse: 2^-127 for byte 0.
template <class D>
HWY_INLINE hn::Vec<D> ScaleValue(D d, hn::Vec<hn::RebindToUnsigned<D>> byte) {
  const hn::RebindToUnsigned<D> du;
  auto bits =
      hn::IfThenElse(hn::Eq(byte, hn::Zero(du)), hn::Set(du, 0x00400000u), hn::ShiftLeft<23>(byte));
  bits = hn::IfThenElse(hn::Eq(byte, hn::Set(du, 255u)), hn::Set(du, 0x7fc00000u), bits);
  return hn::BitCast(d, bits);
}

// u32 lanes (each below 256) stored as bytes.
template <class D>
HWY_INLINE void StoreBytes(D d, hn::Vec<hn::RebindToUnsigned<D>> v, uint8_t* out) {
  (void)d;
  const hn::Rebind<uint8_t, D> d8;
  const hn::RebindToSigned<D> di;
  hn::StoreU(hn::DemoteTo(d8, hn::BitCast(di, v)), d8, out);
}

template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> LoadBytes(D d, const uint8_t* in) {
  (void)d;
  const hn::Rebind<uint8_t, D> d8;
  const hn::RebindToUnsigned<D> du;
  return hn::PromoteTo(du, hn::LoadU(d8, in));
}

// NaN lanes of x where `nan` is set (a NaN amax: Max does not carry NaN).
template <class D>
HWY_INLINE hn::Vec<D> WithNan(D d, hn::Mask<D> nan, hn::Vec<D> x) {
  return hn::IfThenElse(nan, hn::Set(d, FromBits(0x7fc00000u)), x);
}

// A row block's amax (all lanes), NaN when an element is NaN.
template <class D>
HWY_INLINE hn::Vec<D> RowBlockAmax(D d, const float* p, size_t block_size) {
  auto amax = hn::Zero(d);
  auto nan = hn::IsNaN(amax);
  for (size_t k = 0; k < block_size; k += hn::Lanes(d)) {
    const auto v = hn::LoadU(d, p + k);
    nan = hn::Or(nan, hn::IsNaN(v));
    amax = hn::Max(amax, hn::Abs(v));
  }
  amax = hn::MaxOfLanes(d, amax);
  return hn::AllFalse(d, nan) ? amax : hn::Set(d, FromBits(0x7fc00000u));
}

// Column blocks: the lanes are adjacent columns, the amax over the block's
// rows lane by lane.
template <class D>
HWY_INLINE hn::Vec<D> ColumnBlockAmax(D d, const float* p, size_t cols, size_t block_size) {
  auto amax = hn::Zero(d);
  auto nan = hn::IsNaN(amax);
  for (size_t r = 0; r < block_size; ++r) {
    const auto v = hn::LoadU(d, p + r * cols);
    nan = hn::Or(nan, hn::IsNaN(v));
    amax = hn::Max(amax, hn::Abs(v));
  }
  return WithNan(d, nan, amax);
}

// MX: one block of rows (row r, starting column c0) or one chunk of columns
// (rows r0.., columns c0 .. c0 + Lanes(d)).
template <ScaleRule kRule, class D>
HWY_INLINE void MxRowBlock(D d, const RuleConstants& r, const ElementConstants& e, const float* p,
                           size_t block_size, uint8_t* scale, uint8_t* codes) {
  const hn::RebindToUnsigned<D> du;
  const auto byte = ScaleBytes<kRule>(d, r, RowBlockAmax(d, p, block_size));
  *scale = static_cast<uint8_t>(hn::GetLane(byte));
  const auto multiplier = Multiplier(d, byte);
  for (size_t k = 0; k < block_size; k += hn::Lanes(d)) {
    StoreBytes(d, Encode(d, e, hn::Mul(hn::LoadU(d, p + k), multiplier)), codes + k);
  }
  (void)du;
}

template <ScaleRule kRule, class D>
HWY_INLINE void MxColumnChunk(D d, const RuleConstants& r, const ElementConstants& e,
                              const float* p, size_t cols, size_t block_size, uint8_t* scales,
                              uint8_t* codes) {
  const auto byte = ScaleBytes<kRule>(d, r, ColumnBlockAmax(d, p, cols, block_size));
  StoreBytes(d, byte, scales);
  const auto multiplier = Multiplier(d, byte);
  for (size_t k = 0; k < block_size; ++k) {
    StoreBytes(d, Encode(d, e, hn::Mul(hn::LoadU(d, p + k * cols), multiplier)), codes + k * cols);
  }
}

template <ScaleRule kRule>
void MxQuantizeRule(const BlockSpec& spec, const float* in, size_t rows, size_t cols,
                    BlockAxis axis, uint8_t* scales, uint8_t* codes) {
  const RuleConstants r = RuleConstantsOf(*spec.element);
  const ElementConstants e = ConstantsOf(*spec.element);
  const size_t bs = static_cast<size_t>(spec.block_size);
  if (axis == BlockAxis::kRows) {
    const DF d;
    for (size_t row = 0; row < rows; ++row) {
      for (size_t c = 0; c < cols; c += bs) {
        const size_t i = row * cols + c;
        MxRowBlock<kRule>(d, r, e, in + i, bs, scales + i / bs, codes + i);
      }
    }
    return;
  }
  const DF d;
  const DF1 d1;
  const size_t n = hn::Lanes(d);
  for (size_t r0 = 0; r0 < rows; r0 += bs) {
    uint8_t* scale_row = scales + (r0 / bs) * cols;
    size_t c = 0;
    for (; c + n <= cols; c += n) {
      MxColumnChunk<kRule>(d, r, e, in + r0 * cols + c, cols, bs, scale_row + c,
                           codes + r0 * cols + c);
    }
    for (; c < cols; ++c) {
      MxColumnChunk<kRule>(d1, r, e, in + r0 * cols + c, cols, bs, scale_row + c,
                           codes + r0 * cols + c);
    }
  }
}

template <ScaleRule kRule>
void ScaleBytesRule(const FloatFormat& element, const float* amax, size_t n, uint8_t* bytes) {
  const RuleConstants r = RuleConstantsOf(element);
  const DF d;
  const DF1 d1;
  size_t i = 0;
  for (; i + hn::Lanes(d) <= n; i += hn::Lanes(d)) {
    StoreBytes(d, ScaleBytes<kRule>(d, r, hn::LoadU(d, amax + i)), bytes + i);
  }
  for (; i < n; ++i) StoreBytes(d1, ScaleBytes<kRule>(d1, r, hn::LoadU(d1, amax + i)), bytes + i);
}

template <ScaleRule kRule>
void ScaleBytesOfPatternsRule(const FloatFormat& element, uint32_t first, size_t n,
                              uint8_t* bytes) {
  const RuleConstants r = RuleConstantsOf(element);
  const DF d;
  const hn::RebindToUnsigned<DF> du;
  const size_t lanes = hn::Lanes(d);
  auto pattern = hn::Add(hn::Iota(du, 0), hn::Set(du, first));
  const auto step = hn::Set(du, static_cast<uint32_t>(lanes));
  for (size_t i = 0; i < n; i += lanes) {
    StoreBytes(d, ScaleBytes<kRule>(d, r, hn::BitCast(d, pattern)), bytes + i);
    pattern = hn::Add(pattern, step);
  }
}

// NVFP4's block scale from amax lanes: torchao's sequence
// (oracles/block_scale.h), the E4M3 code to `scale_codes`, the element
// multiplier RN32(RN32(1/ts) / s) returned.
template <class D>
HWY_INLINE hn::Vec<D> Nvfp4Scale(D d, const ElementConstants& e4m3, float tensor_scale,
                                 hn::Vec<D> amax, hn::Vec<hn::RebindToUnsigned<D>>* code) {
  const auto block_scale = hn::Div(amax, hn::Set(d, 6.0f));
  const auto scaled = hn::Div(block_scale, hn::Set(d, tensor_scale));
  // torch.clamp keeps a NaN; Highway's Min and Max need not.
  const auto clamped = hn::IfThenElse(
      hn::IsNaN(scaled), scaled, hn::Min(hn::Max(scaled, hn::Set(d, 0x1p-6f)), hn::Set(d, 448.0f)));
  *code = Encode(d, e4m3, clamped);
  const FloatFormat& f = kFloat8E4M3FN;
  const auto s = Decode(d, e4m3, f, *code);
  const float inverse = 1.0f / tensor_scale;  // one IEEE binary32 division
  return hn::Div(hn::Set(d, inverse), s);
}

template <class D>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<D>> Nvfp4Elements(D d, const ElementConstants& fp4,
                                                          hn::Vec<D> x, hn::Vec<D> multiplier) {
  const auto y = hn::Mul(x, multiplier);
  const auto clamped =
      hn::IfThenElse(hn::IsNaN(y), y, hn::Min(hn::Max(y, hn::Set(d, -6.0f)), hn::Set(d, 6.0f)));
  return Encode(d, fp4, clamped);
}

template <class D>
HWY_INLINE void Nvfp4ColumnChunk(D d, const ElementConstants& e4m3, const ElementConstants& fp4,
                                 float tensor_scale, const float* p, size_t cols, size_t block_size,
                                 uint8_t* scales, uint8_t* codes) {
  hn::Vec<hn::RebindToUnsigned<D>> code;
  const auto multiplier =
      Nvfp4Scale(d, e4m3, tensor_scale, ColumnBlockAmax(d, p, cols, block_size), &code);
  StoreBytes(d, code, scales);
  for (size_t k = 0; k < block_size; ++k) {
    StoreBytes(d, Nvfp4Elements(d, fp4, hn::LoadU(d, p + k * cols), multiplier), codes + k * cols);
  }
}

}  // namespace impl

// The exported kernels (kernels/block_quant.h's signatures).
inline void MxScaleBytes(ScaleRule rule, const FloatFormat& element, const float* amax, size_t n,
                         uint8_t* bytes) {
  switch (rule) {
    case ScaleRule::kOcpFloor:
      return impl::ScaleBytesRule<ScaleRule::kOcpFloor>(element, amax, n, bytes);
    case ScaleRule::kCeil:
      return impl::ScaleBytesRule<ScaleRule::kCeil>(element, amax, n, bytes);
    case ScaleRule::kEven:
      return impl::ScaleBytesRule<ScaleRule::kEven>(element, amax, n, bytes);
    case ScaleRule::kRceil:
      return impl::ScaleBytesRule<ScaleRule::kRceil>(element, amax, n, bytes);
    case ScaleRule::kReciprocal:
      return impl::ScaleBytesRule<ScaleRule::kReciprocal>(element, amax, n, bytes);
  }
}

inline void MxScaleBytesOfPatterns(ScaleRule rule, const FloatFormat& element, uint32_t first,
                                   size_t n, uint8_t* bytes) {
  switch (rule) {
    case ScaleRule::kOcpFloor:
      return impl::ScaleBytesOfPatternsRule<ScaleRule::kOcpFloor>(element, first, n, bytes);
    case ScaleRule::kCeil:
      return impl::ScaleBytesOfPatternsRule<ScaleRule::kCeil>(element, first, n, bytes);
    case ScaleRule::kEven:
      return impl::ScaleBytesOfPatternsRule<ScaleRule::kEven>(element, first, n, bytes);
    case ScaleRule::kRceil:
      return impl::ScaleBytesOfPatternsRule<ScaleRule::kRceil>(element, first, n, bytes);
    case ScaleRule::kReciprocal:
      return impl::ScaleBytesOfPatternsRule<ScaleRule::kReciprocal>(element, first, n, bytes);
  }
}

inline void MxQuantize(ScaleRule rule, const BlockSpec& spec, const float* in, size_t rows,
                       size_t cols, BlockAxis axis, uint8_t* scales, uint8_t* codes) {
  switch (rule) {
    case ScaleRule::kOcpFloor:
      return impl::MxQuantizeRule<ScaleRule::kOcpFloor>(spec, in, rows, cols, axis, scales, codes);
    case ScaleRule::kCeil:
      return impl::MxQuantizeRule<ScaleRule::kCeil>(spec, in, rows, cols, axis, scales, codes);
    case ScaleRule::kEven:
      return impl::MxQuantizeRule<ScaleRule::kEven>(spec, in, rows, cols, axis, scales, codes);
    case ScaleRule::kRceil:
      return impl::MxQuantizeRule<ScaleRule::kRceil>(spec, in, rows, cols, axis, scales, codes);
    case ScaleRule::kReciprocal:
      return impl::MxQuantizeRule<ScaleRule::kReciprocal>(spec, in, rows, cols, axis, scales,
                                                          codes);
  }
}

inline void Nvfp4Quantize(const float* in, size_t rows, size_t cols, BlockAxis axis,
                          float tensor_scale, uint8_t* scales, uint8_t* codes) {
  const impl::ElementConstants e4m3 = impl::ConstantsOf(kFloat8E4M3FN);
  const impl::ElementConstants fp4 = impl::ConstantsOf(kFloat4E2M1FN);
  const size_t bs = static_cast<size_t>(kNvfp4.block_size);
  const DF d;
  const DF1 d1;
  if (axis == BlockAxis::kRows) {
    for (size_t i = 0; i < rows * cols; i += bs) {
      hn::Vec<hn::RebindToUnsigned<DF>> code;
      const auto multiplier =
          impl::Nvfp4Scale(d, e4m3, tensor_scale, impl::RowBlockAmax(d, in + i, bs), &code);
      scales[i / bs] = static_cast<uint8_t>(hn::GetLane(code));
      for (size_t k = 0; k < bs; k += hn::Lanes(d)) {
        impl::StoreBytes(d, impl::Nvfp4Elements(d, fp4, hn::LoadU(d, in + i + k), multiplier),
                         codes + i + k);
      }
    }
    return;
  }
  const size_t n = hn::Lanes(d);
  for (size_t r0 = 0; r0 < rows; r0 += bs) {
    uint8_t* scale_row = scales + (r0 / bs) * cols;
    size_t c = 0;
    for (; c + n <= cols; c += n) {
      impl::Nvfp4ColumnChunk(d, e4m3, fp4, tensor_scale, in + r0 * cols + c, cols, bs,
                             scale_row + c, codes + r0 * cols + c);
    }
    for (; c < cols; ++c) {
      impl::Nvfp4ColumnChunk(d1, e4m3, fp4, tensor_scale, in + r0 * cols + c, cols, bs,
                             scale_row + c, codes + r0 * cols + c);
    }
  }
}

// Dequantization: element value times 2^X, one binary32 rounding.
inline void MxDequantize(const BlockSpec& spec, const uint8_t* scales, const uint8_t* codes,
                         size_t rows, size_t cols, BlockAxis axis, float* out) {
  const impl::ElementConstants e = impl::ConstantsOf(*spec.element);
  const size_t bs = static_cast<size_t>(spec.block_size);
  const DF1 d1;
  const hn::RebindToUnsigned<DF1> du1;
  // One lane at a time: the scale's index differs by axis, and the per-block
  // broadcast buys little for a check's dequantization.
  for (size_t row = 0; row < rows; ++row) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t i = row * cols + c;
      const size_t s = axis == BlockAxis::kRows ? i / bs : (row / bs) * cols + c;
      const auto value = impl::Decode(d1, e, *spec.element, impl::LoadBytes(d1, codes + i));
      const auto scale = impl::ScaleValue(d1, hn::Set(du1, static_cast<uint32_t>(scales[s])));
      hn::StoreU(hn::Mul(value, scale), d1, out + i);
    }
  }
}

}  // namespace block_quant
}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#endif  // ULPGATE_KERNELS_BLOCK_QUANT_INL_H_
