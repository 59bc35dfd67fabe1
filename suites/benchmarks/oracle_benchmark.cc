// Throughput of the oracle paths, per input: the MPFR path (the exact value,
// the four binary32 models, one ULP measurement), a plain MPFR loop, the
// scalar fast tier, the sweep's MPFR fallback and its vectorized tier; the
// whole engine (every variant on every supported target, the sampled tier);
// sweeps (one case and every case, f32 over t and bf16 pairs); the
// double-word exp one at a time and in lockstep; and per op with a factor
// estimate, that estimate (one at a time and the op's batch), its term factor
// and its native models. Compare ratios within one run: the machines are
// shared and noisy.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "oracles/double_word.h"
#include "oracles/fast_ulp.h"
#include "oracles/ulp_metric.h"
#include "suites/sweep/sweep.h"
#include "suites/sweep/sweep_tier.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/tanh_bwd_oracle.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/inputs/tanh_bwd_suites.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/vector_models.h"

namespace ulpgate {
namespace {

const InputSet& Inputs() {
  static const InputSet inputs = GenerateTanhBwdSuite("domain", 1, 1 << 16);
  return inputs;
}

void BM_TanhBwdExact(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdExact(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdExact);

void BM_TanhBwdFourModels(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdModels(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdFourModels);

void BM_MeasureUlpError(benchmark::State& state) {
  const InputSet& in = Inputs();
  std::vector<MpfrNumber> exact;
  std::vector<float> y;
  for (size_t i = 0; i < 4096; ++i) {
    exact.push_back(TanhBwdExact(in.columns[0][i], in.columns[1][i]));
    y.push_back(TanhBwdModel("mac_unfused", in.columns[0][i], in.columns[1][i]));
  }
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(MeasureUlpError(exact[i].get(), y[i]));
    i = (i + 1) % exact.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MeasureUlpError);

// Per input, the error of one output (the mac_unfused model's) three ways:
// the MPFR tier (the exact value, then MeasureUlpError), a plain MPFR loop that
// computes grad * (1 - t^2) at 128 bits and subtracts the output (the least an
// MPFR oracle can do), and the fast tier of oracles/fast_ulp.h (with its
// MPFR fallback where it defers).
std::vector<float> MacUnfusedOutputs() {
  const InputSet& in = Inputs();
  std::vector<float> y(in.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = TanhBwdModelsNative(in.columns[0][i], in.columns[1][i])[1];
  return y;
}

void BM_ErrorMpfrTier(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  size_t i = 0;
  for (auto _ : state) {
    const MpfrNumber exact = TanhBwdExact(in.columns[0][i], in.columns[1][i]);
    benchmark::DoNotOptimize(MeasureUlpError(exact.get(), y[i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ErrorMpfrTier);

void BM_ErrorPlainMpfrLoop(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  mpfr_t g, t, x, d;
  mpfr_inits2(128, g, t, x, d, static_cast<mpfr_ptr>(nullptr));
  size_t i = 0;
  for (auto _ : state) {
    mpfr_set_flt(g, in.columns[0][i], MPFR_RNDN);
    mpfr_set_flt(t, in.columns[1][i], MPFR_RNDN);
    mpfr_sqr(x, t, MPFR_RNDN);
    mpfr_ui_sub(x, 1, x, MPFR_RNDN);
    mpfr_mul(x, x, g, MPFR_RNDN);
    mpfr_set_flt(d, y[i], MPFR_RNDN);
    mpfr_sub(d, d, x, MPFR_RNDN);
    benchmark::DoNotOptimize(mpfr_get_d(d, MPFR_RNDN));
    i = (i + 1) % in.size();
  }
  mpfr_clears(g, t, x, d, static_cast<mpfr_ptr>(nullptr));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ErrorPlainMpfrLoop);

void BM_ErrorFastTier(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  size_t i = 0, deferred = 0;
  for (auto _ : state) {
    const float grad = in.columns[0][i], t = in.columns[1][i];
    const auto x = FastTanhBwdExactValue(grad, t, kBinary32);
    std::optional<UlpError> e;
    if (x) e = FastUlpError(*x, y[i], kBinary32);
    if (!e) {
      ++deferred;
      const MpfrNumber exact = TanhBwdExact(grad, t);
      e = MeasureUlpError(exact.get(), y[i]);
    }
    benchmark::DoNotOptimize(e);
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["deferred"] = static_cast<double>(deferred) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ErrorFastTier);

// The sweep's MPFR fallback (MpfrTanhBwdError: the exact value at the
// precision the input needs, then the error through a 53-bit difference),
// per input, against BM_ErrorPlainMpfrLoop.
void BM_ErrorMpfrFallback(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  MpfrTanhBwdError mpfr;
  size_t i = 0;
  for (auto _ : state) {
    mpfr.Set(in.columns[0][i], in.columns[1][i]);
    benchmark::DoNotOptimize(mpfr.Measure(y[i], kBinary32));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ErrorMpfrFallback);

// The vectorized tier (suites/sweep/sweep_tier.h), per input: the exact value and
// one output's error over tiles of kSweepTile inputs.
void BM_ErrorSweepTier(benchmark::State& state) {
  const InputSet& in = Inputs();
  const std::vector<float> y = MacUnfusedOutputs();
  auto exact = std::make_unique<SweepExactTile>();
  auto errors = std::make_unique<SweepErrorTile>();
  auto fine = std::make_unique<SweepFineCounts>();
  std::vector<uint64_t> keys(kSweepTile, 1);
  size_t begin = 0;
  for (auto _ : state) {
    SweepExactValues(kBinary32, in.columns[0].data() + begin, in.columns[1].data() + begin,
                     kSweepTile, exact.get());
    SweepErrorSums sums;
    SweepMeasure(kBinary32, *exact, y.data() + begin, 0, keys.data(), kSweepTile, errors.get(),
                 &sums, fine.get());
    benchmark::DoNotOptimize(sums);
    std::fill(std::begin(fine->counts), std::end(fine->counts), 0);
    begin = (begin + kSweepTile) % (in.size() - kSweepTile);
  }
  state.SetItemsProcessed(state.iterations() * kSweepTile);
}
BENCHMARK(BM_ErrorSweepTier);

void BM_TanhBwdFourModelsNative(benchmark::State& state) {
  const InputSet& in = Inputs();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(TanhBwdModelsNative(in.columns[0][i], in.columns[1][i]));
    i = (i + 1) % in.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TanhBwdFourModelsNative);

// The double-word exp (oracles/double_word.h) per value: one at a time, and
// eight in lockstep.
std::vector<DoubleWord> ExpArguments() {
  std::vector<DoubleWord> v(1 << 12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = {-50.0 * static_cast<double>(i * 40503 % v.size()) / v.size(), 0};
  return v;
}
void BM_DoubleWordExp(benchmark::State& state) {
  const std::vector<DoubleWord> v = ExpArguments();
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(Exp(v[i]));
    i = (i + 1) % v.size();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DoubleWordExp);
void BM_DoubleWordExpLanes(benchmark::State& state) {
  const std::vector<DoubleWord> v = ExpArguments();
  DoubleWord out[kDoubleWordLanes];
  size_t i = 0;
  for (auto _ : state) {
    ExpLanes(v.data() + i, out, kDoubleWordLanes);
    benchmark::DoNotOptimize(out);
    i = (i + kDoubleWordLanes) % v.size();
  }
  state.SetItemsProcessed(state.iterations() * kDoubleWordLanes);
}
BENCHMARK(BM_DoubleWordExpLanes);


// Inputs per second through the engine: all variants on all supported
// targets, one thread and every core.
void BM_EngineAllCases(benchmark::State& state) {
  const InputSet& in = Inputs();
  RunOptions options;
  options.threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(RunElementwise(*FindElementwiseOp(TanhBwdSpec::kName), in, options));
  state.SetItemsProcessed(state.iterations() * in.size());
}
BENCHMARK(BM_EngineAllCases)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

// Sweeps (RunSweep): inputs per second, one (variant, target) and every one.
// Arguments: threads. f32: every t in [0.5, 2^8) at grad = 1 (2^26 inputs);
// bf16: 2^26 pairs from grad = 0x3c00.
SweepOptions SweepOf(const FloatFormat& format, unsigned threads, bool one_case) {
  SweepOptions o;
  o.op = FindElementwiseOp(TanhBwdSpec::kName);
  const bool f32 = &format == &kBinary32;
  o.domain = f32 ? MakeSweepDomain(kBinary32, SweepDomain::Kind::kOverT, {1.0f})
                 : MakeSweepDomain(format, SweepDomain::Kind::kPairs, {});
  o.begin = f32 ? 0x3f000000 : 0x3c000000;
  o.end = o.begin + (uint64_t{1} << 26);
  if (one_case) {
    o.variants = {f32 ? "mulsub" : "mulsub_opmath"};
    o.targets = {&BestTarget()};
  }
  o.threads = threads;
  return o;
}

void RunSweepBenchmark(benchmark::State& state, const FloatFormat& format, bool one_case) {
  const SweepOptions o = SweepOf(format, static_cast<unsigned>(state.range(0)), one_case);
  size_t cases = 0;
  for (auto _ : state) {
    const SweepResult r = RunSweep(o);
    cases = r.cases.size();
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations() * (o.end - o.begin));
  state.counters["cases"] = static_cast<double>(cases);
}

void BM_SweepF32OneCase(benchmark::State& state) { RunSweepBenchmark(state, kBinary32, true); }
BENCHMARK(BM_SweepF32OneCase)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SweepBf16OneCase(benchmark::State& state) { RunSweepBenchmark(state, kBFloat16, true); }
BENCHMARK(BM_SweepBf16OneCase)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SweepF16OneCase(benchmark::State& state) { RunSweepBenchmark(state, kBinary16, true); }
BENCHMARK(BM_SweepF16OneCase)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_SweepBf16AllCases(benchmark::State& state) { RunSweepBenchmark(state, kBFloat16, false); }
BENCHMARK(BM_SweepBf16AllCases)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// Each op's fast exact tier per input over its domain suite's second
// operands (registered per op in main): its factor estimate one at a time
// (FastFactor) and in the op's batch (FastFactors), its term factor, and
// every binary32 model in native arithmetic.
std::vector<float> DomainSeconds(const ElementwiseOpInfo& op) {
  return GenerateElementwiseSuite(op, kBinary32, "domain", 1, 1 << 16).columns[1];
}
void BM_FastFactor(benchmark::State& state, const ElementwiseOpInfo* op) {
  const ElementwiseOracle& oracle = OracleOf(*op);
  const std::vector<float> x = DomainSeconds(*op);
  size_t i = 0;
  for (auto _ : state) {
    const float operands[2] = {1.0f, x[i]};
    benchmark::DoNotOptimize(oracle.FastFactor(operands));
    i = (i + 1) % x.size();
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_FastFactors(benchmark::State& state, const ElementwiseOpInfo* op) {
  const ElementwiseOracle& oracle = OracleOf(*op);
  const std::vector<float> x = DomainSeconds(*op);
  constexpr size_t kBlock = 64;
  double f0[kBlock], f1[kBlock], f2[kBlock], error[kBlock], term[kBlock];
  uint8_t plain[kBlock];
  const FactorEstimateColumns out{f0, f1, f2, error, term, plain};
  size_t i = 0;
  for (auto _ : state) {
    oracle.FastFactors(x.data() + i, kBlock, out);
    benchmark::DoNotOptimize(f0);
    benchmark::DoNotOptimize(plain);
    i = (i + kBlock) % x.size();
  }
  state.SetItemsProcessed(state.iterations() * kBlock);
}
void BM_FastTermFactor(benchmark::State& state, const ElementwiseOpInfo* op) {
  const ElementwiseOracle& oracle = OracleOf(*op);
  const std::vector<float> x = DomainSeconds(*op);
  size_t i = 0;
  for (auto _ : state) {
    const float operands[2] = {1.0f, x[i]};
    benchmark::DoNotOptimize(oracle.FastTermFactor(operands));
    i = (i + 1) % x.size();
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_NativeModels(benchmark::State& state, const ElementwiseOpInfo* op) {
  const std::vector<float> x = DomainSeconds(*op);
  std::vector<float> out(ModelCount(*op, kBinary32));
  size_t i = 0;
  for (auto _ : state) {
    const float operands[2] = {1.5f, x[i]};
    ModelOutputsInto(*op, kBinary32, operands, /*native=*/true, out.data());
    benchmark::DoNotOptimize(out.data());
    i = (i + 1) % x.size();
  }
  state.SetItemsProcessed(state.iterations());
}

// Every model of the op at once per value, as the engine's vectorized tier
// computes them (suites/engine/vector_models.h), a tile of the domain suite
// at a time; skipped where the CPU has no FMA.
void BM_VectorModels(benchmark::State& state, const ElementwiseOpInfo* op) {
  std::vector<float> x = DomainSeconds(*op);
  x.resize(4096 + 16, 1.0f);
  const std::vector<float> grad(x.size(), 1.5f);
  const float* operands[2] = {grad.data(), x.data()};
  std::vector<float> out(x.size());
  if (!VectorModelOutputs(*op, 0, operands, 4096, out.data())) {
    state.SkipWithError("no FMA target: no vector models");
    return;
  }
  for (auto _ : state) {
    for (size_t m = 0; m < op->models.size(); ++m) {
      VectorModelOutputs(*op, m, operands, 4096, out.data());
      benchmark::DoNotOptimize(out.data());
    }
  }
  state.SetItemsProcessed(state.iterations() * 4096);
}

}  // namespace
}  // namespace ulpgate

int main(int argc, char** argv) {
  using ulpgate::ElementwiseOpInfo;
  for (const ElementwiseOpInfo& op : ulpgate::ElementwiseOps()) {
    if (!ulpgate::OracleOf(op).HasFastFactor()) continue;
    const std::string name(op.name);
    benchmark::RegisterBenchmark(("BM_FastFactor/" + name).c_str(), ulpgate::BM_FastFactor, &op);
    // An op's batch, where it has one (a batch of none says so).
    if (ulpgate::OracleOf(op).FastFactors(nullptr, 0, ulpgate::FactorEstimateColumns{})) {
      benchmark::RegisterBenchmark(("BM_FastFactors/" + name).c_str(), ulpgate::BM_FastFactors, &op);
    }
    benchmark::RegisterBenchmark(("BM_FastTermFactor/" + name).c_str(), ulpgate::BM_FastTermFactor, &op);
    benchmark::RegisterBenchmark(("BM_NativeModels/" + name).c_str(), ulpgate::BM_NativeModels, &op);
    benchmark::RegisterBenchmark(("BM_VectorModels/" + name).c_str(), ulpgate::BM_VectorModels, &op);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
