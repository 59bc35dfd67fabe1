#include "suites/drift/kernels.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <utility>
#include <vector>
#include <algorithm>

#include "kernels/narrow_formats.h"
#include "kernels/reductions/registered_reductions.h"
#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "kernels/train_step.h"
#include "oracles/float_text.h"
#include "oracles/highway_math.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/reduction_oracle.h"
#include "suites/inputs/reduction_problem.h"
#include "suites/engine/tanh_bwd_oracle.h"

namespace ulpgate {
namespace {

// The tanh_bwd model a binary32 variant must follow on a target.
int ExpectedTanhBwdModel(const std::string& variant, const TargetInfo& target) {
  const int v = TanhBwdVariantIndex(variant);
  if (v < 0) throw InputError("unknown tanh_bwd variant '" + variant + "'");
  const auto& info = kTanhBwdVariants[v];
  return TanhBwdModelIndex(target.fused_negmuladd ? info.model_fused_target
                                                  : info.model_unfused_target);
}

// The same for a variant of a 16-bit format, as an index into
// TanhBwdNarrowModelNames(format).
size_t ExpectedNarrowTanhBwdModel(const FloatFormat& format, const std::string& variant,
                                  const TargetInfo& target) {
  if (TanhBwdNarrowVariantIndex(variant) < 0) {
    throw InputError("unknown " + std::string(format.name) + " tanh_bwd variant '" + variant + "'");
  }
  const std::string model = ExpectedNarrowModel(format, variant, target);
  const auto& names = TanhBwdNarrowModelNames(format);
  return static_cast<size_t>(std::find(names.begin(), names.end(), model) - names.begin());
}

// Bit patterns of a 16-bit format from floats holding its values, and back.
std::vector<uint16_t> Encode(const FloatFormat& format, const float* x, size_t n) {
  std::vector<uint16_t> bits(n);
  for (size_t i = 0; i < n; ++i) bits[i] = static_cast<uint16_t>(EncodeBits(format, x[i]));
  return bits;
}

void Decode(const FloatFormat& format, const uint16_t* bits, float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(DecodeBits(format, bits[i]));
}

// A reduction op's outputs, element by element, on the model `variant` must
// follow on `target`, in `format` (a 16-bit format's model is the binary32
// model rounded once, as its kernels accumulate in binary32); the operands
// are the op's tensors in ReductionOpInfo::operands order.
class ReductionOpModel {
 public:
  ReductionOpModel(const ReductionOpInfo& op, const std::string& variant,
                   const TargetInfo& target, const FloatFormat& format)
      : op_(op), format_(format) {
    const int v = ReductionVariantIndex(op_, variant);
    if (v < 0) {
      throw InputError("unknown " + std::string(op_.name) + " variant '" + variant + "'");
    }
    model_ = ExpectedReductionModel(op_, op_.variants[v], target.f32_lanes, target.fused_muladd);
  }

  void Run(std::vector<std::vector<float>> operands, const ReductionShape& shape,
           float* out) const {
    ReductionInstance instance;
    instance.operands = std::move(operands);
    const size_t count = ReductionOutputCount(op_, shape);
    for (size_t e = 0; e < count; ++e) {
      const float binary32 =
          ReductionModelOutput(op_, model_, GatherElementTerms(op_, shape, instance, e));
      out[e] = IsBinary32(format_) ? binary32 : static_cast<float>(RoundToFormat(format_, binary32));
    }
  }

 private:
  const ReductionOpInfo& op_;
  const FloatFormat& format_;
  ReductionModel model_;
};

std::vector<float> Copy(const float* p, size_t n) { return std::vector<float>(p, p + n); }

const ReductionOpInfo& Op(std::string_view name) { return *FindReductionOp(name); }

// One reduction op in `format`: its kernel (binary32, or 16-bit between
// encoding and decoding) or its model.
class ReductionOpRunner {
 public:
  ReductionOpRunner(const ReductionOpInfo& op, const std::string& variant,
                    const TargetInfo& target, const FloatFormat& format, bool model)
      : op_(op), format_(&format) {
    if (model) {
      model_ = std::make_shared<ReductionOpModel>(op, variant, target, format);
      return;
    }
    const std::string dtype = IsBinary32(format) ? "f32" : format.name;
    kernel_ = FindReductionKernel(op_.name, dtype, variant, target.bits);
    if (kernel_ == nullptr) {
      throw InputError("unknown " + std::string(op_.name) + " variant '" + variant + "'" +
                       (IsBinary32(format) ? std::string() : " in " + std::string(format.name)));
    }
  }

  // operands: pointers and sizes in ReductionOpInfo::operands order.
  void Run(const std::vector<std::pair<const float*, size_t>>& operands,
           const ReductionShape& shape, float* out) const {
    if (model_) {
      std::vector<std::vector<float>> copies;
      for (const auto& [p, n] : operands) copies.push_back(Copy(p, n));
      model_->Run(std::move(copies), shape, out);
      return;
    }
    if (IsBinary32(*format_)) {
      std::vector<const void*> pointers;
      for (const auto& operand : operands) pointers.push_back(operand.first);
      kernel_(pointers.data(), out, shape.data());
      return;
    }
    std::vector<std::vector<uint16_t>> bits;
    std::vector<const void*> pointers;
    for (const auto& [p, n] : operands) bits.push_back(Encode(*format_, p, n));
    for (const auto& b : bits) pointers.push_back(b.data());
    const size_t count = ReductionOutputCount(op_, shape);
    std::vector<uint16_t> y(count);
    kernel_(pointers.data(), y.data(), shape.data());
    Decode(*format_, y.data(), out, count);
  }

 private:
  const ReductionOpInfo& op_;
  const FloatFormat* format_;
  std::shared_ptr<ReductionOpModel> model_;
  ReductionKernel kernel_ = nullptr;
};

ReductionShape Layer(size_t batch, size_t in, size_t out) {
  return LinearShape{batch, in, out}.Extents();
}
ReductionShape Elements(size_t n) { return {{n, 1, 1, 1}, 1}; }

// The reduction kernels of a run (or their models) behind the network's
// layer-shaped calls.
void SetReductions(const RunVariants& v, const TargetInfo& target, const DriftPrecision& precision,
                   bool model, RunKernels* k) {
  const FloatFormat& linear_format = *FormatsOf(StepOp::kLinearFwd, precision).in;
  const FloatFormat& mse_format = *FormatsOf(StepOp::kMseFwd, precision).in;
  const ReductionOpInfo& linear_fwd = Op(LinearFwdSpec::kName);
  const ReductionOpInfo& linear_bwd_input = Op(LinearBwdInputSpec::kName);
  const ReductionOpInfo& linear_bwd_weight = Op(LinearBwdWeightSpec::kName);
  if (!model && IsBinary32(linear_format)) {
    for (const ReductionOpInfo* op : {&linear_fwd, &linear_bwd_input, &linear_bwd_weight}) {
      if (ReductionVariantIndex(*op, v.linear) < 0) {
        throw InputError("unknown linear variant '" + v.linear +
                         "' (must exist for linear_fwd, linear_bwd_input and linear_bwd_weight)");
      }
    }
    if (ReductionVariantIndex(Op(LinearBwdBiasSpec::kName), v.bias) < 0) {
      throw InputError("unknown linear_bwd_bias variant '" + v.bias + "'");
    }
  }
  const ReductionOpRunner fwd(linear_fwd, v.linear, target, linear_format, model);
  const ReductionOpRunner input(linear_bwd_input, v.linear, target, linear_format, model);
  const ReductionOpRunner weight(linear_bwd_weight, v.linear, target, linear_format, model);
  const ReductionOpRunner bias(Op(LinearBwdBiasSpec::kName), v.bias, target, linear_format, model);
  k->linear_fwd = [fwd](const float* x, const float* w, const float* b, float* y, size_t batch,
                        size_t in, size_t out) {
    fwd.Run({{x, batch * in}, {w, out * in}, {b, out}}, Layer(batch, in, out), y);
  };
  k->linear_bwd_input = [input](const float* dy, const float* w, float* dx, size_t batch,
                                size_t in, size_t out) {
    input.Run({{dy, batch * out}, {w, out * in}}, Layer(batch, in, out), dx);
  };
  k->linear_bwd_weight = [weight](const float* dy, const float* x, float* dw, size_t batch,
                                  size_t in, size_t out) {
    weight.Run({{dy, batch * out}, {x, batch * in}}, Layer(batch, in, out), dw);
  };
  k->linear_bwd_bias = [bias](const float* dy, float* db, size_t batch, size_t out) {
    bias.Run({{dy, batch * out}}, Layer(batch, 1, out), db);
  };
  // linear_fwd of one row with itself, in binary32 whatever the run's format.
  const ReductionOpRunner squares(linear_fwd, v.linear, target, kBinary32, model);
  k->sum_of_squares = [squares](const float* x, size_t n) {
    const float zero = 0.0f;
    float sum = 0;
    squares.Run({{x, n}, {x, n}, {&zero, 1}}, Layer(1, n, 1), &sum);
    return sum;
  };
  const ReductionOpRunner mse_fwd(Op(MseFwdSpec::kName), v.mse, target, mse_format, model);
  const ReductionOpRunner mse_bwd(Op(MseBwdSpec::kName), "framework", target, mse_format, model);
  k->mse_fwd = [mse_fwd](const float* y, const float* expected, size_t n) {
    float loss = 0;
    mse_fwd.Run({{y, n}, {expected, n}}, Elements(n), &loss);
    return loss;
  };
  k->mse_bwd = [mse_bwd](const float* y, const float* expected, float grad_out, float* dy,
                         size_t n) {
    mse_bwd.Run({{y, n}, {expected, n}, {&grad_out, 1}}, Elements(n), dy);
  };
}

}  // namespace

float HighwayTanhModel(float x, bool fused_muladd) { return HighwayTanh(x, fused_muladd); }

RunKernels TargetRunKernels(const RunVariants& v, const TargetInfo& target,
                            const DriftPrecision& precision) {
  const int64_t t = target.bits;
  const FloatFormat& tanh_format = *FormatsOf(StepOp::kTanhBwd, precision).in;
  RunKernels k;
  const ElementwiseKernel tanh_bwd =
      FindElementwiseKernel(kDriftTanhBwd, tanh_format.name, v.tanh_bwd, t);
  if (tanh_bwd == nullptr) {
    throw InputError("unknown " + std::string(tanh_format.name) + " tanh_bwd variant '" +
                     v.tanh_bwd + "'");
  }
  if (IsBinary32(tanh_format)) {
    k.tanh_bwd = [tanh_bwd](const float* grad, const float* tv, float* out, size_t n) {
      const void* in[2] = {grad, tv};
      tanh_bwd(in, out, n);
    };
  } else {
    const FloatFormat* format = &tanh_format;
    k.tanh_bwd = [tanh_bwd, format](const float* grad, const float* tv, float* out, size_t n) {
      const std::vector<uint16_t> g = Encode(*format, grad, n), y = Encode(*format, tv, n);
      std::vector<uint16_t> r(n);
      const void* in[2] = {g.data(), y.data()};
      tanh_bwd(in, r.data(), n);
      Decode(*format, r.data(), out, n);
    };
  }
  SetReductions(v, target, precision, /*model=*/false, &k);
  const TrainStepKernels* step = FindTrainStepKernels(t);
  if (!step) throw InputError("target " + target.name + " lacks kernels");
  k.tanh_forward = step->tanh_forward;
  k.relu_forward = step->relu_forward;
  k.relu_backward = step->relu_backward;
  k.sgd_step = step->sgd_step;
  k.sgd_step_fused = step->sgd_step_fused;
  k.sam_perturb = step->sam_perturb;
  return k;
}

RunKernels ModelRunKernels(const RunVariants& v, const TargetInfo& target,
                           const DriftPrecision& precision) {
  RunKernels k;
  const FloatFormat& tanh_format = *FormatsOf(StepOp::kTanhBwd, precision).in;
  if (IsBinary32(tanh_format)) {
    const int tanh_model = ExpectedTanhBwdModel(v.tanh_bwd, target);
    k.tanh_bwd = [tanh_model](const float* grad, const float* t, float* out, size_t n) {
      for (size_t i = 0; i < n; ++i) out[i] = TanhBwdModelsNative(grad[i], t[i])[tanh_model];
    };
  } else {
    const size_t model = ExpectedNarrowTanhBwdModel(tanh_format, v.tanh_bwd, target);
    const FloatFormat* format = &tanh_format;
    k.tanh_bwd = [model, format](const float* grad, const float* t, float* out, size_t n) {
      for (size_t i = 0; i < n; ++i) {
        out[i] = TanhBwdNarrowModelsNative(*format, static_cast<uint16_t>(EncodeBits(*format, grad[i])),
                                           static_cast<uint16_t>(EncodeBits(*format, t[i])))[model];
      }
    };
  }
  SetReductions(v, target, precision, /*model=*/true, &k);
  const bool fused_muladd = target.fused_muladd;
  const bool fused_negmuladd = target.fused_negmuladd;
  k.tanh_forward = [fused_muladd](const float* x, float* y, size_t n) {
    for (size_t i = 0; i < n; ++i) y[i] = HighwayTanhModel(x[i], fused_muladd);
  };
  // IfThenElseZero(Gt(x, 0), ...): -0 and NaN give +0.
  k.relu_forward = [](const float* x, float* y, size_t n) {
    for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  };
  k.relu_backward = [](const float* dy, const float* h, float* dh, size_t n) {
    for (size_t i = 0; i < n; ++i) dh[i] = h[i] > 0.0f ? dy[i] : 0.0f;
  };
  // kernels/train_step_spec-inl.h: SgdStep w - RN(lr g); SgdStepFused
  // NegMulAdd(lr, g, w); SamPerturb w + RN(g scale).
  k.sgd_step = [](float* w, const float* g, float lr, size_t n) {
    for (size_t i = 0; i < n; ++i) w[i] = w[i] - lr * g[i];
  };
  k.sgd_step_fused = [fused_negmuladd](float* w, const float* g, float lr, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      w[i] = fused_negmuladd ? std::fma(-lr, g[i], w[i]) : w[i] - lr * g[i];
    }
  };
  k.sam_perturb = [](const float* w, const float* g, float scale, float* out, size_t n) {
    for (size_t i = 0; i < n; ++i) out[i] = w[i] + g[i] * scale;
  };
  return k;
}

}  // namespace ulpgate
