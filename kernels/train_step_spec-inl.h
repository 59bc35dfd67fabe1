// The op sequences of the elementwise steps of a training run, written once
// (included into a namespace twice, like an elementwise op's <op>_spec-inl.h:
// as ulpgate::train_step_spec for the exact and emulated arithmetics and per
// Highway target inside HWY_BEFORE_NAMESPACE).

// SGD: w - lr * g with the product rounded first (PyTorch's
// p.add_(grad, alpha=-lr) on a path without FMA).
template <class A, class V = typename A::Value>
V SgdStep(A& a, const V& w, const V& g, const V& lr) {
  return a.Sub(w, a.Mul(lr, g));
}

// SGD with one rounding: NegMulAdd(lr, g, w) (a vectorized path with FMA).
template <class A, class V = typename A::Value>
V SgdStepFused(A& a, const V& w, const V& g, const V& lr) {
  return a.NegMulAdd(lr, g, w);
}

// SAM's ascent step: e = g * scale, then w + e, two roundings (the reference
// implementation computes e_w = p.grad * scale and then p.add_(e_w)).
template <class A, class V = typename A::Value>
V SamPerturb(A& a, const V& w, const V& g, const V& scale) {
  return a.Add(w, a.Mul(g, scale));
}
