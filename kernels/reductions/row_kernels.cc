// Compiles the row reductions (row_kernels-inl.h) once per Highway target and
// finds a (op, format, variant, target) kernel for kernels/reductions/row_ops.h.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/row_ops.h"
#include "kernels/reductions/softmax/softmax_spec.h"

#ifndef ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_TABLE_
#define ULPGATE_KERNELS_REDUCTIONS_ROW_KERNELS_TABLE_
namespace ulpgate {
namespace row_kernels_detail {

inline constexpr size_t kMaxVariants = 6;
inline constexpr size_t kFormats = 3;  // f32, bf16, f16

struct TargetRowKernels {
  int64_t target;
  // [op][variant][format], nullptr past an op's variants.
  std::array<std::array<std::array<RowKernel, kFormats>, kMaxVariants>, kRowOpCount> kernels;
  RowLogKernel log;
};

template <RowOp kOp>
constexpr const auto& VariantsOf() {
  if constexpr (kOp == RowOp::kRmsNormFwd || kOp == RowOp::kRmsNormBwd) {
    return RmsNormSpec::kVariants;
  } else if constexpr (kOp == RowOp::kSoftmaxFwd) {
    return SoftmaxSpec::kForwardVariants;
  } else if constexpr (kOp == RowOp::kLogSoftmaxFwd) {
    return SoftmaxSpec::kLogForwardVariants;
  } else {
    return SoftmaxSpec::kBackwardVariants;
  }
}

}  // namespace row_kernels_detail
}  // namespace ulpgate
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/reductions/row_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/reductions/row_kernels-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ulpgate {
namespace HWY_NAMESPACE {

namespace rk = ::ulpgate::row_kernels_detail;

template <RowOp kOp, size_t kVariant>
constexpr std::array<RowKernel, rk::kFormats> RowKernelsAt() {
  constexpr auto& variants = rk::VariantsOf<kOp>();
  if constexpr (kVariant < variants.size()) {
    constexpr RowStat stat = variants[kVariant].stat;
    constexpr RowFinish finish = variants[kVariant].finish;
    return {{&RowF32<kOp, stat, finish>, &RowNarrow<ExactBf16, kOp, stat, finish>,
             &RowNarrow<ExactF16, kOp, stat, finish>}};
  } else {
    return {{nullptr, nullptr, nullptr}};
  }
}

template <RowOp kOp, size_t... kVariant>
constexpr std::array<std::array<RowKernel, rk::kFormats>, rk::kMaxVariants> RowOpKernels(
    std::index_sequence<kVariant...>) {
  return {{RowKernelsAt<kOp, kVariant>()...}};
}
template <RowOp kOp>
constexpr std::array<std::array<RowKernel, rk::kFormats>, rk::kMaxVariants> RowOpKernels() {
  return RowOpKernels<kOp>(std::make_index_sequence<rk::kMaxVariants>());
}

HWY_NOINLINE void VectorLog(const float* in, float* out, size_t n) {
  impl::RowElements(in, in, in, out, n, [](const auto& arith, auto v, auto, auto) HWY_ATTR {
    return arith.Log(v);
  });
}

// A constant-initialized table, as registry.cc's GetTargetKernels: the
// accessor runs no instruction of its target, so the registry may call it
// for targets this CPU lacks.
const rk::TargetRowKernels* GetRowKernels() {
  static constexpr rk::TargetRowKernels kKernels{
      HWY_TARGET,
      {{RowOpKernels<RowOp::kRmsNormFwd>(), RowOpKernels<RowOp::kRmsNormBwd>(),
        RowOpKernels<RowOp::kSoftmaxFwd>(), RowOpKernels<RowOp::kSoftmaxBwd>(),
        RowOpKernels<RowOp::kLogSoftmaxFwd>(), RowOpKernels<RowOp::kLogSoftmaxBwd>()}},
      &VectorLog,
  };
  return &kKernels;
}

}  // namespace HWY_NAMESPACE
}  // namespace ulpgate
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ulpgate {

HWY_EXPORT(GetRowKernels);

RowKernel FindRowKernel(RowOp op, std::string_view format, std::string_view variant,
                        int64_t target) {
  const size_t f = format == "f32" ? 0 : format == "bf16" ? 1 : format == "f16" ? 2 : 3;
  if (f >= row_kernels_detail::kFormats) return nullptr;
  const int v = RowVariantIndex(GetRowOp(op), variant);
  if (v < 0) return nullptr;
  // Entry 0 of a dispatch table is the chooser; the others are the compiled
  // targets (nullptr where not compiled).
  for (const auto& entry : HWY_DISPATCH_TABLE(GetRowKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetRowKernels)[0]) continue;
    const row_kernels_detail::TargetRowKernels& k = *entry();
    if (k.target != target) continue;
    return k.kernels[static_cast<size_t>(op)][static_cast<size_t>(v)][f];
  }
  return nullptr;
}

RowLogKernel FindRowLogKernel(int64_t target) {
  for (const auto& entry : HWY_DISPATCH_TABLE(GetRowKernels)) {
    if (entry == nullptr || entry == HWY_DISPATCH_TABLE(GetRowKernels)[0]) continue;
    if (entry()->target == target) return entry()->log;
  }
  return nullptr;
}

}  // namespace ulpgate
#endif  // HWY_ONCE
