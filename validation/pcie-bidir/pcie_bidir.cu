/*
 * pcie_bidir.cu — pinned host<->device copy rates of one GPU, each direction
 * alone and each while the opposite direction runs: the measurement behind
 * the profiles' bidir_h2d_factor / bidir_d2h_factor (docs/hw.md, PCIe).
 *
 * Method (the shape of nvbandwidth's host_to_device_bidirectional_memcpy_ce):
 * copy-engine copies (cudaMemcpyAsync) of N bytes between page-locked host
 * memory (cudaHostAlloc) and device memory, on their own streams.
 *   alone:     N bytes one way, timed with events on its stream.
 *   under:     the opposite direction starts a 3N-byte copy first, on another
 *              stream; the measured N-byte copy is timed while it runs (3N
 *              outlasts N unless the measured direction is < 1/3 as fast;
 *              the program checks and says so).
 * Each figure is the median of R repetitions.  Prints the factors
 * under / alone.  Build: nvcc -O2 -o pcie_bidir pcie_bidir.cu
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                  \
    do {                                                                       \
        cudaError_t e_ = (x);                                                  \
        if (e_ != cudaSuccess) {                                               \
            fprintf(stderr, "pcie_bidir: %s: %s\n", #x,                        \
                    cudaGetErrorString(e_));                                   \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One timed copy of n bytes in direction dir (0 H2D, 1 D2H); with under,
 * a 3n-byte copy the other way is started first on another stream.  Returns
 * bytes/s of the timed copy; *covered = 1 if the other copy was still
 * running when the timed one ended. */
static double timed(int dir, int under, size_t n, char *h, char *d, char *h2,
                    char *d2, cudaStream_t s1, cudaStream_t s2, int *covered)
{
    cudaEvent_t a, b, c;
    float ms = 0, ms_other = 0;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventCreate(&c));
    CK(cudaDeviceSynchronize());
    if (under) {
        cudaEvent_t o0;
        CK(cudaEventCreate(&o0));
        CK(cudaEventRecord(o0, s2));
        if (dir == 0)
            CK(cudaMemcpyAsync(h2, d2, 3 * n, cudaMemcpyDeviceToHost, s2));
        else
            CK(cudaMemcpyAsync(d2, h2, 3 * n, cudaMemcpyHostToDevice, s2));
        CK(cudaEventRecord(c, s2));
        CK(cudaStreamWaitEvent(s1, o0, 0));
        CK(cudaEventRecord(a, s1));
        if (dir == 0)
            CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s1));
        else
            CK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s1));
        CK(cudaEventRecord(b, s1));
        CK(cudaDeviceSynchronize());
        CK(cudaEventElapsedTime(&ms, a, b));
        CK(cudaEventElapsedTime(&ms_other, o0, c));
        *covered = ms_other > ms;
        CK(cudaEventDestroy(o0));
    } else {
        CK(cudaEventRecord(a, s1));
        if (dir == 0)
            CK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s1));
        else
            CK(cudaMemcpyAsync(h, d, n, cudaMemcpyDeviceToHost, s1));
        CK(cudaEventRecord(b, s1));
        CK(cudaDeviceSynchronize());
        CK(cudaEventElapsedTime(&ms, a, b));
        *covered = 1;
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    CK(cudaEventDestroy(c));
    return (double)n / (ms * 1e-3);
}

int main(int argc, char **argv)
{
    size_t n = (size_t)(argc > 1 ? atof(argv[1]) : 1073741824.0);
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    char *h, *h2, *d, *d2;
    cudaStream_t s1, s2;
    cudaDeviceProp p;
    double r[4];
    static const char *const label[4] = {"H2D alone", "H2D while D2H runs",
                                         "D2H alone", "D2H while H2D runs"};
    if (reps < 1 || reps > 100)
        reps = 9;
    CK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, pci %04x:%02x:%02x, copy engines %d\n", p.name,
           p.pciDomainID, p.pciBusID, p.pciDeviceID, p.asyncEngineCount);
    printf("copy %zu bytes, 3x that for the opposite copy, median of %d\n", n,
           reps);
    CK(cudaHostAlloc((void **)&h, n, cudaHostAllocDefault));
    CK(cudaHostAlloc((void **)&h2, 3 * n, cudaHostAllocDefault));
    CK(cudaMalloc((void **)&d, n));
    CK(cudaMalloc((void **)&d2, 3 * n));
    CK(cudaMemset(d, 1, n));
    CK(cudaMemset(d2, 2, 3 * n));
    for (size_t i = 0; i < n; i += 4096)
        h[i] = (char)i;
    for (size_t i = 0; i < 3 * n; i += 4096)
        h2[i] = (char)i;
    CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    for (int k = 0; k < 4; k++) {
        double v[100];
        int dir = k / 2, under = k % 2, all_covered = 1;
        (void)timed(dir, under, n, h, d, h2, d2, s1, s2, &all_covered);
        for (int i = 0; i < reps; i++) {
            int cov;
            v[i] = timed(dir, under, n, h, d, h2, d2, s1, s2, &cov);
            all_covered &= cov;
        }
        r[k] = median(v, reps);
        printf("%-20s %7.2f GB/s%s\n", label[k], r[k] / 1e9,
               all_covered ? "" : "  (opposite copy ended first in some runs)");
    }
    printf("bidir_h2d_factor %.3f\nbidir_d2h_factor %.3f\n", r[1] / r[0],
           r[3] / r[2]);
    return 0;
}
