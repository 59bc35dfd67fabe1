#include "suites/investigate/compare.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "suites/investigate/check_models.h"
#include "suites/investigate/model_structure.h"
#include "suites/reports/number_text.h"
#include "suites/reports/replay.h"
#include "suites/reports/report.h"

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
  out.n = n;
  constexpr size_t kBins = std::size(kCompareBins) + 2;
  out.histogram.assign(kBins, 0);
  std::vector<uint64_t> differing;
  std::vector<CompareExample> all;
  bool every_flushed = true;
  for (uint64_t i = 0; i < n; ++i) {
    const float a = r.a.outputs[i], b = r.b.outputs[i];
    if (Encoding(*r.format, a) == Encoding(*r.format, b)) continue;
    differing.push_back(i);
    ++out.differing;
    every_flushed = every_flushed && FlushedToZero(r, i);
    const double apart = UlpsApart(*r.format, a, b);
    if (a == 0 && b == 0) ++out.signed_zero;
    size_t bin = kBins - 1;
    if (std::isinf(apart)) {
      ++out.special;
    } else {
      bin = std::size(kCompareBins);
      for (size_t k = 0; k < std::size(kCompareBins); ++k) {
        if (apart <= kCompareBins[k]) {
          bin = k;
          break;
        }
      }
      if (out.max_index < 0 || apart > out.max_apart) {
        out.max_apart = apart;
        out.max_index = static_cast<int64_t>(i);
      }
    }
    ++out.histogram[bin];
    all.push_back({i, a, b, apart, ""});
  }
  // Nearest first (then by index), as check orders a model's mismatches.
  std::stable_sort(all.begin(), all.end(), [](const CompareExample& x, const CompareExample& y) {
    return x.apart_ulp < y.apart_ulp;
  });
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
  const bool on_all = !out.a.matching.empty() && !out.b.matching.empty();
  cause = CauseFromModels(*r.op, *r.format, request_a, on_all ? out.a.matching : out.a.matching_differing,
                          on_all ? out.b.matching : out.b.matching_differing,
                          out.special > 0 ? std::numeric_limits<double>::infinity() : out.max_apart);
  cause.basis = on_all ? "all inputs" : "differing inputs";
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
    std::string label = k < std::size(kCompareBins) ? fmt::format("<={}", kCompareBins[k])
                        : k == std::size(kCompareBins) ? fmt::format(">{}", kCompareBins[k - 1])
                                                       : std::string("special");
    bins.push_back({{"bin", label}, {"count", result.histogram[k]}});
  }
  j["apart_histogram"] = bins;
  j["cause"] = {{"cause", result.cause.cause},
                {"basis", result.cause.basis},
                {"model_a", result.cause.model_a},
                {"model_b", result.cause.model_b},
                {"detail", result.cause.detail}};
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

}  // namespace ulpgate
