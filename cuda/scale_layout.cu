// Activation scales to the layout cuBLASLt's block-scaled FP8 reads: M-major with M rounded
// up to 4 rows (dst[g * padded_m + m]), padding rows zero. The source is any strided layout
// (row-major [M, G] or column-major), given by its element strides. Grid-stride; block 256.
#include "common.cuh"

extern "C" __global__ void sm90_act_scales_to_column_major(const float* __restrict__ src, float* __restrict__ dst, int M, int G,
                                                           int padded_m, int s_stride_m, int s_stride_g) {
    const long long total = (long long)G * padded_m;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
        const int g = (int)(i / padded_m);
        const int m = (int)(i % padded_m);
        dst[i] = m < M ? src[(long long)m * s_stride_m + (long long)g * s_stride_g] : 0.f;
    }
}
