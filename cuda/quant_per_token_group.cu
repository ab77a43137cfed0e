// Per-token-group activation quantization, group 128: x [M, K] (bf16 or f32) -> fp8 e4m3
// [M, K] and one fp32 dequantizing scale per row per group, s = max(amax, 1e-10) / fp8_max
// (optionally rounded up to a power of two, UE8M0), q = sat_rne(x / s).
//
// Eight threads own one group (16 values each, 16-byte loads and one 16-byte store); the
// group max is three shuffles. The grid is 2-D with a compile-time number of groups per
// block along K (GX) and rows per block (16 / GX), so no run-time divide or modulo.
// Scales go to s[m * s_stride_m + g * s_stride_g]: row-major (stride_m = G, stride_g = 1) or
// M-major "TMA aligned" (stride_m = 1, stride_g = round_up(M, 4)).
#include "common.cuh"

using namespace bfp8;

namespace {

constexpr int GROUP = 128;
constexpr int THREADS_PER_GROUP = 8;
constexpr int VALS = GROUP / THREADS_PER_GROUP;  // 16

template <typename T>
__device__ __forceinline__ void load16(const T* p, float* v);

template <>
__device__ __forceinline__ void load16<__nv_bfloat16>(const __nv_bfloat16* p, float* v) {
    const uint4* p4 = reinterpret_cast<const uint4*>(p);
    uint4 w[2] = {__ldg(p4), __ldg(p4 + 1)};
    const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(w);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float2 f = __bfloat1622float2(h[i]);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}

template <>
__device__ __forceinline__ void load16<__half>(const __half* p, float* v) {
    const uint4* p4 = reinterpret_cast<const uint4*>(p);
    uint4 w[2] = {__ldg(p4), __ldg(p4 + 1)};
    const __half2* h = reinterpret_cast<const __half2*>(w);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float2 f = __half22float2(h[i]);
        v[2 * i] = f.x;
        v[2 * i + 1] = f.y;
    }
}

template <>
__device__ __forceinline__ void load16<float>(const float* p, float* v) {
    const float4* p4 = reinterpret_cast<const float4*>(p);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float4 f = __ldg(p4 + i);
        v[4 * i] = f.x;
        v[4 * i + 1] = f.y;
        v[4 * i + 2] = f.z;
        v[4 * i + 3] = f.w;
    }
}

template <typename T, int GX>
__device__ __forceinline__ void quant_group_body(const T* __restrict__ x, uint8_t* __restrict__ q, float* __restrict__ s,
                                                 int M, int K, float fp8_max, int s_stride_m, int s_stride_g, int ue8m0) {
    constexpr int GY = 16 / GX;
    const int G = (K + GROUP - 1) / GROUP;
    const int g = blockIdx.x * GX + threadIdx.x / THREADS_PER_GROUP;
    const int m = blockIdx.y * GY + threadIdx.y;
    const int lane8 = threadIdx.x % THREADS_PER_GROUP;
    const int k0 = g * GROUP + lane8 * VALS;
    const bool row_ok = (g < G) && (m < M);
    // 16-byte vectors need every row start aligned: K % 16 == 0 covers bf16, f32 and fp8 rows.
    const bool vec = (K % 16) == 0;
    const size_t row = (size_t)m * (size_t)K;

    float v[VALS];
    if (row_ok && vec && k0 < K) {
        load16<T>(x + row + k0, v);
    } else {
#pragma unroll
        for (int i = 0; i < VALS; ++i) v[i] = (row_ok && k0 + i < K) ? to_f32(x[row + k0 + i]) : 0.f;
    }
    float amax = 0.f;
#pragma unroll
    for (int i = 0; i < VALS; ++i) amax = fmaxf(amax, fabsf(v[i]));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 4));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    float scale = fmaxf(amax, 1e-10f) / fp8_max;
    if (ue8m0) scale = round_up_pow2(scale);
    if (!row_ok) return;
    if (lane8 == 0) s[(size_t)m * s_stride_m + (size_t)g * s_stride_g] = scale;

    uint16_t packed[VALS / 2];
#pragma unroll
    for (int i = 0; i < VALS / 2; ++i) packed[i] = pack_e4m3x2(v[2 * i] / scale, v[2 * i + 1] / scale);
    if (vec && k0 < K) {
        *reinterpret_cast<uint4*>(q + row + k0) = *reinterpret_cast<const uint4*>(packed);
    } else {
        const uint8_t* b = reinterpret_cast<const uint8_t*>(packed);
#pragma unroll
        for (int i = 0; i < VALS; ++i)
            if (k0 + i < K) q[row + k0 + i] = b[i];
    }
}

}  // namespace

// Block (8 * GX, 16 / GX) threads; grid (ceil(G / GX), ceil(M / (16 / GX))).
#define QUANT_INSTANCE(NAME, T, GX)                                                                           \
    extern "C" __global__ void __launch_bounds__(128) NAME(const T* x, uint8_t* q, float* s, int M, int K,    \
                                                           float fp8_max, int s_stride_m, int s_stride_g,     \
                                                           int ue8m0) {                                       \
        bfp8::griddep_launch_dependents(); /* a dependent GEMM after it may set up meanwhile */             \
        quant_group_body<T, GX>(x, q, s, M, K, fp8_max, s_stride_m, s_stride_g, ue8m0);                     \
    }

QUANT_INSTANCE(sm90_quant_per_token_group_bf16_gx16, __nv_bfloat16, 16)
QUANT_INSTANCE(sm90_quant_per_token_group_bf16_gx8, __nv_bfloat16, 8)
QUANT_INSTANCE(sm90_quant_per_token_group_bf16_gx4, __nv_bfloat16, 4)
QUANT_INSTANCE(sm90_quant_per_token_group_f16_gx16, __half, 16)
QUANT_INSTANCE(sm90_quant_per_token_group_f16_gx8, __half, 8)
QUANT_INSTANCE(sm90_quant_per_token_group_f16_gx4, __half, 4)
QUANT_INSTANCE(sm90_quant_per_token_group_f32_gx16, float, 16)
QUANT_INSTANCE(sm90_quant_per_token_group_f32_gx8, float, 8)
QUANT_INSTANCE(sm90_quant_per_token_group_f32_gx4, float, 4)
