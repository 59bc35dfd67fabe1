// An arithmetic over L lanes of another arithmetic, applied lane by lane: what
// one SIMD instruction does to a vector of L floats. Instantiating a
// lane-parallel schedule of kernels/reductions/sum_of_terms-inl.h with
// LaneArrayArith<Binary32Arith> gives its bit-exact model for a target with L
// lanes; with LaneArrayArith<ExactArith>, its exact real value.
#ifndef ULPGATE_ORACLES_LANE_ARRAY_H_
#define ULPGATE_ORACLES_LANE_ARRAY_H_

#include <cstddef>
#include <vector>

namespace ulpgate {

template <class A>
class LaneArrayArith {
 public:
  using Scalar = typename A::Value;
  using Value = std::vector<Scalar>;

  // `scalar` must outlive this arithmetic.
  LaneArrayArith(A& scalar, size_t lanes) : scalar_(scalar), lanes_(lanes) {}

  size_t Lanes() const { return lanes_; }
  A& scalar() const { return scalar_; }

  Value Zero() const { return Value(lanes_, scalar_.Zero()); }
  Value Const(float c) const { return Value(lanes_, scalar_.Const(c)); }
  // Lanes p[0 .. count-1] and +0 above, as a kernel's padded load gives them.
  Value FromFloats(const float* p, size_t count) const {
    Value v;
    v.reserve(lanes_);
    for (size_t j = 0; j < lanes_; ++j) v.push_back(scalar_.Const(j < count ? p[j] : 0.0f));
    return v;
  }
  // The lanes, to be reduced by the spec's ReduceLanes.
  Value ToScalars(const Value& v) const { return v; }

  Value Add(const Value& a, const Value& b) const {
    return Apply(a, b, [this](const Scalar& x, const Scalar& y) { return scalar_.Add(x, y); });
  }
  Value Sub(const Value& a, const Value& b) const {
    return Apply(a, b, [this](const Scalar& x, const Scalar& y) { return scalar_.Sub(x, y); });
  }
  Value Mul(const Value& a, const Value& b) const {
    return Apply(a, b, [this](const Scalar& x, const Scalar& y) { return scalar_.Mul(x, y); });
  }
  Value Div(const Value& a, const Value& b) const {
    return Apply(a, b, [this](const Scalar& x, const Scalar& y) { return scalar_.Div(x, y); });
  }
  Value MulAdd(const Value& a, const Value& b, const Value& c) const {
    Value r;
    r.reserve(lanes_);
    for (size_t j = 0; j < lanes_; ++j) r.push_back(scalar_.MulAdd(a[j], b[j], c[j]));
    return r;
  }

 private:
  template <class F>
  Value Apply(const Value& a, const Value& b, F f) const {
    Value r;
    r.reserve(lanes_);
    for (size_t j = 0; j < lanes_; ++j) r.push_back(f(a[j], b[j]));
    return r;
  }

  A& scalar_;
  size_t lanes_;
};

}  // namespace ulpgate

#endif  // ULPGATE_ORACLES_LANE_ARRAY_H_
