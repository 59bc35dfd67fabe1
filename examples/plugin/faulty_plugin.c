/* A plugin of kernels under development that misbehave, each on purpose, so
 * that the tests can show that ulpgate reports them instead of dying with
 * them: sigmoid backward (grad * s * (1 - s) as p - p*s, p = grad*s, the
 * model "fms_unfused", as sigmoid_bwd_plugin.c) right everywhere except
 *   crash     on an input whose grad has low bits 0x155 (mask 0x3ff): SIGSEGV
 *   overrun   writes one element past the end of its output, every call
 *   nan       returns NaN on those same inputs
 *   hang      never returns on those inputs
 *   fine      nowhere (the case that must complete beside the others)
 * The trigger is a property of the input, so that the test can find the first
 * input that has it on its own and compare. */
#include <ulpgate/plugin.h>

#include <signal.h>
#include <string.h>
#include <unistd.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "faulty"
#endif

static int triggers(float grad) {
  uint32_t bits;
  memcpy(&bits, &grad, sizeof bits);
  return (bits & 0x3ffu) == 0x155u;
}

static float sigmoid_bwd_one(float grad, float s) {
  const float p = grad * s;
  return p - p * s;
}

static void fine(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
}

static void crash(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (triggers(in[0][i])) raise(SIGSEGV);
    out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
  }
}

static void overrun(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i <= n; ++i) out[i] = i < n ? sigmoid_bwd_one(in[0][i], in[1][i]) : 0.0f;
}

static void nan_out(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = triggers(in[0][i]) ? __builtin_nanf("") : sigmoid_bwd_one(in[0][i], in[1][i]);
  }
}

static void hang(const float* const* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    while (triggers(in[0][i])) pause();
    out[i] = sigmoid_bwd_one(in[0][i], in[1][i]);
  }
}

static const ulpgate_plugin_v2_kernel kKernels[] = {
    {.variant = "fine", .dtype = "f32", .model = "fms_unfused", .f32 = fine},
    {.variant = "crash", .dtype = "f32", .model = "fms_unfused", .f32 = crash},
    {.variant = "overrun", .dtype = "f32", .model = "fms_unfused", .f32 = overrun},
    {.variant = "nan", .dtype = "f32", .model = "fms_unfused", .f32 = nan_out},
    {.variant = "hang", .dtype = "f32", .model = "fms_unfused", .f32 = hang},
};

static const ulpgate_plugin_v2 kPlugin = {ULPGATE_PLUGIN_V2_ABI_VERSION, PLUGIN_NAME, "sigmoid_bwd",
                                          2, sizeof kKernels / sizeof kKernels[0], kKernels};

const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void) { return &kPlugin; }
