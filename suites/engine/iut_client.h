// The host's side of the implementation-under-test protocol
// (kernels/iut/iut_protocol.h, docs/iut.md): starts an IUT process from a
// command line, sends it calls and reads its outputs, and turns its death, its
// silence or its refusal into a KernelFault that names the first input that
// causes it (found by replaying halves of the call in fresh processes).
#ifndef ULPGATE_SUITES_ENGINE_IUT_CLIENT_H_
#define ULPGATE_SUITES_ENGINE_IUT_CLIENT_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/iut/iut_protocol.h"
#include "suites/engine/kernel_fault.h"

namespace ulpgate {

// The default time one call may take before its kernel counts as hung.
inline constexpr double kDefaultKernelTimeoutSeconds = 10.0;

// The IUT that comes with this build: ulpgate-iut beside the running program.
std::string BundledIutPath();

class IutProcess {
 public:
  // argv: the IUT's command line (argv[0] found on PATH if it has no '/').
  // timeout_seconds: per call; <= 0: 100 times the kernel's median seconds
  // per input of its calls so far (every process of this command line),
  // times the call's inputs, at least 1 s, and kDefaultKernelTimeoutSeconds
  // until it has answered 3 calls.
  // The process starts on the first call. Throws std::runtime_error when it
  // cannot start or does not greet as the protocol says.
  IutProcess(std::vector<std::string> argv, double timeout_seconds);
  ~IutProcess();
  IutProcess(const IutProcess&) = delete;
  IutProcess& operator=(const IutProcess&) = delete;

  // Runs call.variant over call.n elements: operands[k] holds operand k's
  // storage lanes, out receives n outputs (IutCallLayout(call.op,
  // call.dtype): a cast's codes one a byte, unpacked here where the IUT packs
  // them). Calls
  // longer than kIutMaxCall go in pieces. Thread-safe (one call at a time).
  // On a fault, throws KernelFaultError with the first input (an index into
  // this call) that faults alone, and the process is started afresh for the
  // next call.
  void Call(const IutCall& call, const void* const* operands, void* out);

  // A reduction (protocol version 3): operands[k] holds operand k's
  // call.operand_counts[k] elements, out receives call.output_count, all in
  // the dtype's storage. A crash, a hang, a refusal or a write outside the
  // output throws KernelFaultError naming the call (index -1: a reduction's
  // outputs need the whole call); the process starts afresh for the next.
  void Reduce(const IutReduceCall& call, const void* const* operands, void* out);

  const std::vector<std::string>& argv() const { return argv_; }

  // The kernels the IUT says it offers (its "kernel" lines), starting it if
  // it has not started. Throws as the constructor says.
  std::vector<IutOffer> Offers();

 private:
  struct Outcome {
    bool ok = false;
    KernelFault fault;
  };
  void Start();
  void Stop(bool kill);
  // Elements offset .. offset + n - 1 of the operands; out receives them from
  // its start.
  Outcome TryCall(const IutCall& call, const void* const* operands, void* out, uint64_t offset,
                  uint64_t n);
  KernelFault Locate(const IutCall& call, const void* const* operands, uint64_t offset, uint64_t n,
                     const KernelFault& first);
  KernelFault Died();
  // Waits (a second at most) for fd to be ready for `events`; false, with
  // timed_out_ set, once the call's deadline has passed.
  bool AwaitReady(int fd, short events);
  bool WriteAll(const void* data, size_t bytes);
  // Reads exactly `bytes`; false on EOF or timeout (timed_out_ says which).
  bool ReadAll(void* data, size_t bytes);
  bool ReadLine(std::string* line);

  std::vector<std::string> argv_;
  std::vector<IutOffer> offers_;  // as the last start announced them
  // The data region shared with the IUT (kIutShmBytes), created once; used
  // for calls when the running IUT said kIutShmLine.
  int shm_fd_ = -1;
  char* shm_ = nullptr;
  bool shm_in_use_ = false;
  int version_ = 0;       // the running IUT's greeting: 1, 2 or 3
  bool packed4_ = false;  // it said kIutPacked4Line
  double timeout_seconds_;
  std::mutex mutex_;
  pid_t pid_ = -1;
  int to_iut_ = -1, from_iut_ = -1;
  bool timed_out_ = false;
  double deadline_ = 0;
};

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_ENGINE_IUT_CLIENT_H_
