/* An implementation-under-test process over any BLAS (docs/iut.md, protocol
 * version 3): it loads a BLAS shared library by path and serves linear_fwd
 * in f32, y = x w^T + b, as variant "sgemm" of the target it is named
 * (default "blas"):
 *
 *   blas_iut [--target NAME] LIBBLAS.so
 *   ulpgate run --op linear_fwd --variant none \
 *       --iut "build/bin/blas_iut /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
 *
 * The product is the library's cblas_sgemm (row-major, w transposed), or its
 * Fortran sgemm_ (column-major: y^T = w x^T) where it has no CBLAS, with
 * alpha 1 and beta 0; the bias is then added here, once per output, so that
 * what is measured is the library's order of the dot products and the op's
 * definition (the bias after the sum) holds. Threads: the library's own
 * variables (OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS, OMP_NUM_THREADS), read
 * when the library loads; the IUT claims no model, so ulpgate's reports name
 * the ones its outputs follow. Data travels on the pipes (no shared memory).
 * Build with -ffp-contract=off: the bias's addition must round once. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*cblas_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                               const float* a, int lda, const float* b, int ldb, float beta, float* c,
                               int ldc);
/* gfortran's convention: the lengths of the two character arguments last. */
typedef void (*fortran_sgemm_fn)(const char* trans_a, const char* trans_b, const int* m, const int* n,
                                 const int* k, const float* alpha, const float* a, const int* lda,
                                 const float* b, const int* ldb, const float* beta, float* c,
                                 const int* ldc, size_t trans_a_length, size_t trans_b_length);

enum { kRowMajor = 101, kNoTrans = 111, kTrans = 112 };

static cblas_sgemm_fn cblas_sgemm;
static fortran_sgemm_fn sgemm;

/* y [batch, out] = x [batch, in] w [out, in]^T, then + b [out]. */
static void linear_fwd(const float* x, const float* w, const float* b, float* y, int batch, int in,
                       int out) {
  const float one = 1.0f, zero = 0.0f;
  if (cblas_sgemm != NULL) {
    cblas_sgemm(kRowMajor, kNoTrans, kTrans, batch, out, in, one, x, in, w, in, zero, y, out);
  } else {
    /* Column-major, the same memory: y^T [out, batch] = w [out, in] x^T. */
    sgemm("T", "N", &out, &batch, &in, &one, w, &in, x, &in, &zero, y, &out, 1, 1);
  }
  for (int i = 0; i < batch; ++i) {
    for (int o = 0; o < out; ++o) y[(size_t)i * (size_t)out + (size_t)o] += b[o];
  }
}

static int read_all(void* data, size_t bytes) { return fread(data, 1, bytes, stdin) == bytes; }

/* Element bytes of a dtype the protocol carries; 0 for another. */
static size_t element_bytes(const char* dtype) {
  if (strcmp(dtype, "f32") == 0) return 4;
  if (strcmp(dtype, "bf16") == 0 || strcmp(dtype, "f16") == 0) return 2;
  return 0;
}

/* Reads and drops `bytes` of operands: a refused call keeps the stream in step. */
static int skip(unsigned long long bytes) {
  char buffer[1 << 16];
  while (bytes > 0) {
    const size_t n = bytes < sizeof buffer ? (size_t)bytes : sizeof buffer;
    if (!read_all(buffer, n)) return 0;
    bytes -= n;
  }
  return 1;
}

int main(int argc, char** argv) {
  const char* target = "blas";
  const char* path = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) {
      target = argv[++i];
    } else if (path == NULL && argv[i][0] != '-') {
      path = argv[i];
    } else {
      fprintf(stderr, "usage: blas_iut [--target NAME] LIBBLAS.so\n");
      return 2;
    }
  }
  if (path == NULL) {
    fprintf(stderr, "usage: blas_iut [--target NAME] LIBBLAS.so\n");
    return 2;
  }
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "blas_iut: cannot load %s: %s\n", path, dlerror());
    return 2;
  }
  cblas_sgemm = (cblas_sgemm_fn)dlsym(library, "cblas_sgemm");
  if (cblas_sgemm == NULL) sgemm = (fortran_sgemm_fn)dlsym(library, "sgemm_");
  if (cblas_sgemm == NULL && sgemm == NULL) {
    fprintf(stderr, "blas_iut: %s has neither cblas_sgemm nor sgemm_\n", path);
    return 2;
  }
  if (getenv("BLAS_IUT_FORTRAN") != NULL) {
    /* The Fortran entry even where CBLAS is there (a test of that path). */
    sgemm = (fortran_sgemm_fn)dlsym(library, "sgemm_");
    if (sgemm != NULL) cblas_sgemm = NULL;
  }
  printf("ulpgate-iut 3\nkernel %s linear_fwd f32 sgemm\nready\n", target);
  fflush(stdout);
  char line[1024];
  while (fgets(line, sizeof line, stdin) != NULL) {
    if (strncmp(line, "quit", 4) == 0) return 0;
    char op[64], dtype[32], to[128], variant[128];
    int used = 0;
    if (strncmp(line, "call ", 5) == 0) {
      /* An elementwise call: its operands read, then refused. */
      unsigned arity = 0;
      unsigned long long n = 0;
      if (sscanf(line, "call %63s %31s %127s %127s %u %llu", op, dtype, to, variant, &arity, &n) != 6 ||
          element_bytes(dtype) == 0 || !skip(arity * n * element_bytes(dtype))) {
        return 2;
      }
      printf("error blas_iut serves linear_fwd f32 only\n");
      fflush(stdout);
      continue;
    }
    unsigned long long rank = 0, e[8] = {0}, arity = 0, count[8] = {0}, outputs = 0;
    const char* p = line;
    if (sscanf(p, "reduce %63s %31s %127s %127s %llu%n", op, dtype, to, variant, &rank, &used) != 5 ||
        rank < 1 || rank > 8) {
      printf("error malformed request\n");
      return 2;
    }
    p += used;
    for (unsigned long long i = 0; i < rank; ++i, p += used) {
      if (sscanf(p, "%llu%n", &e[i], &used) != 1) return 2;
    }
    if (sscanf(p, "%llu%n", &arity, &used) != 1 || arity < 1 || arity > 8) return 2;
    p += used;
    unsigned long long total = 0;
    for (unsigned long long i = 0; i < arity; ++i, p += used) {
      if (sscanf(p, "%llu%n", &count[i], &used) != 1) return 2;
      total += count[i];
    }
    if (sscanf(p, "%llu", &outputs) != 1 || element_bytes(dtype) == 0) return 2;
    const int ours = strcmp(op, "linear_fwd") == 0 && strcmp(dtype, "f32") == 0 &&
                     strcmp(to, target) == 0 && strcmp(variant, "sgemm") == 0 && rank == 3 && arity == 3;
    const int fits = ours && e[0] <= INT_MAX && e[1] <= INT_MAX && e[2] <= INT_MAX &&
                     count[0] == e[0] * e[1] && count[1] == e[2] * e[1] && count[2] == e[2] &&
                     outputs == e[0] * e[2];
    if (!fits) {
      if (!skip(total * element_bytes(dtype))) return 2;
      printf("error no kernel %s %s %s %s of that shape here (blas_iut: linear_fwd f32 %s sgemm)\n", op, dtype,
             to, variant, target);
      fflush(stdout);
      continue;
    }
    float* x = malloc(sizeof(float) * (count[0] ? count[0] : 1));
    float* w = malloc(sizeof(float) * (count[1] ? count[1] : 1));
    float* b = malloc(sizeof(float) * (count[2] ? count[2] : 1));
    float* y = malloc(sizeof(float) * (outputs ? outputs : 1));
    if (x == NULL || w == NULL || b == NULL || y == NULL || !read_all(x, 4 * count[0]) ||
        !read_all(w, 4 * count[1]) || !read_all(b, 4 * count[2])) {
      return 2;
    }
    linear_fwd(x, w, b, y, (int)e[0], (int)e[1], (int)e[2]);
    printf("ok %llu\n", outputs);
    fwrite(y, sizeof(float), outputs, stdout);
    fflush(stdout);
    free(x);
    free(w);
    free(b);
    free(y);
  }
  return 0;
}
