// Test-only: cast kernels with a bug each (kernels/cast-inl.h's
// CastRoundingMode), from f32 to every destination of kCastDestinations and
// compiled for every target, so that the tests and the CLI's mutant build can
// show that a wrong cast is caught and named by the policy it follows instead.
// Never linked into ulpgate itself.
#ifndef ULPGATE_KERNELS_TESTING_CAST_MUTANTS_H_
#define ULPGATE_KERNELS_TESTING_CAST_MUTANTS_H_

#include <cstdint>
#include <string_view>

#include "kernels/cast.h"

namespace ulpgate {

enum class CastMutant : uint8_t {
  kTiesAway,       // a tie rounds away from zero: follows nearest_away.saturate
  kStickyDropped,  // every remainder with its rounding bit set is a tie: follows no policy
  kOverflowNan,    // an overflow is NaN: follows nearest_even.nan where the format has a NaN
  kViaBf16,        // rounds to bf16 first (a double rounding): follows nearest_even.saturate.via_bf16
};

inline constexpr CastMutant kCastMutants[] = {CastMutant::kTiesAway, CastMutant::kStickyDropped,
                                              CastMutant::kOverflowNan, CastMutant::kViaBf16};

inline const char* CastMutantName(CastMutant m) {
  switch (m) {
    case CastMutant::kTiesAway:
      return "ties_away";
    case CastMutant::kStickyDropped:
      return "sticky_dropped";
    case CastMutant::kOverflowNan:
      return "overflow_nan";
    case CastMutant::kViaBf16:
      return "via_bf16";
  }
  return "";
}

// The mutant cast from f32 to `to` on `target`; nullptr for an unknown
// destination or a target not compiled.
CastKernel FindCastMutantKernel(std::string_view to, CastMutant mutant, int64_t target);

}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_TESTING_CAST_MUTANTS_H_
