// A cast from binary32 to a narrow format under one policy, as the step
// function on bit patterns it is: the fast exact reference that exhaustive
// checks of cast kernels compare every binary32 pattern with.
//
// Why it is exact. Positive binary32 patterns are ordered as their values,
// and a cast under a monotone rounding (to nearest, toward zero; directly or
// through a wider format rounded to nearest) maps larger values to codes of
// no smaller value. So on the patterns 0 .. 0x7f800000 the output is a step
// function: code c_k from the first pattern T_k at which the cast reaches the
// k-th value of the destination, up to T_(k+1). The steps come from the
// destination's values alone (DecodeBits of every code), not from any
// rounding code: to nearest, T_k is the midpoint of v_(k-1) and v_k (a
// binary32 value: these formats' midpoints have at most p + 1 <= 9
// significant bits, in binary32's range), or the pattern after it where the
// tie goes down (to the value whose significand, an integer at the tie's
// quantum, is even: at p = 1, E8M0, every significand is 1 and every tie goes
// up); toward zero, T_k is v_k itself. Past the largest value the policy's
// overflow holds (saturate: the largest; nan: the NaN code, from the step the
// next value of the grid would have had). A route through bf16 is the same
// steps moved to the first pattern that rounds (to nearest even, on its bits)
// to them: a binary search, since that rounding is monotone too. Negative
// patterns are the positive ones' codes with the sign (a zero result +0 where
// the format has no -0; E8M0, unsigned, NaN for every negative and zero); NaN
// patterns the format's NaN code, as CastCode gives it (an overflow to NaN is
// the model's NaN without a sign).
#ifndef ULPGATE_ORACLES_CAST_REFERENCE_H_
#define ULPGATE_ORACLES_CAST_REFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "oracles/cast_policy.h"
#include "oracles/float_format.h"

namespace ulpgate {

class Binary32CastReference {
 public:
  // Takes roundings nearest_even, nearest_away and toward_zero, overflow
  // saturate or nan, subnormals kept or flushed on input (a binary32
  // subnormal source is a zero of its sign), a direct route or via bf16; throws
  // std::invalid_argument for any other policy, or a destination wider than
  // a byte or with a midpoint binary32 lacks.
  Binary32CastReference(const FloatFormat& to, const CastPolicy& policy);

  // The code of one binary32 pattern.
  uint8_t Code(uint32_t bits) const;
  // The codes of the patterns first, first + 1, ..., first + n - 1 (all below
  // 2^32): runs of equal codes, filled as runs.
  void Fill(uint32_t first, size_t n, uint8_t* out) const;

 private:
  uint8_t Signed(uint8_t magnitude_code, bool negative) const;
  void FillPositive(uint32_t first, size_t n, uint8_t* out) const;

  const FloatFormat& to_;
  // Steps over the positive patterns 0 .. 0x7f800000: starts_[k] is the first
  // pattern of codes_[k]; starts_[0] = 0.
  std::vector<uint32_t> starts_;
  std::vector<uint8_t> codes_;
  bool flush_input_;  // binary32 subnormals are zeros first
  uint8_t nan_positive_ = 0, nan_negative_ = 0;
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_CAST_REFERENCE_H_
