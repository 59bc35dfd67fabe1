"""Assertions for test suites, in the manner of torch.testing.assert_close, that say more:
how many outputs differ, the worst input in hex with its exact value, the models the
outputs follow, and the command that explains the input step by step.

    from ulpgate.testing import assert_follows_model, assert_within_ulp
    assert_within_ulp(y, {"grad": g, "t": t}, op="tanh_bwd", max_ulp=1.5)
    assert_follows_model(y, {"grad": g, "t": t}, op="tanh_bwd", model="mulsub_fused")
"""

from . import check, exact, format_ulp

__all__ = ["assert_follows_model", "assert_within_ulp"]


def _input_text(report, index):
    values = [float(v[index]) for v in report._operands]
    return ", ".join(f"{n} = {v.hex()}" for n, v in zip(report._names, values)), values


def _worst_lines(report):
    if not report.worst:
        return []
    index = report.worst["index"]
    text, values = _input_text(report, index)
    return [f"Worst: {format_ulp(report.max_ulp)} ULP at input #{index}: {text};",
            f"  exact value {exact(report.op, *values)}",
            f"  explain it: {report.replay(index)}"]


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
    lines.append(f"Follows bit for bit: {', '.join(report.matching) or 'no model of ' + op}.")
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
        text, values = _input_text(report, index)
        lines += [f"Nearest: input #{index}: {text}:",
                  f"  output {first['output']['value']}, model {first['model']['value']} "
                  f"({first['apart_ulp']:g} ULP apart), exact value {exact(op, *values)}",
                  f"  explain it: {report.replay(index)}"]
    lines += _worst_lines(report)
    lines.append(f"Follows bit for bit: {', '.join(report.matching) or 'no model of ' + op}.")
    raise AssertionError("\n".join(lines))
