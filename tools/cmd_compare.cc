// ulpgate compare: two implementations of one op on the same inputs, through
// any door (a built-in kernel, a plugin's, an IUT's, or outputs saved
// elsewhere): how many outputs differ, how far apart, the models each side
// follows and the first place where they part (suites/investigate/compare.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <tuple>

#include "oracles/float_text.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/kernel_names.h"
#include "suites/engine/op_table.h"
#include "suites/engine/plugins.h"
#include "suites/inputs/check_files.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/engine/reduction_cases.h"
#include "suites/investigate/check_models.h"
#include "suites/investigate/compare.h"
#include "suites/reports/number_text.h"
#include "suites/reports/report.h"
#include "suites/sweep/sweep_compare.h"
#include "suites/reveal/builtin_door.h"
#include "suites/reveal/iut_door.h"
#include "suites/reveal/plugin_door.h"
#include "suites/reveal/reveal.h"
#include "tools/cli.h"
#include "tools/progress.h"
#include "tools/run_limits.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct CompareArgs {
  std::string op = std::string(DefaultElementwiseOp().name);
  std::string dtype;
  std::string a, b;
  std::string inputs_path, suite, shape;
  uint64_t n = 0, seed = 1;
  std::vector<std::string> input;  // NAME=VALUE, one input
  std::vector<std::string> model_specs;
  std::string models_path, json_path;
  size_t examples = 5;
  unsigned threads = 0;
  bool quiet = false;
  std::vector<std::string> plugins;
  bool sweep = false;
  bool reveal = false;
  std::string range, shard;
};

// Whether a side names saved outputs (FILE.npz[:ARRAY], FILE.npy, a text
// file) rather than a kernel: a name with a NumPy suffix, or a file that
// exists.
bool IsOutputsSpec(const std::string& spec) {
  const std::string path = spec.substr(0, spec.find(".npz:") == std::string::npos ? spec.size()
                                                                                    : spec.find(".npz:") + 4);
  if (IsNumpyPath(path) || IsNpzPath(path)) return true;
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

// A kernel side, without outputs yet, and the kernel that computes them.
CompareSide ResolveKernelSide(const ElementwiseOpInfo& op, const FloatFormat& format, const std::string& spec,
                              const char* flag, const std::vector<const TargetInfo*>& plugins, StorageKernel* call) {
  NamedKernel kernel;
  try {
    kernel = ResolveOneKernel(op.name, format, spec, plugins, &BestTarget(), flag);
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.rfind(flag, 0) != 0) message = std::string(flag) + ": " + message;
    throw UsageError(message + " (or saved outputs, FILE.npz:ARRAY, FILE.npy or a text file)");
  }
  CompareSide side;
  side.label = kernel.variant + "@" + kernel.target->name;
  side.spec = side.label;
  side.replayable = true;
  if (const LoadedPlugin* plugin = PluginOf(*kernel.target)) {
    const PluginKernel* k = plugin->Find(kernel.variant, format.name, op.name);
    if (k == nullptr) throw UsageError(std::string(flag) + ": no " + format.name + " kernel " + spec);
    *call = k->call;
    side.door = plugin->from_iut ? "iut" : "plugin";
  } else {
    if (!kernel.target->supported) {
      throw UsageError(std::string(flag) + ": target " + kernel.target->name + " is compiled but not runnable here (" +
                       NotRunnableReason(*kernel.target) + ")");
    }
    const ElementwiseKernel k = FindElementwiseKernel(op.name, format.name, kernel.variant, kernel.target->bits);
    if (k == nullptr) throw UsageError(std::string(flag) + ": no " + format.name + " kernel " + spec);
    *call = k;
    side.door = "builtin";
  }
  return side;
}

CompareSide KernelSide(const ElementwiseOpInfo& op, const FloatFormat& format, const std::string& spec,
                       const char* flag, const InputSet& inputs, const std::vector<const TargetInfo*>& plugins) {
  StorageKernel call;
  CompareSide side = ResolveKernelSide(op, format, spec, flag, plugins, &call);
  side.outputs = KernelOutputs(format, inputs, call);
  return side;
}

CompareSide OutputsSide(const CompareArgs& args, const ElementwiseOpInfo& op, const FloatFormat& format,
                        const std::string& spec, const char* flag) {
  if (args.inputs_path.empty()) {
    throw UsageError(std::string(flag) + " " + spec + ": saved outputs need the inputs they were made from (--inputs)");
  }
  CompareSide side;
  side.door = "outputs";
  side.spec = spec;
  side.outputs = ReadCheckOutputs(op, spec, format, &side.label);
  side.label = spec;
  return side;
}

InputSet CompareInputs(const CompareArgs& args, const ElementwiseOpInfo& op, const FloatFormat& format) {
  const int given = !args.inputs_path.empty() + !args.suite.empty() + !args.input.empty();
  if (given > 1) throw UsageError("give one of --inputs, --suite and --input");
  if (!args.input.empty()) {
    const std::vector<std::string> names = op.operand_names();
    InputSet inputs;
    inputs.operand_names = names;
    inputs.columns.assign(names.size(), {});
    inputs.source = "input";
    std::vector<bool> seen(names.size(), false);
    for (const std::string& spec : args.input) {
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) throw UsageError("--input '" + spec + "' is not NAME=VALUE");
      const auto it = std::find(names.begin(), names.end(), spec.substr(0, eq));
      if (it == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw UsageError("--input " + spec.substr(0, eq) + ": " + std::string(op.name) +
                         " has no such operand (" + known + ")");
      }
      const size_t k = static_cast<size_t>(it - names.begin());
      if (seen[k]) throw UsageError("--input " + names[k] + " given twice");
      std::string why;
      const auto value = ParseFloat(spec.substr(eq + 1), &why);
      if (!value) throw UsageError("--input " + names[k] + ": " + why);
      if (!IsRepresentable(format, *value)) {
        throw UsageError("--input " + names[k] + ": " + HexFloat(*value) + " is not a value of " + format.name);
      }
      inputs.columns[k].push_back(*value);
      seen[k] = true;
    }
    for (size_t k = 0; k < names.size(); ++k) {
      if (!seen[k]) throw UsageError("missing --input " + names[k] + "=VALUE");
    }
    return inputs;
  }
  if (!args.inputs_path.empty()) {
    InputSet inputs = ReadCheckInputs(op, args.inputs_path, format);
    if (inputs.size() == 0) throw UsageError(args.inputs_path + ": no inputs");
    return inputs;
  }
  const std::string suite = args.suite.empty() ? "domain" : args.suite;
  std::string names;
  for (const auto& s : ElementwiseSuites(op)) {
    names += (names.empty() ? "" : ", ") + s.name;
    if (s.name == suite) {
      return GenerateElementwiseSuite(op, format, suite, args.seed, args.n ? args.n : s.default_n);
    }
  }
  throw UsageError("--suite: unknown suite '" + suite + "' (" + names + ")");
}

std::string Value(const FloatFormat& format, float v) {
  return HexFloat(v) + " (" + BitsText(format, IsBinary32(format) ? FloatBits(v) : EncodeBits(format, v)) + ")";
}

std::string Names(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

void PrintDifferences(const CompareResult& result) {
  if (result.differing == 0) {
    std::cout << "identical: every output the same in every bit\n";
  } else {
    std::cout << fmt::format("differ: {} of {} outputs ({:.2f}%) in their bits; up to {} ULP apart{}{}\n",
                             result.differing, result.n, 100.0 * result.differing / result.n,
                             FormatUlp(result.max_apart),
                             result.special ? fmt::format(", {} special (NaN or infinity against another value)",
                                                          result.special)
                                            : "",
                             result.signed_zero ? fmt::format(", {} signed zeros", result.signed_zero) : "");
    TextTable histogram({"ULPs apart", "outputs"});
    for (size_t k = 0; k < result.histogram.size(); ++k) {
      if (result.histogram[k] == 0) continue;
      const std::string label = k == 0 ? "0 (bits only)"
                                : k < std::size(kCompareBins) ? fmt::format("({}, {}]", kCompareBins[k - 1], kCompareBins[k])
                                : k == std::size(kCompareBins) ? fmt::format("> {}", kCompareBins[k - 1])
                                                               : std::string("special");
      histogram.AddRow({label, std::to_string(result.histogram[k])});
    }
    histogram.SetLeftAligned({0});
    histogram.Print(std::cout, "  ");
  }
}

void PrintCause(const CompareResult& result) {
  std::string by = result.cause.model_a.empty() && result.cause.model_b.empty()
                       ? ""
                       : fmt::format(" ({} against {}, followed {})", result.cause.model_a.empty() ? "-" : result.cause.model_a,
                                     result.cause.model_b.empty() ? "-" : result.cause.model_b,
                                     result.cause.basis == "all inputs"         ? "on every input"
                                     : result.cause.basis == "differing inputs" ? "on the differing inputs"
                                     : result.cause.basis == "all inputs, functions free"
                                         ? "on every input, their functions free"
                                     : result.cause.basis == "differing inputs, functions free"
                                         ? "on the differing inputs, their functions free"
                                         : "by " + result.cause.basis);
  PrintWrapped(std::cout, "cause: " + result.cause.cause + by + ": " + result.cause.detail, 7);
}

void PrintCompare(const CompareRequest& r, const CompareResult& result, bool quiet) {
  const FloatFormat& format = *r.format;
  PrintWrapped(std::cout,
               fmt::format("compare {} in {}: a = {} ({}), b = {} ({}); {} inputs ({})", r.op->name, format.name,
                           r.a.label, r.a.door, r.b.label, r.b.door, result.n, r.inputs.source),
               2);
  std::cout << '\n';
  PrintDifferences(result);
  std::cout << '\n';
  TextTable sides({"side", "max ULP error", "follows on every input", "on the differing inputs"});
  sides.SetLeftAligned({0, 2, 3});
  for (const auto& [name, side, sr] : {std::tuple<const char*, const CompareSide*, const CompareSideResult*>{"a", &r.a, &result.a},
                                       {"b", &r.b, &result.b}}) {
    sides.AddRow({std::string(name) + ": " + side->label, FormatUlp(sr->all.result.stats.max_ulp()),
                  Names(sr->matching), result.differing ? Names(sr->matching_differing) : "-"});
  }
  sides.Print(std::cout, "  ");
  if (!result.a.matching_free.empty() || !result.b.matching_free.empty()) {
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("with their functions free (exp, erf, tanh within {} ULP): a follows {}; b follows {}",
                             kModelFunctionUlps, Names(result.a.matching_free), Names(result.b.matching_free)),
                 4, 2);
  }
  std::cout << '\n';
  PrintCause(result);
  if (quiet || result.differing == 0) return;
  const std::vector<std::string> names = r.inputs.operand_names;
  auto show = [&](const CompareExample& e) {
    std::string operands;
    for (size_t k = 0; k < r.inputs.columns.size(); ++k) {
      operands += fmt::format("{}{} = {}", k ? ", " : "", names[k], Value(format, r.inputs.columns[k][e.index]));
    }
    std::cout << "  ";
    PrintWrapped(std::cout,
                 fmt::format("#{}: {}: a {}, b {} ({} ULP apart)", e.index, operands, Value(format, e.a),
                             Value(format, e.b), std::isinf(e.apart_ulp) ? "inf" : FormatUlp(e.apart_ulp)),
                 4, 2);
    std::cout << "    replay: " << WrappedCommand(e.replay, 12, 8) << '\n';
  };
  std::cout << "\nnearest differing inputs:\n";
  for (const CompareExample& e : result.nearest) show(e);
  if (!result.worst.empty()) {
    std::cout << "farthest apart:\n";
    show(result.worst.front());
  }
}

// A reduction's side: its outputs on every instance, in order.
CompareSide ReductionSide(const CompareArgs& args, const ReductionInputSet& inputs, const std::string& spec,
                          const char* flag, const std::vector<const TargetInfo*>& plugins) {
  const ReductionOpInfo& op = *inputs.op;
  const FloatFormat& format = *inputs.format;
  CompareSide side;
  if (IsOutputsSpec(spec)) {
    if (args.inputs_path.empty()) {
      throw UsageError(std::string(flag) + " " + spec + ": saved outputs need the inputs they were made from (--inputs)");
    }
    side.door = "outputs";
    side.spec = spec;
    for (const auto& instance : ReadReductionOutputs(op, inputs, spec, &side.label)) {
      side.outputs.insert(side.outputs.end(), instance.begin(), instance.end());
    }
    side.label = spec;
    return side;
  }
  NamedKernel kernel;
  try {
    kernel = ResolveOneKernel(op.name, format, spec, plugins, &BestTarget(), flag);
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.rfind(flag, 0) != 0) message = std::string(flag) + ": " + message;
    throw UsageError(message + " (or saved outputs, FILE.npz:ARRAY or FILE.npy)");
  }
  side.label = kernel.variant + "@" + kernel.target->name;
  side.spec = side.label;
  side.replayable = true;
  if (const LoadedPlugin* plugin = PluginOf(*kernel.target)) {
    const PluginKernel* k = plugin->Find(kernel.variant, format.name, op.name);
    if (k == nullptr || !k->reduce) throw UsageError(std::string(flag) + ": no " + format.name + " reduction " + spec);
    side.door = plugin->from_iut ? "iut" : "plugin";
    ReductionRunOptions options;
    options.builtin = false;
    options.threads = args.threads;
    options.external.push_back({kernel.variant, kernel.target, "", k->reduce});
    const ReductionRun run = RunReduction(inputs, options);
    if (run.cases.empty() || run.cases.front().fault) {
      throw UsageError(std::string(flag) + ": " + spec + " faulted");
    }
    for (const auto& instance : run.outputs) side.outputs.insert(side.outputs.end(), instance[0].begin(), instance[0].end());
    return side;
  }
  if (!kernel.target->supported) {
    throw UsageError(std::string(flag) + ": target " + kernel.target->name + " is compiled but not runnable here (" +
                     NotRunnableReason(*kernel.target) + ")");
  }
  side.door = "builtin";
  for (const ReductionInstance& instance : inputs.instances) {
    const std::vector<float> y = RunReductionKernel(op, kernel.variant, *kernel.target, inputs.shape, instance, 0, format);
    side.outputs.insert(side.outputs.end(), y.begin(), y.end());
  }
  return side;
}

// A linear_fwd side's DotDoor (suites/reveal/dot_door.h), or null where none
// reaches its kernel.
std::unique_ptr<DotDoor> DoorOf(const CompareSide& side) {
  const KernelName name = ParseKernelName(side.spec);
  const TargetInfo* target = FindAnyTarget(name.target);
  if (target == nullptr) return nullptr;
  if (const LoadedPlugin* plugin = PluginOf(*target)) {
    if (!plugin->from_iut) return MakePluginDotDoor(plugin->path, name.variant);
    // The IUT names its own targets; ulpgate adds "-iut" to a compiled target's.
    std::string own = name.target;
    if (own.size() > 4 && own.compare(own.size() - 4, 4, "-iut") == 0) own.resize(own.size() - 4);
    return MakeIutDotDoor(plugin->path, name.variant + "@" + own);
  }
  // The doors name the unfused sequential schedule "sequential".
  auto door = MakeBuiltinDoor(name.variant, *target);
  if (door == nullptr && name.variant == "sequential_unfused") door = MakeBuiltinDoor("sequential", *target);
  return door;
}

// Both sides' summation trees of output (0, 0), revealed from their outputs
// (suites/reveal/reveal.h): a cause where the schedules' models name none (a
// kernel that follows no schedule), or beside them (--reveal). Adds the
// trees to *json.
void RevealBoth(const ReductionInputSet& inputs, const CompareSide& a, const CompareSide& b, CompareResult* result,
                nlohmann::ordered_json* json) {
  std::unique_ptr<DotDoor> doors[2];
  try {
    doors[0] = DoorOf(a);
    doors[1] = DoorOf(b);
  } catch (const DotDoorError& e) {
    (*json)["reveal"] = {{"error", e.what()}};
    return;
  }
  if (!doors[0] || !doors[1]) {
    (*json)["reveal"] = {{"error", "no matrix-product door reaches both kernels"}};
    return;
  }
  // The shape {batch, in, out} as calls of m x n outputs over k terms.
  const DotShape shape{inputs.shape[0], inputs.shape[2], inputs.shape[1]};
  AccumulatorFingerprint fp[2];
  try {
    for (int s = 0; s < 2; ++s) fp[s] = RevealFingerprint(*doors[s], shape, 0, 0);
  } catch (const std::exception& e) {
    (*json)["reveal"] = {{"error", e.what()}};
    return;
  }
  nlohmann::ordered_json reveal;
  for (int s = 0; s < 2; ++s) {
    reveal[s == 0 ? "a" : "b"] = {{"model", fp[s].model.Text()}, {"shape_name", fp[s].shape},
                                  {"fingerprint", DescribeFingerprint(fp[s])}};
  }
  (*json)["reveal"] = reveal;
  auto named = [](const AccumulatorFingerprint& f) { return f.shape.empty() ? std::string("a tree of its own") : f.shape; };
  // The structure without the arithmetic of its nodes and leaves first.
  SummationTree ta = fp[0].model, tb = fp[1].model;
  const bool same_tree = [&] {
    const auto structure = [](const SummationTree& t) {
      // Terms and how they group; the marks of a leaf's or a node's
      // arithmetic (a rounded product's r, a node's format) left out.
      std::string out;
      for (const char c : t.Text()) {
        if (std::isdigit(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == '+' || c == ',') out += c;
      }
      return out;
    };
    return structure(ta) == structure(tb);
  }();
  if (result->cause.cause != kCauseUnknown) return;  // the models named it; the trees are evidence
  if (!same_tree) {
    result->cause.cause = kCauseTree;
    result->cause.basis = "revealed trees";
    result->cause.detail = fmt::format("output (0, 0) adds up as {} in a and as {} in b (revealed from the outputs)",
                                       named(fp[0]), named(fp[1]));
  } else if (ta != tb) {
    result->cause.cause = fp[0].rounded_products != fp[1].rounded_products ? kCauseFusion : kCauseRoundingFormat;
    result->cause.basis = "revealed trees";
    result->cause.detail = fmt::format("the same tree ({}); {} rounded products in a, {} in b; nodes: {} against {}",
                                       named(fp[0]), fp[0].rounded_products, fp[1].rounded_products,
                                       fp[0].node_classes.empty() ? "-" : ArithText(fp[0].node_classes[0].arith),
                                       fp[1].node_classes.empty() ? "-" : ArithText(fp[1].node_classes[0].arith));
  }
}

void CompareReductions(const CompareArgs& args, const FloatFormat& format) {
  const ReductionOpInfo& op = *FindReductionOp(args.op);
  if (!args.input.empty()) throw UsageError("--input is for elementwise ops");
  // A row reduction's --model writes out its term function (row_model_fit.h).
  const RowOpInfo* row_op = FindRowOp(op.name);
  std::vector<RowFunctionModel> row_functions;
  if (!args.model_specs.empty() || !args.models_path.empty()) {
    if (row_op == nullptr || !RowModelsApply(*row_op, format) || RowTermFunction(*row_op).empty()) {
      throw UsageError("--model and --models: for a reduction, only softmax_fwd and log_softmax_fwd in f32 take "
                       "models (their exp(z) written out, docs/compare.md); the others' sides are compared with the "
                       "schedules' models and the orders and epilogues compare searches");
    }
    std::vector<std::string> specs = args.model_specs;
    std::vector<std::string> where(specs.size(), "--model");
    if (!args.models_path.empty()) {
      std::ifstream in(args.models_path);
      if (!in) throw InputError(args.models_path + ": cannot open");
      std::string line;
      for (size_t number = 1; std::getline(in, line); ++number) {
        const size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        specs.push_back(line);
        where.push_back(fmt::format("{}:{}", args.models_path, number));
      }
    }
    for (size_t k = 0; k < specs.size(); ++k) {
      try {
        row_functions.push_back(ParseRowFunctionModel(*row_op, specs[k]));
      } catch (const std::invalid_argument& e) {
        throw InputError(where[k] + ": " + e.what());
      }
      for (size_t j = 0; j + 1 < row_functions.size(); ++j) {
        if (row_functions[j].name == row_functions.back().name) {
          throw InputError(where[k] + ": model '" + row_functions.back().name + "' is already defined");
        }
      }
    }
  }
  if (!args.inputs_path.empty() && (!args.suite.empty() || !args.shape.empty())) {
    throw UsageError("give --inputs or --suite/--shape, not both");
  }
  const std::vector<const TargetInfo*> plugins = LoadPlugins(args.plugins);
  ReductionInputSet inputs;
  if (!args.inputs_path.empty()) {
    inputs = ReadReductionInputs(op, args.inputs_path, format);
  } else {
    const std::string suite = args.suite.empty() ? "cancellation" : args.suite;
    if (!IsReductionSuite(suite)) {
      std::string names;
      for (const auto& s : ReductionSuites()) names += (names.empty() ? "" : ", ") + s.name;
      throw UsageError("--suite: unknown suite '" + suite + "' for " + args.op + " (" + names + ")");
    }
    inputs = GenerateReductionSuite(op, RunShape(op, args.shape), suite, args.seed, args.n ? args.n : 1, format);
  }
  ReductionCompareRequest request;
  request.inputs = &inputs;
  request.a = ReductionSide(args, inputs, args.a, "--a", plugins);
  request.b = ReductionSide(args, inputs, args.b, "--b", plugins);
  request.examples = args.examples;
  request.threads = args.threads;
  request.row_functions = row_functions;
  request.replay = fmt::format("ulpgate compare --op {}{} --a {} --b {}", op.name,
                               format.bits == 32 ? "" : " --dtype " + std::string(format.name), ShellWord(args.a),
                               ShellWord(args.b));
  if (!args.inputs_path.empty()) {
    request.replay += " --inputs " + ShellWord(args.inputs_path);
  } else {
    request.replay += fmt::format(" --suite {} --shape {} --seed {} --n {}", inputs.source, ShapeText(op, inputs.shape),
                                  args.seed, inputs.instances.size());
  }
  for (const std::string& p : args.plugins) request.replay += " " + PluginSourceArgument(p);
  CompareResult result = RunReductionCompare(request);
  nlohmann::ordered_json reveal;
  if (op.name == "linear_fwd" && IsBinary32(format) && request.a.replayable && request.b.replayable &&
      result.differing > 0 && (args.reveal || result.cause.cause == kCauseUnknown)) {
    RevealBoth(inputs, request.a, request.b, &result, &reveal);
  }
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintWrapped(std::cout,
                 fmt::format("compare {} in {}: a = {} ({}), b = {} ({}); shape {}, {} instance{}, {} outputs ({})",
                             op.name, format.name, request.a.label, request.a.door, request.b.label, request.b.door,
                             ShapeText(op, inputs.shape), inputs.instances.size(),
                             inputs.instances.size() == 1 ? "" : "s", result.n, inputs.source),
                 2);
    std::cout << '\n';
    PrintDifferences(result);
    std::cout << '\n';
    TextTable sides({"side", "max ULP error", "follows on every output"});
    sides.SetLeftAligned({0, 2});
    sides.AddRow({"a: " + request.a.label, FormatUlp(result.a.all.result.stats.max_ulp()), Names(result.a.matching)});
    sides.AddRow({"b: " + request.b.label, FormatUlp(result.b.all.result.stats.max_ulp()), Names(result.b.matching)});
    sides.Print(std::cout, "  ");
    std::cout << '\n';
    PrintCause(result);
    if (reveal.contains("reveal")) {
      const auto& r = reveal["reveal"];
      if (r.contains("error")) {
        PrintWrapped(std::cout, "reveal: " + r["error"].get<std::string>(), 8);
      } else {
        for (const char* s : {"a", "b"}) {
          PrintWrapped(std::cout, fmt::format("revealed {}: {}", s, r[s]["fingerprint"][0].get<std::string>()), 4);
        }
      }
    }
    if (!args.quiet && !result.nearest.empty()) {
      const size_t per = inputs.outputs_per_instance();
      std::cout << "\nnearest differing outputs:\n";
      for (const CompareExample& e : result.nearest) {
        std::cout << fmt::format("  instance {}, {}: a {}, b {} ({} ULP apart)\n", e.index / per,
                                 ElementName(op, inputs.shape, e.index % per), Value(format, e.a), Value(format, e.b),
                                 std::isinf(e.apart_ulp) ? "inf" : FormatUlp(e.apart_ulp));
      }
      std::cout << "replay: " << WrappedCommand(request.replay, 8, 4) << '\n';
    }
  }
  if (!args.json_path.empty()) {
    nlohmann::ordered_json report;
    report["format"] = kCompareReportFormat;
    report["tool"] = ToolVersion();
    report["result"] = ReductionCompareJson(request, result);
    if (!reveal.empty()) report["result"]["reveal"] = reveal["reveal"];
    WriteRunReport(args.json_path, report);
  }
  ExitStatus() = CompareExitStatus(result);
}

// --sweep: every pair of the 16-bit format (or --range, --shard's part), both
// sides kernels; the models and the cause from the first differing inputs.
void CompareSweep(const CompareArgs& args, const ElementwiseOpInfo& op, const FloatFormat& format,
                  const std::vector<const TargetInfo*>& plugins) {
  if (format.storage_bytes() != 2 || op.arity() != 2) {
    throw UsageError("--sweep: every pair of a 16-bit format (--dtype bf16 or f16) of an op of two operands");
  }
  if (!args.inputs_path.empty() || !args.suite.empty() || !args.input.empty()) {
    throw UsageError("--sweep enumerates its inputs: no --inputs, --suite or --input");
  }
  for (const std::string* spec : {&args.a, &args.b}) {
    if (IsOutputsSpec(*spec)) throw UsageError("--sweep: both sides must be kernels (" + *spec + " is saved outputs)");
  }
  CompareSweepRequest request;
  const std::vector<std::string> names = op.operand_names();
  request.domain = MakeSweepDomain(format, SweepDomain::Kind::kPairs, {}, {names[0], names[1]});
  request.begin = 0;
  request.end = request.domain.size();
  if (!args.range.empty()) {
    const size_t colon = args.range.find(':');
    if (colon == std::string::npos) throw UsageError("--range: expected BEGIN:END, got '" + args.range + "'");
    request.begin = ParseIndex(args.range.substr(0, colon), "--range BEGIN");
    request.end = ParseIndex(args.range.substr(colon + 1), "--range END");
    if (request.begin >= request.end || request.end > request.domain.size()) {
      throw UsageError(fmt::format("--range {}: expected BEGIN < END <= {} (the domain's size)", args.range,
                                   request.domain.size()));
    }
  }
  if (!args.shard.empty()) {
    const auto [k, n] = ParseShard(args.shard);
    std::tie(request.begin, request.end) = SweepShard(request.begin, request.end, k, n);
  }
  CompareSide a = ResolveKernelSide(op, format, args.a, "--a", plugins, &request.a);
  CompareSide b = ResolveKernelSide(op, format, args.b, "--b", plugins, &request.b);
  request.threads = args.threads;
  ProgressLine progress("compare --sweep", "inputs", args.json_path == "-");
  request.progress = [&progress](uint64_t done, uint64_t total) { progress(done, total); };
  const CompareSweepResult swept = RunCompareSweep(request);
  progress.Clear();
  // The models and the cause: compare's own, on the first differing inputs.
  CompareRequest on_differing;
  on_differing.op = &op;
  on_differing.format = &format;
  on_differing.inputs.operand_names = names;
  on_differing.inputs.columns.assign(2, {});
  on_differing.inputs.source = "the first differing inputs of the sweep";
  for (const uint64_t index : swept.first) {
    float x[2];
    request.domain.Input(index, &x[0], &x[1]);
    on_differing.inputs.columns[0].push_back(x[0]);
    on_differing.inputs.columns[1].push_back(x[1]);
  }
  a.outputs = swept.first_a;
  b.outputs = swept.first_b;
  on_differing.a = a;
  on_differing.b = b;
  on_differing.models = args.model_specs;
  on_differing.models_path = args.models_path;
  on_differing.examples = args.examples;
  on_differing.threads = args.threads;
  for (const std::string& p : args.plugins) on_differing.replay_arguments += " " + PluginSourceArgument(p);
  CompareResult result = swept.counts;
  CompareResult models;  // its examples index the kept inputs
  if (!swept.first.empty()) {
    models = RunCompare(on_differing);
    result.a = models.a;
    result.b = models.b;
    result.a.matching.clear();  // over every input of the sweep: not measured
    result.b.matching.clear();
    result.nearest = models.nearest;
    for (CompareExample& e : result.nearest) e.index = swept.first[e.index];
    result.cause = models.cause;
    result.cause.basis = "differing inputs";
    if (result.differing > swept.first.size()) {
      result.cause.detail += fmt::format(" (from the first {} of the {} differing inputs)", swept.first.size(),
                                         result.differing);
    }
  } else {
    result.cause.detail = "the outputs are the same in every bit";
  }
  const std::string range = fmt::format("0x{:x}:0x{:x}", request.begin, request.end);
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintWrapped(std::cout,
                 fmt::format("compare --sweep {} in {}: a = {} ({}), b = {} ({}); {} inputs of {} (range {})",
                             op.name, format.name, a.label, a.door, b.label, b.door, result.n,
                             request.domain.Description(), range),
                 2);
    std::cout << '\n';
    PrintDifferences(result);
    if (!swept.first.empty()) {
      std::cout << '\n';
      TextTable sides({"side", "follows on the differing inputs"});
      sides.SetLeftAligned({0, 1});
      sides.AddRow({"a: " + a.label, Names(result.a.matching_differing)});
      sides.AddRow({"b: " + b.label, Names(result.b.matching_differing)});
      sides.Print(std::cout, "  ");
    }
    std::cout << '\n';
    PrintCause(result);
    if (!args.quiet && !result.nearest.empty()) {
      std::cout << "\nnearest differing inputs (of those kept):\n";
      for (const CompareExample& e : result.nearest) {
        float x[2];
        request.domain.Input(e.index, &x[0], &x[1]);
        std::cout << "  ";
        PrintWrapped(std::cout,
                     fmt::format("#{}: {} = {}, {} = {}: a {}, b {} ({} ULP apart)", e.index, names[0], Value(format, x[0]),
                                 names[1], Value(format, x[1]), Value(format, e.a), Value(format, e.b),
                                 std::isinf(e.apart_ulp) ? "inf" : FormatUlp(e.apart_ulp)),
                     4, 2);
        std::cout << "    replay: " << WrappedCommand(e.replay, 12, 8) << '\n';
      }
    }
    std::cout.flush();
    std::cerr << fmt::format("compared {} inputs in {:.2f} s\n", result.n, progress.Seconds());
  }
  if (!args.json_path.empty()) {
    CompareResult shown = result;
    shown.nearest = models.nearest;
    shown.worst.clear();
    nlohmann::ordered_json j = CompareJson(on_differing, shown);
    for (auto& e : j["nearest"]) e["index"] = swept.first[e["index"].get<uint64_t>()];
    j["inputs"] = "sweep";
    j["seed"] = nullptr;
    j["sweep"] = {{"domain", request.domain.Description()}, {"begin", request.begin}, {"end", request.end},
                  {"kept", swept.first.size()},
                  {"max_apart_index", result.max_index < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(result.max_index)}};
    j["a"]["models_all_inputs"] = nullptr;
    j["b"]["models_all_inputs"] = nullptr;
    j["values"] = nullptr;
    nlohmann::ordered_json report;
    report["format"] = kCompareReportFormat;
    report["tool"] = ToolVersion();
    report["result"] = j;
    WriteRunReport(args.json_path, report);
  }
  ExitStatus() = CompareExitStatus(result);
}

// Without --inputs, --suite or --input: saved outputs in an .npz that holds the
// operands too (the layout check reads, suites/peer/) are of those inputs.
void DefaultInputsFromOutputs(CompareArgs* args) {
  if (!args->inputs_path.empty() || !args->suite.empty() || !args->input.empty() || args->sweep) return;
  for (const std::string* side : {&args->a, &args->b}) {
    const size_t at = side->find(".npz:");
    if (at != std::string::npos && IsOutputsSpec(*side)) {
      args->inputs_path = side->substr(0, at + 4);
      return;
    }
  }
}

void RunCompareCommand(CompareArgs args) {
  DefaultInputsFromOutputs(&args);
  if (FindOp(args.op) == nullptr || (FindElementwiseOp(args.op) == nullptr && FindReductionOp(args.op) == nullptr)) {
    if (FindOp(args.op) != nullptr) {
      throw UsageError("compare takes an elementwise op (" + ElementwiseOpNames() + ") or a reduction; " +
                       args.op + " is neither");
    }
    ElementwiseOpArgument(args.op);  // the message naming every op
  }
  if (FindReductionOp(args.op) != nullptr) {
    CompareReductions(args, CheckFormat(args.op, args.dtype.empty() ? "f32" : args.dtype));
    return;
  }
  if (!args.shape.empty()) throw UsageError("--shape is for the reductions");
  if (!args.sweep && (!args.range.empty() || !args.shard.empty())) throw UsageError("--range and --shard go with --sweep");
  const ElementwiseOpInfo& op = *FindElementwiseOp(args.op);
  if (args.dtype.empty()) {
    std::string files;
    for (const std::string* side : {&args.a, &args.b}) {
      if (files.empty() && IsOutputsSpec(*side)) files = *side;
    }
    args.dtype = args.inputs_path.empty() ? "" : DtypeOfFiles(args.inputs_path, files);
    if (args.dtype.empty()) args.dtype = "f32";
  }
  const FloatFormat& format = CheckFormat(args.op, args.dtype);
  const std::vector<const TargetInfo*> plugins = LoadPlugins(args.plugins);
  if (!plugins.empty()) RequirePluginOp(plugins, args.op);
  if (args.sweep) {
    CompareSweep(args, op, format, plugins);
    return;
  }
  CompareRequest request;
  request.op = &op;
  request.format = &format;
  request.inputs = CompareInputs(args, op, format);
  if (request.inputs.operand_names.empty()) request.inputs.operand_names = op.operand_names();
  auto side = [&](const std::string& spec, const char* flag) {
    return IsOutputsSpec(spec) ? OutputsSide(args, op, format, spec, flag)
                               : KernelSide(op, format, spec, flag, request.inputs, plugins);
  };
  request.a = side(args.a, "--a");
  request.b = side(args.b, "--b");
  request.models = args.model_specs;
  request.models_path = args.models_path;
  request.examples = args.examples;
  request.threads = args.threads;
  for (const std::string& p : args.plugins) request.replay_arguments += " " + PluginSourceArgument(p);
  const auto start = std::chrono::steady_clock::now();
  const CompareResult result = RunCompare(request);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  {
    StdoutToStderr guard(args.json_path == "-");
    PrintCompare(request, result, args.quiet);
    std::cout.flush();
    std::cerr << fmt::format("compared {} outputs in {:.2f} s\n", result.n, seconds);
  }
  if (!args.json_path.empty()) {
    nlohmann::ordered_json report;
    report["format"] = kCompareReportFormat;
    report["tool"] = ToolVersion();
    report["result"] = CompareJson(request, result);
    WriteRunReport(args.json_path, report);
  }
  ExitStatus() = CompareExitStatus(result);
}

}  // namespace

void AddCompareCommand(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare two implementations of one op on the same inputs: how many outputs differ, how far "
      "apart, the models each follows and the cause (exit 0 identical, 1 different, 2 usage)");
  cmd->add_option("--op", args->op, "The op: an elementwise op (" + ElementwiseOpNames() +
                                        ") or a reduction (ulpgate list names them)")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "f32, bf16 or f16 (default: what the files say, else f32)");
  const std::string side_help =
      ": a kernel, VARIANT[@TARGET] (built-in; default target: the best this CPU runs) or a plugin's or "
      "IUT's NAME (NAME@TARGET where several share it); or saved outputs, FILE.npz:ARRAY, FILE.npy or a "
      "text file of one value per line (with --inputs)";
  cmd->add_option("--a", args->a, "One side" + side_help)->required();
  cmd->add_option("--b", args->b, "The other side, as --a takes it")->required();
  cmd->add_option("--inputs", args->inputs_path,
                  "The inputs, as check reads them: an .npz of one array per operand, an .npy [operands, n] or "
                  "an input file (default: the .npz a side's saved outputs FILE.npz:ARRAY are in)");
  cmd->add_option("--suite", args->suite, "Instead: a suite's inputs (default domain; a reduction's: cancellation)");
  cmd->add_option("--n", args->n, "With --suite: the number of inputs (default: the suite's); a reduction's instances (default 1)")
      ->check(CountValidator("the number of inputs", 1, kMaxElementwiseInputs));
  cmd->add_option("--seed", args->seed, "With --suite: its seed")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  cmd->add_option("--shape", args->shape, "A reduction's shape with --suite (linear ops: B,IN,OUT; MSE: N)");
  cmd->add_option("--input", args->input, "Instead: one input, NAME=VALUE per operand (the replay of a difference)");
  cmd->add_flag("--sweep", args->sweep,
                "Every pair of the 16-bit format (--dtype bf16 or f16: 2^32 inputs), both sides kernels; the models "
                "and the cause from the first 65536 differing inputs");
  cmd->add_option("--range", args->range, "With --sweep: domain indices BEGIN:END (grad's pattern << 16 | t's)");
  cmd->add_option("--shard", args->shard,
                  "With --sweep: K/N, only the K-th (0-based) of N parts of the range, cut at 65536-input blocks");
  cmd->add_flag("--reveal", args->reveal,
                "linear_fwd, both sides kernels: reveal each side's summation tree from its outputs (reveal's "
                "probes) beside the schedules' models; without it, only where neither names a cause");
  cmd->add_option("--model", args->model_specs,
                  "A model of your own, 'NAME: statements' (docs/models.md); for softmax_fwd and log_softmax_fwd in "
                  "f32, an exp(z) written out (docs/compare.md)");
  cmd->add_option("--models", args->models_path, "A file of models, one 'NAME: statements' per line");
  cmd->add_option("--examples", args->examples, "Differing inputs shown, nearest first")
      ->capture_default_str()
      ->check(CountValidator("the number of examples", 0, 1000));
  cmd->add_option("--json", args->json_path, "Write the JSON report here (- for stdout; format ulpgate-compare-1)");
  AddPluginOption(cmd, &args->plugins, ": a side names one of its kernels by its name");
  AddThreadsOption(cmd, &args->threads);
  cmd->add_flag("--quiet", args->quiet, "Only the counts, the models and the cause");
  cmd->callback([args] { RunCompareCommand(*args); });
}

}  // namespace ulpgate
