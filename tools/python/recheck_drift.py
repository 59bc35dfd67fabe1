#!/usr/bin/env python3
"""Recomputes the reference (exact) run of an `ulpgate drift --json REPORT` independently.

Reads the scenario, the batch and the initial parameters recorded in the report
(binary32 values as hex floats), replays the training algorithm in Python's
decimal arithmetic at 60 significant digits (its own tanh and square root, no
MPFR, no ulpgate code), and compares every epoch's loss with the report's
reference losses: they must agree to 1e-9 relative.

Algorithm (as the report's scenario says): forward through linear (y = x W^T + b),
relu, tanh layers; loss = mean((y - target)^2); backward with 2/N rounded to
binary32; SAM: g = grad(w), s = rho / (||g||_2 + eps), gradients at w + s g,
then w -= lr * those; plain SGD: w -= lr * grad(w). ReLU'(0) = 0.

Usage: recheck_drift.py REPORT        exit 0 when every epoch agrees
"""
import argparse
import decimal
from decimal import Decimal
import json
import struct
import sys

decimal.getcontext().prec = 60
ONE = Decimal(1)


def f32(text):
    """A hex float (or decimal) string -> exact Decimal of the binary32 value."""
    x = float.fromhex(text) if "0x" in text.lower() else float(text)
    x = struct.unpack("<f", struct.pack("<f", x))[0]  # binary32 value, exact in double
    return Decimal(x)  # exact conversion of a double


def tanh(x):
    # tanh x = 1 - 2 / (e^{2x} + 1); for large |x| e^{2x} is huge but exact enough
    # at 60 digits.
    if x > 0:
        return ONE - 2 / ((2 * x).exp() + 1)
    return -(ONE - 2 / ((-2 * x).exp() + 1))


def forward(layers, x, params, batch):
    values = [x]
    li = 0
    for layer in layers:
        a = values[-1]
        if layer["type"] == "linear":
            n_in, n_out = layer["in"], layer["out"]
            w, b = params[2 * li], params[2 * li + 1]
            out = []
            for r in range(batch):
                for o in range(n_out):
                    s = sum(a[r * n_in + i] * w[o * n_in + i] for i in range(n_in))
                    out.append(s + b[o])
            li += 1
        elif layer["type"] == "relu":
            out = [v if v > 0 else Decimal(0) for v in a]
        else:
            out = [tanh(v) for v in a]
        values.append(out)
    return values


def loss_and_grads(layers, x, target, params, batch, two_over_n):
    values = forward(layers, x, params, batch)
    y = values[-1]
    n = len(y)
    diff = [y[i] - target[i] for i in range(n)]
    loss = sum(d * d for d in diff) / n
    grad = [two_over_n * d for d in diff]
    grads = [None] * len(params)
    li = sum(1 for l in layers if l["type"] == "linear")
    for k in range(len(layers) - 1, -1, -1):
        layer = layers[k]
        a_in, a_out = values[k], values[k + 1]
        if layer["type"] == "tanh":
            grad = [grad[i] * (ONE - a_out[i] * a_out[i]) for i in range(len(grad))]
        elif layer["type"] == "relu":
            grad = [grad[i] if a_in[i] > 0 else Decimal(0) for i in range(len(grad))]
        else:
            li -= 1
            n_in, n_out = layer["in"], layer["out"]
            w = params[2 * li]
            dw = [Decimal(0)] * (n_out * n_in)
            db = [Decimal(0)] * n_out
            dx = [Decimal(0)] * (batch * n_in)
            for r in range(batch):
                for o in range(n_out):
                    g = grad[r * n_out + o]
                    db[o] += g
                    for i in range(n_in):
                        dw[o * n_in + i] += g * a_in[r * n_in + i]
                        dx[r * n_in + i] += g * w[o * n_in + i]
            grads[2 * li], grads[2 * li + 1] = dw, db
            grad = dx
    return loss, grads


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", help="the JSON report of `ulpgate drift --json`")
    args = parser.parse_args(argv)
    try:
        with open(args.report) as f:
            report = json.load(f)
    except (OSError, ValueError) as error:
        print("recheck_drift: %s: %s" % (args.report, error), file=sys.stderr)
        return 2
    sc = report["scenario"]
    layers, batch = sc["layers"], sc["batch"]
    lr, rho, eps = f32(sc["lr"]), f32(sc["rho"]), f32(sc["eps"])
    x = [f32(v) for v in report["data"]["x"]]
    target = [f32(v) for v in report["data"]["target"]]
    names = report["initial_parameters"]["names"]
    params = [[f32(v) for v in report["initial_parameters"]["values"][name]] for name in names]
    n = len(target)
    two_over_n = f32(float.hex(struct.unpack("<f", struct.pack("<f", 2.0 / n))[0]))
    reported = report["reference"]["loss"]
    worst = 0.0
    worst_epoch = -1
    for epoch in range(len(reported)):
        loss, g = loss_and_grads(layers, x, target, params, batch, two_over_n)
        rel = abs(float(loss) - reported[epoch]) / max(abs(float(loss)), 1e-300)
        if rel > worst:
            worst, worst_epoch = rel, epoch
        step = g
        if sc["optimizer"] == "sam":
            norm = sum(v * v for t in g for v in t).sqrt()
            scale = rho / (norm + eps)
            adv = [[w + gi * scale for w, gi in zip(pt, gt)] for pt, gt in zip(params, g)]
            _, step = loss_and_grads(layers, x, target, adv, batch, two_over_n)
        params = [[w - lr * gi for w, gi in zip(pt, gt)] for pt, gt in zip(params, step)]
    ok = worst <= 1e-9
    print("recheck_drift: %d epochs of '%s': max relative loss difference %.3g (epoch %d): %s" % (
        len(reported), sc["name"], worst, worst_epoch, "agree" if ok else "DISAGREE"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
