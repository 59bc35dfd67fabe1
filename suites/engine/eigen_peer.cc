#include "suites/engine/eigen_peer.h"

#include <Eigen/Core>

namespace ulpgate {

void EigenLinearFwd(const float* x, const float* w, const float* b, float* y, size_t batch,
                    size_t in, size_t out) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMajor> xm(x, batch, in);
  const Eigen::Map<const RowMajor> wm(w, out, in);
  const Eigen::Map<const Eigen::RowVectorXf> bm(b, out);
  Eigen::Map<RowMajor> ym(y, batch, out);
  ym.noalias() = xm * wm.transpose();
  ym.rowwise() += bm;
}

std::string EigenPeerDescription() {
  return "Eigen " + std::to_string(EIGEN_WORLD_VERSION) + "." +
         std::to_string(EIGEN_MAJOR_VERSION) + "." + std::to_string(EIGEN_MINOR_VERSION) + " (" +
         Eigen::SimdInstructionSetsInUse() + ")";
}

}  // namespace ulpgate
