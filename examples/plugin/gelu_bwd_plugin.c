/* A version 2 plugin of an op whose models call exp and erf: gelu backward in
 * PyTorch's sequence (Activation.cpp), cdf = 0.5 (1 + erf(x kAlpha)),
 * pdf = kBeta exp(x x (-0.5)), out = grad (cdf + x pdf), with erf from the C
 * library in double rounded to float and exp from its expf. It claims
 * "torch_nofma", the sequence over ulpgate's erf polynomial and Highway 1.0.3's
 * Exp: where the C library's functions and those round differently the outputs
 * differ, so the plugin is measured in ULPs beside the model rather than
 * following it bit for bit. Built without contraction. */
#include <ulpgate/plugin.h>

#include <math.h>

/* PyTorch's constants rounded to binary32: RN(1/sqrt(2)), RN(1/sqrt(2 pi)). */
static const float kAlpha = 0x1.6a09e6p-1f;
static const float kBeta = 0x1.988454p-2f;

/* Operands in the order `ulpgate list` gives gelu_bwd's: grad, x. */
static void gelu_bwd(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = in[1][i];
    const float cdf = 0.5f * (1.0f + (float)erf((double)(x * kAlpha)));
    const float pdf = kBeta * expf(x * x * -0.5f);
    out[i] = in[0][i] * (cdf + x * pdf);
  }
}

static const ulpgate_plugin_v2_kernel kKernels[] = {
    {.variant = "torch_c", .dtype = "f32", .model = "torch_nofma", .f32 = gelu_bwd},
};

static const ulpgate_plugin_v2 kPlugin = {
    ULPGATE_PLUGIN_V2_ABI_VERSION, "gelu_c", "gelu_bwd", 2, sizeof kKernels / sizeof kKernels[0],
    kKernels};

const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void) { return &kPlugin; }
