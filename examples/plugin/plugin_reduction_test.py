#!/usr/bin/env python3
"""ctest plugin_reduction: reductions from plugins (ABI version 4) and IUTs (protocol version 3).

1. The protocol: ulpgate-iut answers `reduce linear_fwd f32 ...` for linear_plugin.c's kernels
   and for its own SCALAR kernels with the outputs computed here in float32, independently
   (one rounding per operation in the model's order); a call whose counts do not fit
   the shape is refused and the stream stays in step; a malformed line ends the IUT. (Each
   float32 operation here is the double result rounded to float32: binary64 holds more than
   2*24+2 bits, so that double rounding equals one rounding for + and *.)
2. `run --op linear_fwd --plugin` (through ulpgate-iut, the default, and --in-process): both
   example kernels follow the models they claim; the faulty build's crash is CRASHED, its
   overrun OUT OF BOUNDS (never measured, exit 3, a replay that reproduces the crash), and
   `mislabeled` is NOT CONFORMING to the fused model it claims, named by the model it follows.
3. `--iut 'ulpgate-iut --builtin --reductions'`: the built-in linear_fwd and mse_fwd kernels
   served through the protocol follow their targets' models, as in process.
4. Goldens: `golden bless --plugin` writes linear_example's linear_fwd goldens from the models
   its kernels claim, `golden check` runs them and matches; the same source rebuilt with
   contraction (liblinear_fused_as_example.so, an FMA per term, where the CPU has them)
   differs (exit 1); the faulty build's goldens (blessed from its claims) checked by running it
   report its crash and overrun as faults (exit 3).
5. Errors, one line and exit 2: a plugin of an unknown reduction op or model; a version 2 IUT
   that offers a reduction; a reduction plugin given to an elementwise op, or to `check` of a
   reduction (which reads its outputs from --outputs, as before).

usage: plugin_reduction_test.py ULPGATE ULPGATE_IUT PLUGIN_DIR WORK [goldens]
(with `goldens`: part 4 only, ctest plugin_reduction_goldens; without: the others)"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

ulpgate, iut, plugins, work = sys.argv[1:5]
goldens_only = sys.argv[5:6] == ["goldens"]
example = os.path.join(plugins, "liblinear_example.so")
faulty = os.path.join(plugins, "liblinear_faulty.so")
failures = []


def run(args, want_rc):
    p = subprocess.run([ulpgate] + args, capture_output=True, text=True, timeout=100)
    out = p.stdout + p.stderr
    if p.returncode != want_rc:
        failures.append("exit %d, not %d: ulpgate %s\n%s" % (p.returncode, want_rc, " ".join(args), out))
    return out


def expect(out, text, what):
    if text not in out:
        failures.append("%s: no %r in\n%s" % (what, text, out))


def row(out, variant, target):
    """The words of the models table's row of (variant, target)."""
    rows = [l.split() for l in out.splitlines() if l.split()[:2] == [variant, target]]
    return rows[-1] if rows else []


def goldens():
    # 4. Goldens.
    golden = os.path.join(work, "golden")
    subprocess.run(["rm", "-rf", work])
    os.makedirs(work)
    run(["golden", "bless", "--dir", golden, "--plugin", example], 0)
    if not os.path.exists(os.path.join(golden, "linear_example", "linear_fwd.json")):
        failures.append("golden bless --plugin wrote no linear_fwd goldens")
    out = run(["golden", "check", "--dir", golden, "--plugin", example], 0)
    expect(out, "1 files match, 0 differ", "golden check of the plugin that blessed them")
    with open("/proc/cpuinfo") as cpu:
        fma = " fma " in cpu.read().replace("\n", " ")
    if fma:
        out = run(["golden", "check", "--dir", golden, "--plugin", os.path.join(plugins, "liblinear_fused_as_example.so")], 1)
        expect(out, "0 files match, 1 differ", "golden check of the contracted rebuild")
    faulty_golden = os.path.join(work, "faulty")
    run(["golden", "bless", "--dir", faulty_golden, "--plugin", faulty], 0)
    out = run(["golden", "check", "--dir", faulty_golden, "--plugin", faulty], 3)
    expect(out, "CRASHED", "golden check of the crashing kernel")



def others():
    # 1. The protocol, against outputs computed here.
    B, IN, OUT = 3, 37, 4


    def f32(v):
        return struct.unpack("<f", struct.pack("<f", v))[0]


    rng = random.Random(7)
    x = [[f32(rng.gauss(0, 1)) for _ in range(IN)] for _ in range(B)]
    w = [[f32(rng.gauss(0, 1)) for _ in range(IN)] for _ in range(OUT)]
    bias = [f32(rng.gauss(0, 1)) for _ in range(OUT)]


    def sequential_unfused():
        y = []
        for b in range(B):
            for o in range(OUT):
                acc = 0.0
                for k in range(IN):
                    acc = f32(acc + f32(x[b][k] * w[o][k]))
                y.append(f32(acc + bias[o]))
        return y


    def pairwise():
        def cascade(xs, ws):
            n = len(xs)
            if n == 1:
                return f32(xs[0] * ws[0])
            left = 1
            while left * 2 < n:
                left *= 2
            return f32(cascade(xs[:left], ws[:left]) + cascade(xs[left:], ws[left:]))
        return [f32(cascade(x[b], w[o]) + bias[o]) for b in range(B) for o in range(OUT)]


    def pack(values):
        return struct.pack("<%df" % len(values), *values)


    want = {"sequential": sequential_unfused(), "pairwise": pairwise()}
    if pack(want["sequential"]) == pack(want["pairwise"]):
        failures.append("the two orders agree on every output here: the test could not tell them apart")

    env = {k: v for k, v in os.environ.items() if not k.startswith("ULPGATE_IUT_SHM")}
    p = subprocess.Popen([iut, "--plugin", example], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)


    def line():
        return p.stdout.readline().decode().rstrip("\n")


    if line() != "ulpgate-iut 3":
        failures.append("ulpgate-iut does not greet as version 3")
    offers = []
    while True:
        l = line()
        if l in ("ready", ""):
            break
        offers.append(l)
    for o in ("kernel linear_example linear_fwd f32 sequential sequential_unfused",
              "kernel linear_example linear_fwd f32 pairwise pairwise"):
        if o not in offers:
            failures.append("ulpgate-iut --plugin does not offer %r: %r" % (o, offers))
    payload = pack([v for r in x for v in r]) + pack([v for r in w for v in r]) + pack(bias)
    calls = [("linear_example", "sequential", want["sequential"]), ("linear_example", "pairwise", want["pairwise"]),
             ("SCALAR", "sequential_unfused", want["sequential"]), ("SCALAR", "pairwise", want["pairwise"])]
    for target, variant, y in calls:
        p.stdin.write(("reduce linear_fwd f32 %s %s 3 %d %d %d 3 %d %d %d %d\n"
                       % (target, variant, B, IN, OUT, B * IN, OUT * IN, OUT, B * OUT)).encode() + payload)
        p.stdin.flush()
        answer = line()
        if answer != "ok %d" % (B * OUT):
            failures.append("%s %s: answered %r" % (target, variant, answer))
            continue
        got = p.stdout.read(4 * B * OUT)
        if got != pack(y):
            failures.append("%s %s: outputs %r, computed here %r"
                            % (target, variant, struct.unpack("<%df" % (B * OUT), got), y))
    # Counts that are not the shape's: refused, the operands read, the stream in step.
    p.stdin.write(("reduce linear_fwd f32 linear_example sequential 3 %d %d %d 3 %d %d %d %d\n"
                   % (B, IN, OUT, B * IN, OUT * IN, OUT, B * OUT + 1)).encode() + payload)
    p.stdin.flush()
    expect(line(), "error linear_fwd gives %d outputs" % (B * OUT), "a call of the wrong output count")
    p.stdin.write(("reduce linear_fwd f32 linear_example sequential 3 %d %d %d 3 %d %d %d %d\n"
                   % (B, IN, OUT, B * IN, OUT * IN, OUT, B * OUT)).encode() + payload)
    p.stdin.flush()
    if line() != "ok %d" % (B * OUT):
        failures.append("the stream is out of step after a refused call")
    else:
        p.stdout.read(4 * B * OUT)
    p.stdin.write(b"reduce linear_fwd f32 linear_example sequential 3 1 2\n")
    p.stdin.flush()
    expect(line(), "error malformed request", "a malformed reduce line")
    if p.wait(timeout=10) != 2:
        failures.append("ulpgate-iut goes on after a malformed reduce line")

    # 2. Through the commands.
    common = ["run", "--op", "linear_fwd", "--shape", "4,33,5", "--n", "20", "--quiet"]
    for how in ([], ["--in-process"]):
        out = run(common + ["--plugin", example, "--variant", "none", "--require-conformance"] + how, 0)
        for variant, model in (("sequential", "sequential_unfused"), ("pairwise", "pairwise")):
            if row(out, variant, "linear_example")[2:5] != [model, model, "0"]:
                failures.append("%s %s: not following %s: %r" % (how, variant, model, row(out, variant, "linear_example")))
        out = run(common + ["--plugin", example] + how, 0)
        if not row(out, "sequential_unfused", "AVX2") and not row(out, "sequential_unfused", "SCALAR"):
            failures.append("the built-in variants are left out beside a plugin:\n" + out)

    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "r.json")
        out = run(common + ["--plugin", faulty, "--variant", "none", "--json", report], 3)
        expect(out, "CRASHED: linear_fwd crash (f32) on linear_faulty: SIGSEGV", "the crash")
        expect(out, "OUT OF BOUNDS: linear_fwd overrun (f32) on linear_faulty", "the overrun")
        expect(out, "NOT CONFORMING: mislabeled on linear_faulty", "the mislabeled kernel")
        if row(out, "mislabeled", "linear_faulty")[2:4] != ["sequential_unfused", "sequential_fused"]:
            failures.append("mislabeled: not named by the model it follows: %r" % row(out, "mislabeled", "linear_faulty"))
        results = {r["variant"]: r for r in json.load(open(report))["results"]}
        for variant, kind in (("crash", "crashed"), ("overrun", "out_of_bounds")):
            r = results.get(variant, {})
            if r.get("fault", {}).get("kind") != kind or "max_ulp" in r or "histogram" in r:
                failures.append("%s: the JSON record is not a fault alone: %r" % (variant, r))
        for variant in ("sequential", "pairwise", "mislabeled"):
            if "fault" in results.get(variant, {"fault": 1}):
                failures.append("%s: faulted or missing in the JSON report" % variant)
        replay = results.get("crash", {}).get("fault", {}).get("replay", "")
        if not replay.startswith("ulpgate run ") or "--plugin " + faulty not in replay:
            failures.append("crash: replay %r" % replay)
        else:
            out = run(replay.split()[1:-2], 3)  # without --dump -
            expect(out, "CRASHED: linear_fwd crash", "the replay of the crash")

    # 3. The built-in reductions through ulpgate-iut, as in process.
    served = "%s --builtin --reductions --targets SCALAR" % iut
    for op in ("linear_fwd", "mse_fwd"):
        shape = "4,33,5" if op == "linear_fwd" else "1000"
        out = run(["run", "--op", op, "--n", "10", "--shape", shape, "--quiet", "--target", "SCALAR", "--iut", served,
                   "--require-conformance"], 0)
        variants = [l.split()[0] for l in out.splitlines() if len(l.split()) > 2 and l.split()[1] == "SCALAR-iut"]
        if len(variants) < 8:  # both tables: every variant of the op twice
            failures.append("%s: the IUT's kernels are missing:\n%s" % (op, out))

    # 5. Errors.
    out = run(common + ["--plugin", os.path.join(plugins, "libbroken_v4_op.so")], 2)
    expect(out, "unknown op 'no_such_reduction'", "an unknown reduction op")
    out = run(common + ["--plugin", os.path.join(plugins, "libbroken_v4_model.so")], 2)
    expect(out, "unknown model 'sequential_sideways'", "an unknown model")
    out = run(common + ["--iut", "printf 'ulpgate-iut 2\\nkernel X linear_fwd f32 v\\nready\\n'; sleep 5"], 2)
    expect(out, "reductions need ulpgate-iut 3", "a version 2 IUT offering a reduction")
    out = run(["run", "--op", "sigmoid_bwd", "--n", "100", "--plugin", example], 2)
    expect(out, "gives linear_fwd kernels, not sigmoid_bwd", "a reduction plugin on an elementwise op")
    out = run(["check", "--op", "linear_fwd", "--inputs", "x.npz", "--outputs", "y.npz", "--plugin", example], 2)
    expect(out, "reads the outputs from --outputs", "check of a reduction with a reduction plugin")



if goldens_only:
    goldens()
else:
    others()

for f in failures:
    print("FAIL:", f)
print("plugin_reduction: %s" % ("FAIL" if failures else "ok"))
sys.exit(1 if failures else 0)
