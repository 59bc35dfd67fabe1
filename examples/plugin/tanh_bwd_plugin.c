/* An ulpgate plugin in plain C: tanh backward as grad * (1 - t*t), claiming the
 * two-rounding model "mulsub". Built twice by examples/plugin/CMakeLists.txt:
 * with -O2 -march=x86-64-v3 -ffp-contract=fast GCC contracts 1 - t*t into a
 * fused multiply-add, and ulpgate reports the fused model instead; with
 * -ffp-contract=off it conforms. The BROKEN_* macros build the plugins the
 * error tests load. */
#include <ulpgate/plugin.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "tanh_bwd_c"
#endif

static void tanh_bwd(const float* grad, const float* t, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = grad[i] * (1.0f - t[i] * t[i]);
}

#if defined(BROKEN_UNKNOWN_OP)
#define OP "tanh_fwd"
#else
#define OP "tanh_bwd"
#endif
#if defined(BROKEN_BAD_MODEL)
#define MODEL "mine: out = grad*(t"
#else
#define MODEL "mulsub"
#endif

static const ulpgate_plugin_kernel kKernels[] = {
    {OP, "mulsub_c", "f32", MODEL, tanh_bwd},
#if defined(BROKEN_DUPLICATE)
    {OP, "mulsub_c", "f32", MODEL, tanh_bwd},
#endif
};

static const ulpgate_plugin kPlugin = {
#if defined(BROKEN_ABI)
    ULPGATE_PLUGIN_ABI_VERSION + 1,
#else
    ULPGATE_PLUGIN_ABI_VERSION,
#endif
    PLUGIN_NAME, sizeof kKernels / sizeof kKernels[0], kKernels};

#if !defined(BROKEN_NO_ENTRY)
const ulpgate_plugin* ulpgate_plugin_entry(void) { return &kPlugin; }
#else
const ulpgate_plugin* not_the_entry(void) { return &kPlugin; }
#endif
