"""Exact models of the row reductions behind suites/peer/torch-2.15-cpu-compiled (softmax
f32, log_softmax bf16/f16) and suites/peer/jax-0.10.2-cpu (softmax, log_softmax, rmsnorm
f32), and a check that prints, per path, how many saved outputs each model misses.

Analysis tool, run from the repository root with the peers' venv:
    build/peers-venv/bin/python tools/python/row_models.py
The XLA rsqrt model executes the rsqrtss instruction (x86 only, machine-dependent)."""
import os
import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
f32=np.float32
def fma32(a, b, c):
    """RN_binary32(a*b + c) with one rounding: the product is exact in binary64, the sum is
    exact there unless TwoSum reports an error, and then it is rounded from exact rationals."""
    from fractions import Fraction
    a = np.asarray(a, f32); b = np.asarray(b, f32); c = np.asarray(c, f32)
    a, b, c = np.broadcast_arrays(a, b, c)
    p = a.astype(np.float64) * b.astype(np.float64)
    s = p + c.astype(np.float64)
    bb = s - p; err = (p - (s - bb)) + (c.astype(np.float64) - bb)
    out = s.astype(f32).ravel()
    fa, fb, fc = a.ravel(), b.ravel(), c.ravel()
    for i in np.nonzero((err != 0).ravel())[0]:
        out[i] = rn32(Fraction(float(fa[i])) * Fraction(float(fb[i])) + Fraction(float(fc[i])))
    return out.reshape(s.shape)
def rn32(fr):
    from fractions import Fraction
    # round Fraction to nearest float32 (ties even)
    x=float(fr)  # RN to double
    r=np.float32(x)
    if Fraction(float(r))==fr: return r
    # candidates neighbours
    c=[r,np.nextafter(r,np.float32(np.inf)),np.nextafter(r,np.float32(-np.inf))]
    best=min(c,key=lambda v:(abs(Fraction(float(v))-fr), int(np.array(v).view(np.uint32))&1))
    return best
def bits(a): return np.asarray(a,np.float32).view(np.uint32)
def aten_reduced_sum(e):
    """ATen's map_reduce_all for bf16/f16 rows (functional_bfloat16.h) and Inductor's
    VectorizedN<float,2> reduction: 32-element blocks, acc0 holds elements 0-15 of each
    block and acc1 16-31, each accumulated in turn; then acc0 + acc1, then the tree."""
    B = e.reshape(e.shape[:-1] + (-1, 32))
    a0 = B[..., 0, :16].copy(); a1 = B[..., 0, 16:].copy()
    for b in range(1, B.shape[-2]):
        a0 = (a0 + B[..., b, :16]).astype(f32); a1 = (a1 + B[..., b, 16:]).astype(f32)
    return tree16((a0 + a1).astype(f32))


def tree16(acc):
    # acc: (...,16) lanes; AVX512 VecReduceAllSIMD: i^8, i^4, i^2, i^1 ; lane 0 result
    v=acc.astype(f32)
    for s in (8,4,2,1):
        idx=np.arange(16)^s
        v=(v+v[...,idx]).astype(f32)
    return v[...,0]
def lanes_seq(e,k=16):
    # e (...,n): k lane accumulators, block order sequential
    n=e.shape[-1]
    acc=e[...,:k].astype(f32).copy()
    for b in range(k,n,k):
        acc=(acc+e[...,b:b+k]).astype(f32)
    return acc
def sleef_expf_u10(d):
    d=np.asarray(d,f32)
    R_LN2f=f32(1.442695040888963407359924681001892137426645954152985934135449406931)
    L2Uf=f32(0.693145751953125); L2Lf=f32(1.428606765330187045e-06)
    q=np.rint((d*R_LN2f).astype(f32)).astype(np.int32)
    qf=q.astype(f32)
    s=fma32(qf,-L2Uf,d); s=fma32(qf,-L2Lf,s)
    u=np.full_like(d,f32(0.000198527617612853646278381))
    for c in (0.00139304355252534151077271,0.00833336077630519866943359,0.0416664853692054748535156,0.166666671633720397949219,0.5):
        u=fma32(u,s,f32(c))
    u=(f32(1)+fma32((s*s).astype(f32),u,s)).astype(f32)
    # vldexp2: u * 2^(q>>1) * 2^(q - (q>>1))
    q1=q>>1; q2=q-q1
    u=(u*np.ldexp(f32(1),q1).astype(f32)).astype(f32)
    u=(u*np.ldexp(f32(1),q2).astype(f32)).astype(f32)
    u=np.where(d< f32(-104),f32(0),u); u=np.where(d>f32(100),f32(np.inf),u)
    return u.astype(f32)
def ynn_expf(x):
    x=np.asarray(x,f32)
    P=[f32(v) for v in (-4.9866619520e-05,2.2773783712e-04,1.4132461511e-03,8.3242934197e-03,4.1665628552e-02,1.6666725278e-01,4.9999994040e-01)]
    log2e=f32(1.4426950408889634); hi=f32(6.9314575195e-01); lo=f32(1.4286067653e-06)
    xc=np.minimum(np.maximum(x,f32(-88.02969360351562)),f32(88.72283935546875))
    magic=f32(1.5*2**23)
    t=(xc*log2e).astype(f32); b=((magic+t).astype(f32)-magic).astype(f32)
    r=fma32(b,-hi,xc); r=fma32(b,-lo,r)
    e2b=np.ldexp(np.ones_like(x,dtype=np.float64),b.astype(np.int64)).astype(f32)
    r2=(r*r).astype(f32)
    y0=np.full_like(x,P[0]); y1=np.full_like(x,P[1])
    for i in (2,4,6):
        y0=fma32(r2,y0,P[i])
        if i+1<7: y1=fma32(r2,y1,P[i+1])
    p=fma32(r,y1,y0)
    e2r=fma32(r2,p,r)
    return fma32(e2b,e2r,e2b)
def ynn_sum256(e):
    # e (...,256): lanes l=0..15; 16 blocks of 16; groups of 4 consecutive blocks summed in turn,
    # group sums added in turn; then lanes joined by the halving tree l^8, l^4, l^2, l^1
    e=np.asarray(e,f32); B=e.reshape(e.shape[:-1]+(16,16))  # [...,block,lane]
    acc=None
    for g in range(4):
        gs=B[...,4*g,:].copy()
        for b in range(4*g+1,4*g+4): gs=(gs+B[...,b,:]).astype(f32)
        acc=gs if acc is None else (acc+gs).astype(f32)
    return tree16(acc)
import ctypes, mmap
_buf=mmap.mmap(-1,4096,prot=mmap.PROT_READ|mmap.PROT_WRITE|mmap.PROT_EXEC)
_buf.write(bytes([0xF3,0x0F,0x52,0xC0,0xC3]))  # rsqrtss xmm0,xmm0 ; ret
_addr=ctypes.addressof(ctypes.c_char.from_buffer(_buf))
_rsqrtss=ctypes.CFUNCTYPE(ctypes.c_float,ctypes.c_float)(_addr)
def rsqrtss(v):
    v=np.asarray(v,f32); return np.array([_rsqrtss(float(t)) for t in v.ravel()],f32).reshape(v.shape)
def xla_rsqrt(v):
    v=np.asarray(v,f32); y0=rsqrtss(v)
    def step(y):
        t=(v*y).astype(f32); h=(y*f32(-0.5)).astype(f32)
        t=fma32(y,t,f32(-1)); return fma32(h,t,y)
    y=step(step(y0))
    # llvm.is.fpclass(v, 732): +-inf, +-subnormal, +0 and negative normals keep y0
    tiny=np.finfo(f32).tiny
    special=np.isinf(v)|((v!=0)&(np.abs(v)<tiny))|((v==0)&~np.signbit(v))|((v<0)&(np.abs(v)>=tiny))
    return np.where(special,y0,y)


def numpy_expf_avx512f(x):
    x=np.asarray(x,f32)
    log2e=f32(1.442695040888963407359924681001892137); magic=f32(12582912.0)
    c1=f32(-6.93145752e-1); c2=f32(-1.42860677e-6)
    P=[f32(v) for v in (9.999999999980870924916e-01,7.257664613233124478488e-01,2.473615434895520810817e-01,5.114512081637298353406e-02,6.757896990527504603057e-03,5.082762527590693718096e-04)]
    Q=[f32(v) for v in (1.0,-2.742335390411667452936e-01,2.159509375685829852307e-02)]
    q=((x*log2e).astype(f32)+magic).astype(f32); q=(q-magic).astype(f32)
    r=fma32(q,c1,x); r=fma32(q,c2,r); r=fma32(q,f32(0),r)
    num=fma32(P[5],r,P[4])
    for c in (P[3],P[2],P[1],P[0]): num=fma32(num,r,c)
    den=fma32(fma32(Q[2],r,Q[1]),r,Q[0])
    poly=(num/den).astype(f32)
    out=np.ldexp(poly.astype(np.float64),q.astype(np.int64)).astype(f32)  # scalef, exact for normal results
    out=np.where(x>=f32(88.72283935546875),f32(np.inf),out); out=np.where(x<=f32(-103.97208404541015625),f32(0),out)
    return out


def numpy_pairwise(a):
    n=len(a)
    if n<8:
        r=f32(0)
        for i in range(n): r=f32(r+a[i])
        return r
    if n<=128:
        r=[a[i] for i in range(8)]
        for i in range(8,n-n%8,8):
            for k in range(8): r[k]=f32(r[k]+a[i+k])
        res=f32(f32(f32(r[0]+r[1])+f32(r[2]+r[3]))+f32(f32(r[4]+r[5])+f32(r[6]+r[7])))
        for i in range(n-n%8,n): res=f32(res+a[i])
        return res
    n2=n//2; n2-=n2%8
    return f32(numpy_pairwise(a[:n2])+numpy_pairwise(a[n2:]))


# ---------------------------------------------------------------- checks
def _load(p): return np.load(os.path.join(ROOT, p))


def check_all():
    import mpmath
    from fractions import Fraction
    res = []
    logf = lambda v: np.array([f32(float(mpmath.log(float(t)))) for t in np.ravel(v)], f32)
    # A. torch softmax f32
    d = _load('suites/peer/torch-2.15-cpu-compiled/softmax_f32.npz')
    x = d['x'].reshape(8, 128)
    z = (x - x.max(-1, keepdims=True)).astype(f32); e = sleef_expf_u10(z); s = tree16(lanes_seq(e))[:, None]
    res.append(('A eager  y=RN(e*RN(1/s))', (bits((e * (f32(1) / s).astype(f32)).astype(f32)) != bits(d['eager_fwd'].reshape(8, 128))).sum()))
    res.append(('A compiled y=RN(e/s)', (bits((e / s).astype(f32)) != bits(d['compiled_fwd'].reshape(8, 128))).sum()))
    # B. torch log_softmax bf16/f16
    import ml_dtypes
    for fmt, T in (('bf16', ml_dtypes.bfloat16), ('f16', np.float16)):
        d = _load('suites/peer/torch-2.15-cpu-compiled/log_softmax_%s.npz' % fmt)
        x = d['x'].reshape(8, 128); r = lambda a: np.asarray(a, f32).astype(T).astype(f32)
        z = (x - x.max(-1, keepdims=True)).astype(f32); s = aten_reduced_sum(sleef_expf_u10(z))
        res.append(('B %s eager fmt(z - fmt(log fmt(s)))' % fmt, (bits(r(z - r(logf(r(s)))[:, None])) != bits(d['eager_fwd'].reshape(8, 128))).sum()))
        res.append(('B %s compiled fmt(z - log s)' % fmt, (bits(r(z - logf(s)[:, None])) != bits(d['compiled_fwd'].reshape(8, 128))).sum()))
    # C. JAX
    P = 'suites/peer/jax-0.10.2-cpu/'
    d = _load(P + 'softmax_fwd_f32.npz'); x = d['x'].reshape(16, 256)
    z = (x - x.max(-1, keepdims=True)).astype(f32)
    e = numpy_expf_avx512f(z); s = np.array([f32(f32(0) + numpy_pairwise(q)) for q in e])[:, None]
    res.append(('C softmax numpy', (bits((e / s).astype(f32)) != bits(d['numpy'].reshape(16, 256))).sum()))
    e = ynn_expf(z); s = ynn_sum256(e)[:, None]
    res.append(('C softmax jit', (bits((e * (f32(1) / s).astype(f32)).astype(f32)) != bits(d['jit'].reshape(16, 256))).sum()))
    d = _load(P + 'log_softmax_fwd_f32.npz'); x = d['x'].reshape(16, 256)
    z = (x - x.max(-1, keepdims=True)).astype(f32)
    s = np.array([f32(f32(0) + numpy_pairwise(q)) for q in numpy_expf_avx512f(z)])
    res.append(('C log_softmax numpy', (bits((z - np.log(s)[:, None]).astype(f32)) != bits(d['numpy'].reshape(16, 256))).sum()))
    s = ynn_sum256(ynn_expf(z))
    res.append(('C log_softmax jit (log = RN(log))', (bits((z - logf(s)[:, None]).astype(f32)) != bits(d['jit'].reshape(16, 256))).sum()))
    d = _load(P + 'rmsnorm_fwd_f32.npz'); x = d['x'].reshape(16, 256); g = d['g']
    eps = f32(float.fromhex('0x1.0c6f7ap-20')); sq = (x * x).astype(f32)
    S = np.array([f32(f32(0) + numpy_pairwise(q)) for q in sq]); v = ((S / f32(256)).astype(f32) + eps).astype(f32)
    res.append(('C rmsnorm numpy', (bits(((x / np.sqrt(v)[:, None]).astype(f32) * g).astype(f32)) != bits(d['numpy'].reshape(16, 256))).sum()))
    v = fma32(ynn_sum256(sq), f32(2.0 ** -8), eps); rr = xla_rsqrt(v)
    res.append(('C rmsnorm jit', (bits(((x * rr[:, None]).astype(f32) * g).astype(f32)) != bits(d['jit'].reshape(16, 256))).sum()))
    for k, n in res:
        print('%-45s misses %d' % (k, n))
    return res


if __name__ == '__main__':
    check_all()
