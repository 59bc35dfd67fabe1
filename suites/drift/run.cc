#include "suites/drift/run.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <sstream>

#include "kernels/ops/tanh_bwd/tanh_bwd_spec.h"
#include "oracles/float_text.h"
#include "oracles/ulp_metric.h"
#include "suites/engine/chunk_driver.h"
#include "suites/drift/kernels.h"
#include "suites/drift/mixed_ops.h"
#include "suites/drift/train_step.h"
#include "suites/inputs/inputs.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/tanh_bwd_oracle.h"

namespace ulpgate {
namespace {

// The kernels of a run, looked up once: the target's, or their models.
RunKernels LookUp(const RunConfig& c) {
  if (c.sgd != "fused" && c.sgd != "unfused") {
    throw InputError("unknown sgd variant '" + c.sgd + "' (fused, unfused)");
  }
  const RunVariants variants{c.tanh_bwd, c.linear, c.bias, c.mse};
  if (c.model) return ModelRunKernels(variants, *c.target, c.precision);
  if (!c.target->supported) {
    throw InputError("target " + c.target->name + " is not runnable here (" +
                     NotRunnableReason(*c.target) + "): run it on its models");
  }
  return TargetRunKernels(variants, *c.target, c.precision);
}

double RelativeDifference(double a, double reference) {
  return reference == 0 ? std::fabs(a) : std::fabs(a - reference) / std::fabs(reference);
}

// One run stepping through its epochs, whatever its ops.
class Trainer {
 public:
  virtual ~Trainer() = default;
  virtual double Epoch() = 0;
  // Largest relative and ULP (master format) distance of the parameters to
  // the reference's.
  virtual void ParameterError(const std::vector<ExactTensor>& reference, double* max_relative,
                              double* max_ulp) const = 0;
  virtual std::vector<std::vector<float>> Tensors() const = 0;
};

template <class Ops>
class TrainerOf : public Trainer {
 public:
  template <class... Args>
  TrainerOf(const Scenario& s, const Batch& batch, const Parameters& initial,
            const FloatFormat& master, Args&&... args)
      : ops_(s, std::forward<Args>(args)...),
        step_(s, ops_, ops_.FromFloats(batch.x), ops_.FromFloats(batch.target)),
        master_(master) {
    for (const auto& t : initial.tensors) w_.push_back(ops_.FromFloats(t));
  }

  double Epoch() override { return Ops::ToDouble(step_.Epoch(w_)); }

  void ParameterError(const std::vector<ExactTensor>& reference, double* max_relative,
                      double* max_ulp) const override {
    double rel = 0, ulp = 0;
    for (size_t k = 0; k < w_.size(); ++k) {
      for (size_t i = 0; i < w_[k].size(); ++i) {
        const double ref = reference[k][i].ToDouble();
        rel = std::max(rel, RelativeDifference(Ops::ToDouble(w_[k][i]), ref));
        ulp = std::max(ulp, UlpDistance(reference[k][i], w_[k][i]));
      }
    }
    *max_relative = rel;
    *max_ulp = ulp;
  }

  std::vector<std::vector<float>> Tensors() const override {
    std::vector<std::vector<float>> p;
    for (const auto& t : w_) {
      p.emplace_back();
      for (const auto& v : t) p.back().push_back(ToFloat(v));
    }
    return p;
  }

 private:
  double UlpDistance(const MpfrNumber& reference, float w) const {
    return MeasureUlpError(reference.get(), static_cast<double>(w), master_).ulp;
  }
  // |w - reference| / ulp(reference) for an exactly held w.
  double UlpDistance(const MpfrNumber& reference, const MpfrNumber& w) const {
    if (!reference.IsFinite() || !w.IsFinite()) return INFINITY;
    MpfrNumber d(kDriftPrecision + 64);
    mpfr_sub(d.get(), w.get(), reference.get(), MPFR_RNDN);
    mpfr_abs(d.get(), d.get(), MPFR_RNDN);
    mpfr_mul_2si(d.get(), d.get(), -UlpExponent(reference.get(), master_), MPFR_RNDN);
    return d.ToDouble();
  }
  float ToFloat(float v) const { return v; }
  float ToFloat(const MpfrNumber& v) const {
    return static_cast<float>(RoundToFormat(master_, v.get()));
  }

  Ops ops_;
  TrainingStep<Ops> step_;
  const FloatFormat& master_;
  std::vector<typename Ops::Tensor> w_;
};

std::unique_ptr<Trainer> MakeTrainer(const Scenario& s, const Batch& batch, const Parameters& initial,
                                     const RunConfig& c, InSituStatistics* in_situ) {
  const FloatFormat& master = *c.precision.master;
  if (c.exact_ops.empty()) {
    return std::make_unique<TrainerOf<FloatOps>>(s, batch, initial, master, c.precision, LookUp(c),
                                                 c.sgd == "fused", in_situ);
  }
  return std::make_unique<TrainerOf<MixedOps>>(s, batch, initial, master, c.precision, LookUp(c),
                                               c.sgd == "fused", c.exact_ops);
}

}  // namespace

std::string RunConfig::Spec() const {
  return std::string(kDriftTanhBwd) + "=" + tanh_bwd + ",linear=" + linear + ",bias=" + bias +
         ",mse=" + mse + ",sgd=" + sgd;
}

std::string RunConfig::Label() const {
  std::string label = precision.Name() == "f32" ? "" : precision.Name() + " ";
  label += Spec() + "@" + (target ? target->name : std::string("?"));
  if (!exact_ops.empty()) {
    std::vector<std::string> exact, rounded;
    for (StepOp op : AllStepOps()) {
      const bool is_exact = std::find(exact_ops.begin(), exact_ops.end(), op) != exact_ops.end();
      (is_exact ? exact : rounded).push_back(StepOpName(op));
    }
    label += rounded.size() < exact.size()
                 ? fmt::format(" [only {} rounded]", fmt::join(rounded, ", "))
                 : fmt::format(" [exact: {}]", fmt::join(exact, ", "));
  }
  return label;
}

std::string DefaultTanhBwdVariant(const FloatFormat& format) {
  return IsBinary32(format) ? "mac" : "mac_opmath";
}

RunConfig ParseRunConfig(const std::string& spec, const TargetInfo* target,
                         const DriftPrecision& precision) {
  RunConfig c;
  c.target = target;
  c.precision = precision;
  c.tanh_bwd = DefaultTanhBwdVariant(*precision.compute);
  std::stringstream stream(spec);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string op = item.substr(0, eq);
    const std::string variant = eq == std::string::npos ? "" : item.substr(eq + 1);
    if (eq == std::string::npos || variant.empty()) {
      throw InputError(fmt::format("'{}': expected op=variant (ops: {}, linear, bias, mse, sgd)", item,
                                   kDriftTanhBwd));
    }
    if (op == kDriftTanhBwd) {
      c.tanh_bwd = variant;
    } else if (op == "linear") {
      c.linear = variant;
    } else if (op == "bias") {
      c.bias = variant;
    } else if (op == "mse") {
      c.mse = variant;
    } else if (op == "sgd") {
      c.sgd = variant;
    } else {
      throw InputError(fmt::format("unknown op '{}' in '{}' ({}, linear, bias, mse, sgd)", op, spec,
                                   kDriftTanhBwd));
    }
  }
  // Validates every name, for any compiled target (the models need no
  // instruction of the target).
  RunConfig check = c;
  check.model = true;
  try {
    LookUp(check);
  } catch (const InputError& e) {
    if (VariantNames(*FindElementwiseOp(kDriftTanhBwd), *precision.compute).empty()) throw;
    const auto names = VariantNames(*FindElementwiseOp(kDriftTanhBwd), *precision.compute);
    if (std::find(names.begin(), names.end(), c.tanh_bwd) != names.end()) throw;
    throw InputError(fmt::format("unknown {} variant '{}' in {} ({})", kDriftTanhBwd, c.tanh_bwd,
                                 precision.Name(), fmt::join(names, ", ")));
  }
  return c;
}

std::vector<size_t> LagEpochs(size_t epochs) {
  std::vector<size_t> at;
  for (size_t percent : {10, 25, 50, 75, 100}) {
    const size_t e = std::max<size_t>(1, epochs * percent / 100) - 1;
    if (at.empty() || at.back() != e) at.push_back(e);
  }
  return at;
}

CurveSummary SummarizeCurve(const std::vector<double>& loss, const std::vector<double>& reference) {
  CurveSummary s;
  const size_t epochs = std::min(loss.size(), reference.size());
  if (epochs == 0) return s;
  for (size_t e = 0; e < epochs; ++e) {
    double dev = RelativeDifference(loss[e], reference[e]);
    if (std::isnan(dev)) dev = INFINITY;  // a NaN loss is as far as a loss gets
    if (dev > s.max_relative_deviation) {
      s.max_relative_deviation = dev;
      s.max_deviation_epoch = e;
    }
  }
  const double last = loss[epochs - 1], ref_last = reference[epochs - 1];
  s.final_relative_deviation = RelativeDifference(last, ref_last);
  s.final_signed_deviation = ref_last == 0 ? last : (last - ref_last) / std::fabs(ref_last);
  for (size_t e : LagEpochs(epochs)) {
    LagAt lag{e, reference[e], std::nullopt};
    for (size_t k = 0; k < epochs; ++k) {
      if (loss[k] <= lag.reference_loss) {
        lag.lag = static_cast<long>(k) - static_cast<long>(e);
        break;
      }
    }
    s.lags.push_back(lag);
  }
  const size_t quarter = epochs - 1 - (epochs - 1) / 4;
  const double reference_fall = reference[quarter] - ref_last;
  const double fall = loss[quarter] - last;
  // Behind the exact run, too: a run that reached the loss's floor early (the
  // saturating scenario's 0.25 in bf16 layers) has nothing left to learn.
  s.stalled = epochs >= 8 && reference_fall > 0 && !(fall >= 0.1 * reference_fall) &&
              !(last <= ref_last);
  return s;
}

DriftResult RunDrift(const Scenario& scenario, const std::vector<RunConfig>& configs, size_t epochs,
                     const std::function<void(size_t, size_t)>& progress, unsigned threads) {
  DriftResult d;
  d.scenario = scenario;
  d.epochs = epochs ? epochs : scenario.epochs;
  d.batch = MakeBatch(scenario);
  d.initial = InitialParameters(scenario);
  d.runs.resize(configs.size());
  std::vector<std::unique_ptr<Trainer>> trainers;
  for (size_t r = 0; r < configs.size(); ++r) {
    d.runs[r].config = configs[r];
    trainers.push_back(MakeTrainer(d.scenario, d.batch, d.initial, configs[r], &d.runs[r].in_situ));
  }
  ExactOps exact(d.scenario);
  TrainingStep<ExactOps> reference(d.scenario, exact, exact.FromFloats(d.batch.x),
                                   exact.FromFloats(d.batch.target));
  std::vector<ExactTensor> w = ToExact(d.initial);
  std::vector<ExactTensor> at_start;  // the reference's parameters as the epoch starts

  // The runs advance in lockstep with the reference, so each epoch's
  // parameters are compared without keeping the reference's history. Unit 0
  // of an epoch steps the reference, unit r + 1 run r; each writes only its
  // own results, so nothing depends on the threads. The threads live for the
  // whole run (MPFR's per-thread caches of constants with them) and meet at
  // a barrier twice an epoch.
  const size_t units = trainers.size() + 1;
  const unsigned workers = WorkerCount(threads, units);
  std::mutex mutex;
  std::condition_variable turn;
  size_t arrived = 0, generation = 0;
  auto barrier = [&] {
    std::unique_lock<std::mutex> lock(mutex);
    const size_t g = generation;
    if (++arrived == workers) {
      arrived = 0;
      ++generation;
      turn.notify_all();
    } else {
      turn.wait(lock, [&] { return generation != g; });
    }
  };
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr failure;
  auto work = [&](bool calling_thread) {
    std::optional<MpfrThreadCaches> caches;
    if (!calling_thread) caches.emplace();
    for (size_t epoch = 0; epoch < d.epochs; ++epoch) {
      if (calling_thread) {
        at_start = w;
        next = 0;
      }
      barrier();
      for (size_t u; !failed && (u = next.fetch_add(1)) < units;) {
        try {
          if (u == 0) {
            d.reference.loss.push_back(reference.Epoch(w).ToDouble());
            continue;
          }
          FloatRunResult& run = d.runs[u - 1];
          double max_rel = 0, max_ulp = 0;
          trainers[u - 1]->ParameterError(at_start, &max_rel, &max_ulp);
          run.param_max_relative.push_back(max_rel);
          run.param_max_ulp.push_back(max_ulp);
          run.loss.push_back(trainers[u - 1]->Epoch());
        } catch (...) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failure) failure = std::current_exception();
          failed = true;
        }
      }
      barrier();
      if (failed) return;
      if (calling_thread && progress && (epoch % 50 == 0 || epoch + 1 == d.epochs)) {
        progress(epoch + 1, d.epochs);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t) pool.emplace_back(work, false);
  work(true);
  for (std::thread& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  d.reference.parameters = std::move(w);
  for (size_t r = 0; r < trainers.size(); ++r) {
    FloatRunResult& run = d.runs[r];
    run.final_parameters = d.initial;
    run.final_parameters.tensors = trainers[r]->Tensors();
    run.summary = SummarizeCurve(run.loss, d.reference.loss);
  }
  return d;
}

}  // namespace ulpgate
