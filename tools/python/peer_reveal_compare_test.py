#!/usr/bin/python3
"""Two revealers, written apart, on the same libraries: ulpgate.reveal (the C++
suites/reveal/ through the Python door) and fprev_oracle.py (plain Python, sharing no code
with it) must find the same summation tree for output (0, 0) of NumPy's and PyTorch's
matrix products, on the same calls (m x n x k = 64 x 16 x k, one probe per call). A bug in
either one's probes or its reconstruction shows here as two different trees.

    peer_reveal_compare_test.py --venv build/peers-venv --python-dir build/python

Exit status 77 (a ctest skip) without the venv or the built module, with the reason.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_sums as ps  # noqa: E402

SKIP = 77
SHAPE = (64, 16)


def _lists(s):
    """ulpgate's nested lists as the oracle's nested tuples (without recursion: a chain of
    256 terms nests 255 deep)."""
    stack, out = [(s, False)], []
    while stack:
        x, done = stack.pop()
        if isinstance(x, int):
            out.append(x)
        elif done:
            vals = out[len(out) - len(x):]
            del out[len(out) - len(x):]
            out.append(tuple(vals))
        else:
            stack.append((x, True))
            stack.extend((c, False) for c in reversed(x))
    return out[0]


def cases():
    import numpy as np
    import torch
    torch.set_num_threads(1)

    def np_mm(a, b):
        return a @ b.T

    def torch_mm(a, b):
        return torch.matmul(a, b.T)

    def np_kernel(a, b):
        return np_mm(ps.to_array(a, np.float32), ps.to_array(b, np.float32)).astype(
            np.float64).tolist()

    def torch_kernel(dtype):
        def fn(a, b):
            ta = torch.from_numpy(ps.to_array(a, np.float64)).to(dtype)
            tb = torch.from_numpy(ps.to_array(b, np.float64)).to(dtype)
            return torch_mm(ta, tb).to(torch.float64).tolist()
        return fn

    return [
        ('numpy a @ b.T f32', np_mm, dict(dtype='f32'), np_kernel, 'f32'),
        ('torch.matmul f32', torch_mm, dict(dtype='f32', tensors='torch'),
         torch_kernel(torch.float32), 'f32'),
        ('torch.matmul bf16', torch_mm, dict(dtype='bf16', tensors='torch'),
         torch_kernel(torch.bfloat16), 'bf16'),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--venv', required=True)
    ap.add_argument('--python-dir', required=True)
    ap.add_argument('--k', type=int, nargs='+', default=[64, 256])
    args = ap.parse_args()
    why = ps.unavailable_reason(args.venv)
    if why:
        print(f'SKIP: {why}')
        return SKIP
    if not os.path.isdir(os.path.join(args.python_dir, 'ulpgate')):
        print(f'SKIP: no ulpgate package built in {args.python_dir}')
        return SKIP
    env = ps.thread_env(1)
    env['PYTHONPATH'] = os.pathsep.join([args.python_dir, env.get('PYTHONPATH', '')])
    ps.reexec(args.venv, env)
    # The built package (with its module), not its sources beside this script.
    sys.path.insert(0, os.path.abspath(args.python_dir))
    try:
        import ulpgate
    except ImportError as e:
        print(f'SKIP: the ulpgate package does not import in the venv: {e}')
        return SKIP
    import fprev_oracle as fo
    failures = 0
    for name, fn, opts, kernel_fn, fmt in cases():
        kernel = fo.Kernel(kernel_fn, fmt, fmt, name)
        for k in args.k:
            r = ulpgate.reveal(fn, k, m=SHAPE[0], n=SHAPE[1], batch=False, fingerprint=False,
                               check_outputs=0, **opts)
            mine, _ = fo.reveal_tree(kernel, k, SHAPE)
            if r.structure is None:
                print(f'FAIL: {name} k={k}: ulpgate.reveal found no tree: {r.not_a_tree}')
                failures += 1
                continue
            theirs = _lists(r.structure)
            same = fo.key(theirs) == fo.key(mine)
            print(f'{name} k={k}: oracle: {fo.describe(mine)}; ulpgate.reveal: '
                  f'{r.known_shape or fo.describe(theirs)} ({r.calls} calls): '
                  f'{"the same tree" if same else "DIFFERENT trees"}')
            failures += not same
    print(f'{failures} failures')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
