"""PyTorch's own CPU backward kernels tested with ulpgate from pytest: the models each
follows bit for bit, ULP bounds, and an exhaustive bf16 sweep from Python.

    PYTHONPATH=build/python /usr/bin/python3 -m pytest examples/python

What is asserted was measured independently: an mpmath oracle over Debian's PyTorch
1.13 found tanh_backward's f32 kernel at ATEN_CPU_CAPABILITY=default following
grad*(1 - t*t) with two roundings (mulsub; up to 1,430 ULP where 1 - t*t cancels) and
at avx2 the fused form (mulsub_fused, at most 1.43 ULP); bf16 kernels compute in float
and round once. The capability is PyTorch's choice at import (the environment variable
ATEN_CPU_CAPABILITY), so each test reads which one this process got.
"""
import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
ulpgate = pytest.importorskip("ulpgate", reason="the ulpgate package is not built (PYTHONPATH=build/python)")
from ulpgate.testing import assert_follows_model, assert_within_ulp  # noqa: E402

aten = torch.ops.aten
torch.set_num_threads(1)  # one thread: which elements take ATen's scalar tail is then fixed
CAPABILITY = next((line.split(":", 1)[1].strip() for line in torch.__config__.show().splitlines()
                   if "CPU capability usage" in line), "")

OPS = {  # ulpgate op -> (PyTorch call, the second operand's name, its range)
    "tanh_bwd": (aten.tanh_backward, "t", (-1.0, 1.0)),
    "sigmoid_bwd": (aten.sigmoid_backward, "s", (0.0, 1.0)),
    "silu_bwd": (aten.silu_backward, "x", (-12.0, 12.0)),
    "gelu_bwd": (lambda g, x: aten.gelu_backward(g, x, approximate="none"), "x", (-6.0, 6.0)),
    "gelu_tanh_bwd": (lambda g, x: aten.gelu_backward(g, x, approximate="tanh"), "x", (-6.0, 6.0)),
}


def inputs(op, dtype, n=20000, seed=0):
    g = torch.Generator().manual_seed(seed)
    lo, hi = OPS[op][2]
    grad = (torch.randn(n, generator=g) * 4).to(dtype)
    second = (lo + (hi - lo) * torch.rand(n, generator=g)).to(dtype)
    return grad, second


def test_tanh_backward_f32_follows_the_capabilitys_model():
    grad, t = inputs("tanh_bwd", torch.float32)
    y = aten.tanh_backward(grad, t)
    model = {"NO AVX": "mulsub", "AVX2": "mulsub_fused"}.get(CAPABILITY)
    if model is None:
        pytest.skip(f"no recorded model at capability {CAPABILITY!r}")
    report = assert_follows_model(y, {"grad": grad, "t": t}, op="tanh_bwd", model=model)
    assert report.n == 20000


def test_tanh_backward_bf16_is_float_rounded_once():
    grad, t = inputs("tanh_bwd", torch.bfloat16)
    y = aten.tanh_backward(grad, t)
    assert_follows_model(y, {"grad": grad, "t": t}, op="tanh_bwd", model="mulsub_opmath")
    assert_within_ulp(y, {"grad": grad, "t": t}, op="tanh_bwd", max_ulp=0.5)


def test_sigmoid_backward_follows_atens_sequence():
    # ATen's sigmoid_backward is grad * (1 - s) * s, left to right, with nothing to fuse: model
    # `torch` in f32 at every capability; in bf16 the same in float, rounded once.
    for dtype, model in ((torch.float32, "torch"), (torch.bfloat16, "torch_opmath")):
        grad, s = inputs("sigmoid_bwd", dtype)
        y = aten.sigmoid_backward(grad, s)
        assert_follows_model(y, {"grad": grad, "s": s}, op="sigmoid_bwd", model=model)


@pytest.mark.parametrize("op", ["silu_bwd", "gelu_tanh_bwd"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_transcendental_ops_stay_within_the_backward_stable_bound(op, dtype):
    # Their exp and tanh are PyTorch's own (no model follows them bit for bit), and near the
    # derivative's zeros the error in ULPs is large; as a fraction of what a backward-stable
    # evaluation of the definition may err it stays below 1.
    grad, second = inputs(op, dtype)
    y = OPS[op][0](grad, second)
    report = ulpgate.check(y, {"grad": grad, OPS[op][1]: second}, op=op)
    assert report.special_mismatch == 0
    assert float(report.bound_fraction["max"]) < 1, report


def test_gelu_backward_cancels_below_minus_four():
    # gelu_bwd(approximate='none') loses its digits where 1 + erf(x/sqrt 2) cancels: many ULPs,
    # yet a small fraction of the bound a backward-stable evaluation allows.
    grad = torch.ones(2000)
    x = -4.0 - 2.0 * torch.rand(2000, generator=torch.Generator().manual_seed(1))
    y = OPS["gelu_bwd"][0](grad, x)
    report = ulpgate.check(y, {"grad": grad, "x": x}, op="gelu_bwd")
    assert report.max_ulp > 1000
    with pytest.raises(AssertionError, match=r"gelu_bwd outputs are not within 4 ULP(.|\n)*exact value"):
        assert_within_ulp(y, {"grad": grad, "x": x}, op="gelu_bwd", max_ulp=4)


def test_a_wrong_model_fails_with_the_input_and_the_replay():
    grad, t = inputs("tanh_bwd", torch.float32)
    y = aten.tanh_backward(grad, t)
    with pytest.raises(AssertionError) as e:
        assert_follows_model(y, {"grad": grad, "t": t}, op="tanh_bwd", model="mac_unfused")
    text = str(e.value)
    assert "differ from it" in text and "explain it: ulpgate explain --op tanh_bwd" in text
    assert "Follows bit for bit: mulsub" in text


def test_dtype_mismatch_is_explained():
    grad, t = inputs("tanh_bwd", torch.float32)
    y = aten.tanh_backward(grad, t)
    with pytest.raises(ValueError, match="not a value of bf16"):
        ulpgate.check(y, {"grad": grad, "t": t}, op="tanh_bwd", dtype="bf16")


def test_exported_bf16_inputs_come_back_as_bf16(tmp_path):
    """`suite export --dtype bf16` writes bfloat16 (as ml_dtypes saves it); read back into
    PyTorch it is bf16 again, and check takes the dtype from the tensors."""
    import os
    import subprocess
    path = tmp_path / "in.npz"
    subprocess.run([os.environ.get("ULPGATE", "build/bin/ulpgate"), "suite", "export", "--op",
                    "tanh_bwd", "--dtype", "bf16", "--n", "5000", "--out", str(path)],
                   check=True, capture_output=True)
    arrays = ulpgate.load(path, framework="torch")
    assert arrays["grad"].dtype == torch.bfloat16 and arrays["t"].dtype == torch.bfloat16
    y = aten.tanh_backward(arrays["grad"], arrays["t"])
    report = ulpgate.check(y, arrays, op="tanh_bwd")
    assert report.dtype == "bf16" and "mulsub_opmath" in report.matching
    # The numpy arrays as saved (2-byte voids) are read as bf16 too.
    saved = ulpgate.load(path)
    assert ulpgate.check(y, saved, op="tanh_bwd").dtype == "bf16"


def test_bf16_values_checked_as_f32_warn():
    grad, t = inputs("tanh_bwd", torch.bfloat16)
    y = aten.tanh_backward(grad, t)
    with pytest.warns(UserWarning, match="pass dtype='bf16'"):
        ulpgate.check(y.float(), {"grad": grad.float(), "t": t.float()}, op="tanh_bwd")


def test_sweep_every_bf16_pair_from_python():
    report = ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16")
    assert report.n == 1 << 32
    assert "mulsub_opmath" in report.matching
    assert report.max_ulp < 0.5001  # the float result rounded once: a hair over half an ULP


def test_a_maximum_never_reads_below_its_value():
    # At grad = 0x0013 (bf16 bits) the float result rounded once is 0.5000090599 ULP off at
    # t = 0x1.4p+12: it must not read "0.5", the correctly rounded bound it exceeds.
    report = ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0x130000, 0x140000))
    assert 0.5 < report.max_ulp < 0.50001
    assert ulpgate.format_ulp(report.max_ulp) == "0.5001" and "0.5001" in repr(report)
    assert [ulpgate.format_ulp(v) for v in (0.5, 0.49999, 1.0, 0.0, float("inf"))] == ["0.5", "0.5", "1", "0", "inf"]


def test_sweep_catches_a_kernel_that_truncates():
    def truncating(grad, t):  # the float result cut to bf16 instead of rounded
        y = aten.tanh_backward(grad.float(), t.float())
        return (y.view(torch.int32) >> 16).to(torch.int16).view(torch.bfloat16)

    report = ulpgate.sweep(truncating, op="tanh_bwd", dtype="bf16", range=(0x3f000000, 0x3f100000),
                           claim="mulsub_opmath")
    assert report.mismatches > 0
    assert "mulsub_opmath" not in report.matching


def test_sweep_refuses_an_unknown_claim():
    with pytest.raises(ValueError, match="unknown model 'mulsub_opmth'"):
        ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 65536),
                      claim="mulsub_opmth")
