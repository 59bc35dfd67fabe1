// The schedules of a sum of terms (sum_of_terms-inl.h) for the scalar
// arithmetics: the models' binary32 emulation and the exact arithmetic.
#ifndef ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_H_
#define ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_H_

#include <cstddef>

#include "kernels/reductions/reduction_spec.h"
#include "oracles/lane_array.h"

namespace ulpgate {
namespace sum_of_terms {

#include "kernels/reductions/sum_of_terms-inl.h"  // IWYU pragma: export

}  // namespace sum_of_terms
}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_REDUCTIONS_SUM_OF_TERMS_H_
