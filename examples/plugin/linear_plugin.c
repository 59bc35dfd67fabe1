/* A reduction plugin (ulpgate/plugin.h, ABI version 4): linear_fwd,
 * y[b][o] = sum_k x[b][k] w[o][k] + bias[o], in plain C, twice:
 *
 *   sequential: the terms x*w rounded, added left to right from 0, then the
 *               bias; claims ulpgate's sequential_unfused model (built with
 *               -ffp-contract=off, so that no FMA fuses a product into the sum);
 *   pairwise:   the same rounded terms summed as a cascade whose left half is
 *               the largest power of two below the count; claims pairwise.
 *
 * Built with LINEAR_FAULTS it also holds kernels that misbehave on purpose,
 * for the tests: `crash` dereferences null when the reduced dimension is
 * above 8, `overrun` writes one output past its end, and `mislabeled` is
 * `sequential` claiming the fused model it does not follow. */
#include <stddef.h>

#include "ulpgate/plugin.h"

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "linear_example"
#endif

static void sequential(const void* const* operands, void* out, const size_t* extents,
                       size_t rank) {
  const float* x = operands[0];
  const float* w = operands[1];
  const float* bias = operands[2];
  float* y = out;
  const size_t batch = extents[0], in = extents[1], out_features = extents[2];
  (void)rank;
  for (size_t b = 0; b < batch; ++b) {
    for (size_t o = 0; o < out_features; ++o) {
      float acc = 0.0f;
      for (size_t k = 0; k < in; ++k) acc += x[b * in + k] * w[o * in + k];
      y[b * out_features + o] = acc + bias[o];
    }
  }
}

/* The cascade over terms begin .. begin + n - 1 of one dot product. */
static float cascade(const float* x, const float* w, size_t n) {
  if (n == 1) return x[0] * w[0];
  size_t left = 1;
  while (left * 2 < n) left *= 2;
  return cascade(x, w, left) + cascade(x + left, w + left, n - left);
}

static void pairwise(const void* const* operands, void* out, const size_t* extents,
                     size_t rank) {
  const float* x = operands[0];
  const float* w = operands[1];
  const float* bias = operands[2];
  float* y = out;
  const size_t batch = extents[0], in = extents[1], out_features = extents[2];
  (void)rank;
  for (size_t b = 0; b < batch; ++b) {
    for (size_t o = 0; o < out_features; ++o) {
      const float dot = in == 0 ? 0.0f : cascade(x + b * in, w + o * in, in);
      y[b * out_features + o] = dot + bias[o];
    }
  }
}

#ifdef LINEAR_FAULTS
static void crash(const void* const* operands, void* out, const size_t* extents, size_t rank) {
  if (extents[1] > 8) {
    volatile float* nowhere = NULL;
    *nowhere = 1.0f;
  }
  sequential(operands, out, extents, rank);
}

static void overrun(const void* const* operands, void* out, const size_t* extents, size_t rank) {
  sequential(operands, out, extents, rank);
  ((float*)out)[extents[0] * extents[2]] = 0.0f;
}
#endif

static const ulpgate_plugin_v4_reduction reductions[] = {
    {.op = "linear_fwd", .variant = "sequential", .dtype = "f32", .model = "sequential_unfused",
     .fn = sequential},
    {.op = "linear_fwd", .variant = "pairwise", .dtype = "f32", .model = "pairwise", .fn = pairwise},
#ifdef LINEAR_FAULTS
    {.op = "linear_fwd", .variant = "crash", .dtype = "f32", .model = "sequential_unfused", .fn = crash},
    {.op = "linear_fwd", .variant = "overrun", .dtype = "f32", .model = "sequential_unfused",
     .fn = overrun},
    {.op = "linear_fwd", .variant = "mislabeled", .dtype = "f32", .model = "sequential_fused",
     .fn = sequential},
#endif
#ifdef BROKEN_V4_OP
    {.op = "no_such_reduction", .variant = "nope", .dtype = "f32", .model = NULL, .fn = sequential},
#endif
#ifdef BROKEN_V4_MODEL
    {.op = "linear_fwd", .variant = "nope", .dtype = "f32", .model = "sequential_sideways",
     .fn = sequential},
#endif
};

static const ulpgate_plugin_v4 plugin = {ULPGATE_PLUGIN_V4_ABI_VERSION, PLUGIN_NAME,
                                         sizeof reductions / sizeof reductions[0], reductions};

const ulpgate_plugin_v4* ulpgate_plugin_v4_entry(void) { return &plugin; }
