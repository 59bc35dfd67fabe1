#include "kernels/reductions/row_ops.h"

#include <stdexcept>

#include "kernels/reductions/rmsnorm/rmsnorm_spec.h"
#include "kernels/reductions/softmax/softmax_spec.h"

namespace ulpgate {
namespace {

template <class T, size_t kCount>
std::vector<T> Rows(const std::array<T, kCount>& table) {
  return {table.begin(), table.end()};
}

}  // namespace

const std::vector<RowOpInfo>& RowOps() {
  static const std::vector<RowOpInfo> ops = {
      {RowOp::kRmsNormFwd, "rmsnorm_fwd", "y_i = g_i x_i / sqrt(mean_j(x_j^2) + eps)", {"x", "g"},
       Rows(RmsNormSpec::kVariants), true, {"the mean of x^2"}, Rows(RmsNormSpec::kForwardEpilogues), "", ""},
      {RowOp::kRmsNormBwd, "rmsnorm_bwd",
       "dx_i = r g_i dy_i - r^3 x_i mean_j(g_j dy_j x_j), r = 1/sqrt(mean_j(x_j^2) + eps)",
       {"dy", "x", "g"}, Rows(RmsNormSpec::kVariants), true,
       {"the mean of x^2", "the mean of RN(g dy) x"}, {}, "", ""},
      {RowOp::kSoftmaxFwd, "softmax_fwd", "y_i = exp(x_i - max) / sum_j exp(x_j - max)", {"x"},
       Rows(SoftmaxSpec::kForwardVariants), false, {"the sum of exponentials"}, {}, "", "exp(x - max)"},
      {RowOp::kSoftmaxBwd, "softmax_bwd", "dx_i = y_i (dy_i - sum_j dy_j y_j)", {"dy", "y"},
       Rows(SoftmaxSpec::kBackwardVariants), false, {"the sum of dy y"},
       Rows(SoftmaxSpec::kBackwardEpilogues), "", ""},
      {RowOp::kLogSoftmaxFwd, "log_softmax_fwd", "y_i = x_i - max - log(sum_j exp(x_j - max))",
       {"x"}, Rows(SoftmaxSpec::kLogForwardVariants), false, {"the sum of exponentials"},
       Rows(SoftmaxSpec::kLogForwardEpilogues), "exp and log", ""},
      {RowOp::kLogSoftmaxBwd, "log_softmax_bwd", "dx_i = dy_i - exp(y_i) sum_j dy_j",
       {"dy", "y"}, Rows(SoftmaxSpec::kBackwardVariants), false, {"the sum of dy"},
       Rows(SoftmaxSpec::kLogBackwardEpilogues), "", "exp(y)"},
  };
  return ops;
}

const RowOpInfo& GetRowOp(RowOp op) { return RowOps().at(static_cast<size_t>(op)); }

const RowOpInfo* FindRowOp(std::string_view name) {
  for (const RowOpInfo& op : RowOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

int RowVariantIndex(const RowOpInfo& op, std::string_view variant) {
  for (size_t i = 0; i < op.variants.size(); ++i) {
    if (op.variants[i].name == variant) return static_cast<int>(i);
  }
  return -1;
}

bool IsRowWeight(const RowOpInfo& op, size_t k) { return op.operands.at(k) == "g"; }

}  // namespace ulpgate
