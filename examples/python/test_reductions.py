"""Reductions through Python callables and arrays (ulpgate.check with op="linear_fwd",
"mse_fwd", ...), and the matrix product door (a callable fn(a, b) -> a @ b.T behind the C++
DotDoor that reveal and invariance call). Each expected schedule is written here in NumPy
or plain Python, independently of ulpgate's models: a sequential loop must be named
sequential, a pairwise cascade pairwise, a sum in float64 correctly rounded, and a kernel
that rounds its operands to bf16 must exceed the f32 error bound."""

import json
import math
import os
import subprocess
import threading

import numpy as np
import pytest

ulpgate = pytest.importorskip("ulpgate", reason="the package is not built (PYTHONPATH=build/python)")
from ulpgate import _ulpgate  # noqa: E402  (the door's test entry: one Multiply call)
from ulpgate.testing import assert_within_bound  # noqa: E402


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


torch = _torch()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")


def sequential_unfused(x, w, b):
    """y[i, o] = (((0 + RN(x w)) + RN(x w)) + ...) + b[o], one float32 operation at a time."""
    out = np.zeros((x.shape[0], w.shape[0]), np.float32)
    for i in range(x.shape[0]):
        for o in range(w.shape[0]):
            acc = np.float32(0)
            for k in range(x.shape[1]):
                acc = np.float32(acc + np.float32(x[i, k] * w[o, k]))
            out[i, o] = np.float32(acc + b[o])
    return out


def pairwise(x, w, b):
    """Rounded products added in adjacent pairs level by level, an odd last one carried up."""
    t = (x[:, None, :] * w[None, :, :]).astype(np.float32)
    while t.shape[-1] > 1:
        carry = t[..., -1:] if t.shape[-1] % 2 else None
        even = t[..., : t.shape[-1] // 2 * 2]
        t = even[..., 0::2] + even[..., 1::2]
        if carry is not None:
            t = np.concatenate([t, carry], axis=-1)
    return t[..., 0] + b


def float64_rounded(dy, w):
    """linear_bwd_input dx = dy w, every sum exact in float64 (fsum), rounded once to float32."""
    out = np.zeros((dy.shape[0], w.shape[1]), np.float32)
    for i in range(dy.shape[0]):
        for j in range(w.shape[1]):
            out[i, j] = np.float32(math.fsum(float(dy[i, o]) * float(w[o, j]) for o in range(dy.shape[1])))
    return out


def test_sequential_loop_is_named_sequential():
    r = ulpgate.check(sequential_unfused, op="linear_fwd", shape=(3, 17, 5), suite="cancellation")
    assert isinstance(r, ulpgate.ReductionReport)
    assert r.n == 4 * 3 * 5 and r.instances == 4 and r.shape == "3,17,5"
    assert "sequential_unfused" in r.matching
    assert "pairwise" not in r.matching and "sequential_fused" not in r.matching
    assert r.above_bound == 0 and r.max_bound_fraction < 1
    text = repr(r)
    assert "follows bit for bit  sequential_unfused" in text
    assert "ulpgate suite export --op linear_fwd --suite cancellation --seed 1 --shape 3,17,5" in text
    assert all(len(line) <= ulpgate.WIDTH for line in text.splitlines())


def test_pairwise_numpy_is_named_pairwise():
    r = ulpgate.check(pairwise, op="linear_fwd", shape=(4, 37, 6), suite="cancellation", n=3)
    assert r.matching == ["pairwise"] or "pairwise" in r.matching
    assert "sequential_unfused" not in r.matching
    assert r.instances == 3


def test_float64_sum_is_correctly_rounded():
    r = ulpgate.check(float64_rounded, op="linear_bwd_input", shape=(3, 40, 4), suite="cancellation")
    assert r.correctly_rounded == r.n and r.max_ulp <= 0.5
    # Correct rounding is no schedule: a sequential model would differ somewhere.
    assert "sequential_unfused" not in r.matching


def test_operands_rounded_to_bf16_exceed_the_f32_bound():
    def bf16_operands(x, w, b):
        def to_bf16(a):  # round to nearest even to 8 significant bits, as float32 values
            bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
            return bits.astype(np.uint32).view(np.float32)
        return sequential_unfused(to_bf16(x), to_bf16(w), b)
    r = ulpgate.check(bf16_operands, op="linear_fwd", shape=(2, 16, 3), suite="cancellation")
    assert r.exceeds_bound and r.above_bound > 0 and r.max_bound_fraction > 1
    assert r.matching == []
    assert "EXCEEDS the f32 error bound" in repr(r)
    with pytest.raises(AssertionError, match=r"(?s)EXCEEDS the f32 error bound.*Largest at y\[\d+,\d+\] of instance"):
        assert_within_bound(bf16_operands, op="linear_fwd", shape=(2, 16, 3), suite="cancellation")
    assert_within_bound(sequential_unfused, op="linear_fwd", shape=(2, 16, 3), suite="cancellation")


def test_outputs_as_arrays_with_a_leading_instance_dimension():
    inputs = ulpgate.reduction_inputs("linear_fwd", shape=(2, 9, 3), suite="training", n=2)
    assert [sorted(i) for i in inputs] == [["b", "w", "x"]] * 2
    assert inputs[0]["x"].shape == (2, 9) and inputs[0]["w"].shape == (3, 9) and inputs[0]["b"].shape == (3,)
    stacked = {k: np.stack([i[k] for i in inputs]) for k in ("x", "w", "b")}
    y = np.stack([sequential_unfused(i["x"], i["w"], i["b"]) for i in inputs])
    r = ulpgate.check(y, stacked, op="linear_fwd")
    assert r.instances == 2 and r.shape == "2,9,3" and "sequential_unfused" in r.matching
    # The same instances through a callable: the same measurement.
    f = ulpgate.check(sequential_unfused, op="linear_fwd", shape=(2, 9, 3), suite="training", n=2)
    assert f.record["output_digest"] == r.record["output_digest"] and f.max_ulp == r.max_ulp
    with pytest.raises(ValueError, match="shape"):
        ulpgate.check(y[:, :1], stacked, op="linear_fwd")


def test_mse_scalar_operands_and_outputs():
    seen = {}

    def mse_bwd(y, t, g):
        seen["g"] = g.shape
        return (np.float32(2) / np.float32(y.size) * (y - t) * g).astype(np.float32)
    r = ulpgate.check(mse_bwd, op="mse_bwd", shape=64, suite="training")
    assert seen["g"] == () and r.n == 4 * 64

    def mse_fwd(y, t):
        return np.float32(np.mean((y.astype(np.float64) - t) ** 2))  # a NumPy scalar
    r = ulpgate.check(mse_fwd, op="mse_fwd", shape=100, suite="training")
    assert r.n == 4 and r.max_ulp <= 0.5


def test_a_callable_that_fails_is_never_measured():
    with pytest.raises(ZeroDivisionError):
        ulpgate.check(lambda x, w, b: 1 / 0, op="linear_fwd", shape=(2, 3, 2))
    with pytest.raises(ValueError, match=r"instance 0 returned float64 \[2, 2\] where float32 \[2, 2\]"):
        ulpgate.check(lambda x, w, b: (x @ w.T + b).astype(np.float64), op="linear_fwd", shape=(2, 3, 2))
    with pytest.raises(ValueError, match=r"returned float32 \[2, 3\] where float32 \[2, 2\]"):
        ulpgate.check(lambda x, w, b: x, op="linear_fwd", shape=(2, 3, 2))
    with pytest.raises(ValueError, match="unknown suite"):
        ulpgate.check(sequential_unfused, op="linear_fwd", suite="nonesuch")


def test_the_cli_measures_the_same(tmp_path):
    """The report's inputs command writes the instances a callable was given; `ulpgate check`
    of the callable's outputs on that file says what check said, figure for figure."""
    cli = os.environ.get("ULPGATE", "")
    if not cli or not os.path.exists(cli):
        pytest.skip("ULPGATE (the CLI) is not set")
    r = ulpgate.check(sequential_unfused, op="linear_fwd", shape=(3, 9, 4), suite="training", seed=3, n=2)
    command = r.inputs_command().split()
    assert command[:3] == ["ulpgate", "suite", "export"]
    subprocess.run([cli, *command[1:-1], str(tmp_path / "in.npz")], check=True, capture_output=True)
    d = np.load(tmp_path / "in.npz")
    np.save(tmp_path / "out.npy", np.stack([sequential_unfused(d["x"][i], d["w"][i], d["b"][i]) for i in range(2)]))
    subprocess.run([cli, "check", "--op", "linear_fwd", "--inputs", str(tmp_path / "in.npz"), "--outputs",
                    str(tmp_path / "out.npy"), "--json", str(tmp_path / "r.json")], check=True, capture_output=True)
    cli_record = json.loads((tmp_path / "r.json").read_text())["results"][0]
    for key in ("n", "instances", "shape", "max_ulp", "mean_ulp", "correctly_rounded", "histogram", "output_digest",
                "bound_fraction", "conformance"):
        assert cli_record[key] == r.record[key], key
    assert "sequential_unfused" in r.matching


@needs_torch
def test_torch_tensors_of_the_dtype():
    dtypes = []

    def linear(x, w, b):
        dtypes.append((x.dtype, w.dtype, b.dtype))
        return torch.nn.functional.linear(x, w, b)
    r = ulpgate.check(linear, op="linear_fwd", shape=(4, 32, 4), dtype="bf16", tensors="torch")
    assert set(dtypes) == {(torch.bfloat16,) * 3} and r.dtype == "bf16" and r.n == 4 * 16
    assert r.above_bound == 0


# ---- The matrix product door ------------------------------------------------------------

A = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
B = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 0, 2]], np.float32)
C = np.array([[1, 2, 6, 6], [4, 5, 15, 12]], np.float32)  # A B^T by hand


def test_door_passes_arrays_of_the_dtype_and_reads_the_product():
    seen = []

    def mm(a, b):
        seen.append((a.dtype, a.shape, b.shape))
        return (a.astype(np.float32) @ b.astype(np.float32).T).astype(a.dtype)
    assert np.array_equal(_ulpgate.door_multiply(mm, A, B, "f32", "f32"), C)
    assert np.array_equal(_ulpgate.door_multiply(mm, A, B, "f16", "f16"), C)
    assert seen == [(np.float32, (2, 3), (4, 3)), (np.float16, (2, 3), (4, 3))]


@needs_torch
def test_door_passes_torch_tensors():
    seen = []

    def mm(a, b):
        seen.append(a.dtype)
        return (a.float() @ b.float().T).to(a.dtype)
    assert np.array_equal(_ulpgate.door_multiply(mm, A, B, "bf16", "bf16", tensors="torch"), C)
    assert seen == [torch.bfloat16]
    if not hasattr(torch, "float8_e4m3fn"):
        with pytest.raises(ulpgate.DotDoorError, match="has no float8_e4m3fn"):
            _ulpgate.door_multiply(mm, A, B, "float8_e4m3fn", "f32", tensors="torch")


@pytest.mark.parametrize("fn, words", [
    (lambda a, b: 1 / 0, "python:mm raised ZeroDivisionError: division by zero"),
    (lambda a, b: (a @ b.T).astype(np.float64), r"python:mm: returned float64 \[2, 4\] where float32 \[2, 4\]"),
    (lambda a, b: a @ b[:3].T, r"returned float32 \[2, 3\] where float32 \[2, 4\] was due"),
    (lambda a, b: (a @ b.T).tolist(), "returned <class 'list'>, not a NumPy array or a torch tensor"),
])
def test_door_errors_carry_pythons_words(fn, words):
    with pytest.raises(ulpgate.DotDoorError, match=words):
        _ulpgate.door_multiply(fn, A, B, "f32", "f32", name="mm")
    assert issubclass(ulpgate.DotDoorError, RuntimeError)


def test_door_without_ml_dtypes_says_so():
    try:
        import ml_dtypes  # noqa: F401
        pytest.skip("ml_dtypes is installed: bf16 NumPy arrays exist")
    except ImportError:
        pass
    with pytest.raises(ulpgate.DotDoorError, match="ml_dtypes is not installed"):
        _ulpgate.door_multiply(lambda a, b: a @ b.T, A, B, "bf16", "bf16")


def test_door_from_threads_takes_the_gil():
    # Multiply runs with the GIL released and takes it back: callers on several threads each
    # get their product, and none blocks the others for good.
    results, errors = [], []

    def worker(scale):
        try:
            for _ in range(20):
                results.append(np.array_equal(
                    _ulpgate.door_multiply(lambda a, b: a @ b.T, A * scale, B, "f32", "f32"), C * scale))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)
    threads = [threading.Thread(target=worker, args=(s,)) for s in (1, 2, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors and len(results) == 60 and all(results)


if __name__ == "__main__":
    raise SystemExit(pytest.main([os.path.abspath(__file__), "-q"]))
