// ulpgate matrix: variant x target over the standard suites: the model each
// kernel conforms to, max ULP per suite, and bit-identical output groups
// (suites/investigate/matrix.h does the work; this file prints).
#include <fmt/format.h>

#include <iostream>

#include "suites/investigate/explain.h"
#include "suites/investigate/matrix.h"
#include "suites/engine/plugins.h"
#include "suites/reports/report.h"
#include "tools/cli.h"
#include "tools/faults.h"
#include "tools/progress.h"
#include "tools/text_table.h"

namespace ulpgate {
namespace {

struct MatrixArgs {
  std::string kernel = std::string(DefaultElementwiseOp().name);
  uint64_t n = 20000;
  uint64_t seed = 1;
  unsigned threads = 0;
  std::string json_path;
  std::vector<std::string> plugins;
};

void PrintMatrix(const ConformanceMatrix& m) {
  std::string suites;
  for (const auto& s : m.suites) suites += (suites.empty() ? "" : ", ") + s;
  std::cout << fmt::format("{}: variant x target over {} suites ({}) x {} inputs, seed {}\n\n",
                           m.op, m.suites.size(), suites, m.n_per_suite, m.seed);
  std::cout << fmt::format(
      "model each kernel conforms to, bit for bit on all {} inputs [bit-identical output group]\n",
      m.n_per_suite * m.suites.size());
  std::vector<std::string> header = {"variant"};
  for (const TargetInfo* t : m.targets) {
    header.push_back(t->name + (t->fused_negmuladd ? " (FMA)" : IsPluginTarget(*t) ? " (plugin)" : ""));
  }
  TextTable grid(header);
  std::vector<size_t> left;
  for (size_t c = 0; c < header.size(); ++c) left.push_back(c);
  grid.SetLeftAligned(left);
  for (const std::string& variant : m.variants) {
    std::vector<std::string> row = {variant};
    for (const TargetInfo* t : m.targets) {
      const MatrixCell* cell = m.Find(variant, t->name);
      if (cell == nullptr) {
        row.push_back("");
        continue;
      }
      const MatrixCell& c = *cell;
      if (!c.run) {
        row.push_back("(" + c.expected_model + ": not run)");
      } else if (c.fault) {
        row.push_back(std::string(KernelFaultName(c.fault->fault->kind)) + "!");
      } else if (c.model.empty()) {
        row.push_back("NONE [" + GroupName(c.group) + "]");
      } else {
        row.push_back(c.model + (c.as_expected() ? "" : "!") + " [" + GroupName(c.group) + "]");
      }
    }
    grid.AddRow(row);
  }
  grid.Print(std::cout, "  ");

  std::cout << "\nmax ULP per suite (special: NaN/inf mismatches, all suites)\n";
  std::vector<std::string> columns = {"variant", "target", "model", "expected"};
  for (const auto& s : m.suites) columns.push_back(s);
  columns.push_back("special");
  columns.push_back("group");
  TextTable errors(columns);
  errors.SetLeftAligned({0, 1, 2, 3});
  for (const MatrixCell& c : m.cells) {
    if (!c.run) continue;
    if (c.fault) {
      std::vector<std::string> row = {c.variant, c.target->name, KernelFaultName(c.fault->fault->kind),
                                      c.expected_model};
      for (size_t s = 0; s < m.suites.size(); ++s) row.push_back("-");
      row.push_back("-");
      row.push_back("-");
      errors.AddRow(row);
      continue;
    }
    std::vector<std::string> row = {c.variant, c.target->name, c.model.empty() ? "none" : c.model,
                                    c.expected_model};
    uint64_t special = 0;
    for (size_t s = 0; s < m.suites.size(); ++s) {
      row.push_back(FormatUlp(c.max_ulp[s]));
      special += c.special_mismatch[s];
    }
    row.push_back(std::to_string(special));
    row.push_back(GroupName(c.group));
    errors.AddRow(row);
  }
  errors.Print(std::cout, "  ");

  std::cout << "\ndigest groups (bit-identical outputs on every input of every suite)\n";
  for (size_t g = 0; g < m.groups.size(); ++g) {
    std::string members;
    for (size_t i : m.groups[g]) {
      members += (members.empty() ? "" : " ") + m.cells[i].variant + "@" + m.cells[i].target->name;
    }
    const std::string head = fmt::format("  {}  {}  ", GroupName(static_cast<int>(g)),
                                         DigestHex(m.cells[m.groups[g].front()].digest));
    std::cout << head;
    PrintWrapped(std::cout, members, head.size(), head.size());
  }
  std::string not_run;
  for (const TargetInfo* t : m.targets) {
    if (!t->supported) not_run += (not_run.empty() ? "" : ", ") + t->name;
  }
  if (!not_run.empty()) {
    std::cout << "\nnot run (compiled, this CPU cannot run them): " << not_run << "\n";
  }
  for (const MatrixCell& c : m.cells) {
    if (!c.fault) continue;
    std::cout << '\n';
    PrintKernelFault(std::cout, *c.fault, *c.fault_inputs);
  }
  size_t run = 0, expected = 0;
  for (const MatrixCell& c : m.cells) {
    run += c.run;
    expected += c.as_expected();
  }
  std::cout << '\n';
  PrintWrapped(std::cout,
               fmt::format("the expected models (fused model where NegMulAdd is an FMA, "
                           "two-rounding model elsewhere; a plugin's kernel: the model it claims): "
                           "{} of {} cases run here conform{}",
                           expected, run,
                           m.AllAsExpected() ? "" : "; '!' or NONE above marks the others"),
               2);
}

void RunMatrix(const MatrixArgs& args) {
  const ElementwiseOpInfo& op = ElementwiseOpArgument(args.kernel);
  if (args.n == 0) throw UsageError("--n must be at least 1");
  ProgressLine progress("matrix", "inputs");
  const ConformanceMatrix m =
      BuildMatrix(op, args.n, args.seed, args.threads, LoadPlugins(args.plugins),
                  [&progress](uint64_t done, uint64_t total) { progress(done, total); });
  progress.Clear();
  PrintMatrix(m);
  if (!args.json_path.empty()) {
    nlohmann::ordered_json j = MatrixJson(m);
    for (size_t i = 0; i < m.cells.size(); ++i) {
      const MatrixCell& c = m.cells[i];
      if (c.fault) j["cells"][i]["fault"]["replay"] = FaultReplayCommand(*c.fault, *c.fault_inputs);
    }
    WriteJsonFile(args.json_path, j);
  }
  if (!m.AllAsExpected()) ExitStatus() = 1;
  if (m.AnyFault()) ExitStatus() = kExitKernelFault;
}

}  // namespace

void AddMatrixCommand(CLI::App& app) {
  auto args = std::make_shared<MatrixArgs>();
  auto* cmd = app.add_subcommand(
      "matrix",
      "Variant x target: the model each kernel conforms to, max ULP per suite, identical-output "
      "groups (exit 1 if a kernel does not follow the model its target should)");
  cmd->add_option("--op,--kernel", args->kernel, "Elementwise op (" + ElementwiseOpNames() + ")")
      ->capture_default_str();
  cmd->add_option("--n", args->n, "Inputs per suite")
      ->capture_default_str()
      ->check(CountValidator("the number of inputs", 1, kMaxElementwiseInputs));
  cmd->add_option("--seed", args->seed, "Suite seed")
      ->capture_default_str()
      ->check(CountValidator("a seed", 0, kMaxSeed));
  AddThreadsOption(cmd, &args->threads);
  cmd->add_option("--json", args->json_path, "Write the matrix as JSON here");
  AddPluginOption(cmd, &args->plugins, ": a column of its own, its kernels rows of their own");
  cmd->callback([args] { RunMatrix(*args); });
}

}  // namespace ulpgate
