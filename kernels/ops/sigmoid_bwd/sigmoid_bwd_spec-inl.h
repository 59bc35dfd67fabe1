// The op sequences of sigmoid backward, written once (see sigmoid_bwd_spec.h).
// No include guard and no namespace on purpose: included into
// ulpgate::sigmoid_bwd_spec (exact and emulated arithmetic) and into
// ulpgate::HWY_NAMESPACE::sigmoid_bwd_spec once per Highway target.

struct Sequences {
  using Spec = ::ulpgate::SigmoidBwdSpec;

  template <int kIndex, class A, class V>
  static V At(A& a, const V& grad, const V& s) {
    if constexpr (kIndex == ::ulpgate::RowIndex(Spec::kVariants, "torch")) {
      const V q = a.Sub(a.Const(1.0f), s);
      const V p = a.Mul(grad, q);
      return a.Mul(p, s);
    } else if constexpr (kIndex == ::ulpgate::RowIndex(Spec::kVariants, "mul3")) {
      const V p = a.Mul(grad, s);
      const V q = a.Sub(a.Const(1.0f), s);
      return a.Mul(p, q);
    } else {
      static_assert(kIndex == ::ulpgate::RowIndex(Spec::kVariants, "fms"),
                    "a row of SigmoidBwdSpec::kVariants without a template here");
      const V p = a.Mul(grad, s);
      return a.NegMulAdd(p, s, p);
    }
  }

  // The definition in extended-real arithmetic: grad * s * (1 - s).
  template <class A, class V>
  static V Exact(A& a, const V& grad, const V& s) {
    return a.Mul(a.Mul(grad, s), a.Sub(a.Const(1.0f), s));
  }

  // The terms the definition adds, in magnitude: |grad s| * (1 + |s|)
  // (grad*s*1 and grad*s*s).
  template <class A, class V>
  static V TermMagnitude(A& a, const V& grad, const V& s) {
    return a.Mul(a.Abs(a.Mul(grad, s)), a.Add(a.Const(1.0f), a.Abs(s)));
  }
};
