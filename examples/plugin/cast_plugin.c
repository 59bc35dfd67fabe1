/* A version 3 plugin (ulpgate/plugin.h): casts from f32 to float8_e4m3fn in
 * plain C, as a user's library would bring them.
 *
 *   rne        rounds to nearest, ties to even, saturating to 448 (OCP's
 *              satfinite): follows the policy it claims, nearest_even.saturate.
 *   ties_away  the same code with the planted defect of rounding ties away
 *              from zero (C's round() where nearbyint() belongs), claiming
 *              nearest_even.saturate all the same: ulpgate names the policy
 *              it follows, nearest_away.saturate, and fails its claim.
 *   crash      rne, but it dereferences null on a source whose low byte is
 *              0x5a: run through the IUT, its case is a CRASHED fault.
 *
 * E4M3FN: bias 7, 3 mantissa bits, smallest normal 2^-6, subnormals in steps
 * of 2^-9, largest 448 (0x7e), NaN 0x7f with the sign bit, no infinity.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ulpgate/plugin.h>

#ifndef PLUGIN_NAME
#define PLUGIN_NAME "cast_example"
#endif

static uint8_t ToE4M3(float x, int ties_away) {
  const uint8_t sign = signbit(x) ? 0x80 : 0;
  if (isnan(x)) return (uint8_t)(sign | 0x7f);
  const double a = fabs((double)x);
  if (a > 448.0) return (uint8_t)(sign | 0x7e); /* saturate, infinity too */
  int e;
  frexp(a, &e); /* a = f * 2^e, f in [0.5, 1): the leading bit is 2^(e-1) */
  const int lead = a == 0 ? -6 : (e - 1 < -6 ? -6 : e - 1);
  const double quantum = ldexp(1.0, lead - 3);
  const double steps = a / quantum; /* exact: a has 24 bits, quantum a power of 2 */
  const double rounded = ties_away ? round(steps) : nearbyint(steps);
  const double value = rounded * quantum;
  if (value == 0) return sign;
  if (value < ldexp(1.0, -6)) return (uint8_t)(sign | (uint8_t)(value / ldexp(1.0, -9)));
  frexp(value, &e);
  const int exponent = e - 1;
  const int mantissa = (int)((value / ldexp(1.0, exponent) - 1.0) * 8.0);
  return (uint8_t)(sign | ((exponent + 7) << 3) | mantissa);
}

static void Rne(const void* in, void* out, size_t n) {
  const float* x = (const float*)in;
  uint8_t* code = (uint8_t*)out;
  for (size_t i = 0; i < n; ++i) code[i] = ToE4M3(x[i], 0);
}

static void TiesAway(const void* in, void* out, size_t n) {
  const float* x = (const float*)in;
  uint8_t* code = (uint8_t*)out;
  for (size_t i = 0; i < n; ++i) code[i] = ToE4M3(x[i], 1);
}

static void Crash(const void* in, void* out, size_t n) {
  const float* x = (const float*)in;
  uint8_t* code = (uint8_t*)out;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    memcpy(&bits, &x[i], sizeof bits);
    if ((bits & 0xff) == 0x5a) {
      volatile uint8_t* null_code = NULL;
      *null_code = 0;
    }
    code[i] = ToE4M3(x[i], 0);
  }
}

/* Broken on purpose for the loader's tests: a destination that is no format,
 * a policy that is none of the cast model's, one that does not apply
 * (E4M3FN has no infinity). */
#if defined(BROKEN_V3_DESTINATION)
#define RNE_TO "float7_e3m3"
#else
#define RNE_TO "float8_e4m3fn"
#endif
#if defined(BROKEN_V3_POLICY)
#define RNE_POLICY "nearest_even.sometimes"
#elif defined(BROKEN_V3_INAPPLICABLE)
#define RNE_POLICY "nearest_even.infinity"
#else
#define RNE_POLICY "nearest_even.saturate"
#endif

static const ulpgate_plugin_v3_cast casts[] = {
    {.variant = "rne", .from = "f32", .to = RNE_TO, .policy = RNE_POLICY, .fn = Rne},
    {.variant = "ties_away", .from = "f32", .to = "float8_e4m3fn", .policy = "nearest_even.saturate",
     .fn = TiesAway},
    {.variant = "crash", .from = "f32", .to = "float8_e4m3fn", .policy = "nearest_even.saturate", .fn = Crash},
};

static const ulpgate_plugin_v3 plugin = {ULPGATE_PLUGIN_V3_ABI_VERSION, PLUGIN_NAME,
                                         sizeof(casts) / sizeof(casts[0]), casts};

const ulpgate_plugin_v3* ulpgate_plugin_v3_entry(void) { return &plugin; }
