#include "suites/investigate/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "suites/investigate/check_models.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/reduction_oracle.h"
#include "oracles/format.h"
#include "kernels/reductions/reduction_spec.h"
#include "suites/engine/reductions/row_statistics.h"
#include "suites/engine/reductions/sum_orders.h"
#include "kernels/reductions/row_sequences.h"
#include "suites/investigate/model_structure.h"
#include "suites/reports/number_text.h"
#include "suites/reports/replay.h"
#include "suites/reports/report.h"
#include "suites/inputs/reduction_problem.h"

namespace ulpgate {

namespace {

uint64_t Encoding(const FloatFormat& format, float v) {
  // A NaN keeps its payload: two NaNs of different bits differ (docs/design.md
  // "Numerics": encodings are compared, not values).
  return IsBinary32(format) ? FloatBits(v) : EncodeBits(format, v);
}

bool Subnormal(const FloatFormat& format, float v) {
  return v != 0 && std::isfinite(v) && std::fabs(static_cast<double>(v)) < std::ldexp(1.0, format.emin);
}

// Flush to zero explains input i: one side is zero where an input or the
// other side's output is subnormal.
bool FlushedToZero(const CompareRequest& r, uint64_t i) {
  const float a = r.a.outputs[i], b = r.b.outputs[i];
  if ((a == 0) == (b == 0)) return false;
  const float other = a == 0 ? b : a;
  if (Subnormal(*r.format, other)) return true;
  for (const auto& column : r.inputs.columns) {
    if (Subnormal(*r.format, column[i])) return true;
  }
  return false;
}

// Rank of a parting: the nearest explanation first (one step apart), then
// the farther ones.
int Rank(const std::string& cause) {
  if (cause == kCauseFusion) return 0;
  if (cause == kCauseRoundingFormat) return 1;
  if (cause == kCauseFormula) return 2;
  if (cause.empty()) return 3;
  return 4;
}

CheckRequest SideRequest(const CompareRequest& r, const CompareSide& side) {
  CheckRequest request = MakeCheckRequest(*r.op, *r.format, r.inputs, side.outputs, side.label, r.models);
  if (!r.models_path.empty()) {
    request.models = CheckModels(*r.op, r.models, r.models_path, *r.format, &request.user_models,
                                 &request.builtin_models);
  }
  request.threads = r.threads;
  request.examples = 0;
  return request;
}

// The side's check on the inputs at `indices` only.
CheckResult SubsetCheck(const CheckRequest& all, const std::vector<uint64_t>& indices) {
  CheckRequest sub;
  sub.op = all.op;
  sub.format = all.format;
  sub.label = all.label;
  sub.models = all.models;
  sub.user_models = all.user_models;
  sub.builtin_models = all.builtin_models;
  sub.threads = all.threads;
  sub.examples = 0;
  sub.inputs.operand_names = all.inputs.operand_names;
  sub.inputs.source = all.inputs.source;
  sub.inputs.seed = all.inputs.seed;
  sub.inputs.columns.resize(all.inputs.columns.size());
  for (const uint64_t i : indices) {
    for (size_t k = 0; k < all.inputs.columns.size(); ++k) sub.inputs.columns[k].push_back(all.inputs.columns[k][i]);
    sub.outputs.push_back(all.outputs[i]);
  }
  return RunCheck(sub);
}

std::vector<std::string> Followed(const CheckResult& r) {
  std::vector<std::string> names;
  for (const ModelComparison& m : r.models) {
    if (m.mismatches == 0) names.push_back(m.name);
  }
  return names;
}

std::string Join(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

// A histogram bin as the JSON names it: "<=4", ">65536", "special".
std::string BinLabel(size_t k) {
  return k < std::size(kCompareBins)    ? fmt::format("<={}", kCompareBins[k])
         : k == std::size(kCompareBins) ? fmt::format(">{}", kCompareBins[k - 1])
                                        : std::string("special");
}

// Counts, distances and the histogram of two sides' outputs into *out; every
// differing output into *all, nearest first (then by index), as check orders a
// model's mismatches. Returns the differing indices in order.
std::vector<uint64_t> DiffOutputs(const FloatFormat& format, const std::vector<float>& a_outputs,
                                  const std::vector<float>& b_outputs, CompareResult* out,
                                  std::vector<CompareExample>* all) {
  const size_t n = a_outputs.size();
  out->n = n;
  constexpr size_t kBins = std::size(kCompareBins) + 2;
  out->histogram.assign(kBins, 0);
  std::vector<uint64_t> differing;
  for (uint64_t i = 0; i < n; ++i) {
    const float a = a_outputs[i], b = b_outputs[i];
    if (Encoding(format, a) == Encoding(format, b)) continue;
    differing.push_back(i);
    ++out->differing;
    const double apart = UlpsApart(format, a, b);
    if (a == 0 && b == 0) ++out->signed_zero;
    if (std::isnan(a) && std::isnan(b)) ++out->nan_payload;
    size_t bin = kBins - 1;
    if (std::isinf(apart)) {
      ++out->special;
    } else {
      bin = std::size(kCompareBins);
      for (size_t k = 0; k < std::size(kCompareBins); ++k) {
        if (apart <= kCompareBins[k]) {
          bin = k;
          break;
        }
      }
      if (out->max_index < 0 || apart > out->max_apart) {
        out->max_apart = apart;
        out->max_index = static_cast<int64_t>(i);
      }
    }
    ++out->histogram[bin];
    all->push_back({i, a, b, apart, ""});
  }
  std::stable_sort(all->begin(), all->end(), [](const CompareExample& x, const CompareExample& y) {
    return x.apart_ulp < y.apart_ulp;
  });
  return differing;
}

// The program of a model a cause names: among the check's models, or the
// op's free-function forms.
const ModelProgram* ProgramNamed(const std::string& name, const std::vector<ModelProgram>& models,
                                 const std::vector<ModelProgram>& free) {
  for (const auto* list : {&models, &free}) {
    for (const ModelProgram& m : *list) {
      if (m.name == name && !m.text.empty()) return &m;
    }
  }
  return nullptr;
}

// Where both models of a structural cause call free functions: the
// differing inputs at which no choice of the functions' values serves both
// sides (a function of the same argument given one binary32 value), which
// the structure alone does not explain. The first such input into *example.
std::vector<uint64_t> NeedDifferentFunctions(const CompareRequest& r, const ModelProgram& pa,
                                             const ModelProgram& pb, const std::vector<uint64_t>& differing,
                                             std::string* example, uint64_t* compared) {
  constexpr size_t kChoices = 81;
  std::vector<uint64_t> apart;
  *compared = 0;
  for (const uint64_t i : differing) {
    std::vector<double> ops;
    for (const auto& column : r.inputs.columns) ops.push_back(column[i]);
    const auto va = pa.FunctionValuesToward(ops.data(), r.a.outputs[i], kChoices);
    const auto vb = pb.FunctionValuesToward(ops.data(), r.b.outputs[i], kChoices);
    if (va.empty() || vb.empty()) continue;  // not followed here: no evidence either way
    // Whether the two forms call a function at the same argument here.
    bool common = false;
    for (const auto& f : va.front()) {
      for (const auto& g : vb.front()) common = common || (f.function == g.function && f.argument == g.argument);
    }
    if (!common) continue;
    ++*compared;
    bool shared = false;
    for (size_t x = 0; x < va.size() && !shared; ++x) {
      for (size_t y = 0; y < vb.size() && !shared; ++y) {
        bool agree = true;
        for (const auto& f : va[x]) {
          for (const auto& g : vb[y]) {
            if (f.function == g.function && f.argument == g.argument && f.binary32 != g.binary32) agree = false;
          }
        }
        shared = agree;
      }
    }
    if (shared) continue;
    apart.push_back(i);
    if (apart.size() == 1 && example != nullptr) {
      const auto& f = va.front().front();
      std::string operands;
      for (size_t k = 0; k < ops.size(); ++k) operands += fmt::format("{}{}", k ? ", " : "", HexFloat(static_cast<float>(ops[k])));
      *example = fmt::format("at input #{} ({}), {} needs {}({}) = {} and {} other values", i, operands, pa.name,
                             ModelFunctionName(f.function), HexFloat(static_cast<float>(f.argument)),
                             HexFloat(static_cast<float>(f.binary32)), pb.name);
    }
  }
  return apart;
}

}  // namespace

CompareCause CauseFromModels(const ElementwiseOpInfo& op, const FloatFormat& format, const CheckRequest& models,
                             const std::vector<std::string>& a, const std::vector<std::string>& b,
                             double max_apart) {
  auto structure = [&](const std::string& name) {
    for (size_t m = 0; m < models.models.size(); ++m) {
      if (models.models[m].name != name) continue;
      const int builtin = m < models.builtin_models.size() ? models.builtin_models[m] : -1;
      return StructureOf(op, format, models.models[m], builtin);
    }
    ModelStructure none;
    none.name = name;
    none.error = "no model " + name;
    return none;
  };
  CompareCause cause;
  if (!a.empty() && !b.empty()) {
    int best = 99;
    size_t best_apart = 0;
    for (const std::string& ma : a) {
      for (const std::string& mb : b) {
        const ModelStructure sa = structure(ma), sb = structure(mb);
        const ModelParting p = FirstParting(sa, sb);
        const int rank = Rank(p.cause);
        // The nearest pair in structure first, then the nearest cause.
        if (best != 99 && (p.nodes_apart > best_apart || (p.nodes_apart == best_apart && rank >= best))) continue;
        best = rank;
        best_apart = p.nodes_apart;
        cause.model_a = ma;
        cause.model_b = mb;
        if (p.cause.empty()) {
          // The same structure, different outputs: what the structure does
          // not say, the code of a function it calls.
          const bool calls = sa.out != nullptr && CallsFunction(*sa.out);
          cause.cause = calls ? kCauseFunction : kCauseUnknown;
          cause.detail = calls ? fmt::format("{} and {} have the same operations and roundings; the functions "
                                             "they call come from different code", ma, mb)
                               : fmt::format("{} and {} have the same operations and roundings", ma, mb);
        } else {
          cause.cause = p.cause;
          cause.detail = p.detail;
        }
      }
    }
    return cause;
  }
  // One side or neither follows a model.
  const std::vector<std::string>& followed = a.empty() ? b : a;
  bool calls = false;
  for (const std::string& m : followed) {
    const ModelStructure s = structure(m);
    calls = calls || (s.out != nullptr && CallsFunction(*s.out));
  }
  if (max_apart <= kFunctionImplementationUlps && (followed.empty() || calls)) {
    cause.cause = kCauseFunction;
    cause.detail = followed.empty()
                       ? fmt::format("neither side follows a model, and they are at most {} ULP apart",
                                     FormatUlp(max_apart))
                       : fmt::format("{} follows {}, which calls a function; the other follows no model, at most "
                                     "{} ULP apart",
                                     a.empty() ? "b" : "a", Join(followed), FormatUlp(max_apart));
    (a.empty() ? cause.model_b : cause.model_a) = followed.empty() ? "" : followed.front();
    return cause;
  }
  cause.cause = kCauseUnknown;
  cause.detail = fmt::format("a follows {}, b follows {}; up to {} ULP apart", Join(a), Join(b),
                             std::isinf(max_apart) ? std::string("inf") : FormatUlp(max_apart));
  return cause;
}

CompareResult RunCompare(const CompareRequest& r) {
  if (r.op == nullptr) throw InputError("compare: no op given");
  const size_t n = r.inputs.size();
  if (n == 0) throw InputError("compare: no inputs");
  for (const CompareSide* side : {&r.a, &r.b}) {
    if (side->outputs.size() != n) {
      throw InputError(fmt::format("{}: {} outputs for {} inputs: the shapes differ", side->label,
                                   side->outputs.size(), n));
    }
  }
  CompareResult out;
  std::vector<CompareExample> all;
  const std::vector<uint64_t> differing = DiffOutputs(*r.format, r.a.outputs, r.b.outputs, &out, &all);
  bool every_flushed = true;
  for (const uint64_t i : differing) every_flushed = every_flushed && FlushedToZero(r, i);
  const std::vector<std::string> names = r.inputs.operand_names.empty() ? r.op->operand_names()
                                                                        : r.inputs.operand_names;
  auto replay = [&](uint64_t i) {
    std::vector<float> x;
    for (const auto& column : r.inputs.columns) x.push_back(column[i]);
    if (r.a.replayable && r.b.replayable) {
      return CompareInputCommand(std::string(r.op->name), r.format->name, r.a.spec, r.b.spec, names, x,
                                 r.replay_arguments);
    }
    // Saved outputs cannot be computed again: the models at the input.
    return ExplainModelsCommand(std::string(r.op->name), names, x);
  };
  for (size_t k = 0; k < all.size() && k < r.examples; ++k) {
    out.nearest.push_back(all[k]);
    out.nearest.back().replay = replay(all[k].index);
  }
  if (out.max_index >= 0) {
    const uint64_t i = static_cast<uint64_t>(out.max_index);
    out.worst.push_back({i, r.a.outputs[i], r.b.outputs[i], out.max_apart, replay(i)});
  }

  // Each side as check measures it, over every input and over the differing ones.
  const CheckRequest request_a = SideRequest(r, r.a);
  const CheckRequest request_b = SideRequest(r, r.b);
  out.a.all = RunCheck(request_a);
  out.b.all = RunCheck(request_b);
  out.a.matching = Followed(out.a.all);
  out.b.matching = Followed(out.b.all);
  if (!differing.empty()) {
    out.a.matching_differing = Followed(SubsetCheck(request_a, differing));
    out.b.matching_differing = Followed(SubsetCheck(request_b, differing));
  }

  CompareCause& cause = out.cause;
  if (out.differing == 0) {
    cause.cause = kCauseNone;
    cause.detail = "the outputs are the same in every bit";
    return out;
  }
  if (every_flushed) {
    cause.cause = kCauseFlushToZero;
    cause.basis = "outputs";
    cause.detail = fmt::format("every one of the {} differences is a zero on one side where an input or the "
                               "other side's output is subnormal",
                               out.differing);
    return out;
  }
  if (out.nan_payload == out.differing) {
    cause.cause = kCauseUnknown;
    cause.basis = "outputs";
    cause.detail = fmt::format("both sides give NaN wherever they differ ({} outputs): only the NaNs' payloads "
                               "or signs differ, which no model says",
                               out.differing);
    return out;
  }
  const bool on_all = !out.a.matching.empty() && !out.b.matching.empty();
  const double max_apart = out.special > 0 ? std::numeric_limits<double>::infinity() : out.max_apart;
  cause = CauseFromModels(*r.op, *r.format, request_a, on_all ? out.a.matching : out.a.matching_differing,
                          on_all ? out.b.matching : out.b.matching_differing, max_apart);
  cause.basis = on_all ? "all inputs" : "differing inputs";
  // Neither side's models say it: the op's sequences again, with their
  // functions free. A side that follows one computes its arithmetic with
  // some exp, erf or tanh; the first place two such forms part is the
  // cause, and where both follow the same form, their functions' values.
  // The user's models that call functions join them (one side may follow
  // one of those, the other a sequence of the op's).
  std::vector<ModelProgram> free = FreeFunctionModels(*r.op, *r.format);
  if (!free.empty()) {
    for (const ModelProgram& m : request_a.models) {
      if (m.function_calls > 0) free.push_back(m);
    }
  }
  if (cause.cause == kCauseUnknown && !free.empty()) {
    auto freed = [&](CheckRequest q) {
      q.models = free;
      q.builtin_models.assign(free.size(), -1);
      q.user_models.assign(free.size(), false);
      return q;
    };
    const CheckRequest free_a = freed(request_a), free_b = freed(request_b);
    out.a.matching_free = Followed(RunCheck(free_a));
    out.b.matching_free = Followed(RunCheck(free_b));
    const bool free_on_all = !out.a.matching_free.empty() && !out.b.matching_free.empty();
    if (!free_on_all) {
      out.a.matching_free = Followed(SubsetCheck(free_a, differing));
      out.b.matching_free = Followed(SubsetCheck(free_b, differing));
    }
    if (!out.a.matching_free.empty() && !out.b.matching_free.empty()) {
      cause = CauseFromModels(*r.op, *r.format, free_a, out.a.matching_free, out.b.matching_free, max_apart);
      cause.basis = free_on_all ? "all inputs, functions free" : "differing inputs, functions free";
    } else {
      cause.detail += fmt::format("; with their functions free (within {} ULP), a follows {}, b follows {}",
                                  kModelFunctionUlps, Join(out.a.matching_free), Join(out.b.matching_free));
    }
  }
  // A structural cause between two forms that call free functions: does it
  // explain every difference with the same functions on both sides?
  const ModelProgram* pa = ProgramNamed(cause.model_a, request_a.models, free);
  const ModelProgram* pb = ProgramNamed(cause.model_b, request_a.models, free);
  if (pa != nullptr) cause.expression_a = pa->text;
  if (pb != nullptr) cause.expression_b = pb->text;
  if (cause.cause == kCauseFusion || cause.cause == kCauseRoundingFormat || cause.cause == kCauseFormula) {
    if (pa != nullptr && pb != nullptr && pa->function_calls + pa->implemented_calls > 0 &&
        pb->function_calls + pb->implemented_calls > 0) {
      std::string example;
      uint64_t compared = 0;
      cause.functions_apart = NeedDifferentFunctions(r, *pa, *pb, differing, &example, &compared);
      cause.functions_compared = compared;
      const uint64_t apart = cause.functions_apart.size();
      if (apart > 0) {
        cause.cause += std::string(kCauseJoin) + kCauseFunction;
        cause.detail += fmt::format("; and on {} of the {} differing inputs no one value of each function serves "
                                    "both sides ({})",
                                    apart, differing.size(), example);
      } else if (compared > 0) {
        cause.detail += fmt::format("; the same function values serve both sides on the {} differing inputs where "
                                    "both call a function at the same argument",
                                    compared);
      } else {
        cause.detail += "; the two forms call their functions at different arguments, so whether their "
                        "implementations also differ is not told";
      }
    }
  }
  return out;
}

nlohmann::ordered_json CompareJson(const CompareRequest& r, const CompareResult& result) {
  const FloatFormat& format = *r.format;
  auto value = [&](float v) {
    nlohmann::ordered_json j;
    j["value"] = HexFloat(v);
    j["bits"] = BitsText(format, Encoding(format, v));
    return j;
  };
  auto ulps = [](double u) {
    return std::isinf(u) ? nlohmann::ordered_json("inf") : nlohmann::ordered_json(u);
  };
  auto example = [&](const CompareExample& e) {
    nlohmann::ordered_json j = InputJson(r.inputs, e.index);
    j["a"] = value(e.a);
    j["b"] = value(e.b);
    j["apart_ulp"] = ulps(e.apart_ulp);
    j["replay"] = e.replay;
    return j;
  };
  auto side = [&](const CompareSide& s, const CompareSideResult& sr) {
    nlohmann::ordered_json j;
    j["label"] = s.label;
    j["door"] = s.door;
    j["spec"] = s.spec;
    const ErrorStatistics& stats = sr.all.result.stats;
    j["max_ulp_error"] = stats.max_ulp();
    j["models_all_inputs"] = sr.matching;
    j["models_differing_inputs"] = sr.matching_differing;
    j["models_functions_free"] = sr.matching_free;
    nlohmann::ordered_json models = nlohmann::ordered_json::array();
    for (const ModelComparison& m : sr.all.models) {
      models.push_back({{"name", m.name}, {"expression", m.expression}, {"mismatches", m.mismatches}});
    }
    j["models"] = models;
    return j;
  };
  nlohmann::ordered_json j;
  j["op"] = r.op->name;
  j["dtype"] = format.name;
  j["inputs"] = r.inputs.source;
  j["seed"] = r.inputs.seed;
  j["n"] = result.n;
  j["a"] = side(r.a, result.a);
  j["b"] = side(r.b, result.b);
  j["differing"] = result.differing;
  j["special"] = result.special;
  j["signed_zero"] = result.signed_zero;
  j["max_apart_ulp"] = result.max_apart;
  nlohmann::ordered_json bins = nlohmann::ordered_json::array();
  for (size_t k = 0; k < result.histogram.size(); ++k) {
    bins.push_back({{"bin", BinLabel(k)}, {"count", result.histogram[k]}});
  }
  j["apart_histogram"] = bins;
  j["cause"] = {{"cause", result.cause.cause},
                {"basis", result.cause.basis},
                {"model_a", result.cause.model_a},
                {"model_b", result.cause.model_b},
                {"detail", result.cause.detail}};
  // The models' statements and what the functions' values showed, for a
  // recheck apart (tools/python/recheck_compare.py).
  auto expression = [](const std::string& e) { return e.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(e); };
  j["cause"]["expression_a"] = expression(result.cause.expression_a);
  j["cause"]["expression_b"] = expression(result.cause.expression_b);
  j["cause"]["function_ulps"] = kModelFunctionUlps;
  j["cause"]["functions_compared"] = result.cause.functions_compared;
  j["cause"]["functions_apart_inputs"] = result.cause.functions_apart;
  nlohmann::ordered_json nearest = nlohmann::ordered_json::array();
  for (const CompareExample& e : result.nearest) nearest.push_back(example(e));
  j["nearest"] = nearest;
  nlohmann::ordered_json worst = nlohmann::ordered_json::array();
  for (const CompareExample& e : result.worst) worst.push_back(example(e));
  j["worst"] = worst;
  // Every input and both sides' outputs as encodings, for a recheck that
  // shares no code with ulpgate (tools/python/recheck_compare.py); left out
  // past kCompareValuesLimit outputs, where the report would outgrow its use.
  if (result.n <= kCompareValuesLimit) {
    nlohmann::ordered_json values;
    for (size_t k = 0; k < r.inputs.columns.size(); ++k) {
      std::vector<uint64_t> bits;
      for (const float v : r.inputs.columns[k]) bits.push_back(Encoding(format, v));
      values[r.inputs.operand_names.empty() ? r.op->operand_names()[k] : r.inputs.operand_names[k]] = bits;
    }
    for (const auto& [name, s] : {std::pair<const char*, const CompareSide*>{"a", &r.a}, {"b", &r.b}}) {
      std::vector<uint64_t> bits;
      for (const float v : s->outputs) bits.push_back(Encoding(format, v));
      values[name] = bits;
    }
    j["values"] = values;
  } else {
    j["values"] = nullptr;
  }
  return j;
}

namespace {

// The summation order a reduction model stands for: the sequential schedules
// (fused or not) add in index order, the lane-parallel one per lane count.
std::string OrderOf(const ReductionModel& m) {
  switch (m.schedule) {
    case ReductionSchedule::kSequentialFused:
    case ReductionSchedule::kSequentialUnfused:
      return "sequential (index order)";
    case ReductionSchedule::kLaneParallel:
      return "lane-parallel over " + std::to_string(m.lanes) + " lanes, then a halving tree";
    case ReductionSchedule::kPairwise:
      return "pairwise (a cascade)";
    case ReductionSchedule::kElementwise:
      return "none (elementwise)";
  }
  return "?";
}

// The model of that name among every variant's candidates.
std::optional<ReductionModel> ReductionModelNamed(const ReductionOpInfo& op, const std::string& name) {
  for (const ReductionVariantInfo& v : op.variants) {
    for (const ReductionModel& m : CandidateReductionModels(op, v)) {
      if (m.Name(op) == name) return m;
    }
  }
  return std::nullopt;
}

bool Fused(const ReductionModel& m) {
  return m.schedule != ReductionSchedule::kSequentialUnfused && m.schedule != ReductionSchedule::kPairwise && m.fused;
}

}  // namespace

CompareCause CauseFromReductionModels(const ReductionOpInfo& op, const std::vector<std::string>& a,
                                      const std::vector<std::string>& b) {
  CompareCause cause;
  if (a.empty() || b.empty()) {
    cause.cause = kCauseUnknown;
    cause.detail = fmt::format("a follows {}, b follows {} of the schedules' models", Join(a), Join(b));
    return cause;
  }
  int best = 99;
  for (const std::string& na : a) {
    for (const std::string& nb : b) {
      const auto ma = ReductionModelNamed(op, na), mb = ReductionModelNamed(op, nb);
      if (!ma || !mb) continue;
      // The outer structure first: the order of the sum, then how each term
      // joins it, then what the op does around it.
      int rank = 3;
      std::string c, detail;
      if (OrderOf(*ma) != OrderOf(*mb)) {
        rank = 2;
        c = kCauseTree;
        detail = fmt::format("{} adds in order {}, {} in order {}", na, OrderOf(*ma), nb, OrderOf(*mb));
      } else if (Fused(*ma) != Fused(*mb)) {
        rank = 0;
        c = kCauseFusion;
        detail = fmt::format("the same order, {}; each product is exact inside one fused multiply-add in {}, "
                             "rounded before it is added in {}",
                             OrderOf(*ma), Fused(*ma) ? na : nb, Fused(*ma) ? nb : na);
      } else if (ma->form != mb->form) {
        rank = 1;
        c = kCauseFormula;
        detail = fmt::format("the same order; {} and {} differ in the op's form around the sum", na, nb);
      } else {
        c = kCauseUnknown;
        detail = fmt::format("{} and {} are the same schedule", na, nb);
      }
      if (rank >= best) continue;
      best = rank;
      cause.cause = c;
      cause.detail = detail;
      cause.model_a = na;
      cause.model_b = nb;
    }
  }
  if (best == 99) {
    cause.cause = kCauseUnknown;
    cause.detail = fmt::format("a follows {}, b follows {}: not models of {}'s schedules", Join(a), Join(b), op.name);
  }
  return cause;
}

namespace {

bool StatisticInFormat(const RowEpilogueCandidate& c) { return c.per_op || c.statistic_in_format; }

// A row's values of the statistics on one side as the other side's would
// stand: where only the other keeps its statistic in the 16-bit format
// (`format`), each value rounded to it, for a sum kept in the format is the
// binary32 sum rounded; as they are otherwise.
std::vector<std::array<int64_t, 2>> AsOtherSide(const std::vector<std::array<int64_t, 2>>& hits,
                                                const RowEpilogueCandidate& self, const RowEpilogueCandidate& other,
                                                const FloatFormat* format) {
  if (format == nullptr || StatisticInFormat(self) || !StatisticInFormat(other)) return hits;
  std::vector<std::array<int64_t, 2>> out;
  for (const auto& h : hits) {
    std::array<int64_t, 2> v;
    for (size_t k = 0; k < 2; ++k) {
      v[k] = OrderedFloat(static_cast<float>(RoundToFormat(*format, static_cast<double>(FloatFromOrdered(h[k])))));
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

// The rows whose values of the statistics reproducing a and b share none:
// their sums differ (a side that keeps its sum in the format shares the
// other's sum rounded to it). A row whose values were capped on either side
// is left out (its sets are not whole).
std::vector<size_t> RowsApart(const RowFit& a, const RowFit& b, const FloatFormat* format) {
  std::vector<size_t> rows;
  for (size_t r = 0; r < a.hits.size(); ++r) {
    if (a.capped[r] || b.capped[r]) continue;
    const auto ha_all = AsOtherSide(a.hits[r], a.epilogue, b.epilogue, format);
    const auto hb_all = AsOtherSide(b.hits[r], b.epilogue, a.epilogue, format);
    bool shared = false;
    for (const auto& ha : ha_all) {
      shared = std::find(hb_all.begin(), hb_all.end(), ha) != hb_all.end();
      if (shared) break;
    }
    if (!shared) rows.push_back(r);
  }
  return rows;
}

// The nearest values of a row's two sets: their distance in ULPs (the larger
// of the statistics'), and the pair.
std::tuple<int64_t, std::array<int64_t, 2>, std::array<int64_t, 2>> Nearest(const RowFit& a, const RowFit& b,
                                                                             size_t row, const FloatFormat* format) {
  std::tuple<int64_t, std::array<int64_t, 2>, std::array<int64_t, 2>> best{
      std::numeric_limits<int64_t>::max(), {}, {}};
  // Measured as each side's values would stand on the other (AsOtherSide).
  auto as = [&](const std::array<int64_t, 2>& h, const RowFit& self, const RowFit& other) {
    return AsOtherSide({h}, self.epilogue, other.epilogue, format).front();
  };
  for (const auto& ha : a.hits[row]) {
    const std::array<int64_t, 2> ma = as(ha, a, b);
    for (const auto& hb : b.hits[row]) {
      const std::array<int64_t, 2> mb = as(hb, b, a);
      const int64_t d = std::max(std::llabs(ma[0] - mb[0]), std::llabs(ma[1] - mb[1]));
      if (d < std::get<0>(best)) best = {d, ha, hb};
    }
  }
  return best;
}

std::string StatisticText(const RowStatisticSearch& search, const std::array<int64_t, 2>& v) {
  std::string text = HexFloat(FloatFromOrdered(v[0]));
  if (search.statistics == 2) text += ", " + HexFloat(FloatFromOrdered(v[1]));
  return text;
}

std::string FittingText(const RowStatisticSearch& s) {
  std::vector<std::string> names;
  for (const RowFit& f : s.fits) {
    if (f.fits) names.push_back(f.epilogue.name);
  }
  return Join(names);
}

}  // namespace

CompareCause CauseFromRowStatistics(const RowOpInfo& op, const RowStatisticSearch& a, const RowStatisticSearch& b) {
  std::string statistics;
  for (const auto& name : op.statistics) statistics += (statistics.empty() ? "" : " and ") + std::string(name);
  int64_t window = 0;
  double bound = 0;
  for (size_t r = 0; r < a.window.size(); ++r) {
    for (size_t k = 0; k < a.statistics; ++k) {
      window = std::max(window, a.window[r][k]);
      bound = std::max(bound, a.bound_ulp[r][k]);
    }
  }
  const std::string searched = fmt::format(
      "{} set free per row over the binary32 values within {} ULPs of the sequential sum's (the bound of a "
      "binary32 sum of {} terms, 2 gamma_n sum |t|, is at most {:.1f} ULPs here{})",
      statistics, window, a.n, bound, bound + 2 > static_cast<double>(window) ? ", cut at the search's limit" : "");
  const std::string per_op =
      a.format_window > 0
          ? fmt::format(", and for the epilogues rounded per op to {} (or keeping their statistic in it) over up to "
                        "{} of its values each way",
                        a.format, a.format_window)
          : "";
  const std::string searched_all = searched + per_op;
  const FloatFormat* format = a.format.empty() ? nullptr : FindFormat(a.format);
  CompareCause cause;
  cause.basis = "row statistics set free";
  for (const auto& [side, s] : {std::pair<const char*, const RowStatisticSearch*>{"a", &a}, {"b", &b}}) {
    bool any = false;
    int64_t first = -1;
    for (const RowFit& f : s->fits) {
      any = any || f.fits;
      first = std::max(first, f.unfit_row);
    }
    if (!any) {
      cause.cause = kCauseUnknown;
      const RowStatisticSearch& other = s == &a ? b : a;
      cause.detail = fmt::format("with {}, no epilogue of {} ({}) reproduces {}'s outputs bit for bit (none gets "
                                 "past row {}): {} computes its elements otherwise, or with a function (exp, log) "
                                 "of its own; {} fits {}",
                                 searched_all, op.name, Join([&] {
                                   std::vector<std::string> names;
                                   for (const RowFit& f : s->fits) names.push_back(f.epilogue.name);
                                   return names;
                                 }()),
                                 side, first, side, s == &a ? "b" : "a", FittingText(other));
      return cause;
    }
  }
  // The pair that needs the fewest causes: the same epilogue where both
  // follow it, so that what differs is the statistics alone.
  size_t best = std::numeric_limits<size_t>::max();
  // Other pairs that explain the outputs with as few causes but other words:
  // then the outputs do not tell the causes apart.
  std::vector<std::string> rivals;
  for (const RowFit& fa : a.fits) {
    if (!fa.fits) continue;
    for (const RowFit& fb : b.fits) {
      if (!fb.fits) continue;
      const std::vector<size_t> apart = RowsApart(fa, fb, format);
      // The rows' values apart by more than a binary32 sum of the row's terms
      // can err (2 gamma_n sum |t|): not an order of binary32 additions, a
      // narrower accumulator on at least one side.
      bool beyond = false;
      // Beyond even where the statistic absorbs functions: both sides per op
      // and past each side's function_slack too.
      bool beyond_functions = false;
      int64_t farthest = 0;
      size_t example_row = 0;
      std::string example;
      // A per-op side's value is its binary32 sum rounded to the format:
      // that sum lies within half the format's step of it, so two values
      // apart by d have sums at least d - (those halves) apart.
      const int64_t rounding = (StatisticInFormat(fa.epilogue) ? a.format_step / 2 : 0) +
                               (StatisticInFormat(fb.epilogue) ? b.format_step / 2 : 0);
      for (const size_t r : apart) {
        const auto [d, va, vb] = Nearest(fa, fb, r, format);
        const double bound_r = std::max(a.bound_ulp[r][0], a.bound_ulp[r][1]);
        beyond = beyond || static_cast<double>(d - rounding) > bound_r + 2;
        if (fa.epilogue.per_op && fb.epilogue.per_op && !a.function_slack.empty() && !b.function_slack.empty()) {
          beyond_functions = beyond_functions || static_cast<double>(d - rounding - a.function_slack[r] -
                                                                     b.function_slack[r]) > bound_r + 2;
        }
        if (example.empty() || d > farthest) {
          farthest = std::max(farthest, d);
          example_row = r;
          example = fmt::format("row {}: a's {} against b's {}, {} ULP{} apart, the bound {:.1f}{}", r,
                                StatisticText(a, va), StatisticText(b, vb), d, d == 1 ? "" : "s", bound_r,
                                rounding > 0 ? fmt::format(" and {} for the rounding to {}", rounding, a.format) : "");
        }
      }
      std::vector<std::string> causes;
      std::string epilogue;
      if (!apart.empty()) causes.push_back(beyond ? kCauseRoundingFormat : kCauseTree);
      if (fa.epilogue.form != fb.epilogue.form) {
        // A declared form names its own cause; two finishes part on the formula.
        const std::string word = fa.epilogue.declared   ? fa.epilogue.cause
                                 : fb.epilogue.declared ? fb.epilogue.cause
                                                        : std::string(kCauseFormula);
        causes.push_back(word);
        epilogue = fmt::format("a's outputs follow the epilogue {} ({}) and not {}'s, b's {} ({}) and not {}'s",
                               fa.epilogue.name, fa.epilogue.sequence, fb.epilogue.form, fb.epilogue.name,
                               fb.epilogue.sequence, fa.epilogue.form);
      } else if (fa.epilogue.fused != fb.epilogue.fused) {
        causes.push_back(kCauseFusion);
        epilogue = fmt::format("both follow the epilogue {}, a's with MulAdd {}, b's {}", fa.epilogue.form,
                               fa.epilogue.fused ? "fused" : "unfused", fb.epilogue.fused ? "fused" : "unfused");
      } else {
        epilogue = fmt::format("both sides' outputs follow the one epilogue {} ({})", fa.epilogue.name,
                               fa.epilogue.sequence);
      }
      if (fa.epilogue.per_op != fb.epilogue.per_op) {
        if (std::find(causes.begin(), causes.end(), kCauseRoundingFormat) == causes.end()) {
          causes.push_back(kCauseRoundingFormat);
        }
        epilogue += fmt::format("; {} rounds every operation to the format, {} only its result",
                                fa.epilogue.per_op ? "a" : "b", fa.epilogue.per_op ? "b" : "a");
      }
      if (causes.empty() || causes.size() > best) continue;
      std::string words = causes[0];
      for (size_t k = 1; k < causes.size(); ++k) words += " + " + causes[k];
      if (causes.size() == best) {
        if (words != cause.cause && cause.cause != kCauseUnknown) {
          rivals.push_back(fmt::format("{} ({} against {})", words, fa.epilogue.name, fb.epilogue.name));
        }
        continue;
      }
      rivals.clear();
      best = causes.size();
      std::string rows;
      if (!apart.empty()) {
        rows = fmt::format("; {} of {} rows need values of {} that no value serves on both sides, at most {} ULP{} "
                           "apart ({}){}",
                           apart.size(), a.rows, statistics, farthest, farthest == 1 ? "" : "s", example,
                           beyond ? ": farther than a binary32 sum can err, so at least one side sums in a "
                                    "narrower format"
                                  : ", within the bound of a binary32 sum");
      } else {
        rows = fmt::format("; every row's statistics can be the same on both sides");
      }
      cause.cause = words;
      if (!apart.empty() && !op.unpinned_functions.empty() && beyond_functions) {
        // Farther apart than exps and logs within kRowFunctionWindow ULPs of
        // Highway's, rounded to the format, could move two binary32 sums.
        rows += fmt::format(" (the statistic goes through {} whole, but exps and logs within {} ULPs of Highway's, "
                            "their results rounded to {}, move a row's values by far less: at most {} and {} "
                            "binary32 values on row {})",
                            op.unpinned_functions, kRowFunctionWindow, a.format, a.function_slack[example_row],
                            b.function_slack[example_row], example_row);
      } else if (!apart.empty() && !op.unpinned_functions.empty()) {
        // The statistic set free stands for the functions of its terms too:
        // its values part where the sums or those functions do.
        cause.cause = kCauseUnknown;
        rows += fmt::format(": the statistic goes through {} whole, which the elements do not compute again, so a "
                            "tree and those functions' implementations are not told apart",
                            op.unpinned_functions);
      }
      cause.model_a = fa.epilogue.name;
      cause.model_b = fb.epilogue.name;
      cause.rows.clear();
      for (size_t r = 0; r < fa.hits.size(); ++r) {
        const auto [d, va, vb] = Nearest(fa, fb, r, format);
        cause.rows.push_back({r, {FloatFromOrdered(va[0]), FloatFromOrdered(va[1])},
                              {FloatFromOrdered(vb[0]), FloatFromOrdered(vb[1])},
                              std::find(apart.begin(), apart.end(), r) != apart.end()});
      }
      cause.detail = fmt::format("with {}, {} bit for bit on every row{} (a fits {}; b fits {})", searched_all, epilogue,
                                 rows, FittingText(a), FittingText(b));
    }
  }
  if (best == std::numeric_limits<size_t>::max()) {
    cause.cause = kCauseUnknown;
    cause.detail = fmt::format("with {}, a fits {} and b fits {}, and no pair of them parts where the outputs do",
                               searched_all, FittingText(a), FittingText(b));
  } else if (!rivals.empty()) {
    cause.detail += fmt::format("; but as well {}: the outputs do not tell {} from {}", Join(rivals), cause.cause,
                                Join(rivals));
    cause.cause = kCauseUnknown;
  }
  return cause;
}

CompareCause CauseFromSharedFunctionValues(const RowOpInfo& op, const SharedFunctionSearch& search) {
  CompareCause cause;
  cause.basis = "row statistics set free";
  const std::string searched = fmt::format(
      "with {} set free per row on each side (within {} ULPs of the sequential sum's) and {} set free per element, "
      "one value shared by both sides within {} ULPs of Highway's",
      op.statistics.front(), search.window, search.function, kRowFunctionWindow);
  size_t best = std::numeric_limits<size_t>::max();
  std::vector<std::string> rivals;
  for (const SharedFunctionPair& p : search.pairs) {
    std::vector<std::string> causes;
    size_t apart = 0;
    int64_t farthest = 0;
    for (size_t r = 0; r < p.apart.size(); ++r) {
      if (!p.apart[r]) continue;
      ++apart;
      farthest = std::max<int64_t>(farthest, std::llabs(p.statistic[r][0] - p.statistic[r][1]));
    }
    if (apart > 0) causes.push_back(kCauseTree);
    if (p.a.form != p.b.form) {
      causes.push_back(p.a.declared   ? p.a.cause
                       : p.b.declared ? p.b.cause
                                      : std::string(kCauseFormula));
    } else if (p.a.fused != p.b.fused) {
      causes.push_back(kCauseFusion);
    }
    if (causes.empty() || causes.size() > best) continue;
    std::string words = causes[0];
    for (size_t k = 1; k < causes.size(); ++k) words += " + " + causes[k];
    if (causes.size() == best) {
      if (words != cause.cause) rivals.push_back(fmt::format("{} ({} against {})", words, p.a.name, p.b.name));
      continue;
    }
    rivals.clear();
    best = causes.size();
    cause.cause = words;
    cause.model_a = p.a.name;
    cause.model_b = p.b.name;
    cause.rows.clear();
    for (size_t r = 0; r < p.apart.size(); ++r) {
      cause.rows.push_back({r, {FloatFromOrdered(p.statistic[r][0]), 0}, {FloatFromOrdered(p.statistic[r][1]), 0},
                            p.apart[r]});
    }
    cause.detail = fmt::format(
        "{}: a's elements follow {} ({}) and b's {} ({}) bit for bit on every row, with the same {} on both "
        "sides (the two call one implementation of it: values of their own on each side would explain any "
        "outputs this near); {}",
        searched, p.a.name, p.a.sequence, p.b.name, p.b.sequence, search.function,
        apart == 0 ? std::string("one row statistic serves both sides on every row")
                   : fmt::format("{} of {} rows need statistics that no one value serves, at most {} ULPs apart",
                                 apart, search.rows, farthest));
  }
  if (best == std::numeric_limits<size_t>::max()) {
    cause.cause = kCauseUnknown;
    cause.detail = fmt::format("{}, no pair of epilogues gives both sides' outputs", searched);
  } else if (!rivals.empty()) {
    cause.detail += fmt::format("; but as well {}: the outputs do not tell {} from {}", Join(rivals), cause.cause,
                                Join(rivals));
    cause.cause = kCauseUnknown;
  }
  return cause;
}

namespace {

// The words a pair of fits parts on, in the order tree, epilogue, function.
std::vector<std::string> RowModelParts(const RowModelSearch& a, const RowModelFit& fa, const RowModelSearch& b,
                                       const RowModelFit& fb) {
  std::vector<std::string> parts;
  if (fa.order != fb.order) {
    const bool wide = fa.order == "binary64_rounded_once" || fb.order == "binary64_rounded_once";
    parts.push_back(wide ? kCauseRoundingFormat : kCauseTree);
  }
  if (fa.epilogue.form != fb.epilogue.form) {
    parts.push_back(fa.epilogue.declared   ? fa.epilogue.cause
                    : fb.epilogue.declared ? fb.epilogue.cause
                                           : std::string(kCauseFormula));
  } else if (fa.epilogue.fused != fb.epilogue.fused) {
    parts.push_back(kCauseFusion);
  }
  if (a.functions[fa.function].text != b.functions[fb.function].text) parts.push_back(kCauseFunction);
  return parts;
}

std::string RowFitText(const RowModelSearch& s, const RowModelFit& f, const std::string& function_name) {
  std::string text =
      fmt::format("order {}, epilogue {} ({}) on every row", f.order, f.epilogue.name, f.epilogue.sequence);
  if (!function_name.empty()) text = fmt::format("{} by {}, ", function_name, s.functions[f.function].name) + text;
  if (!s.statistic_function.empty() && !f.statistic_function.empty() && !std::isnan(f.statistic_function.front())) {
    text += fmt::format("; its {} the correctly rounded value on {} of {} rows{}", s.statistic_function,
                        s.rows - f.rows_own_function, s.rows,
                        f.rows_own_function > 0 ? fmt::format(" and a value of its own within {} ULPs on the other {}",
                                                              kRowFunctionWindow, f.rows_own_function)
                                                : std::string());
  }
  return text;
}

}  // namespace

CompareCause CauseFromRowModels(const ReductionInputSet& inputs, const RowModelSearch& a, const RowModelSearch& b) {
  CompareCause cause;
  cause.cause = kCauseUnknown;
  cause.basis = "row models";
  const RowOpInfo& op = *FindRowOp(inputs.op->name);
  const std::string function_name = RowTermFunction(op);
  std::vector<std::string> names;
  for (const RowFunctionModel& f : a.functions) names.push_back(f.name);
  const std::string functions =
      function_name.empty() ? std::string() : fmt::format("the {} of {} and ", function_name, Join(names));
  const std::string searched = fmt::format(
      "with {}{} orders of each row's {} terms ({}){}", functions, a.orders.size(), a.n, Join(a.orders),
      a.statistic_function.empty()
          ? std::string()
          : fmt::format(", and {} set free per row within {} ULPs of its correctly rounded value", a.statistic_function,
                        kRowFunctionWindow));
  for (const auto& [side, s] : {std::pair<const char*, const RowModelSearch*>{"a", &a}, {"b", &b}}) {
    if (s->fits.empty()) {
      cause.detail = fmt::format("{}, no model gives {}'s outputs bit for bit on every row", searched, side);
      return cause;
    }
  }
  // A side that some fit gives with the statistic's function correctly
  // rounded on every row (or taking none) is held to those fits: a value set
  // free per row absorbs a row's sum, so that another order or term
  // function would serve as well, and only where no such fit exists does a
  // side's function count as its own.
  auto held = [](const RowModelSearch& s) {
    std::vector<const RowModelFit*> pinned, all;
    for (const RowModelFit& f : s.fits) {
      all.push_back(&f);
      if (f.rows_own_function == 0) pinned.push_back(&f);
    }
    return pinned.empty() ? all : pinned;
  };
  const std::vector<const RowModelFit*> fits_a = held(a), fits_b = held(b);
  size_t best = std::numeric_limits<size_t>::max();
  const RowModelFit* pa = nullptr;
  const RowModelFit* pb = nullptr;
  std::string words;
  std::vector<std::string> rivals;
  for (const RowModelFit* fa_ptr : fits_a) {
    const RowModelFit& fa = *fa_ptr;
    for (const RowModelFit* fb_ptr : fits_b) {
      const RowModelFit& fb = *fb_ptr;
      const std::vector<std::string> parts = RowModelParts(a, fa, b, fb);
      if (parts.size() > best) continue;
      std::string w = parts.empty() ? std::string(kCauseNone) : parts[0];
      for (size_t k = 1; k < parts.size(); ++k) w += kCauseJoin + parts[k];
      if (parts.size() == best) {
        if (w != words && std::find(rivals.begin(), rivals.end(), w) == rivals.end()) rivals.push_back(w);
        continue;
      }
      best = parts.size();
      words = w;
      rivals.clear();
      pa = &fa;
      pb = &fb;
    }
  }
  cause.model_a = pa->order + "+" + pa->epilogue.name;
  cause.model_b = pb->order + "+" + pb->epilogue.name;
  if (!function_name.empty()) {
    cause.model_a = a.functions[pa->function].name + "+" + cause.model_a;
    cause.model_b = b.functions[pb->function].name + "+" + cause.model_b;
  }
  for (const auto& [s, f] : {std::pair<const RowModelSearch*, const RowModelFit*>{&a, pa}, {&b, pb}}) {
    cause.row_models.push_back({s->functions[f->function].name, s->functions[f->function].text, f->order,
                                f->epilogue.name, f->statistic, f->statistic_function});
  }
  std::string parted;
  if (best == 0) {
    parted = "one model gives both sides: the outputs do not show where they part";
  } else {
    std::vector<std::string> what;
    if (pa->order != pb->order) what.push_back("no one order gives both sides");
    if (pa->epilogue.form != pb->epilogue.form || pa->epilogue.fused != pb->epilogue.fused) {
      what.push_back("no one epilogue does");
    }
    if (a.functions[pa->function].text != b.functions[pb->function].text) {
      // How many of the rows' terms the two functions give apart.
      size_t apart = 0, terms = 0;
      for (size_t r = 0; r < a.rows; ++r) {
        for (size_t i = 0; i < a.n; ++i) {
          apart += FloatBits(a.terms[pa->function][r][i]) != FloatBits(b.terms[pb->function][r][i]);
          ++terms;
        }
      }
      what.push_back(fmt::format("no one {} does ({}'s and {}'s differ on {} of the {} terms)", function_name,
                                 a.functions[pa->function].name, b.functions[pb->function].name, apart, terms));
    }
    parted = Join(what);
  }
  // A side that every order gives (its statistic's function set free absorbs
  // the row's sum): its order is not shown, so no tree can be.
  for (const auto& [side, s, f, fits] :
       {std::tuple<const char*, const RowModelSearch*, const RowModelFit*, const std::vector<const RowModelFit*>*>{
            "a", &a, pa, &fits_a},
        {"b", &b, pb, &fits_b}}) {
    size_t count = 0;
    for (const RowModelFit* g : *fits) count += g->function == f->function && g->epilogue.name == f->epilogue.name;
    if (count >= s->orders.size() && f->rows_own_function > 0) {
      parted += fmt::format("; every order tried gives {}: its {}, its own and set free, absorbs the row's sum, so the "
                            "outputs do not show {}'s order",
                            side, s->statistic_function, side);
    }
  }
  // Every order that gives a side with its chosen function and epilogue.
  auto orders = [](const std::vector<const RowModelFit*>& fits, const RowModelFit& chosen) {
    std::vector<std::string> found;
    for (const RowModelFit* f : fits) {
      if (f->function == chosen.function && f->epilogue.name == chosen.epilogue.name &&
          std::find(found.begin(), found.end(), f->order) == found.end()) {
        found.push_back(f->order);
      }
    }
    return Join(found);
  };
  cause.cause = best == 0 ? std::string(kCauseUnknown) : words;
  cause.detail = fmt::format("{}: a's outputs follow {} (with that {} the orders {}); b's {} (the "
                             "orders {}); {}",
                             searched, RowFitText(a, *pa, function_name),
                             function_name.empty() ? "epilogue" : "function and epilogue", orders(fits_a, *pa),
                             RowFitText(b, *pb, function_name), orders(fits_b, *pb), parted);
  if (!rivals.empty()) {
    cause.detail += fmt::format("; but as well {}: the models do not tell {} from {}", Join(rivals), words, Join(rivals));
    cause.cause = kCauseUnknown;
  }
  return cause;
}

CompareCause CauseFromSumOrders(const ReductionInputSet& inputs, const std::vector<float>& a,
                                const std::vector<float>& b) {
  CompareCause cause;
  cause.cause = kCauseUnknown;
  const ReductionOpInfo& op = *inputs.op;
  if (op.exact_fill != ExactFill::kPlainSum || !IsBinary32(*inputs.format)) return cause;
  const size_t per = inputs.outputs_per_instance();
  std::vector<std::vector<float>> terms;
  for (const ReductionInstance& instance : inputs.instances) {
    for (size_t e = 0; e < per; ++e) terms.push_back(GatherElementTerms(op, inputs.shape, instance, e).vectors.at(0));
  }
  if (terms.empty() || terms.size() != a.size() || terms.size() != b.size()) return cause;
  const std::vector<std::string> names = SumOrderNames(terms.front().size());
  std::vector<std::string> fit_a, fit_b;
  for (const std::string& name : names) {
    bool all_a = true, all_b = true;
    for (size_t i = 0; i < terms.size() && (all_a || all_b); ++i) {
      const float s = SumInOrder(name, terms[i]);
      all_a = all_a && std::memcmp(&s, &a[i], sizeof s) == 0;
      all_b = all_b && std::memcmp(&s, &b[i], sizeof s) == 0;
    }
    if (all_a) fit_a.push_back(name);
    if (all_b) fit_b.push_back(name);
  }
  auto wide = [](const std::vector<std::string>& fit) {
    return std::find(fit.begin(), fit.end(), "binary64_rounded_once") != fit.end();
  };
  const std::string tried = fmt::format("binary32 orders of each output's {} terms tried ({}: {})", terms.front().size(),
                                        names.size(), Join(names));
  if (fit_a.empty() || fit_b.empty()) {
    cause.detail = fmt::format("of the {}, a's outputs follow {}, b's {}", tried, Join(fit_a), Join(fit_b));
    return cause;
  }
  if (wide(fit_a) || wide(fit_b)) {
    cause.detail = fmt::format("of the {}, a's outputs follow {}, b's {}: a side that the binary64 sum rounded once "
                               "gives as well is not told from a wider accumulator",
                               tried, Join(fit_a), Join(fit_b));
    return cause;
  }
  cause.cause = kCauseTree;
  cause.basis = "summation orders";
  cause.model_a = fit_a.front();
  cause.model_b = fit_b.front();
  cause.detail = fmt::format("of the {}, every one of a's {} outputs is the binary32 sum of its terms in order {}, and "
                             "every one of b's in order {}; neither side is the binary64 sum rounded once: both add "
                             "in binary32, in different orders",
                             tried, a.size(), Join(fit_a), Join(fit_b));
  return cause;
}

CompareCause CauseFromBiasRounding(const ReductionInputSet& inputs, const std::vector<std::string>& a_models,
                                   const std::vector<std::string>& b_models, const std::vector<float>& a,
                                   const std::vector<float>& b) {
  CompareCause cause;
  cause.cause = kCauseUnknown;
  const ReductionOpInfo& op = *inputs.op;
  const FloatFormat& format = *inputs.format;
  if (IsBinary32(format) || a_models.empty() == b_models.empty() || inputs.instances.empty()) return cause;
  const bool a_follows = !a_models.empty();
  const std::vector<std::string>& models = a_follows ? a_models : b_models;
  const std::vector<float>& other = a_follows ? b : a;
  const size_t per = inputs.outputs_per_instance();
  if (GatherElementTerms(op, inputs.shape, inputs.instances.front(), 0).scalars.size() != 1) return cause;
  auto round = [&](float v) { return static_cast<float>(RoundToFormat(format, static_cast<double>(v))); };
  for (const std::string& name : models) {
    const auto model = ReductionModelNamed(op, name);
    if (!model) continue;
    bool all = true;
    for (size_t i = 0; i < inputs.instances.size() && all; ++i) {
      for (size_t e = 0; e < per && all; ++e) {
        ElementTerms terms = GatherElementTerms(op, inputs.shape, inputs.instances[i], e);
        const float bias = terms.scalars[0];
        terms.scalars[0] = 0.0f;
        // The model's sum alone, rounded to the format; then the bias, in
        // binary32, and the format's rounding again.
        const float product = round(ReductionModelOutput(op, *model, terms));
        const float y = round(product + bias);
        all = std::memcmp(&y, &other[i * per + e], sizeof y) == 0;
      }
    }
    if (!all) continue;
    cause.cause = kCauseRoundingFormat;
    cause.basis = "bias after the product's rounding";
    cause.model_a = a_follows ? name : name + "+rounded_product";
    cause.model_b = a_follows ? name + "+rounded_product" : name;
    cause.detail = fmt::format(
        "{}'s outputs follow {} (its sum and the bias rounded once to {}); every one of {}'s is "
        "RN_{}(RN_{}(D) + bias), D the sum of {} without the bias: the same product, rounded to {} before the bias "
        "is added",
        a_follows ? "a" : "b", name, format.name, a_follows ? "b" : "a", format.name, format.name, name, format.name);
    return cause;
  }
  cause.detail = fmt::format("no model of {} followed by one side gives the other's outputs with its product "
                             "rounded to {} before the bias",
                             op.name, format.name);
  return cause;
}

CompareResult RunReductionCompare(const ReductionCompareRequest& r) {
  const ReductionInputSet& inputs = *r.inputs;
  const ReductionOpInfo& op = *inputs.op;
  const size_t per = inputs.outputs_per_instance();
  const size_t n = per * inputs.instances.size();
  if (n == 0) throw InputError("compare: no outputs");
  for (const CompareSide* side : {&r.a, &r.b}) {
    if (side->outputs.size() != n) {
      throw InputError(fmt::format("{}: {} outputs for {} instances of {} outputs: the shapes differ", side->label,
                                   side->outputs.size(), inputs.instances.size(), per));
    }
  }
  CompareResult out;
  std::vector<CompareExample> all;
  DiffOutputs(*inputs.format, r.a.outputs, r.b.outputs, &out, &all);
  for (size_t k = 0; k < all.size() && k < r.examples; ++k) {
    out.nearest.push_back(all[k]);
    out.nearest.back().replay = r.replay;
  }
  if (out.max_index >= 0) {
    const uint64_t i = static_cast<uint64_t>(out.max_index);
    out.worst.push_back({i, r.a.outputs[i], r.b.outputs[i], out.max_apart, r.replay});
  }
  for (const auto& [side, result] : {std::pair<const CompareSide*, CompareSideResult*>{&r.a, &out.a}, {&r.b, &out.b}}) {
    std::vector<std::vector<float>> per_instance;
    for (size_t i = 0; i < inputs.instances.size(); ++i) {
      per_instance.emplace_back(side->outputs.begin() + static_cast<std::ptrdiff_t>(i * per),
                                side->outputs.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
    }
    result->all.result = RunReductionCheck(inputs, per_instance, side->label, r.threads);
    result->matching = result->all.result.conformance.matching;
  }
  if (out.differing == 0) {
    out.cause.detail = "the outputs are the same in every bit";
    return out;
  }
  out.cause = CauseFromReductionModels(op, out.a.matching, out.b.matching);
  out.cause.basis = "all inputs";
  // A product and its bias in 16 bits: one side may round the product to
  // the format before the bias.
  if (out.cause.cause == kCauseUnknown && FindRowOp(op.name) == nullptr) {
    const CompareCause bias = CauseFromBiasRounding(inputs, out.a.matching, out.b.matching, r.a.outputs, r.b.outputs);
    if (bias.cause != kCauseUnknown) {
      const std::string models = out.cause.detail;
      out.cause = bias;
      out.cause.detail = models + "; " + bias.detail;
    }
  }
  // A plain sum whose sides follow no schedule: the orders of its terms
  // that give each side.
  if (out.cause.cause == kCauseUnknown && op.exact_fill == ExactFill::kPlainSum) {
    const CompareCause orders = CauseFromSumOrders(inputs, r.a.outputs, r.b.outputs);
    if (orders.cause != kCauseUnknown) {
      const std::string models = out.cause.detail;
      out.cause = orders;
      out.cause.detail = models + "; " + orders.detail;
    } else if (!orders.detail.empty()) {
      out.cause.detail += "; " + orders.detail;
    }
  }
  // Where the schedules' models cannot say, a row reduction's outputs can:
  // which epilogues reproduce each side with its row statistics set free.
  if (out.cause.cause == kCauseUnknown && FindRowOp(op.name) != nullptr) {
    const std::string models = out.cause.detail;
    out.cause = CauseFromRowStatistics(*FindRowOp(op.name), SearchRowStatistics(inputs, r.a.outputs),
                                       SearchRowStatistics(inputs, r.b.outputs));
    // A side that follows no epilogue may call its own function per
    // element: set those values free too, shared by both sides.
    const RowOpInfo& row_op = *FindRowOp(op.name);
    if (out.cause.cause == kCauseUnknown && !row_op.element_function.empty()) {
      const CompareCause shared =
          CauseFromSharedFunctionValues(row_op, SearchSharedFunctionValues(inputs, r.a.outputs, r.b.outputs));
      if (shared.cause != kCauseUnknown) out.cause = shared;
      else out.cause.detail += "; " + shared.detail;
    }
    // Each side's term function pinned (the user's written out; RMSNorm's
    // squares are its own), its orders and epilogues tried whole. Without
    // the user's, a term function of ulpgate's own would stand for the
    // sides' and name orders it does not pin.
    if (out.cause.cause == kCauseUnknown && RowModelsApply(row_op, *inputs.format) &&
        (RowTermFunction(row_op).empty() || !r.row_functions.empty())) {
      const CompareCause fitted = CauseFromRowModels(inputs, SearchRowModels(inputs, r.a.outputs, r.row_functions),
                                                     SearchRowModels(inputs, r.b.outputs, r.row_functions));
      if (fitted.cause != kCauseUnknown) out.cause = fitted;
      else out.cause.detail += "; " + fitted.detail;
    }
    out.cause.detail = models + "; " + out.cause.detail;
  }
  return out;
}

nlohmann::ordered_json ReductionCompareJson(const ReductionCompareRequest& r, const CompareResult& result) {
  const ReductionInputSet& inputs = *r.inputs;
  const FloatFormat& format = *inputs.format;
  const size_t per = inputs.outputs_per_instance();
  auto value = [&](float v) {
    return nlohmann::ordered_json{{"value", HexFloat(v)}, {"bits", BitsText(format, Encoding(format, v))}};
  };
  auto example = [&](const CompareExample& e) {
    nlohmann::ordered_json j;
    j["instance"] = e.index / per;
    j["element"] = e.index % per;
    j["a"] = value(e.a);
    j["b"] = value(e.b);
    j["apart_ulp"] = std::isinf(e.apart_ulp) ? nlohmann::ordered_json("inf") : nlohmann::ordered_json(e.apart_ulp);
    j["replay"] = e.replay;
    return j;
  };
  nlohmann::ordered_json j;
  j["op"] = inputs.op->name;
  j["dtype"] = format.name;
  j["inputs"] = inputs.source;
  j["seed"] = inputs.seed;
  j["shape"] = ShapeText(*inputs.op, inputs.shape);
  j["instances"] = inputs.instances.size();
  j["n"] = result.n;
  for (const auto& [name, side, sr] :
       {std::tuple<const char*, const CompareSide*, const CompareSideResult*>{"a", &r.a, &result.a}, {"b", &r.b, &result.b}}) {
    j[name] = {{"label", side->label},
               {"door", side->door},
               {"spec", side->spec},
               {"max_ulp_error", sr->all.result.stats.max_ulp()},
               {"models_all_inputs", sr->matching},
               {"models_differing_inputs", nullptr}};
  }
  j["differing"] = result.differing;
  j["special"] = result.special;
  j["signed_zero"] = result.signed_zero;
  j["max_apart_ulp"] = result.max_apart;
  nlohmann::ordered_json bins = nlohmann::ordered_json::array();
  for (size_t k = 0; k < result.histogram.size(); ++k) {
    bins.push_back({{"bin", BinLabel(k)}, {"count", result.histogram[k]}});
  }
  j["apart_histogram"] = bins;
  j["cause"] = {{"cause", result.cause.cause}, {"basis", result.cause.basis}, {"model_a", result.cause.model_a},
                {"model_b", result.cause.model_b}, {"detail", result.cause.detail}};
  if (!result.cause.rows.empty()) {
    // The statistics' values per row, as hex floats with their bits.
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    const FloatFormat& f32 = kBinary32;
    const RowOpInfo* row_op = FindRowOp(inputs.op->name);
    const size_t count = row_op == nullptr ? 1 : row_op->statistics.size();
    for (const CompareCause::RowValues& v : result.cause.rows) {
      nlohmann::ordered_json a = nlohmann::ordered_json::array(), b = nlohmann::ordered_json::array();
      for (size_t k = 0; k < count; ++k) {
        a.push_back({{"value", HexFloat(v.a[k])}, {"bits", BitsText(f32, Encoding(f32, v.a[k]))}});
        b.push_back({{"value", HexFloat(v.b[k])}, {"bits", BitsText(f32, Encoding(f32, v.b[k]))}});
      }
      rows.push_back({{"row", v.row}, {"a", a}, {"b", b}, {"apart", v.apart}});
    }
    j["cause"]["row_statistics"] = rows;
  }
  if (!result.cause.row_models.empty()) {
    // Each side's model and, per row, its statistic and the value of the
    // function of it, as hex floats with their bits (null where none).
    const FloatFormat& f32 = kBinary32;
    auto number = [&](float v) {
      return std::isnan(v) ? nlohmann::ordered_json(nullptr)
                           : nlohmann::ordered_json{{"value", HexFloat(v)}, {"bits", BitsText(f32, Encoding(f32, v))}};
    };
    nlohmann::ordered_json models;
    for (size_t k = 0; k < result.cause.row_models.size() && k < 2; ++k) {
      const CompareCause::RowModelSide& m = result.cause.row_models[k];
      nlohmann::ordered_json rows = nlohmann::ordered_json::array();
      for (size_t row = 0; row < m.statistic.size(); ++row) {
        rows.push_back({{"row", row}, {"statistic", number(m.statistic[row])},
                        {"statistic_function", number(row < m.statistic_function.size() ? m.statistic_function[row]
                                                                                         : std::nanf(""))}});
      }
      models[k == 0 ? "a" : "b"] = {{"function", m.function}, {"program", m.program}, {"order", m.order},
                                    {"epilogue", m.epilogue}, {"rows", rows}};
    }
    j["cause"]["row_models"] = models;
  }
  nlohmann::ordered_json nearest = nlohmann::ordered_json::array();
  for (const CompareExample& e : result.nearest) nearest.push_back(example(e));
  j["nearest"] = nearest;
  nlohmann::ordered_json worst = nlohmann::ordered_json::array();
  for (const CompareExample& e : result.worst) worst.push_back(example(e));
  j["worst"] = worst;
  if (result.n <= kCompareValuesLimit) {
    j["values"] = {{"a", std::vector<uint64_t>()}, {"b", std::vector<uint64_t>()}};
    for (const auto& [name, side] : {std::pair<const char*, const CompareSide*>{"a", &r.a}, {"b", &r.b}}) {
      std::vector<uint64_t> bits;
      for (const float v : side->outputs) bits.push_back(Encoding(format, v));
      j["values"][name] = bits;
    }
  } else {
    j["values"] = nullptr;
  }
  return j;
}

}  // namespace ulpgate
