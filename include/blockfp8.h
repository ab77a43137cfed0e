/*
 * blockfp8.h - C ABI of blockfp8: block-scaled W8A8 FP8 GEMM (DeepSeek-V3 style: 1x128
 * activation scales, 128x128 weight scales) and its quantizers, on raw device pointers and the
 * caller's stream.
 *
 * Library: libblockfp8_capi.so (`cargo build --release -p blockfp8-capi [--features cuda|rocm]`).
 *
 * Conventions
 *  - Every function returning int32_t returns a status: BLOCKFP8_OK (0) or an error code below.
 *    On error, blockfp8_last_error() gives a message for the calling thread (valid until that
 *    thread's next failing call). Arguments are checked before any work is enqueued: a failed
 *    call has written nothing. No panic or exception crosses this boundary.
 *  - "Device pointer": memory of the context's device (cudaMalloc / hipMalloc / a PyTorch
 *    tensor's data_ptr()); on the CPU backend, host memory. Pointers must be aligned as
 *    blockfp8_device_info.alignment says (16 bytes on GPUs).
 *  - "stream": a CUstream / hipStream_t cast to uint64_t (0 = the legacy default stream); on
 *    the CPU backend any value (work runs before the call returns). blockfp8 never destroys it.
 *    Work is enqueued, not waited for: no call synchronizes the host except
 *    blockfp8_synchronize (blockfp8_weight_prepare_host returns once it has read the host
 *    data, which may be freed then).
 *  - Layouts are row-major. Activation scales are either row-major [M, ceil(K/bk)]
 *    (BLOCKFP8_LAYOUT_ROW_MAJOR) or column-major [ceil(K/bk), round_up(M, 4)]
 *    (BLOCKFP8_LAYOUT_COLUMN_MAJOR: M-major, rows padded to a multiple of 4 so every K group
 *    starts 16-byte aligned, as DeepGEMM wants; the padding is never read by the GEMM).
 *    Weight scales are row-major [ceil(N/bn), ceil(K/bk)].
 *  - Handles are thread-safe. A context caches GEMM plans per (N, K, block, flavour, output
 *    dtype, scale layout) and power-of-two M bucket, shared by all streams; the first call of
 *    a bucket resolves its plan and allocates its workspace, so call blockfp8_gemm_reserve (or run
 *    once, on any stream) before capturing a CUDA/HIP graph. Products of one plan share its
 *    workspace: do not run them concurrently on two streams (serialize them, or open a second
 *    context for the second stream).
 */
#ifndef BLOCKFP8_H
#define BLOCKFP8_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; must equal blockfp8_abi_version(). */
#define BLOCKFP8_ABI_VERSION 1

/* Status codes. */
#define BLOCKFP8_OK 0
#define BLOCKFP8_ERR_INVALID_ARGUMENT 1   /* a code, dtype, group size or flavour outside what the call supports */
#define BLOCKFP8_ERR_SHAPE 2              /* sizes or lengths that do not fit together */
#define BLOCKFP8_ERR_NON_FINITE 3         /* NaN/inf where finite values are required */
#define BLOCKFP8_ERR_UNSUPPORTED 4        /* this backend or path cannot run the request */
#define BLOCKFP8_ERR_WRONG_DEVICE 5       /* memory or stream of another device */
#define BLOCKFP8_ERR_MISALIGNED 6         /* a pointer without the required alignment */
#define BLOCKFP8_ERR_OUT_OF_MEMORY 7
#define BLOCKFP8_ERR_DEVICE 8             /* a GPU runtime or library call failed */
#define BLOCKFP8_ERR_BACKEND_UNAVAILABLE 9 /* backend not compiled in, or no such device */
#define BLOCKFP8_ERR_NULL_POINTER 10
#define BLOCKFP8_ERR_PANIC 11             /* an internal error (a bug): please report the message */
#define BLOCKFP8_ERR_OTHER 12

/* Backends. */
#define BLOCKFP8_BACKEND_CPU 0
#define BLOCKFP8_BACKEND_CUDA 1
#define BLOCKFP8_BACKEND_ROCM 2

/* fp8 flavours: OCP e4m3fn (NVIDIA, gfx950; max 448) and e4m3fnuz (gfx942; max 240). */
#define BLOCKFP8_FP8_E4M3FN 0
#define BLOCKFP8_FP8_E4M3FNUZ 1

/* Element types of inputs to quantize and of GEMM outputs. */
#define BLOCKFP8_DTYPE_BF16 0
#define BLOCKFP8_DTYPE_F16 1
#define BLOCKFP8_DTYPE_F32 2

/* Activation scale layouts (see Conventions). */
#define BLOCKFP8_LAYOUT_ROW_MAJOR 0
#define BLOCKFP8_LAYOUT_COLUMN_MAJOR 1

typedef struct Blockfp8Context blockfp8_context;
typedef struct Blockfp8Weight blockfp8_weight;

typedef struct blockfp8_device_info {
    int32_t backend;        /* BLOCKFP8_BACKEND_* */
    uint32_t ordinal;
    int32_t fp8_format;     /* the flavour the device computes in (the CPU takes either) */
    uint32_t compute_units; /* CUs, SMs or CPU threads */
    uint32_t alignment;     /* bytes every pointer passed to this context must be aligned to */
    const char *name;       /* "NVIDIA H200", "AMD Instinct MI300X", the CPU model */
    const char *arch;       /* "sm_90", "gfx942", "x86_64" */
    const char *config_name;/* the device_name= of its tuned config files */
} blockfp8_device_info;     /* strings belong to the context */

typedef struct blockfp8_weight_info {
    size_t n, k, block_n, block_k;
    int32_t fp8_format;     /* the flavour the weight is stored in (the device's) */
    int32_t borrowed;       /* 1: the caller's memory (blockfp8_weight_borrow) */
} blockfp8_weight_info;

/* ---- Versions and errors -------------------------------------------------------------- */

uint32_t blockfp8_abi_version(void);
/* "0.1.0 (cpu,cuda)": crate version and the backends compiled in. Static. */
const char *blockfp8_version(void);
/* 1 if the backend is compiled into this library. */
int32_t blockfp8_backend_compiled(int32_t backend);
/* The calling thread's last error message ("" if none). */
const char *blockfp8_last_error(void);
/* "BLOCKFP8_ERR_SHAPE" etc. Static. */
const char *blockfp8_status_name(int32_t status);

/* ---- Contexts ------------------------------------------------------------------------- */

/* Opens device `ordinal` of `backend`, with the tuned configs of $BLOCKFP8_CONFIG_DIR (read
 * now) and the shipped ones. Logging follows RUST_LOG (default: warnings). */
int32_t blockfp8_context_open(int32_t backend, uint32_t ordinal, blockfp8_context **out);
/* The best device present: ROCm, then CUDA, then the CPU. */
int32_t blockfp8_context_open_best(blockfp8_context **out);
/* Frees a context (NULL ignored). No work using its plans may be pending. */
void blockfp8_context_destroy(blockfp8_context *ctx);
int32_t blockfp8_context_info(const blockfp8_context *ctx, blockfp8_device_info *out);
/* Waits for the work enqueued on `stream`. */
int32_t blockfp8_synchronize(const blockfp8_context *ctx, uint64_t stream);

/* ---- Quantization --------------------------------------------------------------------- */

/* x [M, K] (x_dtype: BLOCKFP8_DTYPE_*) -> q fp8 [M, K] and scales s (s_len floats: M*G
 * row-major or G*round_up(M,4) column-major, G = ceil(K/group)), s = max(amax, 1e-10) / fp8_max
 * per group of `group` values of a row (the last one may be partial), rounded up to a power of
 * two when ue8m0 != 0. fp8_max = 0 means the flavour's default activation max (448 e4m3fn,
 * 224 e4m3fnuz); vLLM uses the finite max (448 / 240). GPU backends take group 128 only and
 * the device's flavour. The column-major padding rows are written with 0 on the CPU. */
int32_t blockfp8_quantize_tokens(const blockfp8_context *ctx, uint64_t stream,
                                 const void *x, int32_t x_dtype, size_t m, size_t k, size_t group,
                                 int32_t fp8_format, float fp8_max, int32_t layout, int32_t ue8m0,
                                 uint8_t *q, float *s, size_t s_len);

/* w [N, K] (w_dtype) -> q fp8 [N, K] and s [ceil(N/128), ceil(K/128)], one scale per 128x128
 * block: s = max(amax, 1e-10) / finite max. Into the caller's device buffers. */
int32_t blockfp8_quantize_weight(const blockfp8_context *ctx, uint64_t stream,
                                 const void *w, int32_t w_dtype, size_t n, size_t k,
                                 int32_t fp8_format, uint8_t *q, float *s);

/* In place, host memory: an e4m3fn weight and its scales to e4m3fnuz with identical
 * dequantized values (byte 0x80 -> 0x00, scales x2; vLLM's normalize_e4m3fn_to_e4m3fnuz).
 * Nothing changes on error (a scale that is not finite or overflows when doubled). */
int32_t blockfp8_convert_e4m3fn_to_fnuz_host(uint8_t *q, size_t q_len, float *s, size_t s_len);

/* ---- Weights -------------------------------------------------------------------------- */

/* q: fp8 [N, K], s: f32 [ceil(N/block_n), ceil(K/block_k)], both in `fp8_format`.
 *  _prepare: device pointers, copied on the device (an e4m3fn weight is converted to
 *            e4m3fnuz on gfx942). The inputs may be freed once the stream has run the copy.
 *  _prepare_host: host pointers, uploaded (scales checked finite).
 *  _borrow: device pointers used in place, not copied: they must stay allocated and unchanged
 *           while the handle lives (the fp8 flavour must be the device's). On CUDA the
 *           cuBLASLt path's padded copy of the scales is built once, here.
 * Free with blockfp8_weight_destroy once no pending work uses the weight. */
int32_t blockfp8_weight_prepare(const blockfp8_context *ctx, uint64_t stream, const uint8_t *q,
                                const float *s, size_t n, size_t k, size_t block_n, size_t block_k,
                                int32_t fp8_format, blockfp8_weight **out);
int32_t blockfp8_weight_prepare_host(const blockfp8_context *ctx, uint64_t stream, const uint8_t *q,
                                     const float *s, size_t n, size_t k, size_t block_n,
                                     size_t block_k, int32_t fp8_format, blockfp8_weight **out);
int32_t blockfp8_weight_borrow(const blockfp8_context *ctx, uint64_t stream, const uint8_t *q,
                               const float *s, size_t n, size_t k, size_t block_n, size_t block_k,
                               int32_t fp8_format, blockfp8_weight **out);
void blockfp8_weight_destroy(blockfp8_weight *w);
int32_t blockfp8_weight_get_info(const blockfp8_weight *w, blockfp8_weight_info *out);

/* ---- GEMM ----------------------------------------------------------------------------- */

/* out [M, N] (out_dtype) = (a [M, K] fp8 in the weight's flavour, a_scales in a_layout) x
 * (weight [N, K])^T, enqueued on `stream`. n and k must be the weight's. a_scales holds
 * M*ceil(K/bk) (row-major) or round_up(M,4)*ceil(K/bk) (column-major) floats. */
int32_t blockfp8_gemm(const blockfp8_context *ctx, uint64_t stream, const uint8_t *a,
                      const float *a_scales, int32_t a_layout, const blockfp8_weight *w, void *out,
                      int32_t out_dtype, size_t m, size_t n, size_t k);

/* Resolves the plans for this weight, layout and output for every M bucket up to max_m rows and
 * allocates their workspaces, so that blockfp8_gemm up to that M allocates nothing (`stream` is
 * only checked). */
int32_t blockfp8_gemm_reserve(const blockfp8_context *ctx, uint64_t stream, const blockfp8_weight *w,
                              int32_t a_layout, int32_t out_dtype, size_t max_m);

/* The path a product of this shape would take ("tuned <config>", "vendor", "kernel default"),
 * NUL-terminated into buf (truncated to len bytes); *needed (if not NULL) = full length + 1. */
int32_t blockfp8_gemm_path(const blockfp8_context *ctx, size_t m, size_t n, size_t k, size_t block_n,
                           size_t block_k, int32_t fp8_format, int32_t out_dtype, char *buf,
                           size_t len, size_t *needed);

#ifdef __cplusplus
}
#endif

#endif /* BLOCKFP8_H */
