"""Matrix product callables and reductions on ml_dtypes arrays (bfloat16, float8_e4m3fn) and
PyTorch float8 tensors, run by test_matmul_doors.py in the peers' venv (it has no pytest):
exits non-zero at the first failed check. What each callable must be found to be follows
from how it is written here."""

import ml_dtypes
import numpy as np
import torch

import ulpgate
from ulpgate import _ulpgate
from ulpgate.testing import assert_tree

A = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
B = np.array([[1, 0, 0], [0, 1, 0], [1, 1, 1], [0, 0, 2]], np.float32)
C = np.array([[1, 2, 6, 6], [4, 5, 15, 12]], np.float32)  # A B^T by hand

seen = []


def f32_product(a, b):
    seen.append(a.dtype)
    if hasattr(a, "float"):
        return a.float() @ b.float().T
    return a.astype(np.float32) @ b.astype(np.float32).T


assert np.array_equal(_ulpgate.door_multiply(f32_product, A, B, "float8_e4m3fn", "f32"), C)
assert np.array_equal(_ulpgate.door_multiply(f32_product, A, B, "float8_e4m3fn", "f32", tensors="torch"), C)
assert np.array_equal(
    _ulpgate.door_multiply(lambda a, b: f32_product(a, b).astype(ml_dtypes.bfloat16), A, B, "bf16", "bf16"), C)
assert seen == [np.dtype(ml_dtypes.float8_e4m3fn), torch.float8_e4m3fn, np.dtype(ml_dtypes.bfloat16)], seen
try:
    _ulpgate.door_multiply(lambda a, b: f32_product(a, b).astype(ml_dtypes.bfloat16), A, B, "float8_e4m3fn", "f32")
    raise SystemExit("a bfloat16 result where float32 was due was read")
except ulpgate.DotDoorError as e:
    assert "returned bfloat16 [2, 4] where float32 [2, 4] was due" in str(e), e


def fp8_chain(a, b):
    """FP8 operands, products exact in float32, added left to right in float32."""
    a, b = a.astype(np.float32), b.astype(np.float32)
    return np.cumsum(a[:, None, :] * b[None, :, :], axis=2, dtype=np.float32)[..., -1]


r = assert_tree(fp8_chain, "sequential", k=8, dtype="float8_e4m3fn", m=8, n=16)
assert r.record["operand_format"] == "float8_e4m3fn" and r.record["output_format"] == "f32", r
assert not r.fingerprint["products_can_round"], r  # a product of two E4M3 values fits binary32


def bf16_linear(x, w, b):
    """bf16 operands widened, a float32 chain per output, rounded once to bf16."""
    assert x.dtype == ml_dtypes.bfloat16, x.dtype
    x, w, b = (v.astype(np.float32) for v in (x, w, b))
    out = np.zeros((x.shape[0], w.shape[0]), np.float32)
    for t in range(x.shape[1]):
        out = (out + (x[:, None, t] * w[None, :, t]).astype(np.float32)).astype(np.float32)
    return (out + b).astype(ml_dtypes.bfloat16)


rep = ulpgate.check(bf16_linear, op="linear_fwd", shape=(4, 24, 3), dtype="bf16", suite="cancellation")
assert rep.dtype == "bf16" and "sequential_unfused" in rep.matching, rep
print("matmul doors and reductions on ml_dtypes and torch float8: ok")
