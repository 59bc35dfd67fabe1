#include "suites/engine/plugins.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "kernels/cast.h"
#include "suites/inputs/inputs.h"
#include "kernels/narrow_formats.h"
#include "suites/engine/elementwise_cases.h"
#include "suites/engine/elementwise_oracle.h"

namespace ulpgate {

namespace {

// Every plugin loaded in this process; a deque, so that targets keep their
// addresses while more plugins load.
std::deque<LoadedPlugin>& Loaded() {
  static std::deque<LoadedPlugin> plugins;
  return plugins;
}

PluginProcessOptions& ProcessOptions() {
  static PluginProcessOptions options;
  return options;
}

// Processes of one IUT command, as many as threads have called it at once
// (a sweep's or the engine's workers), so that the kernels of one plugin or
// IUT run beside the host's threads instead of one call at a time.
class IutPool {
 public:
  IutPool(std::vector<std::string> argv, double timeout_seconds)
      : argv_(std::move(argv)), timeout_seconds_(timeout_seconds) {}

  std::vector<IutOffer> Offers() {
    Lease lease(*this);
    return lease.process->Offers();
  }
  void Call(const IutCall& call, const void* const* operands, void* out) {
    Lease lease(*this);
    lease.process->Call(call, operands, out);
  }
  void Reduce(const IutReduceCall& call, const void* const* operands, void* out) {
    Lease lease(*this);
    lease.process->Reduce(call, operands, out);
  }

 private:
  struct Lease {
    explicit Lease(IutPool& p) : pool(p) {
      std::lock_guard<std::mutex> lock(pool.mutex_);
      if (pool.free_.empty()) {
        pool.all_.push_back(std::make_unique<IutProcess>(pool.argv_, pool.timeout_seconds_));
        pool.free_.push_back(pool.all_.back().get());
      }
      process = pool.free_.back();
      pool.free_.pop_back();
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(pool.mutex_);
      pool.free_.push_back(process);
    }
    IutPool& pool;
    IutProcess* process = nullptr;
  };
  std::vector<std::string> argv_;
  double timeout_seconds_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<IutProcess>> all_;
  std::vector<IutProcess*> free_;
};

// The model a kernel claims: a built-in model of the op in the format by its
// name (with its program, where it has one: f16's Highway software
// conversion is named, not written), or NAME: statements. `where` begins the
// error's message.
ModelProgram ClaimedModel(const ElementwiseOpInfo& op, const FloatFormat& format,
                          const std::string& model, const std::string& where) {
  ModelProgram program;
  if (model.find(':') != std::string::npos) {
    try {
      return ParseModelSpec(model, op.operand_names(), format);
    } catch (const ModelSyntaxError& e) {
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
  }
  bool found = false;
  std::string known;
  for (const std::string& builtin : ModelNames(op, format)) {
    known += (known.empty() ? "" : ", ") + builtin;
    if (builtin == model) found = true;
  }
  if (!found) {
    throw InputError(
        fmt::format("{}: unknown model '{}' ({}; or NAME: statements)", where, model, known));
  }
  program.name = model;
  for (ModelProgram& m : ModelPrograms(op, format)) {
    if (m.name == model) program = std::move(m);
  }
  return program;
}

// Throws unless `name` is free for a plugin's target.
void RequireFreeTargetName(const std::string& name, const std::string& what) {
  if (FindTarget(name) != nullptr) {
    throw InputError(fmt::format("{}: the target is named '{}', a compiled target's name", what, name));
  }
  if (const LoadedPlugin* other = FindPlugin(name)) {
    throw InputError(fmt::format("{}: the target is named '{}', as {} is", what, name, other->path));
  }
}

// The policy a cast claims: a policy of the cast model that applies from
// `from` to `to`. `where` begins the error's message.
CastPolicy ClaimedCastPolicy(const FloatFormat& from, const FloatFormat& to, const std::string& name,
                             const std::string& where) {
  const std::optional<CastPolicy> policy = ParseCastPolicy(name);
  if (!policy) {
    throw InputError(fmt::format("{}: unknown cast policy '{}' (`ulpgate list`; e.g. "
                                 "nearest_even.saturate)", where, name));
  }
  const std::string problem = CastPolicyProblem(from, to, *policy);
  if (!problem.empty()) throw InputError(fmt::format("{}: policy {}: {}", where, name, problem));
  return *policy;
}

// The destination of a cast op's kernel, or an error naming those there are.
const FloatFormat& CastDestinationOf(const std::string& dtype, const std::string& where) {
  const FloatFormat* to = FindCastDestination(dtype);
  if (to == nullptr) {
    std::string known;
    for (const FloatFormat* f : kCastDestinations) known += (known.empty() ? "" : ", ") + std::string(f->name);
    throw InputError(fmt::format("{}: destination '{}' (casts go to {})", where, dtype, known));
  }
  return *to;
}

// A reduction kernel's call through an IUT: the call's element counts from
// the op's shapes, so that every IUT is told each tensor's size.
ReductionCall IutReduction(std::shared_ptr<IutPool> iut, const ReductionOpInfo& op, IutReduceCall call) {
  return [iut, &op, call](const void* const* in, void* out, const size_t* extents, size_t rank) {
    IutReduceCall c = call;
    c.extents.assign(extents, extents + rank);
    const std::optional<ReductionShape> shape = ReductionShapeOf(op, c.extents);
    if (!shape) throw std::invalid_argument("a shape of rank " + std::to_string(rank) + " for " + c.op);
    c.operand_counts.clear();
    for (const std::vector<size_t>& dims : ReductionOperandShapes(op, *shape)) {
      uint64_t count = 1;
      for (const size_t d : dims) count *= d;
      c.operand_counts.push_back(count);
    }
    c.output_count = ReductionOutputCount(op, *shape);
    iut->Reduce(c, in, out);
  };
}

// Checks a reduction kernel's dtype and claimed model (empty: none); `where`
// begins the error's message. Returns its format.
const FloatFormat& CheckReduction(const ReductionOpInfo& op, const std::string& dtype,
                                  const std::string& model, const std::string& where) {
  const FloatFormat* format = FindFormat(dtype);
  if (format == nullptr || IutElementBytes(dtype) == 0) {
    throw InputError(fmt::format("{}: dtype '{}' ({} runs in {})", where, dtype, op.name, KernelFormatNames()));
  }
  if (!model.empty()) {
    const std::vector<std::string> names = ReductionModelNames(op);
    if (std::find(names.begin(), names.end(), model) == names.end()) {
      std::string known;
      for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
      throw InputError(fmt::format("{}: unknown model '{}' ({}: {})", where, model, op.name, known));
    }
  }
  return *format;
}

}  // namespace

std::vector<std::string> ReductionModelNames(const ReductionOpInfo& op) {
  std::vector<std::string> names;
  for (const ReductionVariantInfo& v : op.variants) {
    for (const ReductionModel& m : CandidateReductionModels(op, v)) {
      const std::string name = m.Name(op);
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  return names;
}

void SetPluginProcessOptions(const PluginProcessOptions& options) { ProcessOptions() = options; }
const PluginProcessOptions& CurrentPluginProcessOptions() { return ProcessOptions(); }

const PluginKernel* LoadedPlugin::Find(std::string_view variant, std::string_view dtype,
                                       std::string_view op) const {
  for (const PluginKernel& k : kernels) {
    if (k.variant == variant && k.format->name == dtype && (op.empty() || k.op == op)) return &k;
  }
  return nullptr;
}

bool LoadedPlugin::HasDtype(std::string_view dtype, std::string_view op) const {
  return std::any_of(kernels.begin(), kernels.end(), [&](const PluginKernel& k) {
    return k.format->name == dtype && (op.empty() || k.op == op);
  });
}

bool LoadedPlugin::GivesOp(std::string_view op) const {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

std::string LoadedPlugin::OpsText() const {
  std::string text;
  for (const std::string& op : ops) text += (text.empty() ? "" : ", ") + op;
  return text;
}

std::string PluginSourceArgument(const std::string& entry) {
  if (entry.rfind(kIutSource, 0) != 0) return "--plugin " + entry;
  std::string quoted = "'";
  for (const char c : entry.substr(kIutSource.size())) {
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return "--iut " + quoted + "'";
}

std::string LoadedPlugin::Source() const {
  return from_iut ? std::string(kIutSource) + path : path;
}

std::string LoadedPlugin::Argument() const { return PluginSourceArgument(Source()); }

const LoadedPlugin* FindPlugin(std::string_view target_name) {
  for (const LoadedPlugin& p : Loaded()) {
    if (p.target.name == target_name) return &p;
  }
  return nullptr;
}

const LoadedPlugin* PluginOf(const TargetInfo& target) {
  for (const LoadedPlugin& p : Loaded()) {
    if (&p.target == &target) return &p;
  }
  return nullptr;
}

bool IsPluginTarget(const TargetInfo& target) { return PluginOf(target) != nullptr; }

const TargetInfo* FindAnyTarget(std::string_view name) {
  if (const LoadedPlugin* p = FindPlugin(name)) return &p->target;
  const TargetInfo* t = FindTarget(name);
  return t != nullptr && t->name == name ? t : nullptr;
}

std::vector<std::string> PluginVariants(const std::vector<const TargetInfo*>& targets,
                                        std::string_view op, std::string_view dtype) {
  std::vector<std::string> variants;
  for (const TargetInfo* t : targets) {
    const LoadedPlugin* p = PluginOf(*t);
    if (p == nullptr) continue;
    for (const PluginKernel& k : p->kernels) {
      if (k.format->name == dtype && k.op == op) variants.push_back(k.variant);
    }
  }
  return variants;
}

std::vector<std::string> LoadedPluginVariants(std::string_view op, std::string_view dtype) {
  std::vector<std::string> variants;
  for (const LoadedPlugin& p : Loaded()) {
    for (const PluginKernel& k : p.kernels) {
      if (k.format->name == dtype && k.op == op) variants.push_back(k.variant);
    }
  }
  return variants;
}

void RequirePluginOp(const std::vector<const TargetInfo*>& targets, std::string_view op) {
  for (const TargetInfo* t : targets) {
    const LoadedPlugin* p = PluginOf(*t);
    if (p != nullptr && !p->GivesOp(op)) {
      throw InputError(fmt::format("plugin {} ({}) gives {} kernels, not {}", p->target.name,
                                   p->path, p->OpsText(), op));
    }
  }
}

std::vector<std::string> LoadedPluginNames() {
  std::vector<std::string> names;
  for (const LoadedPlugin& p : Loaded()) names.push_back(p.target.name);
  return names;
}

std::vector<const TargetInfo*> LoadPlugins(const std::vector<std::string>& paths) {
  std::vector<const TargetInfo*> targets;
  for (const std::string& path : paths) {
    std::vector<const TargetInfo*> loaded;
    if (path.rfind(kIutSource, 0) == 0) {
      loaded = LoadIut(path.substr(kIutSource.size()));
    } else {
      loaded.push_back(&LoadPlugin(path).target);
    }
    for (const TargetInfo* t : loaded) {
      if (std::find(targets.begin(), targets.end(), t) == targets.end()) targets.push_back(t);
    }
  }
  return targets;
}

const LoadedPlugin& LoadPlugin(const std::string& path) {
  for (const LoadedPlugin& p : Loaded()) {
    if (p.path == path) return p;
  }
  PluginLibrary plugin;
  try {
    plugin = OpenPluginLibrary(path);
  } catch (const PluginLibraryError& e) {
    throw InputError(e.what());
  }
  if (plugin.name == nullptr || *plugin.name == '\0') {
    throw InputError(fmt::format("--plugin {}: the plugin has no name", path));
  }
  if (plugin.kernels.empty()) {
    throw InputError(fmt::format("--plugin {}: the plugin lists no kernels", path));
  }
  const std::string name = plugin.name;
  if (FindTarget(name) != nullptr) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', a compiled target's name",
                                 path, name));
  }
  if (const LoadedPlugin* other = FindPlugin(name)) {
    throw InputError(fmt::format("--plugin {}: the plugin is named '{}', as {} is", path, name,
                                 other->path));
  }
  const ElementwiseOpInfo* op_info = FindElementwiseOp(plugin.op);
  std::vector<PluginKernel> kernels;
  for (size_t k = 0; k < plugin.kernels.size(); ++k) {
    PluginLibraryKernel& kernel = plugin.kernels[k];
    const std::string where = fmt::format("--plugin {}: kernel {}", path, k);
    auto text = [&](const char* s, const char* what) {
      if (s == nullptr || *s == '\0') throw InputError(fmt::format("{}: no {}", where, what));
      return std::string(s);
    };
    if (const ReductionOpInfo* reduction = FindReductionOp(kernel.op)) {
      const std::string variant = text(kernel.variant, "variant name");
      const std::string model = kernel.model == nullptr ? "" : kernel.model;
      const std::string what = fmt::format("{} ({})", where, variant);
      const FloatFormat& format = CheckReduction(*reduction, text(kernel.dtype, "dtype"), model, what);
      if (!kernel.has_reduction) throw InputError(what + ": no function");
      for (const PluginKernel& earlier : kernels) {
        if (earlier.op == kernel.op && earlier.variant == variant && earlier.format == &format) {
          throw InputError(fmt::format("{}: a second {} {} kernel of that name", what, kernel.op, format.name));
        }
      }
      PluginKernel p;
      p.op = kernel.op;
      p.variant = variant;
      p.format = &format;
      p.reduce = std::move(kernel.reduce);
      p.reduction_model = model;
      kernels.push_back(std::move(p));
      continue;
    }
    if (const FloatFormat* from = IutCastSource(kernel.op)) {
      const std::string variant = text(kernel.variant, "variant name");
      const FloatFormat& to = CastDestinationOf(text(kernel.dtype, "destination"), where);
      if (!kernel.has_cast) throw InputError(fmt::format("{} ({}): no function", where, variant));
      for (const PluginKernel& earlier : kernels) {
        if (earlier.op == kernel.op && earlier.variant == variant && earlier.format == &to) {
          throw InputError(fmt::format("{} ({}): a second {} {} kernel of that name", where, variant,
                                       kernel.op, to.name));
        }
      }
      PluginKernel p;
      p.op = kernel.op;
      p.variant = variant;
      p.format = &to;
      p.call = std::move(kernel.call);
      if (kernel.model != nullptr) {
        p.policy = ClaimedCastPolicy(*from, to, kernel.model, fmt::format("{} ({})", where, variant));
      }
      kernels.push_back(std::move(p));
      continue;
    }
    const std::string variant = text(kernel.variant, "variant name");
    const std::string dtype = text(kernel.dtype, "dtype");
    const std::string model = text(kernel.model, "model");
    const FloatFormat* format = FindFormat(dtype);
    if (format == nullptr || format->bits > 32 ||
        (format->bits < 32 && NarrowFormatIndex(format->name) < 0)) {
      throw InputError(
          fmt::format("{} ({}): dtype '{}' (plugins take {})", where, variant, dtype, KernelFormatNames()));
    }
    const bool narrow = format->bits < 32;
    if (!(narrow ? kernel.has_u16 : kernel.has_f32)) {
      throw InputError(fmt::format("{} ({}): no function (a {} kernel's is `{}`)", where, variant,
                                   dtype, narrow ? "u16" : "f32"));
    }
    if (narrow ? kernel.has_f32 : kernel.has_u16) {
      throw InputError(fmt::format("{} ({}): a {} kernel has only its `{}` function", where,
                                   variant, dtype, narrow ? "u16" : "f32"));
    }
    for (const PluginKernel& earlier : kernels) {
      if (earlier.variant == variant && earlier.format == format) {
        throw InputError(fmt::format("{} ({}): a second {} kernel of that name", where, variant, dtype));
      }
    }
    PluginKernel p;
    p.op = plugin.op;
    p.variant = variant;
    p.format = format;
    p.call = std::move(kernel.call);
    p.model = ClaimedModel(*op_info, *format, model, fmt::format("{} ({})", where, variant));
    kernels.push_back(std::move(p));
  }
  const PluginProcessOptions& process = ProcessOptions();
  if (!process.in_process) {
    // The same library, loaded again by the IUT; this process keeps only
    // what the plugin says of its kernels.
    auto iut = std::make_shared<IutPool>(
        std::vector<std::string>{BundledIutPath(), "--plugin", path}, process.kernel_timeout_seconds);
    for (PluginKernel& k : kernels) {
      if (const ReductionOpInfo* reduction = FindReductionOp(k.op)) {
        IutReduceCall call;
        call.op = k.op;
        call.dtype = k.format->name;
        call.target = name;
        call.variant = k.variant;
        k.reduce = IutReduction(iut, *reduction, call);
        continue;
      }
      IutCall call;
      call.op = k.op;
      call.dtype = k.format->name;
      call.target = name;
      call.variant = k.variant;
      call.arity = IutCastSource(k.op) != nullptr ? 1 : op_info->arity();
      k.call = [iut, call](const void* const* in, void* out, size_t n) mutable {
        IutCall c = call;
        c.n = n;
        iut->Call(c, in, out);
      };
    }
  }
  LoadedPlugin loaded;
  loaded.path = path;
  loaded.in_process = process.in_process;
  loaded.abi_version = plugin.abi_version;
  for (const PluginKernel& k : kernels) {
    if (!loaded.GivesOp(k.op)) loaded.ops.push_back(k.op);
  }
  loaded.target.name = name;
  loaded.target.supported = true;
  loaded.target.cpu_supported = true;
  loaded.target.f32_lanes = 1;
  loaded.kernels = std::move(kernels);
  return Loaded().emplace_back(std::move(loaded));
}

}  // namespace ulpgate

namespace ulpgate {

const TargetInfo* RegisterPluginKernels(LoadedPlugin plugin) {
  RequireFreeTargetName(plugin.target.name, "kernels '" + plugin.target.name + "'");
  plugin.target.supported = plugin.target.cpu_supported = true;
  plugin.target.f32_lanes = 1;
  for (const PluginKernel& k : plugin.kernels) {
    if (!plugin.GivesOp(k.op)) plugin.ops.push_back(k.op);
  }
  return &Loaded().emplace_back(std::move(plugin)).target;
}

std::vector<const TargetInfo*> LoadIut(const std::string& command) {
  std::vector<const TargetInfo*> targets;
  for (const LoadedPlugin& p : Loaded()) {
    if (p.from_iut && p.path == command) targets.push_back(&p.target);
  }
  if (!targets.empty()) return targets;
  const std::string what = "--iut '" + command + "'";
  if (command.find_first_not_of(" \t") == std::string::npos) throw InputError("--iut: an empty command");
  const PluginProcessOptions& process = ProcessOptions();
  // Through the shell, so that the command may set the environment or quote
  // its arguments; exec, so that the IUT is the process the host watches.
  auto iut = std::make_shared<IutPool>(std::vector<std::string>{"/bin/sh", "-c", "exec " + command},
                                       process.kernel_timeout_seconds);
  std::vector<IutOffer> offers;
  try {
    offers = iut->Offers();
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: {}", what, e.what()));
  }
  if (offers.empty()) {
    throw InputError(what + ": the IUT offers no kernels (a line 'kernel TARGET OP DTYPE VARIANT' "
                            "before 'ready'; docs/iut.md)");
  }
  // The IUT's targets in the order it first names them.
  std::vector<std::string> names;
  for (const IutOffer& o : offers) {
    if (std::find(names.begin(), names.end(), o.target) == names.end()) names.push_back(o.target);
  }
  std::vector<LoadedPlugin> built;
  for (const std::string& iut_name : names) {
    // A compiled target's name: the IUT runs this build's kernels of it
    // (ulpgate-iut --builtin), shown as NAME-iut beside the in-process ones.
    const TargetInfo* compiled = FindTarget(iut_name);
    if (compiled != nullptr && compiled->name != iut_name) compiled = nullptr;
    const std::string name = compiled != nullptr ? iut_name + "-iut" : iut_name;
    RequireFreeTargetName(name, what);
    LoadedPlugin loaded;
    loaded.path = command;
    loaded.from_iut = true;
    loaded.in_process = false;
    loaded.target.name = name;
    loaded.target.supported = true;
    loaded.target.cpu_supported = true;
    loaded.target.f32_lanes = 1;
    for (const IutOffer& o : offers) {
      if (o.target != iut_name) continue;
      const std::string where = fmt::format("{}: kernel {} {} {} {}", what, o.target, o.op, o.dtype, o.variant);
      if (const FloatFormat* from = IutCastSource(o.op)) {
        // A cast: its destination the dtype, its claim a policy (the line's,
        // else, for this build's target, the policy its variant follows).
        const FloatFormat& to = CastDestinationOf(o.dtype, where);
        if (loaded.Find(o.variant, o.dtype, o.op) != nullptr) throw InputError(where + ": offered twice");
        PluginKernel k;
        k.op = o.op;
        k.variant = o.variant;
        k.format = &to;
        std::string policy = o.model;
        const CastVariantInfo* builtin = FindCastVariant(o.variant);
        if (policy.empty() && compiled != nullptr && builtin != nullptr &&
            CastVariantApplies(*from, to, builtin->variant)) {
          policy = builtin->policy;
        }
        if (!policy.empty()) k.policy = ClaimedCastPolicy(*from, to, policy, where);
        IutCall call;
        call.op = o.op;
        call.dtype = o.dtype;
        call.target = iut_name;
        call.variant = o.variant;
        call.arity = 1;
        k.call = [iut, call](const void* const* in, void* out, size_t n) {
          IutCall c = call;
          c.n = n;
          iut->Call(c, in, out);
        };
        if (!loaded.GivesOp(o.op)) loaded.ops.push_back(o.op);
        loaded.kernels.push_back(std::move(k));
        continue;
      }
      if (const ReductionOpInfo* reduction = FindReductionOp(o.op)) {
        // A reduction: its model the line's, else, for this build's target,
        // the model its variant follows there, else a model named like the
        // variant, else none.
        std::string model = o.model;
        const int v = ReductionVariantIndex(*reduction, o.variant);
        if (model.empty() && compiled != nullptr && v >= 0) {
          model = ExpectedReductionModel(*reduction, reduction->variants[static_cast<size_t>(v)],
                                         compiled->f32_lanes, compiled->fused_muladd)
                      .Name(*reduction);
        }
        const std::vector<std::string> models = ReductionModelNames(*reduction);
        if (model.empty() && std::find(models.begin(), models.end(), o.variant) != models.end()) model = o.variant;
        const FloatFormat& format = CheckReduction(*reduction, o.dtype, model, where);
        if (loaded.Find(o.variant, o.dtype, o.op) != nullptr) throw InputError(where + ": offered twice");
        PluginKernel k;
        k.op = o.op;
        k.variant = o.variant;
        k.format = &format;
        k.reduction_model = model;
        IutReduceCall call;
        call.op = o.op;
        call.dtype = o.dtype;
        call.target = iut_name;
        call.variant = o.variant;
        k.reduce = IutReduction(iut, *reduction, call);
        if (!loaded.GivesOp(o.op)) loaded.ops.push_back(o.op);
        loaded.kernels.push_back(std::move(k));
        continue;
      }
      const ElementwiseOpInfo* op = FindElementwiseOp(o.op);
      if (op == nullptr) {
        std::string known;
        for (const ElementwiseOpInfo& e : ElementwiseOps()) known += (known.empty() ? "" : ", ") + std::string(e.name);
        throw InputError(fmt::format("{}: unknown op '{}' ({})", where, o.op, known));
      }
      const FloatFormat* format = FindFormat(o.dtype);
      if (format == nullptr || IutElementBytes(o.dtype) == 0 || !RunsIn(*op, *format)) {
        throw InputError(fmt::format("{}: dtype '{}' ({} runs in {})", where, o.dtype, o.op, KernelFormatNames()));
      }
      if (loaded.Find(o.variant, o.dtype, o.op) != nullptr) {
        throw InputError(where + ": offered twice");
      }
      PluginKernel k;
      k.op = o.op;
      k.variant = o.variant;
      k.format = format;
      std::string model = o.model;
      if (model.empty() && compiled != nullptr) {
        const std::vector<std::string> variants = VariantNames(*op, *format);
        if (std::find(variants.begin(), variants.end(), o.variant) != variants.end()) {
          model = ExpectedModel(*op, *format, o.variant, *compiled);
        }
      }
      if (model.empty()) {
        const std::vector<std::string> models = ModelNames(*op, *format);
        if (std::find(models.begin(), models.end(), o.variant) != models.end()) model = o.variant;
      }
      if (!model.empty()) k.model = ClaimedModel(*op, *format, model, where);
      IutCall call;
      call.op = o.op;
      call.dtype = o.dtype;
      call.target = iut_name;
      call.variant = o.variant;
      call.arity = op->arity();
      k.call = [iut, call](const void* const* in, void* out, size_t n) {
        IutCall c = call;
        c.n = n;
        iut->Call(c, in, out);
      };
      if (!loaded.GivesOp(o.op)) loaded.ops.push_back(o.op);
      loaded.kernels.push_back(std::move(k));
    }
    built.push_back(std::move(loaded));
  }
  for (LoadedPlugin& p : built) targets.push_back(&Loaded().emplace_back(std::move(p)).target);
  return targets;
}

}  // namespace ulpgate
