// What a kernel did instead of giving outputs: it crashed (its process died,
// with a signal or an exit status), hung (no answer within the time limit),
// wrote outside its output, or its process refused the call. A fault is a
// result of the case, reported with the first input that causes it, never an
// end of the run.
#ifndef ULPGATE_SUITES_ENGINE_KERNEL_FAULT_H_
#define ULPGATE_SUITES_ENGINE_KERNEL_FAULT_H_

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ulpgate {

enum class KernelFaultKind { kCrashed, kTimeout, kOutOfBounds, kRefused };
// "CRASHED", "TIMEOUT", "OUT OF BOUNDS", "REFUSED": what reports print.
const char* KernelFaultName(KernelFaultKind kind);
// "crashed", "timeout", "out_of_bounds", "refused": JSON.
const char* KernelFaultKey(KernelFaultKind kind);
// The kind KernelFaultKey names; nullopt for another string.
std::optional<KernelFaultKind> KernelFaultFromKey(std::string_view key);

struct KernelFault {
  KernelFaultKind kind = KernelFaultKind::kCrashed;
  std::string detail;   // "SIGSEGV", "exit status 3", "no answer in 10 s", the IUT's message
  // The input (index into the case's inputs) that faults on its own; -1 when
  // no single input does (the fault needs the whole call, as an overrun of
  // its end may). Then first..first + count - 1 is the call that faulted.
  int64_t index = -1;
  int64_t first = 0;
  int64_t count = 0;
};

class KernelFaultError : public std::runtime_error {
 public:
  explicit KernelFaultError(KernelFault fault)
      : std::runtime_error(std::string(KernelFaultName(fault.kind)) + ": " + fault.detail),
        fault_(std::move(fault)) {}
  const KernelFault& fault() const { return fault_; }
  KernelFault& fault() { return fault_; }

 private:
  KernelFault fault_;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_KERNEL_FAULT_H_
