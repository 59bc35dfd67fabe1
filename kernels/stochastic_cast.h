// Stochastic rounding of f32 to a narrower format, with the random bits as an
// operand: out[i] is in[i] rounded to the format, its magnitude rounded up iff
// floor(f 2^16) + (random[i] mod 2^16) >= 2^16, f the fraction of the way
// from the magnitude rounded toward zero to the next code. That is the
// policy "stochastic16" of oracles/cast_policy.h bit for bit, so the kernels
// are held to it exactly; what the random bits are worth (whether a kernel
// that draws its own rounds up with probability f) is a statistical question,
// suites/investigate/stochastic_rounding.h.
//
// The kernels add the random bits below the kept ones and truncate, as
// hardware and training libraries do it (the carry out of the dropped bits is
// the rounding up), compiled for every target like the other kernel families.
#ifndef ULPGATE_KERNELS_STOCHASTIC_CAST_H_
#define ULPGATE_KERNELS_STOCHASTIC_CAST_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ulpgate {

// in: n f32 values; random: n words, of which the low kStochasticRandomBits
// bits are used; out: n codes of the format, each in its storage unit
// (uint8_t for an 8-bit format, uint16_t for bf16).
using StochasticCastKernel = void (*)(const float* in, const uint32_t* random, void* out,
                                      size_t n);

inline constexpr int kStochasticRandomBits = 16;

struct StochasticCastInfo {
  const char* to;      // the format's registered name
  const char* policy;  // the CastPolicy::Name() the kernel follows bit for bit
};

// The formats a stochastic kernel exists for, with the policy each follows:
// E4M3FN saturates (it has no infinity; OCP's satfinite), bf16 carries into
// its infinity as the truncation of f32 bits does.
const std::vector<StochasticCastInfo>& StochasticCastKernels();

// The kernel casting to `to` compiled for the Highway target `target_bits`
// (TargetInfo::bits); nullptr for another format or a target not compiled.
StochasticCastKernel FindStochasticCastKernel(std::string_view to, int64_t target_bits);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_STOCHASTIC_CAST_H_
