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
ulpgate.testing holds assertions for test suites. The measurements are the CLI's
(`ulpgate check`, `ulpgate sweep`): the same engine, exact oracles and models.
"""

import json

from . import _ulpgate

__all__ = ["check", "sweep", "ops", "exact", "CheckReport", "SweepReport", "InputError", "format_ulp"]

InputError = _ulpgate.InputError
# ULP errors and bound fractions as the CLI prints them: 4 digits rounded up,
# so 0.5000091 reads "0.5001", never "0.5".
format_ulp = _ulpgate.format_ulp
_DTYPE_NAMES = {"f32": "f32", "float32": "f32", "bf16": "bf16", "bfloat16": "bf16", "f16": "f16",
                "float16": "f16", "half": "f16"}


def ops():
    """The elementwise ops: [{'name', 'operands', 'definition'}]."""
    return _ulpgate.ops()


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


def exact(op, *operands):
    """The exact value of op at one input, as a hex float string."""
    return _ulpgate.exact(op, [float(v) for v in operands])


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


class CheckReport:
    """What `check` measured: ULP errors (max, mean, percentiles, histogram), the bound
    fraction, special and signed-zero mismatches, the models followed bit for bit
    (`matching`) and for every model how many outputs differ and the nearest of them."""

    def __init__(self, record, op, dtype, names, operands):
        self.record = record
        self.op, self.dtype = op, dtype
        self._names, self._operands = names, operands
        self.n = record["n"]
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

    def mismatches(self, model):
        """How many outputs differ from `model`'s."""
        if model not in self.models:
            raise KeyError(f"unknown model '{model}' ({', '.join(self.models)})")
        return self.models[model]["mismatches"]

    def replay(self, index):
        """The command that explains input `index` step by step (f32 operands)."""
        values = [float(v[index]) for v in self._operands]
        inputs = " ".join(f"--input {n}={v.hex()}" for n, v in zip(self._names, values))
        return f"ulpgate explain --op {self.op} {inputs}"

    def to_json(self):
        return json.dumps(self.record, indent=2)

    def _rows(self):
        p = self.percentiles
        return [("outputs", f"{self.n} ({self.dtype})"),
                ("max ULP", format_ulp(self.max_ulp) + (f" at input #{self.worst['index']}" if self.worst else "")),
                ("mean / p99 ULP", f"{format_ulp(self.mean_ulp)} / {format_ulp(p.get(99.0, float('nan')))}"),
                ("correctly rounded", f"{self.correctly_rounded} of {self.n}"),
                ("special mismatches", str(self.special_mismatch)),
                ("follows bit for bit", ", ".join(self.matching) or "no model")]

    def __repr__(self):
        width = max(len(k) for k, _ in self._rows())
        lines = [f"ulpgate check of {self.op}:"] + [f"  {k:<{width}}  {v}" for k, v in self._rows()]
        return "\n".join(lines)

    def _repr_html_(self):
        import html
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in self._rows())
        return f"<table><caption>ulpgate check of {html.escape(self.op)}</caption>{rows}</table>"


def check(outputs, inputs, op, dtype=None, models=(), label=None, threads=0):
    """Measures `outputs` of `op` at `inputs` (a dict by operand name, or a sequence in the
    op's order: `ulpgate.ops()`), each output against the exact value and every model of
    the op in that dtype, plus `models` of your own ("NAME: statements"). Returns a
    CheckReport. Raises ValueError for values that are not of the dtype."""
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
    return CheckReport(record, op, dtype, names, values)


class SweepReport:
    """What `sweep` measured over the domain: the kernel's ULP errors, the models it
    follows on every input, its outputs' digest."""

    def __init__(self, report):
        self.record = report
        case = report["cases"][0]
        self.case = case
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
        return (f"ulpgate sweep of {self.record['op']} over {self.n} inputs: max {format_ulp(self.max_ulp)} ULP, "
                f"mean {format_ulp(self.mean_ulp)}, {self.special_mismatch} special mismatches; follows "
                f"{', '.join(self.matching) or 'no model'}")


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


def sweep(kernel, op, dtype="bf16", range=None, fixed=None, over=None, claim=None, name="python",
          variant="kernel", framework="auto", threads=0):
    """Calls `kernel` on every input of a domain, in batches, and measures every output:
    in bf16 or f16 all 2^32 pairs of the op's two operands (or `range=(begin, end)`, indices
    into that domain); in f32 every value of one operand at the `fixed` values of the other
    (`over` names the swept operand, by default the second). `kernel(a, b)` takes and
    returns torch tensors of the dtype (numpy arrays with framework='numpy'; numpy has no
    bfloat16, so bf16 travels as float32 values there). `claim` names the model it must
    follow (mismatches are then counted); without it the report says what it follows.
    One implementation with the CLI's sweep and with the Python IUT (tools/python/torch_iut.py):
    the kernel is called once per block of 2^16 inputs."""
    dtype = _DTYPE_NAMES.get(dtype, dtype)
    operands = _op(op)["operands"]
    if len(operands) != 2:
        raise ValueError(f"{op} has {len(operands)} operands: a sweep takes two")
    if dtype == "f32" and not fixed:
        raise ValueError("f32 has 2^64 pairs: give fixed=[values] of one operand (and over=)")
    begin, end = (0, 0) if range is None else range
    report = _ulpgate.sweep(_wrap(kernel, dtype, framework), op, dtype, name, variant, claim or "",
                            [float(v) for v in (fixed or [])], over or operands[1], int(begin), int(end),
                            threads)
    return SweepReport(json.loads(report))


from . import testing  # noqa: E402,F401  (after the functions it uses)
