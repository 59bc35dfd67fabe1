/* ulpgate's plugin interface (C ABI, versioned): a shared library lists its
 * kernels, and `ulpgate run --plugin PATH` measures them beside the built-in
 * ones, under a target named after the plugin, against the model each claims.
 *
 * Version 2 (any registered elementwise op, one to three operands):
 *
 *   #include <ulpgate/plugin.h>
 *   static void my_kernel(const float* const* in, float* out, size_t n) {
 *     const float* a = in[0]; const float* b = in[1]; ...
 *   }
 *   static const ulpgate_plugin_v2_kernel kernels[] = {
 *       {.variant = "mine", .dtype = "f32", .model = MODEL, .f32 = my_kernel}};
 *   static const ulpgate_plugin_v2 plugin = {
 *       ULPGATE_PLUGIN_V2_ABI_VERSION, "myplugin", OP, 2, 1, kernels};
 *   const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void) { return &plugin; }
 *
 * where OP is a registered op's name and MODEL one of its models (`ulpgate
 * list`); examples/plugin holds whole plugins of real ops (docs/plugins.md).
 *
 * Version 3 (casts to the 8-, 6- and 4-bit formats):
 *
 *   static void my_cast(const void* in, void* out, size_t n) {
 *     const float* x = in; uint8_t* code = out; ...   one code a byte
 *   }
 *   static const ulpgate_plugin_v3_cast casts[] = {
 *       {.variant = "mine", .from = "f32", .to = "float8_e4m3fn",
 *        .policy = "nearest_even.saturate", .fn = my_cast}};
 *   static const ulpgate_plugin_v3 plugin = {
 *       ULPGATE_PLUGIN_V3_ABI_VERSION, "myplugin", 1, casts};
 *   const ulpgate_plugin_v3* ulpgate_plugin_v3_entry(void) { return &plugin; }
 *
 * Version 4 (reductions with shapes: linear_fwd, mse_fwd, ... `ulpgate list`):
 *
 *   static void my_linear(const void* const* operands, void* out,
 *                         const size_t* extents, size_t rank) {
 *     const float* x = operands[0]; const float* w = operands[1]; ...
 *     size_t batch = extents[0], in = extents[1], out_features = extents[2];
 *   }
 *   static const ulpgate_plugin_v4_reduction reductions[] = {
 *       {.op = "linear_fwd", .variant = "mine", .dtype = "f32",
 *        .model = "sequential_unfused", .fn = my_linear}};
 *   static const ulpgate_plugin_v4 plugin = {
 *       ULPGATE_PLUGIN_V4_ABI_VERSION, "myplugin", 1, reductions};
 *   const ulpgate_plugin_v4* ulpgate_plugin_v4_entry(void) { return &plugin; }
 *
 * Version 1 (ULPGATE_PLUGIN_V1_OP only, kept so that plugins built against it load
 * unchanged): ulpgate_plugin, ulpgate_plugin_kernel and ulpgate_plugin_entry
 * below. A library exports one of the entry points; ulpgate looks for
 * version 4's first, then 3's, then 2's.
 */
#ifndef ULPGATE_PLUGIN_H_
#define ULPGATE_PLUGIN_H_

#include <stddef.h>
#include <stdint.h>

/* The version ulpgate_plugin (version 1's layout) carries. */
#define ULPGATE_PLUGIN_ABI_VERSION 1u
/* The version ulpgate_plugin_v2 carries. */
#define ULPGATE_PLUGIN_V2_ABI_VERSION 2u
/* The version ulpgate_plugin_v3 carries. */
#define ULPGATE_PLUGIN_V3_ABI_VERSION 3u
/* The version ulpgate_plugin_v4 carries. */
#define ULPGATE_PLUGIN_V4_ABI_VERSION 4u
/* The op of every version 1 kernel: version 1 came before ulpgate had other
 * ops, and its kernel signature holds two operands only. Frozen with that
 * ABI (its plugins' kernels carry this string), so written here rather than
 * taken from the op's spec, which a C header cannot reach. */
#define ULPGATE_PLUGIN_V1_OP "tanh_bwd"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- version 4 */

/* A reduction over tensors of any shape the op takes. operands[k] is the
 * op's operand k (`ulpgate list` gives their order: linear_fwd's x, w, b),
 * row-major, in the dtype's storage (float for "f32"; uint16_t bit patterns
 * for "bf16" and "f16"); `out` receives the op's outputs, row-major, in the
 * same storage. `extents` holds the op's shape as `--shape` spells it, `rank`
 * values: the linear ops {batch, in, out} (x [batch, in], w [out, in],
 * b [out], y [batch, out]), the MSE ops {N} (mse_fwd's output one element,
 * mse_bwd's third operand grad_out one element). Called from several threads
 * at once, with operands and outputs of any alignment. */
typedef void (*ulpgate_reduction_fn)(const void* const* operands, void* out,
                                     const size_t* extents, size_t rank);

typedef struct ulpgate_plugin_v4_reduction {
  const char* op;      /* a reduction op's name: "linear_fwd", "mse_fwd", ... */
  const char* variant; /* the name reports give it */
  const char* dtype;   /* "f32", "bf16" or "f16" */
  /* The bit-exact model it claims: one of the op's models as reports name
   * them ("sequential_fused", "sequential_unfused", "pairwise",
   * "lane_parallel_x8_fused", ...: `ulpgate list`), or NULL to claim none
   * (measured: the reports name the models it follows). */
  const char* model;
  ulpgate_reduction_fn fn;
} ulpgate_plugin_v4_reduction;

typedef struct ulpgate_plugin_v4 {
  uint32_t abi_version; /* ULPGATE_PLUGIN_V4_ABI_VERSION */
  const char* name;     /* the target its kernels are reported under */
  size_t reduction_count;
  const ulpgate_plugin_v4_reduction* reductions;
} ulpgate_plugin_v4;

/* A version 4 plugin exports this function. */
const ulpgate_plugin_v4* ulpgate_plugin_v4_entry(void);

/* ------------------------------------------------------------- version 3 */

/* A cast: code[i] = cast(x[i]) for i < n. `in` holds the source's storage
 * (float for "f32"; uint16_t bit patterns for "bf16" and "f16"), `out` one
 * code a byte (a 4- or 6-bit code in the byte's low bits, the high bits
 * zero: the 4-bit format too, unpacked). Called from several threads at
 * once, on arrays of any length and alignment. */
typedef void (*ulpgate_cast_fn)(const void* in, void* out, size_t n);

typedef struct ulpgate_plugin_v3_cast {
  const char* variant; /* the name reports give it */
  const char* from;    /* the source: "f32", "bf16" or "f16" (op cast_f32, ...) */
  /* The destination: float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
   * float8_e5m2fnuz, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn or
   * float8_e8m0fnu (`ulpgate list`). */
  const char* to;
  /* The policy of the exact cast model it claims to follow bit for bit
   * ("nearest_even.saturate", "toward_zero.saturate", ...: docs/design.md,
   * Casts), or NULL to claim none (measured: the reports name what it follows). */
  const char* policy;
  ulpgate_cast_fn fn;
} ulpgate_plugin_v3_cast;

typedef struct ulpgate_plugin_v3 {
  uint32_t abi_version; /* ULPGATE_PLUGIN_V3_ABI_VERSION */
  const char* name;     /* the target its casts are reported under */
  size_t cast_count;
  const ulpgate_plugin_v3_cast* casts;
} ulpgate_plugin_v3;

/* A version 3 plugin exports this function. */
const ulpgate_plugin_v3* ulpgate_plugin_v3_entry(void);

/* ------------------------------------------------------------- version 2 */

/* An elementwise op in binary32: out[i] = op(in[0][i], ..., in[arity-1][i])
 * for i < n, operands in the order `ulpgate list` gives them. Called from several threads at once, on arrays of any length and
 * alignment. */
typedef void (*ulpgate_f32_fn)(const float* const* in, float* out, size_t n);
/* The same in a 16-bit format (bf16, f16): operands and outputs are the
 * format's bit patterns. */
typedef void (*ulpgate_u16_fn)(const uint16_t* const* in, uint16_t* out, size_t n);

typedef struct ulpgate_plugin_v2_kernel {
  const char* variant; /* the name reports give it */
  const char* dtype;   /* "f32", "bf16" or "f16" */
  /* The model it claims: a built-in model of the op in the dtype (`ulpgate
   * list`) or "NAME: statements" in the model language (docs/models.md) over
   * the op's operand names, outputs stored in the dtype. */
  const char* model;
  ulpgate_f32_fn f32; /* dtype "f32"; else NULL */
  ulpgate_u16_fn u16; /* dtype "bf16" or "f16"; else NULL */
} ulpgate_plugin_v2_kernel;

typedef struct ulpgate_plugin_v2 {
  uint32_t abi_version; /* ULPGATE_PLUGIN_V2_ABI_VERSION */
  const char* name;     /* the target its kernels are reported under */
  const char* op;       /* a registered elementwise op's name (`ulpgate list`) */
  /* How many operands its kernels take: checked against the op's, so that a
   * kernel is never handed fewer arrays than it reads. */
  uint32_t arity;
  size_t kernel_count;
  const ulpgate_plugin_v2_kernel* kernels;
} ulpgate_plugin_v2;

/* A version 2 plugin exports this function. */
const ulpgate_plugin_v2* ulpgate_plugin_v2_entry(void);

/* ------------------------------------------------------------- version 1 */

/* ULPGATE_PLUGIN_V1_OP in binary32: out[i] = op(a[i], b[i]) for i < n
 * (a = grad, b = t).
 * Called from several threads at once, on arrays of any length and
 * alignment. */
typedef void (*ulpgate_binary_f32_fn)(const float* a, const float* b, float* out, size_t n);
/* The same in a 16-bit format (bf16, f16): operands and outputs are the
 * format's bit patterns. */
typedef void (*ulpgate_binary_u16_fn)(const uint16_t* a, const uint16_t* b, uint16_t* out,
                                      size_t n);

typedef struct ulpgate_plugin_kernel {
  const char* op;       /* ULPGATE_PLUGIN_V1_OP */
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

/* A version 1 plugin exports this function. */
const ulpgate_plugin* ulpgate_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* ULPGATE_PLUGIN_H_ */
