#!/usr/bin/env python3
"""ctest blas_iut: examples/iut/blas_iut.c over the reference BLAS (Debian's libblas3).

1. The protocol: blas_iut greets as version 3 and offers linear_fwd f32 sgemm; a reduce call
   answers y = x w^T + b computed here in the reference sgemm's order (for each output, the
   products rounded and added from 0 left to right, then the bias; each float32 operation
   the double result rounded to float32, which binary64's 53 bits make one rounding), through
   cblas_sgemm and through the Fortran sgemm_ (BLAS_IUT_FORTRAN); a call of another kernel or
   shape, and an elementwise call, are refused with the stream kept in step.
2. Through the IUT client: `ulpgate run --op linear_fwd --iut 'blas_iut LIB' --variant none`
   measures it, names sequential_unfused among the models it follows on every output and
   claims none; the JSON report says so.
Exit 77 (skipped) where the library is not installed.

usage: blas_iut_test.py ULPGATE BLAS_IUT LIBBLAS"""
import json
import os
import random
import struct
import subprocess
import sys

ulpgate, blas_iut, library = sys.argv[1:4]
if not os.path.exists(library):
    print("blas_iut: skipped: %s is not installed (apt-get install libblas3)" % library)
    sys.exit(77)
failures = []


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def pack(values):
    return struct.pack("<%df" % len(values), *values)


B, IN, OUT = 3, 41, 5
rng = random.Random(11)
x = [f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 10)) for _ in range(B * IN)]
w = [f32(rng.uniform(-1, 1) * 2.0 ** rng.randint(-10, 10)) for _ in range(OUT * IN)]
bias = [f32(rng.uniform(-1, 1)) for _ in range(OUT)]
want = []
for b in range(B):
    for o in range(OUT):
        acc = 0.0
        for k in range(IN):
            acc = f32(acc + f32(x[b * IN + k] * w[o * IN + k]))
        want.append(f32(acc + bias[o]))
# The same products summed in another order must differ somewhere, or the
# check could not tell the library's order from another.
backwards = []
for b in range(B):
    for o in range(OUT):
        acc = 0.0
        for k in reversed(range(IN)):
            acc = f32(acc + f32(x[b * IN + k] * w[o * IN + k]))
        backwards.append(f32(acc + bias[o]))
if pack(backwards) == pack(want):
    failures.append("the inputs do not tell the summation orders apart")
payload = pack(x) + pack(w) + pack(bias)
header = "reduce linear_fwd f32 blas sgemm 3 %d %d %d 3 %d %d %d %d\n" % (B, IN, OUT, B * IN, OUT * IN, OUT, B * OUT)

for fortran in (False, True):
    env = dict(os.environ)
    if fortran:
        env["BLAS_IUT_FORTRAN"] = "1"
    name = "sgemm_" if fortran else "cblas_sgemm"
    p = subprocess.Popen([blas_iut, library], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)

    def line():
        return p.stdout.readline().decode().rstrip("\n")

    said = [line() for _ in range(3)]
    if said != ["ulpgate-iut 3", "kernel blas linear_fwd f32 sgemm", "ready"]:
        failures.append("%s: greeting and offers %r" % (name, said))
    # Refused: another variant, the wrong output count, an elementwise call; then served.
    p.stdin.write(header.replace(" sgemm ", " dgemm ").encode() + payload)
    p.stdin.write(header.replace(" %d\n" % (B * OUT), " %d\n" % (B * OUT + 1)).encode() + payload)
    p.stdin.write(b"call sigmoid_bwd f32 blas x 2 3\n" + pack([0.0] * 6))
    p.stdin.write(header.encode() + payload)
    p.stdin.flush()
    for what in ("another variant", "another output count", "an elementwise call"):
        if not line().startswith("error "):
            failures.append("%s: %s was not refused" % (name, what))
    answer = line()
    if answer != "ok %d" % (B * OUT):
        failures.append("%s: answered %r" % (name, answer))
    else:
        got = p.stdout.read(4 * B * OUT)
        if got != pack(want):
            failures.append("%s: %r, the reference order gives %r" % (name, struct.unpack("<%df" % (B * OUT), got), want))
    p.stdin.write(b"quit\n")
    p.stdin.flush()
    if p.wait(timeout=10) != 0:
        failures.append("%s: did not end on quit" % name)

# 2. Through the IUT client.
run = subprocess.run([ulpgate, "run", "--op", "linear_fwd", "--variant", "none", "--shape", "4,100,6", "--n", "10",
                      "--quiet", "--iut", "%s %s" % (blas_iut, library), "--json", "-"],
                     capture_output=True, text=True, timeout=100)
if run.returncode != 0:
    failures.append("ulpgate run --iut: exit %d\n%s" % (run.returncode, run.stdout + run.stderr))
else:
    records = json.loads(run.stdout)["results"]
    if len(records) != 1 or records[0]["variant"] != "sgemm" or records[0]["target"] != "blas":
        failures.append("ulpgate run --iut: cases %r" % [(r["variant"], r["target"]) for r in records])
    else:
        c = records[0]["conformance"]
        if "sequential_unfused" not in c["matching"] or c["expected"] != "":
            failures.append("ulpgate run --iut: the reference BLAS's models %r" % c)

for f in failures:
    print("FAIL:", f)
print("blas_iut: %s" % ("FAIL" if failures else "ok"))
sys.exit(1 if failures else 0)
