// Split-K epilogue: C = convert(ws), ws the fp32 [M, N] sums of the K splits.
// Grid-stride; block 256.
#include "common.cuh"

template <typename OutT>
__device__ __forceinline__ void convert_body(const float* __restrict__ ws, OutT* __restrict__ c, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        c[i] = bfp8::from_f32<OutT>(ws[i]);
}

extern "C" __global__ void sm90_splitk_convert_bf16(const float* ws, __nv_bfloat16* c, long long n) { convert_body(ws, c, n); }
extern "C" __global__ void sm90_splitk_convert_f16(const float* ws, __half* c, long long n) { convert_body(ws, c, n); }
extern "C" __global__ void sm90_splitk_convert_f32(const float* ws, float* c, long long n) { convert_body(ws, c, n); }
