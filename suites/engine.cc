#include "suites/engine.h"
#include "suites/digest.h"
#include "suites/chunk_driver.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "oracles/float_text.h"
#include "oracles/mpfr_number.h"
#include "suites/guarded_buffer.h"
#include "suites/tanh_bwd_oracle.h"

namespace ulpgate {

const char* CaseKindName(CaseKind kind) {
  switch (kind) {
    case CaseKind::kKernel:
      return "kernel";
    case CaseKind::kModel:
      return "model";
    case CaseKind::kPeer:
      return "peer";
  }
  return "?";
}

std::vector<KernelCall> TanhBwdCallPlan(size_t count) {
  // Every length 1..33 leaves every tail of 4, 8 and 16 lanes (and calls
  // shorter than one vector), and puts a third of the inputs of a 16-lane
  // target in tails, so that a bug confined to the tail shows on most suites;
  // the long calls run the body many times. 35 lengths and 16 offsets are
  // coprime, so every length meets every offset.
  static constexpr size_t kLengths[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                        13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                                        25, 26, 27, 28, 29, 30, 31, 32, 33, 64, 100};
  constexpr size_t kOffsets = 16;
  std::vector<KernelCall> plan;
  size_t begin = 0;
  for (size_t k = 0; begin < count; ++k) {
    const size_t length = std::min(kLengths[k % std::size(kLengths)], count - begin);
    plan.push_back({begin, length, k % kOffsets, (k * 7 + 3) % kOffsets});
    begin += length;
  }
  return plan;
}

std::string Conformance::model() const {
  for (const auto& m : matching) {
    if (m == expected_model) return m;
  }
  return matching.empty() ? std::string() : matching.front();
}

namespace {

constexpr size_t kModelCount = kTanhBwdModels.size();

struct Case {
  int variant;
  const TargetInfo* target;
  TanhBwdKernel kernel;  // nullptr for a "model" case
  int expected_model;
};

// Runs `kernel` over a chunk's inputs call by call as TanhBwdCallPlan says,
// each call's operands and output copied into buffers at the call's offsets.
void CallKernelByPlan(TanhBwdKernel kernel, const float* grad, const float* t, float* out,
                      const std::vector<KernelCall>& plan,
                      const std::string& name) {
  for (const KernelCall& call : plan) {
    GuardedBuffer g(call.count, call.operand_misalign);
    GuardedBuffer x(call.count, call.operand_misalign);
    GuardedBuffer y(call.count, call.output_misalign);
    std::copy(grad + call.begin, grad + call.begin + call.count, g.data());
    std::copy(t + call.begin, t + call.begin + call.count, x.data());
    kernel(g.data(), x.data(), y.data(), call.count);
    if (!y.GuardsIntact() || !g.GuardsIntact() || !x.GuardsIntact()) {
      throw std::logic_error(name + " wrote outside its output (a call of " +
                             std::to_string(call.count) + " inputs)");
    }
    std::copy(y.data(), y.data() + call.count, out + call.begin);
  }
}

// What one chunk of inputs contributes, per case.
struct ChunkResult {
  std::vector<ErrorStatistics> stats;
  std::vector<std::array<uint64_t, kModelCount>> model_mismatches;
  std::vector<std::array<int64_t, kModelCount>> first_mismatch;
  std::vector<uint64_t> digests;
  std::vector<ErrorMap> maps;  // per case, when RunOptions::map_operand >= 0
};


}  // namespace

std::vector<CaseResult> RunTanhBwd(const InputSet& inputs, const RunOptions& options) {
  if (inputs.columns.size() != 2) throw InputError("tanh_bwd takes 2 operands (grad t)");
  if (options.map_operand >= static_cast<int>(inputs.columns.size())) {
    throw InputError("no operand " + std::to_string(options.map_operand) + " to map errors by");
  }
  std::vector<int> variants;
  if (options.variants.empty()) {
    for (size_t v = 0; v < kTanhBwdVariants.size(); ++v) variants.push_back(static_cast<int>(v));
  } else {
    for (const auto& name : options.variants) {
      const int v = TanhBwdVariantIndex(name);
      if (v < 0) throw InputError("unknown tanh_bwd variant '" + name + "'");
      variants.push_back(v);
    }
  }
  std::vector<const TargetInfo*> targets = options.targets;
  if (targets.empty()) {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) targets.push_back(&t);
    }
  }
  std::vector<Case> cases;
  for (int v : variants) {
    for (const TargetInfo* target : targets) {
      const auto& info = kTanhBwdVariants[v];
      const auto expected =
          target->fused_negmuladd ? info.model_fused_target : info.model_unfused_target;
      const bool model = options.models_only || !target->supported;
      cases.push_back({v, target, model ? nullptr : FindTanhBwdKernel(info.name, target->bits),
                       TanhBwdModelIndex(expected)});
    }
  }

  const size_t n = inputs.size();
  const float* grad = inputs.columns[0].data();
  const float* t = inputs.columns[1].data();
  const size_t chunks = (n + kEngineChunk - 1) / kEngineChunk;
  std::vector<ChunkResult> partial(chunks);
  std::vector<CaseResult> results(cases.size());
  if (options.keep_outputs) {
    for (auto& r : results) r.outputs.resize(n);
  }

  auto run_chunk = [&](size_t c) {
    const size_t begin = c * kEngineChunk;
    const size_t count = std::min(kEngineChunk, n - begin);
    ChunkResult& out = partial[c];
    out.stats.assign(cases.size(), ErrorStatistics());
    out.model_mismatches.assign(cases.size(), {});
    out.first_mismatch.assign(cases.size(), {});
    for (auto& f : out.first_mismatch) f.fill(-1);
    out.digests.assign(cases.size(), 0);
    if (options.map_operand >= 0) out.maps.assign(cases.size(), ErrorMap());

    std::vector<std::array<float, kModelCount>> model_outputs(count);
    for (size_t i = 0; i < count; ++i) {
      model_outputs[i] = TanhBwdModels(grad[begin + i], t[begin + i]);
    }
    const std::vector<KernelCall> plan = TanhBwdCallPlan(count);
    std::vector<std::vector<float>> outputs(cases.size(), std::vector<float>(count));
    for (size_t k = 0; k < cases.size(); ++k) {
      if (cases[k].kernel != nullptr) {
        CallKernelByPlan(cases[k].kernel, grad + begin, t + begin, outputs[k].data(), plan,
                         "tanh_bwd " + std::string(kTanhBwdVariants[cases[k].variant].name) +
                             " on " + cases[k].target->name);
      } else {
        for (size_t i = 0; i < count; ++i) {
          outputs[k][i] = model_outputs[i][cases[k].expected_model];
        }
      }
      for (float& y : outputs[k]) y = CanonicalNan(y);
      out.digests[k] = Fnv1a(outputs[k].data(), count * sizeof(float));
      if (options.keep_outputs) {
        std::copy(outputs[k].begin(), outputs[k].end(), results[k].outputs.begin() + begin);
      }
    }
    // Per input: the exact value and the models once, then each distinct
    // output's error once (most cases agree bit for bit).
    std::vector<std::pair<uint32_t, UlpError>> seen;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t index = begin + i;
      const MpfrNumber exact = TanhBwdExact(grad[index], t[index]);
      const std::array<float, kModelCount>& models = model_outputs[i];
      seen.clear();
      for (size_t k = 0; k < cases.size(); ++k) {
        const float y = outputs[k][i];
        for (size_t m = 0; m < kModelCount; ++m) {
          if (!SameFloat(y, models[m])) {
            if (out.model_mismatches[k][m]++ == 0) out.first_mismatch[k][m] = index;
          }
        }
        const uint32_t bits = FloatBits(y);
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const auto& s) { return s.first == bits; });
        if (it == seen.end()) {
          seen.emplace_back(bits, MeasureUlpError(exact.get(), y));
          it = seen.end() - 1;
        }
        out.stats[k].Add(it->second, index);
        if (options.map_operand >= 0) {
          out.maps[k][BinadeBucket(inputs.columns[options.map_operand][index])].Add(it->second,
                                                                                   index);
        }
      }
    }
  };

  // Results are merged in chunk order below.
  RunUnits(
      chunks, options.threads, run_chunk,
      [&](size_t c) { return static_cast<uint64_t>(std::min(kEngineChunk, n - c * kEngineChunk)); },
      options.progress ? std::function<void(uint64_t, uint64_t)>(options.progress) : nullptr);

  for (size_t k = 0; k < cases.size(); ++k) {
    CaseResult& r = results[k];
    const Case& cs = cases[k];
    r.op = "tanh_bwd";
    r.variant = std::string(kTanhBwdVariants[cs.variant].name);
    r.target = cs.target->name;
    r.kind = cs.kernel != nullptr ? CaseKind::kKernel : CaseKind::kModel;
    r.dtype = kBinary32.name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    r.n = n;
    std::array<uint64_t, kModelCount> mismatches{};
    std::array<int64_t, kModelCount> first{};
    first.fill(-1);
    uint64_t digest = kFnv1aOffset;
    for (size_t c = 0; c < chunks; ++c) {
      r.stats.Merge(partial[c].stats[k]);
      if (options.map_operand >= 0) MergeErrorMap(r.error_map, partial[c].maps[k]);
      for (size_t m = 0; m < kModelCount; ++m) {
        mismatches[m] += partial[c].model_mismatches[k][m];
        if (first[m] < 0) first[m] = partial[c].first_mismatch[k][m];
      }
      digest = Fnv1a(&partial[c].digests[k], sizeof(uint64_t), digest);
    }
    r.output_digest = digest;
    if (options.map_operand >= 0) r.map_operand = inputs.operand_names[options.map_operand];
    r.conformance.expected_model = std::string(kTanhBwdModels[cs.expected_model].name);
    r.conformance.mismatches = mismatches[cs.expected_model];
    r.conformance.first_mismatch_index = first[cs.expected_model];
    for (size_t m = 0; m < kModelCount; ++m) {
      if (mismatches[m] == 0) r.conformance.matching.emplace_back(kTanhBwdModels[m].name);
    }
  }
  return results;
}

}  // namespace ulpgate
