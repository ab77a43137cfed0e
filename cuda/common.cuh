// Shared device helpers for the blockfp8 CUDA kernels (sm_90a builds; the GEMM's
// mma.sync e4m3 path needs sm_89+).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>

namespace bfp8 {

// Programmatic dependent launch (no-ops under a plain launch, and before sm_90): the wait
// returns once the previous kernel on the stream has completed and its writes are visible;
// launch_dependents lets the next kernel, if it is a dependent launch, launch once every CTA of
// this one has issued it or exited.
__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Output element conversion from the fp32 total.
template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half from_f32<__half>(float v) { return __float2half_rn(v); }

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }

// Two 16-bit outputs in one word, `lo` at the lower address.
template <typename T> __device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <> __device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
    return (uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(lo)) | ((uint32_t)__bfloat16_as_ushort(__float2bfloat16_rn(hi)) << 16);
}
template <> __device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
    return (uint32_t)__half_as_ushort(__float2half_rn(lo)) | ((uint32_t)__half_as_ushort(__float2half_rn(hi)) << 16);
}

// Rounds a positive scale up to a power of two (UE8M0), exactly, from its bits.
__device__ __forceinline__ float round_up_pow2(float s) {
    uint32_t bits = __float_as_uint(s);
    if (bits & 0x007fffffu) bits = (bits & 0xff800000u) + 0x00800000u;
    return __uint_as_float(bits);
}

// RNE, saturating to +-448 (the CPU reference's rule); inputs are finite.
__device__ __forceinline__ uint16_t pack_e4m3x2(float lo, float hi) {
    return (uint16_t)__nv_cvt_float2_to_fp8x2(make_float2(lo, hi), __NV_SATFINITE, __NV_E4M3);
}

// Stores (row, col), (row, col + 1) of C [M, N], masked at the M / N edges (4- or 8-byte
// stores where N is even); with split K (`split`) the pair is added to the fp32 workspace.
template <typename OutT>
__device__ __forceinline__ void store_pair(OutT* C, float* ws, bool split, int M, int N, int row, int col, float a, float b) {
    if (row >= M) return;
    if (split) {
        if (col < N) atomicAdd(ws + (size_t)row * N + col, a);
        if (col + 1 < N) atomicAdd(ws + (size_t)row * N + col + 1, b);
        return;
    }
    OutT* dst = C + (size_t)row * N + col;
    if ((N % 2) == 0 && col + 1 < N) {
        if constexpr (sizeof(OutT) == 4) {
            *reinterpret_cast<float2*>(dst) = make_float2(a, b);
        } else {
            OutT two[2] = {from_f32<OutT>(a), from_f32<OutT>(b)};
            *reinterpret_cast<uint32_t*>(dst) = *reinterpret_cast<const uint32_t*>(two);
        }
    } else {
        if (col < N) dst[0] = from_f32<OutT>(a);
        if (col + 1 < N) dst[1] = from_f32<OutT>(b);
    }
}

__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return (uint32_t)__cvta_generic_to_shared(p);
}

// 16-byte async copy; src_bytes = 0 zero-fills the destination (masked tile rows).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async4(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t addr, uint32_t& r0, uint32_t& r1, uint32_t& r2, uint32_t& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// D = A(16x32 e4m3, row) * B(32x8 e4m3, col) + C, fp32 accumulate.
__device__ __forceinline__ void mma_e4m3_16832(float* d, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

}  // namespace bfp8
