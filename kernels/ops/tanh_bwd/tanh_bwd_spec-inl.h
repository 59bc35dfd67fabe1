// The op sequences of tanh backward, written once (see tanh_bwd_spec.h).
//
// No include guard and no namespace on purpose: this file is included into a
// namespace twice, as ulpgate::tanh_bwd_spec by tanh_bwd_spec.h (for the exact
// and binary32-emulated arithmetics) and as ulpgate::HWY_NAMESPACE::tanh_bwd_spec
// by tanh_bwd-inl.h once per Highway target, inside HWY_BEFORE_NAMESPACE, so
// that the templates carry the target's code-generation attributes and can call
// Highway ops. Each includer has its own guard.

// The accelerator's lazy-mode form: one multiply-accumulate instruction.
template <class A, class V = typename A::Value>
V Mac(A& a, const V& grad, const V& t) {
  const V r = a.Mul(t, t);
  return a.NegMulAdd(grad, r, grad);
}

// The MAC form with the product rounded before the subtraction.
template <class A, class V = typename A::Value>
V MacUnfused(A& a, const V& grad, const V& t) {
  const V r = a.Mul(t, t);
  const V p = a.Mul(grad, r);
  return a.Sub(grad, p);
}

// The framework decomposition (eager mode); also the op's canonical formula.
template <class A, class V = typename A::Value>
V MulSub(A& a, const V& grad, const V& t) {
  const V r = a.Mul(t, t);
  const V s = a.Sub(a.Const(1.0f), r);
  return a.Mul(grad, s);
}

// What a contracting compiler makes of grad * (1 - t*t).
template <class A, class V = typename A::Value>
V MulSubFma(A& a, const V& grad, const V& t) {
  const V s = a.NegMulAdd(t, t, a.Const(1.0f));
  return a.Mul(grad, s);
}

// grad - grad*t*t as C and Python evaluate it, (grad*t)*t, its subtraction
// one instruction: a model sequence only (tanh_bwd_spec.h), no kernel runs it.
// It differs from Mac wherever RN(grad*t)*t and grad*RN(t*t) round apart.
template <class A, class V = typename A::Value>
V MacLeft(A& a, const V& grad, const V& t) {
  const V p = a.Mul(grad, t);
  return a.NegMulAdd(p, t, grad);
}

// The sequence of row kIndex of kTanhBwdVariants, then of
// kTanhBwdModelSequences (tanh_bwd_spec.h): the one map from a sequence to its
// template, for kernels, models and exact values.
template <int kIndex, class A, class V = typename A::Value>
V SequenceAt(A& a, const V& grad, const V& t) {
  if constexpr (kIndex == ::ulpgate::TanhBwdSequenceIndex("mac")) {
    return Mac(a, grad, t);
  } else if constexpr (kIndex == ::ulpgate::TanhBwdSequenceIndex("mac_unfused")) {
    return MacUnfused(a, grad, t);
  } else if constexpr (kIndex == ::ulpgate::TanhBwdSequenceIndex("mulsub")) {
    return MulSub(a, grad, t);
  } else if constexpr (kIndex == ::ulpgate::TanhBwdSequenceIndex("mulsub_fma")) {
    return MulSubFma(a, grad, t);
  } else {
    static_assert(kIndex == ::ulpgate::TanhBwdSequenceIndex("mac_left"),
                  "a row of kTanhBwdVariants or kTanhBwdModelSequences without a template here");
    return MacLeft(a, grad, t);
  }
}

// The op's definition in extended-real arithmetic (docs/design.md "Numerics"): the
// exact value is this formula, so grad = inf, t = 0.5 is inf although the MAC
// form computes inf - inf*0.25 = NaN there.
template <class A, class V = typename A::Value>
V Canonical(A& a, const V& grad, const V& t) {
  return MulSub(a, grad, t);
}


// The op as kernels/ops/elementwise_spec.h describes one: its sequences by
// row, its exact value, and the magnitude of the terms it adds,
// |grad| * (1 + t^2).
struct Sequences {
  template <int kIndex, class A, class V>
  static V At(A& a, const V& grad, const V& t) {
    return SequenceAt<kIndex>(a, grad, t);
  }
  template <class A, class V>
  static V Exact(A& a, const V& grad, const V& t) {
    return Canonical(a, grad, t);
  }
  template <class A, class V>
  static V TermMagnitude(A& a, const V& grad, const V& t) {
    return a.Mul(a.Abs(grad), a.Add(a.Const(1.0f), a.Mul(t, t)));
  }
};
