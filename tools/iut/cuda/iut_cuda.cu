// ulpgate-iut-cuda: an implementation-under-test process whose kernels run on
// an NVIDIA GPU, speaking the protocol of docs/iut.md (version 3) on stdin and
// stdout; docs/gpu.md says what each kernel computes and claims.
//
//   ulpgate-iut-cuda [--target NAME] [--claimed-only] [--host] [--device N]
//
// Self-contained on purpose (the CUDA headers, the runtime and cuBLAS, no
// ulpgate library): a machine with a GPU and nvcc builds it with one command
// (ci/device.sh) whatever else it lacks.
//
// What it serves, on target CUDA_SM<major><minor> of the device it runs on:
//   - every elementwise op's variants in f32, bf16 and f16, each written with
//     explicit intrinsics (__fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn,
//     __fmaf_rn; __hmul_rn, __hadd_rn, __hsub_rn in bf16 and f16), so that
//     what rounds where is pinned whatever nvcc's contraction setting; the
//     build adds --fmad=false besides, so that nothing written as two
//     roundings becomes one (CMakeLists.txt). tanh_bwd and sigmoid_bwd have no
//     transcendental step: each kernel claims the model its sequence is.
//     silu_bwd, gelu_bwd and gelu_tanh_bwd take CUDA's expf, erff and tanhf
//     (libdevice, within 2 ULP by CUDA's documentation, no published
//     algorithm that ulpgate models bit for bit): they claim none, and are
//     measured (the reports name what they follow).
//   - the casts from f32, bf16 and f16 to FP8 (E4M3, E5M2), FP6 (E2M3, E3M2),
//     FP4 (E2M1) and E8M0 through cuda_fp8.h, cuda_fp6.h and cuda_fp4.h's
//     __nv_cvt_* conversions. FP8 with __NV_SATFINITE claims
//     nearest_even.saturate (the header: round to nearest even, a value past
//     the largest finite one, infinities included, clamped to it; NaN to NaN),
//     with __NV_NOSAT nearest_even.nan (E4M3, no infinity) or
//     nearest_even.infinity (E5M2). FP6 and FP4 claim none: the headers give
//     +MAXNORM for a NaN, where every policy of ulpgate's catalogue gives the
//     code of -0 (those formats have no NaN). E8M0 claims none: it rounds |x|
//     (a negative source is not NaN) and clips zero to 2^-127.
//   - linear_fwd through cuBLAS (cublasGemmEx), y = x w^T + b with the bias
//     loaded into C and beta = 1 (added in cuBLAS's f32 epilogue, one
//     rounding to the output format): cublas_f32 (CUBLAS_COMPUTE_32F_PEDANTIC:
//     no TF32, no split into lower precisions), cublas_tf32
//     (CUBLAS_COMPUTE_32F_FAST_TF32), cublas_bf16 and cublas_f16 (16-bit
//     operands and outputs, f32 accumulation). They claim no model: `ulpgate
//     reveal --iut` finds their summation trees.
//
// Without a usable device it still starts, offers the same kernels (under
// --target's name, else CUDA_NODEVICE) and answers every call with
// "error no CUDA device: <the runtime's words>", so that a host reports each
// case as refused with the reason, never as measured.
//
// --host runs the same sequence templates and the headers' host conversions
// on the CPU instead (target CUDA_HOST_TWIN, no GPU needed): the claims of the
// kernels' arithmetic and of the cast headers' emulation are checked by
// ulpgate on any machine (ctest cuda_iut). What it cannot check is the
// device's own instructions (the PTX cvt of FP8, libdevice's functions):
// those only a GPU shows.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
// FP6, FP4 and E8M0 conversions came with CUDA 12.8: an older toolkit builds the rest.
#if CUDART_VERSION >= 12080
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#define ULPGATE_CUDA_FP6_FP4 1
#else
#define ULPGATE_CUDA_FP6_FP4 0
#endif
#include <sys/mman.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace {

// ---------------------------------------------------------------------------
// Arithmetic: one operation, one rounding, on the device by the intrinsics
// that say so and on the host (--host) by the same operations compiled with
// -ffp-contract=off.

#define ULPGATE_HD __host__ __device__

// binary32: every operation rounded once to nearest even; NegMulAdd and
// MulAdd one rounding (fused).
struct F32Arith {
  using V = float;
  ULPGATE_HD static V Const(float c) { return c; }
  ULPGATE_HD static V Mul(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
  }
  ULPGATE_HD static V Add(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
  }
  ULPGATE_HD static V Sub(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
  }
  ULPGATE_HD static V Div(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
  }
  // c - a*b and a*b + c, one rounding each.
  ULPGATE_HD static V NegMulAdd(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(-a, b, c);
#else
    return std::fma(-a, b, c);
#endif
  }
  ULPGATE_HD static V MulAdd(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return std::fma(a, b, c);
#endif
  }
  // CUDA's accurate functions (libdevice; not the __expf-style intrinsics):
  // no kernel that takes them claims a model.
  ULPGATE_HD static V Exp(V x) {
#if defined(__CUDA_ARCH__)
    return expf(x);
#else
    return std::exp(x);
#endif
  }
  ULPGATE_HD static V Erf(V x) {
#if defined(__CUDA_ARCH__)
    return erff(x);
#else
    return std::erf(x);
#endif
  }
  ULPGATE_HD static V Tanh(V x) {
#if defined(__CUDA_ARCH__)
    return tanhf(x);
#else
    return std::tanh(x);
#endif
  }
};

// bf16 or f16 with every step rounded to the format: the *_rn intrinsics
// round the exact result once (on sm_90 native bf16/f16 instructions; on the
// host the headers' emulation, the exact product or sum in binary32 rounded
// once more, which gives the same value: the product of two 16-bit values is
// exact in binary32, and a sum is inexact there only when the smaller term
// lies below half a 16-bit ULP of the larger, where both roundings give the
// larger). A transcendental step is CUDA's binary32 function rounded to the
// format (no model claimed).
template <class T>
struct NarrowArith {
  using V = T;
  ULPGATE_HD static float F(V a) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return __bfloat162float(a);
    } else {
      return __half2float(a);
    }
  }
  ULPGATE_HD static V R(float a) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      return __float2bfloat16_rn(a);
    } else {
      return __float2half_rn(a);
    }
  }
  ULPGATE_HD static V Const(float c) { return R(c); }
  ULPGATE_HD static V Mul(V a, V b) { return __hmul_rn(a, b); }
  ULPGATE_HD static V Add(V a, V b) { return __hadd_rn(a, b); }
  ULPGATE_HD static V Sub(V a, V b) { return __hsub_rn(a, b); }
  ULPGATE_HD static V Div(V a, V b) { return R(F32Arith::Div(F(a), F(b))); }
  ULPGATE_HD static V NegMulAdd(V a, V b, V c) { return R(F32Arith::NegMulAdd(F(a), F(b), F(c))); }
  ULPGATE_HD static V MulAdd(V a, V b, V c) { return R(F32Arith::MulAdd(F(a), F(b), F(c))); }
  ULPGATE_HD static V Exp(V x) { return R(F32Arith::Exp(F(x))); }
  ULPGATE_HD static V Erf(V x) { return R(F32Arith::Erf(F(x))); }
  ULPGATE_HD static V Tanh(V x) { return R(F32Arith::Tanh(F(x))); }
};

// ---------------------------------------------------------------------------
// The op sequences, as kernels/ops/<op>/<op>_spec-inl.h writes them (same
// order of operations, same constants), numbered as the spec's kVariants
// rows.

enum Op : int { kTanhBwd, kSigmoidBwd, kSiluBwd, kGeluBwd, kGeluTanhBwd, kOpCount };

template <class A>
ULPGATE_HD typename A::V Sequence(int op, int seq, typename A::V grad, typename A::V x) {
  using V = typename A::V;
  const V one = A::Const(1.0f);
  switch (op) {
    case kTanhBwd:  // x is t = tanh(forward input)
      switch (seq) {
        case 0: {  // mac: r = t*t; out = NegMulAdd(grad, r, grad)
          const V r = A::Mul(x, x);
          return A::NegMulAdd(grad, r, grad);
        }
        case 1: {  // mac_unfused: r = t*t; p = grad*r; out = grad - p
          const V r = A::Mul(x, x);
          return A::Sub(grad, A::Mul(grad, r));
        }
        case 2: {  // mulsub: r = t*t; s = 1 - r; out = grad*s
          const V r = A::Mul(x, x);
          return A::Mul(grad, A::Sub(one, r));
        }
        default:  // mulsub_fma: s = NegMulAdd(t, t, 1); out = grad*s
          return A::Mul(grad, A::NegMulAdd(x, x, one));
      }
    case kSigmoidBwd:  // x is s = sigmoid(forward input)
      switch (seq) {
        case 0: {  // torch: q = 1 - s; p = grad*q; out = p*s
          const V p = A::Mul(grad, A::Sub(one, x));
          return A::Mul(p, x);
        }
        case 1: {  // mul3: p = grad*s; q = 1 - s; out = p*q
          const V p = A::Mul(grad, x);
          return A::Mul(p, A::Sub(one, x));
        }
        default: {  // fms: p = grad*s; out = NegMulAdd(p, s, p)
          const V p = A::Mul(grad, x);
          return A::NegMulAdd(p, x, p);
        }
      }
    case kSiluBwd: {
      const V e = A::Exp(A::Mul(A::Const(-1.0f), x));
      const V sig = A::Div(one, A::Add(one, e));
      const V p = A::Mul(grad, sig);
      const V q = A::Sub(one, sig);
      if (seq == 0) return A::Mul(p, A::Add(one, A::Mul(x, q)));  // torch
      return A::Mul(p, A::MulAdd(x, q, one));                      // muladd
    }
    case kGeluBwd: {
      // RN(1/sqrt(2)) and RN(1/sqrt(2 pi)), PyTorch's kAlpha and kBeta.
      const V half = A::Const(0.5f);
      const V cdf = A::Mul(half, A::Add(one, A::Erf(A::Mul(x, A::Const(0x1.6a09e6p-1f)))));
      const V pdf = A::Mul(A::Const(0x1.988454p-2f), A::Exp(A::Mul(A::Mul(x, x), A::Const(-0.5f))));
      if (seq == 0) return A::Mul(grad, A::Add(cdf, A::Mul(x, pdf)));  // torch
      return A::Mul(grad, A::MulAdd(x, pdf, cdf));                     // muladd
    }
    default: {  // kGeluTanhBwd
      // RN(sqrt(2/pi)) and RN(0.044715), PyTorch's kBeta and kKappa.
      const V half = A::Const(0.5f);
      const V beta = A::Const(0x1.988454p-1f);
      const V kappa = A::Const(0x1.6e4e26p-5f);
      const V three_kappa = A::Mul(A::Const(3.0f), kappa);
      const V x_sq = A::Mul(x, x);
      const V x_cube = A::Mul(x_sq, x);
      const V left = A::Mul(half, x);
      if (seq == 0) {  // torch
        const V t = A::Tanh(A::Mul(beta, A::Add(x, A::Mul(kappa, x_cube))));
        const V left_derivative = A::Mul(half, A::Add(one, t));
        const V tanh_derivative = A::Sub(one, A::Mul(t, t));
        const V inner_derivative = A::Mul(beta, A::Add(one, A::Mul(three_kappa, x_sq)));
        const V right_derivative = A::Mul(A::Mul(left, tanh_derivative), inner_derivative);
        return A::Mul(grad, A::Add(left_derivative, right_derivative));
      }
      const V t = A::Tanh(A::Mul(beta, A::MulAdd(kappa, x_cube, x)));  // muladd
      const V left_derivative = A::Mul(half, A::Add(one, t));
      const V tanh_derivative = A::NegMulAdd(t, t, one);
      const V inner_derivative = A::Mul(beta, A::MulAdd(three_kappa, x_sq, one));
      return A::Mul(grad, A::MulAdd(A::Mul(left, tanh_derivative), inner_derivative, left_derivative));
    }
  }
}

// How a 16-bit kernel rounds: the f32 sequence rounded once to the format
// (opmath), that with Highway 1.0.3's conversion's rounding (bf16 toward
// zero, as its DemoteTo; f16 to nearest even, as F16C's), or every step in
// the format (per_op).
enum Rounding : int { kF32, kOpmath, kHighwayLike, kPerOp };

template <class T>
ULPGATE_HD T Element(int op, int seq, int rounding, T grad, T x) {
  if constexpr (std::is_same_v<T, float>) {
    return Sequence<F32Arith>(op, seq, grad, x);
  } else {
    using N = NarrowArith<T>;
    if (rounding == kPerOp) return Sequence<N>(op, seq, grad, x);
    const float r = Sequence<F32Arith>(op, seq, N::F(grad), N::F(x));
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      if (rounding == kHighwayLike) return __float2bfloat16_rz(r);
    }
    return N::R(r);
  }
}

template <class T>
__global__ void ElementwiseKernel(int op, int seq, int rounding, const T* grad, const T* x, T* out,
                                  size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = Element<T>(op, seq, rounding, grad[i], x[i]);
  }
}

// ---------------------------------------------------------------------------
// Casts.

enum Dest : int { kE4M3, kE5M2, kE2M3, kE3M2, kE2M1, kE8M0 };
enum CastMode : int { kSatfinite, kNoSat, kNearest, kTowardZero, kTowardZeroSat, kUpSat };

template <class S>
ULPGATE_HD uint8_t CastElement(int dest, int mode, S s) {
  float f;  // the source's value, exactly (bf16 and f16 widen exactly)
  if constexpr (std::is_same_v<S, float>) {
    f = s;
  } else if constexpr (std::is_same_v<S, __nv_bfloat16_raw>) {
    f = __bfloat162float(__nv_bfloat16(s));
  } else {
    f = __half2float(__half(s));
  }
  const __nv_saturation_t sat = mode == kNoSat ? __NV_NOSAT : __NV_SATFINITE;
  switch (dest) {
    case kE4M3:
    case kE5M2: {
      const __nv_fp8_interpretation_t k = dest == kE4M3 ? __NV_E4M3 : __NV_E5M2;
      if constexpr (std::is_same_v<S, __nv_bfloat16_raw>) {
        return __nv_cvt_bfloat16raw_to_fp8(s, sat, k);
      } else if constexpr (std::is_same_v<S, __half_raw>) {
        return __nv_cvt_halfraw_to_fp8(s, sat, k);
      } else {
        return __nv_cvt_float_to_fp8(s, sat, k);
      }
    }
#if ULPGATE_CUDA_FP6_FP4
    case kE2M3:
    case kE3M2: {
      const __nv_fp6_interpretation_t k = dest == kE2M3 ? __NV_E2M3 : __NV_E3M2;
      const cudaRoundMode r = mode == kTowardZero ? cudaRoundZero : cudaRoundNearest;
      if constexpr (std::is_same_v<S, __nv_bfloat16_raw>) {
        return __nv_cvt_bfloat16raw_to_fp6(s, k, r);
      } else if constexpr (std::is_same_v<S, __half_raw>) {
        return __nv_cvt_halfraw_to_fp6(s, k, r);
      } else {
        return __nv_cvt_float_to_fp6(s, k, r);
      }
    }
    case kE2M1: {
      const cudaRoundMode r = mode == kTowardZero ? cudaRoundZero : cudaRoundNearest;
      if constexpr (std::is_same_v<S, __nv_bfloat16_raw>) {
        return __nv_cvt_bfloat16raw_to_fp4(s, __NV_E2M1, r);
      } else if constexpr (std::is_same_v<S, __half_raw>) {
        return __nv_cvt_halfraw_to_fp4(s, __NV_E2M1, r);
      } else {
        return __nv_cvt_float_to_fp4(s, __NV_E2M1, r);
      }
    }
    default: {  // kE8M0; f16 widens exactly to f32 first (no halfraw form)
      const cudaRoundMode r = mode == kUpSat ? cudaRoundPosInf : cudaRoundZero;
      if constexpr (std::is_same_v<S, __nv_bfloat16_raw>) {
        return __nv_cvt_bfloat16raw_to_e8m0(s, __NV_SATFINITE, r);
      } else {
        return __nv_cvt_float_to_e8m0(f, __NV_SATFINITE, r);
      }
    }
#else
    default:
      (void)f;
      return 0xff;  // not offered (CastOffers)
#endif
  }
}

template <class S>
__global__ void CastKernel(int dest, int mode, const S* in, uint8_t* out, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    out[i] = CastElement<S>(dest, mode, in[i]);
  }
}

// ---------------------------------------------------------------------------
// What is offered.

struct ElementwiseOffer {
  const char* op;
  int op_id;
  const char* dtype;  // f32, bf16, f16
  const char* variant;
  int seq;
  int rounding;
  const char* model;  // claimed; "" for none
};

// The claims: on CUDA every NegMulAdd is one fused instruction, so each f32
// variant claims its fused-target model (the spec's model_fused_target); a
// 16-bit opmath kernel claims that model rounded once (_opmath), the bf16
// Highway-like one the truncating demotion's (_opmath_truncating) and the
// f16 one _opmath (nearest even, as F16C), a per_op kernel its per_op model.
std::vector<ElementwiseOffer> ElementwiseOffers() {
  std::vector<ElementwiseOffer> v;
  auto f32 = [&](const char* op, int id, const char* variant, int seq, const char* model) {
    v.push_back({op, id, "f32", variant, seq, kF32, model});
  };
  auto narrow = [&](const char* op, int id, const char* variant, int seq, int rounding,
                    const char* bf16_model, const char* f16_model) {
    v.push_back({op, id, "bf16", variant, seq, rounding, bf16_model});
    v.push_back({op, id, "f16", variant, seq, rounding, f16_model});
  };
  f32("tanh_bwd", kTanhBwd, "mac", 0, "mac_fused");
  f32("tanh_bwd", kTanhBwd, "mac_unfused", 1, "mac_unfused");
  f32("tanh_bwd", kTanhBwd, "mulsub", 2, "mulsub");
  f32("tanh_bwd", kTanhBwd, "mulsub_fma", 3, "mulsub_fused");
  narrow("tanh_bwd", kTanhBwd, "mac_opmath", 0, kOpmath, "mac_fused_opmath", "mac_fused_opmath");
  narrow("tanh_bwd", kTanhBwd, "mac_unfused_opmath", 1, kOpmath, "mac_unfused_opmath",
         "mac_unfused_opmath");
  narrow("tanh_bwd", kTanhBwd, "mulsub_opmath", 2, kOpmath, "mulsub_opmath", "mulsub_opmath");
  narrow("tanh_bwd", kTanhBwd, "mulsub_fma_opmath", 3, kOpmath, "mulsub_fused_opmath",
         "mulsub_fused_opmath");
  narrow("tanh_bwd", kTanhBwd, "mac_per_op", 1, kPerOp, "mac_per_op", "mac_per_op");
  narrow("tanh_bwd", kTanhBwd, "mulsub_per_op", 2, kPerOp, "mulsub_per_op", "mulsub_per_op");
  narrow("tanh_bwd", kTanhBwd, "mulsub_opmath_hwy", 2, kHighwayLike, "mulsub_opmath_truncating",
         "mulsub_opmath");
  f32("sigmoid_bwd", kSigmoidBwd, "torch", 0, "torch");
  f32("sigmoid_bwd", kSigmoidBwd, "mul3", 1, "mul3");
  f32("sigmoid_bwd", kSigmoidBwd, "fms", 2, "fms_fused");
  narrow("sigmoid_bwd", kSigmoidBwd, "torch_opmath", 0, kOpmath, "torch_opmath", "torch_opmath");
  narrow("sigmoid_bwd", kSigmoidBwd, "fms_opmath", 2, kOpmath, "fms_fused_opmath", "fms_fused_opmath");
  narrow("sigmoid_bwd", kSigmoidBwd, "torch_per_op", 0, kPerOp, "torch_per_op", "torch_per_op");
  narrow("sigmoid_bwd", kSigmoidBwd, "torch_opmath_hwy", 0, kHighwayLike, "torch_opmath_truncating",
         "torch_opmath");
  // CUDA's expf, erff, tanhf: no model claimed.
  for (const auto& [op, id] : {std::pair<const char*, int>{"silu_bwd", kSiluBwd},
                               {"gelu_bwd", kGeluBwd}, {"gelu_tanh_bwd", kGeluTanhBwd}}) {
    f32(op, id, "torch", 0, "");
    f32(op, id, "muladd", 1, "");
    narrow(op, id, "torch_opmath", 0, kOpmath, "", "");
    narrow(op, id, "muladd_opmath", 1, kOpmath, "", "");
    narrow(op, id, "torch_per_op", 0, kPerOp, "", "");
  }
  return v;
}

struct CastOffer {
  const char* source;  // f32, bf16, f16
  const char* dest;    // ulpgate's name of the destination
  int dest_id;
  const char* variant;
  int mode;
  const char* policy;  // claimed; "" for none
};

std::vector<CastOffer> CastOffers() {
  std::vector<CastOffer> v;
  for (const char* source : {"f32", "bf16", "f16"}) {
    v.push_back({source, "float8_e4m3fn", kE4M3, "satfinite", kSatfinite, "nearest_even.saturate"});
    v.push_back({source, "float8_e4m3fn", kE4M3, "nosat", kNoSat, "nearest_even.nan"});
    v.push_back({source, "float8_e5m2", kE5M2, "satfinite", kSatfinite, "nearest_even.saturate"});
    v.push_back({source, "float8_e5m2", kE5M2, "nosat", kNoSat, "nearest_even.infinity"});
    if (!ULPGATE_CUDA_FP6_FP4) continue;
    for (const auto& [dest, id] : {std::pair<const char*, int>{"float6_e2m3fn", kE2M3},
                                   {"float6_e3m2fn", kE3M2}, {"float4_e2m1fn", kE2M1}}) {
      v.push_back({source, dest, id, "rn", kNearest, ""});
      v.push_back({source, dest, id, "rz", kTowardZero, ""});
    }
    v.push_back({source, "float8_e8m0fnu", kE8M0, "rz_satfinite", kTowardZeroSat, ""});
    v.push_back({source, "float8_e8m0fnu", kE8M0, "ru_satfinite", kUpSat, ""});
  }
  return v;
}

struct GemmOffer {
  const char* dtype;
  const char* variant;
  cudaDataType_t type;
  cublasComputeType_t compute;
};

const std::vector<GemmOffer>& GemmOffers() {
  static const std::vector<GemmOffer> v = {
      {"f32", "cublas_f32", CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC},
      {"f32", "cublas_tf32", CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
      {"bf16", "cublas_bf16", CUDA_R_16BF, CUBLAS_COMPUTE_32F},
      {"f16", "cublas_f16", CUDA_R_16F, CUBLAS_COMPUTE_32F},
  };
  return v;
}

// ---------------------------------------------------------------------------
// The process.

struct State {
  std::string target;
  bool host = false;          // run on the CPU (the host twin)
  std::string device_error;   // why no kernel can run; empty when one can
  char* shm = nullptr;        // the host's shared region, when mapped
  cublasHandle_t blas = nullptr;
  // Device buffers kept from call to call: a sweep's calls are all alike.
  std::vector<void*> buffers;
  std::vector<size_t> capacity;
};

void Line(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fputc('\n', stdout);
}

bool ReadExact(void* p, size_t bytes) { return std::fread(p, 1, bytes, stdin) == bytes; }

std::string CudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

// A device buffer of at least `bytes` in slot k.
void* Buffer(State& s, size_t k, size_t bytes) {
  if (s.buffers.size() <= k) {
    s.buffers.resize(k + 1, nullptr);
    s.capacity.resize(k + 1, 0);
  }
  if (s.capacity[k] < bytes) {
    if (s.buffers[k] != nullptr) cudaFree(s.buffers[k]);
    s.buffers[k] = nullptr;
    s.capacity[k] = 0;
    if (cudaMalloc(&s.buffers[k], bytes ? bytes : 1) != cudaSuccess) return nullptr;
    s.capacity[k] = bytes;
  }
  return s.buffers[k];
}

size_t DtypeBytes(const std::string& dtype) { return dtype == "f32" ? 4 : dtype == "bf16" || dtype == "f16" ? 2 : 0; }

// Operands in, from shared memory or stdin: blocks of counts[k] elements of
// `bytes` each. False when stdin ended.
bool ReadOperands(const State& s, const std::vector<uint64_t>& counts, size_t bytes,
                  std::vector<std::vector<unsigned char>>& data) {
  data.assign(counts.size(), {});
  uint64_t offset = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    data[k].resize(counts[k] * bytes);
    if (s.shm != nullptr) {
      std::memcpy(data[k].data(), s.shm + offset, data[k].size());
    } else if (!ReadExact(data[k].data(), data[k].size())) {
      return false;
    }
    offset += data[k].size();
  }
  return true;
}

void Answer(const State& s, const std::vector<unsigned char>& out, uint64_t n, uint64_t offset) {
  Line("ok " + std::to_string(n));
  if (s.shm != nullptr) {
    std::memcpy(s.shm + offset, out.data(), out.size());
  } else {
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
}

unsigned Blocks(uint64_t n) {
  const uint64_t blocks = (n + 255) / 256;
  return static_cast<unsigned>(blocks == 0 ? 1 : blocks > 65535 ? 65535 : blocks);
}

// Copies operands to the device, runs `launch(device pointers)`, copies
// `out_bytes` back. Empty on success, else the CUDA error.
template <class Launch>
std::string OnDevice(State& s, const std::vector<std::vector<unsigned char>>& in,
                     std::vector<unsigned char>& out, Launch launch) {
  std::vector<void*> d;
  for (size_t k = 0; k <= in.size(); ++k) {
    const size_t bytes = k < in.size() ? in[k].size() : out.size();
    void* p = Buffer(s, k, bytes);
    if (p == nullptr) return "cudaMalloc of " + std::to_string(bytes) + " bytes failed";
    d.push_back(p);
    if (k < in.size()) {
      const cudaError_t e = cudaMemcpy(p, in[k].data(), bytes, cudaMemcpyHostToDevice);
      if (e != cudaSuccess) return CudaText(e);
    }
  }
  // The outputs' place starts as 0xff bytes (a NaN), so that one the kernel
  // leaves unwritten reads as NaN, as the host's own buffers do.
  cudaMemset(d.back(), 0xff, out.size());
  const std::string launched = launch(d);
  if (!launched.empty()) return launched;
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpy(out.data(), d.back(), out.size(), cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? std::string() : CudaText(e);
}

template <class T>
void RunElementwiseHost(const ElementwiseOffer& o, const std::vector<std::vector<unsigned char>>& in,
                        std::vector<unsigned char>& out, uint64_t n) {
  const T* g = reinterpret_cast<const T*>(in[0].data());
  const T* x = reinterpret_cast<const T*>(in[1].data());
  T* y = reinterpret_cast<T*>(out.data());
  for (uint64_t i = 0; i < n; ++i) y[i] = Element<T>(o.op_id, o.seq, o.rounding, g[i], x[i]);
}

// call OP DTYPE TARGET VARIANT ARITY N (elementwise or cast). False when the
// stream cannot go on.
bool ServeCall(State& s, std::istringstream& words) {
  std::string op, dtype, target, variant;
  uint64_t arity = 0, n = 0;
  if (!(words >> op >> dtype >> target >> variant >> arity >> n) || arity > 8 || n > (uint64_t{1} << 24)) {
    Line("error malformed request (expected: call OP DTYPE TARGET VARIANT ARITY N)");
    return false;
  }
  const bool cast = op.rfind("cast_", 0) == 0;
  const std::string source = cast ? op.substr(5) : dtype;
  const size_t in_bytes = DtypeBytes(source);
  if (in_bytes == 0) {
    Line("error unknown dtype '" + source + "' (f32, bf16, f16)");
    return false;  // the operands' size is unknown: out of step
  }
  std::vector<std::vector<unsigned char>> in;
  if (!ReadOperands(s, std::vector<uint64_t>(arity, n), in_bytes, in)) return false;
  const uint64_t out_offset = arity * n * in_bytes;
  if (target != s.target) {
    Line("error no target '" + target + "' here (this is " + s.target + ")");
    return true;
  }
  if (cast) {
    const CastOffer* found = nullptr;
    static const std::vector<CastOffer> casts = CastOffers();
    for (const CastOffer& c : casts) {
      if (source == c.source && dtype == c.dest && variant == c.variant) found = &c;
    }
    if (found == nullptr || arity != 1) {
      Line("error no " + op + " " + dtype + " kernel " + variant + " (with 1 operand) here");
      return true;
    }
    if (!s.device_error.empty()) {
      Line("error " + s.device_error);
      return true;
    }
    std::vector<unsigned char> out(n);
    const CastOffer c = *found;
    if (s.host) {
      for (uint64_t i = 0; i < n; ++i) {
        if (source == "f32") {
          out[i] = CastElement<float>(c.dest_id, c.mode, reinterpret_cast<const float*>(in[0].data())[i]);
        } else if (source == "bf16") {
          __nv_bfloat16_raw r;
          r.x = reinterpret_cast<const uint16_t*>(in[0].data())[i];
          out[i] = CastElement<__nv_bfloat16_raw>(c.dest_id, c.mode, r);
        } else {
          __half_raw r;
          r.x = reinterpret_cast<const uint16_t*>(in[0].data())[i];
          out[i] = CastElement<__half_raw>(c.dest_id, c.mode, r);
        }
      }
    } else {
      const std::string error = OnDevice(s, in, out, [&](const std::vector<void*>& d) {
        auto* o = static_cast<uint8_t*>(d[1]);
        if (source == "f32") {
          CastKernel<float><<<Blocks(n), 256>>>(c.dest_id, c.mode, static_cast<const float*>(d[0]), o, n);
        } else if (source == "bf16") {
          CastKernel<__nv_bfloat16_raw><<<Blocks(n), 256>>>(
              c.dest_id, c.mode, static_cast<const __nv_bfloat16_raw*>(d[0]), o, n);
        } else {
          CastKernel<__half_raw><<<Blocks(n), 256>>>(c.dest_id, c.mode,
                                                     static_cast<const __half_raw*>(d[0]), o, n);
        }
        return std::string();
      });
      if (!error.empty()) {
        Line("error CUDA: " + error);
        return true;
      }
    }
    Answer(s, out, n, out_offset);
    return true;
  }
  const ElementwiseOffer* found = nullptr;
  static const std::vector<ElementwiseOffer> offers = ElementwiseOffers();
  for (const ElementwiseOffer& e : offers) {
    if (op == e.op && dtype == e.dtype && variant == e.variant) found = &e;
  }
  if (found == nullptr || arity != 2) {
    Line("error no " + op + " " + dtype + " kernel " + variant + " (with 2 operands) here");
    return true;
  }
  if (!s.device_error.empty()) {
    Line("error " + s.device_error);
    return true;
  }
  const ElementwiseOffer o = *found;
  std::vector<unsigned char> out(n * in_bytes);
  if (s.host) {
    if (dtype == "f32") {
      RunElementwiseHost<float>(o, in, out, n);
    } else if (dtype == "bf16") {
      RunElementwiseHost<__nv_bfloat16>(o, in, out, n);
    } else {
      RunElementwiseHost<__half>(o, in, out, n);
    }
  } else {
    const std::string error = OnDevice(s, in, out, [&](const std::vector<void*>& d) {
      if (dtype == "f32") {
        ElementwiseKernel<float><<<Blocks(n), 256>>>(o.op_id, o.seq, o.rounding, static_cast<const float*>(d[0]),
                                                     static_cast<const float*>(d[1]), static_cast<float*>(d[2]), n);
      } else if (dtype == "bf16") {
        ElementwiseKernel<__nv_bfloat16><<<Blocks(n), 256>>>(
            o.op_id, o.seq, o.rounding, static_cast<const __nv_bfloat16*>(d[0]),
            static_cast<const __nv_bfloat16*>(d[1]), static_cast<__nv_bfloat16*>(d[2]), n);
      } else {
        ElementwiseKernel<__half><<<Blocks(n), 256>>>(o.op_id, o.seq, o.rounding, static_cast<const __half*>(d[0]),
                                                      static_cast<const __half*>(d[1]), static_cast<__half*>(d[2]), n);
      }
      return std::string();
    });
    if (!error.empty()) {
      Line("error CUDA: " + error);
      return true;
    }
  }
  Answer(s, out, n, out_offset);
  return true;
}

// reduce OP DTYPE TARGET VARIANT RANK E.. ARITY N.. M: linear_fwd through
// cuBLAS. False when the stream cannot go on.
bool ServeReduce(State& s, std::istringstream& words) {
  std::string op, dtype, target, variant;
  uint64_t rank = 0, arity = 0, m = 0;
  std::vector<uint64_t> extents, counts;
  bool ok = static_cast<bool>(words >> op >> dtype >> target >> variant >> rank) && rank >= 1 && rank <= 8;
  for (uint64_t i = 0; ok && i < rank; ++i) {
    uint64_t e;
    ok = static_cast<bool>(words >> e);
    extents.push_back(e);
  }
  ok = ok && static_cast<bool>(words >> arity) && arity >= 1 && arity <= 8;
  for (uint64_t i = 0; ok && i < arity; ++i) {
    uint64_t c;
    ok = static_cast<bool>(words >> c);
    counts.push_back(c);
  }
  ok = ok && static_cast<bool>(words >> m);
  const size_t bytes = DtypeBytes(dtype);
  if (!ok || bytes == 0) {
    Line("error malformed request (expected: reduce OP DTYPE TARGET VARIANT RANK E... ARITY N... M)");
    return false;
  }
  std::vector<std::vector<unsigned char>> in;
  if (!ReadOperands(s, counts, bytes, in)) return false;
  uint64_t out_offset = 0;
  for (const uint64_t c : counts) out_offset += c * bytes;
  if (target != s.target) {
    Line("error no target '" + target + "' here (this is " + s.target + ")");
    return true;
  }
  const GemmOffer* found = nullptr;
  for (const GemmOffer& g : GemmOffers()) {
    if (op == "linear_fwd" && dtype == g.dtype && variant == g.variant) found = &g;
  }
  if (found == nullptr) {
    Line("error no " + op + " " + dtype + " kernel " + variant + " here (linear_fwd only)");
    return true;
  }
  if (rank != 3 || arity != 3) {
    Line("error linear_fwd takes 3 extents (batch, in, out) and 3 operands (x, w, b)");
    return true;
  }
  const uint64_t batch = extents[0], k = extents[1], nout = extents[2];
  if (counts[0] != batch * k || counts[1] != nout * k || counts[2] != nout || m != batch * nout) {
    Line("error linear_fwd of shape " + std::to_string(batch) + "," + std::to_string(k) + "," +
         std::to_string(nout) + " takes x of batch*in, w of out*in, b of out and gives batch*out");
    return true;
  }
  if (s.host) {
    Line("error cuBLAS does not run on the host (--host serves the elementwise ops and casts)");
    return true;
  }
  if (!s.device_error.empty()) {
    Line("error " + s.device_error);
    return true;
  }
  // C starts as the bias broadcast over the batch (beta = 1): cuBLAS adds it
  // in its epilogue, in f32, and rounds once to the output format.
  std::vector<std::vector<unsigned char>> operands = {in[0], in[1], std::vector<unsigned char>(m * bytes)};
  for (uint64_t r = 0; r < batch; ++r) {
    std::memcpy(operands[2].data() + r * nout * bytes, in[2].data(), nout * bytes);
  }
  std::vector<unsigned char> out(m * bytes);
  const GemmOffer g = *found;
  const std::string error = OnDevice(s, {operands[0], operands[1]}, out, [&](const std::vector<void*>& d) {
    cudaError_t e = cudaMemcpy(d[2], operands[2].data(), operands[2].size(), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return CudaText(e);
    const float alpha = 1.0f, beta = 1.0f;
    // Column-major: y^T (out x batch) = w (as in x out, transposed) * x^T (in x batch).
    const cublasStatus_t st = cublasGemmEx(
        s.blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(nout), static_cast<int>(batch),
        static_cast<int>(k), &alpha, d[1], g.type, static_cast<int>(k), d[0], g.type, static_cast<int>(k),
        &beta, d[2], g.type, static_cast<int>(nout), g.compute, CUBLAS_GEMM_DEFAULT);
    if (st != CUBLAS_STATUS_SUCCESS) return std::string("cublasGemmEx: ") + cublasGetStatusString(st);
    return std::string();
  });
  if (!error.empty()) {
    Line("error CUDA: " + error);
    return true;
  }
  Answer(s, out, m, out_offset);
  return true;
}

bool MapSharedData(State& s) {
  const char* fd_text = std::getenv("ULPGATE_IUT_SHM_FD");
  const char* bytes_text = std::getenv("ULPGATE_IUT_SHM_BYTES");
  if (fd_text == nullptr || bytes_text == nullptr) return false;
  const unsigned long long bytes = std::strtoull(bytes_text, nullptr, 10);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, std::atoi(fd_text), 0);
  if (p == MAP_FAILED) return false;
  s.shm = static_cast<char*>(p);
  return true;
}

// --selftest N: every elementwise kernel and cast on the device against the host twin
// (the same sequences and conversions on the CPU), on N operands of random bits and N
// drawn from the op's usual ranges. A claimed kernel must agree bit for bit (NaNs as one
// class): both follow the claimed model, so a difference is the device's (an instruction
// that rounds otherwise) or the twin's; an unclaimed one prints how many outputs differ
// (libdevice's expf, erff, tanhf against the C library's). Needs no ulpgate: the first
// thing ci/device.sh runs. Exit 0 when every claimed kernel agrees, 1 otherwise.
uint32_t NextRandom(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<uint32_t>(state >> 32);
}

bool SameBits(const std::string& dtype, const unsigned char* a, const unsigned char* b) {
  if (dtype == "f32") {
    uint32_t x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    const bool nan_x = (x & 0x7fffffffu) > 0x7f800000u, nan_y = (y & 0x7fffffffu) > 0x7f800000u;
    return x == y || (nan_x && nan_y);
  }
  uint16_t x, y;
  std::memcpy(&x, a, 2);
  std::memcpy(&y, b, 2);
  const uint16_t exp = dtype == "bf16" ? 0x7f80 : 0x7c00;
  const bool nan_x = (x & 0x7fff) > exp, nan_y = (y & 0x7fff) > exp;
  return x == y || (nan_x && nan_y);
}

int SelfTest(State& s, uint64_t n) {
  if (!s.device_error.empty()) {
    std::printf("selftest: %s; nothing run\n", s.device_error.c_str());
    return 77;
  }
  State twin;
  twin.host = true;
  uint64_t state = 1;
  int failures = 0;
  // f32 operands: random bit patterns, then grad log-uniform in [2^-24, 2^8) and x
  // uniform in [-10, 10] (t, s in [-1, 1] for tanh_bwd and sigmoid_bwd).
  auto operands = [&](const std::string& dtype, const char* op) {
    std::vector<std::vector<unsigned char>> in(2);
    const size_t bytes = dtype == "f32" ? 4 : 2;
    for (auto& v : in) v.resize(2 * n * bytes);
    const bool unit = std::strcmp(op, "tanh_bwd") == 0 || std::strcmp(op, "sigmoid_bwd") == 0;
    for (uint64_t i = 0; i < 2 * n; ++i) {
      for (int k = 0; k < 2; ++k) {
        uint32_t bits = NextRandom(state);
        if (i >= n) {
          const double u = NextRandom(state) / 4294967296.0;
          const float f = k == 0 ? static_cast<float>(std::ldexp(1.0 + u, static_cast<int>(bits % 32) - 24))
                                 : static_cast<float>(unit ? 2 * u - 1 : 20 * u - 10);
          std::memcpy(&bits, &f, 4);
        }
        if (bytes == 4) {
          std::memcpy(&in[k][i * 4], &bits, 4);
        } else {
          float f;
          std::memcpy(&f, &bits, 4);
          const uint16_t h = i < n ? static_cast<uint16_t>(bits >> 16)
                             : dtype == "bf16" ? __nv_bfloat16_raw(__float2bfloat16_rn(f)).x
                                               : __half_raw(__float2half_rn(f)).x;
          std::memcpy(&in[k][i * 2], &h, 2);
        }
      }
    }
    return in;
  };
  for (const ElementwiseOffer& o : ElementwiseOffers()) {
    const std::string dtype = o.dtype;
    const size_t bytes = dtype == "f32" ? 4 : 2;
    const std::vector<std::vector<unsigned char>> in = operands(dtype, o.op);
    std::vector<unsigned char> device(2 * n * bytes), host(2 * n * bytes);
    // --host --selftest: the twin against itself, which runs this comparison's own logic
    // where no GPU is (ctest cuda_iut).
    const std::string error = s.host ? std::string() : OnDevice(s, in, device, [&](const std::vector<void*>& d) {
      if (dtype == "f32") {
        ElementwiseKernel<float><<<Blocks(2 * n), 256>>>(o.op_id, o.seq, o.rounding, static_cast<const float*>(d[0]),
                                                         static_cast<const float*>(d[1]), static_cast<float*>(d[2]), 2 * n);
      } else if (dtype == "bf16") {
        ElementwiseKernel<__nv_bfloat16><<<Blocks(2 * n), 256>>>(
            o.op_id, o.seq, o.rounding, static_cast<const __nv_bfloat16*>(d[0]),
            static_cast<const __nv_bfloat16*>(d[1]), static_cast<__nv_bfloat16*>(d[2]), 2 * n);
      } else {
        ElementwiseKernel<__half><<<Blocks(2 * n), 256>>>(o.op_id, o.seq, o.rounding, static_cast<const __half*>(d[0]),
                                                          static_cast<const __half*>(d[1]), static_cast<__half*>(d[2]), 2 * n);
      }
      return std::string();
    });
    if (dtype == "f32") {
      RunElementwiseHost<float>(o, in, host, 2 * n);
    } else if (dtype == "bf16") {
      RunElementwiseHost<__nv_bfloat16>(o, in, host, 2 * n);
    } else {
      RunElementwiseHost<__half>(o, in, host, 2 * n);
    }
    if (s.host) device = host;
    uint64_t differ = 0, first = 2 * n;
    for (uint64_t i = 0; error.empty() && i < 2 * n; ++i) {
      if (!SameBits(dtype, &device[i * bytes], &host[i * bytes])) {
        if (differ++ == 0) first = i;
      }
    }
    const bool claimed = o.model[0] != '\0';
    const bool bad = !error.empty() || (claimed && differ != 0);
    failures += bad;
    std::printf("%-4s %s %s %s (%s): %s\n", bad ? "FAIL" : "ok", o.op, o.dtype, o.variant,
                claimed ? o.model : "none claimed",
                !error.empty() ? ("CUDA: " + error).c_str()
                : differ == 0 ? ("all " + std::to_string(2 * n) + " outputs as the host twin's").c_str()
                              : (std::to_string(differ) + " of " + std::to_string(2 * n) +
                                 " outputs differ from the host twin's, the first at operand pair " +
                                 std::to_string(first))
                                    .c_str());
  }
  static const std::vector<CastOffer> casts = CastOffers();
  for (const CastOffer& c : casts) {
    const std::string source = c.source;
    const size_t bytes = source == "f32" ? 4 : 2;
    std::vector<std::vector<unsigned char>> in(1, std::vector<unsigned char>(2 * n * bytes));
    for (uint64_t i = 0; i < 2 * n; ++i) {
      uint32_t bits = NextRandom(state);
      if (i >= n) {  // magnitudes around the destinations' ranges: 2^-20 to 2^20
        const float f = static_cast<float>(std::ldexp(1.0 + NextRandom(state) / 4294967296.0,
                                                      static_cast<int>(bits % 41) - 20)) *
                        ((bits >> 8) & 1 ? -1.0f : 1.0f);
        std::memcpy(&bits, &f, 4);
        if (bytes == 2) bits = source == "bf16" ? __nv_bfloat16_raw(__float2bfloat16_rn(f)).x
                                                : __half_raw(__float2half_rn(f)).x;
      } else if (bytes == 2) {
        bits >>= 16;
      }
      std::memcpy(&in[0][i * bytes], &bits, bytes);
    }
    std::vector<unsigned char> device(2 * n), host(2 * n);
    const std::string error = s.host ? std::string() : OnDevice(s, in, device, [&](const std::vector<void*>& d) {
      auto* o = static_cast<uint8_t*>(d[1]);
      if (source == "f32") {
        CastKernel<float><<<Blocks(2 * n), 256>>>(c.dest_id, c.mode, static_cast<const float*>(d[0]), o, 2 * n);
      } else if (source == "bf16") {
        CastKernel<__nv_bfloat16_raw><<<Blocks(2 * n), 256>>>(c.dest_id, c.mode,
                                                              static_cast<const __nv_bfloat16_raw*>(d[0]), o, 2 * n);
      } else {
        CastKernel<__half_raw><<<Blocks(2 * n), 256>>>(c.dest_id, c.mode, static_cast<const __half_raw*>(d[0]), o,
                                                       2 * n);
      }
      return std::string();
    });
    for (uint64_t i = 0; i < 2 * n; ++i) {
      if (source == "f32") {
        float f;
        std::memcpy(&f, &in[0][i * 4], 4);
        host[i] = CastElement<float>(c.dest_id, c.mode, f);
      } else if (source == "bf16") {
        __nv_bfloat16_raw r;
        std::memcpy(&r.x, &in[0][i * 2], 2);
        host[i] = CastElement<__nv_bfloat16_raw>(c.dest_id, c.mode, r);
      } else {
        __half_raw r;
        std::memcpy(&r.x, &in[0][i * 2], 2);
        host[i] = CastElement<__half_raw>(c.dest_id, c.mode, r);
      }
    }
    if (s.host) device = host;
    uint64_t differ = 0;
    for (uint64_t i = 0; error.empty() && i < 2 * n; ++i) differ += device[i] != host[i];
    const bool claimed = c.policy[0] != '\0';
    const bool bad = !error.empty() || (claimed && differ != 0);
    failures += bad;
    std::printf("%-4s cast_%s %s %s (%s): %s\n", bad ? "FAIL" : "ok", c.source, c.dest, c.variant,
                claimed ? c.policy : "none claimed",
                !error.empty() ? ("CUDA: " + error).c_str()
                               : (std::to_string(differ) + " of " + std::to_string(2 * n) +
                                  " codes differ from the host twin's (the headers' software path)")
                                     .c_str());
  }
  std::printf("selftest on %s: %d claimed kernels differ from the host twin\n", s.target.c_str(), failures);
  return failures == 0 ? 0 : 1;
}

int Main(int argc, char** argv) {
  State s;
  bool claimed_only = false;
  int device = 0;
  uint64_t selftest = 0;
  const char* usage =
      "usage: ulpgate-iut-cuda [--target NAME] [--claimed-only] [--host] [--device N] [--selftest N]";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--target" && i + 1 < argc) {
      s.target = argv[++i];
    } else if (arg == "--device" && i + 1 < argc) {
      device = std::atoi(argv[++i]);
    } else if (arg == "--selftest" && i + 1 < argc) {
      selftest = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--claimed-only") {
      claimed_only = true;
    } else if (arg == "--host") {
      s.host = true;
    } else if (arg == "--help" || arg == "-h") {
      std::printf("%s\n"
                  "Runs CUDA kernels for ulpgate over the protocol of docs/iut.md (stdin, stdout).\n"
                  "  --target NAME   offer the kernels under NAME (default CUDA_SM<cc> of the device)\n"
                  "  --claimed-only  offer only the kernels that claim a model (goldens)\n"
                  "  --host          run the sequences and the headers' conversions on the CPU\n"
                  "                  (target CUDA_HOST_TWIN; no GPU needed, no cuBLAS)\n"
                  "  --device N      the CUDA device (default 0)\n"
                  "  --selftest N    no protocol: every kernel on the device against the host twin\n"
                  "                  on 2N operands; exit 0 when every claimed kernel agrees\n",
                  usage);
      return 0;
    } else {
      std::fprintf(stderr, "ulpgate-iut-cuda: unknown argument '%s' (%s)\n", arg.c_str(), usage);
      return 2;
    }
  }
  if (s.host) {
    if (s.target.empty()) s.target = "CUDA_HOST_TWIN";
  } else {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count <= device) e = cudaErrorNoDevice;
    if (e == cudaSuccess) e = cudaSetDevice(device);
    cudaDeviceProp prop{};
    if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, device);
    if (e != cudaSuccess) {
      s.device_error = "no CUDA device: " + std::string(cudaGetErrorString(e));
      if (s.target.empty()) s.target = "CUDA_NODEVICE";
      std::fprintf(stderr, "ulpgate-iut-cuda: %s; every call is refused\n", s.device_error.c_str());
    } else {
      if (s.target.empty()) s.target = "CUDA_SM" + std::to_string(prop.major) + std::to_string(prop.minor);
      const cublasStatus_t st = cublasCreate(&s.blas);
      if (st != CUBLAS_STATUS_SUCCESS) {
        s.device_error = std::string("cuBLAS does not start: ") + cublasGetStatusString(st);
      } else {
        // Deterministic: no atomics in cuBLAS's reductions.
        cublasSetAtomicsMode(s.blas, CUBLAS_ATOMICS_NOT_ALLOWED);
      }
      std::fprintf(stderr, "ulpgate-iut-cuda: %s (compute capability %d.%d) as %s\n", prop.name,
                   prop.major, prop.minor, s.target.c_str());
    }
  }
  if (selftest > 0) return SelfTest(s, selftest);
  Line("ulpgate-iut 3");
  if (MapSharedData(s)) Line("data shm");
  for (const ElementwiseOffer& e : ElementwiseOffers()) {
    if (claimed_only && e.model[0] == '\0') continue;
    Line("kernel " + s.target + " " + e.op + " " + e.dtype + " " + e.variant +
         (e.model[0] != '\0' ? std::string(" ") + e.model : std::string()));
  }
  for (const CastOffer& c : CastOffers()) {
    if (claimed_only && c.policy[0] == '\0') continue;
    Line("kernel " + s.target + " cast_" + c.source + " " + c.dest + " " + c.variant +
         (c.policy[0] != '\0' ? std::string(" ") + c.policy : std::string()));
  }
  if (!claimed_only && !s.host) {
    for (const GemmOffer& g : GemmOffers()) {
      Line("kernel " + s.target + " linear_fwd " + g.dtype + " " + g.variant);
    }
  }
  Line("ready");
  std::fflush(stdout);
  std::string line;
  for (int c; (c = std::fgetc(stdin)) != EOF;) {
    if (c != '\n') {
      line.push_back(static_cast<char>(c));
      continue;
    }
    std::istringstream words(line);
    std::string verb;
    words >> verb;
    line.clear();
    bool go_on;
    if (verb == "quit") {
      return 0;
    } else if (verb == "call") {
      go_on = ServeCall(s, words);
    } else if (verb == "reduce") {
      go_on = ServeReduce(s, words);
    } else {
      Line("error malformed request (expected: call, reduce or quit)");
      go_on = false;
    }
    std::fflush(stdout);
    if (!go_on) return 2;  // out of step: nothing after it can be trusted
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return Main(argc, argv); }
