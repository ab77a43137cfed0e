/* The C ABI (include/blockfp8.h) on the CPU backend, where host pointers are device pointers:
 * quantization, the three ways to make a weight, GEMM in every output dtype and both scale
 * layouts against a double-precision reference computed here, the host fnuz conversion, and
 * bad input (status, message, nothing written). Prints "N passed, M failed"; exits 1 on any
 * failure. Built and run by capi/tests/c_program.rs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blockfp8.h"

static int passed = 0, failed = 0;

#define CHECK(cond, ...)                                                                   \
    do {                                                                                   \
        if (cond) {                                                                        \
            passed++;                                                                      \
        } else {                                                                           \
            failed++;                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                \
            fprintf(stderr, __VA_ARGS__);                                                  \
            fprintf(stderr, " (last error: %s)\n", blockfp8_last_error());                 \
        }                                                                                  \
    } while (0)

#define OK(call) CHECK((call) == BLOCKFP8_OK, "%s", #call)

/* Exact fp8 decode, independent of the library: bias 7 (e4m3fn) or 8 (e4m3fnuz). */
static double decode_fp8(uint8_t b, int fnuz) {
    int bias = fnuz ? 8 : 7;
    if (fnuz ? b == 0x80 : (b & 0x7f) == 0x7f) return NAN;
    int e = (b >> 3) & 0xf, man = b & 7;
    double mag = e == 0 ? ldexp(man / 8.0, 1 - bias) : ldexp(1.0 + man / 8.0, e - bias);
    return (b & 0x80) ? -mag : mag;
}

static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static float f16_to_f32(uint16_t h) {
    int e = (h >> 10) & 0x1f, man = h & 0x3ff;
    double mag = e == 0 ? ldexp(man, -24) : e == 31 ? (man ? NAN : INFINITY) : ldexp(1024 + man, e - 25);
    return (float)((h & 0x8000) ? -mag : mag);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float uniform(void) { /* in [-1, 1) */
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((rng >> 40) / (double)(1ull << 24) * 2.0 - 1.0);
}

/* C[m, n] in double from the quantized inputs, row-major activation scales [M, G]. */
static void reference(const uint8_t *a, const float *as, const uint8_t *b, const float *bs, size_t m,
                      size_t n, size_t k, int fnuz, double *c) {
    size_t g = (k + 127) / 128;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t kk = 0; kk < k; kk++)
                acc += decode_fp8(a[i * k + kk], fnuz) * as[i * g + kk / 128] *
                       decode_fp8(b[j * k + kk], fnuz) * bs[(j / 128) * g + kk / 128];
            c[i * n + j] = acc;
        }
}

/* calc_diff (DeepGEMM's measure): 1 - 2<x,y>/(<x,x>+<y,y>). */
static double calc_diff(const double *x, const float *y, size_t len) {
    double xy = 0, xx = 0, yy = 0;
    for (size_t i = 0; i < len; i++) {
        xy += x[i] * y[i];
        xx += x[i] * x[i];
        yy += (double)y[i] * y[i];
    }
    return 1 - 2 * xy / (xx + yy);
}

static void test_versions(void) {
    CHECK(blockfp8_abi_version() == BLOCKFP8_ABI_VERSION, "library ABI %u, header %d", blockfp8_abi_version(), BLOCKFP8_ABI_VERSION);
    CHECK(strncmp(blockfp8_version(), "0.", 2) == 0 && strstr(blockfp8_version(), "cpu"), "version %s", blockfp8_version());
    CHECK(blockfp8_backend_compiled(BLOCKFP8_BACKEND_CPU) == 1, "cpu compiled");
    CHECK(blockfp8_backend_compiled(42) == 0, "unknown backend");
    CHECK(strcmp(blockfp8_status_name(BLOCKFP8_ERR_MISALIGNED), "BLOCKFP8_ERR_MISALIGNED") == 0, "status name");
}

/* One product M x N x K in the given flavour through every weight kind, dtype and layout. */
static void test_gemm(blockfp8_context *ctx, size_t m, size_t n, size_t k, int fnuz) {
    int fmt = fnuz ? BLOCKFP8_FP8_E4M3FNUZ : BLOCKFP8_FP8_E4M3FN;
    double fmax = fnuz ? 240.0 : 448.0;
    size_t g = (k + 127) / 128, nb = (n + 127) / 128, pm = (m + 3) / 4 * 4;
    float *x = malloc(m * k * 4), *w = malloc(n * k * 4);
    for (size_t i = 0; i < m * k; i++) x[i] = uniform() * 3.0f;
    for (size_t i = 0; i < n * k; i++) w[i] = uniform() * 0.05f;
    x[0] = 0; /* an exact zero stays zero */

    /* Weight quantization: one scale per 128x128 block = block amax / finite max. */
    uint8_t *wq = malloc(n * k);
    float *ws = malloc(nb * g * 4);
    OK(blockfp8_quantize_weight(ctx, 0, w, BLOCKFP8_DTYPE_F32, n, k, fmt, wq, ws));
    int scale_ok = 1, deq_ok = 1;
    for (size_t bi = 0; bi < nb; bi++)
        for (size_t bk = 0; bk < g; bk++) {
            double amax = 0;
            for (size_t r = bi * 128; r < n && r < bi * 128 + 128; r++)
                for (size_t c = bk * 128; c < k && c < bk * 128 + 128; c++) amax = fabs(w[r * k + c]) > amax ? fabs(w[r * k + c]) : amax;
            if (ws[bi * g + bk] != (float)((float)amax / (float)fmax)) scale_ok = 0;
        }
    for (size_t i = 0; i < n * k; i++) {
        double s = ws[(i / k / 128) * g + (i % k) / 128], d = decode_fp8(wq[i], fnuz) * s;
        if (!(fabs(d - w[i]) <= fabs(w[i]) / 16 + s * 0.002)) deq_ok = 0;
    }
    CHECK(scale_ok, "weight scales are block amax / %g", fmax);
    CHECK(deq_ok, "dequantized weight within fp8 rounding of w");

    /* Activation quantization, both layouts, vLLM's fp8 max. */
    uint8_t *aq = malloc(m * k), *aq2 = malloc(m * k);
    float *as = malloc(m * g * 4), *asc = malloc(pm * g * 4);
    OK(blockfp8_quantize_tokens(ctx, 0, x, BLOCKFP8_DTYPE_F32, m, k, 128, fmt, (float)fmax, BLOCKFP8_LAYOUT_ROW_MAJOR, 0, aq, as, m * g));
    for (size_t i = 0; i < pm * g; i++) asc[i] = -1.0f;
    OK(blockfp8_quantize_tokens(ctx, 0, x, BLOCKFP8_DTYPE_F32, m, k, 128, fmt, (float)fmax, BLOCKFP8_LAYOUT_COLUMN_MAJOR, 0, aq2, asc, pm * g));
    CHECK(memcmp(aq, aq2, m * k) == 0, "fp8 bytes do not depend on the scale layout");
    int col_ok = 1, amax_ok = 1;
    for (size_t i = 0; i < m; i++)
        for (size_t gg = 0; gg < g; gg++) {
            if (asc[gg * pm + i] != as[i * g + gg]) col_ok = 0;
            double amax = 0;
            for (size_t c = gg * 128; c < k && c < gg * 128 + 128; c++) amax = fabs(x[i * k + c]) > amax ? fabs(x[i * k + c]) : amax;
            if (as[i * g + gg] != (float)((float)amax / (float)fmax)) amax_ok = 0;
        }
    for (size_t i = m; i < pm; i++)
        for (size_t gg = 0; gg < g; gg++)
            if (asc[gg * pm + i] != 0.0f) col_ok = 0;
    CHECK(col_ok, "column-major scales are the row-major ones transposed, padding rows 0");
    CHECK(amax_ok, "activation scales are group amax / %g", fmax);
    CHECK(aq[0] == 0, "zero encodes to 0x00");

    double *ref = malloc(m * n * sizeof(double));
    reference(aq, as, wq, ws, m, n, k, fnuz, ref);

    blockfp8_weight *weights[3] = {0};
    OK(blockfp8_weight_prepare_host(ctx, 0, wq, ws, n, k, 128, 128, fmt, &weights[0]));
    OK(blockfp8_weight_prepare(ctx, 0, wq, ws, n, k, 128, 128, fmt, &weights[1]));
    OK(blockfp8_weight_borrow(ctx, 0, wq, ws, n, k, 128, 128, fmt, &weights[2]));
    blockfp8_weight_info info;
    OK(blockfp8_weight_get_info(weights[2], &info));
    CHECK(info.n == n && info.k == k && info.block_n == 128 && info.block_k == 128 && info.fp8_format == fmt && info.borrowed == 1, "weight info");
    OK(blockfp8_weight_get_info(weights[1], &info));
    CHECK(info.borrowed == 0, "a prepared weight is a copy");

    float *c32 = malloc(m * n * 4), *first = malloc(m * n * 4);
    uint16_t *c16 = malloc(m * n * 2);
    for (int wi = 0; wi < 3; wi++)
        for (int layout = 0; layout < 2; layout++) {
            const float *s = layout ? asc : as;
            OK(blockfp8_gemm(ctx, 0, aq, s, layout, weights[wi], c32, BLOCKFP8_DTYPE_F32, m, n, k));
            double d = calc_diff(ref, c32, m * n);
            CHECK(d < 1e-6, "calc_diff %g (M=%zu N=%zu K=%zu weight %d layout %d)", d, m, n, k, wi, layout);
            if (wi == 0 && layout == 0) memcpy(first, c32, m * n * 4);
            CHECK(memcmp(first, c32, m * n * 4) == 0, "bit-identical across weight kinds and layouts (weight %d layout %d)", wi, layout);
            /* bf16 and f16 are the f32 result rounded (to nearest even). */
            OK(blockfp8_gemm(ctx, 0, aq, s, layout, weights[wi], c16, BLOCKFP8_DTYPE_BF16, m, n, k));
            int bf_ok = 1;
            for (size_t i = 0; i < m * n; i++) {
                float v = bf16_to_f32(c16[i]);
                if (fabsf(v - first[i]) > fabsf(first[i]) / 256) bf_ok = 0;
            }
            CHECK(bf_ok, "bf16 output is the f32 result rounded");
            OK(blockfp8_gemm(ctx, 0, aq, s, layout, weights[wi], c16, BLOCKFP8_DTYPE_F16, m, n, k));
            int h_ok = 1;
            for (size_t i = 0; i < m * n; i++) {
                float v = f16_to_f32(c16[i]);
                if (fabsf(v - first[i]) > fabsf(first[i]) / 1024 + 6e-8f) h_ok = 0;
            }
            CHECK(h_ok, "f16 output is the f32 result rounded");
        }
    OK(blockfp8_gemm_reserve(ctx, 0, weights[0], BLOCKFP8_LAYOUT_ROW_MAJOR, BLOCKFP8_DTYPE_F32, 4096));

    /* Bad input: a status, a message, and nothing written. */
    for (size_t i = 0; i < m * n; i++) c32[i] = 12345.0f;
    int st = blockfp8_gemm(ctx, 0, aq, as, 0, weights[0], c32, BLOCKFP8_DTYPE_F32, m, n + 1, k);
    CHECK(st == BLOCKFP8_ERR_SHAPE && strstr(blockfp8_last_error(), "N="), "N mismatch: %d", st);
    st = blockfp8_gemm(ctx, 0, aq, as, 7, weights[0], c32, BLOCKFP8_DTYPE_F32, m, n, k);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT && strstr(blockfp8_last_error(), "layout"), "bad layout: %d", st);
    st = blockfp8_gemm(ctx, 0, aq, as, 0, weights[0], c32, 9, m, n, k);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT && strstr(blockfp8_last_error(), "dtype"), "bad dtype: %d", st);
    st = blockfp8_gemm(ctx, 0, NULL, as, 0, weights[0], c32, BLOCKFP8_DTYPE_F32, m, n, k);
    CHECK(st == BLOCKFP8_ERR_NULL_POINTER && strstr(blockfp8_last_error(), "A"), "null A: %d", st);
    st = blockfp8_gemm(ctx, 0, aq, as, 0, NULL, c32, BLOCKFP8_DTYPE_F32, m, n, k);
    CHECK(st == BLOCKFP8_ERR_NULL_POINTER, "null weight: %d", st);
    st = blockfp8_gemm(ctx, 0, aq, as, 0, weights[0], c32, BLOCKFP8_DTYPE_F32, 0, n, k);
    CHECK(st == BLOCKFP8_ERR_SHAPE, "M = 0: %d", st);
    int untouched = 1;
    for (size_t i = 0; i < m * n; i++)
        if (c32[i] != 12345.0f) untouched = 0;
    CHECK(untouched, "failed calls wrote nothing");
    st = blockfp8_quantize_tokens(ctx, 0, x, BLOCKFP8_DTYPE_F32, m, k, 128, fmt, 0, BLOCKFP8_LAYOUT_COLUMN_MAJOR, 0, aq2, asc, m * g + (pm == m ? 1 : 0));
    CHECK(st == BLOCKFP8_ERR_SHAPE && strstr(blockfp8_last_error(), "scale output"), "short column-major scales: %d", st);
    st = blockfp8_quantize_tokens(ctx, 0, x, BLOCKFP8_DTYPE_F32, m, k, 128, fmt, 1000.0f, BLOCKFP8_LAYOUT_ROW_MAJOR, 0, aq2, as, m * g);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT, "fp8 max above the flavour's: %d", st);
    blockfp8_weight *bad = (blockfp8_weight *)&st;
    st = blockfp8_weight_prepare_host(ctx, 0, wq, ws, n, k, 128, 128, fmt + 5, &bad);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT && bad == NULL, "bad format code: %d, out cleared", st);
    st = blockfp8_weight_prepare_host(ctx, 0, wq, ws, n, k, 0, 128, fmt, &bad);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT, "zero block side: %d", st);
    float saved = ws[0];
    ws[0] = NAN;
    st = blockfp8_weight_prepare_host(ctx, 0, wq, ws, n, k, 128, 128, fmt, &bad);
    CHECK(st == BLOCKFP8_ERR_NON_FINITE, "NaN weight scale: %d", st);
    ws[0] = saved;

    for (int wi = 0; wi < 3; wi++) blockfp8_weight_destroy(weights[wi]);
    free(x); free(w); free(wq); free(ws); free(aq); free(aq2); free(as); free(asc);
    free(ref); free(c32); free(first); free(c16);
}

/* bf16 inputs quantize like their f32 values. */
static void test_bf16_input(blockfp8_context *ctx) {
    size_t m = 3, k = 200, g = 2;
    uint16_t xb[600];
    float xf[600];
    for (size_t i = 0; i < m * k; i++) {
        float v = uniform() * 10;
        uint32_t u;
        memcpy(&u, &v, 4);
        xb[i] = (uint16_t)(u >> 16); /* truncation: any bf16 value serves */
        xf[i] = bf16_to_f32(xb[i]);
    }
    uint8_t q1[600], q2[600];
    float s1[6], s2[6];
    OK(blockfp8_quantize_tokens(ctx, 0, xb, BLOCKFP8_DTYPE_BF16, m, k, 128, BLOCKFP8_FP8_E4M3FN, 0, 0, 1, q1, s1, m * g));
    OK(blockfp8_quantize_tokens(ctx, 0, xf, BLOCKFP8_DTYPE_F32, m, k, 128, BLOCKFP8_FP8_E4M3FN, 0, 0, 1, q2, s2, m * g));
    CHECK(memcmp(q1, q2, sizeof q1) == 0 && memcmp(s1, s2, sizeof s1) == 0, "bf16 and f32 inputs agree");
    int pow2 = 1;
    for (size_t i = 0; i < m * g; i++) {
        int e;
        if (frexpf(s1[i], &e) != 0.5f) pow2 = 0;
    }
    CHECK(pow2, "ue8m0 scales are powers of two");
}

static void test_fnuz_conversion(void) {
    uint8_t q[256], q2[256];
    float s[2] = {0.5f, 3e-3f}, s2[2];
    for (int i = 0; i < 256; i++) q[i] = (uint8_t)i;
    memcpy(q2, q, 256);
    memcpy(s2, s, 8);
    OK(blockfp8_convert_e4m3fn_to_fnuz_host(q2, 256, s2, 2));
    int same = 1;
    for (int i = 0; i < 256; i++) {
        if (i == 0x7f || i == 0xff) continue; /* e4m3fn NaN: not in checkpoints */
        double before = decode_fp8(q[i], 0) * s[i / 128], after = decode_fp8(q2[i], 1) * s2[i / 128];
        if (before != after) same = 0;
    }
    CHECK(same && q2[0x80] == 0, "fnuz conversion keeps every dequantized value");
    float big[1] = {3e38f};
    uint8_t b1[1] = {0x80};
    int st = blockfp8_convert_e4m3fn_to_fnuz_host(b1, 1, big, 1);
    CHECK(st == BLOCKFP8_ERR_NON_FINITE && b1[0] == 0x80 && big[0] == 3e38f, "overflowing scale: %d, nothing changed", st);
}

int main(void) {
    test_versions();
    blockfp8_context *ctx = NULL;
    int st = blockfp8_context_open(7, 0, &ctx);
    CHECK(st == BLOCKFP8_ERR_INVALID_ARGUMENT && ctx == NULL, "unknown backend code: %d", st);
    if (!blockfp8_backend_compiled(BLOCKFP8_BACKEND_CUDA)) {
        st = blockfp8_context_open(BLOCKFP8_BACKEND_CUDA, 0, &ctx);
        CHECK(st == BLOCKFP8_ERR_BACKEND_UNAVAILABLE && strstr(blockfp8_last_error(), "cuda"), "cuda not compiled: %d", st);
    }
    OK(blockfp8_context_open(BLOCKFP8_BACKEND_CPU, 0, &ctx));
    if (!ctx) return 1;
    blockfp8_device_info info;
    OK(blockfp8_context_info(ctx, &info));
    CHECK(info.backend == BLOCKFP8_BACKEND_CPU && info.fp8_format == BLOCKFP8_FP8_E4M3FN && info.compute_units >= 1 && strlen(info.name) > 0 && strlen(info.config_name) > 0, "device info");
    char path[64];
    size_t needed = 0;
    OK(blockfp8_gemm_path(ctx, 16, 256, 512, 128, 128, BLOCKFP8_FP8_E4M3FN, BLOCKFP8_DTYPE_BF16, path, sizeof path, &needed));
    CHECK(strcmp(path, "kernel default") == 0 && needed == strlen(path) + 1, "cpu path without a tuned file: %s", path);
    char tiny[4];
    OK(blockfp8_gemm_path(ctx, 16, 256, 512, 128, 128, BLOCKFP8_FP8_E4M3FN, BLOCKFP8_DTYPE_BF16, tiny, sizeof tiny, &needed));
    CHECK(strcmp(tiny, "ker") == 0 && needed == strlen("kernel default") + 1, "truncated path: %s", tiny);
    blockfp8_context *best = NULL;
    OK(blockfp8_context_open_best(&best));
    blockfp8_device_info best_info;
    OK(blockfp8_context_info(best, &best_info));
    CHECK(blockfp8_backend_compiled(best_info.backend) == 1, "best context is a compiled backend");
    blockfp8_context_destroy(best);
    st = blockfp8_context_info(NULL, &best_info);
    CHECK(st == BLOCKFP8_ERR_NULL_POINTER && strstr(blockfp8_last_error(), "context"), "null context: %d", st);

    test_gemm(ctx, 5, 200, 300, 0);  /* ragged M, N and K */
    test_gemm(ctx, 8, 256, 256, 0);  /* whole blocks, M a multiple of 4 */
    test_gemm(ctx, 3, 129, 200, 1);  /* e4m3fnuz */
    test_bf16_input(ctx);
    test_fnuz_conversion();
    OK(blockfp8_synchronize(ctx, 0));
    blockfp8_context_destroy(ctx);
    blockfp8_context_destroy(NULL);
    blockfp8_weight_destroy(NULL);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
