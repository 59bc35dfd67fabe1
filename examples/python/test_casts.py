"""The package's casts and block quantizers: ulpgate.check with a cast op, ulpgate.sweep of a cast
kernel, ulpgate.check_blockquant and the assertions of ulpgate.testing, with uint8 codes and
numpy alone; with ml_dtypes arrays and PyTorch float8 tensors in the peers' venv
(ULPGATE_PEERS_PYTHON, ci/setup_peers.sh) where it is there and runs this module's Python
version (skipped, with the reason, where not). Expected codes are worked by hand from the OCP
FP8/MX definitions, or made by a bit-level kernel written here."""

import os
import subprocess
import sys

import numpy as np
import pytest

import ulpgate
from ulpgate.testing import assert_follows, assert_follows_block_rule

# f32 inputs of a cast to E4M3FN (3 mantissa bits: spacing 1/8 in [1, 2)) and their codes
# to nearest even, saturating: 1.0625 is the tie of 1 (0x38, even) and 1.125 (0x39);
# 1.1875 the tie of 1.125 and 1.25 (0x3a, even); 500 > 448 saturates to 0x7e.
X = np.array([1.0, 1.0625, 1.1875, 1.1, -2.0, 0.0, 500.0, 3.0], np.float32)
EVEN_SATURATE = np.array([0x38, 0x38, 0x3a, 0x39, 0xc0, 0x00, 0x7e, 0x44], np.uint8)
# Ties away from zero: 1.0625 -> 1.125; 1.1875 -> 1.25 (as to even).
AWAY_SATURATE = np.array([0x38, 0x39, 0x3a, 0x39, 0xc0, 0x00, 0x7e, 0x44], np.uint8)


def test_cast_check_names_the_policies_of_uint8_codes():
    r = ulpgate.check(EVEN_SATURATE, X, op="cast_f32", dtype="float8_e4m3fn")
    assert r.n == 8 and r.source == "f32" and r.dtype == "float8_e4m3fn"
    assert r.matching[0] == "nearest_even.saturate"
    assert not any(p.startswith(("nearest_away", "toward_zero", "up", "down")) for p in r.matching)
    assert not any(p.startswith("nearest_even.nan") for p in r.matching)  # 500 would be NaN
    assert r.mismatches("nearest_away.saturate") == 1
    # Every in-range output to nearest: at most half an ULP, at the ties exactly half.
    assert r.max_ulp == 0.5 and r.in_range == 7 and r.correctly_rounded == 7
    text = repr(r)
    assert text.startswith("ulpgate check of cast_f32: f32 -> float8_e4m3fn, 8 outputs;")
    assert "follows bit for bit: nearest_even.saturate" in text


def test_cast_check_of_ties_away_codes_names_nearest_away():
    r = ulpgate.check(AWAY_SATURATE, {"x": X}, op="cast_f32", dtype="float8_e4m3fn")
    assert r.matching[0] == "nearest_away.saturate"
    assert "nearest_even.saturate" not in r.matching
    assert r.mismatches("nearest_even.saturate") == 1
    claimed = ulpgate.check(AWAY_SATURATE, X, op="cast_f32", dtype="float8_e4m3fn",
                            policy="nearest_even.saturate")
    assert claimed.claimed_fit["mismatches"] == 1 and claimed.claimed_fit["first"][0]["index"] == 1
    assert "LEAVES IT (1 of 8 differ)" in repr(claimed)
    assert "0x3f880000 = 0x1.1p+0 -> 0x39 (1.125), nearest_even.saturate gives 0x38 (1)" in repr(claimed)


def test_cast_check_of_codes_no_policy_gives_the_nearest_and_ulp_error():
    wrong = EVEN_SATURATE.copy()
    wrong[3] = 0x3a  # 1.25 for f32(1.1): (1.25 - 1.1) / (1/8) ULPs off
    r = ulpgate.check(wrong, X, op="cast_f32", dtype="float8_e4m3fn")
    assert r.matching == []
    assert r.nearest_policy == ("nearest_even.saturate", 1)
    assert r.max_ulp_index == 3
    assert abs(r.max_ulp - (1.25 - float(np.float32(1.1))) * 8) < 1e-12
    assert "follows no policy; nearest nearest_even.saturate (1 of 8 differ), first:" in repr(r)


def test_cast_check_takes_16_bit_sources_and_refuses_what_is_not_one():
    # f16 inputs 1 + 2^-10 (0x3c01) and 1 + 2^-3 (0x3c80) to E5M2 (2 mantissa bits):
    # 1.0009765625 -> 1 (0x3c); 1.125 is the tie of 1 and 1.25: even -> 0x3c.
    h = np.array([1 + 2.0 ** -10, 1.125, 3.5], np.float16)
    codes = np.array([0x3c, 0x3c, 0x43], np.uint8)  # 3.5 = 1.75 * 2: 0 10000 11
    r = ulpgate.check(codes, h, op="cast_f16", dtype="float8_e5m2")
    assert "nearest_even.saturate" in r.matching and r.max_ulp == 0.5
    # float32 values of bf16 are taken; one that is not a bf16 value is refused.
    r = ulpgate.check(np.array([0x38], np.uint8), np.array([1.0], np.float32), op="cast_bf16",
                      dtype="float8_e4m3fn")
    assert r.n == 1 and "nearest_even.saturate" in r.matching
    with pytest.raises(ValueError, match="bf16"):
        ulpgate.check(np.array([0x38], np.uint8), np.array([1.1], np.float32), op="cast_bf16",
                      dtype="float8_e4m3fn")
    with pytest.raises(ValueError, match="casts to"):
        ulpgate.check(EVEN_SATURATE, X, op="cast_f32", dtype="f16")
    with pytest.raises(ValueError, match="is not a 4-bit float4_e2m1fn code"):
        ulpgate.check(EVEN_SATURATE, X, op="cast_f32", dtype="float4_e2m1fn")


def test_assert_follows_passes_the_policy_and_fails_another():
    assert_follows(EVEN_SATURATE, X, op="cast_f32", dtype="float8_e4m3fn", policy="nearest_even.saturate")
    with pytest.raises(AssertionError) as e:
        assert_follows(EVEN_SATURATE, X, op="cast_f32", dtype="float8_e4m3fn", policy="nearest_away.saturate")
    message = str(e.value)
    assert "do not follow the policy nearest_away.saturate" in message
    assert "1 of 8 outputs differ from it" in message
    assert "0x3f880000 = 0x1.1p+0 -> 0x38 (1), nearest_away.saturate gives 0x39 (1.125)" in message
    assert "Follows bit for bit: nearest_even.saturate" in message
    assert all(len(line) <= ulpgate.WIDTH for line in message.splitlines())
    with pytest.raises(ValueError, match="no policy of a cast"):
        assert_follows(EVEN_SATURATE, X, op="cast_f32", dtype="float8_e4m3fn", policy="nearest")


def _f16_to_e5m2(h, away=False):
    """E5M2 is the high byte of f16: round the low byte off, to nearest even (or away), a
    carry into the exponent making the next binade or infinity; NaN stays a quiet NaN."""
    bits = h.view(np.uint16).astype(np.uint32)
    if away:
        rounded = (bits + 0x80) >> 8
    else:
        rounded = (bits + 0x7f + ((bits >> 8) & 1)) >> 8
    nan = (bits & 0x7fff) > 0x7c00
    return np.where(nan, ((bits >> 8) & 0x80) | 0x7e, rounded).astype(np.uint8)


def test_sweep_of_a_cast_kernel_covers_every_f16_pattern():
    r = ulpgate.sweep(_f16_to_e5m2, op="cast_f16", dtype="float8_e5m2", framework="numpy")
    assert r.n == 1 << 16
    assert "nearest_even.infinity" in r.matching
    assert not any(p.startswith(("nearest_away", "toward_zero")) or ".saturate" in p for p in r.matching)
    assert r.max_ulp == 0.5
    claimed = ulpgate.sweep(lambda h: _f16_to_e5m2(h, away=True), op="cast_f16", dtype="float8_e5m2",
                            framework="numpy", claim="nearest_even.infinity")
    assert "nearest_away.infinity" in claimed.matching
    assert "nearest_even.infinity" not in claimed.matching
    assert claimed.claimed_fit["mismatches"] > 0


def test_sweep_of_a_cast_from_f32_samples_the_boundary_and_random_patterns():
    # Through f16 (exact for E5M2's range, but an f32 tie of two E5M2 values rounds twice):
    # the report names what that does, never nearest_even.infinity bit for bit.
    with np.errstate(over="ignore"):  # beyond f16's range: infinity, as E5M2's overflow
        r = ulpgate.sweep(lambda x: _f16_to_e5m2(x.astype(np.float16)), op="cast_f32", dtype="float8_e5m2",
                          framework="numpy", samples=1 << 14)
    assert r.n > 1 << 14
    assert "nearest_even.infinity" not in r.matching


# One MX block of 32 (E4M3 elements): 31 ones and a 3, amax 3, E4M3's emax 8.
#   ocp_floor: X = floor(log2 3) - 8 = -7 (byte 120); 1 * 2^7 = 0x70, 3 * 2^7 = 384 = 0x7c
#   ceil:      X = ceil(log2 3) - 8 = -6 (byte 121);  1 * 2^6 = 0x68, 3 * 2^6 = 192 = 0x74
BLOCK = np.array([[1.0] * 31 + [3.0]], np.float32)


def test_check_blockquant_names_the_scale_rules():
    floor = ulpgate.check_blockquant(BLOCK, np.array([120], np.uint8), np.array([0x70] * 31 + [0x7c], np.uint8),
                                     spec="mxfp8_e4m3")
    assert "ocp_floor" in floor.scale_rules and "ceil" not in floor.scale_rules
    assert "nearest_even.saturate" in floor.scale_rules["ocp_floor"]
    assert floor.follows("ocp_floor/nearest_even.saturate")
    assert "scale rules: ocp_floor" in repr(floor)
    ceil = ulpgate.check_blockquant(BLOCK, np.array([121], np.uint8), np.array([0x68] * 31 + [0x74], np.uint8),
                                    spec="mxfp8_e4m3")
    assert list(ceil.scale_rules) == ["ceil"]
    assert_follows_block_rule(BLOCK, np.array([121], np.uint8), np.array([0x68] * 31 + [0x74], np.uint8),
                              spec="mxfp8_e4m3", rule="ceil")
    with pytest.raises(AssertionError, match="do not follow ocp_floor"):
        assert_follows_block_rule(BLOCK, np.array([121], np.uint8), np.array([0x68] * 31 + [0x74], np.uint8),
                                  spec="mxfp8_e4m3", rule="ocp_floor")
    broken = ulpgate.check_blockquant(BLOCK, np.array([120], np.uint8), np.array([0x70] * 31 + [0x7d], np.uint8),
                                      spec="mxfp8_e4m3")
    assert broken.exact == [] and broken.first_broken_block == 0
    assert "follows no model bit for bit" in repr(broken)
    with pytest.raises(ValueError, match="scales for"):
        ulpgate.check_blockquant(BLOCK, np.array([120, 120], np.uint8), np.array([0x70] * 32, np.uint8),
                                 spec="mxfp8_e4m3")


def _peers_python():
    """The peers' venv Python, where it is there and runs this Python's version (the module
    is built for it); else why not."""
    path = os.environ.get("ULPGATE_PEERS_PYTHON", "")
    if not path or not os.path.exists(path):
        return None, f"no peers' venv ({path or 'ULPGATE_PEERS_PYTHON unset'}): ci/setup_peers.sh makes it"
    version = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        return None, f"the peers' venv runs Python {version}, the module is built for {sys.version_info[:2]}"
    probe = subprocess.run([path, "-c", "import ml_dtypes, torch; torch.float8_e4m3fn"], capture_output=True)
    if probe.returncode != 0:
        return None, "the peers' venv lacks ml_dtypes or a PyTorch with float8"
    return path, ""


def test_ml_dtypes_arrays_and_torch_float8_tensors_in_the_peers_venv():
    python, why = _peers_python()
    if python is None:
        pytest.skip(why)
    script = os.path.join(os.path.dirname(__file__), "casts_peers.py")
    done = subprocess.run([python, script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "casts_peers: ok" in done.stdout


def test_check_blockquant_of_nvfp4_at_a_tensor_scale():
    # 16 sixes at tensor scale 1: s = E4M3(6 / 6 / 1) = 1 (0x38), r = 1, e = FP4(6) = 0x7
    # (0 11 1: 1.5 * 2^2).
    six = np.full((1, 16), 6.0, np.float32)
    r = ulpgate.check_blockquant(six, np.array([0x38], np.uint8), np.full(16, 7, np.uint8), spec="nvfp4",
                                 tensor_scale=1.0)
    assert r.exact == ["nvfp4_quantize/nearest_even.saturate"]
    r = ulpgate.check_blockquant(six, np.array([0x39], np.uint8), np.full(16, 7, np.uint8), spec="nvfp4",
                                 tensor_scale=1.0)
    assert r.exact == [] and r.first_broken_block == 0
    with pytest.raises(ValueError, match="tensor_scale"):
        ulpgate.check_blockquant(six, np.array([0x38], np.uint8), np.full(16, 7, np.uint8), spec="nvfp4")
