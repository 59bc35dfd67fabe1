// Bit-exact IEEE binary32 arithmetic emulated in MPFR, one rounded operation
// at a time: precision 24, exponent range [-148, 128] in MPFR's convention
// (0.1b x 2^e; the binary32 range 2^-149 .. (2 - 2^-23) x 2^127), overflow to
// infinity and gradual underflow through mpfr_subnormalize, round to nearest
// even. An op sequence of kernels/*_spec.h instantiated with Binary32Arith is
// the variant's model: what its kernel must produce bit for bit.
//
// The emulation does not use the host's float unit, so it cannot be fused,
// flushed to zero or widened behind our back; tests cross-check it against the
// host's SSE arithmetic on the operations where the two must agree.
#ifndef ULPGATE_ORACLES_IEEE_EMULATION_H_
#define ULPGATE_ORACLES_IEEE_EMULATION_H_

#include <mpfr.h>

#include <cmath>

#include "oracles/format.h"

namespace ulpgate {

// Correctly rounds an MPFR value of any precision and exponent to binary32.
float RoundToBinary32(mpfr_srcptr x);

class Binary32Arith {
 public:
  using Value = float;

  // fused_negmuladd: whether NegMulAdd rounds once (an FMA instruction) or
  // twice (a multiply, then a subtract), as on targets without FMA.
  explicit Binary32Arith(bool fused_negmuladd) : fused_(fused_negmuladd) {}
  bool fused() const { return fused_; }

  float Const(float c) const { return c; }
  float Zero() const { return 0.0f; }
  float Add(float a, float b) const;
  float Sub(float a, float b) const;
  float Mul(float a, float b) const;
  float Div(float a, float b) const;
  float Sqrt(float a) const;
  // a*b + c and c - a*b: one rounding when fused, else two.
  float MulAdd(float a, float b, float c) const;
  float NegMulAdd(float a, float b, float c) const;

 private:
  bool fused_;
};

// Binary32Arith's results from the hardware: x86-64's SSE binary32
// operations round once to nearest even with subnormals (FTZ and DAZ off, as
// a C++ program starts), and std::fmaf rounds a*b + c once (an FMA
// instruction, or glibc's exact emulation). The project builds with
// -ffp-contract=off, so no expression here is contracted. About 100 times
// faster than the MPFR emulation; a test holds the two equal on every suite.
// NaN payloads may differ (no model has one).
class NativeBinary32Arith {
 public:
  using Value = float;

  explicit NativeBinary32Arith(bool fused_negmuladd) : fused_(fused_negmuladd) {}
  bool fused() const { return fused_; }

  float Const(float c) const { return c; }
  float Zero() const { return 0.0f; }
  float Add(float a, float b) const { return a + b; }
  float Sub(float a, float b) const { return a - b; }
  float Mul(float a, float b) const { return a * b; }
  float Div(float a, float b) const { return a / b; }
  float Sqrt(float a) const { return std::sqrt(a); }
  float MulAdd(float a, float b, float c) const { return fused_ ? std::fmaf(a, b, c) : a * b + c; }
  float NegMulAdd(float a, float b, float c) const {
    return fused_ ? std::fmaf(-a, b, c) : c - a * b;
  }

 private:
  bool fused_;
};

// The same arithmetic in any format (oracles/format.h), values held exactly
// in doubles: each operation is computed exactly and rounded once to the
// format, with its subnormals and overflow. FormatArith(kBinary32, fused)
// gives Binary32Arith's results bit for bit; in bf16 or f16 it is the
// arithmetic of a kernel that rounds every step to the narrow format.
class FormatArith {
 public:
  using Value = double;

  FormatArith(const FloatFormat& format, bool fused_negmuladd)
      : format_(&format), fused_(fused_negmuladd) {}
  const FloatFormat& format() const { return *format_; }
  bool fused() const { return fused_; }

  // c must be a value of the format.
  double Const(double c) const { return c; }
  double Zero() const { return 0.0; }
  double Add(double a, double b) const;
  double Sub(double a, double b) const;
  double Mul(double a, double b) const;
  double Div(double a, double b) const;
  double Sqrt(double a) const;
  double MulAdd(double a, double b, double c) const;
  double NegMulAdd(double a, double b, double c) const;

 private:
  const FloatFormat* format_;
  bool fused_;
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_IEEE_EMULATION_H_
