// The op sequences of GELU backward (erf), written once (see gelu_bwd_spec.h).
// No include guard and no namespace on purpose: included into
// ulpgate::gelu_bwd_spec and into ulpgate::HWY_NAMESPACE::gelu_bwd_spec once
// per Highway target.

struct Sequences {
  using Spec = ::ulpgate::GeluBwdSpec;

  template <int kIndex, class A, class V>
  static V At(A& a, const V& grad, const V& x) {
    const V half = a.Const(0.5f);
    const V cdf = a.Mul(half, a.Add(a.Const(1.0f), a.Erf(a.Mul(x, a.Const(Spec::kAlpha)))));
    const V pdf = a.Mul(a.Const(Spec::kBeta), a.Exp(a.Mul(a.Mul(x, x), a.Const(-0.5f))));
    if constexpr (kIndex == ::ulpgate::RowIndex(Spec::kVariants, "torch")) {
      return a.Mul(grad, a.Add(cdf, a.Mul(x, pdf)));
    } else {
      static_assert(kIndex == ::ulpgate::RowIndex(Spec::kVariants, "muladd"),
                    "a row of GeluBwdSpec::kVariants without a template here");
      return a.Mul(grad, a.MulAdd(x, pdf, cdf));
    }
  }

  // grad * (erfc(-x/sqrt(2))/2 + x exp(-x^2/2)/sqrt(2 pi)): erfc keeps the
  // oracle free of the cancellation in 1 + erf.
  template <class A, class V>
  static V Exact(A& a, const V& grad, const V& x) {
    const V two = a.Const(2.0f);
    const V sqrt2 = a.Sqrt(two);
    const V cdf = a.Div(a.Erfc(a.Div(a.Neg(x), sqrt2)), two);
    const V pdf = a.Div(a.Exp(a.Neg(a.Div(a.Mul(x, x), two))), a.Sqrt(a.Mul(two, a.Pi())));
    return a.Mul(grad, a.Add(cdf, a.Mul(x, pdf)));
  }

  // |grad| * (1/2 + |erf(x/sqrt(2))|/2 + |x phi(x)|): the terms the definition
  // adds, 1 + erf among them.
  template <class A, class V>
  static V TermMagnitude(A& a, const V& grad, const V& x) {
    const V two = a.Const(2.0f);
    const V sqrt2 = a.Sqrt(two);
    const V erf_half = a.Div(a.Abs(a.Erf(a.Div(x, sqrt2))), two);
    const V pdf = a.Div(a.Exp(a.Neg(a.Div(a.Mul(x, x), two))), a.Sqrt(a.Mul(two, a.Pi())));
    const V sum = a.Add(a.Add(a.Const(0.5f), erf_half), a.Abs(a.Mul(x, pdf)));
    return a.Mul(a.Abs(grad), sum);
  }
};
