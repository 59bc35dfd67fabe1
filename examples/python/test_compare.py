"""ulpgate.compare: two implementations of one op at the same inputs, from Python, with the
same answer as `ulpgate compare` on the same data (docs/compare.md): numpy callables that
differ by formula, arrays against a callable, bf16 eager against opmath with torch (rounding
format), identical sides, and bad input as ValueError.

    PYTHONPATH=build/python ULPGATE=build/bin/ulpgate /usr/bin/python3 -m pytest examples/python/test_compare.py
"""
import json
import os
import subprocess

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed")
ulpgate = pytest.importorskip("ulpgate", reason="the ulpgate package is not built (PYTHONPATH=build/python)")

ULPGATE = os.environ.get("ULPGATE", "build/bin/ulpgate")
rng = np.random.default_rng(7)
GRAD = rng.standard_normal(3000).astype(np.float32)
T = rng.uniform(-1, 1, 3000).astype(np.float32)
INPUTS = {"grad": GRAD, "t": T}


def mulsub(g, t):
    return g * (1 - t * t)


def mac_unfused(g, t):
    return g - g * (t * t)


def test_callables_that_differ_by_formula():
    r = ulpgate.compare(mulsub, mac_unfused, INPUTS, op="tanh_bwd", framework="numpy")
    assert r.differing > 0 and not r.identical
    assert r.models_a == ["mulsub"] and r.models_b == ["mac_unfused"]
    assert r.cause == "formula"
    assert "formula" in repr(r)


def test_the_same_as_the_cli(tmp_path):
    """Arrays against a callable, and the CLI on the same arrays saved as text files."""
    a = mulsub(GRAD, T)
    r = ulpgate.compare(a, mac_unfused, INPUTS, op="tanh_bwd", framework="numpy")
    inputs, out_a, out_b = tmp_path / "in.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    inputs.write_text("".join(f"{float(g).hex()} {float(t).hex()}\n" for g, t in zip(GRAD, T)))
    out_a.write_text("".join(f"{float(y).hex()}\n" for y in a))
    out_b.write_text("".join(f"{float(y).hex()}\n" for y in mac_unfused(GRAD, T)))
    cli = subprocess.run([ULPGATE, "compare", "--op", "tanh_bwd", "--inputs", str(inputs), "--a", str(out_a),
                          "--b", str(out_b), "--json", "-", "--quiet"], capture_output=True, text=True)
    assert cli.returncode == 1, cli.stderr
    said = json.loads(cli.stdout)["result"]
    assert said["differing"] == r.differing
    assert said["max_apart_ulp"] == r.max_apart_ulp
    assert said["cause"]["cause"] == r.cause
    assert said["a"]["models_all_inputs"] == r.models_a


def test_identical():
    r = ulpgate.compare(mulsub, mulsub(GRAD, T), INPUTS, op="tanh_bwd", framework="numpy")
    assert r.identical and r.cause == "none"


def test_torch_bf16_eager_against_opmath():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    g, t = torch.from_numpy(GRAD).bfloat16(), torch.from_numpy(T).bfloat16()

    def eager(g, t):  # every step rounded to bf16
        return g * (1 - t * t)

    def opmath(g, t):  # in f32, rounded once
        return (g.float() * (1 - t.float() * t.float())).bfloat16()

    r = ulpgate.compare(eager, opmath, {"grad": g, "t": t}, op="tanh_bwd", dtype="bf16")
    assert r.cause == "rounding format"
    assert "mulsub_per_op" in r.models_a and "mulsub_opmath" in r.models_b


def test_bad_input():
    with pytest.raises(ValueError, match="differ"):
        ulpgate.compare(mulsub, GRAD[:10], INPUTS, op="tanh_bwd", framework="numpy")
    with pytest.raises(ValueError):
        ulpgate.compare(mulsub, mulsub, INPUTS, op="nope", framework="numpy")
    with pytest.raises(ValueError, match="takes an elementwise op"):
        ulpgate.compare(mulsub, mulsub, INPUTS, op="linear_fwd")
