"""The package's format-level API: the registry with its traits (ulpgate.formats()), and
decode, encode and round over any registered format, with ml_dtypes arrays and PyTorch
float8 tensors where those are installed (skipped, with the reason, where not). Expected
values are worked by hand from the OCP FP8/MX definitions and IEEE 754."""

import math

import numpy as np
import pytest

import ulpgate


def _has(module, attr=None):
    try:
        m = __import__(module)
    except ImportError:
        return False
    return attr is None or hasattr(m, attr)


def test_formats_lists_the_registry_with_traits():
    by_name = {f["name"]: f for f in ulpgate.formats()}
    assert list(by_name)[:4] == ["f32", "bf16", "f16", "f64"]
    e4m3 = by_name["float8_e4m3fn"]
    assert (e4m3["bits"], e4m3["precision"], e4m3["emin"], e4m3["emax"], e4m3["bias"]) == (8, 4, -6, 8, 7)
    assert e4m3["encoding"] == "fn" and not e4m3["infinity"] and e4m3["nan"]
    assert e4m3["largest_finite"] == 448.0 and e4m3["smallest_positive"] == 2.0 ** -9
    assert e4m3["ops"] == ["cast_f32", "cast_bf16", "cast_f16"]
    assert by_name["float8_e4m3fnuz"]["encoding"] == "fnuz" and by_name["float8_e4m3fnuz"]["bias"] == 8
    assert by_name["float8_e8m0fnu"]["encoding"] == "e8m0" and not by_name["float8_e8m0fnu"]["signed"]
    assert by_name["float4_e2m1fn"]["packing"] == "nibble_pairs"
    assert by_name["f32"]["encoding"] == "ieee" and "tanh_bwd" in by_name["f32"]["ops"]


def test_decode_encode_round_take_any_format():
    # E4M3FN: 0x38 = 0 0111 000 = 1, 0xc0 = -2, 0x7e = 448, 0x7f NaN.
    v = ulpgate.decode(np.array([[0x38, 0xc0], [0x7e, 0x7f]], np.uint8), "float8_e4m3fn")
    assert v.shape == (2, 2) and v.dtype == np.float64
    assert v[0, 0] == 1.0 and v[0, 1] == -2.0 and v[1, 0] == 448.0 and math.isnan(v[1, 1])
    # E2M1: 0x3 = 1.5, 0xc = -2; E8M0: 0x7f = 1, 0x80 = 2.
    assert list(ulpgate.decode([0x3, 0xC], "float4_e2m1fn")) == [1.5, -2.0]
    assert list(ulpgate.decode([0x7F, 0x80], "float8_e8m0fnu")) == [1.0, 2.0]
    codes = ulpgate.encode([1.0, -2.0, 448.0], "float8_e4m3fn")
    assert codes.dtype == np.uint8 and list(codes) == [0x38, 0xC0, 0x7E]
    assert ulpgate.encode([1.0], "bf16").dtype == np.uint16 and ulpgate.encode([1.0], "bf16")[0] == 0x3F80
    with pytest.raises(ValueError, match="not a float8_e4m3fn value"):
        ulpgate.encode([1.0625], "float8_e4m3fn")
    # 1.0625 is the tie of 1 and 1.125 in E4M3 (ulp 2^-3): even, 1; 1.1875 -> 1.25; past 464
    # (the midpoint of 448 and 2^9) E4M3FN overflows to NaN, E5M2 to infinity.
    r = ulpgate.round([1.0625, 1.1875, 500.0], "float8_e4m3fn")
    assert r[0] == 1.0 and r[1] == 1.25 and math.isnan(r[2])
    assert ulpgate.round([1.0625], "float8_e4m3fn", toward_zero=True)[0] == 1.0
    assert ulpgate.round([1e6], "float8_e5m2")[0] == math.inf
    assert list(ulpgate.round([1.0625, 1.1875], "float8_e4m3fn", to="codes")) == [0x38, 0x3A]
    with pytest.raises(ValueError, match="unknown format 'float9'"):
        ulpgate.decode([0], "float9")
    with pytest.raises(ValueError, match="not a 4-bit float4_e2m1fn code"):
        ulpgate.decode([0x13], "float4_e2m1fn")


def test_check_refuses_a_format_without_kernels():
    with pytest.raises(ValueError, match="dtype 'float8_e4m3fn': tanh_bwd runs in f32, bf16, f16"):
        ulpgate.check(np.zeros(4, np.float32), {"grad": np.ones(4, np.float32), "t": np.zeros(4, np.float32)},
                      op="tanh_bwd", dtype="float8_e4m3fn")


@pytest.mark.skipif(not _has("ml_dtypes"), reason="ml_dtypes is not installed for this python3")
def test_ml_dtypes_arrays_in_and_out():
    import ml_dtypes
    x = np.array([1.0, -2.0, 448.0], dtype=ml_dtypes.float8_e4m3fn)
    assert list(ulpgate.decode(x)) == [1.0, -2.0, 448.0]  # the format from the dtype
    out = ulpgate.round([1.0625, 1.1875], "float8_e4m3fn", to="ml_dtypes")
    assert out.dtype == ml_dtypes.float8_e4m3fn and list(out.astype(np.float32)) == [1.0, 1.25]
    f4 = ulpgate.encode([1.5, -2.0], "float4_e2m1fn", to="ml_dtypes")
    assert f4.dtype == ml_dtypes.float4_e2m1fn and list(f4.astype(np.float32)) == [1.5, -2.0]
    assert list(ulpgate.round(np.array([1.0625], ml_dtypes.bfloat16), "float8_e4m3fn")) == [1.0]


@pytest.mark.skipif(not _has("torch", "float8_e4m3fn"),
                    reason="PyTorch with float8 dtypes (2.1 or later) is not installed for this python3")
def test_torch_float8_tensors_in_and_out():
    import torch
    t = torch.tensor([1.0, -2.0, 448.0]).to(torch.float8_e4m3fn)
    assert list(ulpgate.decode(t)) == [1.0, -2.0, 448.0]
    out = ulpgate.round([1.0625, 1.1875], "float8_e4m3fn", to="torch")
    assert out.dtype == torch.float8_e4m3fn and out.float().tolist() == [1.0, 1.25]


def test_sweep_refuses_a_format_without_kernels():
    with pytest.raises(ValueError, match="dtype 'float8_e5m2': tanh_bwd runs in f32, bf16, f16"):
        ulpgate.sweep(lambda g, t: g, op="tanh_bwd", dtype="float8_e5m2")
