#include "suites/reveal/planted_kernels.h"

#include <fmt/format.h>

#include <cmath>

#include "oracles/format.h"

namespace ulpgate {
namespace {

// x + y in an adder `bits` wide: both aligned to the larger one's leading
// bit, the bits below the window dropped (toward zero). Products of E4M3
// values have at most 8 bits and the window 14, so the sum of two window
// values is exact in a double and in binary32.
double AlignTruncAdd(double x, double y, int bits) {
  if (x == 0) return y;
  if (y == 0) return x;
  const int top = std::max(std::ilogb(x), std::ilogb(y));
  const int shift = top - bits + 1;
  return std::ldexp(std::trunc(std::ldexp(x, -shift)), shift) +
         std::ldexp(std::trunc(std::ldexp(y, -shift)), shift);
}

// One rounding to binary32 of the exact sum of a few doubles: Shewchuk's
// partials (non-overlapping, increasing), then summed from the top until an
// addition is inexact; the rest is smaller than that error, so the error's
// sign is the sign of what the double sum misses, and the double next to it on
// that side rounds to the same binary32 value as the exact sum (binary32's
// rounding boundaries are 2^29 doubles apart).
float RoundSumToBinary32(const double* values, size_t n) {
  std::vector<double> partials;
  for (size_t i = 0; i < n; ++i) {
    double x = values[i];
    size_t used = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0) partials[used++] = lo;
      x = hi;
    }
    partials.resize(used);
    partials.push_back(x);
  }
  if (partials.empty()) return 0.0f;
  double hi = partials.back();
  double lo = 0;
  for (size_t i = partials.size() - 1; i-- > 0;) {
    const double x = hi, y = partials[i];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0) break;
  }
  if (lo != 0) hi = std::nextafter(hi, lo > 0 ? INFINITY : -INFINITY);
  return static_cast<float>(RoundDouble(kBinary32, hi));
}

class PlantedDoor : public DotDoor {
 public:
  PlantedDoor(std::string name, const FloatFormat& operands) : name_(std::move(name)), operands_(operands) {}
  std::string Name() const override { return "planted:" + name_; }
  const FloatFormat& OperandFormat() const override { return operands_; }
  const FloatFormat& OutputFormat() const override { return kBinary32; }

  void Multiply(const DotShape& s, const float* a, const float* b, float* c) override {
    for (size_t r = 0; r < s.m; ++r) {
      for (size_t x = 0; x < s.n; ++x) c[r * s.n + x] = Dot(a + r * s.k, b + x * s.k, s.k);
    }
  }

 protected:
  virtual float Dot(const float* a, const float* b, size_t k) const = 0;

 private:
  std::string name_;
  const FloatFormat& operands_;
};

class Fp8Trunc14Promote128 : public PlantedDoor {
 public:
  Fp8Trunc14Promote128() : PlantedDoor("fp8_trunc14_promote128", kFloat8E4M3FN) {}

 protected:
  float Dot(const float* a, const float* b, size_t k) const override {
    float total = 0.0f;
    for (size_t block = 0; block < k; block += 128) {
      double low = 0;
      for (size_t t = block; t < std::min(k, block + 128); ++t) {
        // E4M3 products are exact in a double (8 bits).
        low = AlignTruncAdd(low, static_cast<double>(a[t]) * b[t], 14);
      }
      total = total + static_cast<float>(low);  // the promotion: binary32 nearest-even
    }
    return total;
  }
};

class Bf16Fused4 : public PlantedDoor {
 public:
  Bf16Fused4() : PlantedDoor("bf16_fused4", kBFloat16) {}

 protected:
  float Dot(const float* a, const float* b, size_t k) const override {
    float acc = 0.0f;
    for (size_t g = 0; g < k; g += 4) {
      double in[5] = {acc, 0, 0, 0, 0};
      size_t n = 1;
      // bf16 products have at most 16 bits: exact in a double.
      for (size_t t = g; t < std::min(k, g + 4); ++t) in[n++] = static_cast<double>(a[t]) * b[t];
      acc = RoundSumToBinary32(in, n);
    }
    return acc;
  }
};

class F32SplitK3 : public PlantedDoor {
 public:
  explicit F32SplitK3(bool late) : PlantedDoor(late ? "f32_splitk3_late" : "f32_splitk3", kBinary32), late_(late) {}

 protected:
  float Dot(const float* a, const float* b, size_t k) const override {
    float total = 0.0f;
    size_t begin = 0;
    bool first = true;
    for (size_t end : SplitKEnds(k, late_)) {
      if (end == begin) continue;
      float part = 0.0f;
      for (size_t t = begin; t < end; ++t) part = std::fma(a[t], b[t], part);
      total = first ? part : total + part;
      first = false;
      begin = end;
    }
    return total;
  }

 private:
  bool late_;
};

}  // namespace

std::vector<size_t> SplitKEnds(size_t k, bool late) {
  size_t first = 3 * k / 8 + (late ? 1 : 0);
  first = std::min(first, k);
  const size_t second = std::min(k, first + k / 4);
  return {first, second, k};
}

const std::vector<PlantedKernelInfo>& PlantedKernels() {
  static const std::vector<PlantedKernelInfo> kernels{
      {"fp8_trunc14_promote128",
       "E4M3 operands, exact products, a 14-bit truncating aligned adder promoted to binary32 "
       "every 128 terms"},
      {"bf16_fused4", "bf16 operands, four exact products added to the accumulator with one rounding"},
      {"f32_splitk3", "f32 operands, split-K into parts of 3/8, 1/4, 3/8 of k, FMA chains summed at the end"},
      {"f32_splitk3_late", "f32_splitk3 with the first part one term longer (a changed tree)"},
  };
  return kernels;
}

std::unique_ptr<DotDoor> MakePlantedDoor(const std::string& name) {
  if (name == "fp8_trunc14_promote128") return std::make_unique<Fp8Trunc14Promote128>();
  if (name == "bf16_fused4") return std::make_unique<Bf16Fused4>();
  if (name == "f32_splitk3") return std::make_unique<F32SplitK3>(false);
  if (name == "f32_splitk3_late") return std::make_unique<F32SplitK3>(true);
  return nullptr;
}

}  // namespace ulpgate
