// ulpgate list: ops, variants, models, targets (compiled, and runnable here:
// on this CPU and not removed by --cpu-targets or ULPGATE_CPU_TARGETS), suites,
// and the registered formats with their traits.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <iostream>

#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "kernels/elementwise_ops.h"
#include "oracles/format.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"
#include "suites/engine/op_table.h"
#include "suites/inputs/elementwise_suites.h"
#include "suites/inputs/reduction_suites.h"
#include "suites/reports/format_list.h"
#include "tools/cast_commands.h"
#include "tools/cmd_blockquant.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

nlohmann::ordered_json ElementwiseJson(const ElementwiseOpInfo& info) {
  nlohmann::ordered_json op;
  op["name"] = info.name;
  op["definition"] = info.definition;
  op["operands"] = info.operand_names();
  for (const OperandInfo& o : info.operands) {
    op["operand_domains"].push_back(
        {{"name", o.name},
         {"role", o.role},
         {"domain", o.domain == OperandDomain::kLogUniform ? "log_uniform" : "uniform"},
         {"lo", o.lo},
         {"hi", o.hi}});
  }
  op["landmarks"] = info.landmarks;
  for (const auto& v : info.variants) {
    op["variants"].push_back({{"name", v.name},
                              {"op_sequence", v.op_sequence},
                              {"model_on_fused_targets", v.model_fused_target},
                              {"model_on_unfused_targets", v.model_unfused_target}});
  }
  // Sequences that only models evaluate: no kernel, no golden, no budget.
  op["model_sequences"] = nlohmann::ordered_json::array();
  for (const auto& s : info.model_sequences) {
    op["model_sequences"].push_back({{"name", s.name}, {"op_sequence", s.op_sequence}});
  }
  for (const auto& m : info.models) {
    op["models"].push_back({{"name", m.name},
                            {"sequence_of", m.sequence_of},
                            {"fused_negmuladd", m.fused},
                            {"statements", m.expression.empty()
                                               ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(m.expression)}});
  }
  for (const auto& s : ElementwiseSuites(info)) {
    op["suites"].push_back(
        {{"name", s.name}, {"description", s.description}, {"default_n", s.default_n}});
  }
  op["formats"] = GetOp(std::string(info.name)).dtypes;
  op["bound_roundings"] = info.bound_roundings;
  // What `check` compares outputs with, per format, in the model language.
  for (const std::string& dtype : GetOp(std::string(info.name)).dtypes) {
    op["model_expressions"][dtype] = nlohmann::ordered_json::array();
    for (const ModelProgram& m : ModelPrograms(info, *FindFormat(dtype))) {
      op["model_expressions"][dtype].push_back({{"name", m.name}, {"statements", m.text}});
    }
  }
  for (const std::string& dtype : GetOp(std::string(info.name)).dtypes) {
    if (dtype == kBinary32.name) continue;  // the variants above
    const FloatFormat* format = FindFormat(dtype);
    nlohmann::ordered_json f;
    for (const auto& v : info.narrow_variants) {
      nlohmann::ordered_json models;
      for (const TargetInfo& t : CompiledTargets()) {
        models[t.name] = ExpectedModel(info, *format, v.name, t);
      }
      f["variants"].push_back(
          {{"name", v.name}, {"computes", v.description}, {"model_per_target", models}});
    }
    f["models"] = ModelNames(info, *format);
    op["variants_in"][format->name] = f;
  }
  return op;
}

// "B,IN" for a shape of the op's extents; "scalar" for none.
std::string ShapeWords(const ReductionOpInfo& op, const TensorExtents& t) {
  if (t.rank == 0) return "scalar";
  std::string text;
  for (size_t d = 0; d < t.rank; ++d) {
    text += (d ? "," : "") + std::string(op.extents[t.extent[d]].letters);
  }
  return text;
}

// What --shape takes for the op: "B,IN,OUT", "N".
std::string ShapeLetters(const ReductionOpInfo& op) {
  std::string text;
  for (size_t e = 0; e < op.extents.size(); ++e) {
    text += (e ? "," : "") + std::string(op.extents[e].letters);
  }
  return text;
}

nlohmann::ordered_json ListJson() {
  nlohmann::ordered_json j;
  j["format"] = "ulpgate-list-1";
  for (const ElementwiseOpInfo& info : ElementwiseOps()) j["ops"].push_back(ElementwiseJson(info));
  for (const auto& info : ReductionOps()) {
    nlohmann::ordered_json r;
    r["name"] = info.name;
    r["definition"] = info.definition;
    r["operands"] = info.operands;
    // What the registry knows of its shape: kernels/reductions/<family>/.
    r["family"] = info.family;
    for (const ReductionExtentInfo& e : info.extents) {
      r["extents"].push_back(
          {{"name", e.name}, {"letters", e.letters}, {"default", e.default_size}});
    }
    for (const ReductionOperandInfo& o : info.operand_info) {
      r["operand_shapes"].push_back(
          {{"name", o.name}, {"role", o.role}, {"shape", ShapeWords(info, o.shape)}});
    }
    r["output"] = {{"name", info.output.name}, {"shape", ShapeWords(info, info.output.shape)}};
    r["reduces"] = info.reduction_extent < 0
                       ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json(info.extents[info.reduction_extent].name);
    for (const auto& v : info.variants) {
      nlohmann::ordered_json models;
      for (const TargetInfo& t : CompiledTargets()) {
        models[t.name] = ExpectedReductionModel(info, v, t.f32_lanes, t.fused_muladd).Name(info);
      }
      r["variants"].push_back(
          {{"name", v.name}, {"op_sequence", v.op_sequence}, {"model_per_target", models}});
    }
    if (info.eigen_peer) r["peers"].push_back({{"name", "eigen"}, {"model", nullptr}});
    r["formats"] = GetOp(info.name).dtypes;
    for (const auto& s : ReductionSuites()) {
      r["suites"].push_back(
          {{"name", s.name}, {"description", s.description}, {"default_instances", s.default_n}});
    }
    j["ops"].push_back(r);
  }
  for (const TargetInfo& t : CompiledTargets()) {
    j["targets"].push_back({{"name", t.name},
                            {"compiled", true},
                            {"supported", t.supported},
                            {"cpu_supported", t.cpu_supported},
                            {"fused_negmuladd", t.fused_negmuladd},
                            {"f32_lanes", t.f32_lanes}});
  }
  j["best_target"] = BestTarget().name;
  for (const FloatFormat* f : Formats()) j["formats"].push_back(FormatJson(*f));
  if (const CpuTargetsRestriction* r = CpuRestriction()) {
    j["cpu_targets_restriction"] = {
        {"spec", r->spec}, {"source", r->source}, {"lacking", r->lacking}};
  } else {
    j["cpu_targets_restriction"] = nullptr;
  }
  return j;
}

void PrintFormats() {
  std::cout << "\nformats (each decodes, rounds, casts, measures ULPs and reads files; ops: how many "
               "compute in it, casts from or to it)\n";
  TextTable table(FormatColumns());
  table.SetLeftAligned({0, 6, 9, 10});
  for (const FloatFormat* f : Formats()) table.AddRow(FormatRow(*f));
  table.Print(std::cout, "  ");
  for (const FloatFormat* f : Formats()) {
    std::cout << "  ";
    PrintWrapped(std::cout, std::string(f->name) + ": " + f->description, 4, 2);
  }
}

std::string Runnable(const TargetInfo& t) {
  if (t.supported) return "yes";
  return t.cpu_supported ? "no (restricted)" : "no (not on this CPU)";
}

// One line on how the runnable set was chosen, and what a restriction removed.
std::string RunnableSummary() {
  const CpuTargetsRestriction* r = CpuRestriction();
  if (r == nullptr) {
    return "runnable: every target this CPU has (restrict with --cpu-targets or " +
           std::string(kCpuTargetsVariable) + ")";
  }
  std::string removed;
  for (const TargetInfo& t : CompiledTargets()) {
    if (t.cpu_supported && !t.supported) removed += (removed.empty() ? "" : ", ") + t.name;
  }
  std::string line = "runnable: restricted by " + r->source + " '" + r->spec + "'; ";
  line += removed.empty() ? "it removes nothing this CPU has"
                          : "not run though this CPU has them: " + removed;
  if (!r->lacking.empty()) {
    line += "; in it but not on this CPU:";
    for (const std::string& name : r->lacking) line += " " + name;
  }
  return line;
}

// "m" when every compiled target expects m, else "m1 (T1, T2), m2 (T3)".
std::string ModelsByTarget(const std::function<std::string(const TargetInfo&)>& model) {
  std::vector<std::pair<std::string, std::string>> groups;
  for (const TargetInfo& t : CompiledTargets()) {
    const std::string m = model(t);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == m; });
    if (it == groups.end()) {
      groups.emplace_back(m, t.name);
    } else {
      it->second += ", " + t.name;
    }
  }
  if (groups.size() == 1) return groups.front().first;
  std::string text;
  for (const auto& [m, targets] : groups) text += (text.empty() ? "" : "; ") + m + " (" + targets + ")";
  return text;
}

void PrintElementwise(const ElementwiseOpInfo& info) {
  std::string operands;
  for (const std::string& o : info.operand_names()) operands += (operands.empty() ? "" : ", ") + o;
  std::cout << "  ";
  PrintWrapped(std::cout,
               std::string(info.name) + "(" + operands + ") = " + std::string(info.definition), 4,
               2);
  std::cout << "\n";
  TextTable variants({"variant", "op sequence", "model (FMA target)", "model (no FMA)"});
  variants.SetLeftAligned({0, 1, 2, 3});
  for (const auto& v : info.variants) {
    variants.AddRow({std::string(v.name), std::string(v.op_sequence),
                     std::string(v.model_fused_target), std::string(v.model_unfused_target)});
  }
  variants.Print(std::cout, "  ");
  for (const auto& s : info.model_sequences) {
    std::string models;
    for (const auto& m : info.models) {
      if (m.sequence_of == s.name) models += (models.empty() ? "" : ", ") + std::string(m.name);
    }
    std::cout << "  ";
    PrintWrapped(std::cout,
                 "no kernel, models only: " + std::string(s.name) + ": " +
                     std::string(s.op_sequence) + " (" + models + ")",
                 4, 2);
  }
  // The 16-bit formats the op runs in, from the op table.
  std::vector<const FloatFormat*> narrow;
  std::string narrow_names;
  for (const std::string& dtype : GetOp(std::string(info.name)).dtypes) {
    const FloatFormat* format = FindFormat(dtype);
    if (format->bits == 32) continue;
    narrow.push_back(format);
    narrow_names += (narrow_names.empty() ? "" : " and ") + dtype;
  }
  std::cout << "\n  in " << narrow_names << " (run --dtype): operands and output in the format\n";
  for (const auto& v : info.narrow_variants) {
    std::cout << "    ";
    PrintWrapped(std::cout, std::string(v.name) + ": " + std::string(v.description), 8, 4);
    std::vector<std::pair<std::string, std::string>> models;  // (format, models by target)
    for (const FloatFormat* format : narrow) {
      models.emplace_back(format->name, ModelsByTarget([&](const TargetInfo& t) {
                            return ExpectedModel(info, *format, v.name, t);
                          }));
    }
    bool same = true;
    for (const auto& m : models) same = same && m.second == models.front().second;
    std::string text;
    if (same) {
      text = "model: " + models.front().second;
    } else {
      for (const auto& [format, by_target] : models) {
        text += (text.empty() ? "model in " : "; in ") + format + ": " + by_target;
      }
    }
    std::cout << "      ";
    PrintWrapped(std::cout, text, 8, 6);
  }
  // The models as `check` runs them: the printed text is what it parses.
  bool expressions = false;
  for (const auto& m : info.models) expressions = expressions || !m.expression.empty();
  if (!expressions) {
    std::cout << "\n  its models call functions the model language does not have: check "
                 "compares outputs with the built-in models by name\n\n";
    return;
  }
  std::cout << "\n  models in the model language (check compares outputs with these; "
               "docs/models.md):\n";
  for (const std::string& dtype : GetOp(std::string(info.name)).dtypes) {
    const FloatFormat& format = *FindFormat(dtype);
    std::cout << "    in " << dtype << ":\n";
    TextTable models({"model", "statements"});
    models.SetLeftAligned({0, 1});
    for (const ModelProgram& m : ModelPrograms(info, format)) models.AddRow({m.name, m.text});
    models.Print(std::cout, "      ");
  }
  std::cout << "\n";
}

void PrintList() {
  std::cout << "ops\n";
  for (const ElementwiseOpInfo& info : ElementwiseOps()) PrintElementwise(info);
  for (const auto& info : ReductionOps()) {
    std::cout << "\n  ";
    std::string formats;
    for (const std::string& dtype : GetOp(std::string(info.name)).dtypes) {
      formats += (formats.empty() ? "" : ", ") + dtype;
    }
    PrintWrapped(std::cout,
                 std::string(info.name) + ": " + std::string(info.definition) + " (" + formats +
                     "; in 16 bits, f32 accumulation and each output rounded once)",
                 4, 2);
    std::string operands;
    for (const ReductionOperandInfo& o : info.operand_info) {
      operands += (operands.empty() ? "" : ", ") + std::string(o.name) + " [" +
                  ShapeWords(info, o.shape) + "]";
    }
    std::cout << "    ";
    PrintWrapped(std::cout,
                 "shape " + ShapeLetters(info) + " (default " +
                     ShapeText(info, DefaultShape(info)) + "); " + operands + " -> " +
                     std::string(info.output.name) + " [" +
                     ShapeWords(info, info.output.shape) + "]; kernels/reductions/" +
                     std::string(info.family) + "/",
                 8, 4);
    for (const auto& v : info.variants) {
      std::cout << "    ";
      PrintWrapped(std::cout, std::string(v.name) + ": " + std::string(v.op_sequence), 8, 4);
      std::cout << "      ";
      PrintWrapped(std::cout, "model: " + ModelsByTarget([&](const TargetInfo& t) {
                                return ExpectedReductionModel(info, v, t.f32_lanes, t.fused_muladd)
                                    .Name(info);
                              }),
                   8, 6);
    }
    if (info.eigen_peer) {
      std::cout << "    eigen: Eigen's float product, then + b (a peer: no model; f32 only)\n";
    }
  }
  PrintCastOps(std::cout);
  PrintBlockQuantOps(std::cout);
  std::cout << "\ntargets (compiled into this binary)\n";
  TextTable targets({"target", "runnable here", "NegMulAdd", "f32 lanes"});
  targets.SetLeftAligned({0, 1, 2});
  for (const TargetInfo& t : CompiledTargets()) {
    targets.AddRow({t.name, Runnable(t), t.fused_negmuladd ? "fused" : "two roundings",
                    std::to_string(t.f32_lanes)});
  }
  targets.Print(std::cout, "  ");
  std::cout << "  " << RunnableSummary() << "\n";
  std::cout << "  best here: " << BestTarget().name << "\n";
  // The suites, once for every op that shares them.
  std::vector<std::pair<const std::vector<SuiteInfo>*, std::string>> groups;
  for (const ElementwiseOpInfo& info : ElementwiseOps()) {
    const std::vector<SuiteInfo>* s = &ElementwiseSuites(info);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == s; });
    if (it == groups.end()) {
      groups.emplace_back(s, std::string(info.name));
    } else {
      it->second += ", " + std::string(info.name);
    }
  }
  for (const auto& [group, names] : groups) {
    std::cout << "\nsuites (" << names << ")\n";
    TextTable suites({"suite", "default n", "inputs"});
    suites.SetLeftAligned({0, 2});
    for (const auto& s : *group) suites.AddRow({s.name, std::to_string(s.default_n), s.description});
    suites.Print(std::cout, "  ");
  }
  std::string shapes;
  std::vector<std::string> seen;
  for (const ReductionOpInfo& info : ReductionOps()) {
    const std::string letters = ShapeLetters(info);
    if (std::find(seen.begin(), seen.end(), letters) != seen.end()) continue;
    seen.push_back(letters);
    shapes += (shapes.empty() ? "--shape " : " or --shape ") + letters;
  }
  std::cout << "\nsuites (every reduction; run " << shapes << ")\n";
  TextTable reduction_suites({"suite", "default instances", "inputs"});
  reduction_suites.SetLeftAligned({0, 2});
  for (const auto& s : ReductionSuites()) {
    reduction_suites.AddRow({s.name, std::to_string(s.default_n), s.description});
  }
  reduction_suites.Print(std::cout, "  ");
  PrintFormats();
}

}  // namespace

void AddListCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List ops, variants, models, targets, suites and formats");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of tables");
  cmd->callback([json] {
    if (*json) {
      std::cout << ListJson().dump(2) << '\n';
    } else {
      PrintList();
    }
  });
}

}  // namespace ulpgate
