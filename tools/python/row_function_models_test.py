#!/usr/bin/python3
"""The model language's exp programs of row_function_models.py (NumPy's AVX512F expf,
YNNPACK's expf), evaluated by model_language.py, bit for bit against row_models.py's numpy
on every z = RN(x - max(row)) of suites/peer/jax-0.10.2-cpu's softmax_fwd_f32 and
log_softmax_fwd_f32 and on a sweep of [-110, 90] with the clamp edges; with --ulpgate,
ulpgate's own evaluator on the same values (`ulpgate check --require-model`, the program's
z as silu_bwd's operand x); and model_language.py's scalb on hand-computed values.

    row_function_models_test.py [--ulpgate build/bin/ulpgate] [--work DIR]

Exit 0 when all agree, 1 otherwise; 77 (a ctest skip) without numpy or mpmath.
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77


def scalb_cases():
    """model_language.py's scalb against values computed by hand: the number of
    failures."""
    import binary32_exact as bx
    import model_language
    failures = 0
    cases = [
        # (a, n, a*2^n rounded once to binary32, as bits)
        ("1.5", "3", 0x41400000),            # 12
        ("12", "-3", 0x3FC00000),            # 1.5
        ("-1", "-126", 0x80800000),          # -2^-126, the smallest normal
        ("1.5", "-150", 0x00000001),         # 0.75 * 2^-149 rounds up to 2^-149
        ("1", "-150", 0x00000000),           # 2^-150, a tie, to the even +0
        ("-1", "-150", 0x80000000),          # and -0
        ("0x1.fffffep-1", "-126", 0x00800000),  # 2^-126 - 2^-150: the tie goes to 2^-126
        ("1", "128", 0x7F800000),            # overflow
        ("-1.5", "200", 0xFF800000),
        ("0x1p-149", "149", 0x3F800000),
        ("1", "0.5", 0x7FC00000),            # n no integer: NaN
    ]
    for a, n, want in cases:
        program = model_language.parse("out = scalb(a, n)")
        out, _ = program.evaluate({"a": bx.parse(a), "n": bx.parse(n)}, bx.F32, [])
        if bx.bits(out) != want:
            print("scalb(%s, %s): 0x%08x, want 0x%08x" % (a, n, bx.bits(out), want))
            failures += 1
    # Inside a model, before the output's rounding: 3*2^-135 is 2^-133 in bf16, so
    # scaled back it is 4.
    program = model_language.parse("working bf16; s = scalb(a, n); out = scalb(s, -n)")
    out, _ = program.evaluate({"a": bx.parse("3"), "n": bx.parse("-135")}, bx.F32, [])
    if bx.bits(out) != 0x40800000:
        print("bf16 scalb(scalb(3, -135), 135): 0x%08x, want 4" % bx.bits(out))
        failures += 1
    print("scalb: %d of %d hand-computed cases hold" % (len(cases) + 1 - failures, len(cases) + 1))
    return failures


def ulpgate_agrees(ulpgate, work):
    """`ulpgate check` of each program against row_models.py's values (those it can
    evaluate), every output required to be the program's: the number of programs that
    fail."""
    import numpy as np
    import row_function_models as rfm
    sys.path.insert(0, HERE)
    import row_models
    os.makedirs(work, exist_ok=True)
    zs = np.concatenate([z for _, z in rfm.z_values(np)])
    failures = 0
    for name, text, reference in (("numpy", rfm.NUMPY_EXPF_AVX512F, row_models.numpy_expf_avx512f),
                                  ("ynnpack", rfm.YNNPACK_EXPF, row_models.ynn_expf)):
        bits = rfm.reference_bits(np, reference, zs)
        keep = np.array([b is not None for b in bits])
        out = np.array([b for b in bits if b is not None], np.uint32).view(np.float32)
        path = os.path.join(work, name + ".npz")
        np.savez(path, grad=np.ones(int(keep.sum()), np.float32), x=zs[keep], out=out)
        # silu_bwd's operands are grad and x: z is x, and no name of the program may be x.
        model = re.sub(r"\bz\b", "x", text)
        cmd = [ulpgate, "check", "--op", "silu_bwd", "--dtype", "f32", "--inputs", path,
               "--outputs", path + ":out", "--model", name + ": " + model, "--require-model", name,
               "--quiet"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        print("ulpgate check --require-model %s on %d z: exit %d" % (name, int(keep.sum()), run.returncode))
        if run.returncode != 0:
            print(run.stdout[-3000:] + run.stderr[-3000:])
            failures += 1
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ulpgate", help="also hold ulpgate's evaluator to the same values")
    ap.add_argument("--work", default="row_function_models_work")
    args = ap.parse_args()
    try:
        import numpy  # noqa: F401
        import mpmath  # noqa: F401
    except ImportError as e:
        print("SKIP: %s (row_models.py needs numpy, model_language.py mpmath)" % e)
        return SKIP
    import row_function_models
    failures = scalb_cases()
    differ, unevaluated = row_function_models.check()
    for d in differ[:20]:
        print("%s %s: z bits 0x%08x, model 0x%08x, row_models 0x%08x" % d)
    # row_models.py's ynn_expf cannot take 2^128 (z above about 88.38); the model
    # overflows there as the kernel's exponent does. Listed, not held.
    if unevaluated:
        print("%d z left out: row_models.py cannot evaluate them" % len(unevaluated))
    if args.ulpgate:
        failures += ulpgate_agrees(args.ulpgate, args.work)
    return 1 if failures or differ else 0


if __name__ == "__main__":
    sys.exit(main())
