"""ulpgate's casts and block quantizers on ml_dtypes arrays and PyTorch float8 tensors, run by
test_casts.py in the peers' venv (it has no pytest): exits non-zero at the first failed check.
The two peers' own casts are the outputs; where both round to nearest even they must agree code
for code, and ulpgate must name the same policies whichever array holds the codes."""

import ml_dtypes
import numpy as np
import torch

import ulpgate
from ulpgate.testing import assert_follows, assert_follows_block_rule

rng = np.random.default_rng(7)
# Inside E4M3FN's range (|x| <= 448), where the overflow policies agree.
x = (rng.standard_normal(4096) * 60).clip(-440, 440).astype(np.float32)
x[:4] = [1.0625, -1.1875, 0.0, 2.0 ** -10]  # two ties and a subnormal of E4M3FN

t = torch.from_numpy(x).to(torch.float8_e4m3fn)
m = x.astype(ml_dtypes.float8_e4m3fn)
assert np.array_equal(t.view(torch.uint8).numpy(), m.view(np.uint8)), "torch and ml_dtypes disagree"

by_torch = ulpgate.check(t, torch.from_numpy(x), op="cast_f32")  # dtype from the tensor
by_ml = ulpgate.check(m, x, op="cast_f32")
by_codes = ulpgate.check(m.view(np.uint8), x, op="cast_f32", dtype="float8_e4m3fn")
assert by_torch.dtype == "float8_e4m3fn" and by_ml.dtype == "float8_e4m3fn"
assert by_torch.matching == by_ml.matching == by_codes.matching, (by_torch, by_ml)
assert "nearest_even.saturate" in by_torch.matching and by_torch.max_ulp == 0.5, by_torch
assert_follows(t, x, op="cast_f32", dtype="float8_e4m3fn", policy="nearest_even.nan")

# A code off by one: no policy, the nearest named with the input.
bad = m.view(np.uint8).copy()
bad[0] ^= 1
r = ulpgate.check(bad.view(ml_dtypes.float8_e4m3fn), x, op="cast_f32")
assert r.matching == [] and r.nearest_policy[1] == 1, r
try:
    assert_follows(bad, x, op="cast_f32", dtype="float8_e4m3fn", policy="nearest_even.saturate")
    raise SystemExit("assert_follows passed codes off the policy")
except AssertionError as e:
    assert "0x3f880000" in str(e), e

# bf16 sources as ml_dtypes and torch; torch's every-bf16 sweep to E5M2.
b = x.astype(ml_dtypes.bfloat16)
r = ulpgate.check(b.astype(ml_dtypes.float8_e5m2), b, op="cast_bf16")
assert r.source == "bf16" and r.max_ulp <= 0.5 and r.matching, r
s = ulpgate.sweep(lambda v: v.to(torch.float8_e5m2), op="cast_bf16", dtype="float8_e5m2")
assert s.n == 1 << 16 and s.max_ulp <= 0.5 and s.matching, s
print(s)
for dtype in ("float8_e4m3fnuz", "float8_e5m2fnuz"):
    s = ulpgate.sweep(lambda v, d=dtype: v.to(getattr(torch, d)), op="cast_f16", dtype=dtype)
    assert s.n == 1 << 16 and s.matching, s
    print(f"torch f16 -> {dtype}: follows {', '.join(s.matching)}")
# PyTorch's E8M0 cast is no policy of the catalogue (zero gives 0x00, a negative its
# magnitude's code, where the model gives NaN): the sweep says so and names the nearest.
s = ulpgate.sweep(lambda v: v.to(torch.float8_e8m0fnu), op="cast_f16", dtype="float8_e8m0fnu")
assert s.n == 1 << 16 and s.matching == [] and s.nearest_policy[0].startswith("nearest_even"), s
print(f"torch f16 -> float8_e8m0fnu: {s.policies_text()}")

# Block quantization with E8M0 scales as ml_dtypes and torch: 31 ones and a 3 (ocp_floor:
# byte 120, elements 0x70 and 0x7c; see test_casts.py).
block = np.array([[1.0] * 31 + [3.0]], np.float32)
scales = np.array([120], np.uint8)
codes = np.array([0x70] * 31 + [0x7c], np.uint8)
q = ulpgate.check_blockquant(torch.from_numpy(block), torch.from_numpy(scales).view(torch.float8_e8m0fnu),
                             torch.from_numpy(codes).view(torch.float8_e4m3fn), spec="mxfp8_e4m3")
assert "ocp_floor" in q.scale_rules and "ceil" not in q.scale_rules, q
assert_follows_block_rule(block, scales.view(ml_dtypes.float8_e8m0fnu), codes.view(ml_dtypes.float8_e4m3fn),
                          spec="mxfp8_e4m3", rule="ocp_floor")
print("casts_peers: ok")
