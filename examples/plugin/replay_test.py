#!/usr/bin/env python3
"""ctest driver: every replay command the reports print reproduces its row.

For a built-in kernel (f32 and bf16), a plugin's kernel (flaky_plugin.c's `off`,
one ULP off its model on one input in 4096) and an IUT's (ulpgate-iut --builtin),
`ulpgate run` is asked for the kernel by its name; then each replay command of
its text output (the worst input, the first input off the model), of its JSON
report ("reproduce") and of its HTML report (the run of each case) is run as
printed, by /bin/sh, and must give what the report says: the same ULP error at
the worst input, the wrong output (one ULP from the model) at the first input
off it, the same max_ulp, mismatches and output digest for a whole case.

usage: replay_test.py ULPGATE ULPGATE_IUT LIBFLAKY WORKDIR"""
import html
import json
import os
import re
import shlex
import struct
import subprocess
import sys

ulpgate, iut, flaky, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)
env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(ulpgate)) + os.pathsep + os.environ["PATH"])
failures = []
replayed = 0


def fail(message):
    failures.append(message)
    print("FAIL " + message, flush=True)


def ulpgate_run(args, expect=0):
    r = subprocess.run([ulpgate] + args, capture_output=True, text=True, timeout=600, env=env)
    if r.returncode != expect:
        sys.exit(f"ulpgate {shlex.join(args)}: exit {r.returncode}, expected {expect}\n{r.stdout}{r.stderr}")
    return r.stdout


def shell(command, json_path):
    """Runs a printed command, --json added, and returns the JSON it wrote."""
    global replayed
    replayed += 1
    if os.path.exists(json_path):
        os.remove(json_path)
    r = subprocess.run(["/bin/sh", "-c", command + " --json " + shlex.quote(json_path)], capture_output=True,
                       text=True, timeout=600, env=env)
    if r.returncode not in (0, 1) or not os.path.exists(json_path):
        fail(f"{command}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        return None
    return json.load(open(json_path))


def continued(lines, i, command):
    """A command and its continued lines (each broken line ends in a backslash)."""
    while command.endswith("\\"):
        i += 1
        command = command[:-1].rstrip() + " " + lines[i].strip()
    return command


def worst_commands(text):
    """The commands of the lines "  reproduce: ..." (the worst inputs, faults)."""
    lines = text.split("\n")
    return [continued(lines, i, line[len("  reproduce: "):].strip())
            for i, line in enumerate(lines) if line.startswith("  reproduce: ")]


def off_commands(text):
    """The command of each "... outputs off MODEL; first at input #I: ...; reproduce: ..." entry."""
    lines = text.split("\n")
    commands = []
    for i, line in enumerate(lines):
        if " outputs off " not in line:
            continue
        joined = line
        while "reproduce:" not in joined:
            i += 1
            joined += " " + lines[i].strip()
        commands.append(continued(lines, i, joined.split("reproduce:", 1)[1].strip()))
    return commands


def html_commands(page):
    return [" ".join(html.unescape(s) for s in re.findall(r"<span>(.*?)</span>", code))
            for code in re.findall(r"<code class='replay'>(.*?)</code>", page)]


def bits(hex_text):
    return struct.unpack("<I", struct.pack("<f", float.fromhex(hex_text)))[0]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same_number(a, b):
    return a == b or (isinstance(a, (int, float)) and isinstance(b, (int, float)) and abs(a - b) <= 1e-12 * abs(b))


def replayed_error(command, name):
    """The ULP error of the kernel a replay command names, and its explain case."""
    result = shell(command, os.path.join(work, "replay.json"))
    if result is None:
        return None, None
    if result.get("format") == "ulpgate-explain-1":
        if len(result["cases"]) != 1:
            fail(f"{name}: {command} explains {len(result['cases'])} kernels, not one")
            return None, None
        return result["cases"][0]["ulp_error"], result["cases"][0]
    if len(result["results"]) != 1:
        fail(f"{name}: {command} runs {len(result['results'])} cases, not one")
        return None, None
    return result["results"][0]["max_ulp"], None


def check_report(name, args, expect=0):
    """Runs `run ARGS`, then every replay its text, JSON and HTML print."""
    report = os.path.join(work, name + ".json")
    page = os.path.join(work, name + ".html")
    text = ulpgate_run(["run"] + args + ["--json", report], expect)
    records = json.load(open(report))["results"]
    if not records:
        fail(f"{name}: no case ran")
        return
    by_case = {(r["variant"], r["target"]): r for r in records}
    # Text: the worst input of each variant, and the first input off the model.
    for command in worst_commands(text):
        error, _ = replayed_error(command, name)
        if error is not None and not any(same_number(error, r["max_ulp"]) for r in records):
            fail(f"{name}: {command} gives {error} ULP; the report's worst: "
                 f"{[r['max_ulp'] for r in records]}")
    off = off_commands(text)
    for record in records:
        if record["conformance"]["mismatches"] > 0 and not off:
            fail(f"{name}: {record['variant']}@{record['target']} leaves its model; no line names the input")
    for command in off_commands(text):
        check_off_model(name, command)
    # JSON: every command of "reproduce".
    for record in records:
        reproduce = record.get("reproduce", {})
        if "max_input" not in reproduce:
            fail(f"{name}: {record['variant']}@{record['target']} has no reproduce.max_input")
            continue
        error, _ = replayed_error(reproduce["max_input"], name)
        if error is not None and not same_number(error, record["max_ulp"]):
            fail(f"{name}: JSON {reproduce['max_input']} gives {error} ULP, the record {record['max_ulp']}")
        if "first_mismatch_input" in reproduce:
            check_off_model(name, reproduce["first_mismatch_input"])
        elif record["conformance"]["mismatches"] > 0:
            fail(f"{name}: {record['variant']}@{record['target']} leaves its model; no reproduce.first_mismatch_input")
    # HTML: the run of each case measures it again, number for number, and
    # the first input that fails is computed again.
    ulpgate_run(["report", report, "--html", page])
    text_of_page = open(page).read()
    # The special mismatches' causes, each with the replay of its first input
    # (and of the first zero of the wrong sign): each must show one there.
    causes = re.findall(r"<ul class='causes'>.*?</ul>", text_of_page, re.S)
    for command in [c for block in causes for c in html_commands(block)]:
        error, case = replayed_error(command, name)
        if case is not None and not case["special_mismatch"] and not case["signed_zero_mismatch"]:
            fail(f"{name}: HTML {command}: a cause's first input, with no special or signed-zero mismatch there")
    all_commands = html_commands(re.sub(r"<ul class='causes'>.*?</ul>", "", text_of_page, flags=re.S))
    commands = [c for c in all_commands if c.startswith("ulpgate run ")]
    inputs = [c for c in all_commands if not c.startswith("ulpgate run ")]
    if len(inputs) != len([r for r in records if "reproduce" in r and (
            "first_mismatch_input" in r["reproduce"] or "first_special_mismatch_input" in r["reproduce"])]):
        fail(f"{name}: the HTML report has {len(inputs)} replays of a first failing input")
    for command in inputs:
        error, case = replayed_error(command, name)
        if case is not None and case["expected_model"] in case["matching_models"] and not case["special_mismatch"]:
            fail(f"{name}: HTML {command}: the kernel follows its model and has no special mismatch there")
    # The page gives the run of each case that fails (leaves its model, or has
    # a special mismatch).
    failing = [r for r in records if r["conformance"]["mismatches"] > 0 or r["special_mismatch"] > 0]
    if len(commands) != len(failing) or not failing:
        fail(f"{name}: the HTML report has {len(commands)} run replays for {len(failing)} failing cases")
    for command in commands:
        result = shell(command, os.path.join(work, "replay.json"))
        if result is None:
            continue
        if len(result["results"]) != 1:
            fail(f"{name}: HTML {command} runs {len(result['results'])} cases, not one")
            continue
        again = result["results"][0]
        record = by_case.get((again["variant"], again["target"]))
        if record is None:
            fail(f"{name}: HTML {command} runs {again['variant']}@{again['target']}, no case of the report")
            continue
        for key in ("max_ulp", "output_digest"):
            if again[key] != record[key]:
                fail(f"{name}: HTML {command}: {key} {again[key]}, the report's {record[key]}")
        if again["conformance"]["mismatches"] != record["conformance"]["mismatches"]:
            fail(f"{name}: HTML {command}: other mismatches")


def check_off_model(name, command):
    """A replay of the first input off the model gives an output the model does not."""
    _, case = replayed_error(command, name)
    if case is None:
        return  # a run's replay (bf16): it measures the one input, no model to compare here
    expected = case["expected_model"]
    if expected in case["matching_models"]:
        fail(f"{name}: {command}: the kernel follows {expected} there; the report says it does not")
    if name.startswith("flaky"):
        # flaky's off: fms_unfused (p = grad*s; p - p*s, each rounded to
        # binary32: a double holds each exact product, and rounds a difference
        # of binary32 values innocuously) moved one ULP away from zero.
        result = json.load(open(os.path.join(work, "replay.json")))
        grad, s = (float.fromhex(result["inputs"][k]["hex"]) for k in ("grad", "s"))
        p = f32(grad * s)
        model = f32(p - f32(p * s))
        if bits(case["kernel_output"]["hex"]) - bits(model.hex()) != 1:
            fail(f"{name}: {command}: output {case['kernel_output']['hex']}, not one ULP beyond "
                 f"fms_unfused's {model.hex()}")


# A built-in kernel, f32 (explain replays) and bf16 (run on stdin): the MAC form
# returns NaN where grad is infinite and t is 1, a special mismatch, so the
# HTML report gives its run too.
check_report("builtin", ["--op", "tanh_bwd", "--variant", "mac", "--target", "SCALAR", "--suite", "adversarial",
                         "--n", "3000"])
check_report("builtin_bf16", ["--op", "tanh_bwd", "--dtype", "bf16", "--variant", "mac_per_op", "--target", "SCALAR",
                              "--suite", "adversarial", "--n", "3000"])
# A plugin's kernel by its name: only `off` runs (not segv or hang), and it
# leaves its model on one input in 4096.
check_report("flaky", ["--op", "sigmoid_bwd", "--plugin", flaky, "--variant", "off", "--suite", "domain",
                       "--n", "20000"])
# A sweep's replay of the first input off the model (every s at a grad whose
# low bits are off's trigger: every output is one ULP off).
text = ulpgate_run(["sweep", "--op", "sigmoid_bwd", "--dtype", "f32", "--grad", "0x1.00054ap-3", "--plugin", flaky,
                    "--variant", "off", "--range", "0x3e000000:0x3e001000"], expect=1)
lines = text.split("\n")
sweep_replays = [continued(lines, i, line[len("  replay: "):].strip())
                 for i, line in enumerate(lines) if line.startswith("  replay: ")]
if not sweep_replays:
    fail(f"sweep of off@flaky: no replay command:\n{text}")
for command in sweep_replays:
    check_off_model("flaky sweep", command)

# An IUT's kernel, named NAME@TARGET (the built-in mac beside it is another).
check_report("iut", ["--op", "tanh_bwd", "--iut", f"{iut} --builtin --targets SCALAR", "--variant",
                     "mac@SCALAR-iut", "--suite", "adversarial", "--n", "3000"])

# Names: unknown and ambiguous ones are one error line listing what exists.
r = subprocess.run([ulpgate, "run", "--op", "sigmoid_bwd", "--plugin", flaky, "--variant", "of"],
                   capture_output=True, text=True, env=env)
if r.returncode != 2 or "unknown variant 'of' of sigmoid_bwd in f32 (built-in:" not in r.stderr \
        or "flaky: ok, off, segv, hang" not in r.stderr:
    fail(f"run --variant of: exit {r.returncode}: {r.stderr}")

# explain of a plugin kernel's wrong output prints the kernel's own output
# beside its error, and the model's beside the model's (grad's low bits 0x2a5:
# off is one ULP beyond fms_unfused there, and follows no model).
text = ulpgate_run(["explain", "--op", "sigmoid_bwd", "--input", "grad=0x1.00054ap-3", "--input", "s=0x1.8p-2",
                    "--variant", "off@flaky", "--plugin", flaky])
header = re.search(r"off on flaky: matches NO model[^\n]*, output (\S+) \(0x[0-9a-f]+\): ([0-9.]+) ULP", text)
if header is None:
    fail(f"explain off@flaky: no header naming the kernel's output:\n{text}")
else:
    kernel, error = header.groups()
    if not re.search(rf"\n  the kernel's output {re.escape(kernel)}  exact \S+  error {re.escape(error)} ULP\n", text):
        fail(f"explain off@flaky: the kernel's output {kernel} is not beside its error {error} ULP:\n{text}")
    if not re.search(r"\n  not the traced model's output (?!" + re.escape(kernel) + r")\S+, error ", text):
        fail(f"explain off@flaky: no line with the model's own output and error:\n{text}")

print(f"replayed {replayed} commands; {len(failures)} failures")
sys.exit(1 if failures else 0)
