// Eigen's own float product as a peer of the linear_fwd kernels: what a user
// would pick instead of a hand-written Highway kernel. Eigen chooses its own
// blocking, accumulation order and SIMD width (whatever this translation unit
// was compiled for), so there is no bit-exact model: the peer gets error
// statistics and bound fractions only, never a conformance verdict.
#ifndef ULPGATE_SUITES_EIGEN_PEER_H_
#define ULPGATE_SUITES_EIGEN_PEER_H_

#include <cstddef>
#include <string>

namespace ulpgate {

// y [batch, out] = x [batch, in] * w [out, in]^T, then + b [out] broadcast
// over the rows (the bias added once after the product, as in
// kernels/reductions/linear/linear-inl.h).
void EigenLinearFwd(const float* x, const float* w, const float* b, float* y, size_t batch,
                    size_t in, size_t out);

// "Eigen 3.4.0 (SSE, SSE2)": version and the instruction sets Eigen uses here.
std::string EigenPeerDescription();

}  // namespace ulpgate

#endif  // ULPGATE_SUITES_EIGEN_PEER_H_
