#!/usr/bin/env python3
"""ctest cuda_iut: ulpgate-iut-cuda where no GPU runs it, and its host twin.

1. It starts, greets (protocol version 3), offers the kernels of every
   elementwise op, cast and cuBLAS GEMM, each tanh_bwd/sigmoid_bwd kernel with
   its claimed model, and `ready`.
2. Without a GPU it refuses a call with "error no CUDA device: <the runtime's
   words>", keeps the stream in step (a second call is answered too) and ends
   with `quit`; `ulpgate run` through it reports the case REFUSED (exit 3),
   never measured.
3. --host runs the same sequence templates and the CUDA headers' host
   conversions on the CPU: every tanh_bwd and sigmoid_bwd kernel in f32, bf16
   and f16 and every FP8 cast from f32, bf16 and f16 follows the model it
   claims bit for bit (`run --require-conformance`), and FP6 rn does not follow
   nearest_even.saturate (the headers give +MAXNORM for a NaN), which is why
   it claims none; golden check of golden/cuda on the twin matches, and with
   the device IUT where no GPU runs every case is REFUSED (exit 3).
4. The device kernels themselves: only on a GPU (ci/device.sh). Where one is
   present this exits 77 after 1 and 3, saying so; where none is, it exits 77
   after the checks above too, naming what was not run.
"""
import argparse
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import exact_casts  # noqa: E402  (the independent cast oracle: Python integers only)


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iut", required=True)
    p.add_argument("--ulpgate", required=True)
    p.add_argument("--golden", required=True, help="golden/cuda")
    a = p.parse_args()

    # 1 and 2: the offer, and a refusal (or an answer) on the pipes.
    request = b"call tanh_bwd f32 %s mulsub 2 2\n" + struct.pack("<4f", 1.0, 2.0, 0.5, 0.25)
    probe = subprocess.run([a.iut], input=b"quit\n", capture_output=True, timeout=60)
    lines = probe.stdout.decode().splitlines()
    if probe.returncode != 0 or not lines or lines[0] != "ulpgate-iut 3" or lines[-1] != "ready":
        fail(f"no greeting and ready (exit {probe.returncode}): {lines[:3]} ... {lines[-1:]}")
    offers = [l.split() for l in lines if l.startswith("kernel ")]
    target = offers[0][1]
    claims = {(o[2], o[3], o[4]): (o[5] if len(o) > 5 else "") for o in offers}
    for key, model in [(("tanh_bwd", "f32", "mac"), "mac_fused"),
                       (("tanh_bwd", "bf16", "mulsub_opmath_hwy"), "mulsub_opmath_truncating"),
                       (("sigmoid_bwd", "f16", "torch_per_op"), "torch_per_op"),
                       (("silu_bwd", "f32", "torch"), ""),
                       (("cast_f32", "float8_e4m3fn", "satfinite"), "nearest_even.saturate"),
                       (("cast_bf16", "float6_e2m3fn", "rn"), ""),
                       (("linear_fwd", "bf16", "cublas_bf16"), "")]:
        if claims.get(key) != model:
            fail(f"offer {key}: claims {claims.get(key)!r}, expected {model!r}")
    ops = {o[2] for o in offers}
    for op in ["tanh_bwd", "sigmoid_bwd", "silu_bwd", "gelu_bwd", "gelu_tanh_bwd", "cast_f32",
               "cast_bf16", "cast_f16", "linear_fwd"]:
        if op not in ops:
            fail(f"no {op} kernel offered")
    print(f"offers {len(offers)} kernels as {target}")
    no_device = "no CUDA device" in probe.stderr.decode()
    if no_device:
        r = subprocess.run([a.iut], input=request.replace(b"%s", target.encode()) * 2 + b"quit\n",
                           capture_output=True, timeout=60)
        answers = [l for l in r.stdout.decode().splitlines() if l.startswith(("error", "ok"))]
        if r.returncode != 0 or len(answers) != 2 or not all(
                l.startswith("error no CUDA device: ") for l in answers):
            fail(f"without a GPU two calls should be refused naming why (exit {r.returncode}): {answers}")
        print("refuses: " + answers[0])
        run = subprocess.run([a.ulpgate, "run", "--op", "tanh_bwd", "--variant", "none", "--n", "50",
                              "--quiet", "--kernel-timeout", "10", "--iut", a.iut],
                             capture_output=True, text=True, timeout=120)
        if run.returncode != 3 or "REFUSED" not in run.stdout + run.stderr or \
                "no CUDA device" not in run.stdout + run.stderr:
            fail(f"ulpgate run through it without a GPU: exit {run.returncode}, expected 3 with "
                 f"REFUSED and the reason:\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
        print("ulpgate run: REFUSED, exit 3")
        # golden/cuda's check with the device IUT where none runs: every case a
        # refusal naming why (exit 3), never a pass.
        g = subprocess.run([a.ulpgate, "golden", "check", "--dir", a.golden, "--iut",
                            a.iut + " --target CUDA_SM90 --claimed-only"],
                           capture_output=True, text=True, timeout=300)
        if g.returncode != 3 or "REFUSED (no CUDA device" not in g.stdout or " ok " in g.stdout:
            fail(f"golden check of {a.golden} without a GPU: exit {g.returncode}, expected 3 with "
                 f"every case REFUSED:\n{g.stdout[-2000:]}{g.stderr[-1000:]}")
        print(f"golden check of {a.golden} without a GPU: every case REFUSED, exit 3")

    # --selftest (device against twin, no protocol): refused without a GPU (77, saying
    # why); on the twin against itself every kernel and cast agrees and is listed.
    if no_device:
        r = subprocess.run([a.iut, "--selftest", "10"], capture_output=True, text=True, timeout=60)
        if r.returncode != 77 or "no CUDA device" not in r.stdout:
            fail(f"--selftest without a GPU: exit {r.returncode}, expected 77 naming why: {r.stdout}")
    r = subprocess.run([a.iut, "--host", "--selftest", "300"], capture_output=True, text=True, timeout=60)
    rows = [l for l in r.stdout.splitlines() if l.startswith(("ok ", "FAIL"))]
    if r.returncode != 0 or len(rows) != len(offers) - 4 or "0 claimed kernels differ" not in r.stdout:
        fail(f"--host --selftest: exit {r.returncode}, {len(rows)} rows for {len(offers) - 4} kernels:\n"
             f"{r.stdout[-1500:]}")
    print(f"--selftest: refused without a GPU; the twin against itself: {len(rows)} kernels agree")

    # 3: the host twin holds the claims.
    twin = a.iut + " --host"
    # A reduce request is read whole and refused there (cuBLAS runs on the device only),
    # and the stream stays in step: the call after it is answered.
    x = struct.pack("<4f", 1, 2, 3, 4)
    reduce = b"reduce linear_fwd f32 CUDA_HOST_TWIN cublas_f32 3 2 2 2 3 4 4 2 4\n" + x + x + x[:8]
    r = subprocess.run([a.iut, "--host"], input=reduce + request.replace(b"%s", b"CUDA_HOST_TWIN") + b"quit\n",
                       capture_output=True, timeout=60)
    tail = r.stdout.split(b"ready\n", 1)[-1]
    if not tail.startswith(b"error cuBLAS does not run on the host") or b"\nok 2\n" not in tail:
        fail(f"host twin: a reduce request then a call: {tail[:200]!r}")
    out = struct.unpack("<2f", tail.split(b"ok 2\n", 1)[1][:8])
    if out != (1.0 * (1 - 0.5 * 0.5), 2.0 * (1 - 0.25 * 0.25)):
        fail(f"host twin tanh_bwd mulsub of (1, 0.5), (2, 0.25): {out}")
    print("host twin: reduce refused in step, then tanh_bwd mulsub answered")
    checks = [(op, dt) for op in ["tanh_bwd", "sigmoid_bwd"] for dt in ["f32", "bf16", "f16"]]
    checks += [(f"cast_{src}", dest) for src in ["f32", "bf16", "f16"]
               for dest in ["float8_e4m3fn", "float8_e5m2"]]
    for op, dtype in checks:
        r = subprocess.run([a.ulpgate, "run", "--op", op, "--dtype", dtype, "--variant", "none",
                            "--n", "2000", "--quiet", "--require-conformance", "--iut", twin],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail(f"host twin {op} {dtype} leaves a claimed model (exit {r.returncode}):\n"
                 f"{r.stdout[-3000:]}{r.stderr[-2000:]}")
        print(f"host twin {op} {dtype}: every kernel follows its claim")
    # golden/cuda holds what the claimed models give: the twin gives it too.
    g = subprocess.run([a.ulpgate, "golden", "check", "--dir", a.golden, "--iut",
                        twin + " --target CUDA_SM90 --claimed-only"],
                       capture_output=True, text=True, timeout=300)
    if g.returncode != 0:
        fail(f"golden check of {a.golden} on the host twin: exit {g.returncode}\n{g.stdout[-3000:]}")
    print(f"golden check of {a.golden} on the host twin: every file matches")
    r = subprocess.run([a.ulpgate, "run", "--op", "cast_f32", "--dtype", "float6_e2m3fn", "--variant",
                        "rn", "--n", "200", "--quiet", "--iut", twin],
                       capture_output=True, text=True, timeout=120)
    if "nan -> 0x1f" not in r.stdout:
        fail("host twin cast_f32 -> float6_e2m3fn rn: expected NaN -> 0x1f (+MAXNORM) off every "
             "policy:\n" + r.stdout[-2000:])
    print("host twin FP6 rn: NaN -> +MAXNORM, no policy (claims none)")

    # The same claims rechecked by exact_casts.py, which shares no code with ulpgate: the
    # twin's codes for random bit patterns of each source (NaNs and infinities among them)
    # follow the claimed policy, and FP6/FP4 rn follow nearest_even.saturate on every
    # input but the NaNs.
    rng = random.Random(7)
    for source, bits in [("f32", 32), ("bf16", 16), ("f16", 16)]:
        codes = [rng.getrandbits(bits) for _ in range(3000)]
        codes += [0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000] if bits == 32 else \
            ([0x7f80, 0xff80, 0x7fc0, 0xffc0] if source == "bf16" else [0x7c00, 0xfc00, 0x7e00, 0xfe00])
        data = struct.pack(f"<{len(codes)}{'I' if bits == 32 else 'H'}", *codes)
        for dest, variant, policy in [("float8_e4m3fn", "satfinite", "nearest_even.saturate"),
                                      ("float8_e4m3fn", "nosat", "nearest_even.nan"),
                                      ("float8_e5m2", "satfinite", "nearest_even.saturate"),
                                      ("float8_e5m2", "nosat", "nearest_even.infinity"),
                                      ("float6_e2m3fn", "rn", None), ("float4_e2m1fn", "rn", None)]:
            call = f"call cast_{source} {dest} CUDA_HOST_TWIN {variant} 1 {len(codes)}\n".encode()
            r = subprocess.run([a.iut, "--host"], input=call + data + b"quit\n", capture_output=True,
                               timeout=60)
            answer = r.stdout.split(b"ready\n", 1)[-1]
            head = f"ok {len(codes)}\n".encode()
            if not answer.startswith(head):
                fail(f"host twin cast_{source} {dest} {variant}: {answer[:100]!r}")
            out = list(answer[len(head):len(head) + len(codes)])
            fmt = exact_casts.FORMATS[source]
            if policy is not None:
                matched, lines = exact_casts.match(source, dest, codes, out, names=[policy])
                if matched != [policy]:
                    fail(f"exact_casts.py: cast_{source} {dest} {variant} does not follow {policy}:\n" +
                         "\n".join(lines))
            else:
                keep = [i for i, c in enumerate(codes) if exact_casts.decode_source(source, c)[0] != "nan"]
                matched, lines = exact_casts.match(source, dest, [codes[i] for i in keep], [out[i] for i in keep],
                                                   names=["nearest_even.saturate"])
                nans = [out[i] for i, c in enumerate(codes) if fmt.is_nan(c)]
                maxnorm = max(c for c in range(1 << exact_casts.FORMATS[dest].bits)
                              if c < (1 << (exact_casts.FORMATS[dest].bits - 1)))
                if matched != ["nearest_even.saturate"] or not nans or any(n != maxnorm for n in nans):
                    fail(f"exact_casts.py: cast_{source} {dest} rn: expected nearest_even.saturate but for "
                         f"NaN -> +MAXNORM (0x{maxnorm:02x}); NaN gave {sorted(set(nans))}\n" + "\n".join(lines))
    print("exact_casts.py: FP8 casts follow their claims; FP6/FP4 rn nearest_even.saturate but NaN -> +MAXNORM")

    print("skipped: the device kernels did not run (%s); ci/device.sh runs them on a GPU" %
          ("no CUDA device here" if no_device else "a GPU is present: run ci/device.sh"))
    return 77


if __name__ == "__main__":
    sys.exit(main())
