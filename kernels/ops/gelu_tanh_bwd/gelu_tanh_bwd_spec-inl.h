// The op sequences of GELU backward (tanh approximation), written once (see
// gelu_tanh_bwd_spec.h). No include guard and no namespace on purpose:
// included into ulpgate::gelu_tanh_bwd_spec and into
// ulpgate::HWY_NAMESPACE::gelu_tanh_bwd_spec once per Highway target.

struct Sequences {
  using Spec = ::ulpgate::GeluTanhBwdSpec;

  template <int kIndex, class A, class V>
  static V At(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V half = a.Const(0.5f);
    const V beta = a.Const(Spec::kBeta);
    const V kappa = a.Const(Spec::kKappa);
    // 3 * kKappa rounded once, as PyTorch's kThreeVec * kKappaVec.
    const V three_kappa = a.Mul(a.Const(3.0f), kappa);
    const V x_sq = a.Mul(x, x);
    const V x_cube = a.Mul(x_sq, x);
    const V left = a.Mul(half, x);
    if constexpr (kIndex == ::ulpgate::RowIndex(Spec::kVariants, "torch")) {
      const V t = a.Tanh(a.Mul(beta, a.Add(x, a.Mul(kappa, x_cube))));
      const V left_derivative = a.Mul(half, a.Add(one, t));
      const V tanh_derivative = a.Sub(one, a.Mul(t, t));
      const V inner_derivative = a.Mul(beta, a.Add(one, a.Mul(three_kappa, x_sq)));
      const V right_derivative = a.Mul(a.Mul(left, tanh_derivative), inner_derivative);
      return a.Mul(grad, a.Add(left_derivative, right_derivative));
    } else {
      static_assert(kIndex == ::ulpgate::RowIndex(Spec::kVariants, "muladd"),
                    "a row of GeluTanhBwdSpec::kVariants without a template here");
      const V t = a.Tanh(a.Mul(beta, a.MulAdd(kappa, x_cube, x)));
      const V left_derivative = a.Mul(half, a.Add(one, t));
      const V tanh_derivative = a.NegMulAdd(t, t, one);
      const V inner_derivative = a.Mul(beta, a.MulAdd(three_kappa, x_sq, one));
      return a.Mul(grad, a.MulAdd(a.Mul(left, tanh_derivative), inner_derivative, left_derivative));
    }
  }

  // With k = sqrt(2/pi) and c = 0.044715 exactly, u = k (x + c x^3) and
  // s = sig(2u) = (1 + tanh u)/2, 1 - tanh^2 u = 4 s (1 - s) and 1 - s = sig(-2u):
  // grad * (s + 2 x s sig(-2u) k (1 + 3 c x^2)), free of the cancellation in 1 + tanh u.
  template <class A, class V>
  static V Exact(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V two = a.Const(2.0f);
    const V k = a.Sqrt(a.Div(two, a.Pi()));
    const V c = a.Decimal("0.044715");
    const V x_sq = a.Mul(x, x);
    const V u2 = a.Mul(two, a.Mul(k, a.Add(x, a.Mul(c, a.Mul(x_sq, x)))));
    const V s = a.Div(one, a.Add(one, a.Exp(a.Neg(u2))));
    const V s_neg = a.Div(one, a.Add(one, a.Exp(u2)));
    const V inner_derivative = a.Mul(k, a.Add(one, a.Mul(a.Const(3.0f), a.Mul(c, x_sq))));
    const V right = a.Mul(a.Mul(two, a.Mul(x, a.Mul(s, s_neg))), inner_derivative);
    return a.Mul(grad, a.Add(s, right));
  }

  // |grad| * ((1 + |tanh u|)/2 + |x|/2 (1 + tanh^2 u) k (1 + 3 c x^2)): the
  // terms the definition adds, 1 + tanh u and 1 - tanh^2 u among them.
  template <class A, class V>
  static V TermMagnitude(A& a, const V& grad, const V& x) {
    const V one = a.Const(1.0f);
    const V half = a.Const(0.5f);
    const V k = a.Sqrt(a.Div(a.Const(2.0f), a.Pi()));
    const V c = a.Decimal("0.044715");
    const V x_sq = a.Mul(x, x);
    const V t = a.Tanh(a.Mul(k, a.Add(x, a.Mul(c, a.Mul(x_sq, x)))));
    const V inner_derivative = a.Mul(k, a.Add(one, a.Mul(a.Const(3.0f), a.Mul(c, x_sq))));
    const V left = a.Mul(half, a.Add(one, a.Abs(t)));
    const V right = a.Mul(a.Mul(half, a.Abs(x)), a.Mul(a.Add(one, a.Mul(t, t)), inner_derivative));
    return a.Mul(a.Abs(grad), a.Add(left, right));
  }
};
