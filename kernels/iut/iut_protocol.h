// The implementation-under-test protocol (docs/iut.md): how a host (ulpgate)
// and a process that runs kernels (tools/iut/ulpgate-iut, or any program that
// speaks it: a Python server over PyTorch, an emulated ARM build) talk over
// the IUT's stdin and stdout. Lines of text for control, raw little-endian
// storage lanes for data:
//
//   IUT:  ulpgate-iut 3                      once, at start (version 1: no casts;
//                                            version 2: no reductions)
//         data shm                           optional: operands and outputs in
//                                            shared memory (below), not on the pipes
//         data packed4                       optional (version 2): 4-bit outputs
//                                            two a byte
//         kernel TARGET OP DTYPE VARIANT [MODEL]   any number: what it offers
//                                            (the model it claims: optional)
//         ready
//   host: call OP DTYPE TARGET VARIANT ARITY N
//         ARITY blocks of N elements         operand k's values, in the op's order
//   IUT:  ok N                               then N output elements
//    or   error MESSAGE                      the kernel was not called, or broke a rule
//   host: reduce OP DTYPE TARGET VARIANT RANK E_1 .. E_RANK ARITY N_1 .. N_ARITY M
//         ARITY blocks, operand k of N_k elements   (version 3: a reduction op)
//   IUT:  ok M                               then M output elements
//    or   error MESSAGE
//   host: quit
//
// A reduction call carries its shape (E: the op's extents as --shape spells
// them, linear_fwd's batch, in, out) and every tensor's element count, so
// that an IUT stays in step on an op it does not know.
//
// An element's size follows the op and the dtype (IutCallLayout): an
// elementwise op's operands and outputs are the dtype's storage (4 bytes of
// binary32 for f32, the 2-byte bit pattern of bf16 and f16); a cast op's
// ("cast_f32": its source in its name, its destination the dtype) operand is
// the source's storage and its output the destination's codes, one a byte, or
// for a 4-bit destination two a byte (element 2i in the low nibble) when the
// IUT said "data packed4". An IUT that dies before answering crashed; one that does
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
#include <vector>

#include "kernels/cast.h"
#include "kernels/narrow_formats.h"
#include "kernels/reductions/reduction_spec.h"
#include "oracles/float_format.h"

namespace ulpgate {

// Version 2 adds the cast ops and "data packed4"; a host takes both
// greetings, and holds a version 1 IUT to the elementwise ops.
// Version 3 adds the reductions ("reduce"). A host takes all three
// greetings and holds an IUT to its version's ops.
inline constexpr std::string_view kIutGreeting = "ulpgate-iut 3";
inline constexpr std::string_view kIutGreetingV2 = "ulpgate-iut 2";
inline constexpr std::string_view kIutGreetingV1 = "ulpgate-iut 1";
// The greeting's version: 1, 2 or 3; 0 for a line that is none of them.
inline int IutGreetingVersion(std::string_view line) {
  return line == kIutGreeting ? 3 : line == kIutGreetingV2 ? 2 : line == kIutGreetingV1 ? 1 : 0;
}
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
// Said before "ready" by a version 2 IUT that answers a cast to a 4-bit
// format with its codes two a byte: (N + 1) / 2 bytes, element 2i in the low
// nibble, the last high nibble zero for odd N (kernels/cast.h, PackNibbles).
inline constexpr std::string_view kIutPacked4Line = "data packed4";
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

// The source format of a cast op ("cast_f32": binary32); nullptr for an op
// of another family.
inline const FloatFormat* IutCastSource(std::string_view op) {
  constexpr std::string_view kPrefix = "cast_";
  if (op.substr(0, kPrefix.size()) != kPrefix) return nullptr;
  return FindCastSource(op.substr(kPrefix.size()));
}

// How a call's data lies: bytes per operand element and per output element,
// and whether the outputs are 4-bit codes two a byte.
struct IutLayout {
  size_t operand_bytes = 0;
  size_t output_bytes = 0;
  bool packed4 = false;
  uint64_t OperandBytes(uint64_t n) const { return n * operand_bytes; }
  uint64_t OutputBytes(uint64_t n) const { return packed4 ? (n + 1) / 2 : n * output_bytes; }
};

// The layout of a call of `op` in `dtype` from the formats' storage: an
// elementwise op in f32, bf16 or f16 (operands and outputs that format); a
// cast op to one of kCastDestinations (operand the source, output one code a
// byte, or packed when `packed4` and the destination packs nibble pairs).
// nullopt for a dtype the protocol does not carry for that op.
inline std::optional<IutLayout> IutCallLayout(std::string_view op, std::string_view dtype,
                                              bool packed4 = false) {
  IutLayout layout;
  if (const FloatFormat* from = IutCastSource(op)) {
    const FloatFormat* to = FindCastDestination(dtype);
    if (to == nullptr) return std::nullopt;
    layout.operand_bytes = static_cast<size_t>(from->storage_bytes());
    layout.output_bytes = static_cast<size_t>(to->storage_bytes());
    layout.packed4 = packed4 && to->packing == Packing::kNibblePairs;
    return layout;
  }
  // The elementwise ops run in f32 and the formats of kNarrowFormats.
  const int row = NarrowFormatIndex(dtype);
  const FloatFormat* format = dtype == kBinary32.name ? &kBinary32
                              : row >= 0 ? kNarrowFormats[static_cast<size_t>(row)].format
                                         : nullptr;
  if (format == nullptr) return std::nullopt;
  layout.operand_bytes = layout.output_bytes = static_cast<size_t>(format->storage_bytes());
  return layout;
}

// Bytes per element of an elementwise op's dtype; 0 for another dtype.
inline size_t IutElementBytes(std::string_view dtype) {
  const std::optional<IutLayout> layout = IutCallLayout("", dtype);
  return layout ? layout->operand_bytes : 0;
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
  if (!IutCallLayout(call.op, call.dtype) || call.arity < 1 || call.arity > 3 ||
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

// A reduction op (version 3): its calls are "reduce" lines, whole tensors.
inline bool IsIutReductionOp(std::string_view op) { return FindReductionOp(op) != nullptr; }

// The most extents and operands a reduce line carries.
inline constexpr size_t kIutMaxRank = 8;
inline constexpr size_t kIutMaxReduceOperands = 8;

// One reduction call: the op's extents, each operand's element count and the
// outputs'. Elements are the dtype's storage (IutElementBytes).
struct IutReduceCall {
  std::string op, dtype, target, variant;
  std::vector<uint64_t> extents;
  std::vector<uint64_t> operand_counts;
  uint64_t output_count = 0;
  // Every element the call moves; with shared memory they must fit in it.
  uint64_t TotalElements() const {
    uint64_t total = output_count;
    for (const uint64_t c : operand_counts) total += c;
    return total;
  }
  // Where operand k (k = ARITY: the outputs) lies in shared memory.
  uint64_t ShmOffset(size_t k, size_t element_bytes) const {
    uint64_t at = 0;
    for (size_t i = 0; i < k && i < operand_counts.size(); ++i) at += operand_counts[i];
    return at * element_bytes;
  }
};

// The extents a reduction's kernels take (a plugin's, version 4, and an
// IUT's): the op's shape as --shape spells it, linear ops {batch, in, out},
// the MSE ops {N}.
inline std::vector<uint64_t> ReductionExtents(const ReductionOpInfo& op, const ReductionShape& shape) {
  std::vector<uint64_t> extents;
  for (size_t e = 0; e < op.extents.size(); ++e) extents.push_back(shape[e]);
  return extents;
}
// The shape of those extents; nullopt when their count is not the op's rank
// or one is 0.
inline std::optional<ReductionShape> ReductionShapeOf(const ReductionOpInfo& op,
                                                      const std::vector<uint64_t>& extents) {
  if (extents.size() != op.extents.size()) return std::nullopt;
  ReductionShape shape;
  shape.rank = extents.size();
  for (size_t e = 0; e < extents.size(); ++e) {
    if (extents[e] == 0) return std::nullopt;
    shape[e] = extents[e];
  }
  return shape;
}

inline std::string FormatIutReduceCall(const IutReduceCall& call) {
  std::string line = "reduce " + call.op + " " + call.dtype + " " + call.target + " " + call.variant +
                     " " + std::to_string(call.extents.size());
  for (const uint64_t e : call.extents) line += " " + std::to_string(e);
  line += " " + std::to_string(call.operand_counts.size());
  for (const uint64_t c : call.operand_counts) line += " " + std::to_string(c);
  return line + " " + std::to_string(call.output_count);
}

// A reduce line with rank and arity 1..8, a dtype of IutElementBytes and
// every tensor within shared memory's room (kIutShmBytes); nullopt otherwise,
// so that a stream out of step is caught before it allocates.
inline std::optional<IutReduceCall> ParseIutReduceCall(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  IutReduceCall call;
  size_t rank = 0, arity = 0;
  if (!(in >> word) || word != "reduce") return std::nullopt;
  if (!(in >> call.op >> call.dtype >> call.target >> call.variant >> rank)) return std::nullopt;
  if (rank < 1 || rank > kIutMaxRank) return std::nullopt;
  call.extents.resize(rank);
  for (uint64_t& e : call.extents) {
    if (!(in >> e)) return std::nullopt;
  }
  if (!(in >> arity) || arity < 1 || arity > kIutMaxReduceOperands) return std::nullopt;
  call.operand_counts.resize(arity);
  for (uint64_t& c : call.operand_counts) {
    if (!(in >> c)) return std::nullopt;
  }
  if (!(in >> call.output_count)) return std::nullopt;
  if (in >> word) return std::nullopt;
  const size_t bytes = IutElementBytes(call.dtype);
  if (bytes == 0) return std::nullopt;
  for (const uint64_t c : call.operand_counts) {
    if (c > kIutShmBytes / bytes) return std::nullopt;
  }
  if (call.output_count > kIutShmBytes / bytes || call.TotalElements() > kIutShmBytes / bytes) {
    return std::nullopt;
  }
  return call;
}

inline std::string FormatIutCall(const IutCall& call) {
  return "call " + call.op + " " + call.dtype + " " + call.target + " " + call.variant + " " +
         std::to_string(call.arity) + " " + std::to_string(call.n);
}

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_IUT_IUT_PROTOCOL_H_
