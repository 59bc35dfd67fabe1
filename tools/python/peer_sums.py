#!/usr/bin/python3
"""How the peers add up: each library's matrix product seen through fprev_oracle.py (its
summation tree by FPRev's probes, the accumulation model that reproduces its outputs bit
for bit on random inputs, its accumulator's precision and rounding, whether its products
are fused, and the first batch size that changes a fixed row's bits).

    peer_sums.py --venv build/peers-venv --peer numpy_matmul --fmt f32 --k 16 64 256 --threads 1
    peer_sums.py --venv build/peers-venv --all --out sums.jsonl     # every peer, 1 and 2 threads
    peer_sums.py --table sums.jsonl                                  # the markdown table

Each (peer, threads) runs in a process of its own: the thread count is read when a library
loads, and two BLAS in one process may bind each other's symbols. Runs itself again with the
virtual environment's python (ci/setup_peers.sh); exit status 77 (a ctest skip) when that
environment, or the peer, is absent, with the reason.
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

SKIP = 77
LIBDIR = '/usr/lib/x86_64-linux-gnu'
CBLAS = {
    'refblas': f'{LIBDIR}/blas/libblas.so.3',              # Debian libblas3 (Netlib)
    'openblas': f'{LIBDIR}/openblas-pthread/libopenblas.so.0',  # Debian libopenblas0-pthread
    'blis': f'{LIBDIR}/blis-pthread/libblis.so.4',          # Debian libblis4-pthread
}

# peer -> (formats it takes, what it calls)
PEERS = {
    'numpy_matmul': (('f32', 'f16'), 'np.matmul(A, B.T) (NumPy\'s bundled OpenBLAS for f32)'),
    'numpy_dot': (('f32',), 'np.dot(A, B.T)'),
    'refblas': (('f32',), 'cblas_sgemm, Debian libblas3 (reference BLAS)'),
    'openblas': (('f32',), 'cblas_sgemm, Debian libopenblas0-pthread'),
    'blis': (('f32',), 'cblas_sgemm, Debian libblis4-pthread'),
    'torch_matmul': (('f32', 'bf16', 'f16'), 'torch.matmul(A, B.T)'),
    'torch_linear': (('f32', 'bf16'), 'torch.nn.functional.linear(A, B)'),
    'jax_matmul': (('f32', 'bf16'), 'jax.jit(jnp.matmul)(A, B.T)'),
    'jax_matmul_f32out': (('bf16',), 'jnp.matmul(A, B.T, preferred_element_type=float32)'),
}


def unavailable_reason(venv, peer=None):
    """Why the peers (or this one) cannot run, or None."""
    python = os.path.join(venv, 'bin', 'python')
    path = os.path.join(venv, 'UNAVAILABLE')
    if os.path.exists(path):
        with open(path) as f:
            return f'the peers are unavailable ({venv}): {f.read().strip()}'
    if not os.path.exists(os.path.join(venv, 'STAMP')) or not os.path.exists(python):
        return f'no peers set up at {venv} (bash ci/setup_peers.sh sets them up)'
    if peer and peer.startswith('jax') and os.path.exists(os.path.join(venv, 'JAX_UNAVAILABLE')):
        with open(os.path.join(venv, 'JAX_UNAVAILABLE')) as f:
            return f.read().strip()
    if peer in CBLAS and not os.path.exists(CBLAS[peer]):
        return f'{CBLAS[peer]} is not installed'
    return None


def reexec(venv, env=None):
    """Runs this script again with the venv's python (once: a python that is not that
    venv's would loop), or returns when it is that python already."""
    python = os.path.join(venv, 'bin', 'python')
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    if os.environ.get('ULPGATE_PEERS_REEXEC') == venv:
        print(f'SKIP: {python} does not run in {venv} (not a virtual environment there)')
        sys.exit(SKIP)
    env = dict(env or os.environ, ULPGATE_PEERS_REEXEC=venv)
    os.execve(python, [python] + sys.argv, env)


def thread_env(threads):
    env = dict(os.environ)
    for var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS', 'BLIS_NUM_THREADS'):
        env[var] = str(threads)
    env['XLA_FLAGS'] = (f'--xla_cpu_multi_thread_eigen={"true" if threads > 1 else "false"} '
                        f'intra_op_parallelism_threads={threads}')
    env['ULPGATE_SUMS_THREADS'] = str(threads)
    return env


# ---------------------------------------------------------------------------- adapters
# Each gives fn(A, B) -> C over lists of floats, C = A B^T, in the library's dtype.

def to_array(rows, dtype):
    """rows (lists of floats) as a 2-D float64 array; the oracle's probes repeat one list
    object in every row, converted once."""
    import numpy as np
    if all(r is rows[0] for r in rows):
        return np.tile(np.asarray(rows[0], np.float64), (len(rows), 1)).astype(dtype)
    return np.asarray(rows, np.float64).astype(dtype)


def make_kernel(peer, fmt):
    import numpy as np
    import fprev_oracle as fo
    threads = int(os.environ.get('ULPGATE_SUMS_THREADS', '0'))
    if peer.startswith('numpy'):
        dt = {'f32': np.float32, 'f16': np.float16}[fmt]
        op = np.matmul if peer == 'numpy_matmul' else np.dot

        def fn(a, b):
            return op(to_array(a, dt), to_array(b, dt).T).astype(np.float64).tolist()
        return fo.Kernel(fn, fmt, fmt, peer)
    if peer in CBLAS:
        import ctypes
        lib = ctypes.CDLL(CBLAS[peer])
        sgemm = lib.cblas_sgemm
        c_int, c_float, ptr = ctypes.c_int, ctypes.c_float, ctypes.c_void_p
        sgemm.argtypes = [c_int, c_int, c_int, c_int, c_int, c_int, c_float, ptr, c_int, ptr,
                          c_int, c_float, ptr, c_int]
        sgemm.restype = None

        def fn(a, b):
            a = np.ascontiguousarray(to_array(a, np.float32))
            b = np.ascontiguousarray(to_array(b, np.float32))
            m, k = a.shape
            n = b.shape[0]
            c = np.zeros((m, n), np.float32)
            # Row major, C = 1 * A * B^T + 0 * C (CblasRowMajor 101, NoTrans 111, Trans 112)
            sgemm(101, 111, 112, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, k, 0.0,
                  c.ctypes.data, n)
            return c.astype(np.float64).tolist()
        return fo.Kernel(fn, fmt, fmt, peer)
    if peer.startswith('torch'):
        import torch
        if threads:
            torch.set_num_threads(threads)
        dt = {'f32': torch.float32, 'bf16': torch.bfloat16, 'f16': torch.float16}[fmt]

        def fn(a, b):
            ta = torch.from_numpy(to_array(a, np.float64)).to(dt)
            tb = torch.from_numpy(to_array(b, np.float64)).to(dt)
            if peer == 'torch_linear':
                c = torch.nn.functional.linear(ta, tb)
            else:
                c = torch.matmul(ta, tb.T)
            return c.to(torch.float64).tolist()
        return fo.Kernel(fn, fmt, fmt, peer)
    if peer.startswith('jax'):
        import jax
        import jax.numpy as jnp
        dt = {'f32': jnp.float32, 'bf16': jnp.bfloat16}[fmt]
        if peer == 'jax_matmul_f32out':
            mm = jax.jit(lambda x, y: jnp.matmul(x, y.T, preferred_element_type=jnp.float32))
            out = 'f32'
        else:
            mm = jax.jit(lambda x, y: jnp.matmul(x, y.T))
            out = fmt

        def fn(a, b):
            ja = jnp.asarray(to_array(a, np.float32), dt)  # exact: values are of fmt
            jb = jnp.asarray(to_array(b, np.float32), dt)
            return np.asarray(mm(ja, jb)).astype(np.float64).tolist()
        return fo.Kernel(fn, fmt, out, peer)
    raise ValueError(peer)


def path_note(peer, fmt):
    """What the library says it runs (MKL_VERBOSE, ONEDNN_VERBOSE), for the table."""
    if not peer.startswith('torch'):
        return ''
    dtype = {'f32': 'float32', 'bf16': 'bfloat16', 'f16': 'float16'}[fmt]
    code = ('import torch\n'
            f'a = torch.ones(64, 256, dtype=torch.{dtype})\n'
            + ('torch.nn.functional.linear(a, a)\n' if peer == 'torch_linear'
               else 'torch.matmul(a, a.T)\n'))
    env = dict(os.environ, MKL_VERBOSE='1', ONEDNN_VERBOSE='1')
    r = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith('MKL_VERBOSE') and 'GEMM' in line.upper():
            return 'MKL ' + line.split()[1].split('(')[0]
        if line.startswith('onednn_verbose') and ',exec,' in line:
            parts = line.split(',')  # ...,exec,cpu,matmul,IMPLEMENTATION,...
            return f'oneDNN {parts[5]} {parts[6]}'
    return 'no MKL or oneDNN call seen (ATen)'


# ---------------------------------------------------------------------------- measuring

def measure(peer, fmt, ks, shape, max_rows, positions):
    import fprev_oracle as fo
    kernel = make_kernel(peer, fmt)
    rows = []
    for k in ks:
        t0 = time.time()
        try:
            r = fo.measure(kernel, k, shape, trials=2, positions=positions)
        except fo.OracleError as e:
            rows.append({'peer': peer, 'fmt': fmt, 'k': k, 'error': str(e)})
            continue
        inv = fo.batch_invariance(kernel, k, max_rows=max_rows, n=shape[1])
        r.pop('tree')
        r.update(peer=peer, fmt=fmt, batch_first_change=inv,
                 threads=int(os.environ.get('ULPGATE_SUMS_THREADS', '0')),
                 seconds=round(time.time() - t0, 1), shape=list(shape))
        rows.append(r)
    return rows


def versions(peer):
    out = {}
    import numpy
    out['numpy'] = numpy.__version__
    if peer.startswith('torch'):
        import torch
        out['torch'] = torch.__version__
    if peer.startswith('jax'):
        import jax
        import jaxlib
        out['jax'] = jax.__version__
        out['jaxlib'] = jaxlib.__version__
    if peer in CBLAS:
        out['lib'] = os.path.realpath(CBLAS[peer])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--venv', default=os.path.join(HERE, '..', '..', 'build', 'peers-venv'))
    ap.add_argument('--peer')
    ap.add_argument('--fmt')
    ap.add_argument('--k', type=int, nargs='+', default=[16, 64, 256, 1024, 4096])
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--shape', type=int, nargs=2, default=[64, 16])
    ap.add_argument('--max-rows', type=int, default=32)
    ap.add_argument('--positions', type=int, default=24)
    ap.add_argument('--all', action='store_true')
    ap.add_argument('--only', nargs='+', help='with --all: these peers alone')
    ap.add_argument('--out')
    ap.add_argument('--table')
    args = ap.parse_args()
    if args.table:
        print(table([json.loads(line) for line in open(args.table)]))
        return 0
    why = unavailable_reason(args.venv, args.peer)
    if why:
        print(f'SKIP: {why}')
        return SKIP
    reexec(args.venv)
    if args.all:
        out = open(args.out, 'a') if args.out else sys.stdout
        for peer, (fmts, _) in PEERS.items():
            if args.only and peer not in args.only:
                continue
            if unavailable_reason(args.venv, peer):
                print(f'{peer}: {unavailable_reason(args.venv, peer)}', file=sys.stderr)
                continue
            for fmt in fmts:
                for threads in (1, 2):
                    # Counts past 2^8 (2^11) are not exact in a bf16 (f16) output; two
                    # threads at the sizes where a library would split the work.
                    limit = {'bf16': 256, 'f16': 2048}.get(fmt, 1 << 30)
                    if peer == 'jax_matmul_f32out':
                        limit = 1 << 30
                    ks = [k for k in args.k if k <= limit
                          and (threads == 1 or k in (256, 1024))]
                    cmd = [sys.executable, __file__, '--venv', args.venv, '--peer', peer,
                           '--fmt', fmt, '--threads', str(threads), '--shape',
                           *map(str, args.shape), '--max-rows', str(args.max_rows),
                           '--positions', str(args.positions), '--k', *map(str, ks)]
                    r = subprocess.run(cmd, env=thread_env(threads), capture_output=True,
                                       text=True)
                    if r.returncode:
                        print(f'{peer} {fmt} {threads}: failed\n{r.stderr[-2000:]}',
                              file=sys.stderr)
                        continue
                    out.write(r.stdout)
                    out.flush()
                    print(f'{peer} {fmt} threads {threads}: done', file=sys.stderr)
        return 0
    if 'ULPGATE_SUMS_THREADS' not in os.environ:
        os.execve(sys.executable, [sys.executable] + sys.argv, thread_env(args.threads))
    rows = measure(args.peer, args.fmt, args.k, tuple(args.shape), args.max_rows,
                   args.positions)
    note = path_note(args.peer, args.fmt)
    ver = versions(args.peer)
    for r in rows:
        r['path'] = note
        r['versions'] = ver
        print(json.dumps(r))
    return 0


def _short_models(models):
    """The models that reproduce, in a few words."""
    if not models:
        return 'NONE'
    words = set()
    for m in models:
        words.add('fused' if 'fused' in m else 'rounded')
    acc = sorted({m.split(',')[0].replace('acc ', '') for m in models})
    return f'{"/".join(sorted(words))} products, acc {"/".join(acc)}'


def table(rows):
    """One line per (peer, format, k), threads merged where 1 and 2 agree."""
    out = ['| peer | version | format | k | tree at C[0][0] of a 64 x 16 call | products | '
           'accumulator | batch: first m that changes row 0 | threads | reproduced by |',
           '|' + ' --- |' * 10]
    groups = {}
    for r in rows:
        groups.setdefault((r['peer'], r['fmt'], r['k']), []).append(r)
    for (peer, fmt, k), rs in groups.items():
        def sig(r):
            return (r.get('error'), r.get('describe'), r.get('batch_first_change'),
                    str(r.get('other', {}).get('describe')))
        merged = {}
        for r in rs:
            merged.setdefault(sig(r), []).append(r)
        for same in merged.values():
            r = same[0]
            threads = ', '.join(str(x['threads']) for x in same)
            ver = r.get('versions', {})
            version = ver.get('torch') or (ver.get('jax') and f'jax {ver["jax"]}') or \
                (ver.get('lib') and os.path.basename(ver['lib'])) or f'numpy {ver.get("numpy")}'
            if 'error' in r:
                out.append(f'| {peer} | {version} | {fmt} | {k} | {r["error"]} | | | | '
                           f'{threads} | |')
                continue
            acc = r['accumulator']
            fused = {True: 'fused', False: 'rounded', None: 'exact in f32'}[acc['fused']]
            bits = f'{acc["bits"]} bits, {acc.get("rounding", "?")}'
            inv = r['batch_first_change']
            tree = r['describe']
            if r.get('other'):
                tree += (f' (from row {r["other"]["at"][0]} on: {r["other"]["describe"]})')
            path = f' ({r["path"]})' if r.get('path') else ''
            out.append(f'| {peer}{path} | {version} | {fmt} | {k} | {tree} | {fused} | {bits} | '
                       f'{inv if inv else "none up to 32"} | {threads} | '
                       f'{_short_models(r["models"])} |')
    return '\n'.join(out)


if __name__ == '__main__':
    sys.exit(main())
