#include "suites/engine.h"
#include "suites/digest.h"
#include "suites/chunk_driver.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "oracles/format.h"
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

// What produces one case's outputs over a chunk: its kernel called by the
// plan, or nullptr for a "model" case.
using ChunkKernel = std::function<void(const float* grad, const float* t, float* out,
                                       const std::vector<KernelCall>& plan)>;

struct Case {
  std::string variant;
  const TargetInfo* target;
  ChunkKernel kernel;  // empty for a "model" case
  std::string expected_model;
  size_t expected_index;  // in the format's model list
};

void CheckGuards(bool intact, const std::string& name, const KernelCall& call) {
  if (!intact) {
    throw std::logic_error(name + " wrote outside its output (a call of " +
                           std::to_string(call.count) + " inputs)");
  }
}

// Runs a binary32 kernel over a chunk's inputs call by call as TanhBwdCallPlan
// says, each call's operands and output copied into buffers at the call's
// offsets.
ChunkKernel Binary32Kernel(TanhBwdKernel kernel, std::string name) {
  return [kernel, name](const float* grad, const float* t, float* out,
                        const std::vector<KernelCall>& plan) {
    for (const KernelCall& call : plan) {
      GuardedBuffer g(call.count, call.operand_misalign);
      GuardedBuffer x(call.count, call.operand_misalign);
      GuardedBuffer y(call.count, call.output_misalign);
      std::copy(grad + call.begin, grad + call.begin + call.count, g.data());
      std::copy(t + call.begin, t + call.begin + call.count, x.data());
      kernel(g.data(), x.data(), y.data(), call.count);
      CheckGuards(y.GuardsIntact() && g.GuardsIntact() && x.GuardsIntact(), name, call);
      std::copy(y.data(), y.data() + call.count, out + call.begin);
    }
  };
}

// The same for a 16-bit kernel: operands encoded in the format (a NaN as its
// sign's quiet NaN), outputs decoded.
ChunkKernel NarrowKernel(TanhBwdNarrowKernel kernel, const FloatFormat& format, std::string name) {
  return [kernel, &format, name](const float* grad, const float* t, float* out,
                                 const std::vector<KernelCall>& plan) {
    for (const KernelCall& call : plan) {
      BasicGuardedBuffer<uint16_t> g(call.count, call.operand_misalign);
      BasicGuardedBuffer<uint16_t> x(call.count, call.operand_misalign);
      BasicGuardedBuffer<uint16_t> y(call.count, call.output_misalign);
      for (size_t i = 0; i < call.count; ++i) {
        g.data()[i] = static_cast<uint16_t>(EncodeBits(format, grad[call.begin + i]));
        x.data()[i] = static_cast<uint16_t>(EncodeBits(format, t[call.begin + i]));
      }
      kernel(g.data(), x.data(), y.data(), call.count);
      CheckGuards(y.GuardsIntact() && g.GuardsIntact() && x.GuardsIntact(), name, call);
      for (size_t i = 0; i < call.count; ++i) {
        out[call.begin + i] = static_cast<float>(DecodeBits(format, y.data()[i]));
      }
    }
  };
}

// What one chunk of inputs contributes, per case.
struct ChunkResult {
  std::vector<ErrorStatistics> stats;
  std::vector<std::vector<uint64_t>> model_mismatches;  // [case][model]
  std::vector<std::vector<int64_t>> first_mismatch;     // [case][model]
  std::vector<uint64_t> digests;
  std::vector<ErrorMap> maps;  // per case, when RunOptions::map_operand >= 0
};

bool IsBinary32(const FloatFormat& format) { return std::string_view(format.name) == "f32"; }

}  // namespace

std::vector<std::string> TanhBwdVariantNames(const FloatFormat& format) {
  std::vector<std::string> names;
  if (IsBinary32(format)) {
    for (const auto& v : kTanhBwdVariants) names.emplace_back(v.name);
  } else {
    TanhBwdNarrowModelNames(format);  // throws for a format without variants
    for (const auto& v : kTanhBwdNarrowVariants) names.emplace_back(v.name);
  }
  return names;
}

std::vector<std::string> TanhBwdModelNames(const FloatFormat& format) {
  if (!IsBinary32(format)) return TanhBwdNarrowModelNames(format);
  std::vector<std::string> names;
  for (const auto& m : kTanhBwdModels) names.emplace_back(m.name);
  return names;
}

std::vector<float> TanhBwdModelOutputs(const FloatFormat& format, float grad, float t) {
  if (IsBinary32(format)) {
    const auto m = TanhBwdModels(grad, t);
    return {m.begin(), m.end()};
  }
  return TanhBwdNarrowModels(format, static_cast<uint16_t>(EncodeBits(format, grad)),
                             static_cast<uint16_t>(EncodeBits(format, t)));
}

std::string ExpectedTanhBwdModel(const FloatFormat& format, std::string_view variant,
                                 const TargetInfo& target) {
  if (!IsBinary32(format)) return ExpectedNarrowModel(format, variant, target);
  const int v = TanhBwdVariantIndex(variant);
  if (v < 0) throw InputError("unknown tanh_bwd variant '" + std::string(variant) + "'");
  const auto& info = kTanhBwdVariants[v];
  return std::string(target.fused_negmuladd ? info.model_fused_target : info.model_unfused_target);
}

std::vector<CaseResult> RunTanhBwd(const InputSet& inputs, const RunOptions& options) {
  if (inputs.columns.size() != 2) throw InputError("tanh_bwd takes 2 operands (grad t)");
  if (options.map_operand >= static_cast<int>(inputs.columns.size())) {
    throw InputError("no operand " + std::to_string(options.map_operand) + " to map errors by");
  }
  const FloatFormat& format = *options.format;
  const bool binary32 = IsBinary32(format);
  if (!binary32 && format.bits != 16) {
    throw InputError(std::string("tanh_bwd has no kernels in ") + format.name + " (f32, bf16, f16)");
  }
  // The inputs must be values of the format (an input file's may not be).
  for (size_t k = 0; k < inputs.columns.size(); ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const float v = inputs.columns[k][i];
      if (!IsRepresentable(format, v)) {
        throw InputError(fmt::format("input #{}: {} = {} is not a {} value (rounded: {})", i,
                                     inputs.operand_names[k], HexFloat(v), format.name,
                                     HexFloat(static_cast<float>(RoundToFormat(format, v)))));
      }
    }
  }
  const std::vector<std::string> all_variants = TanhBwdVariantNames(format);
  const std::vector<std::string> model_names = TanhBwdModelNames(format);
  std::vector<std::string> variants;
  if (options.variants.empty()) {
    variants = all_variants;
  } else {
    for (const auto& name : options.variants) {
      if (std::find(all_variants.begin(), all_variants.end(), name) == all_variants.end()) {
        std::string known;
        for (const auto& v : all_variants) known += (known.empty() ? "" : ", ") + v;
        throw InputError("unknown tanh_bwd variant '" + name + "' in " + format.name + " (" +
                         known + ")");
      }
      variants.push_back(name);
    }
  }
  std::vector<const TargetInfo*> targets = options.targets;
  if (targets.empty()) {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) targets.push_back(&t);
    }
  }
  std::vector<Case> cases;
  for (const std::string& v : variants) {
    for (const TargetInfo* target : targets) {
      Case c{v, target, nullptr, ExpectedTanhBwdModel(format, v, *target), 0};
      c.expected_index = static_cast<size_t>(
          std::find(model_names.begin(), model_names.end(), c.expected_model) -
          model_names.begin());
      if (!options.models_only && target->supported) {
        const std::string name =
            "tanh_bwd " + v + " (" + format.name + ") on " + target->name;
        c.kernel = binary32 ? Binary32Kernel(FindTanhBwdKernel(v, target->bits), name)
                            : NarrowKernel(FindTanhBwdNarrowKernel(format.name, v, target->bits),
                                           format, name);
      }
      cases.push_back(std::move(c));
    }
  }
  const size_t model_count = model_names.size();

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
    out.stats.assign(cases.size(), ErrorStatistics(format));
    out.model_mismatches.assign(cases.size(), std::vector<uint64_t>(model_count, 0));
    out.first_mismatch.assign(cases.size(), std::vector<int64_t>(model_count, -1));
    out.digests.assign(cases.size(), 0);
    if (options.map_operand >= 0) out.maps.assign(cases.size(), ErrorMap());

    std::vector<std::vector<float>> model_outputs(count);
    for (size_t i = 0; i < count; ++i) {
      model_outputs[i] = TanhBwdModelOutputs(format, grad[begin + i], t[begin + i]);
    }
    const std::vector<KernelCall> plan = TanhBwdCallPlan(count);
    std::vector<std::vector<float>> outputs(cases.size(), std::vector<float>(count));
    for (size_t k = 0; k < cases.size(); ++k) {
      if (cases[k].kernel) {
        cases[k].kernel(grad + begin, t + begin, outputs[k].data(), plan);
      } else {
        for (size_t i = 0; i < count; ++i) {
          outputs[k][i] = model_outputs[i][cases[k].expected_index];
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
      const std::vector<float>& models = model_outputs[i];
      seen.clear();
      for (size_t k = 0; k < cases.size(); ++k) {
        const float y = outputs[k][i];
        for (size_t m = 0; m < model_count; ++m) {
          if (!SameFloat(y, models[m])) {
            if (out.model_mismatches[k][m]++ == 0) out.first_mismatch[k][m] = index;
          }
        }
        const uint32_t bits = FloatBits(y);
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const auto& s) { return s.first == bits; });
        if (it == seen.end()) {
          seen.emplace_back(bits, MeasureUlpError(exact.get(), y, format));
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
    r.variant = cs.variant;
    r.target = cs.target->name;
    r.kind = cs.kernel ? CaseKind::kKernel : CaseKind::kModel;
    r.dtype = format.name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    r.n = n;
    r.stats = ErrorStatistics(format);
    std::vector<uint64_t> mismatches(model_count, 0);
    std::vector<int64_t> first(model_count, -1);
    uint64_t digest = kFnv1aOffset;
    for (size_t c = 0; c < chunks; ++c) {
      r.stats.Merge(partial[c].stats[k]);
      if (options.map_operand >= 0) MergeErrorMap(r.error_map, partial[c].maps[k]);
      for (size_t m = 0; m < model_count; ++m) {
        mismatches[m] += partial[c].model_mismatches[k][m];
        if (first[m] < 0) first[m] = partial[c].first_mismatch[k][m];
      }
      digest = Fnv1a(&partial[c].digests[k], sizeof(uint64_t), digest);
    }
    r.output_digest = digest;
    if (options.map_operand >= 0) r.map_operand = inputs.operand_names[options.map_operand];
    r.conformance.expected_model = cs.expected_model;
    r.conformance.mismatches = mismatches[cs.expected_index];
    r.conformance.first_mismatch_index = first[cs.expected_index];
    for (size_t m = 0; m < model_count; ++m) {
      if (mismatches[m] == 0) r.conformance.matching.push_back(model_names[m]);
    }
  }
  return results;
}

}  // namespace ulpgate
