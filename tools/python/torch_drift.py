#!/usr/bin/env python3
"""Trains an ulpgate drift scenario in PyTorch and writes its loss curve.

The scenario comes from `ulpgate drift --json REPORT`: the layers, the loss,
the optimizer and its constants, the batch (data.x, data.target) and the
initial parameters, every value a binary32 hex float, so that PyTorch starts
from exactly the numbers ulpgate's runs and its exact run start from. The
training is the reference SAM implementation's (github.com/davda54/sam, the
first_step / second_step of SAM over SGD): loss and gradients at w,
scale = rho / (||g||_2 + eps), w + g * scale, gradients there, back to w, the
SGD step; the recorded loss of an epoch is the loss at w before the step.

Precisions, as ulpgate names them:
  f32, bf16, f16        model, data and targets cast to the dtype (model.to),
                        SGD on parameters of that dtype;
  mixed_bf16, mixed_f16 f32 parameters and optimizer, the forward pass and the
                        loss under torch.autocast (no loss scaling).

The curve is written as JSON ({"label", "loss": [...], ...}; a NaN loss as
null) or, for a path ending in .csv, as "epoch,loss" rows, both of which
`ulpgate drift --compare FILE --label NAME` reads:

  ulpgate drift --scenario seed --json seed.json
  python3 tools/python/torch_drift.py seed.json --precision bf16 --device cuda \\
      --out torch_cuda_bf16.json
  ulpgate drift --scenario seed --dtype bf16 --compare torch_cuda_bf16.json --label torch-cuda-bf16

Needs PyTorch (not a dependency of ulpgate's build or tests).
"""
import argparse
import json
import math
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


def build(report, args, torch):
    s = report["scenario"]
    if s.get("loss", "mse") != "mse":
        sys.exit(f"unsupported loss {s['loss']!r}")
    layers, linear = [], 0
    names = report["initial_parameters"]["names"]
    values = report["initial_parameters"]["values"]
    for layer in s["layers"]:
        if layer["type"] == "linear":
            m = torch.nn.Linear(layer["in"], layer["out"])
            w = torch.tensor(hex_values(values[names[2 * linear]]), dtype=torch.float32)
            b = torch.tensor(hex_values(values[names[2 * linear + 1]]), dtype=torch.float32)
            with torch.no_grad():
                m.weight.copy_(w.reshape(layer["out"], layer["in"]))
                m.bias.copy_(b)
            layers.append(m)
            linear += 1
        elif layer["type"] == "relu":
            layers.append(torch.nn.ReLU())
        elif layer["type"] == "tanh":
            layers.append(torch.nn.Tanh())
        else:
            sys.exit(f"unsupported layer {layer['type']!r}")
    model = torch.nn.Sequential(*layers).to(args.device)
    batch = s["batch"]
    x = torch.tensor(hex_values(report["data"]["x"]), dtype=torch.float32).reshape(batch, -1)
    target = torch.tensor(hex_values(report["data"]["target"]), dtype=torch.float32).reshape(batch, -1)
    return model, x.to(args.device), target.to(args.device)


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
    model, x, target = build(report, args, torch)
    if not mixed:
        model = model.to(dtype)
        x, target = x.to(dtype), target.to(dtype)
    if args.compile:
        model = torch.compile(model)
    lr, rho, eps = (float.fromhex(s[k]) if isinstance(s[k], str) else float(s[k])
                    for k in ("lr", "rho", "eps"))
    sam = s.get("optimizer", "sam") == "sam"
    opt = SAM(model.parameters(), lr, rho, eps, torch) if sam else torch.optim.SGD(
        model.parameters(), lr=lr)
    device_type = "cuda" if str(args.device).startswith("cuda") else "cpu"

    def loss_at_w():
        if mixed:
            with torch.autocast(device_type=device_type, dtype=dtype):
                return torch.nn.functional.mse_loss(model(x), target)
        return torch.nn.functional.mse_loss(model(x), target)

    epochs = args.epochs or s["epochs"]
    losses = []
    for epoch in range(epochs):
        loss = loss_at_w()
        loss.backward()
        losses.append(float(loss.detach().float().cpu()))
        if sam:
            opt.first_step()
            loss_at_w().backward()
            opt.second_step()
        else:
            opt.step()
            opt.zero_grad()
        if args.progress and (epoch + 1) % 100 == 0:
            print(f"epoch {epoch + 1}/{epochs}: loss {losses[-1]:.9g}", file=sys.stderr)
    return losses, torch.__version__


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("report", help="an `ulpgate drift --json` report (its scenario, data and "
                                  "initial parameters)")
    p.add_argument("--precision", default="f32",
                   choices=["f32", "bf16", "f16", "mixed_bf16", "mixed_f16"])
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:1, ...")
    p.add_argument("--epochs", type=int, default=0, help="default: the scenario's")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--label", help="the curve's name (default: torch-DEVICE-PRECISION)")
    p.add_argument("--out", required=True, help="the curve: .json (default) or .csv")
    p.add_argument("--progress", action="store_true", help="a line per 100 epochs on stderr")
    args = p.parse_args()
    report = read_scenario(args.report)
    losses, version = train(report, args)
    label = args.label or f"torch-{args.device}-{args.precision}" + ("-compiled" if args.compile else "")
    if args.out.endswith(".csv"):
        with open(args.out, "w") as f:
            f.write("epoch,loss\n")
            for e, l in enumerate(losses):
                f.write(f"{e},{l!r}\n")
    else:
        with open(args.out, "w") as f:
            json.dump({"label": label, "scenario": report["scenario"].get("name"),
                       "precision": args.precision, "device": args.device,
                       "compiled": args.compile, "torch": version,
                       "loss": [l if math.isfinite(l) else None for l in losses]}, f, indent=1)
            f.write("\n")
    print(f"{label}: {len(losses)} epochs, final loss {losses[-1]:.9g} -> {args.out}")


if __name__ == "__main__":
    main()
