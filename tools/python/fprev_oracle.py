#!/usr/bin/python3
"""How a matrix product adds up, found from outside: an oracle in plain Python (standard
library only) that shares no code with ulpgate's C++ and does not import it.

It sees a kernel only through a callable `matmul(A, B) -> C` over lists of Python floats,
C[m][n] = sum_k A[m][k] * B[n][k], every input value exactly representable in the kernel's
input format, every output the exact value of the kernel's output (widened to a float).

- `reveal_tree`: the summation tree of one output, by FPRev's method (Xie et al., "FPRev:
  Revealing the Order of Floating-Point Summation", USENIX ATC 2025). A probe row is all
  ones but a pair i, j holding +M and -M, with M so large that a one added to a sum holding
  M is lost. Wherever the pair meets, the two cancel exactly, and every one added before
  that (in the subtree where they meet) went into a sum holding M or -M and is lost; every
  one added after survives, exactly. The output counts those: K - |subtree(lca(i, j))|.
  Those sizes, probed from one leaf to the rest and again inside each group, give the tree;
  a node where several subtrees meet at once (a multi-term adder) comes out as one node
  with more than two children. Probes go into the rows of one call, so the tree found is
  the tree of that call's shape (m rows, n columns).
- `accumulator`: whether products enter the sum exact (fused) or rounded, and the
  precision and rounding of the accumulator (probes 1 + 2^-j, then - 1).
- `batch_invariance`: one fixed row alone and in batches of 1..N rows: the first batch
  size whose bits for that row differ.
- `evaluate` / `reproduces`: a tree and an accumulation model evaluated in exact
  arithmetic, each operation rounded once; a model found is checked by reproducing the
  kernel's outputs bit for bit on random inputs, which cannot pass by accident.
- `describe`: the tree named against the usual shapes (a sequential chain, strided lanes
  with their horizontal reduction, blocks of the K loop).

    fprev_oracle.py --self-test       # the synthetic kernels of fprev_oracle_test.py
"""

import math
import random

INF = float('inf')

# name -> (precision in bits, smallest normal exponent, largest exponent)
FORMATS = {
    'f64': (53, -1022, 1023),
    'f32': (24, -126, 127),
    'bf16': (8, -126, 127),
    'f16': (11, -14, 15),
}


class OracleError(Exception):
    """The kernel's answers are not those of a summation tree (or not readable)."""


# ---------------------------------------------------------------------------- rounding

def _split_round(x, fmt):
    """x (a finite nonzero float) in units of the last place `fmt` keeps at x's binade:
    (scaled, q) with x = scaled * 2^q, scaled exact."""
    p, emin, _ = FORMATS[fmt]
    e = math.frexp(x)[1] - 1  # x in [2^e, 2^(e+1))
    q = max(e, emin) - (p - 1)
    return math.ldexp(x, -q), q


def round_to(x, fmt, toward=0):
    """x rounded to nearest, ties to even, in `fmt` (overflow to infinity). `toward`: the
    sign of what x lacks of the exact value (x itself was rounded), used only when x is a
    tie: then the exact value is past it on that side."""
    if fmt == 'f64' or x == 0 or not math.isfinite(x):
        return x
    scaled, q = _split_round(x, fmt)
    lo = math.floor(scaled)
    frac = scaled - lo  # exact: scaled has at most 53 significant bits
    if frac == 0.5 and toward:
        r = lo + 1 if toward > 0 else lo
    else:
        r = round(scaled)  # Python rounds half to even
    y = math.ldexp(r, q)
    if abs(y) >= math.ldexp(1.0, FORMATS[fmt][2] + 1):
        return math.copysign(INF, x)
    return y


def round_sum(terms, fmt):
    """The exact sum of floats `terms`, rounded once to `fmt` (nearest even). fsum gives the
    sum rounded to binary64; a second rounding to a narrower format is wrong only when that
    binary64 value is a tie of the narrower one, and then the sign of the remainder (exact
    too, by fsum) says which way the exact value lies."""
    if any(not math.isfinite(t) for t in terms):
        return sum(terms)
    r = math.fsum(terms)
    if fmt == 'f64':
        return r
    rest = math.fsum(list(terms) + [-r]) if r != 0 or len(terms) > 1 else 0.0
    return round_to(r, fmt, (rest > 0) - (rest < 0))


def representable(x, fmt):
    return round_to(x, fmt) == x


# ---------------------------------------------------------------------------- trees
# A leaf is an int (the k index); a node is a tuple of two or more children, in no
# particular order (the tree is unordered: addition commutes; `key` compares trees).

def _postorder(t, leaf_fn, node_fn):
    """node_fn(node, its children's values) bottom up, without recursion (a sequential
    sum of 4096 terms is a tree 4095 deep)."""
    stack, out = [(t, False)], []
    while stack:
        x, done = stack.pop()
        if isinstance(x, int):
            out.append(leaf_fn(x))
        elif done:
            vals = out[len(out) - len(x):]
            del out[len(out) - len(x):]
            out.append(node_fn(x, vals))
        else:
            stack.append((x, True))
            stack.extend((c, False) for c in reversed(x))
    return out[0]


def leaves(t):
    out, stack = [], [t]
    while stack:
        x = stack.pop()
        if isinstance(x, int):
            out.append(x)
        else:
            stack.extend(reversed(x))
    return out


def node(children):
    return tuple(children)


def canon(t):
    """The tree with every node's children in the order of their smallest leaves (for
    showing it; `key` compares trees)."""
    return _postorder(t, lambda i: i, lambda _, vals: tuple(sorted(vals, key=_smallest)))


def _smallest(t):
    return min(leaves(t))


def key(t):
    """A fingerprint of the unordered tree (equal trees, equal keys; a hash of the sorted
    children's keys at every node)."""
    return _postorder(t, lambda i: hash(('leaf', i)),
                      lambda _, vals: hash(tuple(sorted(vals))))


def size(t):
    return _postorder(t, lambda _: 1, lambda _, vals: sum(vals))


def depth(t):
    return _postorder(t, lambda _: 0, lambda _, vals: 1 + max(vals))


def chain(parts):
    """((p0 + p1) + p2) + ... (a sequential sum)."""
    acc = parts[0]
    for p in parts[1:]:
        acc = node([acc, p])
    return acc


def halving(parts):
    """parts[i] + parts[i + n/2], again until one is left (a SIMD horizontal reduction)."""
    while len(parts) > 1:
        h = (len(parts) + 1) // 2
        parts = [node([parts[i], parts[i + h]]) if i + h < len(parts) else parts[i]
                 for i in range(h)]
    return parts[0]


def pairwise(parts):
    """(p0 + p1) + (p2 + p3) ..., adjacent pairs, level after level."""
    while len(parts) > 1:
        parts = [node(parts[i:i + 2]) if i + 1 < len(parts) else parts[i]
                 for i in range(0, len(parts), 2)]
    return parts[0]


def recursive_halves(parts):
    """The sum of the first half plus the sum of the second (a recursive pairwise sum)."""
    if len(parts) == 1:
        return parts[0]
    h = len(parts) // 2
    return node([recursive_halves(parts[:h]), recursive_halves(parts[h:])])


COMBINES = {'halving': halving, 'sequential': chain, 'pairwise': pairwise}


def lanes(idx, n_lanes, group=1, combine='halving'):
    """Strided lanes: lane l holds the k of its `group` consecutive places in every stride
    of n_lanes * group and sums them in order; then the lanes are combined."""
    stride = n_lanes * group
    per_lane = []
    for lane in range(n_lanes):
        mine = [idx[t + lane * group + s] for t in range(0, len(idx), stride)
                for s in range(group) if t + lane * group + s < len(idx)]
        if mine:
            per_lane.append(chain(mine))
    return COMBINES[combine](per_lane)


def blocked(k, block, inner, outer='sequential'):
    """The K loop in blocks of `block`: each block summed by inner(indices) from zero, the
    blocks then combined by `outer`."""
    parts = [inner(list(range(s, min(s + block, k)))) for s in range(0, k, block)]
    return COMBINES[outer](parts) if len(parts) > 1 else parts[0]


def candidates(k, swap_pairs=False, blocks=None):
    """(description, tree), one after another, for the usual shapes of a K loop;
    swap_pairs: with each pair of k (2i, 2i + 1) taken odd first (as VDPBF16PS adds its two
    products into a lane)."""
    seen = set()

    def out(desc, tree):
        if swap_pairs:
            tree = _relabel(tree, lambda i: i ^ 1 if (i ^ 1) < k else i)
            desc += ', each pair of k odd first'
        fingerprint = key(tree)
        if fingerprint in seen:
            return None
        seen.add(fingerprint)
        return desc, tree

    for c in (out('sequential', chain(list(range(k)))),
              out('recursive halves', recursive_halves(list(range(k)))),
              out('pairwise (adjacent pairs, level by level)', pairwise(list(range(k))))):
        if c:
            yield c
    if blocks is None:
        blocks = (8, 16, 32, 64, 96, 128, 192, 256, 320, 384, 512, 768, 1024, 2048, 4096)
    blocks = sorted({b for b in blocks if 1 < b < k}, reverse=True)
    for block in [k] + blocks:
        for n_lanes in (1, 2, 4, 8, 16, 32, 64):
            for group in (1, 2, 4):
                if n_lanes * group > block or (n_lanes == 1 and group > 1):
                    continue
                for combine in ('halving', 'sequential', 'pairwise'):
                    if n_lanes == 1 and combine != 'halving':
                        continue
                    inner_desc = ('sequential' if n_lanes == 1 else
                                  f'{n_lanes} strided lanes'
                                  + (f' of {group} consecutive' if group > 1 else '')
                                  + f' + {combine}')
                    for outer in ('sequential', 'pairwise'):
                        if block == k and outer != 'sequential':
                            continue
                        tree = blocked(k, block, lambda i, n=n_lanes, g=group, c=combine:
                                       lanes(i, n, g, c), outer)
                        desc = (inner_desc if block == k else
                                f'blocks of {block}: {inner_desc} in each, blocks {outer}')
                        c = out(desc, tree)
                        if c:
                            yield c


def _relabel(t, f):
    return _postorder(t, f, lambda _, vals: node(vals))



def describe(tree):
    """A short name for the tree: the first usual shape it is, else its outline."""
    k = size(tree)
    want = key(tree)
    uneven = _blocks_in_sequence(tree)
    if uneven and len({size(b) for _, b in uneven[:-1]}) > 1:
        return _describe_blocks(uneven)
    # A blocked K loop shows its block at the top: the last block beside the rest (blocks
    # in sequence), or halves of blocks (blocks pairwise); only those sizes are tried.
    blocks, level = set(), [tree]
    for _ in range(12):  # down the top levels: pairwise blocks show their size there
        level = [c for t in level if not isinstance(t, int) for c in t]
        blocks |= {size(c) for c in level[:64]}
    blocks = tuple(sorted(b for b in blocks if k % b == 0 and b >= 8))
    for swap in (False, True):
        for desc, c in candidates(k, swap, blocks):
            if key(c) == want:
                return desc
    if uneven:
        return _describe_blocks(uneven)
    root = [size(c) for c in tree] if not isinstance(tree, int) else []
    arities = sorted({len(t) for t in _nodes(tree)})
    return (f'unrecognized: depth {depth(tree)}, root splits {root[:8]}'
            f'{"..." if len(root) > 8 else ""}, node arities {arities}')


def _describe_blocks(blocks):
    parts = []
    for lo, sub in blocks:
        d = describe(_relabel(sub, lambda i, lo=lo: i - lo))
        if parts and parts[-1][1] == d:
            parts[-1][0].append(size(sub))
        else:
            parts.append(([size(sub)], d))
    return 'K in blocks added in sequence: ' + '; '.join(
        f'{_sizes(sizes)}: {d}' for sizes, d in parts)


def _sizes(sizes):
    runs = []
    for x in sizes:
        if runs and runs[-1][1] == x:
            runs[-1][0] += 1
        else:
            runs.append([1, x])
    return ' + '.join(f'{n} x {x}' if n > 1 else str(x) for n, x in runs)


def _blocks_in_sequence(tree, smallest=8):
    """[(first k, subtree)] where the tree adds contiguous blocks of k one after another
    (a K loop cut into blocks of uneven size, as a BLAS cuts it), each of at least
    `smallest` terms; None where it does not."""
    blocks, t = [], tree
    while not isinstance(t, int) and len(t) == 2:
        (x, y) = t
        lx, ly = leaves(x), leaves(y)
        if min(lx) > min(ly):
            (x, lx), (y, ly) = (y, ly), (x, lx)
        lo = min(ly)
        if sorted(ly) != list(range(lo, lo + len(ly))) or max(lx) >= lo or len(ly) < smallest:
            break
        blocks.append((lo, y))
        t = x
    if not blocks or size(t) < smallest:
        return None
    blocks.append((0, t))
    return blocks[::-1]


def _nodes(t):
    out, stack = [], [t]
    while stack:
        x = stack.pop()
        if not isinstance(x, int):
            out.append(x)
            stack.extend(x)
    return out


# ---------------------------------------------------------------------------- models

class Model:
    """How a tree's operations round. `acc`: the accumulator's format, every addition
    rounded to it once. `fused`: a product enters the sum exact (a fused multiply-add)
    rather than rounded to `acc` first; where two products meet, the one of the lower k
    (`first='low'`, else the higher) is rounded first, as a lane starting from zero does.
    A node of more than two children adds its children exactly and rounds once. `out`: the
    output format, the accumulator rounded to it at the end."""

    def __init__(self, acc='f32', fused=False, first='low', out='f32'):
        self.acc, self.fused, self.first, self.out = acc, fused, first, out

    def name(self):
        return (f'acc {self.acc}, products {"fused (exact)" if self.fused else "rounded"}'
                + (f', two products: the {self.first} k rounded first' if self.fused else '')
                + (f', output {self.out}' if self.out != self.acc else ''))


def evaluate(tree, a, b, model):
    """sum_k a[k] * b[k] in the order of `tree`, rounded as `model` says."""
    acc = model.acc

    def product(k):
        return a[k] * b[k]  # exact: both at most 24 bits, the product at most 48

    def rounded_product(k):
        return round_to(product(k), acc)

    def value(t, vals):
        """t's value from its children's values `vals` (a leaf child's: its rounded product)."""
        if len(t) > 2:
            return round_sum([product(c) if isinstance(c, int) and model.fused else v
                              for c, v in zip(t, vals)], acc)
        (x, y), (vx, vy) = t, vals
        if not model.fused:
            # Two acc values: the binary64 sum rounded again to acc is the correctly
            # rounded sum for acc of at most 24 bits (53 >= 2 * 24 + 2).
            return round_to(vx + vy, acc)
        if isinstance(x, int) and isinstance(y, int):
            first, second = sorted((x, y), reverse=model.first != 'low')
            return round_sum([rounded_product(first), product(second)], acc)
        if isinstance(x, int):
            return round_sum([product(x), vy], acc)
        if isinstance(y, int):
            return round_sum([vx, product(y)], acc)
        return round_to(vx + vy, acc)

    return round_to(_postorder(tree, rounded_product, value), model.out)


def models_for(fmt_in, fmt_out):
    out = []
    for acc in ('f32', 'f64') if fmt_in == 'f32' else ('f32', fmt_in):
        for fused, first in ((False, 'low'), (True, 'low'), (True, 'high')):
            out.append(Model(acc, fused, first, fmt_out))
    return out


def random_inputs(rng, rows, k, fmt):
    """Values of `fmt` with every significand bit random, of either sign, over a few
    binades (2^-4 to 2^3), so that every rounding in a sum is felt."""
    p = FORMATS[fmt][0]
    lo = 1 << (p - 1)

    def one():
        x = math.ldexp(lo | rng.getrandbits(p - 1), rng.randint(-4, 2) - (p - 1))
        return -x if rng.getrandbits(1) else x
    return [[one() for _ in range(k)] for _ in range(rows)]


def _spots(rng, shape, positions, only):
    m, n = shape
    if only is not None:
        return [only]
    spots = {(0, 0), (m - 1, n - 1)}
    while len(spots) < min(positions, m * n):
        spots.add((rng.randrange(m), rng.randrange(n)))
    return sorted(spots)


def reproduces(kernel, tree, model, shape, rng, trials=2, positions=24, only=None):
    """Whether `model` over `tree` gives the kernel's outputs bit for bit, on `trials`
    random calls of `shape` (m, n), at `positions` outputs of each (the first and the last
    included; `only`: that output alone). Returns (True, outputs checked) or
    (False, (m, n, got, want))."""
    m, n = shape
    k = size(tree)
    checked = 0
    for _ in range(trials):
        a = random_inputs(rng, m, k, kernel.fmt_in)
        b = random_inputs(rng, n, k, kernel.fmt_in)
        c = kernel.matmul(a, b)
        for i, j in _spots(rng, shape, positions, only):
            want = evaluate(tree, a[i], b[j], model)
            if not _same(c[i][j], want):
                return False, (i, j, c[i][j], want)
            checked += 1
    return True, checked


def _same(x, y):
    return (x == y and math.copysign(1, x) == math.copysign(1, y)) or (x != x and y != y)


def fit_models(kernel, tree, shape, seed=1, trials=2, positions=24, only=None):
    """The models that reproduce the kernel over `tree`, all judged on the same calls
    (`only`: at that output alone, for a kernel whose outputs add in different orders)."""
    rng = random.Random(seed)
    m, n = shape
    k = size(tree)
    alive = models_for(kernel.fmt_in, kernel.fmt_out)
    for _ in range(trials):
        a = random_inputs(rng, m, k, kernel.fmt_in)
        b = random_inputs(rng, n, k, kernel.fmt_in)
        c = kernel.matmul(a, b)
        for i, j in _spots(rng, shape, positions, only):
            alive = [md for md in alive if _same(c[i][j], evaluate(tree, a[i], b[j], md))]
    return alive


# ---------------------------------------------------------------------------- probes

class Kernel:
    """A matmul under test: fn(A, B) -> C over lists of floats (C[m][n] = sum_k A[m][k] B[n][k]),
    its input and output formats (names of FORMATS)."""

    def __init__(self, fn, fmt_in='f32', fmt_out=None, name=''):
        self.fn, self.fmt_in, self.fmt_out, self.name = fn, fmt_in, fmt_out or fmt_in, name
        self.calls = 0

    def matmul(self, a, b):
        self.calls += 1
        return self.fn(a, b)


def probe_values(fmt_in, fmt_out, k):
    """(unit, big): every term is unit or +-big (B all ones). big must swallow up to k units
    in any accumulator up to binary64 (or in a float32 one, where a float16 big cannot
    be large), and the count of units, times unit, must be exact in the output format."""
    if fmt_in == 'f16':
        unit, big = 2.0 ** -24, 2.0 ** 15  # products exact in f16 itself; 2^39 apart
    else:
        unit, big = 1.0, 2.0 ** 80
    p_out = FORMATS[fmt_out][0]
    if k - 2 > 2 ** p_out:
        raise OracleError(f'k = {k}: counts up to {k - 2} are not exact in {fmt_out} '
                          f'({p_out} bits); probe a smaller k or a wider output')
    return unit, big


class Prober:
    """Cancellation probes in calls of shape (m, k) x (n, k). Packed, each row of a call
    holds a probe of its own (fast, but it assumes every row adds in the same order, which
    some kernels do not: their edge rows take another path); else each call holds one
    probe in every row, the answer read at `at`, and the other outputs say whether they add
    in the same order (`disagree`: the first positions that do not)."""

    def __init__(self, kernel, k, shape=(1, 1), pack=False, at=(0, 0)):
        self.kernel, self.k, (self.m, self.n) = kernel, k, shape
        self.pack, self.at = pack, at
        self.unit, self.big = probe_values(kernel.fmt_in, kernel.fmt_out, k)
        self.count = 0
        self.disagree = []

    def _row(self, i, j):
        row = [self.unit] * self.k
        row[i], row[j] = self.big, -self.big
        return row

    def _size(self, i, j, v):
        count = v / self.unit
        if not (count == int(count) and 0 <= count <= self.k - 2):
            raise OracleError(f'probe ({i}, {j}) gave {v!r}: not a count of units in '
                              '[0, k-2] (no tree adds this way, or big was not absorbing)')
        return self.k - int(count)

    def lca_sizes(self, pairs):
        """|subtree(lca(i, j))| for each (i, j)."""
        ones_b = [[1.0] * self.k for _ in range(self.n)]
        if not self.pack:
            out = []
            for i, j in pairs:
                row = self._row(i, j)
                c = self.kernel.matmul([row] * self.m, ones_b)  # one list, m times
                self.count += 1
                v = c[self.at[0]][self.at[1]]
                out.append(self._size(i, j, v))
                if len(self.disagree) < 8:
                    for r, crow in enumerate(c):
                        bad = [col for col, x in enumerate(crow) if x != v]
                        if bad:
                            self.disagree.append({'pair': (i, j), 'at': (r, bad[0]),
                                                  'size': self.k - int(crow[bad[0]] / self.unit)
                                                  if crow[bad[0]] == crow[bad[0]] else None,
                                                  'size_at': out[-1]})
                            break
            return out
        out = []
        for s in range(0, len(pairs), self.m):
            batch = pairs[s:s + self.m]
            a = [self._row(i, j) for i, j in batch]
            a += [[self.unit] * self.k for _ in range(self.m - len(batch))]
            c = self.kernel.matmul(a, ones_b)
            self.count += len(batch)
            for r, (i, j) in enumerate(batch):
                vals = set(c[r])
                if len(vals) != 1:
                    raise OracleError(f'probe ({i}, {j}): the columns disagree: '
                                      f'{sorted(vals)[:4]}')
                out.append(self._size(i, j, vals.pop()))
        return out


def _parallel(gens):
    """Runs generators of probe requests side by side: one request for all of them."""
    results = [None] * len(gens)
    sends = {i: None for i in range(len(gens))}
    while sends:
        reqs = {}
        for i, s in sends.items():
            try:
                reqs[i] = gens[i].send(s)
            except StopIteration as e:
                results[i] = e.value
        if not reqs:
            break
        flat = [p for i in reqs for p in reqs[i]]
        got = (yield flat) if flat else []
        sends, at = {}, 0
        for i in reqs:
            sends[i] = got[at:at + len(reqs[i])]
            at += len(reqs[i])
    return results


def _assemble(r, others, sizes):
    """The subtree of leaf r, given every other leaf of it with |subtree(lca(r, j))|: the
    leaves of one size join r's subtree at one node, as one or more sibling subtrees."""
    groups = {}
    for j, s in zip(others, sizes):
        groups.setdefault(s, []).append(j)
    levels = sorted(groups)
    splits = yield from _parallel([_split(groups[lv], lv) for lv in levels])
    tree, have = r, 1
    for lv, children in zip(levels, splits):
        tree = node([tree] + children)
        have += len(groups[lv])
        if have != lv:
            raise OracleError(f'leaf {r}: {have} leaves meet at a node whose probes say '
                              f'{lv} (not a tree: exact multi-term adds?)')
    return tree


def _split(group, lv):
    """`group`: the leaves of sibling subtrees that meet at a node of size lv; the subtrees."""
    children = []
    group = sorted(group)
    while group:
        r, rest = group[0], group[1:]
        sizes = (yield [(r, j) for j in rest]) if rest else []
        if any(s > lv for s in sizes):
            raise OracleError(f'leaf {r}: a pair meets above the node of size {lv} they share')
        inside = [(j, s) for j, s in zip(rest, sizes) if s < lv]
        child = yield from _assemble(r, [j for j, _ in inside], [s for _, s in inside])
        children.append(child)
        group = [j for j, s in zip(rest, sizes) if s == lv]
    return children


def reveal_tree(kernel, k, shape=(1, 1), pack=False, at=(0, 0)):
    """The summation tree of the kernel's output `at` for K = k, probed in calls of `shape`
    (Prober says how). Returns (tree, prober): prober.count probes, prober.disagree."""
    prober = Prober(kernel, k, shape, pack, at)
    gen = _split(list(range(k)), k)
    try:
        req = gen.send(None)
        while True:
            req = gen.send(prober.lca_sizes(req))
    except StopIteration as e:
        children = e.value
    tree = children[0] if len(children) == 1 else node(children)
    if sorted(leaves(tree)) != list(range(k)):
        raise OracleError('the probes lost leaves')
    return tree, prober


# ---------------------------------------------------------------------------- accumulator

def _call_row(kernel, k, shape, row, b_row=None):
    m, n = shape
    a = [row] + [[0.0] * k for _ in range(m - 1)]
    b = [b_row or [1.0] * k] + [[1.0] * k for _ in range(n - 1)]
    return kernel.matmul(a, b)[0][0]


def accumulator(kernel, tree, shape=(1, 1)):
    """Probes of the accumulator, placed by the tree: i0 and i1 are the first two leaves
    to meet (in one lane), i2 a leaf that joins them only at the root, every other term
    zero. Returns a dict: fused, bits, rounding (and the raw answers)."""
    k = size(tree)
    i0, i1, i2 = _probe_places(tree)
    res = {}
    fmt_in = kernel.fmt_in

    def row(vals):
        r = [0.0] * k
        for i, v in vals.items():
            r[i] = v
        return r

    # Precision: (1 + 2^-j) held, then -1 added at the root: 2^-j survives while the
    # accumulator keeps j + 1 bits.
    bits = None
    for j in range(1, 64):
        t = 2.0 ** -j
        if not representable(t, fmt_in) or not representable(t, kernel.fmt_out):
            break
        got = _call_row(kernel, k, shape, row({i0: 1.0, i1: t, i2: -1.0}))
        if got != t:
            break
        bits = j + 1
    res['bits'] = bits
    res['bits_limited_by'] = None
    if bits is not None and (not representable(2.0 ** -bits, fmt_in)
                             or not representable(2.0 ** -bits, kernel.fmt_out)):
        res['bits_limited_by'] = 'formats'  # at least this many: the probe cannot go on
    # Rounding of 1 + x at the accumulator's last place u: 0.75u, 0.5u (tie, even below),
    # 1.5u (tie, even above), and -0.75u under -1.
    if bits:
        u = 2.0 ** -(bits - 1)
        modes = {}
        for name, one, x in (('+0.75', 1.0, 0.75 * u), ('+0.5', 1.0, 0.5 * u),
                             ('+1.5', 1.0, 1.5 * u), ('-0.75', -1.0, -0.75 * u)):
            if not representable(x, fmt_in):
                continue
            got = _call_row(kernel, k, shape, row({i0: one, i1: x, i2: -one}))
            modes[name] = got / u
        res['rounding_raw'] = modes
        res['rounding'] = _rounding_name(modes)
    # Fused: (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24 needs 25 bits; with -(1 + 2^-11) beside it
    # an exact product leaves 2^-24, a product rounded to 24 bits (the tie goes to even,
    # 1 + 2^-11) leaves 0. Tried with the product at either of the first two leaves.
    x = 1.0 + 2.0 ** -12
    if representable(x, fmt_in) and representable(1.0 + 2.0 ** -11, fmt_in):
        seen = []
        for p, q in ((i0, i1), (i1, i0), (i0, i2), (i2, i0)):
            b_row = [1.0] * k
            b_row[p] = x
            got = _call_row(kernel, k, shape, row({p: x, q: -(1.0 + 2.0 ** -11)}), b_row)
            seen.append(got)
        res['fused_raw'] = seen
        res['fused'] = any(g == 2.0 ** -24 for g in seen)
        if not all(g in (0.0, 2.0 ** -24) for g in seen):
            res['fused'] = None
    else:
        res['fused'] = None  # products of this format are exact in any float32 accumulator
        res['fused_raw'] = 'products exact'
    return res


def _rounding_name(modes):
    want = {'nearest even': {'+0.75': 1, '+0.5': 0, '+1.5': 2, '-0.75': -1},
            'nearest away': {'+0.75': 1, '+0.5': 1, '+1.5': 2, '-0.75': -1},
            'truncation (toward zero)': {'+0.75': 0, '+0.5': 0, '+1.5': 1, '-0.75': 0},
            'toward -inf': {'+0.75': 0, '+0.5': 0, '+1.5': 1, '-0.75': -1}}
    for name, w in want.items():
        if all(modes.get(key) == v for key, v in w.items() if key in modes):
            return name
    return f'other {modes}'


def _probe_places(tree):
    """(i0, i1, i2): two leaves of the smallest node holding leaf 0's first partner, and a
    leaf outside the root's child that holds them."""
    t = tree
    path = []
    while not isinstance(t, int):
        path.append(t)
        t = next(c for c in t if 0 in leaves(c))
    smallest = path[-1]
    i0 = 0
    i1 = next(x for x in leaves(smallest) if x != 0)
    root_side = next(c for c in tree if 0 in leaves(c))
    i2 = next(x for x in leaves(tree) if x not in leaves(root_side))
    return i0, i1, i2


# ---------------------------------------------------------------------------- batch

def batch_invariance(kernel, k, max_rows=32, n=16, seed=7, rows=None):
    """Row 0 fixed, computed alone (a 1 x k times n x k product) and in batches of m rows
    (the others random): the first m whose row 0 differs in any bit, or None."""
    rng = random.Random(seed)
    x = random_inputs(rng, 1, k, kernel.fmt_in)[0]
    b = random_inputs(rng, n, k, kernel.fmt_in)
    alone = kernel.matmul([x], b)[0]
    sizes = list(rows or range(2, max_rows + 1))
    others = random_inputs(rng, max(sizes) - 1, k, kernel.fmt_in)
    for m in sizes:
        got = kernel.matmul([x] + others[:m - 1], b)[0]
        if any(not _same(u, v) for u, v in zip(got, alone)):
            return m
    return None


# ---------------------------------------------------------------------------- all of it

def measure(kernel, k, shape=(1, 1), seed=1, trials=2, positions=24, pack=False):
    """Tree, its name, the models that reproduce it, the accumulator's probes; where the
    outputs of one call add in different orders, the same for the first output that
    differs from (0, 0) (`other`)."""
    tree, prober = reveal_tree(kernel, k, shape, pack)
    only = (0, 0) if prober.disagree else None
    fits = fit_models(kernel, tree, shape, seed, trials if only is None else 8 * trials,
                      positions, only)
    out = {
        'k': k, 'shape': shape, 'tree': tree, 'probes': prober.count,
        'describe': describe(tree), 'models': [f.name() for f in fits],
        'positions_differ': prober.disagree[:3],
        'accumulator': accumulator(kernel, tree, shape),
    }
    if prober.disagree:
        at = tuple(prober.disagree[0]['at'])
        tree2, prober2 = reveal_tree(kernel, k, shape, pack, at)
        fits2 = fit_models(kernel, tree2, shape, seed, 8 * trials, positions, at)
        out['other'] = {'at': at, 'describe': describe(tree2),
                        'models': [f.name() for f in fits2]}
    return out


if __name__ == '__main__':
    import subprocess
    import sys
    import os
    if sys.argv[1:] == ['--self-test']:
        here = os.path.dirname(os.path.abspath(__file__))
        sys.exit(subprocess.call([sys.executable, os.path.join(here, 'fprev_oracle_test.py')]))
    print(__doc__)
