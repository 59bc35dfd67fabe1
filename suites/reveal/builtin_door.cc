// The one file of suites/reveal/ that knows the reduction registry: where its
// kernels are found moves, this adapter follows.
#include "suites/reveal/builtin_door.h"

#include <fmt/format.h>

#include "kernels/reduction_spec.h"

namespace ulpgate {
namespace {

class BuiltinDoor : public DotDoor {
 public:
  BuiltinDoor(std::string variant, std::string kernel_variant, const TargetInfo& target,
              LinearFwdKernel kernel)
      : variant_(std::move(variant)), kernel_variant_(std::move(kernel_variant)),
        target_(target), kernel_(kernel) {}

  std::string Name() const override {
    return fmt::format("linear_fwd/{}@{}", variant_, target_.name);
  }
  const FloatFormat& OperandFormat() const override { return kBinary32; }
  const FloatFormat& OutputFormat() const override { return kBinary32; }
  size_t MaxK() const override { return kMaxReductionLength; }

  void Multiply(const DotShape& shape, const float* a, const float* b, float* c) override {
    if (!target_.supported) {
      throw DotDoorError(fmt::format("{}: target {} is not runnable here ({})", Name(),
                                     target_.name, NotRunnableReason(target_)));
    }
    if (shape.k > kMaxReductionLength) {
      throw DotDoorError(fmt::format("{}: k = {} above the kernels' {}", Name(), shape.k,
                                     kMaxReductionLength));
    }
    if (bias_.size() != shape.n) bias_.assign(shape.n, -0.0f);
    kernel_(a, b, bias_.data(), c, shape.m, shape.k, shape.n);
  }

 private:
  std::string variant_, kernel_variant_;
  TargetInfo target_;
  LinearFwdKernel kernel_;
  std::vector<float> bias_;
};

}  // namespace

const std::vector<std::string>& BuiltinDotVariants() {
  static const std::vector<std::string> names{"sequential_fma", "sequential", "lane_parallel",
                                              "pairwise"};
  return names;
}

std::unique_ptr<DotDoor> MakeBuiltinDoor(const std::string& variant, const TargetInfo& target) {
  // "sequential" is the registry's sequential_unfused.
  const std::string kernel_variant = variant == "sequential" ? "sequential_unfused" : variant;
  bool known = false;
  for (const std::string& v : BuiltinDotVariants()) known = known || v == variant;
  if (!known) return nullptr;
  const LinearFwdKernel kernel = FindLinearFwdKernel(kernel_variant, target.bits);
  if (kernel == nullptr) return nullptr;
  return std::make_unique<BuiltinDoor>(variant, kernel_variant, target, kernel);
}

}  // namespace ulpgate
