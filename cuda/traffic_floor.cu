// The bytes floor, measured: reads A (M*K bytes) and B (N*K bytes) once and writes C's bytes,
// with no math, so the benchmark can time exactly a GEMM's DRAM traffic, launch included, in
// the same graph harness as the GEMM. Grid-stride over 16-byte vectors, four independent loads
// in flight per thread per step; the loaded bits are folded into what is written so the loads
// cannot be dropped. Sizes are in 16-byte vectors (a remainder under 16 bytes is not read).
#include "common.cuh"

__device__ __forceinline__ void fold4(uint4& acc, const uint4& v) {
    acc.x ^= v.x;
    acc.y ^= v.y;
    acc.z ^= v.z;
    acc.w ^= v.w;
}

__device__ __forceinline__ void read_all(uint4& acc, const uint4* __restrict__ p, long long n, long long t, long long stride) {
    long long i = t;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const uint4 v0 = __ldg(p + i), v1 = __ldg(p + i + stride), v2 = __ldg(p + i + 2 * stride), v3 = __ldg(p + i + 3 * stride);
        fold4(acc, v0);
        fold4(acc, v1);
        fold4(acc, v2);
        fold4(acc, v3);
    }
    for (; i < n; i += stride) fold4(acc, __ldg(p + i));
}

extern "C" __global__ void sm90_traffic_floor(const uint4* a, long long a_vecs, const uint4* b, long long b_vecs, uint4* c, long long c_vecs) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    uint4 acc = make_uint4(0, 0, 0, 0);
    read_all(acc, a, a_vecs, t, stride);
    read_all(acc, b, b_vecs, t, stride);
    for (long long i = t; i < c_vecs; i += stride) c[i] = acc;
}
