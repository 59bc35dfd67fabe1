#include "suites/reveal/builtin_door.h"

#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "kernels/narrow_formats.h"
#include "kernels/reduction_spec.h"
#include "oracles/format.h"

namespace ulpgate {
namespace {

const ReductionOpInfo& LinearFwd() { return GetReductionOp(ReductionOp::kLinearFwd); }

class LinearFwdDoor : public DotDoor {
 public:
  LinearFwdDoor(std::string variant, const TargetInfo& target, const FloatFormat& format)
      : variant_(std::move(variant)), target_(target), format_(format) {}

  std::string Name() const override {
    return "linear_fwd/" + variant_ + "@" + target_.name +
           (format_.bits == 32 ? "" : " " + std::string(format_.name));
  }
  const FloatFormat& OperandFormat() const override { return format_; }
  const FloatFormat& OutputFormat() const override { return format_; }
  size_t MaxK() const override { return kMaxReductionLength; }

  void Multiply(const DotShape& shape, const float* a, const float* b, float* c) override {
    if (shape.k > kMaxReductionLength) {
      throw DotDoorError(Name() + ": k = " + std::to_string(shape.k) + " is over the kernels' " +
                         std::to_string(kMaxReductionLength));
    }
    if (format_.bits == 32) {
      const LinearFwdKernel kernel = FindLinearFwdKernel(variant_, target_.bits);
      const std::vector<float> bias(shape.n, -0.0f);
      kernel(a, b, bias.data(), c, shape.m, shape.k, shape.n);
      return;
    }
    const ReductionNarrowKernel kernel =
        FindReductionNarrowKernel(format_.name, LinearFwd().name, variant_, target_.bits);
    const std::vector<uint16_t> x = Encode(a, shape.m * shape.k);
    const std::vector<uint16_t> w = Encode(b, shape.n * shape.k);
    const std::vector<uint16_t> bias(shape.n, static_cast<uint16_t>(EncodeBits(format_, -0.0)));
    std::vector<uint16_t> y(shape.m * shape.n);
    const uint16_t* operands[] = {x.data(), w.data(), bias.data()};
    kernel(operands, y.data(), shape.m, shape.k, shape.n);
    for (size_t i = 0; i < y.size(); ++i) c[i] = static_cast<float>(DecodeBits(format_, y[i]));
  }

 private:
  std::vector<uint16_t> Encode(const float* values, size_t count) const {
    std::vector<uint16_t> bits(count);
    if (&format_ == &kBFloat16) {
      // A bf16 value's encoding is the high half of its binary32 one.
      for (size_t i = 0; i < count; ++i) {
        uint32_t wide;
        std::memcpy(&wide, &values[i], sizeof wide);
        bits[i] = static_cast<uint16_t>(wide >> 16);
      }
      return bits;
    }
    for (size_t i = 0; i < count; ++i) {
      bits[i] = static_cast<uint16_t>(EncodeBits(format_, values[i]));
    }
    return bits;
  }

  std::string variant_;
  const TargetInfo& target_;
  const FloatFormat& format_;
};

}  // namespace

std::vector<std::string> LinearFwdVariantNames() {
  std::vector<std::string> names;
  for (const ReductionVariantInfo& v : LinearFwd().variants) names.emplace_back(v.name);
  return names;
}

std::unique_ptr<DotDoor> MakeLinearFwdDoor(std::string_view variant, const TargetInfo& target,
                                           const FloatFormat& format) {
  if (ReductionVariantIndex(LinearFwd(), variant) < 0) {
    throw std::invalid_argument("linear_fwd has no variant '" + std::string(variant) + "'");
  }
  bool narrow = false;
  for (const NarrowFormat& f : kNarrowFormats) narrow = narrow || f.format == &format;
  if (format.bits != 32 && !narrow) {
    throw std::invalid_argument("linear_fwd has no kernels in " + std::string(format.name));
  }
  const bool found = format.bits == 32
                         ? FindLinearFwdKernel(variant, target.bits) != nullptr
                         : FindReductionNarrowKernel(format.name, LinearFwd().name, variant,
                                                     target.bits) != nullptr;
  if (!found) throw std::invalid_argument("target " + target.name + " is not compiled");
  return std::make_unique<LinearFwdDoor>(std::string(variant), target, format);
}

}  // namespace ulpgate
