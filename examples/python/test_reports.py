"""What the Python package says, beside what the CLI says on the same data: the bound
fraction with its verdict, the nearest model when none is followed, the worst input in the
format's own hex width with a readable exact value and its replay, every line within 120
columns; assert_within_bound; a long sweep's progress on stderr; ulpgate.__version__.

    PYTHONPATH=build/python ULPGATE=build/bin/ulpgate /usr/bin/python3 -m pytest examples/python/test_reports.py

The PyTorch kernels are 1.13's CPU silu_backward and gelu_backward(approximate='tanh') in
f32: silu_backward returns 0 where the exact value is 1.87e-37 (x = -88.7), beyond the
backward-stable bound; gelu_tanh's errors reach 1.7e7 ULP where its derivative cancels, yet
stay a tenth of that bound. How many outputs and by how much depends on the CPU capability
PyTorch picked, so the numbers are compared with `ulpgate check` on the same files.
"""
import os
import re
import subprocess

import pytest

torch = pytest.importorskip("torch", reason="python3-torch is not installed")
np = pytest.importorskip("numpy", reason="numpy is not installed")
ulpgate = pytest.importorskip("ulpgate", reason="the ulpgate package is not built (PYTHONPATH=build/python)")
from ulpgate.testing import assert_follows_model, assert_within_bound, assert_within_ulp  # noqa: E402

aten = torch.ops.aten
torch.set_num_threads(1)
ULPGATE = os.environ.get("ULPGATE", "build/bin/ulpgate")
# A hex value of the double kind: 13 hex digits where the format has at most 6.
LONG_HEX = re.compile(r"0x1\.[0-9a-f]{7,}p")
HEX_DIGITS = {"f32": 6, "bf16": 2, "f16": 3}


def cli(*args):
    done = subprocess.run([ULPGATE, *args], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def silu_adversarial(tmp_path):
    """The adversarial suite of silu_bwd in f32, PyTorch's outputs on it, both as files."""
    inputs = tmp_path / "silu.npz"
    status, text = cli("suite", "export", "--op", "silu_bwd", "--suite", "adversarial", "--out", str(inputs))
    assert status == 0, text
    x = ulpgate.load(inputs, framework="torch")
    y = aten.silu_backward(x["grad"], x["x"])
    outputs = tmp_path / "silu_out.npy"
    np.save(outputs, y.numpy())
    return x, y, inputs, outputs


def within_columns(text, width=120):
    long = [line for line in text.splitlines() if len(line) > width]
    assert not long, f"lines over {width} columns: {long}"


def flat(text):
    """The text with its line breaks (where a long line wraps) as single spaces."""
    return " ".join(text.split())


def hex_values(text):
    return re.findall(r"-?0x[0-9a-f](?:\.[0-9a-f]+)?p[+-]\d+", text)


def test_version_is_the_clis():
    status, text = cli("--version")
    assert status == 0 and re.fullmatch(r"\d+\.\d+\.\d+", ulpgate.__version__)
    assert text.strip() == f"ulpgate {ulpgate.__version__}"


def test_hex_in_the_formats_width():
    assert ulpgate.hex_value(np.float32(float.fromhex("-0x1.f853e8p-3"))) == "-0x1.f853e8p-3"
    assert ulpgate.hex_value(torch.tensor(1.5, dtype=torch.bfloat16)) == "0x1.8p+0"
    assert ulpgate.hex_value(0.0) == "0x0p+0" and ulpgate.hex_value(float("-inf")) == "-inf"
    # The exact value as a decimal of enough digits, not 70 hex digits.
    assert float(ulpgate.exact("tanh_bwd", 1.0, 0.5, digits=17)) == 0.75
    assert ulpgate.exact("tanh_bwd", 1.0, 0.5) == "0x1.8p-1"


def test_silu_backward_report_says_what_check_says(tmp_path):
    x, y, inputs, outputs = silu_adversarial(tmp_path)
    report = ulpgate.check(y, x, op="silu_bwd")
    text = repr(report)
    status, cli_text = cli("check", "--op", "silu_bwd", "--inputs", str(inputs), "--outputs", str(outputs),
                           "--quiet")
    assert status == 0, cli_text
    exceeds = re.search(r"EXCEEDS the error bound of a backward-stable evaluation on (\d+) outputs "
                        r"\(up to (\S+) times it\)", cli_text)
    assert exceeds, cli_text
    assert report.above_bound == int(exceeds.group(1)) > 0
    assert (f"EXCEEDS the backward-stable error bound on {exceeds.group(1)} of {report.n} outputs "
            f"(up to {exceeds.group(2)} times it)") in flat(text)
    # No model followed: the CLI's table, nearest first, names the one the report names.
    assert "follows no model bit for bit; nearest first" in cli_text
    first = re.search(r"nearest first:\n\s+model\s+mismatches.*\n\s+(\S+)\s+(\d+)", cli_text)
    assert report.nearest_model == (first.group(1), int(first.group(2)))
    assert f"no model; nearest {first.group(1)} ({first.group(2)} of {report.n} outputs differ)" in flat(text)
    # The worst input in f32's width, its exact value a decimal, its replay.
    worst = report.worst["index"]
    assert f"worst input #{worst}: " in flat(text) and "exact value" in text
    assert not LONG_HEX.search(text) and not re.search(r"[0-9a-f]{20}", text)
    assert f"ulpgate explain --op silu_bwd --input grad={ulpgate.hex_value(x['grad'][worst])}" in flat(text)
    within_columns(text)


def test_gelu_tanh_report_says_it_is_within_the_bound():
    g = torch.Generator().manual_seed(0)
    grad, x = torch.randn(20000, generator=g) * 4, -6 + 12 * torch.rand(20000, generator=g)
    y = aten.gelu_backward(grad, x, approximate="tanh")
    report = ulpgate.check(y, {"grad": grad, "x": x}, op="gelu_tanh_bwd")
    assert report.max_ulp > 1e6 and report.max_bound_fraction < 1 and report.above_bound == 0
    fraction = ulpgate._ulp_text(report.max_bound_fraction)  # as the CLI's bound_max column
    assert (f"bound fraction {fraction}: within the backward-stable error bound (the largest error is "
            f"{fraction} of it)") in flat(repr(report))
    assert assert_within_bound(y, {"grad": grad, "x": x}, op="gelu_tanh_bwd").above_bound == 0
    within_columns(repr(report))


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_narrow_values_in_their_own_width(dtype):
    tdtype = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    g = torch.Generator().manual_seed(2)
    grad = (torch.randn(5000, generator=g) * 4).to(tdtype)
    t = (2 * torch.rand(5000, generator=g) - 1).to(tdtype)
    y = aten.tanh_backward(grad.float(), t.float()).to(tdtype)
    text = repr(ulpgate.check(y, {"grad": grad, "t": t}, op="tanh_bwd"))
    values = hex_values(text)
    assert values
    for v in values:
        digits = v.split("p")[0].split(".")[1] if "." in v else ""
        assert len(digits) <= HEX_DIGITS[dtype], (v, text)
    within_columns(text)


def test_assert_within_bound_fails_with_the_input_and_the_replay(tmp_path):
    x, y, inputs, outputs = silu_adversarial(tmp_path)
    with pytest.raises(AssertionError) as e:
        assert_within_bound(y, x, op="silu_bwd")
    text = str(e.value)
    report = ulpgate.check(y, x, op="silu_bwd")
    assert text.startswith("silu_bwd outputs err more than the error bound of a backward-stable evaluation.")
    assert f"{report.above_bound} of {report.n} outputs (f32) exceed the bound itself" in flat(text)
    largest = report.bound_fraction["max_input"]["index"]
    assert f"at input #{largest}: grad = {ulpgate.hex_value(x['grad'][largest])}" in flat(text)
    assert "explain it: ulpgate explain --op silu_bwd --input grad=" in text
    assert f"nearest {report.nearest_model[0]}" in flat(text)
    assert not LONG_HEX.search(text) and not re.search(r"[0-9a-f]{20}", text)
    within_columns(text)
    # A looser limit holds: the report comes back.
    assert assert_within_bound(y, x, op="silu_bwd", max_fraction=report.max_bound_fraction).n == report.n


def test_assertion_messages_fit_and_say_the_bound(tmp_path):
    x, y, _, _ = silu_adversarial(tmp_path)
    for assertion in (lambda: assert_within_ulp(y, x, op="silu_bwd", max_ulp=4),
                      lambda: assert_follows_model(y, x, op="silu_bwd", model="torch_fma")):
        with pytest.raises(AssertionError) as e:
            assertion()
        text = str(e.value)
        assert "Bound fraction: " in text and "EXCEEDS the backward-stable error bound" in flat(text)
        assert "Follows bit for bit: no model; nearest " in flat(text)
        assert not LONG_HEX.search(text) and not re.search(r"[0-9a-f]{20}", text)
        within_columns(text)


def test_a_long_sweep_reports_progress(monkeypatch, capsys):
    # Quick: nothing on stderr.
    ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 4 << 16), threads=1)
    assert capsys.readouterr().err == ""
    # As if it had run for longer than PROGRESS_AFTER: a line per block, as the CLI's.
    monkeypatch.setattr(ulpgate, "PROGRESS_AFTER", 0.0)
    monkeypatch.setattr(ulpgate, "PROGRESS_EVERY", 0.0)
    ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 4 << 16), threads=1)
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(re.fullmatch(r"sweep: +\d+\.\d% \(\d+ of 262144 inputs\), \S+ inputs/s, ETA \d+ s", line)
                         for line in lines), lines
    # progress=False: never; a callable: called between blocks, the last with the total.
    ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 4 << 16), threads=1, progress=False)
    assert capsys.readouterr().err == ""
    calls = []
    ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 4 << 16), threads=1,
                  progress=lambda done, total: calls.append((done, total)))
    assert calls[0] == (1 << 16, 4 << 16) and calls[-1] == (4 << 16, 4 << 16)


def test_an_error_in_progress_is_raised():
    def stop(done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ulpgate.sweep(aten.tanh_backward, op="tanh_bwd", dtype="bf16", range=(0, 4 << 16), progress=stop)
