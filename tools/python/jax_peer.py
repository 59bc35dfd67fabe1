#!/usr/bin/python3
"""JAX's jit (XLA on the CPU) against NumPy for the same formulas, as a peer.

The elementwise backward ops and the row reductions, each written once as a user writes
it, evaluated three ways on the same inputs: `jax.jit` (XLA compiles the whole formula,
fuses it, hands it to LLVM), JAX eagerly (one XLA computation per operation) and NumPy
(one ufunc per operation; bf16 through ml_dtypes, f16 through NumPy's own float16).
`ulpgate check` then names the models each path follows bit for bit, and the XLA
settings that might give NumPy's bits back are tried, each in a process of its own
(XLA_FLAGS is read when XLA starts).

    jax_peer.py --venv build/peers-venv --ulpgate build/bin/ulpgate --out DIR [--n 4096]
    jax_peer.py ... --settings            # also every XLA setting (a process each)
    jax_peer.py --venv build/peers-venv --out DIR --settings-only   # on DIR's archives
    jax_peer.py --venv build/peers-venv --issues [--out DIR]  # openxla/xla #22116, #41579

DIR receives one archive per op and format (`OP_FMT.npz`: the inputs as float32 arrays
holding the format's values, the layout of suites/peer/, and one array per path), each
path's `check --json` report, `summary.json` (models, ULP and bound fractions per path,
outputs unlike NumPy's), `settings.json` (per setting and jit path, outputs unlike
NumPy's, eager JAX's and the default jit's) and `issues.json`. Inputs are ulpgate's own: `ulpgate suite export --op OP
--suite domain --seed 1` (elementwise, N inputs) and `--suite training` (reductions, the
shapes below), so any of them replays with `ulpgate explain`.

Runs itself again with the virtual environment's python (ci/setup_peers.sh); exit 77 (a
ctest skip) with the reason when that environment or JAX is absent.
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77
FORMATS = ("f32", "bf16", "f16")

# Each formula as a user writes it, given the array module (numpy or jax.numpy), the
# inputs and the functions that module lacks. Python's left-to-right association is
# the order: `grad - grad*t*t` is grad - ((grad*t)*t).
SQRT1_2 = 0.7071067811865476      # 1/sqrt(2)
INV_SQRT_2PI = 0.3989422804014327  # 1/sqrt(2 pi)
SQRT_2_PI = 0.7978845608028654    # sqrt(2/pi)
KAPPA = 0.044715
RMS_EPS = float.fromhex("0x1.0c6f7ap-20")  # the binary32 nearest 1e-6, the registered eps


def f_tanh_mac_left(m, fn, grad, t):
    return grad - grad * t * t


def f_tanh_mulsub(m, fn, grad, t):
    return grad * (1 - t * t)


def f_sigmoid(m, fn, grad, s):
    return grad * s * (1 - s)


def f_silu(m, fn, grad, x):
    sig = 1 / (1 + m.exp(-x))
    return grad * sig * (1 + x * (1 - sig))


def f_gelu(m, fn, grad, x):
    cdf = 0.5 * (1 + fn["erf"](x * SQRT1_2))
    pdf = INV_SQRT_2PI * m.exp(-0.5 * x * x)
    return grad * (cdf + x * pdf)


def f_gelu_tanh(m, fn, grad, x):
    t = m.tanh(SQRT_2_PI * (x + KAPPA * x * x * x))
    d = SQRT_2_PI * (1 + 3 * KAPPA * x * x)
    return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * d)


def f_linear(m, fn, x, w, b):
    return x @ w.T + b


def f_rmsnorm(m, fn, x, g):
    return x / m.sqrt(m.mean(x * x, axis=-1, keepdims=True) + RMS_EPS) * g


def f_softmax(m, fn, x):
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def f_log_softmax(m, fn, x):
    z = x - m.max(x, axis=-1, keepdims=True)
    return z - m.log(m.sum(m.exp(z), axis=-1, keepdims=True))


# op -> [(formula name, what it is, function)], its operands in order, the export's
# extra arguments (reductions: a shape of 4096 outputs).
OPS = {
    "tanh_bwd": ([("mac_left", "grad - grad*t*t", f_tanh_mac_left),
                  ("mulsub", "grad * (1 - t*t)", f_tanh_mulsub)], ("grad", "t"), []),
    "sigmoid_bwd": ([("natural", "grad * s * (1 - s)", f_sigmoid)], ("grad", "s"), []),
    "silu_bwd": ([("natural", "sig = 1/(1 + exp(-x)); grad * sig * (1 + x*(1 - sig))",
                   f_silu)], ("grad", "x"), []),
    "gelu_bwd": ([("natural", "grad * (0.5*(1 + erf(x/sqrt2)) + x * exp(-0.5*x*x)/sqrt(2 pi))",
                   f_gelu)], ("grad", "x"), []),
    "gelu_tanh_bwd": ([("natural", "t = tanh(sqrt(2/pi)*(x + 0.044715*x*x*x)); grad * (0.5*(1 + t)"
                        " + 0.5*x*(1 - t*t)*sqrt(2/pi)*(1 + 3*0.044715*x*x))", f_gelu_tanh)],
                      ("grad", "x"), []),
    "linear_fwd": ([("natural", "x @ w.T + b", f_linear)], ("x", "w", "b"), ["--shape", "64,256,64"]),
    "rmsnorm_fwd": ([("natural", "x / sqrt(mean(x*x, -1) + eps) * g", f_rmsnorm)], ("x", "g"),
                    ["--shape", "16,256"]),
    "softmax_fwd": ([("natural", "e = exp(x - max(x)); e / sum(e)", f_softmax)], ("x",),
                    ["--shape", "16,256"]),
    "log_softmax_fwd": ([("natural", "z = x - max(x); z - log(sum(exp(z)))", f_log_softmax)],
                        ("x",), ["--shape", "16,256"]),
}
ELEMENTWISE = ("tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd")
# XLA's settings tried against the default jit, each in a fresh process.
SETTINGS = [
    "--xla_backend_optimization_level=0",
    "--xla_cpu_enable_fast_math=false",
    "--xla_cpu_enable_fast_math=true",
    "--xla_cpu_enable_fast_math=true --xla_cpu_fast_math_honor_functions=false"
    " --xla_cpu_fast_math_honor_division=false",
    "--xla_cpu_use_thunk_runtime=false",
    "--xla_allow_excess_precision=false",
    "--xla_cpu_max_isa=AVX",
    "--xla_cpu_max_isa=AVX --xla_allow_excess_precision=false",
    "--xla_cpu_use_fusion_emitters=false",
    "--xla_cpu_enable_platform_dependent_math=false",
    "--xla_cpu_ftz=false",
    "--xla_cpu_use_xnnpack=false",
]


def path_name(engine, formula):
    return engine if formula == "natural" else f"{engine}_{formula}"


def archive_name(op, fmt):
    return f"{op}_{fmt}.npz"


# ---------------------------------------------------------------------- the venv side

def np_dtype(fmt):
    import numpy as np
    import ml_dtypes
    return {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[fmt]


def numpy_functions(fmt):
    """The functions NumPy lacks: erf, by Python's math.erf (glibc's double erf) on each
    element, rounded once to the format."""
    import math
    import numpy as np
    dt = np_dtype(fmt)
    erf = np.vectorize(lambda v: math.erf(float(v)), otypes=[np.float64])
    return {"erf": lambda a: erf(a).astype(dt)}


def shaped(op, arrays, dims):
    """The operands in the shapes the op's formula takes (rows of a reduction)."""
    if op == "linear_fwd":
        m, k, n = dims
        return [arrays["x"].reshape(m, k), arrays["w"].reshape(n, k), arrays["b"].reshape(n)]
    if op in ("rmsnorm_fwd",):
        rows, n = dims
        return [arrays["x"].reshape(rows, n), arrays["g"].reshape(n)]
    if op in ("softmax_fwd", "log_softmax_fwd"):
        rows, n = dims
        return [arrays["x"].reshape(rows, n)]
    return [arrays[name] for name in OPS[op][1]]


def evaluate(op, fmt, inputs, engines):
    """{path: float32 array of the format's values} for the engines asked (numpy, eager,
    jit) on float32 arrays of inputs."""
    import numpy as np
    dims = [int(v) for v in OPS[op][2][1].split(",")] if OPS[op][2] else None
    dt = np_dtype(fmt)
    out = {}
    for formula, _, f in OPS[op][0]:
        if "numpy" in engines:
            args = shaped(op, {k: v.astype(dt) for k, v in inputs.items()}, dims)
            with np.errstate(all="ignore"):
                y = f(np, numpy_functions(fmt), *args)
            # NumPy's matmul of ml_dtypes' bfloat16 answers in float32 (ml_dtypes
            # accumulates in float32): the product is rounded to the format once, here.
            y = np.asarray(y).astype(dt)
            out[path_name("numpy", formula)] = np.asarray(y).astype(np.float32).reshape(-1)
        if "eager" in engines or "jit" in engines:
            import jax
            import jax.numpy as jnp
            jdt = {"f32": jnp.float32, "bf16": jnp.bfloat16, "f16": jnp.float16}[fmt]
            fn = {"erf": jax.scipy.special.erf}
            args = shaped(op, {k: jnp.asarray(v.astype(dt), dtype=jdt) for k, v in inputs.items()},
                          dims)
            if "eager" in engines:
                # Op by op: each jnp call dispatches one primitive, compiled alone.
                with jax.disable_jit():
                    y = f(jnp, fn, *args)
                assert y.dtype == jdt
                out[path_name("eager", formula)] = np.asarray(y.astype(jnp.float32)).reshape(-1)
            if "jit" in engines:
                y = jax.jit(lambda *a: f(jnp, fn, *a))(*args)
                assert y.dtype == jdt
                out[path_name("jit", formula)] = np.asarray(y.astype(jnp.float32)).reshape(-1)
    return out


def compute(args):
    """The venv side: reads the inputs archive (or, with --op all, every OP_FMT.npz of
    the folder --inputs), writes the paths' arrays (keys OP:FMT:PATH for a folder)."""
    import numpy as np
    import npz_values
    engines = args.engines.split(",")
    if args.op != "all":
        inputs = npz_values.load_float32(args.inputs)
        np.savez(args.result, **evaluate(args.op, args.fmt, inputs, engines))
        return 0
    out = {}
    for name in sorted(os.listdir(args.inputs)):
        stem, ext = os.path.splitext(name)
        op, _, fmt = stem.rpartition("_")
        if ext != ".npz" or op not in OPS or fmt not in FORMATS:
            continue
        arrays = npz_values.load_float32(os.path.join(args.inputs, name))
        inputs = {k: arrays[k] for k in OPS[op][1]}
        for path, y in evaluate(op, fmt, inputs, engines).items():
            out[f"{op}:{fmt}:{path}"] = y
    np.savez(args.result, **out)
    return 0


def settings(args):
    """Each XLA setting in a process of its own, on every archive of --out: how many of
    each jit path's outputs differ from NumPy's, from eager JAX's and from the default
    jit's. Written to settings.json."""
    import numpy as np
    saved = {}
    for name in sorted(os.listdir(args.out)):
        stem, ext = os.path.splitext(name)
        op, _, fmt = stem.rpartition("_")
        if ext == ".npz" and op in OPS and fmt in FORMATS:
            saved[(op, fmt)] = dict(np.load(os.path.join(args.out, name)))
    table = {}
    for setting in ["default"] + SETTINGS:
        result = os.path.join(args.out, ".setting.npz")
        try:
            run_child(args.venv, ["--compute", "--op", "all", "--inputs", args.out, "--result",
                                  result, "--engines", "jit"], "" if setting == "default" else setting)
        except RuntimeError as e:
            table[setting] = {"error": str(e).splitlines()[0] + " " + str(e)[-400:]}
            print(f"{setting}: fails: {str(e)[-400:]}", flush=True)
            continue
        got = dict(np.load(result))
        os.remove(result)
        row = {}
        for key, y in got.items():
            op, fmt, path = key.split(":")
            arrays = saved[(op, fmt)]
            formula = path.partition("_")[2] or "natural"
            row[key] = {"numpy": differ(y, arrays[path_name("numpy", formula)]),
                        "eager": differ(y, arrays[path_name("eager", formula)]),
                        "jit": differ(y, arrays[path])}
        table[setting] = row
        gives = sorted(k for k, v in row.items() if v["numpy"] == 0 and
                       saved_differs(saved, k))
        print(f"{setting}: NumPy's bits back on {gives or 'none of the differing paths'}",
              flush=True)
    with open(os.path.join(args.out, "settings.json"), "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    return 0


def saved_differs(saved, key):
    """Whether the default jit path of OP:FMT:PATH differs from NumPy's."""
    op, fmt, path = key.split(":")
    formula = path.partition("_")[2] or "natural"
    arrays = saved[(op, fmt)]
    return differ(arrays[path], arrays[path_name("numpy", formula)]) > 0


def versions():
    import platform
    import jax
    import jaxlib
    import numpy
    import ml_dtypes
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "numpy": numpy.__version__,
            "ml_dtypes": ml_dtypes.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "cpu": cpu, "devices": [str(d) for d in jax.devices()]}


def issues():
    """openxla/xla #22116 (x**2 - y**2 at x = y = 0.1) and #41579 (a*x + b*x at a = 1e20,
    b = -1e20, x = 1e10) in float32: jit, eager and NumPy, printed as hex floats."""
    import numpy as np
    import jax
    import jax.numpy as jnp
    x = np.array([0.1], np.float32)

    def sq(a, b):
        return a ** 2 - b ** 2

    def ax_bx(a, b, x):
        return a * x + b * x
    a, b, z = np.float32(1e20), np.float32(-1e20), np.float32(1e10)
    out = {
        "22116_jit": float(jax.jit(sq)(jnp.asarray(x), jnp.asarray(x))[0]),
        "22116_eager": float(sq(jnp.asarray(x), jnp.asarray(x))[0]),
        "22116_numpy": float(sq(x, x)[0]),
        "41579_jit": float(jax.jit(ax_bx)(a, b, z)),
        "41579_eager": float(ax_bx(jnp.float32(a), jnp.float32(b), jnp.float32(z))),
        "41579_numpy": float(ax_bx(a, b, z)),
    }
    print(json.dumps({k: [v, v.hex()] for k, v in out.items()}))
    return 0


# -------------------------------------------------------------------- the driver side

def unavailable_reason(venv):
    python = os.path.join(venv, "bin", "python")
    if os.path.exists(os.path.join(venv, "UNAVAILABLE")):
        with open(os.path.join(venv, "UNAVAILABLE")) as f:
            return f"the peers are unavailable ({venv}): {f.read().strip()}"
    if not os.path.exists(os.path.join(venv, "STAMP")) or not os.path.exists(python):
        return f"no peers set up at {venv} (bash ci/setup_peers.sh sets them up)"
    if os.path.exists(os.path.join(venv, "JAX_UNAVAILABLE")):
        with open(os.path.join(venv, "JAX_UNAVAILABLE")) as f:
            return f"JAX is unavailable in {venv}: {f.read().strip()}"
    return None


def run_child(venv, argv, xla_flags=""):
    """This script under the venv's python, with XLA_FLAGS set (a fresh XLA)."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false " + xla_flags).strip()
    env["JAX_PLATFORMS"] = "cpu"
    env["JAX_ENABLE_X64"] = "0"
    env["PYTHONPATH"] = HERE
    r = subprocess.run([os.path.join(venv, "bin", "python"), os.path.abspath(__file__)] + argv,
                       env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} ({xla_flags or 'default'}): exit {r.returncode}\n"
                           f"{r.stdout}{r.stderr[-3000:]}")
    return r.stdout


def export_inputs(ulpgate, op, fmt, n, out):
    extra = OPS[op][2]
    cmd = [ulpgate, "suite", "export", "--op", op, "--dtype", fmt, "--seed", "1", "--out", out]
    if fmt != "f32":
        cmd.append("--float32")
    cmd += ["--suite", "training"] + extra if extra else ["--suite", "domain", "--n", str(n)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}")


def check_path(ulpgate, op, fmt, archive, path, report):
    """`ulpgate check` of one path: (models followed, max ULP, max bound fraction)."""
    cmd = [ulpgate, "check", "--op", op, "--dtype", fmt, "--inputs", archive,
           "--outputs", f"{archive}:{path}", "--json", report, "--quiet"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return summarize(report)


def summarize(report_path):
    with open(report_path) as f:
        report = json.load(f)
    result = report["results"][0]
    conformance = result.get("conformance") or {}
    bound = result.get("bound_fraction") or {}
    return {"models": sorted(conformance.get("matching", [])),
            "max_ulp": result.get("max_ulp", result.get("histogram", {}).get("max")),
            "bound_fraction": bound.get("max"),
            "exceeds_bound": result.get("exceeds_bound")}


def differ(a, b):
    """How many outputs differ in their bits (every NaN alike)."""
    import numpy as np
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    return int((~same).sum())


def drive(args):
    import numpy as np
    os.makedirs(args.out, exist_ok=True)
    ops = args.ops or list(OPS)
    formats = args.formats or list(FORMATS)
    summary = {"versions": json.loads(run_child(args.venv, ["--versions"])), "paths": {},
               "n": args.n}
    for op in ops:
        for fmt in formats:
            archive = os.path.join(args.out, archive_name(op, fmt))
            inputs = os.path.join(args.out, f".{op}_{fmt}_inputs.npz")
            export_inputs(args.ulpgate, op, fmt, args.n, inputs)
            result = os.path.join(args.out, f".{op}_{fmt}_paths.npz")
            run_child(args.venv, ["--compute", "--op", op, "--fmt", fmt, "--inputs", inputs,
                                  "--result", result, "--engines", "numpy,eager,jit"])
            arrays = dict(np.load(inputs))
            arrays = {k: (v if v.dtype == np.float32 else v.astype(np.float32))
                      for k, v in arrays.items()}
            paths = dict(np.load(result))
            arrays.update(paths)
            np.savez_compressed(archive, **arrays)
            os.remove(inputs)
            os.remove(result)
            for path in paths:
                report = os.path.join(args.out, f"{op}_{fmt}_{path}.json")
                info = check_path(args.ulpgate, op, fmt, archive, path, report)
                engine, _, formula = path.partition("_")
                reference = paths[path_name("numpy", formula or "natural")]
                info["differs_from_numpy"] = differ(paths[path], reference)
                summary["paths"][f"{op}:{fmt}:{path}"] = info
                print(f"{op:16s} {fmt:5s} {path:16s} {', '.join(info['models']) or 'none':40s} "
                      f"max ULP {info['max_ulp']}, bound fraction {info['bound_fraction']}, "
                      f"{info['differs_from_numpy']} differ from NumPy", flush=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    return settings(args) if args.settings else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", default=os.path.join(HERE, "..", "..", "build", "peers-venv"))
    ap.add_argument("--ulpgate")
    ap.add_argument("--out")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--ops", nargs="*", choices=sorted(OPS))
    ap.add_argument("--formats", nargs="*", choices=FORMATS)
    ap.add_argument("--settings", action="store_true", help="also try XLA's settings")
    ap.add_argument("--settings-only", action="store_true",
                    help="only XLA's settings, on the archives already in --out")
    ap.add_argument("--issues", action="store_true")
    # The venv side (run by the driver).
    ap.add_argument("--compute", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--versions", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--op", help=argparse.SUPPRESS)
    ap.add_argument("--fmt", help=argparse.SUPPRESS)
    ap.add_argument("--inputs", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--engines", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.compute:
        return compute(args)
    if args.versions:
        print(json.dumps(versions()))
        return 0
    why = unavailable_reason(args.venv)
    if why:
        print(f"SKIP: {why}")
        return SKIP
    python = os.path.join(args.venv, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(args.venv):
        if os.environ.get("ULPGATE_PEERS_REEXEC") == args.venv:
            print(f"SKIP: {python} does not run in {args.venv} (not a virtual environment there)")
            return SKIP
        env = dict(os.environ, ULPGATE_PEERS_REEXEC=args.venv)
        os.execve(python, [python] + sys.argv, env)
    if args.issues:
        found = {}
        for setting in ("", "--xla_backend_optimization_level=0", "--xla_cpu_max_isa=AVX",
                        "--xla_cpu_use_fusion_emitters=false", "--xla_allow_excess_precision=false"):
            found[setting or "default"] = json.loads(run_child(args.venv, ["--issues-child"],
                                                               setting).strip())
            print(setting or "default", json.dumps(found[setting or "default"]))
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, "issues.json"), "w") as f:
                json.dump(found, f, indent=1, sort_keys=True)
        return 0
    if args.settings_only:
        return settings(args)
    if not args.ulpgate or not args.out:
        ap.error("--ulpgate and --out are needed")
    return drive(args)


if __name__ == "__main__":
    if "--issues-child" in sys.argv:
        sys.exit(issues())
    sys.exit(main())
