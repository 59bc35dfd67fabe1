#include "suites/reports/replay.h"

#include <fmt/format.h>

#include "oracles/float_text.h"
#include "suites/engine/plugins.h"
#include "suites/investigate/explain.h"
#include "suites/reports/report.h"

namespace ulpgate {

namespace {

std::string Text(const nlohmann::ordered_json& j, const char* key, const std::string& otherwise = "") {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : otherwise;
}

// --variant (and --target, for a built-in kernel) naming exactly this kernel:
// a plugin's as NAME@TARGET, which no other kernel answers to.
std::string KernelArguments(const ReplayKernel& k) {
  if (!k.source.empty()) return " --variant " + ShellWord(k.variant + "@" + k.target);
  return " --variant " + ShellWord(k.variant) + " --target " + ShellWord(k.target);
}

}  // namespace

ReplayKernel ReplayKernelOf(const CaseResult& r) {
  ReplayKernel k;
  k.op = r.op;
  k.dtype = r.dtype;
  k.variant = r.variant;
  k.target = r.target;
  k.source = r.source;
  k.model = r.kind == CaseKind::kModel;
  return k;
}

ReplayKernel ReplayKernelOf(const std::string& op, const std::string& dtype, const std::string& variant,
                            const TargetInfo& target) {
  ReplayKernel k;
  k.op = op;
  k.dtype = dtype;
  k.variant = variant;
  k.target = target.name;
  if (const LoadedPlugin* p = PluginOf(target)) {
    k.source = p->Source();
  }
  k.model = !target.supported;
  return k;
}

ReplayKernel ReplayKernelOf(const nlohmann::ordered_json& record) {
  ReplayKernel k;
  k.op = Text(record, "op");
  k.dtype = Text(record, "dtype", "f32");
  k.variant = Text(record, "variant");
  k.target = Text(record, "target");
  if (record.contains("plugin")) k.source = Text(record, "plugin");
  if (record.contains("iut")) k.source = std::string(kIutSource) + Text(record, "iut");
  k.model = Text(record, "kind") == "model";
  return k;
}

void AddSourceJson(const std::string& source, nlohmann::ordered_json& record) {
  if (source.empty()) return;
  if (source.rfind(kIutSource, 0) == 0) {
    record["iut"] = source.substr(kIutSource.size());
  } else {
    record["plugin"] = source;
  }
}

std::string SourceArguments(const ReplayKernel& k) {
  if (k.source.empty()) return "";
  if (k.source.rfind(kIutSource, 0) == 0) return " --iut " + ShellWord(k.source.substr(kIutSource.size()));
  return " --plugin " + ShellWord(k.source);
}

std::string ReplayInputCommand(const ReplayKernel& k, const std::vector<std::string>& names,
                               const std::vector<float>& operands) {
  if (k.dtype == "f32" && !k.model && FindExplainableOp(k.op) != nullptr) {
    return ExplainCommand({k}, names, operands);
  }
  std::string tuple;
  for (size_t i = 0; i < operands.size(); ++i) tuple += (i ? " " : "") + HexFloat(operands[i]);
  return fmt::format("echo '{}' | ulpgate run --op {} --dtype {}{}{}{} --inputs -", tuple, k.op, k.dtype,
                     KernelArguments(k), k.model ? " --emulate-unsupported" : "", SourceArguments(k));
}

std::string ExplainModelsCommand(const std::string& op, const std::vector<std::string>& names,
                                 const std::vector<float>& operands) {
  std::string command = "ulpgate explain --op " + op;
  for (size_t i = 0; i < operands.size() && i < names.size(); ++i) {
    command += fmt::format(" --input {}={}", names[i], HexFloat(operands[i]));
  }
  return command;
}

std::string ExplainCommand(const std::vector<ReplayKernel>& kernels, const std::vector<std::string>& names,
                           const std::vector<float>& operands) {
  std::string command =
      ExplainModelsCommand(kernels.empty() ? std::string() : kernels.front().op, names, operands);
  if (kernels.size() == 1) return command + KernelArguments(kernels.front()) + SourceArguments(kernels.front());
  // Several: each as NAME@TARGET, every source once.
  std::string variants, sources;
  for (const ReplayKernel& k : kernels) {
    const std::string name = k.variant + "@" + k.target;
    if (variants.find(name) == std::string::npos) variants += (variants.empty() ? "" : ",") + name;
    const std::string source = SourceArguments(k);
    if (sources.find(source) == std::string::npos) sources += source;
  }
  return command + " --variant " + ShellWord(variants) + sources;
}

std::string CompareInputCommand(const std::string& op, const std::string& dtype, const std::string& a,
                                const std::string& b, const std::vector<std::string>& names,
                                const std::vector<float>& operands, const std::string& arguments) {
  std::string command = "ulpgate compare --op " + op;
  if (dtype != "f32") command += " --dtype " + dtype;
  command += " --a " + ShellWord(a) + " --b " + ShellWord(b);
  for (size_t i = 0; i < operands.size() && i < names.size(); ++i) {
    command += fmt::format(" --input {}={}", names[i], HexFloat(operands[i]));
  }
  return command + arguments;
}

std::string ReplayRunCommand(const ReplayKernel& k, const std::string& suite, uint64_t seed, uint64_t n,
                             const std::string& shape) {
  std::string command = "ulpgate run --op " + k.op + KernelArguments(k);
  if (suite.rfind("file:", 0) == 0) {
    command += " --inputs " + ShellWord(suite.substr(5));
  } else {
    command += fmt::format(" --suite {} --seed {} --n {}", ShellWord(suite), seed, n);
  }
  if (k.dtype != "f32") command += " --dtype " + k.dtype;
  if (!shape.empty()) command += " --shape " + ShellWord(shape);
  if (k.model) command += " --emulate-unsupported";
  return command + SourceArguments(k);
}

}  // namespace ulpgate
