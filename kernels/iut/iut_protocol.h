// The implementation-under-test protocol (docs/iut.md): how a host (ulpgate)
// and a process that runs kernels (tools/iut/ulpgate-iut, or any program that
// speaks it: a Python server over PyTorch, an emulated ARM build) talk over
// the IUT's stdin and stdout. Lines of text for control, raw little-endian
// storage lanes for data:
//
//   IUT:  ulpgate-iut 1                      once, at start
//         data shm                           optional: operands and outputs in
//                                            shared memory (below), not on the pipes
//         kernel TARGET OP DTYPE VARIANT [MODEL]   any number: what it offers
//                                            (the model it claims: optional)
//         ready
//   host: call OP DTYPE TARGET VARIANT ARITY N
//         ARITY blocks of N elements         operand k's values, in the op's order
//   IUT:  ok N                               then N output elements
//    or   error MESSAGE                      the kernel was not called, or broke a rule
//   host: quit
//
// An element is 4 bytes (binary32) for f32 and 2 (the format's bit pattern)
// for bf16 and f16. An IUT that dies before answering crashed; one that does
// not answer in the host's time limit hangs: both are results the host
// reports, never errors of its own.
#ifndef ULPGATE_KERNELS_IUT_IUT_PROTOCOL_H_
#define ULPGATE_KERNELS_IUT_IUT_PROTOCOL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "kernels/narrow_formats.h"

namespace ulpgate {

inline constexpr std::string_view kIutGreeting = "ulpgate-iut 1";
// The most elements one call carries (the host splits longer batches).
inline constexpr uint64_t kIutMaxCall = uint64_t{1} << 24;

struct IutCall {
  std::string op, dtype, target, variant;
  size_t arity = 0;
  uint64_t n = 0;
};

// Data in shared memory: the host starts the IUT with a shared-memory file
// open as descriptor kIutShmFd and the environment variables below naming it
// and its size. An IUT that maps it says kIutShmLine before "ready"; from
// then on a call's operands are not sent on stdin but lie in that memory,
// operand k at IutShmOffset(k, N, element bytes), and the IUT writes the
// outputs at IutShmOffset(ARITY, N, ...) and answers "ok N" alone. An IUT
// that ignores it (one on another machine) keeps to the pipes.
inline constexpr int kIutShmFd = 3;
inline constexpr const char* kIutShmFdVariable = "ULPGATE_IUT_SHM_FD";
inline constexpr const char* kIutShmBytesVariable = "ULPGATE_IUT_SHM_BYTES";
inline constexpr std::string_view kIutShmLine = "data shm";
// Room for the largest call: three operands and the outputs of 4 bytes.
inline constexpr uint64_t kIutShmBytes = kIutMaxCall * 4 * 4;
inline constexpr uint64_t IutShmOffset(size_t k, uint64_t n, size_t element_bytes) {
  return k * n * element_bytes;
}

// One kernel an IUT offers ("kernel TARGET OP DTYPE VARIANT [MODEL]"): MODEL,
// the rest of the line, is a built-in model's name or a model written as
// statements ("NAME: p = grad*t; ..."); empty when it claims none.
struct IutOffer {
  std::string target, op, dtype, variant, model;
};

// Bytes per element of a dtype the protocol carries; 0 for another.
inline size_t IutElementBytes(std::string_view dtype) {
  if (dtype == "f32") return 4;
  const int row = NarrowFormatIndex(dtype);
  if (row >= 0) return static_cast<size_t>(kNarrowFormats[static_cast<size_t>(row)].format->storage_bytes());
  return 0;
}

// Arity 1..3 and N up to kIutMaxCall: a line outside those is malformed, so
// that a stream out of step is caught before it allocates.
inline std::optional<IutCall> ParseIutCall(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  IutCall call;
  if (!(in >> word) || word != "call") return std::nullopt;
  if (!(in >> call.op >> call.dtype >> call.target >> call.variant >> call.arity >> call.n)) {
    return std::nullopt;
  }
  if (in >> word) return std::nullopt;
  if (IutElementBytes(call.dtype) == 0 || call.arity < 1 || call.arity > 3 ||
      call.n > kIutMaxCall) {
    return std::nullopt;
  }
  return call;
}

inline std::optional<IutOffer> ParseIutOffer(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  IutOffer offer;
  if (!(in >> word) || word != "kernel") return std::nullopt;
  if (!(in >> offer.target >> offer.op >> offer.dtype >> offer.variant)) return std::nullopt;
  std::getline(in, offer.model);
  const size_t first = offer.model.find_first_not_of(" \t");
  offer.model = first == std::string::npos ? "" : offer.model.substr(first);
  while (!offer.model.empty() && (offer.model.back() == ' ' || offer.model.back() == '\t' ||
                                  offer.model.back() == '\r')) {
    offer.model.pop_back();
  }
  return offer;
}

inline std::string FormatIutCall(const IutCall& call) {
  return "call " + call.op + " " + call.dtype + " " + call.target + " " + call.variant + " " +
         std::to_string(call.arity) + " " + std::to_string(call.n);
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_IUT_IUT_PROTOCOL_H_
