/* ulpgate's plugin interface (C ABI, versioned): a shared library lists its
 * kernels, and `ulpgate run --plugin PATH` measures them beside the built-in
 * ones, under a target named after the plugin, against the model each claims.
 *
 *   #include <ulpgate/plugin.h>
 *   static void my_tanh_bwd(const float* grad, const float* t, float* out, size_t n) { ... }
 *   static const ulpgate_plugin_kernel kernels[] = {
 *       {.op = "tanh_bwd", .variant = "mine", .dtype = "f32", .model = "mulsub",
 *        .f32 = my_tanh_bwd}};
 *   static const ulpgate_plugin plugin = {ULPGATE_PLUGIN_ABI_VERSION, "myplugin", 1, kernels};
 *   const ulpgate_plugin* ulpgate_plugin_entry(void) { return &plugin; }
 */
#ifndef ULPGATE_PLUGIN_H_
#define ULPGATE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

#define ULPGATE_PLUGIN_ABI_VERSION 1u

#ifdef __cplusplus
extern "C" {
#endif

/* An elementwise op of two operands in binary32: out[i] = op(a[i], b[i]) for
 * i < n (tanh_bwd: a = grad, b = t). Called from several threads at once, on
 * arrays of any length and alignment. */
typedef void (*ulpgate_binary_f32_fn)(const float* a, const float* b, float* out, size_t n);
/* The same in a 16-bit format (bf16, f16): operands and outputs are the
 * format's bit patterns. */
typedef void (*ulpgate_binary_u16_fn)(const uint16_t* a, const uint16_t* b, uint16_t* out,
                                      size_t n);

typedef struct ulpgate_plugin_kernel {
  const char* op;       /* "tanh_bwd" */
  const char* variant;  /* the name reports give it */
  const char* dtype;    /* "f32", "bf16" or "f16" */
  /* The model it claims: a built-in model of the dtype ("mulsub",
   * "mulsub_opmath", `ulpgate list`) or "NAME: statements" in the model
   * language (docs/models.md), outputs stored in the dtype. */
  const char* model;
  ulpgate_binary_f32_fn f32; /* dtype "f32"; else NULL */
  ulpgate_binary_u16_fn u16; /* dtype "bf16" or "f16"; else NULL */
} ulpgate_plugin_kernel;

typedef struct ulpgate_plugin {
  uint32_t abi_version; /* ULPGATE_PLUGIN_ABI_VERSION */
  const char* name;     /* the target its kernels are reported under */
  size_t kernel_count;
  const ulpgate_plugin_kernel* kernels;
} ulpgate_plugin;

/* Every plugin exports this function. */
const ulpgate_plugin* ulpgate_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* ULPGATE_PLUGIN_H_ */
