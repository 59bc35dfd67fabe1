#include "suites/reveal/plugin_door.h"

#include <exception>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernels/iut/iut_protocol.h"
#include "oracles/format.h"
#include "suites/engine/guarded_buffer.h"
#include "suites/engine/iut_client.h"

namespace ulpgate {

namespace {

class LinearFwdDoor : public DotDoor {
 public:
  LinearFwdDoor(std::string name, const FloatFormat& format, ReductionCall call,
                std::function<bool(unsigned)> set_threads)
      : name_(std::move(name)), format_(format), call_(std::move(call)), set_threads_(std::move(set_threads)) {}

  std::string Name() const override { return name_; }
  const FloatFormat& OperandFormat() const override { return format_; }
  const FloatFormat& OutputFormat() const override { return format_; }
  bool SetThreads(unsigned threads) override { return set_threads_ && set_threads_(threads); }

  void Multiply(const DotShape& shape, const float* a, const float* b, float* c) override {
    if (shape.m == 0 || shape.n == 0 || shape.k == 0) {
      throw DotDoorError(fmt::format("{}: an empty shape ({}, {}, {})", name_, shape.m, shape.n, shape.k));
    }
    if (format_.storage_bytes() == 4) {
      Run<float>(shape, a, b, c);
    } else {
      Run<uint16_t>(shape, a, b, c);
    }
  }

 private:
  template <class T>
  static T Encode(const FloatFormat& format, float v) {
    if constexpr (sizeof(T) == 4) {
      return v;
    } else {
      return static_cast<T>(EncodeBits(format, v));
    }
  }

  template <class T>
  void Fill(BasicGuardedBuffer<T>& buffer, const float* values, size_t count) const {
    for (size_t i = 0; i < count; ++i) {
      if (!IsRepresentable(format_, values[i])) {
        throw DotDoorError(fmt::format("{}: operand value {} is not a {} value", name_, values[i], format_.name));
      }
      buffer.data()[i] = Encode<T>(format_, values[i]);
    }
  }

  // Linear layer x [m, k], w [n, k], b [n] (zeros), y [m, n]: the DotDoor's
  // layout exactly. Guard elements around every tensor catch a kernel that
  // writes outside its output, in process or not.
  template <class T>
  void Run(const DotShape& shape, const float* a, const float* b, float* c) {
    BasicGuardedBuffer<T> x(shape.m * shape.k, 0), w(shape.n * shape.k, 0), bias(shape.n, 0);
    BasicGuardedBuffer<T> y(shape.m * shape.n, 0);
    Fill(x, a, shape.m * shape.k);
    Fill(w, b, shape.n * shape.k);
    for (size_t i = 0; i < shape.n; ++i) bias.data()[i] = Encode<T>(format_, 0.0f);
    const void* operands[3] = {x.data(), w.data(), bias.data()};
    const size_t extents[3] = {shape.m, shape.k, shape.n};
    try {
      call_(operands, y.data(), extents, 3);
    } catch (const KernelFaultError& e) {
      throw DotDoorError(fmt::format("{}: {} (shape m={}, n={}, k={})", name_, e.what(), shape.m, shape.n, shape.k));
    } catch (const DotDoorError&) {
      throw;
    } catch (const std::exception& e) {
      throw DotDoorError(fmt::format("{}: {}", name_, e.what()));
    }
    if (!x.GuardsIntact() || !w.GuardsIntact() || !bias.GuardsIntact() || !y.GuardsIntact()) {
      throw DotDoorError(fmt::format("{}: OUT OF BOUNDS: the kernel wrote outside its output or into its "
                                     "operands (shape m={}, n={}, k={})", name_, shape.m, shape.n, shape.k));
    }
    for (size_t i = 0; i < shape.m * shape.n; ++i) {
      if constexpr (sizeof(T) == 4) {
        c[i] = y.data()[i];
      } else {
        c[i] = static_cast<float>(DecodeBits(format_, y.data()[i]));
      }
    }
  }

  std::string name_;
  const FloatFormat& format_;
  ReductionCall call_;
  std::function<bool(unsigned)> set_threads_;
};

const FloatFormat* DoorFormat(const std::string& dtype) {
  const FloatFormat* format = FindFormat(dtype);
  return format != nullptr && IutElementBytes(dtype) != 0 ? format : nullptr;
}

}  // namespace

std::unique_ptr<DotDoor> MakeLinearFwdDotDoor(std::string name, const FloatFormat& format, ReductionCall call,
                                              std::function<bool(unsigned)> set_threads) {
  return std::make_unique<LinearFwdDoor>(std::move(name), format, std::move(call), std::move(set_threads));
}

std::unique_ptr<DotDoor> MakePluginDotDoor(const std::string& path, const std::string& variant,
                                           const PluginDoorOptions& options) {
  PluginLibrary library;
  try {
    library = OpenPluginLibrary(path);
  } catch (const PluginLibraryError& e) {
    throw DotDoorError(e.what());
  }
  const PluginLibraryKernel* chosen = nullptr;
  std::string known;
  for (const PluginLibraryKernel& k : library.kernels) {
    if (!k.has_reduction || k.op != "linear_fwd" || k.variant == nullptr || k.dtype == nullptr) continue;
    known += (known.empty() ? "" : ", ") + std::string(k.variant) + " (" + k.dtype + ")";
    if (variant != k.variant || DoorFormat(k.dtype) == nullptr) continue;
    if (chosen == nullptr || std::string(k.dtype) == "f32") chosen = &k;
  }
  if (chosen == nullptr) {
    throw DotDoorError(fmt::format("--plugin {}: no linear_fwd kernel '{}' (ABI version 4; it has: {})", path,
                                   variant, known.empty() ? "none" : known));
  }
  const FloatFormat& format = *DoorFormat(chosen->dtype);
  const std::string name = fmt::format("plugin:{}:{}", path, variant);
  if (options.in_process) return MakeLinearFwdDotDoor(name, format, chosen->reduce);
  // Out of process: ulpgate-iut loads the library again and runs the kernel.
  const std::string target = library.name == nullptr ? "" : library.name;
  auto process = std::make_shared<IutProcess>(
      std::vector<std::string>{options.iut_path.empty() ? BundledIutPath() : options.iut_path, "--plugin", path},
      options.timeout_seconds);
  IutReduceCall call;
  call.op = "linear_fwd";
  call.dtype = chosen->dtype;
  call.target = target;
  call.variant = variant;
  return MakeLinearFwdDotDoor(name, format, [process, call](const void* const* in, void* out, const size_t* e, size_t) {
    IutReduceCall c = call;
    c.extents = {e[0], e[1], e[2]};
    c.operand_counts = {e[0] * e[1], e[2] * e[1], e[2]};
    c.output_count = e[0] * e[2];
    try {
      process->Reduce(c, in, out);
    } catch (const std::runtime_error& err) {
      // A start that failed is the door's refusal too.
      if (dynamic_cast<const KernelFaultError*>(&err) != nullptr) throw;
      throw DotDoorError(err.what());
    }
  });
}

}  // namespace ulpgate
