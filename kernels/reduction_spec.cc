#include "kernels/reduction_spec.h"

#include <stdexcept>

namespace ulpgate {
namespace {

using S = ReductionSchedule;
using M = MeanScaling;

// The four schedules of a dot product; p_k q_k is the op's term.
std::vector<ReductionVariantInfo> DotVariants() {
  return {
      {"sequential_fma", S::kSequentialFused, M::kNone,
       "acc = 0; acc = MulAdd(p_k, q_k, acc) for k = 0..n-1"},
      {"sequential_unfused", S::kSequentialUnfused, M::kNone,
       "acc = 0; acc = acc + RN(p_k*q_k) for k = 0..n-1"},
      {"lane_parallel", S::kLaneParallel, M::kNone,
       "lane j: acc_j = MulAdd(p_k, q_k, acc_j) for k = j mod L (L = target lanes, +0 "
       "padding); then halving tree acc_j += acc_(j+w), w = L/2..1"},
      {"pairwise", S::kPairwise, M::kNone,
       "cascade of RN(p_k*q_k): left half = largest power of two below n"},
  };
}

std::vector<ReductionOpInfo> MakeOps() {
  std::vector<ReductionOpInfo> ops;
  {
    ReductionOpInfo op{ReductionOp::kLinearFwd, "linear_fwd",
                       "y[b,o] = RN(sum_k x[b,k] w[o,k]) + b[o]: x [B,in], w [out,in], b [out]; "
                       "the bias added once after the dot product",
                       DotVariants(), {"x", "w", "b"}, true};
    op.variants[0].op_sequence = "dot = 0; dot = MulAdd(x_k, w_k, dot), k = 0..in-1; y = dot + b";
    op.variants[1].op_sequence = "dot = 0; dot = dot + RN(x_k*w_k), k = 0..in-1; y = dot + b";
    op.variants[2].op_sequence =
        "lane j: acc_j = MulAdd(x_k, w_k, acc_j), k = j mod L (+0 padding); halving tree "
        "of the L lanes; y = dot + b";
    op.variants[3].op_sequence = "dot = cascade of RN(x_k*w_k); y = dot + b";
    ops.push_back(op);
  }
  ops.push_back({ReductionOp::kLinearBwdInput, "linear_bwd_input",
                 "dx[b,i] = sum_o dy[b,o] w[o,i]: dy [B,out], w [out,in]", DotVariants(),
                 {"dy", "w"}, true});
  ops.push_back({ReductionOp::kLinearBwdWeight, "linear_bwd_weight",
                 "dw[o,i] = sum_b dy[b,o] x[b,i]: dy [B,out], x [B,in]", DotVariants(),
                 {"dy", "x"}, true});
  ops.push_back({ReductionOp::kLinearBwdBias, "linear_bwd_bias",
                 "db[o] = sum_b dy[b,o]: dy [B,out]",
                 {
                     {"sequential", S::kSequentialFused, M::kNone,
                      "acc = 0; acc = acc + dy_b for b = 0..B-1"},
                     {"lane_parallel", S::kLaneParallel, M::kNone,
                      "lane j: acc_j = acc_j + dy_b, b = j mod L (+0 padding); halving tree"},
                     {"pairwise", S::kPairwise, M::kNone,
                      "cascade: left half = largest power of two below B"},
                 },
                 {"dy"}, false});
  ops.push_back(
      {ReductionOp::kMseFwd, "mse_fwd",
       "loss = (1/N) sum_i (y_i - t_i)^2: y [N], target [N]; the sum, then the division by N "
       "(or the product with RN(1/N) in the _recip variants)",
       {
           {"sequential_fma", S::kSequentialFused, M::kDivide,
            "d = RN(y_i - t_i); acc = MulAdd(d, d, acc); mean = RN(acc / N)"},
           {"sequential_unfused", S::kSequentialUnfused, M::kDivide,
            "d = RN(y_i - t_i); acc = acc + RN(d*d); mean = RN(acc / N)"},
           {"lane_parallel", S::kLaneParallel, M::kDivide,
            "lane j: acc_j = MulAdd(d_i, d_i, acc_j), i = j mod L (+0 padding); halving tree; "
            "mean = RN(sum / N)"},
           {"pairwise", S::kPairwise, M::kDivide, "cascade of RN(d_i*d_i); mean = RN(sum / N)"},
           {"sequential_fma_recip", S::kSequentialFused, M::kReciprocal,
            "d = RN(y_i - t_i); acc = MulAdd(d, d, acc); mean = RN(acc * RN(1/N))"},
           {"sequential_unfused_recip", S::kSequentialUnfused, M::kReciprocal,
            "d = RN(y_i - t_i); acc = acc + RN(d*d); mean = RN(acc * RN(1/N))"},
           {"lane_parallel_recip", S::kLaneParallel, M::kReciprocal,
            "lane j: acc_j = MulAdd(d_i, d_i, acc_j), i = j mod L (+0 padding); halving tree; "
            "mean = RN(sum * RN(1/N))"},
           {"pairwise_recip", S::kPairwise, M::kReciprocal,
            "cascade of RN(d_i*d_i); mean = RN(sum * RN(1/N))"},
       },
       {"y", "target"},
       true});
  ops.push_back({ReductionOp::kMseBwd, "mse_bwd",
                 "dy_i = (2/N) (y_i - t_i) grad_out: y [N], target [N], grad_out a scalar",
                 {{"framework", S::kElementwise, M::kNone,
                   "s = RN(2/N); dy = RN(RN(s * RN(y - t)) * grad_out)"}},
                 {"y", "target", "grad_out"}, false});
  return ops;
}

}  // namespace

const std::vector<ReductionOpInfo>& ReductionOps() {
  static const std::vector<ReductionOpInfo> ops = MakeOps();
  return ops;
}

const ReductionOpInfo* FindReductionOp(std::string_view name) {
  for (const auto& op : ReductionOps()) {
    if (op.name == name) return &op;
  }
  return nullptr;
}

const ReductionOpInfo& GetReductionOp(ReductionOp op) {
  for (const auto& info : ReductionOps()) {
    if (info.op == op) return info;
  }
  throw std::logic_error("unregistered reduction op");
}

int ReductionVariantIndex(const ReductionOpInfo& op, std::string_view variant) {
  for (size_t v = 0; v < op.variants.size(); ++v) {
    if (op.variants[v].name == variant) return static_cast<int>(v);
  }
  return -1;
}

std::vector<std::vector<size_t>> ReductionOperandShapes(ReductionOp op, const ReductionShape& s) {
  switch (op) {
    case ReductionOp::kLinearFwd:
      return {{s.batch, s.in}, {s.out, s.in}, {s.out}};
    case ReductionOp::kLinearBwdInput:
      return {{s.batch, s.out}, {s.out, s.in}};
    case ReductionOp::kLinearBwdWeight:
      return {{s.batch, s.out}, {s.batch, s.in}};
    case ReductionOp::kLinearBwdBias:
      return {{s.batch, s.out}};
    case ReductionOp::kMseFwd:
      return {{s.batch}, {s.batch}};
    case ReductionOp::kMseBwd:
      return {{s.batch}, {s.batch}, {}};
  }
  return {};
}

std::vector<size_t> ReductionOutputShape(ReductionOp op, const ReductionShape& s) {
  switch (op) {
    case ReductionOp::kLinearFwd:
      return {s.batch, s.out};
    case ReductionOp::kLinearBwdInput:
      return {s.batch, s.in};
    case ReductionOp::kLinearBwdWeight:
      return {s.out, s.in};
    case ReductionOp::kLinearBwdBias:
      return {s.out};
    case ReductionOp::kMseFwd:
      return {};
    case ReductionOp::kMseBwd:
      return {s.batch};
  }
  return {};
}

size_t ReductionOutputCount(ReductionOp op, const ReductionShape& shape) {
  size_t count = 1;
  for (size_t extent : ReductionOutputShape(op, shape)) count *= extent;
  return count;
}

size_t ReductionLength(ReductionOp op, const ReductionShape& s) {
  switch (op) {
    case ReductionOp::kLinearFwd:
      return s.in;
    case ReductionOp::kLinearBwdInput:
      return s.out;
    case ReductionOp::kLinearBwdWeight:
    case ReductionOp::kLinearBwdBias:
    case ReductionOp::kMseFwd:
      return s.batch;
    case ReductionOp::kMseBwd:
      return 1;
  }
  return 0;
}

std::string ReductionModel::Name(const ReductionOpInfo& op) const {
  std::string name;
  const char* fusion = fused ? "_fused" : "_unfused";
  switch (schedule) {
    case ReductionSchedule::kSequentialFused:
      name = op.fused_matters ? (fused ? "sequential_fused" : "sequential_unfused") : "sequential";
      break;
    case ReductionSchedule::kSequentialUnfused:
      name = op.fused_matters ? "sequential_unfused" : "sequential";
      break;
    case ReductionSchedule::kLaneParallel:
      name = "lane_parallel_x" + std::to_string(lanes) + (op.fused_matters ? fusion : "");
      break;
    case ReductionSchedule::kPairwise:
      name = "pairwise";
      break;
    case ReductionSchedule::kElementwise:
      name = "framework";
      break;
  }
  if (scaling == MeanScaling::kReciprocal) name += "_recip";
  return name;
}

ReductionModel ExpectedReductionModel(const ReductionOpInfo& op,
                                      const ReductionVariantInfo& variant, size_t lanes,
                                      bool fused_muladd) {
  ReductionModel m;
  m.schedule = variant.schedule;
  m.scaling = variant.scaling;
  switch (variant.schedule) {
    case ReductionSchedule::kSequentialFused:
      // Where MulAdd is two roundings the fused schedule is the unfused one.
      if (!fused_muladd || !op.fused_matters) m.schedule = ReductionSchedule::kSequentialUnfused;
      m.fused = fused_muladd && op.fused_matters;
      break;
    case ReductionSchedule::kLaneParallel:
      m.lanes = lanes;
      m.fused = fused_muladd && op.fused_matters;
      break;
    default:
      break;
  }
  return m;
}

std::vector<ReductionModel> CandidateReductionModels(const ReductionOpInfo& op,
                                                     const ReductionVariantInfo& variant) {
  std::vector<ReductionModel> models;
  const bool fusions[] = {false, true};
  switch (variant.schedule) {
    case ReductionSchedule::kSequentialFused:
    case ReductionSchedule::kSequentialUnfused:
      for (bool fused : fusions) {
        if (fused && !op.fused_matters) continue;
        ReductionModel m;
        m.schedule = fused ? ReductionSchedule::kSequentialFused
                           : ReductionSchedule::kSequentialUnfused;
        m.fused = fused;
        m.scaling = variant.scaling;
        models.push_back(m);
      }
      break;
    case ReductionSchedule::kLaneParallel:
      for (size_t lanes : kX86LaneCounts) {
        for (bool fused : fusions) {
          if (fused && !op.fused_matters) continue;
          ReductionModel m;
          m.schedule = ReductionSchedule::kLaneParallel;
          m.lanes = lanes;
          m.fused = fused;
          m.scaling = variant.scaling;
          models.push_back(m);
        }
      }
      break;
    case ReductionSchedule::kPairwise:
    case ReductionSchedule::kElementwise: {
      ReductionModel m;
      m.schedule = variant.schedule;
      m.scaling = variant.scaling;
      models.push_back(m);
      break;
    }
  }
  return models;
}

}  // namespace ulpgate
