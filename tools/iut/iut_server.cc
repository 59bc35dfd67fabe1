// ulpgate-iut: an implementation-under-test process. It runs kernels, the
// built-in ones and those of the plugins it is given, for a host (ulpgate)
// that sends it inputs over the protocol of docs/iut.md and measures what
// comes back. It links the kernels only (Highway, no MPFR), so that a kernel
// that crashes, hangs or writes outside its output takes this process down,
// never the host, and so that it can be built for another ISA and run under
// an emulator.
//
//   ulpgate-iut [--builtin [--targets A,B]] [--packed4] [--plugin PATH]...
//
// --builtin offers the built-in kernels of every target this CPU runs (each
// as "kernel TARGET OP DTYPE VARIANT MODEL": the elementwise ops and the
// casts, a cast's model the policy its variant follows), or of the targets
// named; they are served with or without it. --packed4 answers a cast to a
// 4-bit format with two codes a byte ("data packed4").
//
// Requests on stdin, responses on stdout; stderr is left to the kernels.
#include <sys/mman.h>
#if defined(__aarch64__)
#include <sys/prctl.h>
#endif

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cast.h"
#include "kernels/elementwise_ops.h"
#include "kernels/expected_model.h"
#include "kernels/narrow_formats.h"
#include "kernels/plugins/plugin_library.h"
#include "kernels/reductions/reduction_spec.h"
#include "kernels/registry.h"
#include "hwy/targets.h"
#include "suites/engine/guarded_buffer.h"
#include "kernels/iut/iut_protocol.h"

namespace ulpgate {
namespace {

struct Library {
  std::string path;
  PluginLibrary plugin;
};

bool Read(void* data, size_t bytes) { return std::fread(data, 1, bytes, stdin) == bytes; }

// The host's shared data region (kIutShmLine), when it offers one.
char* shared_data = nullptr;

// Maps the region the host names in the environment; false if it names none.
bool MapSharedData() {
  const char* fd_text = std::getenv(kIutShmFdVariable);
  const char* bytes_text = std::getenv(kIutShmBytesVariable);
  if (fd_text == nullptr || bytes_text == nullptr) return false;
  const int fd = std::atoi(fd_text);
  const unsigned long long bytes = std::strtoull(bytes_text, nullptr, 10);
  if (fd < 0 || bytes < kIutShmBytes) return false;
  void* p = mmap(nullptr, kIutShmBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return false;
  shared_data = static_cast<char*>(p);
  return true;
}

// Guarded buffers kept from call to call (a sweep's calls are all of one
// length), so that a call pays no allocation and no fresh pages.
template <class T>
std::vector<BasicGuardedBuffer<T>>& BufferCache() {
  static std::vector<BasicGuardedBuffer<T>> buffers;
  return buffers;
}
void Write(const void* data, size_t bytes) { std::fwrite(data, 1, bytes, stdout); }
void Line(const std::string& text) {
  Write(text.data(), text.size());
  Write("\n", 1);
}

// The name a target is offered under: Highway's, and for a scalable SVE
// target the vector length this process runs with ("SVE_VL512"), since its
// lane count, which a reduction's rounding follows, is chosen at run time.
std::string OfferedName(const TargetInfo& target) {
#if defined(__aarch64__)
  if (target.bits == HWY_SVE || target.bits == HWY_SVE2) {
    const int vl = prctl(PR_SVE_GET_VL);
    if (vl >= 0) return target.name + "_VL" + std::to_string((vl & PR_SVE_VL_LEN_MASK) * 8);
  }
#endif
  return target.name;
}

bool IsBinary32Storage(const FloatFormat& f) { return f.storage_bytes() == 4; }

const TargetInfo* FindOfferedTarget(const std::string& name) {
  for (const TargetInfo& t : CompiledTargets()) {
    if (OfferedName(t) == name) return &t;
  }
  return FindTarget(name);
}

// One request: finds the kernel, reads the operands into guarded buffers,
// calls it once over all n, and answers "ok" with the outputs or "error".
// Returns false when stdin ended inside the request.
template <class T>
bool Serve(const std::vector<Library>& libraries, const IutCall& call) {
  const ElementwiseOpInfo* op = FindElementwiseOp(call.op);
  std::string error;
  ElementwiseKernel builtin = nullptr;
  const PluginCall* plugin = nullptr;
  if (op == nullptr) {
    error = "unknown op '" + call.op + "'";
  } else {
    for (const Library& l : libraries) {
      if (l.plugin.name == nullptr || call.target != l.plugin.name) continue;
      if (l.plugin.op != call.op) error = "plugin " + call.target + " gives " + l.plugin.op + " kernels";
      for (const PluginLibraryKernel& k : l.plugin.kernels) {
        if (k.variant != nullptr && k.dtype != nullptr && call.variant == k.variant &&
            call.dtype == k.dtype && k.call) {
          plugin = &k.call;
        }
      }
      if (plugin == nullptr && error.empty()) {
        error = "plugin " + call.target + " has no " + call.dtype + " kernel " + call.variant;
      }
    }
    if (plugin == nullptr && error.empty()) {
      const TargetInfo* target = FindOfferedTarget(call.target);
      if (target == nullptr) {
        error = "no target or plugin named '" + call.target + "'";
      } else if (!target->supported) {
        error = "target " + target->name + " does not run here (" + NotRunnableReason(*target) + ")";
      } else {
        builtin = FindElementwiseKernel(call.op, call.dtype, call.variant, target->bits);
        if (builtin == nullptr) {
          error = "no " + call.op + " " + call.dtype + " kernel " + call.variant + " on " + target->name;
        }
      }
    }
  }
  const size_t arity = op != nullptr ? op->arity() : call.arity;
  if (op != nullptr && call.arity != arity) {
    error = call.op + " takes " + std::to_string(arity) + " operands, the request sent " +
            std::to_string(call.arity);
  }
  // Operand buffers, then the output's: fresh guards, and the output's
  // elements guard values too, so that one the kernel leaves unwritten shows.
  std::vector<BasicGuardedBuffer<T>>& buffers = BufferCache<T>();
  if (buffers.size() != call.arity + 1 || buffers[0].size() != call.n) {
    buffers.clear();
    for (size_t k = 0; k <= call.arity; ++k) buffers.emplace_back(call.n, 0);
  } else {
    for (size_t k = 0; k <= call.arity; ++k) buffers[k].Reset(/*elements=*/k == call.arity);
  }
  // The operands are read whatever the answer, so that the stream stays in step.
  std::vector<const T*> pointers;
  for (size_t k = 0; k < call.arity; ++k) {
    BasicGuardedBuffer<T>& b = buffers[k];
    if (shared_data != nullptr) {
      std::memcpy(b.data(), shared_data + IutShmOffset(k, call.n, sizeof(T)), call.n * sizeof(T));
    } else if (!Read(b.data(), call.n * sizeof(T))) {
      return false;
    }
    pointers.push_back(b.data());
  }
  if (!error.empty()) {
    Line("error " + error);
    return true;
  }
  BasicGuardedBuffer<T>& out = buffers[call.arity];
  const std::vector<BasicGuardedBuffer<T>*> in = [&] {
    std::vector<BasicGuardedBuffer<T>*> v;
    for (size_t k = 0; k < call.arity; ++k) v.push_back(&buffers[k]);
    return v;
  }();
  const void* const* operands = reinterpret_cast<const void* const*>(pointers.data());
  if (builtin != nullptr) {
    builtin(operands, out.data(), call.n);
  } else {
    (*plugin)(operands, out.data(), call.n);
  }
  bool intact = out.GuardsIntact();
  for (const auto* b : in) intact = intact && b->GuardsIntact();
  if (!intact) {
    Line("error the kernel wrote outside its output or into its operands (a call of " +
         std::to_string(call.n) + " inputs)");
    return true;
  }
  if (shared_data != nullptr) {
    std::memcpy(shared_data + IutShmOffset(call.arity, call.n, sizeof(T)), out.data(), call.n * sizeof(T));
    Line("ok " + std::to_string(call.n));
  } else {
    Line("ok " + std::to_string(call.n));
    Write(out.data(), call.n * sizeof(T));
  }
  return true;
}

// A cast request (call cast_X DEST TARGET VARIANT 1 N): a built-in cast
// kernel or a plugin's; the N sources in, the N codes out, one a byte, or
// packed two a byte for a 4-bit destination when `packed4`.
template <class T>
bool ServeCast(const std::vector<Library>& libraries, const IutCall& call, bool packed4) {
  const FloatFormat* to = FindCastDestination(call.dtype);
  std::string error;
  CastKernel builtin = nullptr;
  const PluginCall* plugin = nullptr;
  bool named_plugin = false;
  for (const Library& l : libraries) {
    if (l.plugin.name == nullptr || call.target != l.plugin.name) continue;
    named_plugin = true;
    for (const PluginLibraryKernel& k : l.plugin.kernels) {
      if (k.has_cast && k.op == call.op && k.variant != nullptr && call.variant == k.variant &&
          k.dtype != nullptr && call.dtype == k.dtype) {
        plugin = &k.call;
      }
    }
  }
  if (named_plugin && plugin == nullptr) {
    error = "plugin " + call.target + " has no " + call.op + " " + call.dtype + " kernel " + call.variant;
  } else if (!named_plugin) {
    const TargetInfo* target = FindOfferedTarget(call.target);
    if (target == nullptr) {
      error = "no target or plugin named '" + call.target + "'";
    } else if (!target->supported) {
      error = "target " + target->name + " does not run here (" + NotRunnableReason(*target) + ")";
    } else {
      builtin = FindCastKernel(IutCastSource(call.op)->name, call.dtype, call.variant, target->bits);
      if (builtin == nullptr) {
        error = "no " + call.op + " " + call.dtype + " kernel " + call.variant + " on " + target->name;
      }
    }
  }
  if (call.arity != 1) error = call.op + " takes 1 operand, the request sent " + std::to_string(call.arity);
  BasicGuardedBuffer<T> in(call.n, 0);
  // The codes' elements start as guards too, so that one left unwritten shows.
  BasicGuardedBuffer<uint8_t> out(call.n, 0);
  // Every operand sent is read whatever the answer, so that the stream stays
  // in step; the first is the source.
  for (size_t k = 0; k < call.arity; ++k) {
    if (shared_data != nullptr) {
      if (k == 0) std::memcpy(in.data(), shared_data, call.n * sizeof(T));
    } else if (!Read(in.data(), call.n * sizeof(T))) {
      return false;
    }
  }
  if (!error.empty()) {
    Line("error " + error);
    return true;
  }
  if (builtin != nullptr) {
    builtin(in.data(), out.data(), call.n);
  } else {
    const void* operands[1] = {in.data()};
    (*plugin)(operands, out.data(), call.n);
  }
  if (!out.GuardsIntact() || !in.GuardsIntact()) {
    Line("error the kernel wrote outside its output or into its operands (a call of " +
         std::to_string(call.n) + " inputs)");
    return true;
  }
  const IutLayout layout = *IutCallLayout(call.op, to->name, packed4);
  std::vector<uint8_t> packed;
  const uint8_t* codes = out.data();
  if (layout.packed4) {
    packed.resize(layout.OutputBytes(call.n));
    PackNibbles(out.data(), packed.data(), call.n);
    codes = packed.data();
  }
  Line("ok " + std::to_string(call.n));
  if (shared_data != nullptr) {
    std::memcpy(shared_data + IutShmOffset(1, call.n, sizeof(T)), codes, layout.OutputBytes(call.n));
  } else {
    Write(codes, layout.OutputBytes(call.n));
  }
  return true;
}

// A built-in reduction kernel of `op` in `dtype` on a target, called as a
// plugin's is (operands in the op's order, whole tensors); empty when there
// is none.
ReductionCall BuiltinReduction(const ReductionOpInfo& op, const std::string& dtype,
                               const std::string& variant, int64_t bits) {
  // The registry's kernels take the op's operands in its storage and its
  // extents in the order --shape spells them, as a version-4 plugin's do.
  const ReductionKernel k = FindReductionKernel(op.name, dtype, variant, bits);
  if (k == nullptr) return {};
  return [k, &op](const void* const* in, void* out, const size_t* e, size_t rank) {
    if (rank != op.extents.size()) {
      throw std::invalid_argument("a shape of rank " + std::to_string(rank) + " for " +
                                  std::string(op.name));
    }
    k(in, out, e);
  };
}

// A reduce request: a plugin's reduction (version 4) or a built-in one, the
// operands read into guarded buffers, one call over the whole shape.
// Returns false when stdin ended inside the request.
template <class T>
bool ServeReduce(const std::vector<Library>& libraries, const IutReduceCall& call) {
  std::string error;
  ReductionCall kernel;
  const ReductionOpInfo* op = FindReductionOp(call.op);
  const size_t arity = call.operand_counts.size();
  bool named_plugin = false;
  for (const Library& l : libraries) {
    if (l.plugin.name == nullptr || call.target != l.plugin.name) continue;
    named_plugin = true;
    for (const PluginLibraryKernel& k : l.plugin.kernels) {
      if (k.has_reduction && k.op == call.op && k.variant != nullptr && call.variant == k.variant &&
          k.dtype != nullptr && call.dtype == k.dtype) {
        kernel = k.reduce;
      }
    }
  }
  std::optional<ReductionShape> shape;
  if (op == nullptr) {
    error = "unknown reduction op '" + call.op + "'";
  } else if (!(shape = ReductionShapeOf(*op, call.extents))) {
    error = call.op + " takes " + std::to_string(op->extents.size()) + " extents, none 0";
  } else if (arity != op->operands.size()) {
    error = call.op + " takes " + std::to_string(op->operands.size()) + " operands, the request sent " +
            std::to_string(arity);
  } else {
    const std::vector<std::vector<size_t>> shapes = ReductionOperandShapes(*op, *shape);
    for (size_t k = 0; k < arity && error.empty(); ++k) {
      size_t count = 1;
      for (const size_t d : shapes[k]) count *= d;
      if (call.operand_counts[k] != count) {
        error = call.op + " operand " + op->operands[k] + " holds " + std::to_string(count) +
                " elements, the request sent " + std::to_string(call.operand_counts[k]);
      }
    }
    if (error.empty() && call.output_count != ReductionOutputCount(*op, *shape)) {
      error = call.op + " gives " + std::to_string(ReductionOutputCount(*op, *shape)) +
              " outputs, the request asks for " + std::to_string(call.output_count);
    }
  }
  if (error.empty() && named_plugin && !kernel) {
    error = "plugin " + call.target + " has no " + call.op + " " + call.dtype + " kernel " + call.variant;
  } else if (error.empty() && !named_plugin) {
    const TargetInfo* target = FindOfferedTarget(call.target);
    if (target == nullptr) {
      error = "no target or plugin named '" + call.target + "'";
    } else if (!target->supported) {
      error = "target " + target->name + " does not run here (" + NotRunnableReason(*target) + ")";
    } else if (!(kernel = BuiltinReduction(*op, call.dtype, call.variant, target->bits))) {
      error = "no " + call.op + " " + call.dtype + " kernel " + call.variant + " on " + target->name;
    }
  }
  // The operands are read whatever the answer, so that the stream stays in step.
  std::vector<BasicGuardedBuffer<T>> in;
  std::vector<const void*> pointers;
  for (size_t k = 0; k < arity; ++k) {
    in.emplace_back(call.operand_counts[k], 0);
    if (shared_data != nullptr) {
      std::memcpy(in.back().data(), shared_data + call.ShmOffset(k, sizeof(T)), call.operand_counts[k] * sizeof(T));
    } else if (!Read(in.back().data(), call.operand_counts[k] * sizeof(T))) {
      return false;
    }
  }
  for (auto& b : in) pointers.push_back(b.data());
  if (!error.empty()) {
    Line("error " + error);
    return true;
  }
  // The output's elements start as guard values too, so that one the kernel
  // leaves unwritten shows.
  BasicGuardedBuffer<T> out(call.output_count, 0);
  const std::vector<size_t> extents(call.extents.begin(), call.extents.end());
  kernel(pointers.data(), out.data(), extents.data(), extents.size());
  bool intact = out.GuardsIntact();
  for (const auto& b : in) intact = intact && b.GuardsIntact();
  if (!intact) {
    Line("error the kernel wrote outside its output or into its operands (" + call.op + " of shape " +
         [&] {
           std::string text;
           for (const uint64_t e : call.extents) text += (text.empty() ? "" : ",") + std::to_string(e);
           return text;
         }() + ")");
    return true;
  }
  if (shared_data != nullptr) {
    std::memcpy(shared_data + call.ShmOffset(arity, sizeof(T)), out.data(), call.output_count * sizeof(T));
    Line("ok " + std::to_string(call.output_count));
  } else {
    Line("ok " + std::to_string(call.output_count));
    Write(out.data(), call.output_count * sizeof(T));
  }
  return true;
}

int Main(int argc, char** argv) {
  // A kernel's crash must end this process with its signal, which the host
  // reports: a sanitizer runtime's handlers would turn it into an exit status.
  for (const int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  std::vector<Library> libraries;
  bool builtin = false;
  bool packed4 = false;
  bool reductions = false;
  std::string only;  // --targets: comma-separated, or empty for all
  const char* usage =
      "usage: ulpgate-iut [--builtin [--targets A,B] [--reductions]] [--packed4] [--plugin PATH]...";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--builtin") {
      builtin = true;
    } else if (arg == "--packed4") {
      packed4 = true;
    } else if (arg == "--reductions") {
      reductions = true;
    } else if (arg == "--targets" && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else if (arg == "--plugin" && i + 1 < argc) {
      const std::string path = argv[++i];
      try {
        libraries.push_back({path, OpenPluginLibrary(path)});
      } catch (const PluginLibraryError& e) {
        std::fprintf(stderr, "ulpgate-iut: %s\n", e.what());
        return 2;
      }
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s\n"
                  "Runs kernels for ulpgate over the protocol of docs/iut.md (stdin, stdout).\n"
                  "  --builtin      offer the built-in kernels of every target this CPU runs\n"
                  "  --targets A,B  of these targets only\n"
                  "  --reductions   offer the built-in reductions too (linear_fwd, mse_fwd, ...)\n"
                  "  --packed4      send the codes of a 4-bit format two a byte\n"
                  "  --plugin PATH  load a plugin (ulpgate/plugin.h) and offer its kernels\n",
                  usage);
      return 0;
    } else {
      std::fprintf(stderr, "ulpgate-iut: unknown argument '%s' (%s)\n", arg.c_str(), usage);
      return 2;
    }
  }
  Line(std::string(kIutGreeting));
  if (MapSharedData()) Line(std::string(kIutShmLine));
  if (packed4) Line(std::string(kIutPacked4Line));
  if (builtin) {
    for (const TargetInfo& target : CompiledTargets()) {
      if (!target.supported || (!only.empty() && only.find("," + target.name + ",") == std::string::npos &&
                                only.find("," + OfferedName(target) + ",") == std::string::npos)) {
        continue;
      }
      for (const ElementwiseOpInfo& op : ElementwiseOps()) {
        std::vector<std::pair<std::string, std::vector<std::string>>> dtypes;
        std::vector<std::string> f32;
        for (const auto& v : op.variants) f32.emplace_back(v.name);
        dtypes.emplace_back("f32", f32);
        for (const NarrowFormat& f : kNarrowFormats) {
          std::vector<std::string> narrow;
          for (const auto& v : op.narrow_variants) narrow.emplace_back(v.name);
          dtypes.emplace_back(f.format->name, narrow);
        }
        for (const auto& [dtype, variants] : dtypes) {
          for (const std::string& v : variants) {
            if (FindElementwiseKernel(op.name, dtype, v, target.bits) == nullptr) continue;
            // The model the kernel must follow on this target, which the
            // host holds it to.
            Line("kernel " + OfferedName(target) + " " + std::string(op.name) + " " + dtype + " " + v +
                 " " + ExpectedModelName(op, dtype, v, target));
          }
        }
      }
      // The casts: every source, destination and variant this target has,
      // each claiming the policy its variant follows.
      for (const FloatFormat* from : kCastSources) {
        for (const FloatFormat* to : kCastDestinations) {
          for (const CastVariantInfo& v : kCastVariants) {
            if (FindCastKernel(from->name, to->name, v.name, target.bits) == nullptr) continue;
            Line("kernel " + OfferedName(target) + " cast_" + from->name + " " + to->name + " " +
                 v.name + " " + v.policy);
          }
        }
      }
      // The reductions, each claiming the model its variant follows on this
      // target (the host's commands of other ops take them only when asked).
      for (const ReductionOpInfo& op : reductions ? ReductionOps() : std::vector<ReductionOpInfo>{}) {
        std::vector<std::string> dtypes = {"f32"};
        for (const NarrowFormat& f : kNarrowFormats) dtypes.emplace_back(f.format->name);
        for (const std::string& dtype : dtypes) {
          for (const ReductionVariantInfo& v : op.variants) {
            if (!BuiltinReduction(op, dtype, std::string(v.name), target.bits)) continue;
            Line("kernel " + OfferedName(target) + " " + std::string(op.name) + " " + dtype + " " +
                 std::string(v.name) + " " +
                 ExpectedReductionModel(op, v, target.f32_lanes, target.fused_muladd).Name(op));
          }
        }
      }
    }
  }
  for (const Library& l : libraries) {
    for (const PluginLibraryKernel& k : l.plugin.kernels) {
      if (l.plugin.name == nullptr || k.variant == nullptr || k.dtype == nullptr) continue;
      const std::string op = k.op.empty() ? l.plugin.op : k.op;
      Line(std::string("kernel ") + l.plugin.name + " " + op + " " + k.dtype + " " + k.variant +
           ((k.has_cast || k.has_reduction) && k.model != nullptr ? std::string(" ") + k.model : std::string()));
    }
  }
  Line("ready");
  std::fflush(stdout);
  std::string line;
  for (int c; (c = std::fgetc(stdin)) != EOF;) {
    if (c != '\n') {
      line.push_back(static_cast<char>(c));
      continue;
    }
    if (line == "quit") return 0;
    if (line.rfind("reduce ", 0) == 0) {
      const std::optional<IutReduceCall> reduce = ParseIutReduceCall(line);
      line.clear();
      if (!reduce) {
        Line("error malformed request (expected: reduce OP DTYPE TARGET VARIANT RANK E... ARITY N... M)");
        std::fflush(stdout);
        return 2;
      }
      const bool read = reduce->dtype == "f32" ? ServeReduce<float>(libraries, *reduce)
                                               : ServeReduce<uint16_t>(libraries, *reduce);
      if (!read) return 2;
      std::fflush(stdout);
      continue;
    }
    const std::optional<IutCall> call = ParseIutCall(line);
    line.clear();
    if (!call) {
      Line("error malformed request (expected: call OP DTYPE TARGET VARIANT ARITY N)");
      std::fflush(stdout);
      return 2;  // the stream may be out of step: nothing after it can be trusted
    }
    bool read;
    if (const FloatFormat* from = IutCastSource(call->op)) {
      read = IsBinary32Storage(*from) ? ServeCast<float>(libraries, *call, packed4)
                                      : ServeCast<uint16_t>(libraries, *call, packed4);
    } else {
      read = call->dtype == "f32" ? Serve<float>(libraries, *call) : Serve<uint16_t>(libraries, *call);
    }
    if (!read) return 2;
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace
}  // namespace ulpgate

int main(int argc, char** argv) { return ulpgate::Main(argc, argv); }
