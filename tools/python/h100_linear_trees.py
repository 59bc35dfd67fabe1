#!/usr/bin/python3
"""Which summation trees and accumulation models are consistent with the saved outputs of
PyTorch 2.11's linear layer (suites/peer/torch-2.11-h100/linear.npz: a Xeon CPU and an
H100), judged by the independent oracle fprev_oracle.py.

No probe can be sent to a machine we do not have: only its outputs on random inputs are
kept. So this cannot reveal a tree; it can rule trees out. Every usual shape of a K loop
(fprev_oracle.candidates: a sequential chain, strided lanes with their horizontal
reduction, blocks of the K loop, pairwise sums), under each accumulation model (binary32,
products rounded or fused; the bias added first, as the accumulator's initial value, or
last), is evaluated exactly and compared with every saved output, bit for bit. What is
left fits every output; anything else is excluded by at least one output, which is shown.

    h100_linear_trees.py --venv build/peers-venv [--case cpu_f32 ...]
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77
NPZ = os.path.join(HERE, '..', '..', 'suites', 'peer', 'torch-2.11-h100', 'linear.npz')


def cases(d):
    """name -> (rows of A, rows of B, bias or None, saved output): out[m][n] = bias[n] +
    sum_k A[m][k] B[n][k]."""
    x, w, b, dy = d['x'], d['W'], d['b'], d['dy']
    out = {}
    for dev in ('cpu', 'cuda'):
        fwd = 'cpu_f32' if dev == 'cpu' else 'cuda_f32_tf32_0'
        out[fwd] = (x, w, b, d[fwd])
        out[f'{dev}_dx'] = (dy, w.T, None, d[f'{dev}_dx'])   # dx = dy W: K = 64 (n)
        out[f'{dev}_dW'] = (dy.T, x.T, None, d[f'{dev}_dW'])  # dW = dy^T x: K = 64 (m)
    return out


def with_bias(tree, k, where):
    """The bias as leaf k: added first (it meets leaf 0 before anything else: the
    accumulator's initial value) or last (added to the finished sum)."""
    import fprev_oracle as fo
    if where == 'none':
        return tree
    if where == 'last':
        return fo.node([tree, k])
    return fo._postorder(tree, lambda i: fo.node([k, 0]) if i == 0 else i,
                         lambda _, vals: fo.node(vals))


def judge(name, a, b, bias, saved, max_show=4):
    import numpy as np
    import fprev_oracle as fo
    k = a.shape[1]
    rows = a.astype(np.float64).tolist()
    cols = b.astype(np.float64).tolist()
    if bias is not None:
        rows = [r + [1.0] for r in rows]
        cols = [c + [float(v)] for c, v in zip(cols, bias)]
    saved = saved.astype(np.float64)
    m, n = saved.shape
    # Outputs in an order that spreads the first ones over the matrix.
    order = [(i * 37 % m, (i * 11 + i // m) % n) for i in range(m * n)]
    order = list(dict.fromkeys(order)) + [(i, j) for i in range(m) for j in range(n)]
    order = list(dict.fromkeys(order))
    models = [fo.Model('f32', False), fo.Model('f32', True, 'low'), fo.Model('f32', True, 'high')]
    placements = ('first', 'last') if bias is not None else ('none',)
    fits, near = [], []
    for swap in (False, True):
        for desc, tree in fo.candidates(k, swap):
            for where in placements:
                t = with_bias(tree, k, where)
                for model in models:
                    matched = 0
                    for i, j in order:
                        if fo.evaluate(t, rows[i], cols[j], model) != saved[i][j]:
                            break
                        matched += 1
                    label = (desc + (f', bias {where}' if bias is not None else ''),
                             model.name())
                    if matched == len(order):
                        fits.append(label)
                    elif matched >= 8:
                        near.append((matched, label))
    print(f'## {name} (k = {k}, {m * n} outputs)')
    if fits:
        print('consistent with every output:')
        for desc, model in fits:
            print(f'  {desc}; {model}')
    else:
        print('no usual tree and model gives every output')
    for matched, (desc, model) in sorted(near, reverse=True)[:max_show]:
        print(f'  excluded after {matched} matching outputs: {desc}; {model}')
    return fits


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--venv', required=True)
    ap.add_argument('--case', nargs='*')
    args = ap.parse_args()
    python = os.path.join(args.venv, 'bin', 'python')
    if not os.path.exists(python):
        print(f'SKIP: no {python}')
        return SKIP
    if os.path.realpath(sys.prefix) != os.path.realpath(args.venv):
        os.execv(python, [python] + sys.argv)
    import numpy as np
    d = np.load(NPZ)
    for name, (a, b, bias, saved) in cases(d).items():
        if args.case and name not in args.case:
            continue
        judge(name, a, b, bias, saved)
    return 0


if __name__ == '__main__':
    sys.exit(main())
