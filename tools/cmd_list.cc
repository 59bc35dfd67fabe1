// ulpgate list: ops, variants, models, targets (compiled and supported here),
// suites.
#include <nlohmann/json.hpp>

#include <iostream>

#include "kernels/registry.h"
#include "kernels/tanh_bwd_spec.h"
#include "suites/tanh_bwd_suites.h"
#include "tools/cli.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

nlohmann::ordered_json ListJson() {
  nlohmann::ordered_json j;
  nlohmann::ordered_json op;
  op["name"] = "tanh_bwd";
  op["definition"] = "grad * (1 - t^2)";
  op["operands"] = kTanhBwdOperands;
  for (const auto& v : kTanhBwdVariants) {
    op["variants"].push_back({{"name", v.name},
                              {"op_sequence", v.op_sequence},
                              {"model_on_fused_targets", v.model_fused_target},
                              {"model_on_unfused_targets", v.model_unfused_target}});
  }
  for (const auto& m : kTanhBwdModels) {
    op["models"].push_back(
        {{"name", m.name}, {"sequence_of", m.sequence_of}, {"fused_negmuladd", m.fused}});
  }
  for (const auto& s : TanhBwdSuites()) {
    op["suites"].push_back(
        {{"name", s.name}, {"description", s.description}, {"default_n", s.default_n}});
  }
  j["ops"].push_back(op);
  for (const TargetInfo& t : CompiledTargets()) {
    j["targets"].push_back({{"name", t.name},
                            {"compiled", true},
                            {"supported", t.supported},
                            {"fused_negmuladd", t.fused_negmuladd},
                            {"f32_lanes", t.f32_lanes}});
  }
  j["best_target"] = BestTarget().name;
  return j;
}

void PrintList() {
  std::cout << "ops\n";
  std::cout << "  tanh_bwd(grad, t) = grad * (1 - t^2)\n\n";
  TextTable variants({"variant", "op sequence", "model (FMA target)", "model (no FMA)"});
  variants.SetLeftAligned({0, 1, 2, 3});
  for (const auto& v : kTanhBwdVariants) {
    variants.AddRow({std::string(v.name), std::string(v.op_sequence),
                     std::string(v.model_fused_target), std::string(v.model_unfused_target)});
  }
  variants.Print(std::cout, "  ");
  std::cout << "\ntargets (compiled into this binary)\n";
  TextTable targets({"target", "supported here", "NegMulAdd", "f32 lanes"});
  targets.SetLeftAligned({0, 1, 2});
  for (const TargetInfo& t : CompiledTargets()) {
    targets.AddRow({t.name, t.supported ? "yes" : "no",
                    t.fused_negmuladd ? "fused" : "two roundings", std::to_string(t.f32_lanes)});
  }
  targets.Print(std::cout, "  ");
  std::cout << "  best here: " << BestTarget().name << "\n\nsuites (tanh_bwd)\n";
  TextTable suites({"suite", "default n", "inputs"});
  suites.SetLeftAligned({0, 2});
  for (const auto& s : TanhBwdSuites()) {
    suites.AddRow({s.name, std::to_string(s.default_n), s.description});
  }
  suites.Print(std::cout, "  ");
}

}  // namespace

void AddListCommand(CLI::App& app) {
  auto* cmd = app.add_subcommand("list", "List ops, variants, models, targets and suites");
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
