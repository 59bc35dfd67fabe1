#!/usr/bin/env python3
"""ctest plugin_cast: casts from plugins (ABI version 3) and IUTs (protocol version 2).

1. cast_plugin.c through ulpgate-iut (the default): `rne` follows the policy it claims;
   `ties_away` (ties rounded away, claiming ties to even) LEAVES its claim and is named by
   the policy it follows, nearest_away.saturate; `crash` is a CRASHED fault at an input
   whose low byte is 0x5a (the planted trigger), never a pass; exit status 3. So is an IUT
   that never answers (TIMEOUT).
   `check --plugin` computes the codes of a file's sources with them: the tie is named.
2. The same plugin in process: --require-conformance fails (1) with ties_away, holds (0)
   with rne alone.
3. The built-in cast kernels served by `ulpgate-iut --builtin` (and with --packed4, the
   4-bit codes two a byte) follow their variants' policies: float8_e4m3fn, float4_e2m1fn
   and float8_e8m0fnu from f32 and bf16 (exit 0 under --require-conformance).
4. A plugin whose cast names an unknown destination or policy, or a policy that does not
   apply to its cast, is one error line and exit 2.
5. An IUT greeting as version 1 may not offer a cast (exit 2, one line).

usage: plugin_cast_test.py ULPGATE ULPGATE_IUT LIBCAST_EXAMPLE"""
import os
import re
import struct
import subprocess
import sys
import tempfile

ulpgate, iut, plugin = sys.argv[1:4]
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


def block(out, head):
    """The lines of the case that starts with `head`, up to the next case."""
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("  " + head):
            rest = [l]
            for m in lines[i + 1:]:
                if not m.startswith("    "):
                    break
                rest.append(m)
            return "\n".join(rest)
    return ""


cast = ["run", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--n", "2000"]

# 1. Out of process (the default): the claims, the planted defect, the crash.
out = run(cast + ["--plugin", plugin, "--variant", "none", "--kernel-timeout", "10"], 3)
expect(block(out, "rne on cast_example"), "claims nearest_even.saturate, follows it", "rne")
away = block(out, "ties_away on cast_example")
expect(away, "claims nearest_even.saturate, LEAVES IT", "ties_away's claim")
expect(away, "follows bit for bit: nearest_away.saturate", "ties_away's policy")
crash = block(out, "crash on cast_example")
m = re.search(r"CRASHED: SIGSEGV at input #\d+: 0x([0-9a-f]{8}) ", crash)
if m is None:
    failures.append("crash: no CRASHED fault at an input in\n" + out)
elif int(m.group(1), 16) & 0xff != 0x5a:
    failures.append("crash: the fault names input 0x%s, whose low byte is not the trigger 0x5a" % m.group(1))
if "follows it" in crash:
    failures.append("crash: a faulted case reads as a pass:\n" + crash)

# 2. In process: conformance required.
run(cast + ["--plugin", plugin, "--in-process", "--variant", "rne,ties_away", "--require-conformance"], 1)
run(cast + ["--plugin", plugin, "--in-process", "--variant", "rne", "--require-conformance"], 0)

# 3. The built-in casts through the IUT, codes one a byte and packed.
for packed in ([], ["--packed4"]):
    command = " ".join([iut, "--builtin", "--targets", "SCALAR"] + packed)
    for op, dest in (("cast_f32", "float8_e4m3fn"), ("cast_f32", "float4_e2m1fn"),
                     ("cast_bf16", "float4_e2m1fn"), ("cast_f32", "float8_e8m0fnu")):
        out = run(["run", "--op", op, "--dtype", dest, "--n", "3000", "--iut", command, "--variant", "none",
                   "--require-conformance"], 0)
        for variant, policy in (("rne_sat", "nearest_even.saturate"), ("trunc", "toward_zero.saturate")):
            expect(out, "%s on SCALAR-iut: claims %s, follows it" % (variant, policy),
                   "%s %s %s" % (op, dest, " ".join(packed)))
        if op == "cast_f32" and dest != "float8_e8m0fnu":
            expect(out, "via_bf16 on SCALAR-iut: claims nearest_even.saturate.via_bf16, follows it",
                   "%s %s via_bf16" % (op, dest))

# check --plugin: the plugin's casts compute the codes of a file's sources; 1.0625 lies
# halfway between E4M3FN's 1 and 1.125, the even code being 1's (0x38).
with tempfile.TemporaryDirectory() as scratch:
    sources = os.path.join(scratch, "x.bin")
    with open(sources, "wb") as f:
        f.write(struct.pack("<4f", 1.0, 1.0625, -3.0, 1e9))
    out = run(["check", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--inputs", sources, "--plugin", plugin,
               "--variant", "rne,ties_away"], 0)
    expect(out, "rne on cast_example: claims nearest_even.saturate, follows it", "check rne")
    expect(out, "0x3f880000 = 0x1.1p+0 -> 0x39 (1.125), nearest_even.saturate gives 0x38 (1)",
           "check ties_away's tie")

# A hung IUT: its cast is a TIMEOUT fault, never a pass (four sources: a short bisection).
with tempfile.TemporaryDirectory() as scratch:
    sources = os.path.join(scratch, "x.bin")
    with open(sources, "wb") as f:
        f.write(struct.pack("<4f", 1.0, 0.5, -3.0, 1000.0))
    hung = ("sh -c \"printf 'ulpgate-iut 2\\nkernel X cast_f32 float8_e4m3fn v "
            "nearest_even.saturate\\nready\\n'; exec sleep 60\"")
    out = run(["run", "--op", "cast_f32", "--dtype", "float8_e4m3fn", "--inputs", sources, "--iut", hung,
               "--variant", "none", "--kernel-timeout", "0.3"], 3)
    expect(out, "v on X: TIMEOUT: no answer in 0.3 s at input #", "a hung IUT")
    if "follows it" in out:
        failures.append("a hung IUT's cast reads as a pass:\n" + out)

# 4. Broken version 3 plugins: one error line each, exit 2.
plugins = os.path.dirname(plugin)
for broken, text in (("destination", "cast 0 (rne): destination 'float7_e3m3' (casts go to float8_e4m3fn"),
                     ("policy", "unknown cast policy 'nearest_even.sometimes'"),
                     ("inapplicable", "policy nearest_even.infinity: float8_e4m3fn has no infinity to overflow to")):
    out = run(cast + ["--plugin", os.path.join(plugins, "libbroken_v3_%s.so" % broken)], 2)
    expect(out, text, "broken_v3_" + broken)

# 5. Version 1 knows no casts.
out = run(cast + ["--iut", "printf 'ulpgate-iut 1\\nkernel X cast_f32 float8_e4m3fn v\\nready\\n'; sleep 5"], 2)
expect(out, "casts need ulpgate-iut 2", "a version 1 IUT offering a cast")

if failures:
    print("\n".join("FAIL: " + f for f in failures))
    sys.exit(1)
print("plugin_cast: rne follows its claim, ties_away follows nearest_away.saturate and fails its "
      "claim, crash is a fault; the built-in casts through the IUT follow their policies, packed or not")
