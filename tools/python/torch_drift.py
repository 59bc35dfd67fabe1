#!/usr/bin/env python3
"""Trains an ulpgate drift scenario in PyTorch and writes its loss curve, and with
--record-ops what each op of the first steps computed.

The scenario comes from `ulpgate drift --json REPORT`: the layers, the loss,
the optimizer and its constants, the batch (data.x, data.target) and the
initial parameters, every value a binary32 hex float, so that PyTorch starts
from exactly the numbers ulpgate's runs and its exact run start from. The
training is the reference SAM implementation's (github.com/davda54/sam, the
first_step / second_step of SAM over SGD): loss and gradients at w,
scale = rho / (||g||_2 + eps), w + g * scale, gradients there, back to w, the
SGD step; the recorded loss of an epoch is the loss at w before the step.

The loss and gradients of one pass are one step function: eager, autograd's
gradients of the network and the MSE loss (the kernels loss.backward() runs);
with --compile, torch.func.grad of the same function through torch.compile,
forward and backward in one graph, which Inductor fuses.
The step also differentiates with respect to a zero "probe" added to every
layer's output, so that the gradient flowing through each layer (what tanh
backward and the linear layer's backward read and write) comes out of the
same code, eager kernels or Inductor's fused loops, as an extra output. x + 0
is x for every x but -0, and the backward of the addition passes the gradient
on untouched, so the probes change no value the training computes (a -0
activation becomes +0). The optimizer (SGD, SAM's perturbation) runs eagerly
in both modes.

Precisions, as ulpgate names them:
  f32, bf16, f16        parameters, data and targets cast to the dtype, SGD on
                        parameters of that dtype;
  mixed_bf16, mixed_f16 f32 parameters and optimizer, the step under
                        torch.autocast (no loss scaling): the linear layers in
                        the 16-bit format, the MSE loss in f32.

The curve is written as JSON ({"label", "loss": [...], ...}; a NaN loss as
null) or, for a path ending in .csv, as "epoch,loss" rows, both of which
`ulpgate drift --compare FILE --label NAME` reads:

  ulpgate drift --scenario seed --json seed.json
  python3 tools/python/torch_drift.py seed.json --precision bf16 --out torch_bf16.json
  ulpgate drift --scenario seed --dtype bf16 --compare torch_bf16.json --label torch-bf16

--record-ops N (JSON curves only) keeps, for the first N calls of the step
function, each op's operands and outputs as the step computed them, one .npz
per op and layer in `ulpgate check`'s layout (docs/check.md: one float32 array
per operand, named as the op names it, holding values of the op's format, and
the output; a leading dimension of calls for the linear and MSE ops), in the
folder OUT.ops/ beside the curve; the curve's "ops" list names them, and
`drift --compare` matches each op's outputs against its models.

Needs PyTorch (not a dependency of ulpgate's build or tests).
"""
import argparse
import json
import math
import os
import sys


def hex_values(values):
    return [float.fromhex(v) if isinstance(v, str) else float(v) for v in values]


def read_scenario(path):
    with open(path) as f:
        report = json.load(f)
    for key in ("scenario", "data", "initial_parameters"):
        if key not in report:
            sys.exit(f"{path}: not an ulpgate drift report (no '{key}'); write one with "
                     "`ulpgate drift --json`")
    return report


def parameters(report, torch, device):
    """The layers' types and the initial parameters [W0, b0, W1, b1, ...] as f32 tensors."""
    s = report["scenario"]
    if s.get("loss", "mse") != "mse":
        sys.exit(f"unsupported loss {s['loss']!r}")
    names = report["initial_parameters"]["names"]
    values = report["initial_parameters"]["values"]
    params, linear = [], 0
    for layer in s["layers"]:
        if layer["type"] == "linear":
            w = torch.tensor(hex_values(values[names[2 * linear]]), dtype=torch.float32)
            b = torch.tensor(hex_values(values[names[2 * linear + 1]]), dtype=torch.float32)
            params += [w.reshape(layer["out"], layer["in"]).to(device), b.to(device)]
            linear += 1
        elif layer["type"] not in ("relu", "tanh"):
            sys.exit(f"unsupported layer {layer['type']!r}")
    batch = s["batch"]
    x = torch.tensor(hex_values(report["data"]["x"]), dtype=torch.float32).reshape(batch, -1)
    target = torch.tensor(hex_values(report["data"]["target"]), dtype=torch.float32).reshape(batch, -1)
    return s["layers"], params, x.to(device), target.to(device)


class Step:
    """loss and gradients of the parameters at w (and, for --record-ops, every layer's
    forward output and the gradient flowing into it), from one function that is eager or
    torch.compile'd whole."""

    def __init__(self, torch, layers, compute_dtype, mixed, device_type, compile):
        import torch.nn.functional as F
        self.torch = torch
        self.layers = layers
        self.mixed = mixed
        self.compute_dtype = compute_dtype

        def network(params, probes, x, target):
            outputs = []
            h, linear = x, 0
            for i, layer in enumerate(layers):
                if layer["type"] == "linear":
                    h = F.linear(h, params[2 * linear], params[2 * linear + 1])
                    linear += 1
                elif layer["type"] == "relu":
                    h = F.relu(h)
                else:
                    h = torch.tanh(h)
                h = h + probes[i]
                outputs.append(h)
            if mixed:
                # autocast runs mse_loss in f32: the cast it would make, made here so that
                # the gradient of the f32 loss input is seen before its cast back.
                h = h.float() + probes[len(layers)]
            loss = F.mse_loss(h, target)
            return loss, (loss, outputs)

        def autocast():
            return (torch.autocast(device_type=device_type, dtype=compute_dtype) if mixed
                    else _Null())

        if compile:
            # torch.func.grad traces into the graph torch.compile hands Inductor whole.
            grad = torch.func.grad(network, argnums=(0, 1), has_aux=True)

            def step(params, probes, x, target):
                with autocast():
                    (gp, gprobe), (loss, outputs) = grad(params, probes, x, target)
                return loss, gp, gprobe, outputs

            self.fn = torch.compile(step)
        else:
            # Eager: autograd itself, the kernels loss.backward() runs (and a PyTorch
            # without torch.func, Debian's 1.13, runs it too).
            def step(params, probes, x, target):
                leaves = [t.detach().requires_grad_(True) for t in list(params) + list(probes)]
                with torch.enable_grad(), autocast():
                    loss, (_, outputs) = network(leaves[:len(params)], leaves[len(params):], x, target)
                grads = torch.autograd.grad(loss, leaves)
                return (loss.detach(), grads[:len(params)], grads[len(params):],
                        [o.detach() for o in outputs])

            self.fn = step
        self.probes = None

    def __call__(self, params, x, target):
        torch = self.torch
        if self.probes is None:
            # The probes take each layer output's dtype: the shape of the first call.
            shapes = self._output_shapes(params, x)
            self.probes = [torch.zeros(shape, dtype=dtype, device=x.device) for shape, dtype in shapes]
        return self.fn(params, self.probes, x, target)

    def _output_shapes(self, params, x):
        torch = self.torch
        shapes = []
        with torch.no_grad():
            ctx = (torch.autocast(device_type=x.device.type, dtype=self.compute_dtype)
                   if self.mixed else _Null())
            with ctx:
                h, linear = x, 0
                for layer in self.layers:
                    if layer["type"] == "linear":
                        h = torch.nn.functional.linear(h, params[2 * linear], params[2 * linear + 1])
                        linear += 1
                    elif layer["type"] == "relu":
                        h = torch.relu(h)
                    else:
                        h = torch.tanh(h)
                    shapes.append((tuple(h.shape), h.dtype))
            if self.mixed:
                shapes.append((tuple(h.shape), torch.float32))
        return shapes


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


class SAM:
    """The reference SAM's two steps (davda54/sam, adaptive=False) over torch.optim.SGD."""

    def __init__(self, params, lr, rho, eps, torch):
        self.torch = torch
        self.params = list(params)
        self.rho, self.eps = rho, eps
        self.base = torch.optim.SGD(self.params, lr=lr)
        self.old = {}

    def grad_norm(self):
        torch = self.torch
        device = self.params[0].device
        return torch.norm(torch.stack([p.grad.norm(p=2).to(device) for p in self.params
                                       if p.grad is not None]), p=2)

    def first_step(self):
        torch = self.torch
        with torch.no_grad():
            grad_norm = self.grad_norm()
            scale = self.rho / (grad_norm + self.eps)
            for p in self.params:
                if p.grad is None:
                    continue
                self.old[p] = p.data.clone()
                e_w = 1.0 * p.grad * scale.to(p)
                p.add_(e_w)
        self.base.zero_grad()

    def second_step(self):
        with self.torch.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                p.data = self.old[p]
        self.base.step()
        self.base.zero_grad()


# Inductor settings whose run is an experiment on the compiled one, with the cause of a
# difference from eager (ulpgate's words) each removes: emulate_precision_casts rounds
# every intermediate of a fused loop to its dtype, as eager's ops round their outputs.
EXPERIMENTS = {"emulate_precision_casts": "fusion"}

FORMAT_NAMES = {"torch.float32": "f32", "torch.bfloat16": "bf16", "torch.float16": "f16"}


class OpRecorder:
    """Each op's operands and outputs over the first `calls` calls of the step, as
    `ulpgate check` reads them: per op and layer, arrays of float32 holding values of
    the op's format (the dtype the tensors had)."""

    def __init__(self, torch, layers, calls, mixed, compute_dtype):
        self.torch, self.layers, self.calls = torch, layers, calls
        self.mixed, self.compute_dtype = mixed, compute_dtype
        self.ops = {}  # (op, layer) -> {"dtype", "arrays": {name: [per call]}, "output"}
        self.done = 0

    def add(self, op, layer, dtype, output, arrays):
        entry = self.ops.setdefault((op, layer), {"dtype": dtype, "output": output, "arrays": {}})
        for name, t in arrays.items():
            entry["arrays"].setdefault(name, []).append(
                t.detach().to("cpu", self.torch.float32).numpy().copy())

    def record(self, params, x, target, loss, gparams, gprobes, outputs):
        if self.done >= self.calls:
            return
        self.done += 1
        torch = self.torch
        fmt = lambda t: FORMAT_NAMES[str(t.dtype)]
        inputs = []  # each layer's input, as the layer reads it
        h, linear = x, 0
        for i, layer in enumerate(self.layers):
            out, dout = outputs[i], gprobes[i]
            if layer["type"] == "linear":
                w, b = params[2 * linear], params[2 * linear + 1]
                dw, db = gparams[2 * linear], gparams[2 * linear + 1]
                if self.mixed:
                    # autocast's casts: what the linear kernel reads (and its gradients are
                    # the cast's backward of 16-bit values: exact in f32).
                    h, w, b = (v.to(self.compute_dtype) for v in (h, w, b))
                d = fmt(out)
                self.add("linear_fwd", i, d, "y", {"x": h, "w": w, "b": b, "y": out})
                self.add("linear_bwd_weight", i, d, "dw", {"dy": dout, "x": h, "dw": dw})
                self.add("linear_bwd_bias", i, d, "db", {"dy": dout, "db": db})
                if i > 0:
                    self.add("linear_bwd_input", i, d, "dx", {"dy": dout, "w": w, "dx": gprobes[i - 1]})
                linear += 1
            elif layer["type"] == "tanh" and i > 0:
                self.add("tanh_bwd", i, fmt(out), "out",
                         {"grad": dout, "t": out, "out": gprobes[i - 1]})
            h = out
        y, dy = h, gprobes[len(self.layers) - 1]
        if self.mixed:
            y, dy = h.float(), gprobes[len(self.layers)]
        # The MSE ops take their operands as vectors: the batch's outputs, row-major.
        y, target, dy = (t.reshape(-1) for t in (y, target, dy))
        self.add("mse_fwd", len(self.layers), fmt(y), "loss", {"y": y, "target": target, "loss": loss})
        self.add("mse_bwd", len(self.layers), fmt(y), "dy", {"y": y, "target": target, "dy": dy})

    def write(self, folder, base):
        import numpy as np
        os.makedirs(folder, exist_ok=True)
        manifest = []
        for (op, layer), entry in sorted(self.ops.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            name = f"{op}_{layer}.npz"
            arrays = {}
            for k, v in entry["arrays"].items():
                # tanh_bwd is elementwise: one flat array per operand; the others keep a
                # leading dimension of calls.
                arrays[k] = (np.concatenate([a.reshape(-1) for a in v]) if op == "tanh_bwd"
                             else np.stack(v))
            np.savez_compressed(os.path.join(folder, name), **arrays)
            manifest.append({"op": op, "layer": layer, "dtype": entry["dtype"],
                             "file": os.path.relpath(os.path.join(folder, name), base),
                             "output": entry["output"], "calls": len(next(iter(entry["arrays"].values())))})
        return manifest


def train(report, args):
    try:
        import torch
    except ImportError:
        sys.exit("torch_drift.py needs PyTorch (pip install torch); ulpgate itself does not")
    torch.manual_seed(0)
    s = report["scenario"]
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    mixed = args.precision.startswith("mixed_")
    dtype = dtypes[args.precision[len("mixed_"):] if mixed else args.precision]
    layers, params, x, target = parameters(report, torch, args.device)
    if not mixed:
        params = [p.to(dtype) for p in params]
        x, target = x.to(dtype), target.to(dtype)
    params = [p.clone().requires_grad_(False) for p in params]
    lr, rho, eps = (float.fromhex(s[k]) if isinstance(s[k], str) else float(s[k])
                    for k in ("lr", "rho", "eps"))
    sam = s.get("optimizer", "sam") == "sam"
    opt = SAM(params, lr, rho, eps, torch) if sam else torch.optim.SGD(params, lr=lr)
    device_type = "cuda" if str(args.device).startswith("cuda") else "cpu"
    step = Step(torch, layers, dtype, mixed, device_type, args.compile)
    recorder = OpRecorder(torch, layers, args.record_ops, mixed, dtype) if args.record_ops else None

    def loss_and_grads():
        with torch.no_grad():
            loss, gparams, gprobes, outputs = step(params, x, target)
        if recorder:
            recorder.record(params, x, target, loss, gparams, gprobes, outputs)
        for p, g in zip(params, gparams):
            p.grad = g.clone()
        return loss

    epochs = args.epochs or s["epochs"]
    losses = []
    for epoch in range(epochs):
        loss = loss_and_grads()
        losses.append(float(loss.detach().float().cpu()))
        if sam:
            opt.first_step()
            loss_and_grads()
            opt.second_step()
        else:
            opt.step()
            opt.zero_grad()
        if args.progress and (epoch + 1) % 100 == 0:
            print(f"epoch {epoch + 1}/{epochs}: loss {losses[-1]:.9g}", file=sys.stderr)
    return losses, torch, recorder


def provenance(torch):
    import platform
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info = {"torch": torch.__version__, "python": platform.python_version(), "cpu": cpu}
    if hasattr(torch.backends, "cpu") and hasattr(torch.backends.cpu, "get_cpu_capability"):
        info["cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    return info


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", help="an `ulpgate drift --json` report (its scenario, data and "
                                  "initial parameters)")
    p.add_argument("--precision", default="f32",
                   choices=["f32", "bf16", "f16", "mixed_bf16", "mixed_f16"])
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, ...")
    p.add_argument("--epochs", type=int, default=0, help="default: the scenario's")
    p.add_argument("--compile", action="store_true", help="torch.compile the step function")
    p.add_argument("--inductor", action="append", default=[], metavar="KEY=VALUE",
                   help="set torch._inductor.config.KEY (an experiment on the compiled run: "
                        "emulate_precision_casts=1 rounds every intermediate as eager does)")
    p.add_argument("--label", help="the curve's name (default: torch-DEVICE-PRECISION)")
    p.add_argument("--out", required=True, help="the curve: .json (default) or .csv")
    p.add_argument("--record-ops", type=int, default=0, metavar="N",
                   help="keep every op's operands and outputs for the first N calls of the step "
                        "(two per epoch with SAM) in OUT.ops/ (a JSON curve only)")
    p.add_argument("--progress", action="store_true", help="a line per 100 epochs on stderr")
    args = p.parse_args()
    if args.record_ops and args.out.endswith(".csv"):
        p.error("--record-ops names its files in the JSON curve: give --out a .json path")
    report = read_scenario(args.report)
    if args.inductor:
        import torch._inductor.config as inductor_config
        for setting in args.inductor:
            key, _, value = setting.partition("=")
            if not hasattr(inductor_config, key):
                p.error(f"--inductor {setting}: torch._inductor.config has no {key}")
            old = getattr(inductor_config, key)
            setattr(inductor_config, key, type(old)(int(value)) if isinstance(old, (bool, int))
                    else type(old)(value))
    losses, torch, recorder = train(report, args)
    label = args.label or f"torch-{args.device}-{args.precision}" + ("-compiled" if args.compile else "")
    if args.out.endswith(".csv"):
        with open(args.out, "w") as f:
            f.write("epoch,loss\n")
            for e, l in enumerate(losses):
                f.write(f"{e},{l!r}\n")
    else:
        curve = {"label": label, "scenario": report["scenario"].get("name"),
                 "precision": args.precision, "device": args.device,
                 "compiled": args.compile, **provenance(torch)}
        if args.inductor:
            curve["inductor_config"] = args.inductor
            removes = {EXPERIMENTS[k.partition("=")[0]] for k in args.inductor
                       if k.partition("=")[0] in EXPERIMENTS and k.partition("=")[2] not in ("0", "")}
            if args.compile and len(removes) == 1:
                curve["experiment"] = {"setting": "torch._inductor.config." + ", ".join(args.inductor),
                                       "removes": removes.pop()}
        if recorder:
            stem = args.out[:-len(".json")] if args.out.endswith(".json") else args.out
            curve["ops"] = recorder.write(stem + ".ops", os.path.dirname(os.path.abspath(args.out)))
        curve["loss"] = [l if math.isfinite(l) else None for l in losses]
        with open(args.out, "w") as f:
            json.dump(curve, f, indent=1)
            f.write("\n")
    print(f"{label}: {len(losses)} epochs, final loss {losses[-1]:.9g} -> {args.out}")


if __name__ == "__main__":
    main()
