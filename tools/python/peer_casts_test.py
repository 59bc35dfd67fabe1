#!/usr/bin/python3
"""The cast peers: ml_dtypes, PyTorch, torchao and ONNX Runtime casting float32 and float64
to the 8-, 6- and 4-bit formats (and torchao's MX block scales), each output judged bit for
bit by the independent oracle exact_casts.py, which names the policy (ulpgate's
CastPolicy::Name()) or scale rule it follows. The policy found for every cast is asserted
(FINDINGS below): a peer whose behaviour changes fails here.

    tools/python/peer_casts_test.py --venv build/peers-venv --peer ml_dtypes|torch|torchao|onnxruntime
    tools/python/peer_casts_test.py --venv build/peers-venv --peer table   # every finding, markdown

Run with any python3: it runs itself again with the virtual environment's (set up by
ci/setup_peers.sh). Exit status 77 (a ctest skip) when that environment or the peer is
absent, with the reason.

Inputs, per target format, float32 (about 40,000): random bit patterns, normal samples scaled
over the format's range, every midpoint between adjacent codes (and between the largest and
the value past it, the saturation threshold) with its float32 neighbours one ULP each side,
the largest finite value, the smallest subnormal and half of it, signed zeros, NaN and the
infinities; float64: the same midpoints with their float64 neighbours (a route through
float32 rounds those to the midpoint: a double rounding), and the float32 inputs widened.
"""

import argparse
import os
import sys
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77
TARGETS = ('float8_e4m3fn', 'float8_e4m3fnuz', 'float8_e5m2', 'float8_e5m2fnuz',
           'float6_e2m3fn', 'float6_e3m2fn', 'float4_e2m1fn', 'float8_e8m0fnu')

# What each peer does, found by this test (exact_casts.py) and asserted by it:
# (peer, source, target) -> the set of policies that give every output bit for bit, or
# ('nearest', policy, what the inputs it differs on have in common).
FINDINGS = {
    ('ml_dtypes', 'f32', 'float8_e4m3fn'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f64', 'float8_e4m3fn'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f32', 'float8_e4m3fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f64', 'float8_e4m3fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f32', 'float8_e5m2'): frozenset({'nearest_even.infinity.flush_input', 'nearest_even.infinity'}),
    ('ml_dtypes', 'f64', 'float8_e5m2'): frozenset({'nearest_even.infinity.flush_input', 'nearest_even.infinity'}),
    ('ml_dtypes', 'f32', 'float8_e5m2fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f64', 'float8_e5m2fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('ml_dtypes', 'f32', 'float6_e2m3fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f64', 'float6_e2m3fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f32', 'float6_e3m2fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f64', 'float6_e3m2fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f32', 'float4_e2m1fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f64', 'float4_e2m1fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN with the sign bit'})),
    ('ml_dtypes', 'f32', 'float8_e8m0fnu'): frozenset({'nearest_away.nan.flush_output', 'nearest_even.nan', 'nearest_away.nan', 'nearest_even.nan.flush_output'}),
    ('ml_dtypes', 'f64', 'float8_e8m0fnu'): frozenset({'nearest_away.nan.flush_output', 'nearest_even.nan.flush_input', 'nearest_even.nan.flush_output', 'nearest_away.nan', 'nearest_away.nan.flush_input', 'nearest_even.nan'}),
    ('onnxruntime', 'f32', 'float8_e4m3fn saturate=1'): frozenset({'nearest_even.saturate.flush_input', 'nearest_even.saturate'}),
    ('onnxruntime', 'f64', 'float8_e4m3fn saturate=1'): frozenset({'nearest_even.saturate.via_f32', 'nearest_even.saturate.flush_input.via_f32'}),
    ('onnxruntime', 'f32', 'float8_e4m3fn saturate=0'): ('nearest', 'nearest_even.nan', frozenset({'finite', 'negative finite'})),
    ('onnxruntime', 'f64', 'float8_e4m3fn saturate=0'): ('nearest', 'nearest_even.nan.via_f32', frozenset({'finite', 'negative finite'})),
    ('onnxruntime', 'f32', 'float8_e4m3fnuz saturate=1'): frozenset({'nearest_even.saturate.flush_input', 'nearest_even.saturate'}),
    ('onnxruntime', 'f64', 'float8_e4m3fnuz saturate=1'): frozenset({'nearest_even.saturate.via_f32', 'nearest_even.saturate.flush_input.via_f32'}),
    ('onnxruntime', 'f32', 'float8_e4m3fnuz saturate=0'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('onnxruntime', 'f64', 'float8_e4m3fnuz saturate=0'): frozenset({'nearest_even.nan.flush_input.via_f32', 'nearest_even.nan.via_f32'}),
    ('onnxruntime', 'f32', 'float8_e5m2 saturate=1'): frozenset({'nearest_even.saturate.flush_input', 'nearest_even.saturate'}),
    ('onnxruntime', 'f64', 'float8_e5m2 saturate=1'): frozenset({'nearest_even.saturate.via_f32', 'nearest_even.saturate.flush_input.via_f32'}),
    ('onnxruntime', 'f32', 'float8_e5m2 saturate=0'): ('nearest', 'nearest_even.infinity', frozenset({'finite', 'negative finite'})),
    ('onnxruntime', 'f64', 'float8_e5m2 saturate=0'): ('nearest', 'nearest_even.infinity.via_f32', frozenset({'finite', 'negative finite'})),
    ('onnxruntime', 'f32', 'float8_e5m2fnuz saturate=1'): frozenset({'nearest_even.saturate.flush_input', 'nearest_even.saturate'}),
    ('onnxruntime', 'f64', 'float8_e5m2fnuz saturate=1'): frozenset({'nearest_even.saturate.via_f32', 'nearest_even.saturate.flush_input.via_f32'}),
    ('onnxruntime', 'f32', 'float8_e5m2fnuz saturate=0'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('onnxruntime', 'f64', 'float8_e5m2fnuz saturate=0'): frozenset({'nearest_even.nan.flush_input.via_f32', 'nearest_even.nan.via_f32'}),
    ('onnxruntime', 'f32', 'float4_e2m1fn saturate=1'): ('none', "no cast: NTED : Could not find an implementation for Cast(25) node with name ''"),
    ('onnxruntime', 'f64', 'float4_e2m1fn saturate=1'): ('none', "no cast: NTED : Could not find an implementation for Cast(25) node with name ''"),
    ('onnxruntime', 'f32', 'float4_e2m1fn saturate=0'): ('none', "no cast: NTED : Could not find an implementation for Cast(25) node with name ''"),
    ('onnxruntime', 'f64', 'float4_e2m1fn saturate=0'): ('none', "no cast: NTED : Could not find an implementation for Cast(25) node with name ''"),
    ('onnxruntime', 'f32', 'float8_e8m0fnu saturate=1'): ('nearest', 'up.saturate', frozenset({'negative zero', 'negative infinity', 'zero', 'negative finite'})),
    ('onnxruntime', 'f64', 'float8_e8m0fnu saturate=1'): ('nearest', 'up.saturate', frozenset({'negative zero', 'zero', 'negative infinity', 'negative finite'})),
    ('onnxruntime', 'f32', 'float8_e8m0fnu saturate=0'): ('nearest', 'up.nan.flush_input', frozenset({'finite'})),
    ('onnxruntime', 'f64', 'float8_e8m0fnu saturate=0'): ('nearest', 'up.nan', frozenset({'finite'})),
    ('torch', 'f32', 'float8_e4m3fn'): frozenset({'nearest_even.saturate', 'nearest_even.saturate.flush_input'}),
    ('torch', 'f64', 'float8_e4m3fn'): frozenset({'nearest_even.saturate.flush_input.via_f32', 'nearest_even.saturate.via_f32'}),
    ('torch', 'f32', 'float8_e4m3fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('torch', 'f64', 'float8_e4m3fnuz'): frozenset({'nearest_even.nan.flush_input.via_f32', 'nearest_even.nan.via_f32'}),
    ('torch', 'f32', 'float8_e5m2'): frozenset({'nearest_even.infinity.flush_input', 'nearest_even.infinity'}),
    ('torch', 'f64', 'float8_e5m2'): frozenset({'nearest_even.infinity.via_f32', 'nearest_even.infinity.flush_input.via_f32'}),
    ('torch', 'f32', 'float8_e5m2fnuz'): frozenset({'nearest_even.nan.flush_input', 'nearest_even.nan'}),
    ('torch', 'f64', 'float8_e5m2fnuz'): frozenset({'nearest_even.nan.flush_input.via_f32', 'nearest_even.nan.via_f32'}),
    ('torch', 'f32', 'float6_e2m3fn'): ('none', 'torch has no float6_e2m3fn'),
    ('torch', 'f64', 'float6_e2m3fn'): ('none', 'torch has no float6_e2m3fn'),
    ('torch', 'f32', 'float6_e3m2fn'): ('none', 'torch has no float6_e3m2fn'),
    ('torch', 'f64', 'float6_e3m2fn'): ('none', 'torch has no float6_e3m2fn'),
    ('torch', 'f32', 'float4_e2m1fn'): ('none', 'no cast: "copy_kernel" not implemented for \'Float4_e2m1fn_x2\''),
    ('torch', 'f64', 'float4_e2m1fn'): ('none', 'no cast: "copy_" not implemented for \'Float4_e2m1fn_x2\''),
    ('torch', 'f32', 'float8_e8m0fnu'): ('nearest', 'nearest_even.nan', frozenset({'negative zero', 'finite', 'negative finite', 'zero'})),
    ('torch', 'f64', 'float8_e8m0fnu'): ('nearest', 'nearest_even.nan', frozenset({'negative zero', 'finite', 'negative finite', 'zero'})),
    ('torchao', 'f32', 'float6_e2m3fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN', 'NaN with the sign bit'})),
    ('torchao', 'f32', 'float6_e3m2fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN', 'NaN with the sign bit'})),
    ('torchao', 'f32', 'float4_e2m1fn'): ('nearest', 'nearest_even.saturate', frozenset({'NaN', 'NaN with the sign bit'})),
    ('torchao', 'mx', 'float8_e4m3fn', 'FLOOR'): frozenset({'floor'}),
    ('torchao', 'mx', 'float8_e4m3fn', 'CEIL'): frozenset({'ceil'}),
    ('torchao', 'mx', 'float8_e4m3fn', 'EVEN'): frozenset({'even'}),
    ('torchao', 'mx', 'float8_e4m3fn', 'RCEIL'): ('nearest', 'rceil', 71, frozenset({-1})),
    ('torchao', 'mx', 'float8_e5m2', 'FLOOR'): frozenset({'floor'}),
    ('torchao', 'mx', 'float8_e5m2', 'CEIL'): frozenset({'ceil'}),
    ('torchao', 'mx', 'float8_e5m2', 'EVEN'): frozenset({'even'}),
    ('torchao', 'mx', 'float8_e5m2', 'RCEIL'): ('nearest', 'rceil', 71, frozenset({-1})),
    ('torchao', 'mx', 'float6_e2m3fn', 'FLOOR'): frozenset({'floor'}),
    ('torchao', 'mx', 'float6_e2m3fn', 'CEIL'): frozenset({'ceil'}),
    ('torchao', 'mx', 'float6_e2m3fn', 'EVEN'): frozenset({'even'}),
    ('torchao', 'mx', 'float6_e2m3fn', 'RCEIL'): ('nearest', 'rceil', 71, frozenset({-1})),
    ('torchao', 'mx', 'float6_e3m2fn', 'FLOOR'): frozenset({'floor'}),
    ('torchao', 'mx', 'float6_e3m2fn', 'CEIL'): frozenset({'ceil'}),
    ('torchao', 'mx', 'float6_e3m2fn', 'EVEN'): frozenset({'even'}),
    ('torchao', 'mx', 'float6_e3m2fn', 'RCEIL'): ('nearest', 'rceil', 71, frozenset({-1})),
    ('torchao', 'mx', 'float4_e2m1fn', 'FLOOR'): frozenset({'floor'}),
    ('torchao', 'mx', 'float4_e2m1fn', 'CEIL'): frozenset({'ceil'}),
    ('torchao', 'mx', 'float4_e2m1fn', 'EVEN'): frozenset({'even'}),
    ('torchao', 'mx', 'float4_e2m1fn', 'RCEIL'): ('nearest', 'rceil', 71, frozenset({-1})),
}
FOUND = {}


def reexec_in_venv(venv):
    """Runs this script with the venv's python unless it is that python already."""
    python = os.path.join(venv, 'bin', 'python')
    unavailable = os.path.join(venv, 'UNAVAILABLE')
    if os.path.exists(unavailable):
        with open(unavailable) as f:
            print(f'SKIP: the cast peers are unavailable ({venv}): {f.read().strip()}')
        sys.exit(SKIP)
    if not os.path.exists(os.path.join(venv, 'STAMP')) or not os.path.exists(python):
        print(f'SKIP: no cast peers set up at {venv} (bash ci/setup_peers.sh sets them up)')
        sys.exit(SKIP)
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        os.execv(python, [python] + sys.argv)



# ---------------------------------------------------------------------------- inputs

def target_points(target, source):
    """Midpoints of adjacent codes (the one past the largest included), each with its
    neighbours one ULP of `source` each side, and the format's edges, positive and negative."""
    import numpy as np
    import exact_casts as ec
    t = ec.TARGETS[target]
    values = set()
    for c in range(1 << t.bits):
        d = t.decode(c)
        if d[0] == 'num' and not d[1]:
            values.add(Fraction(d[2]) * Fraction(2)**d[3])
    lm, le = t.largest
    largest = Fraction(lm) * Fraction(2)**le
    values.add(largest + Fraction(2)**(t.emax - t.mb))  # past the largest: the threshold
    values = sorted(values)
    dtype = np.float32 if source == 'f32' else np.float64
    pts = []
    for a, b in zip(values, values[1:]):
        m = dtype(float((a + b) / 2))
        pts += [m, np.nextafter(m, dtype(np.inf)), np.nextafter(m, dtype(-np.inf))]
    smallest = values[0] if values[0] > 0 else values[1]
    for v in (largest, smallest, smallest / 2, smallest * 3 / 4):
        pts.append(dtype(float(v)))
    pts = np.array(pts, dtype)
    return np.concatenate([pts, -pts, np.array([0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf],
                                                 dtype)])


def inputs(target, source):
    import numpy as np
    import exact_casts as ec
    rng = np.random.default_rng(20261202)
    t = ec.TARGETS[target]
    random_bits = rng.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(np.uint32)
    x32 = random_bits.view(np.float32)
    # Normal samples over the format's binades (and a few past them).
    scale = np.ldexp(np.float32(1), rng.integers(t.emin - t.mb - 3, t.emax + 3, 16000))
    normals = (rng.standard_normal(16000).astype(np.float32) * scale).astype(np.float32)
    x32 = np.concatenate([x32, normals, target_points(target, 'f32')])
    if source == 'f32':
        return x32
    return np.concatenate([target_points(target, 'f64'), x32.astype(np.float64),
                           rng.standard_normal(4000) * np.ldexp(1.0, rng.integers(
                               t.emin - t.mb - 3, t.emax + 3, 4000))])


def bits_of(x):
    import numpy as np
    return [int(v) for v in x.view(np.uint32 if x.dtype == np.float32 else np.uint64)]


# ---------------------------------------------------------------------------- peers
# Each gives (source, target) -> output codes (one a byte), or a string saying why not.

def ml_dtypes_casts():
    import numpy as np
    import ml_dtypes
    out = {}
    for target in TARGETS:
        for source in ('f32', 'f64'):
            x = inputs(target, source)
            out[source, target] = (x, x.astype(getattr(ml_dtypes, target)).view(np.uint8))
    return out


def torch_casts():
    import torch
    out = {}
    for target in TARGETS:
        name = 'float4_e2m1fn_x2' if target == 'float4_e2m1fn' else target
        if not hasattr(torch, name):
            for source in ('f32', 'f64'):
                out[source, target] = f'torch has no {name}'
            continue
        for source in ('f32', 'f64'):
            x = inputs(target, source)
            try:
                y = torch.from_numpy(x).to(getattr(torch, name)).view(torch.uint8).numpy()
                out[source, target] = (x, y)
            except (RuntimeError, TypeError) as e:
                out[source, target] = f'no cast: {str(e).splitlines()[0][:80]}'
    return out


def torchao_casts():
    """torchao's element casts to FP6 and FP4 (the MX data path's own bit manipulation)."""
    import torch
    from torchao.prototype.mx_formats import kernels
    out = {}
    for target, fn in (('float6_e2m3fn', kernels.f32_to_f6_e2m3_unpacked),
                       ('float6_e3m2fn', kernels.f32_to_f6_e3m2_unpacked),
                       ('float4_e2m1fn', kernels.f32_to_f4_unpacked)):
        x = inputs(target, 'f32')
        out['f32', target] = (x, fn(torch.from_numpy(x)).numpy())
    return out


ORT_TYPES = {'float8_e4m3fn': 'FLOAT8E4M3FN', 'float8_e4m3fnuz': 'FLOAT8E4M3FNUZ',
             'float8_e5m2': 'FLOAT8E5M2', 'float8_e5m2fnuz': 'FLOAT8E5M2FNUZ',
             'float4_e2m1fn': 'FLOAT4E2M1', 'float8_e8m0fnu': 'FLOAT8E8M0'}


def onnxruntime_casts():
    """ONNX Cast to each type with saturate=1 and 0; its output cast back to float (Python
    has no array type for most of them) and encoded again, exactly: a value of the target
    is one code (NaNs one class)."""
    import numpy as np
    import onnxruntime as ort
    from onnx import TensorProto, helper
    import exact_casts as ec
    out = {}
    for target, tname in ORT_TYPES.items():
        # Every value of the target as float32 bits -> its code (a -0 kept apart).
        t = ec.TARGETS[target]
        back, nan = {}, t.nan_code()
        for c in range(1 << t.bits):
            d = t.decode(c)
            if d[0] == 'num':
                v = float(Fraction(d[2]) * Fraction(2)**d[3])
                back[bits_of(np.array([-v if d[1] else v], np.float32))[0]] = c
            elif d[0] == 'inf':
                back[bits_of(np.array([-np.inf if d[1] else np.inf], np.float32))[0]] = c
        for sat in (1, 0):
            for source in ('f32', 'f64'):
                key = (source, f'{target} saturate={sat}')
                if not hasattr(TensorProto, tname):
                    out[key] = f'onnx has no {tname}'
                    continue
                src = TensorProto.FLOAT if source == 'f32' else TensorProto.DOUBLE
                nodes = [helper.make_node('Cast', ['x'], ['y'], to=getattr(TensorProto, tname),
                                          saturate=sat),
                         helper.make_node('Cast', ['y'], ['z'], to=TensorProto.FLOAT)]
                g = helper.make_graph(nodes, 'cast',
                                      [helper.make_tensor_value_info('x', src, [None])],
                                      [helper.make_tensor_value_info('z', TensorProto.FLOAT,
                                                                     [None])])
                m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 25)])
                m.ir_version = 11
                x = inputs(target, source)
                try:
                    s = ort.InferenceSession(m.SerializeToString(),
                                             providers=['CPUExecutionProvider'])
                    z = s.run(None, {'x': x})[0]
                except Exception as e:  # noqa: BLE001 (ORT's errors have no common type)
                    out[key] = f'no cast: {str(e).splitlines()[0][-70:]}'
                    continue
                codes = np.array([back.get(b, nan) for b in bits_of(z)], np.uint8)
                out[key] = (x, codes)
    return out


# ---------------------------------------------------------------------------- MX scales

def mx_blocks(elem):
    """2048 blocks of 32 float32: normal samples scaled over float32's range, blocks whose
    amax is a power of two, just above one, just above MAX 2^k (RCEIL's edge), at the EVEN
    rule's rounding edge, all zeros, and a NaN."""
    import numpy as np
    import exact_casts as ec
    rng = np.random.default_rng(7)
    t = ec.TARGETS[elem]
    lm, le = t.largest
    largest = float(Fraction(lm) * Fraction(2)**le)
    n = 2048
    blocks = (rng.standard_normal((n, 32)) *
              np.ldexp(1.0, rng.integers(-140, 120, (n, 1)))).astype(np.float32)
    special = []
    for k in range(-120, 100, 3):
        special.append(np.float32(np.ldexp(1.0, k)))
        special.append(np.nextafter(np.float32(np.ldexp(1.0, k)), np.float32(np.inf)))
        m = np.float32(largest * np.ldexp(1.0, k))
        special.append(m)
        special.append(np.nextafter(m, np.float32(np.inf)))
        special.append(np.float32(np.ldexp(2.0 - 2.0**-(t.mb + 1), k)))  # EVEN's tie
        special.append(np.nextafter(special[-1], np.float32(0)))
    for i, a in enumerate(special):
        row = blocks[i] / np.float32(4 * max(1.0, float(np.max(np.abs(blocks[i]))) / float(a)))
        row[i % 32] = -a if i % 2 else a
        blocks[i] = row
    blocks[len(special)] = 0
    blocks[len(special) + 1, 5] = np.nan
    return blocks


def torchao_scales():
    import torch
    from torchao.prototype.mx_formats.config import ScaleCalculationMode
    from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
    from torchao.prototype.mx_formats.mx_tensor import to_mx
    elems = {'float8_e4m3fn': torch.float8_e4m3fn, 'float8_e5m2': torch.float8_e5m2,
             'float6_e2m3fn': DTYPE_FP6_E2M3, 'float6_e3m2fn': DTYPE_FP6_E3M2,
             'float4_e2m1fn': torch.float4_e2m1fn_x2}
    out = {}
    for elem, dtype in elems.items():
        blocks = mx_blocks(elem)
        for mode in ('FLOOR', 'CEIL', 'EVEN', 'RCEIL'):
            scale, _ = to_mx(torch.from_numpy(blocks.reshape(-1).copy()), dtype, 32,
                             getattr(ScaleCalculationMode, mode))
            out[elem, mode] = (blocks, scale.view(torch.uint8).numpy().reshape(-1))
    return out


# ---------------------------------------------------------------------------- judging

def input_kind(source, bits):
    """What an input is, for saying which inputs a peer differs on."""
    import exact_casts as ec
    d = ec.decode_source(source, bits)
    if d[0] == 'nan':
        return 'NaN with the sign bit' if d[1] else 'NaN'
    sign = 'negative ' if d[1] else ''
    if d[0] == 'inf':
        return sign + 'infinity'
    if d[2] == 0:
        return sign + 'zero'
    return sign + 'finite'


def differing_kinds(source, target, ins, outs, policy_name):
    import exact_casts as ec
    p = ec.Policy.parse(policy_name)
    return frozenset(input_kind(source, b) for b, y in zip(ins, outs)
                     if not ec.same_code(target, ec.cast(source, target,
                                                         ec.decode_source(source, b), p), int(y)))


def judge_casts(peer, results):
    """(rows, problems): one row per cast, what it follows."""
    import exact_casts as ec
    rows, problems = [], []
    for (source, what), r in results.items():
        key = (peer, source, what)
        target = what.split(' ')[0]
        if isinstance(r, str):
            found = ('none', r)
            text = f'- ({r})'
        else:
            x, y = r
            ins = bits_of(x)
            matched, lines = ec.match(source, target, ins, [int(v) for v in y])
            if matched:
                found = frozenset(matched)
                first = matched[0]
                text = f'`{first}`' + (f' (or {", ".join(matched[1:])}: the inputs cannot '
                                       'tell them apart)' if len(matched) > 1 else '')
            else:
                nearest = lines[0].split('nearest ')[1].split(' ')[0]
                kinds = differing_kinds(source, target, ins, y, nearest)
                found = ('nearest', nearest, kinds)
                lines.insert(1, f'  the inputs it differs on: {", ".join(sorted(kinds))}')
                text = lines[0].split(': ', 1)[1] + '<br>' + '<br>'.join(
                    ln.strip() for ln in lines[1:3])
            print('\n'.join(lines) if not isinstance(r, str) else f'{what}: {r}')
        rows.append((peer, f'{source} -> {what}', text))
        FOUND[key] = found
        want = FINDINGS.get(key)
        if want is None:
            problems.append(f'{key}: no finding recorded; found {sorted(found) if isinstance(found, frozenset) else found}')
        elif want != found:
            problems.append(f'{key}: expected {want}, found {found}')
    return rows, problems


def judge_scales(results):
    import numpy as np
    import exact_casts as ec
    rows, problems = [], []
    for (elem, mode), (blocks, scales) in results.items():
        codes = [bits_of(row) for row in blocks]
        matched, counts, lines = ec.mx_match(elem, codes, [int(s) for s in scales])
        print(f'{mode}: ' + '\n'.join(lines))
        if matched:
            found = frozenset(matched)
        else:
            rule = min(counts)[1]
            deltas = frozenset(int(s) - ec.mx_scale(ec.block_amax(c), elem, rule)
                               for c, s in zip(codes, scales)) - {0}
            found = ('nearest', rule, min(counts)[0], deltas)
        text = (f'`{", ".join(matched)}`' if matched else
                f'nearest `{min(counts)[1]}`, {min(counts)[0]} of {len(blocks)} blocks differ')
        rows.append(('torchao', f'to_mx scale, {mode}, {elem} blocks of 32', text))
        key = ('torchao', 'mx', elem, mode)
        FOUND[key] = found
        want = FINDINGS.get(key)
        if want is None:
            problems.append(f'{key}: no finding recorded; found {found}')
        elif want != found:
            problems.append(f'{key}: expected {want}, found {found}')
    return rows, problems


def versions():
    import importlib.metadata as md
    return ', '.join(f'{p} {md.version(p)}' for p in
                     ('numpy', 'ml_dtypes', 'torch', 'torchao', 'onnx', 'onnxruntime'))


def table(rows_dir):
    """The findings the peer tests left, as one markdown table."""
    import json
    rows = []
    for p in ('ml_dtypes', 'torch', 'torchao', 'onnxruntime'):
        path = os.path.join(rows_dir or '', f'{p}.rows')
        if not rows_dir or not os.path.exists(path):
            print(f'SKIP: no findings of {p} at {path} (its test, peer_casts_{p}, leaves them)')
            return SKIP
        with open(path) as f:
            rows += json.load(f)
    print(f'{versions()}\n')
    print('| peer | cast | follows bit for bit |')
    print('| --- | --- | --- |')
    for row in rows:
        print('| ' + ' | '.join(row) + ' |')
    print(f'{len(rows)} findings')
    return 0


def run(peer, discover, rows_dir=None):
    if peer == 'table':
        return table(rows_dir)
    start = time.time()
    rows, problems = [], []
    for p in [peer]:
        try:
            __import__(p)
        except ImportError as e:
            print(f'SKIP: {p} does not import: {e}')
            return SKIP
        results = {'ml_dtypes': ml_dtypes_casts, 'torch': torch_casts,
                   'torchao': torchao_casts, 'onnxruntime': onnxruntime_casts}[p]()
        r, pr = judge_casts(p, results)
        rows += r
        problems += pr
        if p == 'torchao':
            r, pr = judge_scales(torchao_scales())
            rows += r
            problems += pr
    print(f'{peer}: {len(rows)} casts judged in {time.time() - start:.1f} s')
    if rows_dir:
        import json
        os.makedirs(rows_dir, exist_ok=True)
        with open(os.path.join(rows_dir, f'{peer}.rows'), 'w') as f:
            json.dump(rows, f)
    if discover:
        for k, v in FOUND.items():
            print(f'    {k!r}: {v!r},')
    if discover:
        return 0
    for pr in problems:
        print('FAIL: ' + pr)
    print(f'{len(rows) - len(problems)} passed, {len(problems)} failed')
    return 1 if problems else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--venv', required=True)
    ap.add_argument('--peer', required=True,
                    choices=('ml_dtypes', 'torch', 'torchao', 'onnxruntime', 'table'))
    ap.add_argument('--rows', help='the folder where each peer leaves its table rows '
                    '(PEER.rows) and where --peer table reads them')
    ap.add_argument('--discover', action='store_true',
                    help='print what every cast follows, assert nothing')
    args = ap.parse_args()
    if args.rows and args.peer != 'table' and 'PEER_CASTS_REEXEC' not in os.environ:
        # A skipped or failed run leaves no rows of an earlier one for the table.
        try:
            os.remove(os.path.join(args.rows, f'{args.peer}.rows'))
        except FileNotFoundError:
            pass
    os.environ['PEER_CASTS_REEXEC'] = '1'
    reexec_in_venv(args.venv)
    return run(args.peer, args.discover, args.rows)


if __name__ == '__main__':
    sys.exit(main())
