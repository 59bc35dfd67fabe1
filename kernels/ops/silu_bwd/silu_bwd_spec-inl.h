// The op sequences of SiLU backward, written once (see silu_bwd_spec.h). No
// include guard and no namespace on purpose: included into
// ulpgate::silu_bwd_spec and into ulpgate::HWY_NAMESPACE::silu_bwd_spec once
// per Highway target.

struct Sequences {
  using Spec = ::ulpgate::SiluBwdSpec;

  template <int kIndex, class A, class V>
  static V At(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V e = a.Exp(a.Mul(a.Const(-1.0f), x));  // -x exactly
    const V sig = a.Div(one, a.Add(one, e));
    const V p = a.Mul(grad, sig);
    const V q = a.Sub(one, sig);
    if constexpr (kIndex == ::ulpgate::RowIndex(Spec::kVariants, "torch")) {
      return a.Mul(p, a.Add(one, a.Mul(x, q)));
    } else {
      static_assert(kIndex == ::ulpgate::RowIndex(Spec::kVariants, "muladd"),
                    "a row of SiluBwdSpec::kVariants without a template here");
      return a.Mul(p, a.MulAdd(x, q, one));
    }
  }

  // grad * sig(x) * (1 + x * sig(-x)): 1 - sig(x) is sig(-x), which keeps the
  // oracle free of the cancellation in 1 - sig for large x.
  template <class A, class V>
  static V Exact(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V sig = a.Div(one, a.Add(one, a.Exp(a.Neg(x))));
    const V sig_neg = a.Div(one, a.Add(one, a.Exp(x)));
    return a.Mul(a.Mul(grad, sig), a.Add(one, a.Mul(x, sig_neg)));
  }

  // |grad sig| * (1 + |x| (1 + sig)): the terms the definition adds when
  // written out, grad sig (1 + x - x sig), 1 - sig among them.
  template <class A, class V>
  static V TermMagnitude(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V sig = a.Div(one, a.Add(one, a.Exp(a.Neg(x))));
    return a.Mul(a.Abs(a.Mul(grad, sig)), a.Add(one, a.Mul(a.Abs(x), a.Add(one, sig))));
  }
};
