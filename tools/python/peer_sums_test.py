#!/usr/bin/python3
"""The peers' matrix products against the independent oracle (fprev_oracle.py): for each
peer, the summation tree FPRev's probes reveal, with the accumulation model that goes with
it, must give the library's own outputs bit for bit on random inputs (a tree or a model
that is wrong in one addition fails this on some output); and the library must give the
same bits for the same call twice. Which tree a BLAS picks depends on the CPU it finds, so
trees are asserted only where the source fixes them: the reference BLAS is a sequential
chain in k (its loop), and on x86-64, where Debian builds it for the baseline ISA without
FMA, its products are rounded before they are added.

    peer_sums_test.py --venv build/peers-venv --peer refblas|blas|numpy|torch|jax

Exit status 77 (a ctest skip) when the environment or the peer is absent, with the reason.
"""

import argparse
import os
import platform
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_sums as ps  # noqa: E402

SKIP = 77
SHAPE = (64, 16)  # the shape of docs/peers.md's table
KS = (64, 256)
GROUPS = {
    'refblas': [('refblas', 'f32')],
    'blas': [('openblas', 'f32'), ('blis', 'f32')],
    'numpy': [('numpy_matmul', 'f32'), ('numpy_dot', 'f32'), ('numpy_matmul', 'f16')],
    'torch': [('torch_matmul', 'f32'), ('torch_matmul', 'bf16'), ('torch_matmul', 'f16'),
              ('torch_linear', 'f32'), ('torch_linear', 'bf16')],
    'jax': [('jax_matmul', 'f32'), ('jax_matmul', 'bf16'), ('jax_matmul_f32out', 'bf16')],
}


def check_one(peer, fmt, failures):
    import fprev_oracle as fo
    kernel = ps.make_kernel(peer, fmt)
    for k in KS:
        tree, prober = fo.reveal_tree(kernel, k, SHAPE)
        only = (0, 0) if prober.disagree else None
        fits = fo.fit_models(kernel, tree, SHAPE, seed=11, trials=2 if only is None else 24,
                             positions=32, only=only)
        name = f'{peer} {fmt} k={k}'
        line = (f'{name}: {fo.describe(tree)}; {prober.count} probes; '
                f'reproduced by {[m.name() for m in fits] or "NOTHING"}'
                + (f'; outputs of the call add in other orders (first at '
                   f'{tuple(prober.disagree[0]["at"])}): checked at (0, 0)' if only else ''))
        print(line)
        if not fits:
            failures.append(f'{name}: no model over the revealed tree gives its outputs')
        # Bit for bit the same for the same call twice.
        rng = random.Random(k)
        a = fo.random_inputs(rng, SHAPE[0], k, fmt)
        b = fo.random_inputs(rng, SHAPE[1], k, fmt)
        if kernel.matmul(a, b) != kernel.matmul(a, b):
            failures.append(f'{name}: two identical calls differ')
        if peer == 'refblas':
            if fo.key(tree) != fo.key(fo.chain(list(range(k)))):
                failures.append(f'{name}: the reference BLAS is not a sequential chain: '
                                f'{fo.describe(tree)}')
            if platform.machine() == 'x86_64' and [m.name() for m in fits] != \
                    ['acc f32, products rounded']:
                failures.append(f'{name}: expected products rounded then added in binary32 '
                                f'(no FMA in the x86-64 baseline), got {[m.name() for m in fits]}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--venv', required=True)
    ap.add_argument('--peer', required=True, choices=sorted(GROUPS))
    args = ap.parse_args()
    why = ps.unavailable_reason(args.venv)
    if why:
        print(f'SKIP: {why}')
        return SKIP
    ps.reexec(args.venv, ps.thread_env(1))
    failures, ran = [], 0
    for peer, fmt in GROUPS[args.peer]:
        why = ps.unavailable_reason(args.venv, peer)
        if why:
            print(f'{peer}: skipped: {why}')
            continue
        check_one(peer, fmt, failures)
        ran += 1
    if not ran:
        print(f'SKIP: none of {args.peer} is available')
        return SKIP
    for f in failures:
        print('FAIL:', f)
    print(f'{ran} peers, {len(failures)} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
