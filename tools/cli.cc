#include "tools/cli.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cerrno>
#include <fmt/format.h>
#include <sstream>
#include <utility>

#include "suites/engine/plugins.h"

namespace ulpgate {

int& ExitStatus() {
  static int status = 0;
  return status;
}

std::vector<std::string> SplitList(const std::string& spec) {
  std::vector<std::string> items;
  if (spec.empty() || spec == "all") return items;
  std::stringstream stream(spec);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

namespace {

// The targets a comma-separated list names, each once, in the order given
// ("best" may stand alone or in a list: "best,SSE4"); throws UsageError for an
// unknown name or an empty list.
std::vector<const TargetInfo*> NamedTargets(const std::string& spec) {
  std::vector<const TargetInfo*> targets;
  for (const std::string& name : SplitList(spec)) {
    const TargetInfo* t = name == "best" ? &BestTarget() : FindTarget(name);
    if (t == nullptr) {
      std::string known;
      for (const TargetInfo& c : CompiledTargets()) known += (known.empty() ? "" : ", ") + c.name;
      throw UsageError("unknown target '" + name + "' (compiled: " + known + ")");
    }
    if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
  }
  if (targets.empty()) throw UsageError("no target given");
  return targets;
}

}  // namespace

std::vector<const TargetInfo*> ResolveTargets(const std::string& spec,
                                              std::vector<std::string>* skipped) {
  std::vector<const TargetInfo*> targets;
  if (spec == "all") {
    for (const TargetInfo& t : CompiledTargets()) {
      if (t.supported) {
        targets.push_back(&t);
      } else if (skipped) {
        skipped->push_back(t.name);
      }
    }
    return targets;
  }
  targets = NamedTargets(spec);
  for (const TargetInfo* t : targets) {
    if (!t->supported) {
      throw UsageError("target " + t->name + " is compiled but not runnable here (" +
                       NotRunnableReason(*t) + ")");
    }
  }
  return targets;
}

void AddPluginOption(CLI::App* cmd, std::vector<std::string>* paths, const std::string& more) {
  cmd->add_option("--plugin", *paths,
                  "A shared library of elementwise kernels (ulpgate/plugin.h; repeatable): "
                  "its kernels of the command's op and dtype join the built-in ones under a target named after the plugin, each "
                  "expected to follow the model it claims" + more);
  // An IUT's targets travel among the plugin paths (kIutSource + COMMAND), so
  // that every command that takes plugins takes IUTs the same way.
  cmd->add_option_function<std::vector<std::string>>(
         "--iut",
         [paths](const std::vector<std::string>& commands) {
           for (const std::string& c : commands) paths->push_back(std::string(kIutSource) + c);
         },
         "The command line of an implementation-under-test process (docs/iut.md; run by /bin/sh; "
         "repeatable): each target it offers joins like a plugin's, its kernels run in that process "
         "(\"build/bin/ulpgate-iut --builtin\", an emulator running an ARM build, "
         "\"python3 tools/python/torch_iut.py\")")
      ->type_name("COMMAND");
  // Plugins run in a process of their own unless asked: a crash or a hang of
  // a kernel under development is then a report, not the end of the command.
  auto options = std::make_shared<PluginProcessOptions>();
  options->in_process = false;
  cmd->add_flag("--in-process", options->in_process,
                "Call the plugins' kernels in this process (faster; a crash ends the command) instead of "
                "in ulpgate-iut, where a crash, a hang or a write outside the output is reported as the case's fault");
  auto* timeout = cmd->add_option("--kernel-timeout", options->kernel_timeout_seconds,
                  "Seconds one call of a plugin's or an IUT's kernel may take before it counts as hung "
                  "(TIMEOUT), from 0.001 to 86400; default: 100 times the kernel's median time per input so far, "
                  "times the call's inputs, at least 1 s (10 s until it has answered 3 calls)")
      ->type_name("SECONDS")
      ->check(SecondsValidator("a kernel timeout", 0.001, 86400.0));
  cmd->parse_complete_callback([options, timeout] {
    PluginProcessOptions o = *options;
    if (timeout->count() == 0) o.kernel_timeout_seconds = 0;  // from the kernel's own call times
    SetPluginProcessOptions(o);
  });
}

std::string VariantHelp(const std::string& none) {
  return "Kernels: a variant (on every --target), a plugin's or IUT's kernel by its name, "
         "NAME@TARGET where several share the name, a comma-separated list of them, or all" +
         (none.empty() ? std::string() : "; none: " + none) +
         ". A list that names no plugin kernel leaves the plugins' kernels all in";
}

void AddThreadsOption(CLI::App* cmd, unsigned* threads) {
  cmd->add_option("--threads", *threads,
                  "Worker threads (default: every core); results do not depend on it")
      ->check(CountValidator("a thread count", 1, kMaxThreads));
}

std::vector<const TargetInfo*> TargetsAndPlugins(const std::string& spec,
                                                 const std::vector<std::string>& plugin_paths) {
  std::vector<const TargetInfo*> targets;
  if (!spec.empty() || plugin_paths.empty()) targets = ResolveCompiledTargets(spec.empty() ? "all" : spec);
  for (const TargetInfo* t : LoadPlugins(plugin_paths)) targets.push_back(t);
  return targets;
}

std::vector<const TargetInfo*> ResolveCompiledTargets(const std::string& spec) {
  if (spec != "all") return NamedTargets(spec);
  std::vector<const TargetInfo*> targets;
  for (const TargetInfo& t : CompiledTargets()) targets.push_back(&t);
  return targets;
}

std::string DescribeSkipped(const std::vector<std::string>& skipped) {
  std::vector<std::pair<std::string, std::string>> groups;  // reason, names
  for (const std::string& name : skipped) {
    const TargetInfo* t = FindTarget(name);
    const std::string reason = t ? NotRunnableReason(*t) : "";
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return g.first == reason; });
    if (group == groups.end()) group = groups.insert(groups.end(), {reason, ""});
    group->second += (group->second.empty() ? "" : ", ") + name;
  }
  std::string text;
  for (const auto& [reason, names] : groups) {
    text += (text.empty() ? "" : "; ") + names + (reason.empty() ? "" : " (" + reason + ")");
  }
  return text;
}

CLI::Validator CountValidator(const std::string& what, uint64_t min, uint64_t max) {
  std::string limit = std::to_string(max);
  for (int k = 1; k < 64; ++k) {
    if (max == (uint64_t{1} << k)) limit += fmt::format(" = 2^{}", k);
  }
  const std::string expected =
      fmt::format("expected {}: a whole number from {} to {}", what, min, limit);
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 20 &&
                            text.find_first_not_of("0123456789") == std::string::npos;
        if (!digits) return fmt::format("{}, got '{}'", expected, text);
        errno = 0;
        const unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
        if (errno == ERANGE || v < min || v > max) return fmt::format("{}, got {}", expected, text);
        return std::string();
      },
      "", "count");
}

CLI::Validator SecondsValidator(const std::string& what, double min, double max) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(v >= min) ||
            !(v <= max)) {
          return fmt::format("expected {}: seconds from {} to {}, got '{}'", what, min, max, text);
        }
        return std::string();
      },
      "", "seconds");
}

CLI::Validator NonNegativeValidator(const std::string& what) {
  return CLI::Validator(
      [what](std::string& text) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || !(v >= 0) ||
            std::isinf(v)) {
          return fmt::format("expected {}: a number >= 0, such as 1.5, got '{}'", what, text);
        }
        return std::string();
      },
      "", "number");
}

const ElementwiseOpInfo& ElementwiseOpArgument(const std::string& name) {
  if (const ElementwiseOpInfo* op = FindElementwiseOp(name)) return *op;
  throw UsageError("unknown elementwise op '" + name + "' (" + ElementwiseOpNames() + ")");
}

std::string ElementwiseOpNames() {
  std::string names;
  for (const ElementwiseOpInfo& op : ElementwiseOps()) {
    names += (names.empty() ? "" : ", ") + std::string(op.name);
  }
  return names;
}

uint64_t ParseIndex(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    const uint64_t v = std::stoull(text, &used, 0);
    if (used != text.size() || text.empty() || text[0] == '-') throw std::invalid_argument(text);
    return v;
  } catch (const std::exception&) {
    throw UsageError(fmt::format("{}: expected a whole number (decimal or 0x hex), got '{}'", what, text));
  }
}

std::pair<uint64_t, uint64_t> ParseShard(const std::string& spec) {
  const size_t slash = spec.find('/');
  if (slash == std::string::npos) throw UsageError("--shard: expected K/N (K from 0 to N-1), got '" + spec + "'");
  const uint64_t k = ParseIndex(spec.substr(0, slash), "--shard K");
  const uint64_t n = ParseIndex(spec.substr(slash + 1), "--shard N");
  if (n == 0 || k >= n) throw UsageError("--shard " + spec + ": K runs from 0 to N-1");
  return {k, n};
}

}  // namespace ulpgate
