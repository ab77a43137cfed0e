// Per-block weight quantization: w [N, K] (f32, bf16 or f16) -> fp8 e4m3 [N, K] and one fp32 scale per
// 128x128 block, s = max(amax, 1e-10) / 448, q = sat_rne(w / s). One 256-thread block per
// weight block; grid (ceil(K/128), ceil(N/128)). Runs once per checkpoint: kept simple.
#include "common.cuh"

using namespace bfp8;

template <typename T>
__device__ __forceinline__ void quant_weight_body(const T* __restrict__ w, uint8_t* __restrict__ q, float* __restrict__ s, int N,
                                                  int K, float fp8_max) {
    __shared__ float warp_max[8];
    const int kb = blockIdx.x, nb = blockIdx.y;
    const int col = kb * 128 + (threadIdx.x % 128);
    const int row0 = nb * 128 + threadIdx.x / 128;
    float amax = 0.f;
    for (int r = row0; r < min(N, nb * 128 + 128); r += 2)
        if (col < K) amax = fmaxf(amax, fabsf(to_f32(w[(size_t)r * K + col])));
#pragma unroll
    for (int o = 16; o > 0; o /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = 0.f;
#pragma unroll
    for (int i = 0; i < 8; ++i) amax = fmaxf(amax, warp_max[i]);
    const float scale = fmaxf(amax, 1e-10f) / fp8_max;
    if (threadIdx.x == 0) s[(size_t)nb * ((K + 127) / 128) + kb] = scale;
    for (int r = row0; r < min(N, nb * 128 + 128); r += 2)
        if (col < K) q[(size_t)r * K + col] = (uint8_t)__nv_cvt_float_to_fp8(to_f32(w[(size_t)r * K + col]) / scale, __NV_SATFINITE, __NV_E4M3);
}

// bf16/f16/f32 weights (a checkpoint's own dtype) into one kernel each.
#define WEIGHT_QUANT_INSTANCE(NAME, T)                                                                         \
    extern "C" __global__ void __launch_bounds__(256) NAME(const T* w, uint8_t* q, float* s, int N, int K, float fp8_max) { \
        quant_weight_body<T>(w, q, s, N, K, fp8_max);                                                       \
    }
WEIGHT_QUANT_INSTANCE(sm90_quant_weight_blocks_f32, float)
WEIGHT_QUANT_INSTANCE(sm90_quant_weight_blocks_bf16, __nv_bfloat16)
WEIGHT_QUANT_INSTANCE(sm90_quant_weight_blocks_f16, __half)
