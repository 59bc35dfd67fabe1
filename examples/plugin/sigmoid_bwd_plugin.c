/* An ulpgate plugin of ABI version 2 in plain C: sigmoid backward,
 * grad * s * (1 - s) from the forward output s, written as p - p*s with
 * p = grad*s and claiming the two-rounding model "fms_unfused"; and in bf16
 * PyTorch's sequence (1 - s, times grad, times s) widened to float and rounded
 * once ("torch_opmath"). Built twice by examples/plugin/CMakeLists.txt: with
 * -O2 -march=x86-64-v3 -ffp-contract=fast GCC contracts p - p*s into a fused
 * multiply-add, and ulpgate reports the model fms_fused instead; with
 * -ffp-contract=off both kernels conform. The BROKEN_* macros build the
 * plugins the error tests load; TRUNCATE_BF16 one whose bf16 kernel truncates
 * where it claims to round to nearest (a sweep must catch it). */
#include <ulpgate/plugin.h>

#include <string.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "sigmoid_bwd_c"
#endif

/* Operands in the order `ulpgate list` gives sigmoid_bwd's: grad, s. */
static void sigmoid_bwd(const float* const* in, float* out, size_t n) {
  const float* grad = in[0];
  const float* s = in[1];
  for (size_t i = 0; i < n; ++i) {
    const float p = grad[i] * s[i];
    out[i] = p - p * s[i];
  }
}

static float from_bf16(uint16_t bits) {
  const uint32_t wide = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &wide, sizeof f);
  return f;
}

/* Round to nearest even; a NaN stays a quiet NaN of its sign. */
static uint16_t to_bf16(float f) {
  uint32_t bits;
  memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((bits >> 16) | 0x0040u);
#if !defined(TRUNCATE_BF16)
  bits += 0x7fffu + ((bits >> 16) & 1u);
#endif
  return (uint16_t)(bits >> 16);
}

static void sigmoid_bwd_bf16(const uint16_t* const* in, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = from_bf16(in[0][i]), s = from_bf16(in[1][i]);
    out[i] = to_bf16(g * (1.0f - s) * s);
  }
}

static const ulpgate_plugin_v2_kernel kKernels[] = {
    {.variant = "fms_c", .dtype = "f32", .model = "fms_unfused", .f32 = sigmoid_bwd},
    {.variant = "fms_c", .dtype = "bf16", .model = "torch_opmath", .u16 = sigmoid_bwd_bf16},
};

#if defined(BROKEN_V2_UNKNOWN_OP)
#define OP "softplus_bwd"
#else
#define OP "sigmoid_bwd"
#endif
#if defined(BROKEN_V2_ARITY)
#define ARITY 3
#else
#define ARITY 2
#endif

static const ulpgate_plugin_v2 kPlugin = {
#if defined(BROKEN_V2_ABI)
    ULPGATE_PLUGIN_V2_ABI_VERSION + 1,
#else
    ULPGATE_PLUGIN_V2_ABI_VERSION,
#endif
    PLUGIN_NAME, OP, ARITY, sizeof kKernels / sizeof kKernels[0], kKernels};

const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void) { return &kPlugin; }
