/* An ulpgate plugin in plain C: tanh backward as grad * (1 - t*t), claiming the
 * two-rounding model "mulsub", and the same in bf16 the way frameworks do it
 * (widen to float, compute, round once to bf16: "mulsub_opmath"). Built twice
 * by examples/plugin/CMakeLists.txt: with -O2 -march=x86-64-v3
 * -ffp-contract=fast GCC contracts 1 - t*t into a fused multiply-add, and
 * ulpgate reports the fused models instead; with -ffp-contract=off both
 * conform. The BROKEN_* macros build the plugins the error tests load. */
#include <ulpgate/plugin.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "tanh_bwd_c"
#endif

#include <string.h>

static void tanh_bwd(const float* grad, const float* t, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = grad[i] * (1.0f - t[i] * t[i]);
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
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

static void tanh_bwd_bf16(const uint16_t* grad, const uint16_t* t, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float g = from_bf16(grad[i]), x = from_bf16(t[i]);
    out[i] = to_bf16(g * (1.0f - x * x));
  }
}

#if defined(BROKEN_UNKNOWN_OP)
#define OP "tanh_fwd"
#else
#define OP "tanh_bwd"
#endif
#if defined(BROKEN_BAD_MODEL)
#define MODEL "mine: out = grad*(t"
#elif defined(BROKEN_UNKNOWN_MODEL)
#define MODEL "mulsub_magic"
#else
#define MODEL "mulsub"
#endif

static const ulpgate_plugin_kernel kKernels[] = {
    {.op = OP, .variant = "mulsub_c", .dtype = "f32", .model = MODEL, .f32 = tanh_bwd},
    {.op = OP, .variant = "mulsub_c", .dtype = "bf16", .model = "mulsub_opmath", .u16 = tanh_bwd_bf16},
#if defined(BROKEN_DUPLICATE)
    {.op = OP, .variant = "mulsub_c", .dtype = "f32", .model = MODEL, .f32 = tanh_bwd},
#elif defined(BROKEN_DTYPE)
    {.op = OP, .variant = "wide", .dtype = "f64", .model = MODEL, .f32 = tanh_bwd},
#elif defined(BROKEN_NO_FUNCTION)
    {.op = OP, .variant = "nothing", .dtype = "f32", .model = MODEL},
#elif defined(BROKEN_WRONG_FUNCTION)
    {.op = OP, .variant = "both", .dtype = "bf16", .model = "mulsub_opmath", .f32 = tanh_bwd,
     .u16 = tanh_bwd_bf16},
#elif defined(BROKEN_NO_VARIANT)
    {.op = OP, .dtype = "f32", .model = MODEL, .f32 = tanh_bwd},
#endif
};

#if defined(BROKEN_NO_NAME)
#undef PLUGIN_NAME
#define PLUGIN_NAME ""
#endif

static const ulpgate_plugin kPlugin = {
#if defined(BROKEN_ABI)
    ULPGATE_PLUGIN_ABI_VERSION + 1,
#else
    ULPGATE_PLUGIN_ABI_VERSION,
#endif
    PLUGIN_NAME,
#if defined(BROKEN_NO_KERNELS)
    0,
#else
    sizeof kKernels / sizeof kKernels[0],
#endif
    kKernels};

#if defined(BROKEN_NO_ENTRY)
const ulpgate_plugin* not_the_entry(void) { return &kPlugin; }
#elif defined(BROKEN_NULL_ENTRY)
const ulpgate_plugin* ulpgate_plugin_entry(void) { return kPlugin.name == NULL ? &kPlugin : NULL; }
#else
const ulpgate_plugin* ulpgate_plugin_entry(void) { return &kPlugin; }
#endif
