/* A sigmoid backward plugin as a user brings one to ulpgate, with four
 * kernels of which three are wrong in the ways kernels under development are:
 *   ok     grad * s * (1 - s) as p - p*s, p = grad*s: the model "fms_unfused"
 *   off    the same, one ULP away from it on the inputs whose grad has low
 *          bits 0x2a5 (mask 0xfff): one input in 4096, a silent defect
 *   segv   SIGSEGV on the inputs whose grad has low bits 0x155 (mask 0x3ff)
 *   hang   never returns on those same inputs
 * Each trigger is a property of one input, so a test can find the first input
 * that has it and compare with what ulpgate names. */
#include <ulpgate/plugin.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "flaky"
#endif

static uint32_t low_bits(float grad, uint32_t mask) {
  uint32_t bits;
  memcpy(&bits, &grad, sizeof bits);
  return bits & mask;
}

static float sigmoid_bwd_one(float grad, float s) {
  const float p = grad * s;
  return p - p * s;
}

/* The next binary32 value away from zero: one ULP off for a finite nonzero
 * result (a zero or a NaN stays as it is, so the defect needs a nonzero one). */
static float one_ulp_off(float y) {
  uint32_t bits;
  memcpy(&bits, &y, sizeof bits);
  if ((bits & 0x7fffffffu) == 0 || (bits & 0x7f800000u) == 0x7f800000u) return y;
  bits += 1;
  memcpy(&y, &bits, sizeof y);
  return y;
}

static void ok(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
}

static void off(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float y = sigmoid_bwd_one(in[0][i], in[1][i]);
    out[i] = low_bits(in[0][i], 0xfffu) == 0x2a5u ? one_ulp_off(y) : y;
  }
}

static void segv(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (low_bits(in[0][i], 0x3ffu) == 0x155u) raise(SIGSEGV);
    out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
  }
}

static void hang(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    while (low_bits(in[0][i], 0x3ffu) == 0x155u) pause();
    out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
  }
}

static const ulpgate_plugin_v2_kernel kKernels[] = {
    {.variant = "ok", .dtype = "f32", .model = "fms_unfused", .f32 = ok},
    {.variant = "off", .dtype = "f32", .model = "fms_unfused", .f32 = off},
    {.variant = "segv", .dtype = "f32", .model = "fms_unfused", .f32 = segv},
    {.variant = "hang", .dtype = "f32", .model = "fms_unfused", .f32 = hang},
};

static const ulpgate_plugin_v2 kPlugin = {ULPGATE_PLUGIN_V2_ABI_VERSION, PLUGIN_NAME, "sigmoid_bwd",
                                          2, sizeof kKernels / sizeof kKernels[0], kKernels};

const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void) { return &kPlugin; }
