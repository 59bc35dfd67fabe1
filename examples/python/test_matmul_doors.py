"""Matrix product callables fn(a, b) -> a @ b.T under ulpgate's invariance (and reveal): the
C++ measurements (suites/reveal/) call the callable through its DotDoor. Each callable here
is written so that what it must be found to be follows from its definition: a row at a time
is batch-invariant, a switch of schedule at m = 8 changes the bits first at 8, a shuffled
sum is nondeterministic, one that treats rows after the first otherwise changes with the
position, and one that raises is a DotDoorError, never a result."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest

ulpgate = pytest.importorskip("ulpgate", reason="the package is not built (PYTHONPATH=build/python)")
from ulpgate.testing import assert_batch_invariant, assert_tree  # noqa: E402

SMALL = dict(k=64, n=8, max_batch=64)  # 23 batch sizes, 86 calls: milliseconds in NumPy


def row_at_a_time(a, b):
    """Each row its own product: what a row gets cannot depend on the others."""
    return np.stack([row @ b.T for row in a])


def sequential(a, b):
    """float32 products summed left to right (cumsum is sequential), row by row."""
    return np.stack([np.cumsum(row * b, axis=1, dtype=np.float32)[:, -1] for row in a])


def float64_rounded(a, b):
    return (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)


def pairwise_rows(a, b):
    """Rounded products added in adjacent pairs level by level, an odd last one carried up."""
    t = (a[:, None, :] * b[None, :, :]).astype(np.float32)
    while t.shape[-1] > 1:
        carry = t[..., -1:] if t.shape[-1] % 2 else None
        even = t[..., : t.shape[-1] // 2 * 2]
        t = even[..., 0::2] + even[..., 1::2]
        if carry is not None:
            t = np.concatenate([t, carry], axis=-1)
    return t[..., 0]


def switches_at_8(a, b):
    return pairwise_rows(a, b) if a.shape[0] >= 8 else sequential(a, b)


def later_rows_otherwise(a, b):
    return np.concatenate([sequential(a[:1], b), float64_rounded(a[1:], b)])


def test_a_row_at_a_time_is_batch_invariant():
    told = []
    r = ulpgate.invariance(row_at_a_time, progress=told.append, **SMALL)
    # SetThreads last, so that every other dimension runs at the door's own thread count.
    assert told == ["batch size", "position", "alignment", "run to run", "threads"]
    assert sorted(told) == sorted(r.dimensions)
    assert r.verdict == "batch-invariant" and r.invariant and r.batch_invariant and r.deterministic
    assert r.first_changed_batch is None and r.changed == [] and r.trees is None
    assert r.batch_sizes[:3] == [1, 2, 3] and r.batch_sizes[-1] == 64
    assert not r.dimensions["threads"]["varied"]  # NumPy's threads cannot be set from here
    assert_batch_invariant(row_at_a_time, **SMALL)


def test_a_schedule_switched_by_batch_size_changes_first_at_8():
    r = ulpgate.invariance(switches_at_8, **SMALL)
    assert r.verdict == "not batch-invariant (first at m=8)"
    assert r.first_changed_batch == 8 and r.last_invariant_batch == 7
    assert not r.batch_invariant and r.deterministic and "batch size" in r.changed
    first = r.dimensions["batch size"]["first_change"]
    assert first["m"] == 8 and first["changed"] > 0
    # reveal's trees of C[0][0] on either side of the change: the two schedules written above.
    t = r.trees
    assert (t["before_m"], t["after_m"]) == (7, 8)
    assert (t["short_before"], t["short_after"]) == ("sequential chain", "pairwise cascade")
    assert ulpgate.tree(t["before"]) == ulpgate.tree("sequential", 64)
    assert ulpgate.tree(t["after"]) == ulpgate.tree("pairwise", 64)
    text = repr(r)
    assert "first at m=8" in text and "as alone up to m=7" in text
    assert "trees of C[0][0]: m=7: sequential chain; m=8: pairwise cascade" in text
    assert all(len(line) <= ulpgate.WIDTH for line in text.splitlines())
    with pytest.raises(AssertionError, match=r"alone up to m=7; they change from m=8"):
        assert_batch_invariant(switches_at_8, **SMALL)


def test_rows_after_the_first_computed_otherwise_change_with_position():
    r = ulpgate.invariance(later_rows_otherwise, **SMALL)
    assert r.changed == ["position"] and r.first_changed_batch is None
    assert r.verdict.startswith("not batch-invariant (position: ")
    assert not r.batch_invariant


def test_a_shuffled_sum_is_nondeterministic():
    rng = np.random.default_rng(7)

    def shuffled(a, b):
        p = rng.permutation(a.shape[1])
        return sequential(a[:, p], b[:, p])
    r = ulpgate.invariance(shuffled, **SMALL)
    assert r.verdict == "nondeterministic (run to run)" and not r.deterministic and not r.batch_invariant


def test_a_callable_that_raises_is_a_door_error():
    with pytest.raises(ulpgate.DotDoorError, match="python:.*raised ZeroDivisionError"):
        ulpgate.invariance(lambda a, b: 1 / 0, **SMALL)
    with pytest.raises(ulpgate.DotDoorError, match=r"returned float64 \[1, 8\] where float32 \[1, 8\]"):
        ulpgate.invariance(lambda a, b: a.astype(np.float64) @ b.T.astype(np.float64), **SMALL)


def test_torch_threads_are_varied_and_restored():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    seen = set()

    def mm(a, b):
        seen.add(a.dtype)
        return (a.float() @ b.float().T).to(a.dtype)
    r = ulpgate.invariance(mm, dtype="bf16", tensors="torch", **SMALL)
    assert seen == {torch.bfloat16} and r.dimensions["threads"]["varied"]
    assert r.record["operand_format"] == "bf16" and r.record["output_format"] == "bf16"
    assert torch.get_num_threads() == before


# ---- reveal ----------------------------------------------------------------------------------

def python_loop(a, b):
    """A pure-Python chain: acc = RN(acc + RN(a b)), term after term, an output at a time."""
    out = np.zeros((a.shape[0], b.shape[0]), np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            acc = np.float32(0)
            for t in range(a.shape[1]):
                acc = np.float32(acc + np.float32(a[i, t] * b[j, t]))
            out[i, j] = acc
    return out


pairwise_numpy = pairwise_rows


def two_halves(a, b):
    """Split-K: each half a chain of rounded products, the halves added once."""
    h = a.shape[1] // 2
    first = np.cumsum(a[:, None, :h] * b[None, :, :h], axis=2, dtype=np.float32)[..., -1]
    second = np.cumsum(a[:, None, h:] * b[None, :, h:], axis=2, dtype=np.float32)[..., -1]
    return first + second


def test_a_python_loop_is_a_chain():
    r = assert_tree(python_loop, "sequential", k=8, m=4, n=8, check_outputs=200)
    assert r.tree == "(((((((0+1)+2)+3)+4)+5)+6)+7)"
    assert r.structure == [[[[[[[0, 1], 2], 3], 4], 5], 6], 7]
    assert r.known_shape == "sequential chain, rounded products"
    assert r.rounded_products == 8 and r.model_mismatches == 0 and r.follows_tree
    assert r.model == "(((((((0r+1r)+2r)+3r)+4r)+5r)+6r)+7r)"


def test_a_numpy_pairwise_cascade_is_revealed():
    r = assert_tree(pairwise_numpy, [[[0, 1], [2, 3]], 4], check_outputs=500)  # k from the tree: 5
    assert r.k == 5 and r.known_shape.startswith("pairwise cascade")
    r = assert_tree(pairwise_numpy, "pairwise", k=13)
    assert r.tree == "((((0+1)+(2+3))+((4+5)+(6+7)))+(((8+9)+(10+11))+12))"


def test_split_k_halves_are_named():
    r = ulpgate.reveal(two_halves, k=12)
    assert r.tree == "((((((0+1)+2)+3)+4)+5)+(((((6+7)+8)+9)+10)+11))"
    assert r.parts == [6, 6] and r.follows_tree
    assert any("2 sequential parts of 6, 6 terms" in d for d in r.description)
    with pytest.raises(AssertionError, match=r"expected: \(\(\(\(\(\(\(\(\(\(\(0\+1\)"):
        assert_tree(two_halves, "sequential", k=12)


def test_groups_of_four_rounded_once_are_multiway_nodes():
    def fused4(a, b):
        """Each group of four products summed exactly (fsum) and rounded once to float32, as a
        tensor core's fused dot-add; the groups chained in float32."""
        out = np.zeros((a.shape[0], b.shape[0]), np.float32)
        for i in range(a.shape[0]):
            for j in range(b.shape[0]):
                acc = np.float32(0)
                for g in range(0, a.shape[1], 4):
                    group = math.fsum(float(a[i, t]) * float(b[j, t]) for t in range(g, g + 4))
                    acc = np.float32(acc + np.float32(group))
                out[i, j] = acc
        return out
    expected = [[[0, 1, 2, 3], [4, 5, 6, 7]], [8, 9, 10, 11]]
    r = assert_tree(fused4, expected, m=4, n=16, check_outputs=300)
    assert r.structure == expected and r.max_fan_in == 4
    assert r.tree == "((fused4[0,1,2,3]+fused4[4,5,6,7])+fused4[8,9,10,11])"
    assert r.parts == [4, 4, 4] and r.rounded_products == 0


def test_float64_then_rounded_is_no_tree_of_binary32_additions():
    def float64_rounded_mm(a, b):
        return (a.astype(np.float64) @ b.astype(np.float64).T).astype(np.float32)
    r = ulpgate.reveal(float64_rounded_mm, k=16)
    # The probes cancel exactly in float64 and read as some tree; the outputs of random
    # operands are correctly rounded sums, which that tree's binary32 model does not give.
    assert r.tree is not None and not r.follows_tree
    assert r.model_mismatches > 0 and r.model_outputs == 1000
    assert "not that tree of binary32 additions on every output" in r.verdict
    with pytest.raises(AssertionError, match="reveal says: the probes read as a tree, but its model differs"):
        assert_tree(float64_rounded_mm, "sequential", k=16)


def test_outputs_that_do_not_nest_are_a_finding():
    r = ulpgate.reveal(lambda a, b: np.zeros((a.shape[0], b.shape[0]), np.float32), k=8)
    assert r.tree is None and not r.follows_tree
    assert "do not nest as a tree's subtrees" in r.not_a_tree
    assert r.record["batch"] is False and "batched_not_a_tree" in r.record  # tried both ways


def test_reveal_of_a_callable_that_raises_is_a_door_error():
    with pytest.raises(ulpgate.DotDoorError, match="raised ValueError: no"):
        ulpgate.reveal(lambda a, b: (_ for _ in ()).throw(ValueError("no")), k=8)
    with pytest.raises(ulpgate.DotDoorError, match=r"returned float32 \[16, 8\] where float32 \[16, 64\]"):
        ulpgate.reveal(lambda a, b: a @ b[:8].T, k=8)


def test_float8_and_bfloat16_in_the_peers_venv():
    """matmul_doors_peers.py in the peers' venv (ULPGATE_PEERS_PYTHON), which has ml_dtypes and
    a PyTorch with float8; skipped, with the reason, where it is missing or runs another
    Python than the module's."""
    path = os.environ.get("ULPGATE_PEERS_PYTHON", "")
    if not path or not os.path.exists(path):
        pytest.skip(f"no peers' venv ({path or 'ULPGATE_PEERS_PYTHON unset'}): ci/setup_peers.sh makes it")
    version = subprocess.run([path, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"the peers' venv runs Python {version}, the module is built for {sys.version_info[:2]}")
    script = os.path.join(os.path.dirname(__file__), "matmul_doors_peers.py")
    done = subprocess.run([path, script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


if __name__ == "__main__":
    raise SystemExit(pytest.main([os.path.abspath(__file__), "-q"]))
