#include "suites/reduction_engine.h"

#include "suites/chunk_driver.h"
#include "suites/digest.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "oracles/float_text.h"
#include "oracles/mpfr_number.h"
#include "suites/eigen_peer.h"
#include "suites/guarded_buffer.h"
#include "suites/reduction_oracle.h"

namespace ulpgate {

namespace {

// Offsets of 0..15 floats: every misalignment of a 512-bit vector.
constexpr size_t kMisalignCycle = 16;

struct Case {
  CaseKind kind;
  int variant;  // -1 for the peer
  const TargetInfo* target;  // nullptr for the peer
  int expected_model = -1;
  std::vector<int> candidates;  // indices into the run's models
};

struct ChunkResult {
  std::vector<ErrorStatistics> stats;
  std::vector<BoundFractionStatistics> bound;
  std::vector<std::vector<uint64_t>> mismatches;  // [case][candidate]
  std::vector<std::vector<int64_t>> first_mismatch;
};


}  // namespace

std::vector<float> RunReductionKernel(const ReductionOpInfo& op, std::string_view variant,
                                      const TargetInfo& target, const ReductionShape& s,
                                      const ReductionInstance& instance, size_t misalign) {
  std::vector<GuardedBuffer> in;
  for (const auto& operand : instance.operands) {
    in.emplace_back(operand.size(), misalign);
    std::copy(operand.begin(), operand.end(), in.back().data());
  }
  const size_t count = ReductionOutputCount(op.op, s);
  GuardedBuffer out(count, misalign);
  auto missing = [&]() {
    return std::invalid_argument("no " + std::string(op.name) + " kernel '" +
                                 std::string(variant) + "' for target " + target.name);
  };
  switch (op.op) {
    case ReductionOp::kLinearFwd: {
      const LinearFwdKernel k = FindLinearFwdKernel(variant, target.bits);
      if (!k) throw missing();
      k(in[0].data(), in[1].data(), in[2].data(), out.data(), s.batch, s.in, s.out);
      break;
    }
    case ReductionOp::kLinearBwdInput: {
      const LinearBwdInputKernel k = FindLinearBwdInputKernel(variant, target.bits);
      if (!k) throw missing();
      k(in[0].data(), in[1].data(), out.data(), s.batch, s.in, s.out);
      break;
    }
    case ReductionOp::kLinearBwdWeight: {
      const LinearBwdWeightKernel k = FindLinearBwdWeightKernel(variant, target.bits);
      if (!k) throw missing();
      k(in[0].data(), in[1].data(), out.data(), s.batch, s.in, s.out);
      break;
    }
    case ReductionOp::kLinearBwdBias: {
      const LinearBwdBiasKernel k = FindLinearBwdBiasKernel(variant, target.bits);
      if (!k) throw missing();
      k(in[0].data(), out.data(), s.batch, s.out);
      break;
    }
    case ReductionOp::kMseFwd: {
      const MseFwdKernel k = FindMseFwdKernel(variant, target.bits);
      if (!k) throw missing();
      out.data()[0] = k(in[0].data(), in[1].data(), s.batch);
      break;
    }
    case ReductionOp::kMseBwd: {
      const MseBwdKernel k = FindMseBwdKernel(variant, target.bits);
      if (!k) throw missing();
      k(in[0].data(), in[1].data(), instance.operands[2][0], out.data(), s.batch);
      break;
    }
  }
  if (!out.GuardsIntact()) {
    throw std::logic_error(std::string(op.name) + " " + std::string(variant) + " on " +
                           target.name + " wrote outside its output");
  }
  return std::vector<float>(out.data(), out.data() + count);
}

std::vector<float> RunEigenPeer(const ReductionShape& s, const ReductionInstance& instance) {
  std::vector<float> y(s.batch * s.out);
  EigenLinearFwd(instance.operands[0].data(), instance.operands[1].data(),
                 instance.operands[2].data(), y.data(), s.batch, s.in, s.out);
  return y;
}

ReductionRun RunReduction(const ReductionInputSet& inputs, const ReductionRunOptions& options) {
  const ReductionOpInfo& op = GetReductionOp(inputs.op);
  const bool has_peer = inputs.op == ReductionOp::kLinearFwd;
  std::vector<int> variants;
  bool peer = has_peer && options.variants.empty();
  for (const auto& name : options.variants) {
    if (has_peer && name == kEigenPeerVariant) {
      peer = true;
      continue;
    }
    const int v = ReductionVariantIndex(op, name);
    if (v < 0) throw InputError("unknown " + std::string(op.name) + " variant '" + name + "'");
    variants.push_back(v);
  }
  if (options.variants.empty()) {
    for (size_t v = 0; v < op.variants.size(); ++v) variants.push_back(static_cast<int>(v));
  }
  std::vector<const TargetInfo*> targets = options.targets;
  if (targets.empty()) {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) targets.push_back(&t);
    }
  }

  // The distinct models any case needs, each evaluated once per element.
  std::vector<ReductionModel> models;
  std::vector<std::string> model_names;
  auto intern = [&](const ReductionModel& m) {
    const std::string name = m.Name(op);
    for (size_t i = 0; i < model_names.size(); ++i) {
      if (model_names[i] == name) return static_cast<int>(i);
    }
    models.push_back(m);
    model_names.push_back(name);
    return static_cast<int>(models.size() - 1);
  };
  std::vector<Case> cases;
  auto add_case = [&](CaseKind kind, int v, const TargetInfo* target) {
    Case c{kind, v, target, -1, {}};
    const ReductionVariantInfo& variant = op.variants[v];
    c.expected_model = intern(
        ExpectedReductionModel(op, variant, target->f32_lanes, target->fused_muladd));
    if (options.all_candidate_models) {
      for (const ReductionModel& m : CandidateReductionModels(op, variant)) {
        c.candidates.push_back(intern(m));
      }
    }
    if (std::find(c.candidates.begin(), c.candidates.end(), c.expected_model) ==
        c.candidates.end()) {
      c.candidates.push_back(c.expected_model);
    }
    cases.push_back(c);
  };
  for (int v : variants) {
    for (const TargetInfo* target : targets) {
      const bool model = options.models_only || !target->supported;
      add_case(model ? CaseKind::kModel : CaseKind::kKernel, v, target);
    }
  }
  if (options.emulate_unsupported) {
    for (int v : variants) {
      for (const TargetInfo& target : CompiledTargets()) {
        const bool listed = std::find(targets.begin(), targets.end(), &target) != targets.end();
        if (!target.supported && !listed) add_case(CaseKind::kModel, v, &target);
      }
    }
  }
  if (peer) cases.push_back({CaseKind::kPeer, -1, nullptr, -1, {}});

  const size_t elements = inputs.outputs_per_instance();
  const size_t instance_count = inputs.instances.size();
  // outputs[i][c][e]: kernels and the peer run here, in the caller's thread;
  // "model" cases are filled by the oracle pass below.
  ReductionRun run;
  auto& outputs = run.outputs;
  outputs.resize(instance_count);
  for (size_t i = 0; i < instance_count; ++i) {
    outputs[i].resize(cases.size());
    for (size_t c = 0; c < cases.size(); ++c) {
      const Case& cs = cases[c];
      if (cs.kind == CaseKind::kKernel) {
        outputs[i][c] = RunReductionKernel(
            op, op.variants[cs.variant].name, *cs.target, inputs.shape, inputs.instances[i],
            (options.misalign + inputs.instances[i].index) % kMisalignCycle);
      } else if (cs.kind == CaseKind::kPeer) {
        outputs[i][c] = RunEigenPeer(inputs.shape, inputs.instances[i]);
      } else {
        outputs[i][c].assign(elements, 0.0f);
      }
    }
  }

  if (options.keep_details) {
    run.details.resize(instance_count);
    for (auto& d : run.details) {
      d.exact.resize(elements);
      d.cases.assign(cases.size(), std::vector<ElementMeasure>(elements));
    }
  }

  // Work items: (instance, a range of its elements), merged in this order.
  struct Chunk {
    size_t instance, begin, count;
  };
  // An element of a large shape costs up to a millisecond (exact sum and a
  // dozen emulated models), and every chunk carries its own statistics per
  // case: aim at about 64 chunks per instance. The size depends on the shape
  // only, never on the thread count, so merged results (the mean's rounding
  // included) do not depend on how many threads ran.
  const size_t chunk_elements = std::clamp<size_t>(elements / 64, 16, 1024);
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < instance_count; ++i) {
    for (size_t e = 0; e < elements; e += chunk_elements) {
      chunks.push_back({i, e, std::min(chunk_elements, elements - e)});
    }
  }
  std::vector<ChunkResult> partial(chunks.size());
  const uint64_t total = instance_count * elements;

  auto run_chunk = [&](size_t index) {
    const Chunk& chunk = chunks[index];
    ChunkResult& out = partial[index];
    out.stats.assign(cases.size(), ErrorStatistics());
    out.bound.assign(cases.size(), BoundFractionStatistics());
    out.mismatches.resize(cases.size());
    out.first_mismatch.resize(cases.size());
    for (size_t c = 0; c < cases.size(); ++c) {
      out.mismatches[c].assign(cases[c].candidates.size(), 0);
      out.first_mismatch[c].assign(cases[c].candidates.size(), -1);
    }
    const ReductionInstance& instance = inputs.instances[chunk.instance];
    std::vector<float> model_outputs(models.size());
    struct Seen {
      uint32_t bits;
      UlpError ulp;
      BoundFraction bound;
    };
    std::vector<Seen> seen;
    for (size_t e = chunk.begin; e < chunk.begin + chunk.count; ++e) {
      const uint64_t global = chunk.instance * elements + e;
      const ElementTerms terms = GatherElementTerms(inputs.op, inputs.shape, instance, e);
      const ElementExact exact = ReductionExact(inputs.op, terms);
      for (size_t m = 0; m < models.size(); ++m) {
        model_outputs[m] = ReductionModelOutput(op, models[m], terms);
      }
      if (options.keep_details) {
        std::string text = exact.numerator.ToHexExact();
        if (exact.denominator != 1) text += "/" + std::to_string(exact.denominator);
        run.details[chunk.instance].exact[e] = text;
      }
      seen.clear();
      for (size_t c = 0; c < cases.size(); ++c) {
        const Case& cs = cases[c];
        float& y = outputs[chunk.instance][c][e];
        if (cs.kind == CaseKind::kModel) y = model_outputs[cs.expected_model];
        const uint32_t bits = FloatBits(y);
        auto it = std::find_if(seen.begin(), seen.end(),
                               [&](const Seen& s) { return s.bits == bits; });
        if (it == seen.end()) {
          seen.push_back({bits,
                          MeasureUlpErrorOfQuotient(exact.numerator.get(), exact.denominator, y),
                          MeasureBoundFraction(exact.numerator.get(), exact.denominator, y,
                                               exact.bound)});
          it = seen.end() - 1;
        }
        out.stats[c].Add(it->ulp, global);
        out.bound[c].Add(it->bound, global);
        bool conforms = true;
        for (size_t k = 0; k < cs.candidates.size(); ++k) {
          if (!SameFloat(y, model_outputs[cs.candidates[k]])) {
            if (out.mismatches[c][k]++ == 0) out.first_mismatch[c][k] = static_cast<int64_t>(global);
            if (cs.candidates[k] == cs.expected_model) conforms = false;
          }
        }
        if (options.keep_details) {
          run.details[chunk.instance].cases[c][e] = {y, it->ulp, it->bound, conforms};
        }
      }
    }
  };

  RunUnits(
      chunks.size(), options.threads, run_chunk,
      [&](size_t c) { return static_cast<uint64_t>(chunks[c].count); },
      options.progress ? std::function<void(uint64_t, uint64_t)>(options.progress) : nullptr);

  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& cs = cases[c];
    ReductionCaseResult r;
    r.op = std::string(op.name);
    r.kind = cs.kind;
    if (cs.kind == CaseKind::kPeer) {
      r.variant = kEigenPeerVariant;
      r.target = kEigenPeerTarget;
    } else {
      r.variant = std::string(op.variants[cs.variant].name);
      r.target = cs.target->name;
    }
    r.dtype = kBinary32.name;
    r.suite = inputs.source;
    r.seed = inputs.seed;
    r.shape = inputs.shape;
    r.instances = instance_count;
    r.n = total;
    std::vector<uint64_t> mismatches(cs.candidates.size(), 0);
    std::vector<int64_t> first(cs.candidates.size(), -1);
    for (size_t k = 0; k < partial.size(); ++k) {
      r.stats.Merge(partial[k].stats[c]);
      r.bound.Merge(partial[k].bound[c]);
      for (size_t m = 0; m < cs.candidates.size(); ++m) {
        mismatches[m] += partial[k].mismatches[c][m];
        if (first[m] < 0) first[m] = partial[k].first_mismatch[c][m];
      }
    }
    uint64_t digest = kFnv1aOffset;
    for (size_t i = 0; i < instance_count; ++i) {
      for (float& y : outputs[i][c]) y = CanonicalNan(y);
      const uint64_t h = Fnv1a(outputs[i][c].data(), outputs[i][c].size() * sizeof(float));
      digest = Fnv1a(&h, sizeof h, digest);
    }
    r.output_digest = digest;
    if (cs.kind != CaseKind::kPeer) {
      r.conformance.expected_model = model_names[cs.expected_model];
      for (size_t m = 0; m < cs.candidates.size(); ++m) {
        if (cs.candidates[m] == cs.expected_model) {
          r.conformance.mismatches = mismatches[m];
          r.conformance.first_mismatch_index = first[m];
        }
        if (mismatches[m] == 0) r.conformance.matching.push_back(model_names[cs.candidates[m]]);
      }
    }
    run.cases.push_back(std::move(r));
  }
  return run;
}

}  // namespace ulpgate
