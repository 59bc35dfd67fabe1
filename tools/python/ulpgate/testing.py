"""Assertions for test suites, in the manner of torch.testing.assert_close, that say more:
how many outputs differ, the worst input in the dtype's own hex with its exact value, the
bound fraction with its verdict, the models the outputs follow (else the nearest), and the
command that explains the input step by step. Every line of a message fits 120 columns.

    from ulpgate.testing import assert_follows_model, assert_within_bound, assert_within_ulp
    assert_within_ulp(y, {"grad": g, "t": t}, op="tanh_bwd", max_ulp=1.5)
    assert_within_bound(y, {"grad": g, "x": x}, op="silu_bwd")
    assert_follows_model(y, {"grad": g, "t": t}, op="tanh_bwd", model="mulsub_fused")
    assert_follows(x.to(torch.float8_e4m3fn), x, op="cast_f32", dtype="float8_e4m3fn",
                   policy="nearest_even.saturate")
    assert_follows_block_rule(x, scales, codes, spec="mxfp8_e4m3", rule="rceil")
    assert_batch_invariant(lambda a, b: a @ b.T, k=256, n=32)
    assert_tree(my_matmul, "pairwise", k=16)          # or "((0+1)+2)", or [[0, 1], 2]
"""

from . import ReductionReport, _decimal_text, _ulp_text, _wrapped, check, check_blockquant, exact, invariance, reveal, tree

__all__ = ["assert_batch_invariant", "assert_tree",
           "assert_follows", "assert_follows_block_rule", "assert_follows_model", "assert_within_bound",
           "assert_within_ulp"]


def _input_lines(report, index, what):
    """`what` at input `index`, its output and exact value, and the command that explains it."""
    return [_wrapped(report.worst_text(index), prefix=f"{what} at input ", indent=2),
            _wrapped(report.replay(index), prefix="  explain it: ", indent=6, command=True)]


def _worst_lines(report):
    if not report.worst:
        return []
    return _input_lines(report, report.worst["index"], f"Worst: {_ulp_text(report.max_ulp)} ULP")


def _closing_lines(report):
    return [_wrapped(f"Bound fraction: {report.bound_text()}.", indent=2),
            _wrapped(f"Follows bit for bit: {report.models_text()}.", indent=2)]


def assert_within_ulp(outputs, inputs, op, max_ulp, dtype=None, allow_special=False, msg=None):
    """Fails unless every output is within `max_ulp` ULPs of the exact value (and, unless
    allow_special, no output is NaN or infinite where the exact value is not, or the
    reverse)."""
    report = check(outputs, inputs, op=op, dtype=dtype)
    special = report.special_mismatch and not allow_special
    if report.max_ulp <= max_ulp and not special:
        return report
    over = sum(count for _, count in _bins_over(report, max_ulp))
    lines = [msg or f"{op} outputs are not within {max_ulp} ULP of the exact values.",
             f"{f'At least {over}' if over else 'Some'} of {report.n} outputs ({report.dtype}) exceed it"
             f"{f'; {report.special_mismatch} are special mismatches' if report.special_mismatch else ''}."]
    lines += _worst_lines(report)
    lines += _closing_lines(report)
    raise AssertionError("\n".join(lines))


def assert_within_bound(outputs, inputs=None, op=None, max_fraction=1.0, dtype=None, msg=None, **options):
    """Fails unless every output's error is at most `max_fraction` of what a backward-stable
    evaluation of the op's definition may err (1: the bound itself; `ulpgate check
    --max-bound-fraction`). Many ULPs where the result cancels are within it; a kernel whose
    formula loses more than its rounding can explain is not. A reduction (op="linear_fwd",
    ...) takes a callable in place of outputs and inputs, and check's options (shape, suite,
    seed, n, tensors): its bound is that of binary32-accumulated products and sums."""
    report = check(outputs, inputs, op=op, dtype=dtype, **options)
    fraction = report.max_bound_fraction
    if fraction is None:
        raise ValueError(f"{op} has no error bound to hold its outputs to")
    if fraction <= max_fraction:
        return report
    if isinstance(report, ReductionReport):
        where = report.bound_fraction.get("max_input") or {}
        lines = [msg or f"{op} outputs ({report.label}) err more than {max_fraction:g} times the error bound.",
                 _wrapped(f"Bound fraction: {report.bound_text()}.", indent=2)]
        if where:
            lines.append(f"Largest at {where['name']} of instance {where['instance']}.")
        lines.append(_wrapped(f"Follows bit for bit: {report.models_text()}.", indent=2))
        if report.inputs_command():
            lines.append(_wrapped(report.inputs_command(), prefix="The inputs: ", indent=2, command=True))
        raise AssertionError("\n".join(lines))
    b = report.bound_fraction
    limit = "the error bound" if max_fraction == 1 else f"{max_fraction:g} times the error bound"
    lines = [msg or f"{op} outputs err more than {limit} of a backward-stable evaluation.",
             _wrapped(f"The largest error is {_ulp_text(fraction)} times the bound; {report.above_bound} of "
                      f"{report.n} outputs ({report.dtype}) exceed the bound itself.", indent=2)]
    if b.get("max_input"):
        lines += _input_lines(report, b["max_input"]["index"], f"Largest: {_ulp_text(fraction)} times the bound")
    lines += _worst_lines(report)
    lines.append(_wrapped(f"Follows bit for bit: {report.models_text()}.", indent=2))
    raise AssertionError("\n".join(lines))


def _bins_over(report, max_ulp):
    """(lower bound, count) of the histogram bins wholly above max_ulp: bin i > 0 holds
    errors in (bounds[i-1], bounds[i]], the last one those above every bound."""
    bounds, counts = report.histogram["bounds"], report.histogram["counts"]
    return [(bounds[i - 1], counts[i]) for i in range(1, len(counts))
            if bounds[i - 1] >= max_ulp and counts[i]]


def assert_follows_model(outputs, inputs, op, model, dtype=None, msg=None):
    """Fails unless every output is bit for bit what `model` gives (a built-in model of the
    op in that dtype, `ulpgate list`, or "NAME: statements" of your own)."""
    models = [model] if ":" in model else []
    name = model.split(":", 1)[0].strip()
    report = check(outputs, inputs, op=op, dtype=dtype, models=models)
    if name not in report.models:
        raise ValueError(f"unknown model '{name}' of {op} in {report.dtype} "
                         f"({', '.join(report.models)})")
    m = report.models[name]
    if m["mismatches"] == 0:
        return report
    lines = [msg or f"{op} outputs do not follow the model {name}.",
             f"{m['mismatches']} of {report.n} outputs ({report.dtype}) differ from it."]
    nearest = m.get("nearest_mismatches") or []
    if nearest:
        first = nearest[0]
        index = first["index"]
        apart = first["apart_ulp"]
        values = [v for _, v in report.inputs_at(index)]
        exact_value = _decimal_text(exact(op, *values, digits=17))
        lines += [_wrapped(f"#{index}: {report.input_text(index)}:", prefix="Nearest: input ", indent=2),
                  _wrapped(f"output {first['output']['value']}, model {first['model']['value']} "
                           f"({_ulp_text(apart)} ULP apart), exact value {exact_value}", prefix="  ", indent=4),
                  _wrapped(report.replay(index), prefix="  explain it: ", indent=6, command=True)]
    lines += _worst_lines(report)
    lines += _closing_lines(report)
    raise AssertionError("\n".join(lines))


def assert_follows(outputs, inputs, op, policy, dtype=None, msg=None):
    """Fails unless a cast's outputs (codes of `dtype`, the destination: uint8, an ml_dtypes
    array, a torch float8 tensor) are bit for bit the codes `policy` of the cast model gives at
    `inputs` (`op`: cast_f32, cast_bf16 or cast_f16); the message names the first inputs that
    differ, with both codes, and the policies the outputs follow instead (else the nearest)."""
    report = check(outputs, inputs, op=op, dtype=dtype, policy=policy)
    fit = report.claimed_fit
    if fit["mismatches"] == 0:
        return report
    lines = [msg or f"{op} outputs ({report.source} -> {report.dtype}) do not follow the policy {policy}.",
             f"{fit['mismatches']} of {report.n} outputs differ from it; first:"]
    lines += [_wrapped(f"{m['input']} -> {m['output']}, {policy} gives {m['model']}", prefix="  ", indent=4)
              for m in fit["first"]]
    lines.append(_wrapped(f"Follows bit for bit: {report.policies_text()}.", indent=2))
    raise AssertionError("\n".join(lines))


def assert_follows_block_rule(x, scales, codes, spec, rule, axis="rows", tensor_scale=None, msg=None):
    """Fails unless block-quantized outputs of x are reproduced bit for bit by the scale rule
    `rule` ("rceil": with any element policy) or the pair "rule/policy"
    ("ocp_floor/nearest_even.saturate"); the message names what they follow instead."""
    report = check_blockquant(x, scales, codes, spec=spec, axis=axis, tensor_scale=tensor_scale)
    if report.follows(rule):
        return report
    if report.exact:
        found = "; ".join(f"{r}: {', '.join(p)}" for r, p in report.scale_rules.items())
        follows = f"They follow {found}."
    else:
        follows = (f"They follow no model; nearest {report.nearest} ({report.blocks_matched} of "
                   f"{report.blocks} blocks), first broken: {report.why}.")
    lines = [msg or f"{spec} outputs do not follow {rule}.", _wrapped(follows, indent=2)]
    raise AssertionError("\n".join(lines))


def assert_batch_invariant(fn, msg=None, **options):
    """Fails unless the matrix product callable fn(a, b) -> a @ b.T gives its probe row the same
    bits alone, in every batch size and position tried, and run to run (`invariance`, whose
    options it takes: dtype, tensors, k, n, max_batch, ...; alignment and thread counts are
    reported, not required). The message says the verdict, the first batch size that changed
    the bits and the largest that did not, and each dimension's finding."""
    report = invariance(fn, **options)
    if report.batch_invariant:
        return report
    lines = [msg or f"{report.door}: {report.verdict}."]
    if report.first_changed_batch:
        lines.append(f"The probe row's bits are its own alone up to m={report.last_invariant_batch}; "
                     f"they change from m={report.first_changed_batch}.")
    for name in report.dimensions:
        lines.append(_wrapped(report.dimension_text(name), prefix=f"  {name}: ", indent=4))
    raise AssertionError("\n".join(lines))


def assert_tree(fn, expected, k=None, lanes=8, msg=None, **options):
    """Fails unless `reveal` finds that the matrix product callable fn(a, b) -> a @ b.T adds the
    k terms of an output in the summation tree `expected` (a schedule's name with k:
    'sequential', 'pairwise', 'lane_parallel' with `lanes`; a tree's text '((0+1)+2)'; or nested
    lists [[0, 1], 2]; compared by structure, children in any order) and that the tree's model
    gives fn's bits on every output it checks (`reveal`'s options: dtype, tensors, m, n,
    check_outputs, ...). The message says what reveal found instead."""
    want = tree(expected, k, lanes)
    if k is None:
        k = len(set(int(t) for t in want.replace("(", " ").replace(")", " ").replace("+", " ").replace(
            "[", " ").replace("]", " ").replace(",", " ").split() if t.isdigit()))
    report = reveal(fn, k=k, **options)
    found = tree(report.tree) if report.tree is not None else None
    if found == want and report.follows_tree:
        return report
    lines = [msg or f"{report.door} does not add its {k} terms as expected."]
    lines.append(_wrapped(want, prefix="  expected: ", indent=12))
    lines.append(_wrapped(found or "no tree", prefix="  revealed: ", indent=12))
    lines.append(_wrapped(report.verdict, prefix="  reveal says: ", indent=4))
    if report.first_mismatch:
        lines.append(_wrapped(report.first_mismatch, prefix="  first mismatch: ", indent=4))
    raise AssertionError("\n".join(lines))
