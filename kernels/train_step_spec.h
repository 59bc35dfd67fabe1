// The elementwise steps of a training run (SGD, SAM's perturbation), written
// once; see train_step_spec-inl.h.
#ifndef ULPGATE_KERNELS_TRAIN_STEP_SPEC_H_
#define ULPGATE_KERNELS_TRAIN_STEP_SPEC_H_

namespace ulpgate {
namespace train_step_spec {

#include "kernels/train_step_spec-inl.h"  // IWYU pragma: export

}  // namespace train_step_spec
}  // namespace ulpgate

#endif  // ULPGATE_KERNELS_TRAIN_STEP_SPEC_H_
