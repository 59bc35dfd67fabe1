#!/usr/bin/env python3
"""PyTorch 2's eager kernels against torch.compile (Inductor's C++ code) on the CPU.

Runs, with one thread, every elementwise backward op (tanh_bwd, sigmoid_bwd, silu_bwd,
gelu_bwd, gelu_tanh_bwd) and the row reductions and the linear layer in f32, bf16 and
f16, eager and under torch.compile: the aten op itself and a user's formula of the same
function. Inputs are ulpgate's own (`ulpgate suite export`, seeded); each (op, dtype) gets
one .npz with the inputs and one float32 array per path, the layout `ulpgate check` reads
(and suites/peer/), then `check` names the models each path follows bit for bit.

    compiled_peer.py generate --ulpgate build/bin/ulpgate --out DIR [--n 4096] [--seed 1]
        [--only tanh_bwd:f32,softmax:bf16] [--setting NAME --inputs DIR]
    compiled_peer.py check --ulpgate build/bin/ulpgate --dir DIR [--json table.json]
    compiled_peer.py settings --ulpgate build/bin/ulpgate --dir DIR [--json settings.json]
        [--settings A,B] [--only op:dtype,...]
    compiled_peer.py codes --dir DIR --out codes.txt
    compiled_peer.py reveal --python-dir build/python [--k 64,128]

`generate`, `settings`, `codes` and `reveal` run in the pinned peers' venv (torch 2.x,
numpy; `reveal` the ulpgate Python package too); `check` needs numpy only.
`settings` reruns the compiled paths of every (op, dtype) whose compiled bits differ
from eager's under each of Inductor's numerics settings (SETTINGS below), one fresh
process each (Inductor reads some of them when it first compiles), and says which gives
eager's bits back.

Paths of an elementwise op (arrays of its .npz; FORMULA_TEXT says each formula):
  eager_aten         torch.ops.aten.<op>_backward(grad, operand) (gelu: approximate)
  compiled_aten      the same call under torch.compile
  eager_<formula>    the user's formula, one ATen op per operator
  compiled_<formula> the same formula under torch.compile
Reductions: eager / compiled of F.linear (forward, and backward: x.grad, W.grad, b.grad
as linear_bwd_input, linear_bwd_weight, linear_bwd_bias), F.rms_norm (forward and the
gradient of x), softmax and log_softmax (forward, and aten._softmax_backward_data /
_log_softmax_backward_data).
"""

import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

DTYPES = ("f32", "bf16", "f16")
ELEMENTWISE = ("tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd")
OPERAND = {"tanh_bwd": "t", "sigmoid_bwd": "s", "silu_bwd": "x", "gelu_bwd": "x",
           "gelu_tanh_bwd": "x"}
# Reductions: archive name -> (shape, the ops whose inputs `suite export` writes into it,
# training suite, the same seed; their operands' names do not collide).
REDUCTIONS = {
    "linear": ("16,128,16", ("linear_fwd", "linear_bwd_input")),
    "rmsnorm": ("8,128", ("rmsnorm_bwd",)),
    "softmax": ("8,128", ("softmax_fwd", "softmax_bwd")),
    "log_softmax": ("8,128", ("log_softmax_fwd", "log_softmax_bwd")),
}
# For each reduction archive: (ulpgate op, array stem). The arrays are eager_<stem> and
# compiled_<stem>.
REDUCTION_PATHS = {
    "linear": (("linear_fwd", "fwd"), ("linear_bwd_input", "dx"), ("linear_bwd_weight", "dw"),
               ("linear_bwd_bias", "db")),
    "rmsnorm": (("rmsnorm_fwd", "fwd"), ("rmsnorm_bwd", "dx")),
    "softmax": (("softmax_fwd", "fwd"), ("softmax_bwd", "bwd")),
    "log_softmax": (("log_softmax_fwd", "fwd"), ("log_softmax_bwd", "bwd")),
}
RMSNORM_EPS = 1e-6  # ulpgate's rmsnorm default (kernels/reductions/row_ops.h)

# A user's formula of each op, as one would write it in PyTorch (text for the docs).
FORMULA_TEXT = {
    ("tanh_bwd", "mulsub"): "grad * (1 - t*t)",
    ("tanh_bwd", "mac_left"): "grad - grad*t*t",
    ("sigmoid_bwd", "formula"): "grad * s * (1 - s)",
    ("silu_bwd", "formula"): "s = sigmoid(x); grad * s * (1 + x * (1 - s))",
    ("gelu_bwd", "formula"): "grad * (0.5 * (1 + erf(x / sqrt 2)) + x * exp(-x*x/2) / sqrt(2 pi))",
    ("gelu_tanh_bwd", "formula"): "th = tanh(k (x + c x^3)); grad * (0.5 (1 + th) + "
                                  "0.5 x (1 - th^2) k (1 + 3 c x^2))",
}

# Models of the ops' forms that no built-in model has, given to `check` with --model:
# torch._decomp's sigmoid_backward, grad * (s * (1 - s)), which Inductor compiles.
USER_MODELS = {
    "sigmoid_bwd": ("sigmoid_decomposed: a = 1 - s; b = s*a; out = grad*b",),
}

# Inductor's settings that could bring eager's bits back, each run in a fresh process.
# Attribute paths of torch._inductor.config; a setting the installed version lacks is
# reported as absent, not run.
SETTINGS = {
    "emulate_precision_casts": {"emulate_precision_casts": True},
    "fp_contract_on": {"cpp.enable_floating_point_contract_flag": "on"},
    "fp_contract_fast": {"cpp.enable_floating_point_contract_flag": "fast"},
    "unsafe_math": {"cpp.enable_unsafe_math_opt_flag": True},
    "numerics_strict": {"numerics": "strict"},
    "eager_numerics_disable_ftz": {"eager_numerics.disable_ftz": True},
    "simdlen_1": {"cpp.simdlen": 1},
    "simdlen_256": {"cpp.simdlen": 256},
    "vec_isa_off": {"cpp.vec_isa_ok": False},
    "fp_contract_fast+emulate_precision_casts": {
        "cpp.enable_floating_point_contract_flag": "fast", "emulate_precision_casts": True},
}


def elementwise_paths(torch, op):
    """formula name -> function(grad, operand), the aten op first."""
    aten = torch.ops.aten
    if op == "tanh_bwd":
        return {"aten": lambda g, t: aten.tanh_backward(g, t),
                "mulsub": lambda g, t: g * (1 - t * t),
                "mac_left": lambda g, t: g - g * t * t}
    if op == "sigmoid_bwd":
        return {"aten": lambda g, s: aten.sigmoid_backward(g, s),
                "formula": lambda g, s: g * s * (1 - s)}
    if op == "silu_bwd":
        def silu(g, x):
            s = torch.sigmoid(x)
            return g * s * (1 + x * (1 - s))
        return {"aten": lambda g, x: aten.silu_backward(g, x), "formula": silu}
    if op == "gelu_bwd":
        def gelu(g, x):
            cdf = 0.5 * (1 + torch.erf(x * 0.7071067811865476))
            pdf = torch.exp(-0.5 * x * x) * 0.3989422804014327
            return g * (cdf + x * pdf)
        return {"aten": lambda g, x: aten.gelu_backward(g, x), "formula": gelu}
    if op == "gelu_tanh_bwd":
        k, c = 0.7978845608028654, 0.044715

        def gelu_tanh(g, x):
            th = torch.tanh(k * (x + c * x * x * x))
            return g * (0.5 * (1 + th) + 0.5 * x * (1 - th * th) * k * (1 + 3 * c * x * x))
        return {"aten": lambda g, x: aten.gelu_backward(g, x, approximate="tanh"),
                "formula": gelu_tanh}
    raise ValueError(op)


def export(ulpgate, op, dtype, out, n=None, shape=None, suite=None, seed=1):
    cmd = [ulpgate, "suite", "export", "--op", op, "--dtype", dtype, "--seed", str(seed),
           "--out", out]
    cmd += ["--n", str(n)] if n else []
    cmd += ["--shape", shape] if shape else []
    cmd += ["--suite", suite] if suite else []
    if dtype != "f32":
        cmd.append("--float32")  # float32 arrays of the format's values (torch.from_numpy)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def apply_setting(name):
    """Sets torch._inductor.config for SETTINGS[name]; returns the keys the installed
    version lacks."""
    import torch._inductor.config as config
    missing = []
    for key, value in SETTINGS[name].items():
        obj, parts = config, key.split(".")
        for p in parts[:-1]:
            obj = getattr(obj, p, None)
        if obj is None or not hasattr(obj, parts[-1]):
            missing.append(key)
            continue
        setattr(obj, parts[-1], value)
    return missing


def run_reductions(torch, name, arrays, dtype, compiled_only):
    """Eager and compiled outputs of the reduction archive `name`, float32 numpy arrays."""
    F = torch.nn.functional
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]

    def t(key):
        return torch.from_numpy(arrays[key]).to(tdt)
    out = {}
    modes = ["compiled"] if compiled_only else ["eager", "compiled"]
    for mode in modes:
        wrap = torch.compile if mode == "compiled" else (lambda f: f)
        if name == "linear":
            f = wrap(lambda x, w, b: F.linear(x, w, b))
            x = t("x").requires_grad_()
            w = t("w").requires_grad_()
            b = t("b").requires_grad_()
            y = f(x, w, b)
            dy = torch.from_numpy(arrays["dy"]).to(tdt)
            y.backward(dy)
            res = {"fwd": y, "dx": x.grad, "dw": w.grad, "db": b.grad}
        elif name == "rmsnorm":
            n = arrays["x"].shape[-1]
            f = wrap(lambda x, g: F.rms_norm(x, (n,), g, RMSNORM_EPS))
            x = t("x").requires_grad_()
            g = t("g")
            y = f(x, g)
            y.backward(t("dy"))
            res = {"fwd": y, "dx": x.grad}
        else:
            log = name == "log_softmax"
            fwd = wrap((lambda x: torch.log_softmax(x, -1)) if log else
                       (lambda x: torch.softmax(x, -1)))
            back = torch.ops.aten._log_softmax_backward_data if log else \
                torch.ops.aten._softmax_backward_data
            bwd = wrap(lambda dy, y: back(dy, y, -1, tdt))
            res = {"fwd": fwd(t("x")), "bwd": bwd(t("dy"), t("y"))}
        for stem, v in res.items():
            out["%s_%s" % (mode, stem)] = v.detach().float().numpy()
    return out


def generate(args):
    import numpy as np
    import torch
    torch.set_num_threads(1)
    missing = apply_setting(args.setting) if args.setting else []
    if missing:
        print("compiled_peer: setting %s: torch %s has no %s" %
              (args.setting, torch.__version__, ", ".join(missing)), file=sys.stderr)
        return 3
    os.makedirs(args.out, exist_ok=True)
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    wanted = parse_only(args.only)
    errors = {}
    for dtype in DTYPES:
        for op in ELEMENTWISE:
            if wanted is not None and (op, dtype) not in wanted:
                continue
            archive = os.path.join(args.out, "%s_%s.npz" % (op, dtype))
            inputs = os.path.join(args.inputs, os.path.basename(archive)) if args.setting \
                else archive + ".in.npz"
            if not args.setting:
                export(args.ulpgate, op, dtype, inputs, n=args.n, suite="domain", seed=args.seed)
            arrays = dict(np.load(inputs))
            g = torch.from_numpy(arrays["grad"]).to(tdt[dtype])
            v = torch.from_numpy(arrays[OPERAND[op]]).to(tdt[dtype])
            out = {"grad": arrays["grad"], OPERAND[op]: arrays[OPERAND[op]]}
            for formula, f in elementwise_paths(torch, op).items():
                modes = (("compiled", torch.compile(f)),) if args.setting else \
                    (("eager", f), ("compiled", torch.compile(f)))
                for mode, fn in modes:
                    key = "%s_%s" % (mode, formula)
                    try:
                        out[key] = fn(g, v).float().numpy()
                    except Exception as e:  # a path this build cannot run: recorded
                        errors["%s %s %s" % (op, dtype, key)] = str(e).splitlines()[0]
                        print("compiled_peer: %s %s %s: %s" % (op, dtype, key, e), file=sys.stderr)
            np.savez_compressed(archive, **out)
            if not args.setting:
                os.remove(inputs)
            print("compiled_peer: %s %s: %d paths" % (op, dtype, len(out) - 2), flush=True)
        for name, (shape, ops) in REDUCTIONS.items():
            if wanted is not None and (name, dtype) not in wanted:
                continue
            archive = os.path.join(args.out, "%s_%s.npz" % (name, dtype))
            if args.setting:
                arrays = dict(np.load(os.path.join(args.inputs, os.path.basename(archive))))
                inputs = {k: arrays[k] for k in arrays if not k.startswith(("eager_", "compiled_"))}
            else:
                inputs = {}
                for op in ops:
                    tmp = archive + ".in.npz"
                    export(args.ulpgate, op, dtype, tmp, shape=shape, suite="training",
                           seed=args.seed)
                    for key, value in np.load(tmp).items():
                        inputs.setdefault(key, value)  # the first op's operands kept
                    os.remove(tmp)
            try:
                out = dict(inputs)
                out.update(run_reductions(torch, name, inputs, dtype, bool(args.setting)))
            except Exception as e:
                errors["%s %s" % (name, dtype)] = str(e).splitlines()[0]
                print("compiled_peer: %s %s: %s" % (name, dtype, e), file=sys.stderr)
                continue
            np.savez_compressed(archive, **out)
            print("compiled_peer: %s %s: %d arrays" % (name, dtype, len(out)), flush=True)
    if not args.setting:
        info = machine_info(torch)
        info["errors"] = errors
        info["n"], info["seed"] = args.n, args.seed
        with open(os.path.join(args.out, "info.json"), "w") as f:
            json.dump(info, f, indent=1, sort_keys=True)
            f.write("\n")
    return 1 if errors else 0


def machine_info(torch):
    import numpy as np
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gxx = subprocess.run(["g++", "--version"], capture_output=True, text=True).stdout
    return {"torch": torch.__version__, "numpy": np.__version__,
            "python": platform.python_version(), "cpu_model": model,
            "cpu_capability": torch.backends.cpu.get_cpu_capability(),
            "gxx": gxx.splitlines()[0] if gxx else "", "threads": torch.get_num_threads()}


def parse_only(text):
    if not text:
        return None
    return {tuple(item.split(":")) for item in text.split(",")}


# ----------------------------------------------------------------------------- check

def check_commands(ulpgate, directory):
    """(archive, op, dtype, path, argv) of every saved path."""
    import numpy as np
    out = []
    for dtype in DTYPES:
        for op in ELEMENTWISE:
            archive = os.path.join(directory, "%s_%s.npz" % (op, dtype))
            if not os.path.exists(archive):
                continue
            with np.load(archive) as z:
                names = [k for k in z.files if k.startswith(("eager_", "compiled_"))]
            for path in names:
                argv = [ulpgate, "check", "--op", op, "--dtype", dtype, "--inputs", archive,
                        "--outputs", "%s:%s" % (archive, path)]
                for model in USER_MODELS.get(op, ()):
                    argv += ["--model", model]
                out.append((archive, op, dtype, path, argv))
        for name, paths in REDUCTION_PATHS.items():
            archive = os.path.join(directory, "%s_%s.npz" % (name, dtype))
            if not os.path.exists(archive):
                continue
            for op, stem in paths:
                for mode in ("eager", "compiled"):
                    path = "%s_%s" % (mode, stem)
                    out.append((archive, op, dtype, path, [
                        ulpgate, "check", "--op", op, "--dtype", dtype, "--inputs", archive,
                        "--outputs", "%s:%s" % (archive, path)]))
    return out


def summarize(report):
    """models followed, max ULP, max bound fraction from a check --json report."""
    result = report["results"][0]
    conf = result.get("conformance") or {}
    bound = result.get("bound_fraction") or {}
    return {"models": sorted(conf.get("matching", [])),
            "max_ulp": result.get("max_ulp", result.get("ulp_max")),
            "bound_max": bound.get("max") if isinstance(bound, dict) else bound}


def check(args):
    import tempfile
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (archive, op, dtype, path, argv) in enumerate(check_commands(args.ulpgate, args.dir)):
            report = os.path.join(tmp, "%d.json" % i)
            done = subprocess.run(argv + ["--quiet", "--json", report], capture_output=True,
                                  text=True)
            if done.returncode not in (0, 1):
                print("compiled_peer: %s failed: %s" % (" ".join(argv), done.stderr), file=sys.stderr)
                return 2
            with open(report) as f:
                row = summarize(json.load(f))
            row.update({"op": op, "dtype": dtype, "path": path,
                        "archive": os.path.basename(archive)})
            if path.startswith("compiled_"):
                import numpy as np
                with np.load(archive) as z:
                    eager = "eager_" + path[len("compiled_"):]
                    if eager in z.files:
                        row["differ_from_eager"] = differing(z[eager], z[path])
            rows.append(row)
            print("%-16s %-5s %-22s %-40s max ULP %s, bound %s" % (
                op, dtype, path, ", ".join(row["models"]) or "none", row["max_ulp"],
                row["bound_max"]), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
            f.write("\n")
    return 0


# ----------------------------------------------------------------------------- codes

def codes(args):
    """The C++ kernels Inductor writes for every compiled elementwise path (and the
    reductions' forward), into one text file: what the causes in docs/peers.md read."""
    import re
    import numpy as np
    import torch
    from torch._inductor.utils import run_and_get_code
    torch.set_num_threads(1)
    tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    kernel = re.compile(r"(cpp_fused\w*) = async_compile\.cpp_pybinding\([^\n]*r\'\'\'\n(.*?)\'\'\'\)",
                        re.S)
    wanted = parse_only(args.only)
    lines = ["# C++ kernels Inductor (torch %s) wrote for compiled_peer.py's compiled paths," %
             torch.__version__,
             "# one thread, this CPU's vector ISA; regenerate with",
             "# compiled_peer.py codes --dir DIR --out FILE", ""]
    for dtype in DTYPES:
        for op in ELEMENTWISE:
            if wanted is not None and (op, dtype) not in wanted:
                continue
            with np.load(os.path.join(args.dir, "%s_%s.npz" % (op, dtype))) as z:
                g = torch.from_numpy(z["grad"]).to(tdt[dtype])
                v = torch.from_numpy(z[OPERAND[op]]).to(tdt[dtype])
            for formula, f in elementwise_paths(torch, op).items():
                torch._dynamo.reset()
                _, sources = run_and_get_code(torch.compile(f), g, v)
                lines.append("=" * 8 + " %s %s compiled_%s" % (op, dtype, formula))
                for source in sources:
                    for name, body in kernel.findall(source):
                        lines.append(body.strip("\n"))
                lines.append("")
    with open(args.out, "w") as f:
        f.write("\n".join(lines))
    return 0


# ----------------------------------------------------------------------------- reveal

def reveal(args):
    """The summation tree of one row's sum of products, eager (ATen's sum reduction) and
    compiled (Inductor's reduction loop), from outputs alone: ulpgate.reveal (FPRev's
    probes through the Python door) on `(a[:, None, :] * b[None, :, :]).sum(-1)`, the
    reduction RMSNorm, softmax and the bias gradient make along a row."""
    sys.path.insert(0, args.python_dir)
    import torch
    import ulpgate
    torch.set_num_threads(1)

    def rowsum(a, b):
        return (a[:, None, :] * b[None, :, :]).sum(-1)
    for name, fn in (("eager", rowsum), ("compiled", torch.compile(rowsum))):
        for k in (int(k) for k in args.k.split(",")):
            r = ulpgate.reveal(fn, k=k, tensors="torch")
            print("%s k=%d: %s; model followed on every checked output: %s (%d mismatches)" % (
                name, k, r.known_shape or "not one of ulpgate's named shapes", r.follows_tree,
                r.model_mismatches))
            print("  " + r.tree[:400] + ("..." if len(r.tree) > 400 else ""), flush=True)
    return 0


# ----------------------------------------------------------------------------- settings

def differing(a, b):
    """How many outputs of two float32 arrays differ bit for bit (every NaN alike)."""
    import numpy as np
    a, b = np.ravel(a), np.ravel(b)
    same = (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    return int((~same).sum())


def pairs(directory):
    """archive -> [(eager array, compiled array, count of outputs that differ)]."""
    import numpy as np
    out = {}
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".npz"):
            continue
        with np.load(os.path.join(directory, name)) as z:
            arrays = {k: z[k] for k in z.files}
        rows = []
        for key in sorted(arrays):
            if key.startswith("eager_") and "compiled_" + key[6:] in arrays:
                c = "compiled_" + key[6:]
                rows.append((key, c, differing(arrays[key], arrays[c])))
        out[name] = rows
    return out


def settings(args):
    import numpy as np
    import tempfile
    base = pairs(args.dir)
    todo = {}
    keep = parse_only(args.only)
    for archive, rows in base.items():
        if keep is not None and tuple(archive[:-4].rsplit("_", 1)) not in keep:
            continue
        for eager, compiled, n in rows:
            print("%-22s %-18s %5d of %d differ" % (
                archive, compiled, n, np.load(os.path.join(args.dir, archive))[eager].size))
            if n:
                todo.setdefault(archive, []).append((eager, compiled, n))
    only = ",".join(a[:-4].rsplit("_", 1)[0] + ":" + a[:-4].rsplit("_", 1)[1] for a in todo)
    results = {"default": {a: {c: n for _, c, n in rows} for a, rows in todo.items()}}
    names = args.settings.split(",") if args.settings else list(SETTINGS)
    for setting in names:
        with tempfile.TemporaryDirectory() as out:
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "generate",
                                   "--ulpgate", args.ulpgate, "--out", out, "--setting", setting,
                                   "--inputs", args.dir, "--only", only],
                                  capture_output=True, text=True)
            if done.returncode == 3:
                results[setting] = "absent: " + done.stderr.strip()
                print("%s: %s" % (setting, results[setting]))
                continue
            row = {}
            for archive, items in todo.items():
                path = os.path.join(out, archive)
                if not os.path.exists(path):
                    row[archive] = "failed: " + done.stderr.strip().splitlines()[-1:][0]
                    continue
                with np.load(path) as z, np.load(os.path.join(args.dir, archive)) as e:
                    row[archive] = {c: (differing(e[eager], z[c]) if c in z.files else None)
                                    for eager, c, _ in items}
            results[setting] = row
            print("%s: %s" % (setting, json.dumps(row, sort_keys=True)), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--ulpgate", default="build/bin/ulpgate")
    g.add_argument("--out", required=True)
    g.add_argument("--n", type=int, default=4096)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--only", help="op:dtype,... (reductions by archive: linear, rmsnorm, "
                   "softmax, log_softmax)")
    g.add_argument("--setting", choices=sorted(SETTINGS),
                   help="compiled paths only, under this Inductor setting, on the inputs "
                   "of --inputs DIR's archives")
    g.add_argument("--inputs", help="with --setting: the folder generate wrote")
    c = sub.add_parser("check")
    c.add_argument("--ulpgate", default="build/bin/ulpgate")
    c.add_argument("--dir", required=True)
    c.add_argument("--json")
    k = sub.add_parser("codes")
    k.add_argument("--dir", required=True)
    k.add_argument("--out", required=True)
    k.add_argument("--only")
    r = sub.add_parser("reveal")
    r.add_argument("--python-dir", default="build/python",
                   help="where the ulpgate Python package is built")
    r.add_argument("--k", default="64,128")
    t = sub.add_parser("settings")
    t.add_argument("--ulpgate", default="build/bin/ulpgate")
    t.add_argument("--dir", required=True)
    t.add_argument("--settings", help="a comma-separated subset of SETTINGS")
    t.add_argument("--only", help="op:dtype,... the archives to rerun (default: every one "
                   "whose compiled paths differ from eager)")
    t.add_argument("--json")
    args = parser.parse_args(argv)
    if args.command == "settings":
        return settings(args)
    if args.command == "codes":
        return codes(args)
    if args.command == "reveal":
        return reveal(args)
    if args.command == "generate":
        try:
            import numpy  # noqa: F401
            import torch  # noqa: F401
        except ImportError as e:
            print("compiled_peer: needs torch and numpy: %s" % e, file=sys.stderr)
            return 77
        return generate(args)
    return check(args)


if __name__ == "__main__":
    sys.exit(main())
