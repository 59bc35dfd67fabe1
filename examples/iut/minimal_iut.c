/* A complete implementation-under-test process in one page of C
 * (docs/iut.md): it serves one kernel, sigmoid_bwd in f32 as
 * grad*s - (grad*s)*s, under the target name "mine", variant "fms". An
 * accelerator team's IUT is this loop with the call replaced by a copy to
 * the device, the kernel, and a copy back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void kernel(const float* grad, const float* s, float* out, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    const float p = grad[i] * s[i];
    out[i] = p - p * s[i];
  }
}

int main(void) {
  printf("ulpgate-iut 1\nkernel mine sigmoid_bwd f32 fms\nready\n");
  fflush(stdout);
  char line[512], op[64], dtype[16], target[64], variant[64];
  unsigned arity;
  unsigned long long n;
  while (fgets(line, sizeof line, stdin) != NULL) {
    if (strncmp(line, "quit", 4) == 0) return 0;
    if (sscanf(line, "call %63s %15s %63s %63s %u %llu", op, dtype, target, variant, &arity, &n) != 6 ||
        arity != 2) {
      printf("error malformed request\n");
      return 2;
    }
    float* in = malloc(sizeof(float) * 2 * (n ? n : 1));
    float* out = malloc(sizeof(float) * (n ? n : 1));
    if (in == NULL || out == NULL || fread(in, sizeof(float), 2 * n, stdin) != 2 * n) return 2;
    if (strcmp(op, "sigmoid_bwd") != 0 || strcmp(dtype, "f32") != 0 || strcmp(target, "mine") != 0 ||
        strcmp(variant, "fms") != 0) {
      printf("error no kernel %s %s %s %s here\n", op, dtype, target, variant);
    } else {
      kernel(in, in + n, out, n);
      printf("ok %llu\n", n);
      fwrite(out, sizeof(float), n, stdout);
    }
    fflush(stdout);
    free(in);
    free(out);
  }
  return 0;
}
