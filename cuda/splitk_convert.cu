// Split-K epilogue: C = convert(ws), ws the fp32 [M, N] sums of the K splits, and ws back to
// zero, so the next split launch needs no memset (one graph node fewer per GEMM: M=8 N=4096
// K=7168 in 3 splits 11.5-11.7 against 12.3-12.5 us on the H200). Grid-stride; block 256.
#include "common.cuh"

template <typename OutT>
__device__ __forceinline__ void convert_body(float* __restrict__ ws, OutT* __restrict__ c, long long n) {
    // As a dependent launch: let the next GEMM set up while this runs, and read the sums only
    // once the GEMM that wrote them has completed.
    bfp8::griddep_launch_dependents();
    bfp8::griddep_wait();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        c[i] = bfp8::from_f32<OutT>(ws[i]);
        ws[i] = 0.f;
    }
}

extern "C" __global__ void sm90_splitk_convert_bf16(float* ws, __nv_bfloat16* c, long long n) { convert_body(ws, c, n); }
extern "C" __global__ void sm90_splitk_convert_f16(float* ws, __half* c, long long n) { convert_body(ws, c, n); }
extern "C" __global__ void sm90_splitk_convert_f32(float* ws, float* c, long long n) { convert_body(ws, c, n); }
