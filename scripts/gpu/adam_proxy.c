/* adam_proxy.c -- PROXY for DeepSpeed's CPU Adam (DeepSpeedCPUAdam, Step_AVX):
 * our own single-pass fp32 AdamW over tiles, OpenMP across tiles, one read of
 * p, g, m, v and one write of p, m, v per element (28 bytes/element), the same
 * arithmetic as DeepSpeed's step (bias-corrected AdamW with decoupled weight
 * decay).  Written for this project; DeepSpeed is not installed on the GPU host,
 * so this is a proxy, not DeepSpeed's code.  Vectorised by the compiler
 * (-O3 -march=native, omp simd).  Usage: adam_proxy N_ELEMENTS THREADS... */
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void adam_step(float *restrict p, const float *restrict g, float *restrict m, float *restrict v,
                      long n, int step, float lr, float b1, float b2, float eps, float wd) {
    const float bc1 = 1.0f - powf(b1, (float)step), bc2 = 1.0f - powf(b2, (float)step);
    const float step_size = -lr / bc1, inv_sqrt_bc2 = 1.0f / sqrtf(bc2), decay = 1.0f - lr * wd;
    const long tile = 1L << 20;  /* elements per tile, as DeepSpeed tiles its loop */
#pragma omp parallel for schedule(static)
    for (long t0 = 0; t0 < n; t0 += tile) {
        long t1 = t0 + tile < n ? t0 + tile : n;
#pragma omp simd
        for (long i = t0; i < t1; i++) {
            float gi = g[i], pi = p[i] * decay;
            float mi = b1 * m[i] + (1.0f - b1) * gi;
            float vi = b2 * v[i] + (1.0f - b2) * gi * gi;
            float den = sqrtf(vi) * inv_sqrt_bc2 + eps;
            p[i] = pi + step_size * mi / den;
            m[i] = mi; v[i] = vi;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: adam_proxy N THREADS...\n"); return 2; }
    long n = atol(argv[1]);
    float *p = aligned_alloc(64, n * 4), *g = aligned_alloc(64, n * 4), *m = aligned_alloc(64, n * 4), *v = aligned_alloc(64, n * 4);
    if (!p || !g || !m || !v) { fprintf(stderr, "adam_proxy: out of memory\n"); return 1; }
#pragma omp parallel for
    for (long i = 0; i < n; i++) { p[i] = 0.01f * (i % 97); g[i] = 1e-3f * (i % 13); m[i] = 0; v[i] = 0; }
    printf("[\n");
    for (int a = 2; a < argc; a++) {
        int th = atoi(argv[a]);
        omp_set_num_threads(th);
        adam_step(p, g, m, v, n, 1, 1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f);
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            double t = now_s();
            adam_step(p, g, m, v, n, r + 2, 1e-4f, 0.9f, 0.999f, 1e-8f, 0.01f);
            t = now_s() - t; if (t < best) best = t;
        }
        printf("  {\"impl\": \"PROXY for DeepSpeed CPU Adam: own single-pass C fp32 AdamW, OpenMP tiles, compiler-vectorised\", "
               "\"threads\": %d, \"elements\": %ld, \"step_s_min\": %.6f, \"ns_per_element\": %.4f, "
               "\"effective_GBps_at_28B_per_element\": %.2f}%s\n",
               th, n, best, best / n * 1e9, n * 28.0 / best / 1e9, a + 1 < argc ? "," : "");
        fprintf(stderr, "adam_proxy threads=%2d %.4f ns/el %.1f GB/s@28B checksum %g\n", th, best / n * 1e9, n * 28.0 / best / 1e9, (double)p[n / 2]);
    }
    printf("]\n");
    return 0;
}
