"""ulpgate from Python: measure a kernel's outputs in ULPs against exact values, find the
rounding model it follows bit for bit, and sweep a Python callable (a PyTorch op, a Triton
kernel) over every input of a 16-bit domain.

    import torch, ulpgate
    grad = torch.randn(4096, dtype=torch.bfloat16); t = torch.rand(4096, dtype=torch.bfloat16)
    report = ulpgate.check(torch.ops.aten.tanh_backward(grad, t), {"grad": grad, "t": t},
                           op="tanh_bwd")
    report.max_ulp, report.matching        # 0.5, ['mulsub_opmath', ...]
    ulpgate.sweep(torch.ops.aten.tanh_backward, op="tanh_bwd", dtype="bf16")

Arrays may be numpy arrays or PyTorch tensors of float32, bfloat16 or float16 (CUDA
tensors are copied to the host); the dtype is taken from the outputs unless given.

Formats are data: ulpgate.formats() lists every registered one (f32, bf16, f16, f64, the OCP
8-, 6- and 4-bit formats, E8M0) with its traits, and decode, encode and round take any of them,
reading and making ml_dtypes arrays and PyTorch float8 tensors where those are installed:

    ulpgate.decode(np.array([0x38, 0xc0], np.uint8), "float8_e4m3fn")   # [1., -2.]
    ulpgate.round([1.07, 500.0], "float8_e4m3fn")                     # [1., nan]: no infinity

Casts and block quantizers are checked the same way, through the cast model's catalogue of
policies (codes as uint8 arrays, ml_dtypes arrays or torch float8 tensors):

    r = ulpgate.check(torch_codes, x, op="cast_f32", dtype="float8_e4m3fn")
    r.matching                                 # ['nearest_even.saturate', ...]
    ulpgate.sweep(lambda x: x.to(torch.float8_e5m2), op="cast_bf16", dtype="float8_e5m2")
    ulpgate.check_blockquant(x, scales, codes, spec="mxfp8_e4m3").scale_rules
Reductions are checked on a callable's outputs over ulpgate's own suites, and a matrix
product callable fn(a, b) -> a @ b.T is revealed (its summation tree, accumulator and model)
and checked for batch invariance:

    ulpgate.check(lambda x, w, b: x @ w.T + b, op="linear_fwd", shape=(32, 32, 32)).matching
    ulpgate.reveal(my_matmul, k=64).tree, ulpgate.invariance(my_matmul).verdict
ulpgate.testing holds assertions for test suites. The measurements are the CLI's
(`ulpgate check`, `ulpgate sweep`): the same engine, exact oracles and models.
"""

import json
import math
import sys
import time

from . import _ulpgate

__all__ = ["check", "sweep", "ops", "invariance", "InvarianceReport", "reveal", "RevealReport", "tree",
           "reduction_ops", "reduction_suites", "reduction_inputs", "ReductionReport", "DotDoorError", "exact",
           "hex_value", "format_ulp", "CheckReport", "SweepReport",
           "InputError", "formats", "decode", "encode", "round", "CastReport", "check_blockquant",
           "BlockQuantReport", "CAST_SWEEP_F32_SAMPLES"]

__version__ = _ulpgate.__version__  # the CMake project's version, as `ulpgate --version` says it
InputError = _ulpgate.InputError
# A matrix product callable that raised, or returned the wrong dtype or shape, under reveal or
# invariance (a RuntimeError carrying Python's message): never read as a result.
DotDoorError = _ulpgate.DotDoorError
WIDTH = 120  # the columns every line of a report and an assertion message fits
# ULP errors and bound fractions as the CLI prints them: 4 digits rounded up,
# so 0.5000091 reads "0.5001", never "0.5".
format_ulp = _ulpgate.format_ulp
_DTYPE_NAMES = {"f32": "f32", "float32": "f32", "bf16": "bf16", "bfloat16": "bf16", "f16": "f16",
                "float16": "f16", "half": "f16"}


def ops():
    """The elementwise ops: [{'name', 'operands', 'definition'}]."""
    return _ulpgate.ops()


def formats():
    """Every registered format with its traits, in the registry's order: a list of dicts with
    name, description, bits, precision, exponent_bits, emin, emax, bias, encoding ('ieee', 'fn',
    'fnuz', 'e8m0'), signed, subnormals, infinity, nan, negative_zero, largest_finite,
    smallest_positive, storage_bytes, packing ('one_per_unit' or 'nibble_pairs': two codes a
    byte, low nibble first) and ops (the ops with kernels in it)."""
    return json.loads(_ulpgate.formats_json())


# Array dtypes whose name is not the format's: NumPy's and PyTorch's own floats, ml_dtypes'
# bfloat16. ml_dtypes' and PyTorch's 8-, 6- and 4-bit types carry the format's name.
_ARRAY_FORMAT_NAMES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16"}


def _format(name):
    for f in formats():
        if f["name"] == name:
            return f
    raise ValueError(f"unknown format '{name}' ({', '.join(f['name'] for f in formats())})")


def _array_format(x):
    """The registered format an ml_dtypes array or a torch tensor of a float dtype holds, by its
    dtype's name (torch's float4_e2m1fn_x2: float4_e2m1fn, packed); None for another dtype."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or getattr(dtype, "kind", "V") in "iub":
        return None
    name = str(dtype).replace("torch.", "")
    if name == "float4_e2m1fn_x2":
        return "float4_e2m1fn"
    name = _ARRAY_FORMAT_NAMES.get(name, name)
    return name if any(f["name"] == name for f in formats()) else None


def _require_kernels(op, dtype):
    """ValueError unless op has kernels in dtype (the op table's formats, as formats() says)."""
    runs_in = [f["name"] for f in formats() if op in f["ops"]]
    if dtype not in runs_in:
        raise ValueError(f"dtype '{dtype}': {op} runs in {', '.join(runs_in)}")


def _is_torch(x):
    return hasattr(x, "detach") and hasattr(x, "cpu")


def _codes_of(x, fmt):
    """(codes as a numpy uint64 array, shape) of an array of format fmt, or of integer codes."""
    import numpy as np
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[fmt["storage_bytes"]]
    if _is_torch(x):
        t = x.detach().cpu().contiguous()
        if str(t.dtype) == "torch.float4_e2m1fn_x2":  # two codes a byte, low nibble first
            b = t.view(__import__("torch").uint8).numpy().reshape(-1)
            codes = np.stack([b & 0xF, b >> 4], axis=-1).reshape(-1)
            return codes.astype(np.uint64), (codes.size,)
        if t.is_floating_point():
            signed = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}[fmt["storage_bytes"]]
            a = t.view(getattr(__import__("torch"), signed)).numpy().view(width)
        else:
            a = t.numpy()
        return np.ascontiguousarray(a).reshape(-1).astype(np.uint64), tuple(t.shape)
    a = np.asarray(x)
    if a.dtype.kind in "fV" or _array_format(a) is not None:  # an array of the format itself
        a = np.ascontiguousarray(a).view(width)
    elif a.dtype.kind not in "iu":
        raise ValueError(f"codes: dtype {a.dtype}, not integer codes or an array of {fmt['name']}")
    return np.ascontiguousarray(a).reshape(-1).astype(np.uint64), a.shape


def decode(codes, format=None):
    """The values of codes of a format, exactly, as a float64 numpy array of their shape (NaN
    for its NaN codes). `codes`: integers (numpy, a list, a torch integer tensor), or an array
    of the format itself (an ml_dtypes array, a torch float8 tensor), whose format is taken
    from its dtype when `format` is not given."""
    given = _array_format(codes)
    name = format or given
    if name is None:
        raise ValueError("decode: give the format of integer codes")
    if given is not None and given != name:
        raise ValueError(f"decode: the array holds {given}, not {name}")
    flat, shape = _codes_of(codes, _format(name))
    return _ulpgate.decode(flat, name).reshape(shape)


def _values(x):
    import numpy as np
    if _is_torch(x):
        return x.detach().cpu().double().numpy()
    return np.asarray(x, dtype=np.float64)


def _as(codes, shape, fmt, to):
    """Codes of fmt (uint64) as what `to` names."""
    import numpy as np
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[fmt["storage_bytes"]]
    c = codes.astype(width).reshape(shape)
    if to == "codes":
        return c
    ml_name = {"bf16": "bfloat16", "f16": "float16", "f32": "float32", "f64": "float64"}.get(fmt["name"], fmt["name"])
    if to == "ml_dtypes":
        if fmt["name"] in ("f16", "f32", "f64"):
            return c.view(ml_name)
        import ml_dtypes
        return c.view(getattr(ml_dtypes, ml_name))
    if to == "torch":
        import torch
        if fmt["packing"] == "nibble_pairs":  # float4_e2m1fn_x2: two codes a byte, low first
            flat = c.reshape(-1)
            if flat.size % 2:
                flat = np.append(flat, 0)
            packed = (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8)
            return torch.from_numpy(packed).view(getattr(torch, "float4_e2m1fn_x2"))
        dtype = getattr(torch, ml_name, None)
        if dtype is None:
            raise ValueError(f"this PyTorch has no {ml_name}")
        signed = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[fmt["storage_bytes"]]
        return torch.from_numpy(np.ascontiguousarray(c).view(signed).copy()).view(dtype)
    raise ValueError(f"to: 'float64', 'codes', 'ml_dtypes' or 'torch', not {to!r}")


def encode(values, format, to="codes"):
    """The codes of values of a format (ValueError for a value it lacks), as unsigned integers of
    its storage width (one per element, a 4-bit code a byte), or with to='ml_dtypes' an ml_dtypes
    array, to='torch' a torch tensor of the format (float4: float4_e2m1fn_x2, packed)."""
    fmt = _format(format)
    v = _values(values)
    return _as(_ulpgate.encode(v.reshape(-1), format), v.shape, fmt, to)


def round(x, format, toward_zero=False, to="float64"):  # noqa: A001 (the format-level verb)
    """Each value of x (numpy, a list, a torch tensor, an ml_dtypes array) rounded once to a
    format, to nearest even (or toward zero), with its subnormals and overflow (infinity, else
    NaN, else the largest value for the formats with neither): float64 values, or what `to`
    names ('codes', 'ml_dtypes', 'torch': see encode)."""
    fmt = _format(format)
    v = _values(x)
    r = _ulpgate.round(v.reshape(-1), format, toward_zero)
    if to == "float64":
        return r.reshape(v.shape)
    return _as(_ulpgate.encode(r, format), v.shape, fmt, to)


def _op(name):
    for o in ops():
        if o["name"] == name:
            return o
    raise ValueError(f"unknown op '{name}' ({', '.join(o['name'] for o in ops())})")


def _is_bf16_void(x):
    """A numpy array of 2-byte voids: bfloat16 as ml_dtypes saves it (and `ulpgate suite export`)."""
    dtype = getattr(x, "dtype", None)
    return getattr(dtype, "kind", "") == "V" and getattr(dtype, "itemsize", 0) == 2


def _dtype_of(x):
    """'f32', 'bf16' or 'f16' for an array or tensor; None for another dtype."""
    if _is_bf16_void(x):
        return "bf16"
    name = str(getattr(x, "dtype", "")).replace("torch.", "")
    return _DTYPE_NAMES.get(name)


def _float32_values(x):
    """The values of an array or tensor as a numpy float32 array (exact for the three dtypes)."""
    import numpy as np
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor, on any device
        return x.detach().cpu().float().contiguous().numpy().reshape(-1)
    if _is_bf16_void(x):
        bits = np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32).reshape(-1)
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32)).reshape(-1)


def load(path, framework="numpy"):
    """The arrays of an .npz (or the array of an .npy) that `ulpgate suite export` wrote, by
    name, as what they are: numpy float32/float16 arrays, bf16 as ml_dtypes.bfloat16 where
    ml_dtypes is installed (else the 2-byte voids as saved); with framework='torch', torch
    tensors of float32, float16 and bfloat16."""
    import numpy as np
    data = np.load(path)
    arrays = dict(data) if hasattr(data, "files") else {"inputs": data}
    out = {}
    for name, a in arrays.items():
        if framework == "torch":
            import torch
            if _is_bf16_void(a):
                out[name] = torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
            else:
                out[name] = torch.from_numpy(a.copy())
        elif framework == "numpy":
            if _is_bf16_void(a):
                try:
                    import ml_dtypes
                    a = a.view(ml_dtypes.bfloat16)
                except ImportError:
                    pass
            out[name] = a
        else:
            raise ValueError(f"framework: 'numpy' or 'torch', not {framework!r}")
    return out


def _narrower_hint(values, out):
    """The 16-bit dtype every value (inputs and outputs, NaN aside) is a value of, or None."""
    import numpy as np
    every = np.concatenate([*values, out])
    every = every[~np.isnan(every)]
    if every.size < 16:
        return None
    if np.all((every.view(np.uint32) & 0xFFFF) == 0):
        return "bf16"
    with np.errstate(over="ignore"):
        if np.all(every.astype(np.float16).astype(np.float32) == every):
            return "f16"
    return None


def exact(op, *operands, digits=None):
    """The exact value of op at one input, as a hex float string (exact where the value is
    binary; else to the oracle's precision), or as a decimal of `digits` significant digits."""
    return _ulpgate.exact(op, [float(v) for v in operands], int(digits or 0))


def hex_value(x):
    """A value of f32, bf16 or f16 as C's %a writes it (as the CLI does): no trailing zeros, so
    as many hex digits as the format's significand needs (-0x1.f853e8p-3, not the double's
    -0x1.f853e80000000p-3)."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    significand, exponent = x.hex().split("p")
    if "." in significand:
        significand = significand.rstrip("0").rstrip(".")
    return f"{significand}p{exponent}"


def _decimal_text(text):
    """A decimal of the oracle's ("-4.2656250000000000e+00") without what says nothing:
    "-4.265625", "1.865153113246411e-37", "-0"."""
    significand, e, exponent = text.partition("e")
    if "." in significand:
        significand = significand.rstrip("0").rstrip(".")
    if significand.lstrip("-") == "0":
        return significand
    return significand + (e + exponent if exponent not in ("+00", "+0", "") else "")


def _ulp_text(e):
    """A ULP error or bound fraction for a report line, as the CLI writes it (format_ulp: 4
    digits rounded up, never below its value)."""
    return format_ulp(float(e))


def _wrapped(text, prefix="", indent=0, command=False, width=WIDTH):
    """`prefix` + `text` as lines of at most `width` columns, broken between the words of
    `text`, the lines after the first indented by `indent` spaces; a command's broken lines end
    in ` \\` so that it pastes into a shell whole. A word longer than a line stays whole."""
    room = width - (2 if command else 0)
    lines, line = [], prefix
    fresh = True  # nothing of `text` on the line yet
    for word in text.split(" "):
        if not fresh and len(line) + 1 + len(word) > room:
            lines.append(line + (" \\" if command else ""))
            line, fresh = " " * indent + word, False
        else:
            line, fresh = (line + word if fresh else f"{line} {word}"), False
    lines.append(line)
    return "\n".join(lines)


def _operands(op, inputs):
    names = _op(op)["operands"]
    if isinstance(inputs, dict):
        missing = [n for n in names if n not in inputs]
        extra = [n for n in inputs if n not in names]
        if missing or extra:
            raise ValueError(f"{op} takes operands {', '.join(names)}; "
                             f"missing {missing or 'none'}, unknown {extra or 'none'}")
        return names, [inputs[n] for n in names]
    inputs = list(inputs)
    if len(inputs) != len(names):
        raise ValueError(f"{op} takes {len(names)} operands ({', '.join(names)}), given {len(inputs)}")
    return names, inputs


_FAULT_NAMES = {"crashed": "CRASHED", "timeout": "TIMEOUT", "out_of_bounds": "OUT OF BOUNDS",
                "refused": "REFUSED"}


def _fault_text(fault):
    """A record's fault in words, as the CLI prints it: 'CRASHED (SIGSEGV) at input #12'."""
    text = _FAULT_NAMES.get(fault.get("kind"), str(fault.get("kind", "FAULT")).upper())
    if fault.get("detail"):
        text += f" ({fault['detail']})"
    where = fault.get("input")
    if isinstance(where, dict) and "index" in where:
        text += f" at input #{where['index']}"
    elif "call_first" in fault:
        first, count = fault["call_first"], max(fault.get("call_count", 1), 1)
        text += f" on a call of inputs #{first} to #{first + count - 1}"
    return text


class CheckReport:
    """What `check` measured: ULP errors (max, mean, percentiles, histogram), the bound
    fraction, special and signed-zero mismatches, the models followed bit for bit
    (`matching`) and for every model how many outputs differ and the nearest of them. Its
    repr says what `ulpgate check` says: the bound fraction with its verdict, the models
    followed (else the nearest one and its mismatches), the worst input and its replay."""

    def __init__(self, record, op, dtype, names, operands, outputs=None):
        self.record = record
        self.op, self.dtype = op, dtype
        self._names, self._operands, self._outputs = names, operands, outputs
        self.n = record["n"]
        # A kernel that faulted (crashed, hung, wrote outside its output) measured
        # nothing: every figure is None, never 0, and the report says the fault.
        self.fault = record.get("fault")
        if self.fault:
            self.max_ulp = self.mean_ulp = self.histogram = self.bound_fraction = self.worst = None
            self.special_mismatch = self.signed_zero_mismatch = self.correctly_rounded = None
            self.percentiles, self.matching, self.models = {}, [], {}
            return
        self.max_ulp = record["max_ulp"]
        self.mean_ulp = record["mean_ulp"]
        self.percentiles = {float(k): v for k, v in record.get("percentiles", {}).items()}
        self.histogram = record["histogram"]
        self.special_mismatch = record["special_mismatch"]
        self.signed_zero_mismatch = record["signed_zero_mismatch"]
        self.correctly_rounded = record["correctly_rounded"]
        self.bound_fraction = record.get("bound_fraction")
        self.matching = list(record["conformance"]["matching"])
        self.models = {m["name"]: m for m in record["conformance"]["models"]}
        self.worst = record.get("max_input")

    @property
    def max_bound_fraction(self):
        """The largest error as a fraction of what a backward-stable evaluation of the op's
        definition may err (above 1: beyond that bound); None where the op has no bound."""
        if not self.bound_fraction:
            return None
        return float(self.bound_fraction["max"])  # a number, or "inf"

    @property
    def above_bound(self):
        """How many outputs err beyond the backward-stable bound."""
        return self.bound_fraction["above_one"] if self.bound_fraction else 0

    @property
    def nearest_model(self):
        """(name, mismatches) of the model fewest outputs differ from (a followed one has 0);
        None without models."""
        if not self.models:
            return None
        m = min(self.models.values(), key=lambda m: m["mismatches"])  # the first among equals
        return m["name"], m["mismatches"]

    def mismatches(self, model):
        """How many outputs differ from `model`'s."""
        if model not in self.models:
            raise KeyError(f"unknown model '{model}' ({', '.join(self.models)})")
        return self.models[model]["mismatches"]

    def inputs_at(self, index):
        """The operands of input `index`: [(name, value)], values as floats."""
        return [(n, float(v[index])) for n, v in zip(self._names, self._operands)]

    def input_text(self, index):
        """'grad = -0x1.f853e8p-3, t = 0x1.8p-1': input `index` in the dtype's hex width."""
        return ", ".join(f"{n} = {hex_value(v)}" for n, v in self.inputs_at(index))

    def replay(self, index):
        """The command that explains input `index` step by step (f32 operands)."""
        inputs = " ".join(f"--input {n}={hex_value(v)}" for n, v in self.inputs_at(index))
        return f"ulpgate explain --op {self.op} {inputs}"

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def bound_text(self):
        """The bound fraction with its verdict, as `ulpgate check` says it."""
        b = self.max_bound_fraction
        if b is None:
            return "no bound for this op"
        if self.above_bound:
            return (f"{_ulp_text(b)}: EXCEEDS the backward-stable error bound on {self.above_bound} of "
                    f"{self.n} outputs (up to {_ulp_text(b)} times it)")
        return f"{_ulp_text(b)}: within the backward-stable error bound (the largest error is {_ulp_text(b)} of it)"

    def models_text(self):
        """The models followed bit for bit; if none, the nearest and how many outputs differ."""
        if self.matching:
            return ", ".join(self.matching)
        nearest = self.nearest_model
        if nearest is None:
            return f"no model of {self.op}"
        return f"no model; nearest {nearest[0]} ({nearest[1]} of {self.n} outputs differ)"

    def worst_text(self, index=None):
        """Input `index` (the worst by ULP by default): its operands, the output and the exact
        value, in the dtype's hex width and a decimal of 17 digits."""
        if index is None:
            if not self.worst:
                return None
            index = self.worst["index"]
        text = f"#{index}: {self.input_text(index)}"
        if self._outputs is not None:
            text += f"; output {hex_value(self._outputs[index])}"
        values = [v for _, v in self.inputs_at(index)]
        return f"{text}, exact value {_decimal_text(exact(self.op, *values, digits=17))}"

    def _rows(self):
        if self.fault:
            return [("outputs", f"{self.n} ({self.dtype})"),
                    ("FAULT", _fault_text(self.fault) + "; not measured"),
                    ("replay", self.fault.get("replay", "-"))]
        p = self.percentiles
        rows = [("outputs", f"{self.n} ({self.dtype})"),
                ("max ULP", _ulp_text(self.max_ulp) + (f" at input #{self.worst['index']}" if self.worst else "")),
                ("mean / p99 ULP", f"{_ulp_text(self.mean_ulp)} / {_ulp_text(p.get(99.0, float('nan')))}"),
                ("correctly rounded", f"{self.correctly_rounded} of {self.n}"),
                ("special mismatches", str(self.special_mismatch)),
                ("bound fraction", self.bound_text()),
                ("follows bit for bit", self.models_text())]
        if self.worst:
            rows += [("worst input", self.worst_text()), ("replay", self.replay(self.worst["index"]))]
        return rows

    def __repr__(self):
        rows = self._rows()
        width = max(len(k) for k, _ in rows)
        lines = [f"ulpgate check of {self.op}:"]
        for k, v in rows:
            lines.append(_wrapped(v, prefix=f"  {k:<{width}}  ", indent=width + 4, command=k == "replay"))
        return "\n".join(lines)

    def _repr_html_(self):
        import html
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in self._rows())
        return f"<table><caption>ulpgate check of {html.escape(self.op)}</caption>{rows}</table>"


def check(outputs, inputs=None, op=None, dtype=None, models=(), label=None, threads=0, policy=None,
          shape=None, suite=None, seed=1, n=None, tensors="numpy"):
    """Measures `outputs` of `op` at `inputs` (a dict by operand name, or a sequence in the
    op's order: `ulpgate.ops()`), each output against the exact value and every model of
    the op in that dtype, plus `models` of your own ("NAME: statements"). Returns a
    CheckReport. Raises ValueError for values that are not of the dtype.

    A reduction (`reduction_ops()`: linear_fwd, mse_fwd, ...) takes either its outputs with
    `inputs` (the operands as arrays, the shape read from them, a leading dimension of
    instances allowed) or, in place of the outputs, a callable fn(*operands) that ulpgate
    calls on each instance of one of its suites (`suite`, `seed`, `n` instances of `shape`,
    in `dtype`, as arrays or with tensors='torch' torch tensors of it) and whose results
    (the op's output shape, in the dtype) it measures. Returns a ReductionReport.

    A cast op (cast_f32, cast_bf16, cast_f16: the source) takes the destination as `dtype`
    (taken from the outputs where they are an ml_dtypes array or a torch float8 tensor), the
    outputs as its codes and `inputs` as one array of the source (or {"x": array}); `policy`
    names the policy the outputs claim. Returns a CastReport."""
    if op is None:
        raise ValueError("op: the op the outputs are of (ops(), reduction_ops())")
    if _is_reduction(op):
        if models or policy is not None:
            raise ValueError(f"{op}: its models are its schedules'; it takes no models= or policy=")
        return _check_reduction(outputs, inputs, op, dtype, label, threads, shape, suite, seed, n, tensors)
    if shape is not None or suite is not None or n is not None:
        raise ValueError(f"shape=, suite= and n= are for the reductions; {op} takes its inputs")
    if inputs is None:
        raise ValueError(f"{op}: inputs= (its operands) are needed")
    if _is_cast(op):
        if models:
            raise ValueError(f"{op}: models are the cast model's policies; name one with policy=")
        return _check_cast(outputs, inputs, op, dtype, policy, threads)
    if policy is not None:
        raise ValueError(f"policy= is for the cast ops; {op} takes models=")
    names, operands = _operands(op, inputs)
    dtype_given = False
    if dtype is None:
        dtype = _dtype_of(outputs)
        if dtype is None:
            raise ValueError(f"dtype: outputs of dtype {getattr(outputs, 'dtype', type(outputs))}; "
                             "give dtype='f32', 'bf16' or 'f16'")
    else:
        dtype_given = True
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    values = [_float32_values(x) for x in operands]
    out = _float32_values(outputs)
    if dtype == "f32" and not dtype_given:
        narrow = _narrower_hint(values, out)
        if narrow:
            import warnings
            warnings.warn(f"every input and output is a {narrow} value, checked as f32 (errors in "
                          f"f32 ULPs): if the kernel computed in {narrow}, pass dtype='{narrow}'",
                          stacklevel=2)
    try:
        record = json.loads(_ulpgate.check(op, dtype, values, out, label or "outputs", list(models),
                                           threads))
    except InputError as e:
        hint = ""
        claimed = [_dtype_of(x) for x in [outputs, *operands]]
        if any(c and c != dtype for c in claimed):
            hint = f" (the arrays are {', '.join(sorted({c for c in claimed if c}))}: pass dtype= that)"
        raise ValueError(f"{e}{hint}") from None
    return CheckReport(record, op, dtype, names, values, out)


class CompareReport:
    """What `compare` found of two implementations at the same inputs (the CLI's
    `compare --json` result, docs/compare.md): how many outputs differ in their bits, how
    far apart, the models each side follows, and the cause, one of "none", "fusion",
    "rounding format", "formula", "function implementation", "flush to zero", "tree",
    "unknown"."""

    def __init__(self, record):
        self.record = record
        self.op, self.dtype, self.n = record["op"], record["dtype"], record["n"]
        self.differing = record["differing"]
        self.identical = self.differing == 0
        self.max_apart_ulp = record["max_apart_ulp"]
        self.cause = record["cause"]["cause"]
        self.cause_detail = record["cause"]["detail"]
        self.models_a = list(record["a"]["models_all_inputs"])
        self.models_b = list(record["b"]["models_all_inputs"])
        self.models_a_differing = list(record["a"]["models_differing_inputs"])
        self.models_b_differing = list(record["b"]["models_differing_inputs"])
        self.nearest = record["nearest"]

    def __repr__(self):
        lines = [f"ulpgate compare of {self.op} in {self.dtype}: {self.differing} of {self.n} outputs differ"
                 + (f", up to {_ulp_text(self.max_apart_ulp)} ULP apart" if self.differing else ""),
                 f"  a follows {', '.join(self.models_a) or 'no model'}",
                 f"  b follows {', '.join(self.models_b) or 'no model'}",
                 _wrapped(f"{self.cause}: {self.cause_detail}", prefix="  cause: ", indent=9)]
        return "\n".join(lines)


def compare(a, b, inputs, op, dtype=None, models=(), labels=("a", "b"), threads=0, framework="auto"):
    """Compares two implementations of `op` at the same `inputs` (a dict by operand name, or
    a sequence in the op's order). Each side is outputs (an array or tensor of the inputs'
    length) or a callable fn(*operands) that computes them, called as `sweep` calls its
    kernel (torch tensors of the dtype where torch is importable and framework is "auto"
    or "torch", else numpy arrays: float32, float16, or float32 holding bf16 values).
    Returns a CompareReport: the outputs that differ in their bits, the ULPs apart, the
    models each side follows bit for bit (on every input and on the differing ones) and the
    cause, as `ulpgate compare` names it (docs/compare.md)."""
    import numpy as np
    if _is_reduction(op) or _is_cast(op):
        raise ValueError(f"compare in Python takes an elementwise op ({', '.join(o['name'] for o in ops())}); "
                         f"`ulpgate compare --op {op}` takes the others")
    names, operands = _operands(op, inputs)
    if dtype is None:
        for x in [*operands, a, b]:
            if not callable(x) and _dtype_of(x):
                dtype = _dtype_of(x)
                break
    dtype = _DTYPE_NAMES.get(dtype or "f32", dtype or "f32")
    values = [_float32_values(x) for x in operands]
    if any(len(v) != len(values[0]) for v in values):
        raise ValueError(f"{op}: the operands' lengths differ ({', '.join(str(len(v)) for v in values)})")

    def side(x):
        if not callable(x):
            return _float32_values(x), "outputs"
        lanes = values if dtype == "f32" else [
            np.ascontiguousarray(_ulpgate.encode(v, dtype), dtype=np.uint16) for v in values]
        y = _wrap(x, dtype, framework)(*lanes)
        if dtype == "f32":
            return np.asarray(y, dtype=np.float32), "python"
        return np.asarray(_ulpgate.decode(np.asarray(y, dtype=np.uint16), dtype), dtype=np.float32), "python"

    out_a, door_a = side(a)
    out_b, door_b = side(b)
    try:
        record = json.loads(_ulpgate.compare(op, dtype, values, out_a, out_b, list(labels), [door_a, door_b],
                                             list(models), threads))
    except InputError as e:
        raise ValueError(str(e)) from None
    return CompareReport(record)


class SweepReport:
    """What `sweep` measured over the domain: the kernel's ULP errors, the models it
    follows on every input, its outputs' digest."""

    def __init__(self, report):
        self.record = report
        case = report["cases"][0]
        self.case = case
        self.fault = case.get("fault")
        self.domain = report["domain"] if "domain" in report else None
        if self.fault:  # measured nothing: no figure, never 0
            self.n = self.max_ulp = self.mean_ulp = self.special_mismatch = None
            self.matching, self.claimed, self.mismatches, self.digest = [], None, None, None
            return
        self.n = case["n"]
        self.max_ulp = case["max_ulp"]
        self.mean_ulp = case["mean_ulp"]
        self.special_mismatch = case["special_mismatch"]
        self.matching = list(case["conformance"]["matching"])
        self.claimed = case["conformance"]["expected"] or None
        self.mismatches = case["conformance"]["mismatches"]
        self.digest = case["outputs_digest"]
        self.domain = report["domain"] if "domain" in report else None

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def __repr__(self):
        if self.fault:
            return (f"ulpgate sweep of {self.record['op']}: FAULT {_fault_text(self.fault)}; not measured"
                    + (f"\n  replay: {self.fault['replay']}" if self.fault.get("replay") else ""))
        return _wrapped(f"ulpgate sweep of {self.record['op']} over {self.n} inputs: max {format_ulp(self.max_ulp)} ULP, "
                        f"mean {format_ulp(self.mean_ulp)}, {self.special_mismatch} special mismatches; follows "
                        f"{', '.join(self.matching) or 'no model'}", indent=2)


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _wrap(kernel, dtype, framework):
    """The callable as the engine calls it: storage lanes (float32, or uint16 patterns of
    bf16 and f16) in and out; the kernel itself sees torch tensors or numpy arrays."""
    import numpy as np
    torch = _torch() if framework in ("auto", "torch") else None
    if framework == "torch" and torch is None:
        raise ValueError("framework='torch': torch is not importable")
    if torch is not None:
        tdtype = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]

        def call(*lanes):
            args = [torch.from_numpy(a) if dtype == "f32" else torch.from_numpy(a.view(np.int16)).view(tdtype)
                    for a in lanes]
            with torch.no_grad():
                y = kernel(*args)
            if not hasattr(y, "dtype") or y.dtype != tdtype:
                raise TypeError(f"the kernel returned {getattr(y, 'dtype', type(y))}, not {tdtype}")
            y = y.detach().cpu().contiguous()
            return y.numpy() if dtype == "f32" else y.view(torch.int16).numpy().view(np.uint16)
        return call

    def call_numpy(*lanes):
        if dtype == "f32":
            args = lanes
        elif dtype == "f16":
            args = [a.view(np.float16) for a in lanes]
        else:  # numpy has no bfloat16: float32 values in, bf16 values out
            args = [(a.astype(np.uint32) << 16).view(np.float32) for a in lanes]
        y = np.ascontiguousarray(kernel(*args))
        if dtype == "f32":
            return y.astype(np.float32, copy=False)
        if dtype == "f16":
            return y.astype(np.float16, copy=False).view(np.uint16)
        bits = y.astype(np.float32, copy=False).view(np.uint32)
        if np.any(bits & 0xFFFF):
            raise ValueError("the kernel returned float32 values that are not bf16 values")
        return (bits >> 16).astype(np.uint16)
    return call_numpy


# A sweep's progress on stderr, as the CLI's (tools/progress.h): nothing for this many
# seconds, so that a quick sweep prints nothing; then on a terminal one line rewritten at
# most twice a second, elsewhere (a log, a notebook's stream) a line every PROGRESS_EVERY.
PROGRESS_AFTER = 5.0
PROGRESS_EVERY = 15.0


class _Progress:
    """progress(done, total) of a sweep: "sweep: 39.3% (393216 of 1000000 inputs),
    4.55e+05 inputs/s, ETA 1 s" on `stream` (sys.stderr by default)."""

    def __init__(self, label="sweep", unit="inputs", stream=None):
        self.label, self.unit = label, unit
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.tty = bool(isatty and isatty())
        self.start = self.last = time.monotonic()
        self.shown = False

    def __call__(self, done, total):
        now = time.monotonic()
        seconds, since = now - self.start, now - self.last
        if total == 0 or seconds < PROGRESS_AFTER or done >= total:
            return
        if self.shown and since < (0.5 if self.tty else PROGRESS_EVERY):
            return
        self.last, self.shown = now, True
        rate = done / max(seconds, 1e-9)
        eta = f", ETA {(total - done) / rate:.0f} s" if done else ""
        line = (f"{self.label}: {100.0 * done / total:5.1f}% ({done} of {total} {self.unit}), "
                f"{rate:.3g} {self.unit}/s{eta}")
        self.stream.write(f"\r\033[K{line}" if self.tty else line + "\n")
        self.stream.flush()

    def clear(self):
        """Erases a terminal's line; a log keeps its lines."""
        if self.tty and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()


def sweep(kernel, op, dtype="bf16", range=None, fixed=None, over=None, claim=None, name="python",
          variant="kernel", framework="auto", threads=0, progress=True, samples=None):
    """Calls `kernel` on every input of a domain, in batches, and measures every output:
    in bf16 or f16 all 2^32 pairs of the op's two operands (or `range=(begin, end)`, indices
    into that domain); in f32 every value of one operand at the `fixed` values of the other
    (`over` names the swept operand, by default the second). `kernel(a, b)` takes and
    returns torch tensors of the dtype (numpy arrays with framework='numpy'; numpy has no
    bfloat16, so bf16 travels as float32 values there). `claim` names the model it must
    follow (mismatches are then counted); without it the report says what it follows.
    A cast op (cast_bf16, cast_f16, cast_f32; `dtype` the destination) calls `kernel(x)` once
    on every source pattern of bf16 or f16 (65536, NaNs and infinities included), or for f32
    on the boundary suite and `samples` random patterns (CAST_SWEEP_F32_SAMPLES by default,
    seeded: the same patterns every run; 2^32 is the CLI's
    `ulpgate sweep --op cast_f32`); it returns codes of the destination (see check) and the
    result is check's CastReport, `claim` the policy it must follow.
    One implementation with the CLI's sweep and with the Python IUT (tools/python/torch_iut.py):
    the kernel is called three times per block of 2^16 inputs (a few inputs, the middle, a
    short tail), so that a defect on a short or misaligned call shows too. A sweep that runs
    longer than PROGRESS_AFTER seconds reports its progress on stderr as the CLI's does
    (progress=False: never; a callable: progress(done, total) is called instead, between
    blocks)."""
    if _is_cast(op):
        if range is not None or fixed is not None:
            raise ValueError(f"{op}: a cast sweep takes no range or fixed values")
        return _sweep_cast(kernel, op, dtype, claim, framework, threads, samples)
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    operands = _op(op)["operands"]
    _require_kernels(op, dtype)
    if len(operands) != 2:
        raise ValueError(f"{op} has {len(operands)} operands: a sweep takes two")
    if dtype == "f32" and not fixed:
        raise ValueError("f32 has 2^64 pairs: give fixed=[values] of one operand (and over=)")
    begin, end = (0, 0) if range is None else range
    shown = _Progress() if progress is True else None
    callback = shown or (progress if callable(progress) else None)
    try:
        report = _ulpgate.sweep(_wrap(kernel, dtype, framework), op, dtype, name, variant, claim or "",
                                [float(v) for v in (fixed or [])], over or operands[1], int(begin),
                                int(end), threads, callback)
    finally:
        if shown:
            shown.clear()
    return SweepReport(json.loads(report))


# ---- Casts and block quantization -------------------------------------------------------

_CAST_SOURCES = {"cast_f32": "f32", "cast_bf16": "bf16", "cast_f16": "f16"}
# The random binary32 patterns a cast_f32 sweep draws beside the boundary suite: 2^20, about
# 9 s for a catalogue of 90 policies on 2 cores; every pattern is the CLI's sweep.
CAST_SWEEP_F32_SAMPLES = 1 << 20


def _is_cast(op):
    return op in _CAST_SOURCES


def _cast_patterns(x, source):
    """The source patterns (uint32) of inputs of a cast from `source` (f32, bf16, f16): arrays
    of it (numpy, ml_dtypes bfloat16, bf16 voids, torch), integer patterns, or arrays of
    another float dtype whose every value is a value of `source` (ValueError otherwise)."""
    import numpy as np
    fmt = _format(source)
    given = _dtype_of(x) or _array_format(x)
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    is_int = kind in ("i", "u") or (_is_torch(x) and not x.is_floating_point())
    if given == source or is_int or (given is None and _is_bf16_void(x)):
        flat, _ = _codes_of(x, fmt)
    else:
        values = _values(x).reshape(-1)
        try:
            flat = _ulpgate.encode(values, source)
        except ValueError as e:
            raise ValueError(f"inputs: {e} (the inputs of {_source_op(source)} are {source} values)") from None
    return flat.astype(np.uint32)


def _source_op(source):
    return {v: k for k, v in _CAST_SOURCES.items()}[source]


def _cast_codes(outputs, dtype, n):
    """The destination codes (uint8, one a byte) of outputs: integer codes, an ml_dtypes array,
    a torch float8 tensor, torch's float4_e2m1fn_x2 (two codes a byte, unpacked)."""
    import numpy as np
    flat, _ = _codes_of(outputs, _format(dtype))
    if dtype == "float4_e2m1fn" and flat.size == n + (n % 2) and n % 2:
        flat = flat[:n]  # the pad nibble of an odd count
    return flat.astype(np.uint8)


def _cast_dtype(outputs, op, dtype):
    if dtype is None:
        dtype = _array_format(outputs)
        if dtype is None or dtype in ("f32", "bf16", "f16", "f64"):
            raise ValueError(f"{op}: give dtype= the destination (float8_e4m3fn, ...): the outputs' "
                             f"dtype {getattr(outputs, 'dtype', type(outputs))} does not name it")
    given = _array_format(outputs)
    if given is not None and given != dtype:
        raise ValueError(f"{op}: the outputs hold {given}, not {dtype}")
    return dtype


def _check_cast(outputs, inputs, op, dtype, policy, threads, suite="python"):
    if isinstance(inputs, dict):
        if list(inputs) != ["x"]:
            raise ValueError(f"{op} takes one operand, x; given {', '.join(inputs)}")
        inputs = inputs["x"]
    elif isinstance(inputs, (list, tuple)) and len(inputs) == 1 and hasattr(inputs[0], "dtype"):
        inputs = inputs[0]
    dtype = _cast_dtype(outputs, op, dtype)
    patterns = _cast_patterns(inputs, _CAST_SOURCES[op])
    codes = _cast_codes(outputs, dtype, patterns.size)
    record = _ulpgate.check_cast(op, dtype, patterns, codes, policy or "", suite, threads)
    return CastReport(record)


class CastReport:
    """What a cast's outputs follow: `matching` the policies of the cast model's catalogue
    followed bit for bit (nearest_even.saturate first where followed), `fits` every policy
    with its mismatches (followed first, then by fewest) and first differing inputs, the
    claimed policy's fit, and the ULP errors in the destination's ULPs over the inputs whose
    value the destination's range holds. Its repr is `ulpgate check --op cast_*`'s text."""

    def __init__(self, record):
        self.record = record
        self.op, self.source, self.dtype = record["op"], record["from"], record["to"]
        self.n = record["n"]
        self.matching = list(record["followed"])
        self.fits = {f["name"]: f for f in record["fits"]}
        self.claimed = record["claimed"] or None
        self.claimed_fit = record["claimed_fit"]
        self.max_ulp = record["max_ulp"]
        self.max_ulp_index = record["max_ulp_index"] if record["in_range"] else None
        self.in_range = record["in_range"]
        self.correctly_rounded = record["correctly_rounded"]
        self.special = record["special"]

    @property
    def nearest_policy(self):
        """(name, mismatches) of the policy fewest outputs leave (a followed one has 0)."""
        first = self.record["fits"][0]
        return first["name"], first["mismatches"]

    def mismatches(self, policy):
        """How many outputs differ from `policy`'s codes."""
        if policy not in self.fits:
            raise KeyError(f"unknown policy '{policy}' of a cast from {self.source} to {self.dtype} "
                           f"({', '.join(self.fits)})")
        return self.fits[policy]["mismatches"]

    def policies_text(self):
        if self.matching:
            return ", ".join(self.matching)
        name, count = self.nearest_policy
        return f"no policy; nearest {name} ({count} of {self.n} outputs differ)"

    def _lines(self):
        r = self.record
        lines = [f"ulpgate check of {self.op}: {self.source} -> {self.dtype}, {self.n} outputs; "
                 f"{r['policies']} policies of the cast model"]
        fit = self.claimed_fit
        if self.claimed:
            lines.append(f"  claims {self.claimed}, " + ("follows it" if fit and fit["mismatches"] == 0 else
                                                         f"LEAVES IT ({fit['mismatches']} of {self.n} differ)"))
        if self.matching:
            lines.append(_wrapped(", ".join(self.matching), prefix="  follows bit for bit: ", indent=4))
        elif r["fits"]:
            nearest = r["fits"][0]
            lines.append(f"  follows no policy; nearest {nearest['name']} ({nearest['mismatches']} of "
                         f"{self.n} differ), first:")
            lines += [f"    {m['input']} -> {m['output']}, {nearest['name']} gives {m['model']}"
                      for m in nearest["first"]]
        if fit and fit["mismatches"] and self.matching:
            lines.append(f"  first off {self.claimed}:")
            lines += [f"    {m['input']} -> {m['output']}, {self.claimed} gives {m['model']}" for m in fit["first"]]
        at = f" at {r['max_ulp_input']}" if self.in_range else ""
        special = f", NaN or infinite {self.special}" if self.special else ""
        lines.append(f"  in range ({self.in_range} of {self.n}): max {format_ulp(self.max_ulp)} {self.dtype} ULP"
                     f"{at}, correctly rounded {self.correctly_rounded}{special}")
        return lines

    def __repr__(self):
        return "\n".join(self._lines())

    def to_json(self):
        return json.dumps(self.record, indent=2)


def _cast_kernel_inputs(patterns, source, framework):
    """The source patterns as what a cast kernel takes: a torch tensor of the source where
    torch is importable (framework 'auto' or 'torch'), else a numpy array (float32, float16,
    ml_dtypes.bfloat16 where installed, else bf16 as float32 values)."""
    import numpy as np
    torch = _torch() if framework in ("auto", "torch") else None
    if framework == "torch" and torch is None:
        raise ValueError("framework='torch': torch is not importable")
    if framework not in ("auto", "torch", "numpy"):
        raise ValueError(f"framework: 'auto', 'torch' or 'numpy', not {framework!r}")
    if source == "f32":
        a = patterns.astype(np.uint32).view(np.float32)
        return torch.from_numpy(a.copy()) if torch is not None else a
    bits = patterns.astype(np.uint16)
    if torch is not None:
        return torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16 if source == "bf16" else torch.float16)
    if source == "f16":
        return bits.view(np.float16)
    try:
        import ml_dtypes
        return bits.view(ml_dtypes.bfloat16)
    except ImportError:
        return (bits.astype(np.uint32) << 16).view(np.float32)


def _sweep_cast(kernel, op, dtype, claim, framework, threads, samples):
    import numpy as np
    if dtype is None or dtype in _DTYPE_NAMES:
        raise ValueError(f"{op}: give dtype= the destination (float8_e4m3fn, ...)")
    source = _CAST_SOURCES[op]
    if source == "f32":
        patterns = np.concatenate([_ulpgate.cast_suite(op, dtype, "boundary"),
                                   _ulpgate.cast_suite(op, dtype, "random", 1, samples or CAST_SWEEP_F32_SAMPLES)])
        suite = "boundary and random"
    else:
        if samples is not None:
            raise ValueError(f"{op}: the sweep takes every {source} pattern; samples= is for cast_f32")
        patterns = np.arange(1 << 16, dtype=np.uint32)
        suite = f"every {source}"
    x = _cast_kernel_inputs(patterns, source, framework)
    torch = _torch() if _is_torch(x) else None
    if torch is not None:
        with torch.no_grad():
            y = kernel(x)
    else:
        y = kernel(x)
    if getattr(y, "shape", None) is not None and tuple(y.shape) != tuple(x.shape) and \
            str(getattr(y, "dtype", "")) != "torch.float4_e2m1fn_x2":
        raise ValueError(f"the kernel returned shape {tuple(y.shape)} for {tuple(x.shape)} inputs")
    dtype = _cast_dtype(y, op, dtype)
    codes = _cast_codes(y, dtype, patterns.size)
    if codes.size != patterns.size:
        raise ValueError(f"the kernel returned {codes.size} codes for {patterns.size} inputs")
    return CastReport(_ulpgate.check_cast(op, dtype, patterns, codes, claim or "", suite, threads))


def _block_values(x):
    """(float32 values, rows, cols) of a 2-D tensor or array of f32, bf16 or f16."""
    import numpy as np
    shape = tuple(getattr(x, "shape", np.shape(x)))
    if len(shape) != 2:
        raise ValueError(f"x: a [rows, cols] tensor, not shape {shape}")
    return _float32_values(x), shape[0], shape[1]


def check_blockquant(x, scales, codes, spec, axis="rows", tensor_scale=None):
    """Names what made block-quantized outputs of x (a [rows, cols] tensor or array): for the
    MX specs (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4) every (scale rule,
    element policy) pair of oracles/block_scale.h that reproduces `scales` (E8M0 codes, one a
    block: uint8, ml_dtypes float8_e8m0fnu, torch float8_e8m0fnu) and `codes` (the elements,
    in x's order: uint8, ml_dtypes, torch float8 or float4_e2m1fn_x2) bit for bit, else the
    nearest pair and its first broken block; for nvfp4 (E4M3 scales) whether torchao's
    nvfp4_quantize at `tensor_scale` reproduces them. Blocks lie along rows (32 consecutive
    elements of a row) or columns. Returns a BlockQuantReport."""
    import numpy as np
    values, rows, cols = _block_values(x)
    specs = {"mxfp8_e4m3": "float8_e4m3fn", "mxfp8_e5m2": "float8_e5m2", "mxfp6_e2m3": "float6_e2m3fn",
             "mxfp6_e3m2": "float6_e3m2fn", "mxfp4": "float4_e2m1fn", "nvfp4": "float4_e2m1fn"}
    if spec not in specs:
        raise ValueError(f"unknown spec '{spec}' ({', '.join(specs)})")
    element = specs[spec]
    scale_format = "float8_e4m3fn" if spec == "nvfp4" else "float8_e8m0fnu"
    if spec == "nvfp4" and tensor_scale is None:
        raise ValueError("nvfp4: give tensor_scale= (the per-tensor binary32 scale)")
    for what, a, f in (("scales", scales, scale_format), ("codes", codes, element)):
        given = _array_format(a)
        if given is not None and given != f:
            raise ValueError(f"{what}: the array holds {given}, not {f} ({spec})")
    s, _ = _codes_of(scales, _format(scale_format))
    c = _cast_codes(codes, element, rows * cols)
    record = _ulpgate.check_blockquant(spec, values, rows, cols, axis, s.astype(np.uint8), c,
                                       float(tensor_scale or 1.0))
    return BlockQuantReport(record, rows, cols, axis)


class BlockQuantReport:
    """What block-quantized outputs follow: `exact` the (scale rule/element policy) pairs
    that reproduce them bit for bit, `scale_rules` those by scale rule, else `nearest` with
    the blocks it matches and why its first broken block is. Its repr is `ulpgate blockquant
    --check`'s text."""

    def __init__(self, record, rows, cols, axis):
        self.record = record
        self.spec, self.blocks = record["spec"], record["blocks"]
        self.rows, self.cols, self.axis = rows, cols, axis
        self.exact = list(record["exact"])
        self.scale_rules = {}
        for name in self.exact:
            rule, policy = name.split("/", 1)
            self.scale_rules.setdefault(rule, []).append(policy)
        self.nearest = record["nearest"]
        self.blocks_matched = record["blocks_matched"]
        self.first_broken_block = record["first_broken_block"]
        self.why = record["why"]

    def follows(self, model):
        """Whether the pair ("rceil/nearest_even.saturate"), or any pair of a scale rule
        ("rceil"), reproduces the outputs."""
        return model in self.exact or model in self.scale_rules

    def __repr__(self):
        lines = [f"ulpgate blockquant check of {self.spec}: {self.rows} x {self.cols} blocked along {self.axis} "
                 f"({self.blocks} blocks)"]
        if not self.exact:
            lines.append(_wrapped(f"follows no model bit for bit; nearest: {self.nearest} ({self.blocks_matched} of "
                                  f"{self.blocks} blocks), first broken: {self.why}", prefix="  ", indent=4))
        else:
            lines.append(f"  scale rules: {', '.join(self.scale_rules)}")
            for rule, policies in self.scale_rules.items():
                lines.append(_wrapped(f"{rule}: {len(policies)} element policies: {', '.join(policies)}",
                                      prefix="    ", indent=6))
        return "\n".join(lines)


# ---- Reductions ----------------------------------------------------------------------------

def reduction_ops():
    """The reductions (linear layer, MSE loss, ...), as the C++ table registers them: a list of
    dicts with name, definition, operands (in the order a callable receives them), variants,
    shape_rank (3: batch, in, out; 1: N) and default_shape."""
    return _ulpgate.reduction_ops()


def reduction_suites():
    """The reductions' input suites: name, description, default_n (instances)."""
    return _ulpgate.reduction_suites()


def _is_reduction(op):
    return any(o["name"] == op for o in reduction_ops())


def _reduction_op(op):
    for o in reduction_ops():
        if o["name"] == op:
            return o
    raise ValueError(f"unknown reduction op '{op}' ({', '.join(o['name'] for o in reduction_ops())})")


def _shape_text(shape):
    """'' (the op's default), '8,16,4' from (8, 16, 4), 8 or '8,16,4'."""
    if shape is None:
        return ""
    if isinstance(shape, str):
        return shape
    if isinstance(shape, int):
        return str(shape)
    return ",".join(str(int(e)) for e in shape)


def reduction_inputs(op, dtype="f32", shape=None, suite="cancellation", seed=1, n=None, tensors="numpy"):
    """The instances of a reduction suite, as check gives them to a callable: a list of dicts of
    operand arrays by name (`ulpgate suite export`'s instances, in memory)."""
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    return _ulpgate.reduction_inputs(op, dtype, _shape_text(shape), suite, int(seed), int(n or 0), tensors)


def _float32_array(x):
    """The values of an array or tensor as a numpy float32 array of its shape."""
    import numpy as np
    if _is_torch(x):
        return x.detach().cpu().float().contiguous().numpy()
    if _is_bf16_void(x):
        bits = np.ascontiguousarray(x).view(np.uint16).astype(np.uint32) << 16
        return bits.view(np.float32)
    return np.ascontiguousarray(np.asarray(x, dtype=np.float32))


def _check_reduction(outputs, inputs, op, dtype, label, threads, shape, suite, seed, n, tensors):
    info = _reduction_op(op)
    if callable(outputs) and not hasattr(outputs, "dtype"):
        if inputs is not None:
            raise ValueError(f"{op}: a callable is given ulpgate's inputs (suite=, shape=, n=); "
                             "outputs of inputs of your own are checked as arrays")
        dtype = _DTYPE_NAMES.get(dtype or "f32", dtype or "f32")
        label = label or getattr(outputs, "__name__", "fn")
        record = _ulpgate.check_reduction_callable(outputs, op, dtype, _shape_text(shape), suite or "cancellation",
                                                   int(seed), int(n or 0), label, tensors, threads)
        return ReductionReport(json.loads(record), op, dtype, label, info, suite or "cancellation", int(seed))
    if inputs is None:
        raise ValueError(f"{op}: the operands ({', '.join(info['operands'])}) are needed beside the outputs, "
                         "or give a callable in place of the outputs")
    if suite is not None or n is not None:
        raise ValueError(f"{op}: suite= and n= are for a callable; outputs come with their inputs")
    names = info["operands"]
    if isinstance(inputs, dict):
        unknown = [k for k in inputs if k not in names]
        if unknown:
            raise ValueError(f"{op} takes operands {', '.join(names)}; unknown {unknown}")
        given = [(k, inputs[k]) for k in names if k in inputs]
    else:
        inputs = list(inputs)
        if len(inputs) > len(names):
            raise ValueError(f"{op} takes {len(names)} operands ({', '.join(names)}), given {len(inputs)}")
        given = list(zip(names, inputs))
    if dtype is None:
        dtype = _dtype_of(outputs)
        if dtype is None:
            raise ValueError(f"dtype: outputs of dtype {getattr(outputs, 'dtype', type(outputs))}; "
                             "give dtype='f32', 'bf16' or 'f16'")
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    label = label or "outputs"
    record = _ulpgate.check_reduction(op, dtype, [(k, _float32_array(v)) for k, v in given],
                                      _float32_array(outputs), label, threads)
    return ReductionReport(json.loads(record), op, dtype, label, info, None, None)


class ReductionReport:
    """What `check` measured of a reduction's outputs, as `ulpgate check` says it: ULP errors
    against the exact value (max with its element and instance, mean, percentiles,
    histogram), the bound fraction (the largest error as a fraction of the classical bound of
    a binary32-accumulated evaluation; above 1 on `above_bound` outputs: not computed with
    binary32 products and sums), and `matching`: every schedule's model the outputs follow
    bit for bit (sequential, lane-parallel with 4/8/16 lanes, pairwise; fused or not)."""

    def __init__(self, record, op, dtype, label, info, suite, seed):
        self.record = record
        self.op, self.dtype, self.label = op, dtype, label
        self.shape = record["shape"]
        self.instances = record["instances"]
        self.suite, self.seed = suite, seed
        self.n = record["n"]
        self.max_ulp = record["max_ulp"]
        self.mean_ulp = record["mean_ulp"]
        self.percentiles = {float(k): v for k, v in record.get("percentiles", {}).items()}
        self.histogram = record["histogram"]
        self.correctly_rounded = record["correctly_rounded"]
        self.special_mismatch = record["special_mismatch"]
        self.signed_zero_mismatch = record["signed_zero_mismatch"]
        self.bound_fraction = record.get("bound_fraction")
        self.matching = list(record["conformance"]["matching"])
        self.exceeds_bound = record["exceeds_bound"]
        self.worst = record.get("max_input")  # {index, instance, element, name}
        self._info = info

    @property
    def max_bound_fraction(self):
        """The largest error as a fraction of the error bound (above 1: beyond it)."""
        return float(self.bound_fraction["max"]) if self.bound_fraction else None

    @property
    def above_bound(self):
        """How many outputs err beyond the bound."""
        return self.bound_fraction["above_one"] if self.bound_fraction else 0

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def bound_text(self):
        b = self.max_bound_fraction
        name = ("the f32 error bound" if self.dtype == "f32"
                else f"the error bound of f32 accumulation rounded to {self.dtype}")
        if b is None:
            return "no bound"
        if self.above_bound:
            return (f"{_ulp_text(b)}: EXCEEDS {name} on {self.above_bound} of {self.n} outputs (up to "
                    f"{_ulp_text(b)} times it): not computed with binary32-accumulated products and sums")
        return f"{_ulp_text(b)}: within {name} (the largest error is {_ulp_text(b)} of it)"

    def models_text(self):
        if self.matching:
            return ", ".join(self.matching)
        return "none of the schedules' models (a blocked or tiled sum, say)"

    def inputs_command(self):
        """The command that writes the same instances to an .npz (suite inputs only)."""
        if self.suite is None:
            return None
        return (f"ulpgate suite export --op {self.op} --suite {self.suite} --seed {self.seed} --shape "
                f"{self.shape} --dtype {self.dtype} --n {self.instances} --out inputs.npz")

    def _rows(self):
        p = self.percentiles
        where = f"{self.instances} instance{'s' if self.instances != 1 else ''} of shape {self.shape}"
        if self.suite is not None:
            where += f", suite {self.suite} seed {self.seed}"
        worst = ""
        if self.worst:
            worst = f" at {self.worst['name']} of instance {self.worst['instance']}"
        rows = [("outputs", f"{self.n} ({self.dtype}; {where})"),
                ("max ULP", _ulp_text(self.max_ulp) + worst),
                ("mean / p99 ULP", f"{_ulp_text(self.mean_ulp)} / {_ulp_text(p.get(99.0, float('nan')))}"),
                ("correctly rounded", f"{self.correctly_rounded} of {self.n}"),
                ("special mismatches", str(self.special_mismatch)),
                ("bound fraction", self.bound_text()),
                ("follows bit for bit", self.models_text())]
        if self.suite is not None:
            rows.append(("inputs", self.inputs_command()))
        return rows

    def __repr__(self):
        rows = self._rows()
        width = max(len(k) for k, _ in rows)
        lines = [f"ulpgate check of {self.op} ({self.label}):"]
        for k, v in rows:
            lines.append(_wrapped(v, prefix=f"  {k:<{width}}  ", indent=width + 4, command=k == "inputs"))
        return "\n".join(lines)


# ---- Matrix products: invariance (and reveal) through a callable --------------------------

def _door_args(fn, dtype, out_dtype, tensors, name):
    """(dtype, out_dtype, tensors, name) of a matrix product callable's door: the operands'
    format, the outputs' (by default the operands', f32 for an 8-bit one), 'numpy' or 'torch'."""
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    if out_dtype is None:
        out_dtype = dtype if dtype in ("f32", "bf16", "f16") else "f32"
    out_dtype = _DTYPE_NAMES.get(out_dtype, out_dtype)
    if tensors not in ("numpy", "torch"):
        raise ValueError(f"tensors: 'numpy' or 'torch', not {tensors!r}")
    name = name or getattr(fn, "__name__", None) or type(fn).__name__
    return dtype, out_dtype, tensors, name


class _TorchThreads:
    """Restores torch's thread count after a door that set it (invariance's threads)."""

    def __init__(self, tensors):
        self.torch = _torch() if tensors == "torch" else None

    def __enter__(self):
        self.threads = self.torch.get_num_threads() if self.torch else None
        return self

    def __exit__(self, *exc):
        if self.torch:
            self.torch.set_num_threads(self.threads)


def invariance(fn, dtype="f32", out_dtype=None, tensors="numpy", k=256, n=32, max_batch=512, seed=1,
               repeats=3, threads=(1, 2, 4), time_budget=60.0, name=None, max_k=0, max_rows=0,
               progress=None, trees=True):
    """Batch invariance and determinism of a matrix product callable fn(a, b) -> a @ b.T (a
    [m, k], b [n, k], c [m, n]; NumPy arrays of the dtype, or torch tensors with
    tensors='torch'), as `ulpgate invariance` measures a kernel: one probe row of A computed
    alone and in batches of other sizes (every m to 17, then around each power of two up to
    `max_batch`), at other positions in the batch, with its operands at other alignments,
    with other thread counts (torch.set_num_threads, restored after; NumPy's cannot be set)
    and `repeats` times run to run, each compared with its baseline by encoding. Where the
    batch size changes the bits (and the callable is deterministic), with `trees` reveal's
    summation trees of the probe's first output at the last size that keeps them and the
    first that changes them (`report.trees`). Returns an InvarianceReport. Raises DotDoorError where fn raises or returns the wrong dtype or shape."""
    dtype, out_dtype, tensors, name = _door_args(fn, dtype, out_dtype, tensors, name)
    with _TorchThreads(tensors):
        record = _ulpgate.invariance(fn, dtype, out_dtype, tensors, name, int(k), int(n), int(max_batch),
                                     int(seed), int(repeats), [int(t) for t in threads], float(time_budget),
                                     int(max_k), int(max_rows), progress, bool(trees))
    return InvarianceReport(json.loads(record))


class InvarianceReport:
    """What `invariance` found: `verdict` in words ("batch-invariant", "not batch-invariant
    (first at m=8)", "nondeterministic (run to run)", ...), `invariant`, `batch_invariant` (no
    batch size or position changed the probe's bits), `deterministic`, the first batch size
    whose bits differ from the probe alone (`first_changed_batch`, None if none) and the
    largest below it (`last_invariant_batch`), and per dimension (`dimensions['batch size']`,
    'position', 'alignment', 'threads', 'run to run') the trials with how many outputs changed
    and by how many ULPs."""

    def __init__(self, record):
        self.record = record
        self.door = record["door"]
        self.verdict = record["verdict"]
        self.invariant = record["invariant"]
        self.deterministic = record["deterministic"]
        self.dimensions = {d["dimension"]: d for d in record["dimensions"]}
        self.batch_invariant = not any(self.dimensions[d]["bits_changed"] for d in ("batch size", "position")
                                       if d in self.dimensions) and self.deterministic
        self.first_changed_batch = record["first_changed_batch"] or None
        self.last_invariant_batch = record["last_invariant_batch"] or None
        self.batch_sizes = record["batch_sizes"]
        self.calls, self.seconds = record["calls"], record["seconds"]
        # {before_m, after_m, before, after, short_before, short_after} (or {error}); None where
        # no batch size changed the bits.
        self.trees = record.get("trees")

    @property
    def changed(self):
        """The dimensions in which some trial changed the probe's bits."""
        return [name for name, d in self.dimensions.items() if d["bits_changed"]]

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def dimension_text(self, name):
        """One dimension's finding, as `ulpgate invariance` prints it."""
        d = self.dimensions[name]
        if not d["varied"]:
            return f"not varied ({d['not_varied']})"
        trials = d["trials"]
        first = d["first_change"]
        if first is None:
            return f"same bits in all {len(trials)} trials ({d['range']}, against {d['baseline']})"
        changes = sum(1 for t in trials if t["changed"])
        ulp = "NaN" if first["max_ulp"] is None else f"{first['max_ulp']:g} ULP"
        text = (f"bits change in {changes} of {len(trials)} trials ({d['range']}, against {d['baseline']}); "
                f"first at {first['what']}: {first['changed']} of {first['compared']} outputs, max {ulp}")
        if name == "batch size":
            text += f"; as alone up to m={self.last_invariant_batch}"
        return text

    def __repr__(self):
        r = self.record
        lines = [_wrapped(f"ulpgate invariance of {self.door} ({r['operand_format']} -> {r['output_format']}, "
                          f"k {r['k']}, n {r['n']}, seed {r['seed']}): {self.verdict} ({self.calls} calls, "
                          f"{self.seconds:.2f} s)", indent=2)]
        for name in self.dimensions:
            lines.append(_wrapped(self.dimension_text(name), prefix=f"  {name}: ", indent=4))
        t = self.trees
        if t and "error" in t:
            lines.append(_wrapped(t["error"], prefix="  trees: not revealed: ", indent=4))
        elif t:
            lines.append(_wrapped(f"m={t['before_m']}: {t['short_before']}; m={t['after_m']}: {t['short_after']}",
                                  prefix="  trees of C[0][0]: ", indent=4))
        return "\n".join(lines)



_TREE_KINDS = ("sequential", "sequential_fused", "pairwise", "lane_parallel", "lane_parallel_fused")


def tree(kind, k=None, lanes=8, structure_only=True):
    """A summation tree's text in reveal's canonical form. `kind` is one of ulpgate's own
    schedules over k terms ('sequential', 'sequential_fused', 'pairwise', 'lane_parallel' with
    `lanes` strided chains and a halving tree, 'lane_parallel_fused'), a tree's text
    ('((0+1)+2)', 'fused4[0,1,2,3]', children in any order), or nested lists ([[0, 1], 2]; a
    list of more than two is one node adding them all with one rounding). The leaves' rounding
    marks and the nodes' arithmetic are dropped unless structure_only=False."""
    if isinstance(kind, (list, tuple)):
        kind = _nested_text(kind)
    elif isinstance(kind, int):
        kind = str(kind)
    if kind in _TREE_KINDS:
        if not k:
            raise ValueError(f"tree('{kind}'): give k, the number of terms")
        return _ulpgate.tree_text("", kind, int(k), int(lanes), structure_only)
    return _ulpgate.tree_text(kind, "", 0, int(lanes), structure_only)


def _nested_text(node):
    if isinstance(node, (list, tuple)):
        parts = [_nested_text(c) for c in node]
        if len(parts) < 2:
            raise ValueError(f"a node adds two or more inputs, not {node!r}")
        return f"({parts[0]}+{parts[1]})" if len(parts) == 2 else f"fused{len(parts)}[{','.join(parts)}]"
    return str(int(node))


def _nested(node):
    """A tree's JSON node as nested lists: a leaf its term, a node the list of its children."""
    if "term" in node:
        return node["term"]
    return [_nested(c) for c in node["add"]]


def reveal(fn, k, dtype="f32", out_dtype=None, tensors="numpy", m=16, n=64, row=0, col=0, batch=None,
           fingerprint=True, check_outputs=1000, seed=1, name=None, max_k=0, max_rows=0):
    """How a matrix product callable fn(a, b) -> a @ b.T adds up the k terms of output (row,
    col) of calls of m x n x k, from its outputs alone, as `ulpgate reveal` finds it: the
    summation tree (FPRev's cancellation probes), then with `fingerprint` each node's
    arithmetic and each product's rounding (the accumulator fingerprint), then the resulting
    model checked bit for bit against fn on `check_outputs` outputs of random operands
    (0: not checked). batch=True has every output of a call carry a probe of its own (it takes
    every output to add up alike); False one probe per call; None (the default) tries True
    and, where the probes do not nest as a tree (a BLAS whose edge tiles add otherwise),
    False. Returns a RevealReport; outputs no tree gives are a finding (`not_a_tree`, or a
    model check that fails), never an exception. Raises DotDoorError where fn raises or
    returns the wrong dtype or shape."""
    dtype, out_dtype, tensors, name = _door_args(fn, dtype, out_dtype, tensors, name)

    def run(batched):
        return json.loads(_ulpgate.reveal(fn, dtype, out_dtype, tensors, name, int(m), int(n), int(k), int(row),
                                          int(col), batched, bool(fingerprint), int(check_outputs), int(seed),
                                          int(max_k), int(max_rows)))
    record = run(True if batch is None else bool(batch))
    record["batch"] = True if batch is None else bool(batch)
    if batch is None and record["not_a_tree"]:
        first = record
        record = run(False)
        record["batch"] = False
        record["batched_not_a_tree"] = first["not_a_tree"]
        record["calls"] += first["calls"]
    return RevealReport(record)


class RevealReport:
    """What `reveal` found of one output of a matrix product callable:
    `tree` (text, structure only: '((0+1)+2)'), `structure` (nested lists: [[0, 1], 2]),
    `known_shape` (ulpgate's name for it: 'sequential chain, rounded products', 'pairwise
    cascade, ...', '' for another), or `not_a_tree` (reveal's words where the probes do not
    nest as a tree's subtrees); the fingerprint (`model`: the tree with each product's
    rounding and each node's arithmetic, `rounded_products`, `node_classes`,
    `promote_every`, `parts`, `description`); and the model check (`model_outputs`,
    `model_mismatches`, `first_mismatch`). `follows_tree` is True only when the tree was
    revealed and its model gives the callable's bits on every output checked: probes that
    read as a tree while the outputs differ from its model (a float64 accumulator, a
    correctly rounded sum) are no tree of binary32 additions."""

    def __init__(self, record):
        self.record = record
        self.door = record["door"]
        self.k = record["shape"]["k"]
        self.not_a_tree = record["not_a_tree"]
        t = record.get("tree")
        self.tree = t["text"] if t else None
        self.structure = _nested(t["json"]["root"]) if t else None
        self.known_shape = t["known_shape"] if t else None
        self.depth = t["depth"] if t else None
        self.max_fan_in = t["max_fan_in"] if t else None
        f = record.get("fingerprint") or {}
        self.fingerprint = f
        self.fingerprint_error = f.get("error")
        self.model = f["model"]["text"] if "model" in f else None
        self.rounded_products = f.get("rounded_products")
        self.node_classes = f.get("node_classes", [])
        self.promote_every = f.get("promote_every") or None
        self.parts = f.get("parts", [])
        self.description = f.get("description", [])
        if f.get("shape"):  # the name of the model, rounded products and all
            self.known_shape = f["shape"]
        c = record.get("model_check")
        self.model_outputs = c["outputs"] if c else None
        self.model_mismatches = c["mismatches"] if c else None
        self.first_mismatch = c["first_mismatch"] if c else None
        self.calls = record["calls"]

    @property
    def follows_tree(self):
        return self.tree is not None and not self.model_mismatches

    @property
    def verdict(self):
        """What reveal says, in one sentence."""
        if self.tree is None:
            return f"not a tree of roundings: {self.not_a_tree}"
        shape = f" ({self.known_shape})" if self.known_shape else ""
        if self.model_mismatches:
            return (f"the probes read as a tree{shape}, but its model differs from the outputs on "
                    f"{self.model_mismatches} of {self.model_outputs} checked: not that tree of binary32 additions "
                    "on every output (a wider or exact accumulator, or tiles that add otherwise)")
        checked = f", its model followed on all {self.model_outputs} outputs checked" if self.model_outputs else ""
        return f"a summation tree{shape}{checked}"

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def __repr__(self):
        r = self.record
        s = r["shape"]
        lines = [_wrapped(f"ulpgate reveal of {self.door} ({r['operand_format']} -> {r['output_format']}, output "
                          f"({r['row']}, {r['col']}) of {s['m']} x {s['n']} x {s['k']}, "
                          f"{'batched probes' if r['batch'] else 'one probe per call'}, {self.calls} calls): "
                          f"{self.verdict}", indent=2)]
        if self.tree is not None:
            lines.append(_wrapped(self.model or self.tree, prefix="  model: ", indent=9))
            lines += [_wrapped(d, prefix="  ", indent=4) for d in self.description]
        if self.fingerprint_error:
            lines.append(_wrapped(self.fingerprint_error, prefix="  fingerprint: ", indent=4))
        if self.first_mismatch:
            lines.append(_wrapped(self.first_mismatch, prefix="  first mismatch: ", indent=4))
        return "\n".join(lines)


from . import testing  # noqa: E402,F401  (after the functions it uses)
