// `ulpgate check`: outputs made elsewhere against the exact value and the
// models; `ulpgate suite export`: a suite's inputs for another framework.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cmath>
#include <fstream>
#include <iostream>
#include <set>

#include "oracles/float_text.h"
#include "oracles/model_expr.h"
#include "suites/reports/number_text.h"
#include "suites/investigate/check.h"
#include "suites/investigate/check_models.h"
#include "suites/inputs/check_files.h"
#include "suites/engine/reduction_cases.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/inputs/numpy_files.h"
#include "suites/engine/op_table.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/plugins.h"
#include "suites/reports/replay.h"
#include "suites/reports/report.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/inputs/elementwise_suites.h"
#include "tools/cast_commands.h"
#include "tools/cmd_blockquant.h"
#include "tools/cli.h"
#include "tools/faults.h"
#include "tools/progress.h"
#include "tools/run_limits.h"
#include "tools/special_causes_text.h"
#include "tools/text_table.h"

namespace ulpgate {

namespace {

constexpr const char* kCheckReportFormat = "ulpgate-check-1";

struct CheckArgs {
  std::string op = std::string(DefaultElementwiseOp().name);
  bool op_given = false;  // --op given; else the plugins' op, if they give one
  std::string dtype;      // empty: the plugins' or the files' (CheckedDtype), else f32
  std::string inputs_path, outputs_spec, label, json_path, models_path;
  std::vector<std::string> model_specs;
  std::vector<std::string> require_models;
  size_t period = 0;
  double max_ulp = -1;
  double max_bound_fraction = -1;  // < 0: no limit
  unsigned threads = 0;
  bool quiet = false;
  std::vector<std::string> plugins;
  std::string variant;  // the plugin kernel whose outputs are checked
};

// The plugin kernel `check --plugin` runs: the one named by --variant, or the
// only one the plugins have.
const PluginKernel& CheckedKernel(const CheckArgs& args, const TargetInfo** target) {
  if (!args.outputs_spec.empty()) {
    throw UsageError("--plugin computes the outputs: give --outputs or --plugin, not both");
  }
  const std::vector<const TargetInfo*> plugins = LoadPlugins(args.plugins);
  RequirePluginOp(plugins, args.op);
  // Named as every command names kernels (suites/engine/kernel_names.h).
  const std::vector<std::string> names =
      args.variant.empty() ? std::vector<std::string>() : std::vector<std::string>{args.variant};
  std::vector<std::pair<const PluginKernel*, const TargetInfo*>> chosen;
  std::string all, matching;
  for (const TargetInfo* t : plugins) {
    for (const PluginKernel& k : PluginOf(*t)->kernels) {
      if (k.format->name != args.dtype || k.op != args.op) continue;
      all += (all.empty() ? "" : ", ") + k.variant + "@" + t->name;
      if (!KernelSelected(names, k.variant, t->name)) continue;
      chosen.emplace_back(&k, t);
      matching += (matching.empty() ? "" : ", ") + k.variant + "@" + t->name;
    }
  }
  if (chosen.empty()) {
    if (all.empty()) throw UsageError("--plugin: no " + args.op + " kernel in " + args.dtype);
    throw UsageError("--variant " + args.variant + ": no such plugin kernel in " + args.dtype +
                     " (" + all + ")");
  }
  if (chosen.size() > 1) {
    throw UsageError((args.variant.empty() ? std::string("--plugin") : "--variant " + args.variant) +
                     ": several kernels (" + matching + "): name one with --variant NAME or NAME@TARGET");
  }
  *target = chosen.front().second;
  return *chosen.front().first;
}

// Never printed below its value: 0.5000091 reads "0.5001", not "0.5".
std::string Ulp(double e) { return FormatUlp(e); }

// --max-ulp over a case's statistics: the failure, or nothing.
void AddMaxUlpFailure(const CheckArgs& args, const ErrorStatistics& s,
                      std::vector<std::string>& failures) {
  if (args.max_ulp < 0 || (s.max_ulp() <= args.max_ulp && s.special_mismatch() == 0)) return;
  failures.push_back(fmt::format(
      "max ULP error {} above --max-ulp {}{}", Ulp(s.max_ulp()), args.max_ulp,
      s.special_mismatch() > 0 ? fmt::format(", {} special mismatches", s.special_mismatch()) : ""));
}

// --max-bound-fraction over a case's bound fractions: the failure, or nothing.
void AddBoundFailure(const CheckArgs& args, const BoundFractionStatistics& b,
                     std::vector<std::string>& failures) {
  if (args.max_bound_fraction < 0 || b.max_fraction() <= args.max_bound_fraction) return;
  failures.push_back(fmt::format("max bound fraction {} above --max-bound-fraction {} ({} outputs above "
                                 "the bound)",
                                 Ulp(b.max_fraction()), args.max_bound_fraction, b.above_one()));
}

bool HasLimits(const CheckArgs& args) {
  return args.max_ulp >= 0 || args.max_bound_fraction >= 0 || !args.require_models.empty();
}

// The verdict lines, the JSON report and the exit status, for either family.
void FinishCheck(const CheckArgs& args, const std::string& label,
                 const std::vector<std::string>& failures, const nlohmann::ordered_json& record) {
  if (HasLimits(args)) {
    StdoutToStderr guard(args.json_path == "-");
    std::cout << '\n';
    for (const auto& f : failures) std::cout << "  " << label << ": " << f << '\n';
    std::cout << (failures.empty() ? "check: PASS\n" : "check: FAIL\n");
  }
  if (!args.json_path.empty()) {
    nlohmann::ordered_json report;
    report["format"] = kCheckReportFormat;
    report["tool"] = ToolVersion();
    report["label"] = label;
    report["inputs"] = args.inputs_path;
    report["outputs"] = args.outputs_spec;
    if (!args.plugins.empty()) {
      // The kernel that computed the outputs, and where it comes from: what
      // a replay of the check names.
      const TargetInfo* target = nullptr;
      const PluginKernel& kernel = CheckedKernel(args, &target);
      report["kernel"] = kernel.variant + "@" + target->name;
      AddSourceJson(PluginOf(*target)->Source(), report);
    }
    if (HasLimits(args)) {
      report["verdict"] = failures.empty() ? "PASS" : "FAIL";
      report["failures"] = failures;
    }
    report["results"] = {record};
    WriteJsonFile(args.json_path, report);
  }
  if (!failures.empty()) ExitStatus() = 1;
}

// The plugin kernel whose outputs `spec` checks faulted (in its own process):
// the fault, its input and replay instead of a measurement, the report with
// the faulted case, exit status 3.
void ReportCheckFault(const CheckArgs& args, const CheckSpec& spec, const KernelFault& fault) {
  CheckSpec inputs_only = spec;  // the same inputs, without calling the kernel again
  inputs_only.outputs_from = [](const void* const*, void*, size_t) {};
  const CheckRequest request = ReadCheckRequest(inputs_only, args.models_path);
  const size_t at = spec.label.rfind('@');
  CaseResult r;
  r.op = spec.op;
  r.variant = at == std::string::npos ? spec.label : spec.label.substr(0, at);
  r.target = at == std::string::npos ? std::string() : spec.label.substr(at + 1);
  r.dtype = spec.dtype;
  r.suite = "file:" + spec.inputs;
  r.n = request.inputs.size();
  r.fault = fault;
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintKernelFault(std::cout, r, request.inputs);
  }
  nlohmann::ordered_json record = CaseJson(r, request.inputs);
  AddFaultReplay(&record, r, request.inputs);
  FinishCheck(args, spec.label, {}, record);
  ExitStatus() = kExitKernelFault;
}

void PrintCheck(const CheckRequest& request, const CheckResult& result, bool quiet) {
  const FloatFormat& format = *request.format;
  const CaseResult& r = result.result;
  const ErrorStatistics& s = r.stats;
  auto value = [&](float v) { return HexFloat(v) + " (" + BitsText(format, EncodeBits(format, v)) + ")"; };
  const ElementwiseOpInfo& op = *request.op;
  auto operands = [&](uint64_t i, bool bits) {
    std::string text;
    for (size_t k = 0; k < request.inputs.columns.size(); ++k) {
      const float v = request.inputs.columns[k][i];
      text += fmt::format("{}{} = {}", k ? ", " : "", request.inputs.operand_names[k],
                          bits ? value(v) : HexFloat(v));
    }
    return text;
  };
  PrintWrapped(std::cout,
               fmt::format("check: {} as {} in {} ({} outputs; inputs {})", request.label, op.name,
                           format.name, r.n, request.inputs.source),
               2);
  std::cout << '\n';
  // The bound fraction: the error against what a backward-stable evaluation
  // of the definition may make (1: as bad as the formula allows).
  TextTable summary({"max_ulp", "mean_ulp", "p50", "p99", "p99.9", "correctly_rounded", "special",
                     "signed_zero", "bound_max"});
  summary.AddRow({Ulp(s.max_ulp()), Ulp(s.mean_ulp()), Ulp(s.Percentile(50)), Ulp(s.Percentile(99)),
                  Ulp(s.Percentile(99.9)),
                  fmt::format("{:.2f}%", 100.0 * s.correctly_rounded() / std::max<uint64_t>(s.n(), 1)),
                  std::to_string(s.special_mismatch()), std::to_string(s.signed_zero_mismatch()),
                  Ulp(r.bound.max_fraction())});
  summary.Print(std::cout);
  if (s.max_index() >= 0) {
    const uint64_t i = s.max_index();
    std::vector<float> x;
    for (const auto& column : request.inputs.columns) x.push_back(column[i]);
    PrintWrapped(std::cout,
                 fmt::format("worst: {} ULP at input #{}: {}; output {}, exact {}", Ulp(s.max_ulp()),
                             i, operands(i, true), value(request.outputs[i]),
                             OracleOf(op).Exact(x.data()).ToDecimal(17)),
                 7);
  }
  if (r.bound.above_one() > 0) {
    std::cout << fmt::format(
        "EXCEEDS the error bound of a backward-stable evaluation on {} outputs (up to {} times it)\n",
        r.bound.above_one(), Ulp(r.bound.max_fraction()));
  }
  // The outputs are not ulpgate's to recompute: explain shows the exact value
  // and every model's output at the input.
  PrintSpecialCauses(
      std::cout,
      {{request.label, &s, [&](uint64_t i) { return fmt::format("input #{}: {}", i, operands(i, false)); },
        [&](uint64_t i) {
          std::vector<float> x;
          for (const auto& column : request.inputs.columns) x.push_back(column[i]);
          return ExplainModelsCommand(std::string(op.name), request.inputs.operand_names, x);
        }}},
      0);
  std::cout << '\n';
  const auto& matching = r.conformance.matching;
  if (matching.empty()) {
    std::cout << "follows no model bit for bit; nearest first:\n";
  } else {
    std::string names;
    for (const auto& m : matching) names += (names.empty() ? "" : ", ") + m;
    std::cout << "follows bit for bit: " << names << "\n";
  }
  std::vector<const ModelComparison*> order;
  for (const ModelComparison& m : result.models) order.push_back(&m);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return a->mismatches < b->mismatches;
  });
  TextTable models({"model", "mismatches", "share", "expression"});
  models.SetLeftAligned({0, 3});
  for (const ModelComparison* m : order) {
    models.AddRow({m->name + (m->user ? " (yours)" : ""), std::to_string(m->mismatches),
                   fmt::format("{:.2f}%", 100.0 * m->mismatches / std::max<uint64_t>(r.n, 1)),
                   m->expression});
  }
  models.Print(std::cout, "  ");
  if (quiet) return;
  // The nearest model the outputs do not follow: where they differ.
  for (const ModelComparison* m : order) {
    if (m->mismatches == 0) continue;
    std::cout << fmt::format("\nnearest mismatches against {} ({} of {}):\n", m->name, m->mismatches, r.n);
    for (const auto& e : m->nearest) {
      std::cout << "  ";
      PrintWrapped(std::cout,
                   fmt::format("#{}: {}: output {}, model {} ({} ULP apart)", e.index,
                               operands(e.index, false), value(e.output), value(e.model),
                               Ulp(e.apart_ulp)),
                   4, 2);
    }
    if (request.period > 0) {
      std::cout << fmt::format("  by position (index mod {}):", request.period);
      size_t shown = 0;
      for (size_t k = 0; k < request.period; ++k) {
        if (m->by_position[k] == 0) continue;
        if (shown++ % 8 == 0) std::cout << "\n   ";
        std::cout << fmt::format(" {}:{}", k, m->by_position[k]);
      }
      if (shown == 0) std::cout << " none";
      std::cout << fmt::format("\n  ({} of {} positions differ)", shown, request.period);
    }
    std::cout << '\n';
    break;
  }
}



void CheckReduction(const CheckArgs& args, const FloatFormat& format) {
  const ReductionOpInfo& op = *FindReductionOp(args.op);
  if (!args.model_specs.empty() || !args.models_path.empty() || args.period > 0) {
    throw UsageError("--model, --models and --period are for elementwise ops; the linear and MSE "
                     "ops compare with their schedules' models");
  }
  const ReductionInputSet inputs = ReadReductionInputs(op, args.inputs_path, format);
  std::string label = args.label;
  std::vector<std::vector<float>> outputs = ReadReductionOutputs(op, inputs, args.outputs_spec, &label);
  const auto start = std::chrono::steady_clock::now();
  const CaseResult r = RunReductionCheck(inputs, outputs, label, args.threads);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ErrorStatistics& s = r.stats;
  const BoundFractionStatistics& b = r.bound;
  std::vector<std::string> failures;
  AddMaxUlpFailure(args, s, failures);
  AddBoundFailure(args, b, failures);
  for (const std::string& m : args.require_models) {
    if (std::find(r.conformance.matching.begin(), r.conformance.matching.end(), m) ==
        r.conformance.matching.end()) {
      failures.push_back("does not follow " + m);
    }
  }
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintWrapped(std::cout,
                 fmt::format("check: {} as {} in {} (shape {}, {} outputs; inputs {})", label,
                             op.name, format.name, r.shape, r.n, inputs.source),
                 2);
    std::cout << '\n';
    TextTable summary({"max_ulp", "mean_ulp", "p99", "correctly_rounded", "special", "bound_max",
                       "above_bound"});
    summary.AddRow({Ulp(s.max_ulp()), Ulp(s.mean_ulp()), Ulp(s.Percentile(99)),
                    fmt::format("{:.2f}%", 100.0 * s.correctly_rounded() / std::max<uint64_t>(s.n(), 1)),
                    std::to_string(s.special_mismatch()), Ulp(b.max_fraction()),
                    std::to_string(b.above_one())});
    summary.Print(std::cout);
    const std::string bound_name =
        format.bits == 32 ? "the f32 error bound" : std::string("the error bound of f32 accumulation rounded to ") + format.name;
    if (b.above_one() > 0) {
      std::cout << fmt::format(
          "\nEXCEEDS {}: {} of {} outputs, up to {} times the bound: these outputs were not computed "
          "with {} products and sums (TF32 or 16-bit inputs, say)\n",
          bound_name, b.above_one(), r.n, Ulp(b.max_fraction()), format.bits == 32 ? "binary32" : "binary32-accumulated");
    } else {
      std::cout << fmt::format("\nwithin {}: the largest output error is {} of it\n", bound_name,
                               Ulp(b.max_fraction()));
    }
    if (r.conformance.matching.empty()) {
      std::cout << "follows none of the schedules' models bit for bit (a blocked or tiled sum, say)\n";
    } else {
      std::cout << fmt::format("follows bit for bit: {}\n", fmt::join(r.conformance.matching, ", "));
    }
    std::cout.flush();
    std::cerr << fmt::format("checked {} outputs in {:.2f} s\n", r.n, seconds);
  }
  FinishCheck(args, label, failures, ReductionCheckJson(r, inputs));
}

// The op checked: --op, or without it the one the plugins give.
std::string CheckedOp(const CheckArgs& args) {
  if (args.op_given || args.plugins.empty()) return args.op;
  std::string op;
  for (const TargetInfo* t : LoadPlugins(args.plugins)) {
    for (const std::string& of : PluginOf(*t)->ops) {
      if (!op.empty() && of != op) {
        throw UsageError(fmt::format(
            "--plugin: the plugins give {} and {} kernels: name one with --op", op, of));
      }
      op = of;
    }
  }
  return op;
}

// The dtype --dtype names; without it, the one format of the plugins'
// kernels of the op, or the one the NumPy files' dtypes say (float16, a
// bfloat16 void), else f32.
std::string CheckedDtype(const CheckArgs& args) {
  if (!args.dtype.empty()) return args.dtype;
  if (!args.plugins.empty()) {
    std::string dtype;
    for (const TargetInfo* t : LoadPlugins(args.plugins)) {
      for (const PluginKernel& k : PluginOf(*t)->kernels) {
        if (k.op != args.op) continue;
        if (!dtype.empty() && dtype != k.format->name) return "f32";
        dtype = k.format->name;
      }
    }
    return dtype.empty() ? "f32" : dtype;
  }
  const std::string dtype = DtypeOfFiles(args.inputs_path, args.outputs_spec);
  if (dtype.empty()) return "f32";
  const auto& dtypes = GetOp(args.op).dtypes;
  if (std::find(dtypes.begin(), dtypes.end(), dtype) == dtypes.end()) {
    throw UsageError(fmt::format("the files hold {} values, and {} runs in {} only", dtype, args.op,
                                 fmt::join(dtypes, ", ")));
  }
  return dtype;
}

void Check(CheckArgs args) {
  if (const OpInfo* block = FindOp(args.op);
      block != nullptr && block->family == OpFamily::kBlockQuant) {
    if (args.dtype.empty()) throw UsageError("--dtype: the block spec (" + args.op + ")");
    if (args.inputs_path.empty()) {
      throw UsageError("--inputs F.npz: the tensor and its outputs (arrays x, scales, codes)");
    }
    if (!args.outputs_spec.empty() && args.outputs_spec != args.inputs_path) {
      throw UsageError("the outputs of " + args.op + " are arrays of --inputs' .npz (scales, codes)");
    }
    if (args.require_models.size() > 1) throw UsageError("--require-model: one scale rule");
    CheckBlockQuantOp(args.op, args.dtype, args.inputs_path,
                      args.require_models.empty() ? "" : args.require_models.front());
    return;
  }
  if (const OpInfo* cast = FindOp(args.op); cast != nullptr && cast->family == OpFamily::kCast) {
    if (args.dtype.empty()) throw UsageError("--dtype: the cast's destination format");
    if (!args.plugins.empty()) {
      // The plugins' or IUTs' casts compute the codes of the inputs: run's
      // measurement of their kernels alone.
      if (!args.outputs_spec.empty()) {
        throw UsageError("--plugin computes the outputs: give --outputs or --plugin, not both");
      }
      if (args.inputs_path.empty()) throw UsageError("--inputs is required (the sources)");
      if (!args.require_models.empty()) {
        throw UsageError("--require-model with --plugin: each cast is held to the policy it claims");
      }
      RunArgs run;
      run.kernel = args.op;
      run.dtype = args.dtype;
      run.inputs_path = args.inputs_path;
      run.plugins = args.plugins;
      run.variant = args.variant.empty() ? "none" : args.variant;
      run.target = "";
      run.threads = args.threads;
      RunCastCommand(run);
      return;
    }
    if (args.inputs_path.empty() || args.outputs_spec.empty()) {
      throw UsageError("--inputs and --outputs are required (the sources and the codes)");
    }
    if (args.require_models.size() > 1) throw UsageError("--require-model: one policy for a cast");
    CheckCastCommand({args.op, args.dtype, args.inputs_path, args.outputs_spec,
                      args.require_models.empty() ? "" : args.require_models.front()});
    return;
  }
  args.op = CheckedOp(args);
  const bool dtype_given = !args.dtype.empty();
  args.dtype = CheckedDtype(args);
  const FloatFormat& format = CheckFormat(args.op, args.dtype);
  if (FamilyOf(args.op) == OpFamily::kReduction) {
    if (!args.plugins.empty()) {
      RequirePluginOp(LoadPlugins(args.plugins), args.op);
      // A reduction's check reads its outputs from --outputs; a plugin's or
      // an IUT's reductions are measured by run.
      throw UsageError("check --op " + args.op + " reads the outputs from --outputs; run --op " + args.op +
                       " --plugin/--iut measures a plugin's or an IUT's " + args.op + " kernels");
    }
    if (args.outputs_spec.empty()) throw UsageError("--outputs is required");
    CheckReduction(args, format);
    return;
  }
  CheckSpec spec;
  spec.op = args.op;
  spec.dtype = args.dtype;
  spec.inputs = args.inputs_path;
  spec.outputs = args.outputs_spec;
  spec.label = args.label;
  spec.models = args.model_specs;
  spec.threads = args.threads;
  if (!args.plugins.empty()) {
    const TargetInfo* target = nullptr;
    const PluginKernel& kernel = CheckedKernel(args, &target);
    spec.outputs_from = kernel.call;
    if (spec.label.empty()) spec.label = kernel.variant + "@" + target->name;
    // The model it claims is compared with too (a built-in one already is).
    const std::vector<ModelProgram> builtin = ModelPrograms(*FindElementwiseOp(args.op), format);
    if (!kernel.model.text.empty() &&
        std::none_of(builtin.begin(), builtin.end(),
                     [&](const ModelProgram& m) { return m.name == kernel.model.name; })) {
      spec.models.push_back(kernel.model.name + ": " + kernel.model.text);
    }
    std::cout << fmt::format("{}: claims {}\n", spec.label,
                             kernel.model.name.empty() ? "no model" : "model " + kernel.model.name);
  } else if (args.outputs_spec.empty()) {
    throw UsageError("--outputs is required (or --plugin, whose kernel computes them)");
  } else if (!args.variant.empty()) {
    throw UsageError("--variant names a plugin's kernel: give --plugin");
  }
  CheckRequest request;
  try {
    request = ReadCheckRequest(spec, args.models_path);
  } catch (KernelFaultError& e) {
    ReportCheckFault(args, spec, e.fault());
    return;
  }
  if (!dtype_given) {
    if (const std::string hint = NarrowerDtypeHint(request); !hint.empty()) PrintWrapped(std::cerr, hint, 2);
  }
  for (const std::string& m : args.require_models) {
    if (std::none_of(request.models.begin(), request.models.end(),
                     [&](const ModelProgram& p) { return p.name == m; })) {
      std::string known;
      for (const auto& p : request.models) known += (known.empty() ? "" : ", ") + p.name;
      throw UsageError("--require-model " + m + ": unknown model (" + known + ")");
    }
  }
  request.period = args.period;
  ProgressLine progress("check", "outputs");
  request.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
  const auto start = std::chrono::steady_clock::now();
  const CheckResult result = RunCheck(request);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.Clear();

  std::vector<std::string> failures;
  AddMaxUlpFailure(args, result.result.stats, failures);
  AddBoundFailure(args, result.result.bound, failures);
  for (const std::string& m : args.require_models) {
    for (const ModelComparison& c : result.models) {
      if (c.name == m && c.mismatches > 0) {
        failures.push_back(fmt::format("does not follow {} ({} mismatches)", m, c.mismatches));
      }
    }
  }
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintCheck(request, result, args.quiet);
    std::cout.flush();
    std::cerr << fmt::format("checked {} outputs against {} models in {:.2f} s\n", request.outputs.size(),
                             request.models.size(), seconds);
  }
  FinishCheck(args, request.label, failures, CheckJson(request, result));
}

struct ExportArgs {
  std::string op = std::string(DefaultElementwiseOp().name), suite, dtype = "f32", out, shape;
  uint64_t n = 0, seed = 1;
  bool float32 = false;  // 16-bit formats as float32 arrays, not their own dtype
};

// A reduction suite's instances as an .npz: one array per operand, named as
// the op names it, shaped as the op takes it ([instances, ...] for more than
// one instance; `check` takes both).
void ExportReduction(const ExportArgs& args, const FloatFormat& format) {
  const ReductionOpInfo& op = *FindReductionOp(args.op);
  const std::string suite = args.suite.empty() ? "cancellation" : args.suite;
  if (!IsReductionSuite(suite)) {
    std::string names;
    for (const auto& s : ReductionSuites()) names += (names.empty() ? "" : ", ") + s.name;
    throw UsageError("unknown suite '" + suite + "' for " + args.op + " (" + names + ")");
  }
  if (!IsNpzPath(args.out)) {
    throw UsageError("--out " + args.out + ": the linear and MSE ops export to an .npz (one array per operand)");
  }
  const ReductionShape shape = RunShape(op, args.shape);
  const size_t count = args.n ? args.n : 1;
  const ReductionInputSet inputs = GenerateReductionSuite(op, shape, suite, args.seed, count, format);
  const auto shapes = ReductionOperandShapes(op, shape);
  std::vector<NumpyOutput> arrays;
  for (size_t k = 0; k < op.operands.size(); ++k) {
    NumpyOutput a{op.operands[k], shapes[k], {}};
    if (a.shape.empty()) a.shape = {1};  // a scalar operand (grad_out) as one element
    if (count > 1) a.shape.insert(a.shape.begin(), count);
    for (const ReductionInstance& instance : inputs.instances) {
      a.values.insert(a.values.end(), instance.operands[k].begin(), instance.operands[k].end());
    }
    arrays.push_back(std::move(a));
  }
  WriteNumpyFile(args.out, arrays);
  PrintWrapped(std::cout, fmt::format("wrote {} instance{} of {} (shape {}, {} suite, {}, seed {}) to {} (arrays {})",
                           count, count == 1 ? "" : "s", op.name, ShapeText(op, shape), suite,
                           format.name, args.seed, args.out, fmt::join(op.operands, ", ")), 2);
}

void Export(const ExportArgs& args) {
  const FloatFormat& format = CheckFormat(args.op, args.dtype);
  if (FamilyOf(args.op) == OpFamily::kReduction) {
    ExportReduction(args, format);
    return;
  }
  if (!args.shape.empty()) throw UsageError("--shape is for the linear and MSE ops");
  const std::string suite_name = args.suite.empty() ? "domain" : args.suite;
  const SuiteInfo* info = nullptr;
  std::string names;
  const ElementwiseOpInfo& op = *FindElementwiseOp(args.op);
  for (const auto& s : ElementwiseSuites(op)) {
    names += (names.empty() ? "" : ", ") + s.name;
    if (s.name == suite_name) info = &s;
  }
  if (info == nullptr) throw UsageError("unknown suite '" + suite_name + "' (" + names + ")");
  const InputSet inputs = GenerateElementwiseSuite(op, format, suite_name, args.seed,
                                                   args.n ? args.n : info->default_n);
  const std::string regenerate =
      fmt::format("ulpgate suite export --op {} --suite {} --dtype {} --n {} --seed {} --out {}",
                  args.op, suite_name, format.name, inputs.size(), args.seed, args.out);
  const bool npz = IsNpzPath(args.out);
  const bool npy = IsNumpyPath(args.out) && !npz;
  const FloatFormat* stored = args.float32 ? &kBinary32 : &format;
  if (args.float32 && (!(npz || npy) || format.bits == 32)) {
    throw UsageError("--float32 is for bf16 and f16 suites written to .npz or .npy");
  }
  if (npz) {
    std::vector<NumpyOutput> arrays;
    for (size_t k = 0; k < inputs.operand_names.size(); ++k) {
      arrays.push_back({inputs.operand_names[k], {inputs.size()}, inputs.columns[k], stored});
    }
    WriteNumpyFile(args.out, arrays);
  } else if (npy) {
    NumpyOutput all{"inputs", {inputs.operand_names.size(), inputs.size()}, {}, stored};
    for (const auto& column : inputs.columns) all.values.insert(all.values.end(), column.begin(), column.end());
    WriteNumpyFile(args.out, {all});
  } else {
    WriteInputFile(args.out, inputs,
                   {fmt::format("ulpgate inputs of {} in {}: {} ({} tuples)", args.op, format.name,
                                inputs.source, inputs.size()),
                    "regenerate: " + regenerate});
  }
  const std::vector<std::string> names_of = op.operand_names();
  std::string listed;
  for (const std::string& n : names_of) listed += (listed.empty() ? "" : ", ") + n;
  const std::string dtype = NumpyDtypeText(stored);
  PrintWrapped(std::cout,
               fmt::format("wrote {} inputs of {} ({} suite, {}, seed {}) to {}{}", inputs.size(),
                           args.op, suite_name, format.name, args.seed, args.out,
                           npz   ? fmt::format(" (arrays {}, {})", listed, dtype)
                           : npy ? fmt::format(" (one {} array [{}, n]: {}, in that order)", dtype,
                                               names_of.size(), listed)
                                 : std::string()),
               2);
}

}  // namespace

void AddCheckCommand(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto* cmd = app.add_subcommand(
      "check",
      "Measure outputs made elsewhere (PyTorch, an accelerator, a library) against the exact "
      "value, and name the rounding models they follow bit for bit");
  auto* op_option = cmd->add_option(
      "--op", args->op, "The op the outputs are of (with --plugin: the op its plugins give)");
  op_option->capture_default_str();
  cmd->add_option("--dtype", args->dtype,
                  "Format of inputs and outputs: f32, bf16, f16 (arrays may hold them as float32 or "
                  "uint16 bit patterns); default: the plugin's, or what the arrays' dtypes say "
                  "(float16, ml_dtypes' bfloat16), else f32");
  cmd->add_option("--inputs", args->inputs_path,
                  "The inputs: an .npz of one array per operand of the op, named as the operands (tanh_bwd: "
                  "grad, t; ulpgate list names each op's), an .npy [operands, n], or an input file "
                  "(one tuple of operands per line, in that order)")
      ->required();
  cmd->add_option("--outputs", args->outputs_spec,
                  "FILE[:ARRAY]: an array of an .npz (needed when it holds several outputs), an "
                  ".npy, or a text file of one value per line");
  AddPluginOption(cmd, &args->plugins, ": instead of --outputs, its kernel computes them");
  cmd->add_option("--variant", args->variant,
                  "With --plugin: the kernel whose outputs are checked, by its name (NAME@TARGET where "
                  "several share it), when the plugins have several");
  cmd->add_option("--label", args->label, "Name of the outputs in reports (default: the array's)");
  cmd->add_option("--model", args->model_specs,
                  "A model of your own, 'NAME: statements' over the op's operands, e.g. for tanh_bwd "
                  "'mac_left: p = grad*t; out = fma(-p, t, grad)' (repeatable; the language: "
                  "docs/models.md)");
  cmd->add_option("--models", args->models_path, "A file of models, one 'NAME: statements' per line");
  cmd->add_option("--period", args->period,
                  "Break mismatches down by input index mod K (a vector body against a tail)")
      ->check(CountValidator("a period", 1, kMaxElementwiseInputs));
  cmd->add_option("--json", args->json_path, "Write the JSON report here (- for stdout)");
  cmd->add_option("--max-ulp", args->max_ulp,
                  "Exit 1 if the max ULP error is above this or an output has a special mismatch")
      ->check(NonNegativeValidator("a ULP limit"));
  cmd->add_option("--max-bound-fraction", args->max_bound_fraction,
                  "Exit 1 if an output's error is above this fraction of the error bound of a "
                  "backward-stable evaluation (1: the bound itself)")
      ->check(NonNegativeValidator("a bound fraction"));
  cmd->add_option("--require-model", args->require_models,
                  "Exit 1 unless the outputs follow this model bit for bit (repeatable)");
  AddThreadsOption(cmd, &args->threads);
  cmd->add_flag("--quiet", args->quiet, "Only the summary and the model table");
  cmd->callback([args, op_option] {
    args->op_given = op_option->count() > 0;
    Check(*args);
  });

  auto eargs = std::make_shared<ExportArgs>();
  auto* suite = app.add_subcommand("suite", "Work with input suites");
  suite->require_subcommand(1);
  auto* exp = suite->add_subcommand(
      "export", "Write a suite's inputs for another framework: .npz (one array per operand), "
                ".npy ([operands, n]) or an input file (any other name)");
  exp->add_option("--op", eargs->op, "The op")->capture_default_str();
  exp->add_option("--suite", eargs->suite,
                  "The suite (ulpgate list; default domain for the elementwise ops, cancellation "
                  "for the linear and MSE ops)");
  exp->add_option("--shape", eargs->shape,
                  "Linear ops: B,IN,OUT (default 32,32,32); MSE ops: N (default 1000)");
  exp->add_option("--dtype", eargs->dtype, "Format of the inputs: f32, bf16, f16")->capture_default_str();
  exp->add_option("--n", eargs->n,
                  "Number of inputs (default: the suite's); for the linear and MSE ops, of "
                  "instances (default 1)")
      ->check(CountValidator("the number of inputs", 1, kMaxElementwiseInputs));
  exp->add_option("--seed", eargs->seed, "Suite seed")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  exp->add_option("--out", eargs->out,
                  "Where to write: FILE.npz, FILE.npy or a text file. Arrays keep the dtype: float32, "
                  "float16, and bf16 as ml_dtypes' bfloat16 saves (a 2-byte void; docs/python.md "
                  "reads it into PyTorch)")
      ->required();
  exp->add_flag("--float32", eargs->float32,
                "Write bf16 and f16 values as float32 arrays (for a reader that takes no other)");
  exp->callback([eargs] { Export(*eargs); });
}

}  // namespace ulpgate
