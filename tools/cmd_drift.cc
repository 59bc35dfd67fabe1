// ulpgate drift: replays a training run with float kernels on chosen targets,
// precisions and variants beside the exact shadow run; prints a table of the
// runs (and with --details each run's epochs and in-situ errors), attributes
// a run's deviation to the ops of the step (--attribute), places loss curves
// recorded elsewhere beside the runs (--compare), writes the JSON report and
// the SVG of the loss curves.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "kernels/narrow_formats.h"
#include "suites/reports/number_text.h"
#include "suites/drift/attribution.h"
#include "suites/drift/curves.h"
#include "suites/drift/report.h"
#include "suites/drift/run.h"
#include "suites/reports/report.h"
#include "suites/drift/kernels.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/investigate/recorded_ops.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/drift_chart.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct DriftArgs {
  std::string scenario;
  std::string config_path;
  std::string target = "best";
  std::vector<std::string> dtypes;
  std::vector<std::string> variants;
  size_t epochs = 0;
  bool details = false;
  bool attribute = false;
  std::vector<std::string> compare;
  std::vector<std::string> labels;
  unsigned threads = 0;
  std::string json_path;
  std::string svg_path;
  std::string curves_dir;
};

std::string Sci(double x) { return std::isfinite(x) ? fmt::format("{:.3e}", x) : fmt::format("{}", x); }
std::string Signed(double x) {
  return std::isfinite(x) ? fmt::format("{:+.3e}", x) : fmt::format("{}", x);
}
std::string Percent(double x) {
  return std::isfinite(x) ? fmt::format("{:+.1f}%", 100 * x) : std::string("-");
}

// The lag at the last lag epoch: "+3", "not reached".
std::string FinalLag(const CurveSummary& s, const char* never = "not reached") {
  if (s.lags.empty()) return "-";
  const LagAt& last = s.lags.back();
  return last.lag ? fmt::format("{:+d}", *last.lag) : std::string(never);
}

std::string Lags(const CurveSummary& s) {
  std::string lags;
  for (const LagAt& lag : s.lags) {
    lags += fmt::format("{}{}: {}", lags.empty() ? "" : ", ", lag.epoch,
                        lag.lag ? fmt::format("{:+d}", *lag.lag) : std::string("not reached"));
  }
  return lags;
}

// One table per precision, runs named by what tells them apart within it.
void PrintRunTable(const DriftResult& d, const std::vector<const FloatRunResult*>& runs) {
  std::vector<std::string> precisions;
  for (const FloatRunResult* r : runs) {
    const std::string p = r->config.precision.Name();
    if (std::find(precisions.begin(), precisions.end(), p) == precisions.end()) precisions.push_back(p);
  }
  for (const std::string& precision : precisions) {
    std::vector<const FloatRunResult*> group;
    for (const FloatRunResult* r : runs) {
      if (r->config.precision.Name() == precision) group.push_back(r);
    }
    if (precisions.size() > 1 || precision != "f32") {
      std::cout << fmt::format("\n{}: {}\n", precision, PrecisionDescription(group[0]->config.precision));
    }
    const std::vector<std::string> names = RunShortNames(group);
    TextTable table({"run", "final loss", "final dev.", "max dev.", "lag", "stalled", "param ULP",
                     std::string(kDriftTanhBwd) + " ULP"});
    table.SetLeftAligned({0});
    for (size_t i = 0; i < group.size(); ++i) {
      const FloatRunResult& r = *group[i];
      const auto tanh_layer = r.in_situ.find(std::string_view(kDriftTanhBwd));
      table.AddRow({names[i], fmt::format("{:.9g}", r.loss.back()),
                    Signed(r.summary.final_signed_deviation), Sci(r.summary.max_relative_deviation),
                    FinalLag(r.summary, "never"), r.summary.stalled ? "STALLED" : "no",
                    FormatUlp(r.param_max_ulp.back()),
                    tanh_layer == r.in_situ.end() ? "-"
                                                  : FormatUlp(tanh_layer->second.max_ulp())});
    }
    table.Print(std::cout, "  ");
  }
  std::cout << fmt::format("\nexact run: final loss {:.9g}\n", d.reference.loss.back());
  PrintWrapped(std::cout,
               fmt::format("final dev. = (run - exact) / exact at the last epoch; max dev.: the "
                           "largest |run - exact| / exact over the epochs; lag: how many epochs "
                           "later than the exact run the run reaches the exact run's last loss "
                           "(never: not within the run); stalled: its loss falls over the last "
                           "quarter by less than a tenth of the exact run's fall and ends above "
                           "it; param ULP: the largest distance of a parameter to the exact "
                           "run's after the last epoch, in ULPs of the master format; {0} ULP: "
                           "the largest in-situ error of {0}'s outputs (--details: every op)",
                           kDriftTanhBwd));
}

// The format an in-situ histogram measured, by its bound count (precision
// + 3): unique among the formats training runs compute in.
std::string InSituFormatName(const ErrorStatistics& s) {
  if (s.bounds().size() == static_cast<size_t>(HistogramBoundCount(kBinary32))) return kBinary32.name;
  for (const NarrowFormat& f : kNarrowFormats) {
    if (s.bounds().size() == static_cast<size_t>(HistogramBoundCount(*f.format))) return f.format->name;
  }
  return "?";
}

void PrintRunDetails(const DriftResult& d, const FloatRunResult& r) {
  std::cout << "\nrun " << r.config.Label() << '\n';
  TextTable table({"epoch", "reference loss", "run loss", "rel. deviation", "param max rel",
                   "param max ULP"});
  std::vector<size_t> epochs = {0};
  for (size_t e : LagEpochs(d.epochs)) {
    if (e != epochs.back()) epochs.push_back(e);
  }
  for (size_t e : epochs) {
    table.AddRow({std::to_string(e), fmt::format("{:.9g}", d.reference.loss[e]),
                  fmt::format("{:.9g}", r.loss[e]),
                  Sci(std::fabs(r.loss[e] - d.reference.loss[e]) / d.reference.loss[e]),
                  Sci(r.param_max_relative[e]), FormatUlp(r.param_max_ulp[e])});
  }
  table.Print(std::cout, "  ");
  std::cout << "  ";
  PrintWrapped(std::cout,
               fmt::format("final rel. deviation {}, max {} (epoch {}); lag (epochs) at {}{}",
                           Sci(r.summary.final_relative_deviation),
                           Sci(r.summary.max_relative_deviation), r.summary.max_deviation_epoch,
                           Lags(r.summary), r.summary.stalled ? "; STALLED" : ""),
               4, 2);
  if (r.in_situ.empty()) return;
  TextTable situ({"in-situ op", "format", "outputs", "max ULP", "mean ULP", "correctly rounded",
                  "special"});
  situ.SetLeftAligned({0, 1});
  for (const auto& [op, s] : r.in_situ) {
    situ.AddRow({op, InSituFormatName(s),
                 std::to_string(s.n()), FormatUlp(s.max_ulp()),
                 FormatUlp(s.mean_ulp()),
                 fmt::format("{:.1f}%", 100.0 * s.correctly_rounded() / std::max<uint64_t>(s.n(), 1)),
                 std::to_string(s.special_mismatch())});
  }
  situ.Print(std::cout, "  ");
}

void PrintAttribution(const Attribution& a) {
  std::cout << "\nattribution of " << a.full->config.Label() << '\n';
  std::cout << fmt::format("  the float run: final dev. {}, lag at end {}{}\n",
                           Signed(a.full->summary.final_signed_deviation), FinalLag(a.full->summary),
                           a.stalled ? ", STALLED" : "");
  TextTable table({"op", "share", "alone: final dev.", "alone: param max rel", "alone: lag at end",
                   "alone stalls", "without: final dev."});
  table.SetLeftAligned({0});
  for (const OpShare& s : a.ops) {
    table.AddRow({StepOpName(s.op), Percent(s.share), Signed(s.alone->summary.final_signed_deviation),
                  Sci(s.alone->param_max_relative.back()), FinalLag(s.alone->summary),
                  s.alone->summary.stalled ? "yes" : "no",
                  Signed(s.without->summary.final_signed_deviation)});
  }
  table.AddRow({"(interaction)", Percent(a.interaction), "", "", "", "", ""});
  table.Print(std::cout, "  ");
  std::cout << "  ";
  PrintWrapped(std::cout,
               "alone: only that op rounded, every other exact; without: only that op exact. "
               "share = alone's final dev. / the float run's; shares and the interaction add up "
               "to 100%.",
               2, 2);
  if (!a.ops.empty()) {
    std::cout << fmt::format("  dominant op: {} ({} of the final loss deviation)\n",
                             StepOpName(a.ops.front().op), Percent(a.ops.front().share));
  }
  if (a.stalled) {
    std::vector<std::string> alone, without;
    for (StepOp op : a.stalls_alone) alone.push_back(StepOpName(op));
    for (StepOp op : a.unstalled_without) without.push_back(StepOpName(op));
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("the run stalls; alone, {} stall{} it; {} exact, it learns again",
                             alone.empty() ? "no single op" : fmt::format("{}", fmt::join(alone, ", ")),
                             alone.size() == 1 ? "s" : "",
                             without.empty() ? "with no single op"
                                             : fmt::format("with {}", fmt::join(without, " or "))),
                 2, 2);
  }
}

void PrintComparison(const CurveComparison& c, const DriftResult& d) {
  std::string title = fmt::format("recorded curve {} ({}): {} epochs", c.curve.label, c.curve.path,
                                  c.curve.loss.size());
  if (c.curve.loss.size() != d.epochs) {
    title += fmt::format(" (the runs have {}: {} compared)", d.epochs, c.epochs);
  }
  std::cout << '\n';
  PrintWrapped(std::cout, title, 2);
  std::cout << "  ";
  PrintWrapped(std::cout,
               fmt::format("final loss {:.9g}, exact {:.9g}: final dev. {}, max {} (epoch {}); lag "
                           "(epochs) at {}{}",
                           c.curve.loss[c.epochs - 1], d.reference.loss[c.epochs - 1],
                           Signed(c.summary.final_signed_deviation),
                           Sci(c.summary.max_relative_deviation), c.summary.max_deviation_epoch,
                           Lags(c.summary), c.summary.stalled ? "; STALLED" : ""),
               4, 2);
  if (!d.runs.empty()) {
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("closest ulpgate run: {} (mean |curve - run| / exact {})",
                             d.runs[c.closest].config.Label(), Sci(c.distance[c.closest])),
                 4, 2);
  }
}

// The models an op's recorded outputs follow, in a line: the first few and a
// count, or none with the nearest.
std::string FollowedText(const RecordedOpModels& m) {
  if (m.matching.empty()) {
    return m.nearest.empty()
               ? std::string("none of its models")
               : fmt::format("none (nearest {}: {} of {} differ)", m.nearest, m.nearest_mismatches,
                             m.outputs);
  }
  constexpr size_t kShown = 3;
  std::vector<std::string> shown(m.matching.begin(),
                                 m.matching.begin() + std::min(kShown, m.matching.size()));
  return fmt::format("{}{}", fmt::join(shown, ", "),
                     m.matching.size() > kShown ? fmt::format(" and {} more", m.matching.size() - kShown)
                                                : std::string());
}

// A curve's recorded ops against their models (check's matching).
std::vector<RecordedOpModels> MatchCurveOps(const RecordedCurve& curve, unsigned threads) {
  std::vector<RecordedOpModels> out;
  if (curve.ops.is_null()) return out;
  for (const RecordedOp& op : ParseRecordedOps(curve.ops, curve.path)) {
    out.push_back(MatchRecordedOp(op, threads));
  }
  return out;
}

void PrintCurveOps(const std::vector<RecordedOpModels>& ops) {
  if (ops.empty()) return;
  std::cout << fmt::format("  its ops, as recorded over the first {} calls of its step, against their models:\n",
                           ops.front().op.calls);
  TextTable table({"op", "layer", "dtype", "outputs", "> bound", "follows bit for bit"});
  table.SetLeftAligned({0, 2, 5});
  for (const RecordedOpModels& m : ops) {
    table.AddRow({m.op.op, std::to_string(m.op.layer), m.op.dtype, std::to_string(m.outputs),
                  std::to_string(m.above_bound), FollowedText(m)});
  }
  table.Print(std::cout, "    ");
}

// One op of two curves whose recorded ops are compared.
struct OpPair {
  const RecordedOpModels* a;
  const RecordedOpModels* b;
  OpModelDifference difference;
  std::string experiment;  // the curve whose experiment settled the cause
  std::string experiment_setting;
};

// Where the models leave an op's difference unsettled, an experiment settles
// it: a third curve made with a setting that removes one cause, whose op
// follows a model in common with the first curve's, shows that removing that
// cause removes the difference.
void SettleByExperiments(std::vector<OpPair>& pairs, size_t a, size_t b,
                         const std::vector<RecordedCurve>& curves,
                         const std::vector<std::vector<RecordedOpModels>>& ops) {
  // One of the two is the experiment on the other: the setting is all that
  // differs between them, so an op that differs differs by what it removes.
  for (size_t e : {a, b}) {
    const RecordedCurve& other = curves[e == a ? b : a];
    const std::optional<ModelCause> removes = ParseModelCause(curves[e].experiment_removes);
    if (!removes || !other.experiment_removes.empty() || other.precision.empty() ||
        other.precision != curves[e].precision || other.device != curves[e].device ||
        other.compiled != curves[e].compiled) {
      continue;
    }
    for (OpPair& p : pairs) {
      if (p.difference.cause) continue;
      p.difference.cause = *removes;
      p.difference.causes = {*removes};
      p.difference.evidence = "experiment";
      p.experiment = curves[e].label;
      p.experiment_setting = curves[e].experiment_setting;
    }
  }
  for (OpPair& p : pairs) {
    if (p.difference.cause) continue;
    for (size_t e = 0; e < curves.size(); ++e) {
      const std::optional<ModelCause> removes = ParseModelCause(curves[e].experiment_removes);
      if (e == a || e == b || !removes) continue;
      for (const RecordedOpModels& m : ops[e]) {
        if (m.op.op != p.a->op.op || m.op.layer != p.a->op.layer) continue;
        const OpModelDifference with = CompareOpModels(*p.a, m);
        if (!with.cause || *with.cause != ModelCause::kNone) continue;
        p.difference.cause = *removes;
        p.difference.causes = {*removes};
        p.difference.evidence = "experiment";
        p.difference.model_a = with.model_a;
        p.experiment = curves[e].label;
        p.experiment_setting = curves[e].experiment_setting;
      }
    }
  }
}

// The ops two curves both recorded (the same op of the same layer), in the
// first curve's order.
std::vector<OpPair> PairOps(const std::vector<RecordedOpModels>& a,
                            const std::vector<RecordedOpModels>& b) {
  std::vector<OpPair> pairs;
  for (const RecordedOpModels& x : a) {
    for (const RecordedOpModels& y : b) {
      if (x.op.op == y.op.op && x.op.layer == y.op.layer) {
        pairs.push_back({&x, &y, CompareOpModels(x, y), "", ""});
      }
    }
  }
  return pairs;
}

std::string CausesText(const OpModelDifference& d) {
  if (!d.cause) return "not settled by the models";
  std::vector<std::string> names;
  for (ModelCause c : d.causes) names.push_back(ModelCauseName(c));
  return names.empty() ? std::string(ModelCauseName(*d.cause)) : fmt::format("{}", fmt::join(names, " and "));
}

void PrintOpDifferences(const std::string& la, const std::string& lb, const std::vector<OpPair>& pairs) {
  std::vector<const OpPair*> differ;
  for (const OpPair& p : pairs) {
    if (!p.difference.cause || *p.difference.cause != ModelCause::kNone) differ.push_back(&p);
  }
  std::cout << '\n';
  if (differ.empty()) {
    PrintWrapped(std::cout,
                 fmt::format("ops of {} and {}: each of the {} follows a model in common (cause none)",
                             la, lb, pairs.size()),
                 2);
    return;
  }
  PrintWrapped(std::cout,
               fmt::format("ops whose models differ between {} and {} ({} of {}; every other follows "
                           "a model in common):",
                           la, lb, differ.size(), pairs.size()),
               2);
  for (const OpPair* p : differ) {
    const OpModelDifference& d = p->difference;
    std::string why;
    if (d.evidence == "models") {
      why = fmt::format("{} follows {}, {} follows {}", la, d.model_a, lb, d.model_b);
    } else {
      const bool a_none = p->a->matching.empty();
      if (d.evidence == "experiment" && (p->experiment == la || p->experiment == lb)) {
        why = fmt::format("{} follows {}, {} {}; {} is {} with {} alone changed", la,
                          p->a->matching.empty() ? "no model of the op on the operands recorded for it"
                                                 : FollowedText(*p->a),
                          lb,
                          p->b->matching.empty() ? "no model of the op on the operands recorded for it"
                                                 : "follows " + FollowedText(*p->b),
                          p->experiment, p->experiment == la ? lb : la, p->experiment_setting);
      } else if (d.evidence == "experiment") {
        why = fmt::format("{} follows {}, {} {}; {} ({}) follows {} as {} does", la,
                          FollowedText(*p->a), lb,
                          p->b->matching.empty() ? "none of them on the operands recorded for it"
                                                 : "follows " + FollowedText(*p->b),
                          p->experiment, p->experiment_setting, d.model_a, la);
      }
      const RecordedOpModels& none = a_none ? *p->a : *p->b;
      const RecordedOpModels& some = a_none ? *p->b : *p->a;
      if (d.evidence != "experiment") {
        why = fmt::format("{} follows {}; {} follows none of them on the operands recorded for it",
                          a_none ? lb : la, FollowedText(some), a_none ? la : lb);
      }
      if (d.evidence == "experiment") {
      } else if (d.evidence == "exceeds bound") {
        why += fmt::format(" and {} of its {} outputs exceed the error bound on them: it read "
                           "them before they were rounded (ops fused into one loop)",
                           none.above_bound, none.outputs);
      } else if (d.evidence == "nearest model") {
        why += fmt::format(" (nearest {}, {} of {} outputs differ): the same arithmetic on operands "
                           "it read before they were rounded (ops fused into one loop)",
                           none.nearest, none.nearest_mismatches, none.outputs);
      } else if (!none.nearest.empty()) {
        why += fmt::format(" (nearest {}, {} of {} outputs differ)", none.nearest,
                           none.nearest_mismatches, none.outputs);
      }
    }
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("{} (layer {}, {}): {}: {}", p->a->op.op, p->a->op.layer, p->a->op.dtype,
                             CausesText(d), why),
                 4, 2);
  }
}

nlohmann::ordered_json RecordedOpJson(const RecordedOpModels& m) {
  nlohmann::ordered_json j;
  j["op"] = m.op.op;
  j["layer"] = m.op.layer;
  j["dtype"] = m.op.dtype;
  j["file"] = m.op.file;
  j["calls"] = m.op.calls;
  j["outputs"] = m.outputs;
  j["above_bound"] = m.above_bound;
  j["matching"] = m.matching;
  if (m.matching.empty() && !m.nearest.empty()) {
    j["nearest"] = m.nearest;
    j["nearest_mismatches"] = m.nearest_mismatches;
  }
  return j;
}

nlohmann::ordered_json OpDifferenceJson(const std::string& la, const std::string& lb,
                                        const std::vector<OpPair>& pairs) {
  nlohmann::ordered_json j;
  j["curves"] = {la, lb};
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const OpPair& p : pairs) {
    const OpModelDifference& d = p.difference;
    nlohmann::ordered_json o;
    o["op"] = p.a->op.op;
    o["layer"] = p.a->op.layer;
    o["dtype"] = p.a->op.dtype;
    o["cause"] = d.cause ? nlohmann::ordered_json(ModelCauseName(*d.cause)) : nlohmann::ordered_json();
    nlohmann::ordered_json causes = nlohmann::ordered_json::array();
    for (ModelCause c : d.causes) causes.push_back(ModelCauseName(c));
    o["causes"] = causes;
    o["evidence"] = d.evidence;
    if (!p.experiment.empty()) {
      o["experiment"] = {{"curve", p.experiment}, {"setting", p.experiment_setting}};
    }
    o["models"] = {d.model_a, d.model_b};
    // Whether each side follows its model, or it is only its nearest.
    o["followed"] = {!p.a->matching.empty(), !p.b->matching.empty()};
    ops.push_back(o);
  }
  j["ops"] = ops;
  return j;
}

// Each float run's losses as "epoch,loss" rows (17 digits: every loss reads
// back exactly), named after the run: what --compare reads back.
void WriteCurves(const std::string& dir, const DriftResult& d) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw InputError(dir + ": cannot create the folder (" + error.message() + ")");
  for (const FloatRunResult& r : d.runs) {
    std::string name = r.config.Label();
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '@') c = '_';
    }
    std::string text = "epoch,loss\n";
    for (size_t e = 0; e < r.loss.size(); ++e) text += fmt::format("{},{:.17g}\n", e, r.loss[e]);
    WriteTextFile((std::filesystem::path(dir) / (name + ".csv")).string(), text);
  }
  std::cerr << fmt::format("drift: {} loss curves written to {}\n", d.runs.size(), dir);
}

void Drift(const DriftArgs& args) {
  if (!args.scenario.empty() && !args.config_path.empty()) {
    throw UsageError("--scenario and --config exclude each other");
  }
  if (args.labels.size() > args.compare.size()) {
    throw UsageError("--label names a --compare curve: give one --compare FILE per --label");
  }
  const Scenario scenario = args.config_path.empty()
                                ? BuiltinScenario(args.scenario.empty() ? "seed" : args.scenario)
                                : ReadScenarioFile(args.config_path);
  std::vector<DriftPrecision> precisions;
  for (const std::string& list : args.dtypes) {
    for (const std::string& name : list == "all" ? DriftPrecisionNames() : SplitList(list)) {
      precisions.push_back(ParseDriftPrecision(name));
    }
  }
  if (precisions.empty()) precisions.push_back(scenario.precision());
  // Curves first: a bad file is an error before minutes of training.
  std::vector<RecordedCurve> curves;
  for (size_t i = 0; i < args.compare.size(); ++i) {
    const std::string label = i < args.labels.size()
                                  ? args.labels[i]
                                  : std::filesystem::path(args.compare[i]).stem().string();
    curves.push_back(ReadLossCurve(args.compare[i], label));
  }
  // Their recorded ops against their models: check's work, done before the
  // training too.
  std::vector<std::vector<RecordedOpModels>> curve_ops;
  for (const RecordedCurve& curve : curves) curve_ops.push_back(MatchCurveOps(curve, args.threads));
  std::vector<std::string> skipped;
  const std::vector<const TargetInfo*> targets = ResolveTargets(args.target, &skipped);
  std::vector<RunConfig> runs;
  for (const DriftPrecision& precision : precisions) {
    std::vector<std::string> specs = args.variants;
    if (specs.empty()) {
      for (const std::string& v : VariantNames(*FindElementwiseOp(kDriftTanhBwd), *precision.compute)) {
        specs.push_back(std::string(kDriftTanhBwd) + "=" + v);
      }
      if (args.attribute) specs = {""};  // the default run only
    }
    for (const TargetInfo* target : targets) {
      for (const std::string& spec : specs) runs.push_back(ParseRunConfig(spec, target, precision));
    }
  }
  ProgressLine progress("drift", "epochs");
  auto on_epoch = [&progress](size_t done, size_t total) { progress(done, total); };
  AttributionResult attribution;
  if (args.attribute) {
    attribution = RunAttribution(scenario, runs, args.epochs, on_epoch, args.threads);
  } else {
    attribution.drift = RunDrift(scenario, runs, args.epochs, on_epoch, args.threads);
  }
  const double seconds = progress.Seconds();
  progress.Clear();
  const DriftResult& d = attribution.drift;
  std::vector<std::string> precision_names;
  for (const DriftPrecision& p : precisions) precision_names.push_back(p.Name());
  PrintWrapped(std::cout,
               fmt::format("drift: scenario {} ({}), {} epochs, {} float runs in {} on {}",
                           scenario.name, scenario.description, d.epochs, runs.size(),
                           fmt::join(precision_names, ", "), args.target),
               2);
  std::vector<const FloatRunResult*> float_runs;
  for (size_t i = 0; i < runs.size(); ++i) float_runs.push_back(&d.runs[i]);
  PrintRunTable(d, float_runs);
  if (args.details) {
    for (const FloatRunResult* r : float_runs) PrintRunDetails(d, *r);
  }
  for (const Attribution& a : attribution.attributions) PrintAttribution(a);
  // The report holds the float runs; attribution runs are summarized under
  // "attribution".
  DriftResult report = d;
  report.runs.resize(runs.size());
  std::vector<CurveComparison> comparisons;
  for (size_t i = 0; i < curves.size(); ++i) {
    comparisons.push_back(CompareCurve(curves[i], report));
    PrintComparison(comparisons.back(), report);
    PrintCurveOps(curve_ops[i]);
  }
  // Every two curves with recorded ops (eager and compiled, say): the ops
  // whose models differ, and why.
  nlohmann::ordered_json op_models = nlohmann::ordered_json::array();
  for (size_t i = 0; i < curves.size(); ++i) {
    for (size_t k = i + 1; k < curves.size(); ++k) {
      std::vector<OpPair> pairs = PairOps(curve_ops[i], curve_ops[k]);
      if (pairs.empty()) continue;
      SettleByExperiments(pairs, i, k, curves, curve_ops);
      PrintOpDifferences(curves[i].label, curves[k].label, pairs);
      op_models.push_back(OpDifferenceJson(curves[i].label, curves[k].label, pairs));
    }
  }
  std::cerr << fmt::format("drift: {} epochs x ({} runs + the exact run) in {:.2f} s\n", d.epochs,
                           d.runs.size(), seconds);
  if (!args.curves_dir.empty()) WriteCurves(args.curves_dir, report);
  if (args.json_path.empty() && args.svg_path.empty()) return;
  nlohmann::ordered_json j = DriftJson(report);
  for (const Attribution& a : attribution.attributions) j["attribution"].push_back(AttributionJson(a));
  for (size_t i = 0; i < comparisons.size(); ++i) {
    nlohmann::ordered_json c = CurveComparisonJson(comparisons[i], report);
    if (!curve_ops[i].empty()) {
      for (const RecordedOpModels& m : curve_ops[i]) c["ops"].push_back(RecordedOpJson(m));
    }
    j["compare"].push_back(c);
  }
  if (!op_models.empty()) j["op_models"] = op_models;
  if (!args.json_path.empty()) WriteJsonFile(args.json_path, j);
  if (!args.svg_path.empty()) WriteTextFile(args.svg_path, DriftChartSvg(j));
}

}  // namespace

void AddDriftCommand(CLI::App& app) {
  auto args = std::make_shared<DriftArgs>();
  auto* cmd = app.add_subcommand(
      "drift", "Replay a training run with float kernels beside an exact run; measure the drift");
  cmd->add_option("--scenario", args->scenario, "Built-in scenario: seed (default), saturating");
  cmd->add_option("--config", args->config_path, "Scenario JSON file (see docs/drift.md)");
  cmd->add_option("--target", args->target,
                  "Target(s): a name, a comma-separated list, best (default) or all")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtypes,
                  "Precision(s) the float runs train in: f32, bf16, f16 (everything in that "
                  "format), mixed_bf16, mixed_f16 (f32 master weights and optimizer, layers in "
                  "bf16/f16), a comma-separated list, or all; default: the scenario's (f32)");
  cmd->add_option("--variants", args->variants,
                  fmt::format("One float run per value (and per precision and target): "
                              "op=variant,... over the defaults ({0}=mac or, in a 16-bit format, "
                              "mac_opmath, linear=sequential_fma,bias=sequential,mse=sequential_fma,"
                              "sgd=unfused); default: one run per {0} variant of the format",
                              kDriftTanhBwd));
  cmd->add_option("--epochs", args->epochs, "Epochs (default: the scenario's)")
      ->check(CountValidator("the number of epochs", 1, kMaxEpochs));
  cmd->add_flag("--details", args->details, "Print each run's epochs and its in-situ errors per op");
  cmd->add_flag("--attribute", args->attribute,
                "Attribute each run's deviation to the ops of the step: per op, the run with only "
                "that op rounded and with only that op exact (default: the default run spec only)");
  cmd->add_option("--compare", args->compare,
                  "A loss curve recorded elsewhere (JSON list, CSV or .npy of per-epoch losses) to "
                  "place beside the runs (repeatable); a JSON curve's recorded ops "
                  "(torch_drift.py --record-ops) are matched against their models, and between "
                  "two curves the ops whose models differ are named with the cause");
  cmd->add_option("--label", args->labels,
                  "The name of the --compare curve of the same position (default: the file's stem)");
  AddThreadsOption(cmd, &args->threads);
  cmd->add_option("--json", args->json_path, "Write the JSON report here");
  cmd->add_option("--svg", args->svg_path, "Write the loss curves as SVG here");
  cmd->add_option("--curves", args->curves_dir,
                  "Write each float run's losses to this folder, one CSV (epoch,loss) per run, "
                  "named after its label: curves --compare reads");
  cmd->callback([args] { Drift(*args); });
}

}  // namespace ulpgate
