// Block-scaled FP8 GEMM on tensor cores, portable body (mma.sync m16n8k32 e4m3, sm_89+).
// On sm_90a the wgmma tiles take the TMA body in gemm_sm90_tma.cuh instead; this body serves
// the other tiles, non-sm_90a builds, and K % 16 != 0 (which TMA cannot describe).
//   C[m, n] = sum_kb As[m, kb] * Bs[n / 128, kb] * sum_{k in kb} A[m, k] * B[n, k]
// A [M, K] and B [N, K] fp8 e4m3fn, both K-major (row-major), C [M, N] row-major.
//
// One CTA computes a BM x BN tile; every 128-wide K block is one pipeline stage (A tile,
// B tile and the BM activation scales, loaded by cp.async, STAGES deep). The tensor cores
// accumulate one K block into a fresh fp32 accumulator, which is then "promoted":
// total += As * Bs * acc. That applies the block scales and keeps full fp32 accuracy.
// Shared-memory rows are 128 bytes with the 16-byte chunk index XORed by (row % 8), so
// ldmatrix and cp.async are free of bank conflicts.
// Partial tiles: rows past M / N are zero-filled and never stored; K tails are zero-filled.
// Rows whose byte length K is not a multiple of 16 cannot use 16-byte copies and take a
// byte-wise load path (same pipeline, synchronous loads).
#pragma once
#include "common.cuh"
#include <type_traits>

namespace bfp8 {

constexpr int GEMM_BK = 128;  // = the scale block along K

// Warps along M for a BM x BN tile and WARPS warps: the most square warp tile whose M side
// is a multiple of 16 and N side a multiple of 16 (two n8 fragments per ldmatrix.x4).
// Returns 0 when no split fits (the config is invalid). build_cuda.rs mirrors this rule.
__host__ __device__ constexpr int gemm_warps_m(int BM, int BN, int WARPS) {
    int best = 0, best_score = 1 << 30;
    for (int wm = 1; wm <= WARPS; wm *= 2) {
        int wn = WARPS / wm;
        if (BM % (wm * 16) != 0 || BN % (wn * 16) != 0) continue;
        int tm = BM / wm, tn = BN / wn;
        int score = tm > tn ? tm - tn : tn - tm;
        if (score < best_score) { best_score = score; best = wm; }
    }
    return best;
}

template <int BM, int BN>
__host__ __device__ constexpr int gemm_stage_bytes() { return (BM + BN) * GEMM_BK + BM * 4; }

template <int BM, int BN, int WARPS, int STAGES, typename OutT>
__device__ __forceinline__ void gemm_block_fp8_body(const uint8_t* __restrict__ A, const float* __restrict__ As,
                                                    const uint8_t* __restrict__ B, const float* __restrict__ Bs,
                                                    OutT* __restrict__ C, float* __restrict__ ws, int M, int N, int K,
                                                    int as_stride_m, int as_stride_kb, int group_m) {
    constexpr int THREADS = WARPS * 32;
    constexpr int WARPS_M = gemm_warps_m(BM, BN, WARPS);
    static_assert(WARPS_M > 0, "no warp layout fits this tile");
    constexpr int WARPS_N = WARPS / WARPS_M;
    constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;
    constexpr int MI = WTM / 16, NI = WTN / 8;
    static_assert(128 % BN == 0, "a BN tile must lie inside one 128-wide weight-scale block");
    static_assert(STAGES >= 2, "pipeline needs two stages");
    constexpr int A_BYTES = BM * GEMM_BK, B_BYTES = BN * GEMM_BK;
    constexpr int STAGE_BYTES = gemm_stage_bytes<BM, BN>();

    extern __shared__ __align__(128) uint8_t smem[];

    // Grouped tile order (GROUP_SIZE_M rows of tiles share B tiles in L2).
    const int num_pid_m = (M + BM - 1) / BM, num_pid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int in_group = group_m * num_pid_n;
    const int first_m = (pid / in_group) * group_m;
    const int group_rows = min(num_pid_m - first_m, group_m);
    const int pid_m = first_m + (pid % in_group) % group_rows;
    const int pid_n = (pid % in_group) / group_rows;
    const int m0 = pid_m * BM, n0 = pid_n * BN;
    const int KB = (K + GEMM_BK - 1) / GEMM_BK;
    // Split K (grid.y > 1): this CTA sums K blocks [kb_begin, kb_begin + NKB) into ws (fp32,
    // zeroed by the launcher) with atomics; a second kernel converts ws into C.
    const int kb_per = (KB + (int)gridDim.y - 1) / (int)gridDim.y;
    const int kb_begin = (int)blockIdx.y * kb_per;
    const int NKB = max(0, min(KB, kb_begin + kb_per) - kb_begin);
    const bool k_vec = (K % 16) == 0;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;

    // Every thread copies the same 16-byte column chunk (tid % 8) of rows tid / 8 + i * THREADS / 8.
    const int chunk = tid % 8;
    auto load_rows = [&](uint8_t* dst_tile, const uint8_t* base, int row0, int rows, auto rows_t, int k0) {
        constexpr int ROWS_T = decltype(rows_t)::value;
        const int kc = k0 + chunk * 16;
        const uint8_t* src = base + (size_t)(row0 + tid / 8) * K + kc;
        const size_t step = (size_t)(THREADS / 8) * K;
#pragma unroll
        for (int r = tid / 8; r < ROWS_T; r += THREADS / 8, src += step) {
            const int grow = row0 + r;
            uint8_t* dst = dst_tile + r * GEMM_BK + ((chunk ^ (r % 8)) * 16);
            if (k_vec) {
                const bool ok = grow < rows && kc < K;
                cp_async16(smem_u32(dst), ok ? src : base, ok ? 16 : 0);
            } else {
                uint32_t w[4] = {0, 0, 0, 0};
                if (grow < rows) {
#pragma unroll
                    for (int b = 0; b < 16; ++b)
                        if (kc + b < K) w[b / 4] |= (uint32_t)src[b] << (8 * (b % 4));
                }
                *reinterpret_cast<uint4*>(dst) = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
    };
    auto load_stage = [&](int stage, int kb) {
        uint8_t* sA = smem + stage * STAGE_BYTES;
        uint8_t* sB = sA + A_BYTES;
        float* sAS = reinterpret_cast<float*>(sB + B_BYTES);
        load_rows(sA, A, m0, M, std::integral_constant<int, BM>{}, kb * GEMM_BK);
        load_rows(sB, B, n0, N, std::integral_constant<int, BN>{}, kb * GEMM_BK);
        for (int i = tid; i < BM; i += THREADS) {
            const bool ok = m0 + i < M;
            const float* src = ok ? As + (size_t)(m0 + i) * as_stride_m + (size_t)kb * as_stride_kb : As;
            cp_async4(smem_u32(sAS + i), src, ok ? 4 : 0);
        }
    };

    float total[MI][NI][4];
    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) total[i][j][e] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < NKB) load_stage(s, kb_begin + s);
        cp_async_commit();
    }

    const float* bs_row = Bs + (size_t)(n0 / 128) * KB;
    for (int it = 0; it < NKB; ++it) {
        const int kb = kb_begin + it;
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        // The stage written here was last read in iteration kb - 1, which every thread has left.
        const int pf = it + STAGES - 1;
        if (pf < NKB) load_stage(pf % STAGES, kb_begin + pf);
        cp_async_commit();

        const float sb = __ldg(bs_row + kb);
        const int stage = it % STAGES;
        const uint8_t* sA = smem + stage * STAGE_BYTES;
        const uint8_t* sB = sA + A_BYTES;
        const float* sAS = reinterpret_cast<const float*>(sB + B_BYTES);

#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.f;

#pragma unroll
        for (int ks = 0; ks < GEMM_BK / 32; ++ks) {  // KS_LOOP
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int r = wm * WTM + i * 16 + (lane % 8) + ((lane / 8) % 2) * 8;
                const int c = ks * 2 + lane / 16;
                ldmatrix_x4(smem_u32(sA + r * GEMM_BK + ((c ^ (r % 8)) * 16)), af[i][0], af[i][1], af[i][2], af[i][3]);
            }
#pragma unroll
            for (int j = 0; j < NI / 2; ++j) {
                const int r = wn * WTN + j * 16 + (lane % 8) + (lane / 16) * 8;
                const int c = ks * 2 + (lane / 8) % 2;
                ldmatrix_x4(smem_u32(sB + r * GEMM_BK + ((c ^ (r % 8)) * 16)), bf[2 * j][0], bf[2 * j][1],
                            bf[2 * j + 1][0], bf[2 * j + 1][1]);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_e4m3_16832(acc[i][j], af[i], bf[j]);
        }

        // Promotion: total += As[m, kb] * Bs[n/128, kb] * acc.
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const int r = wm * WTM + i * 16 + lane / 4;
            const float s0 = sAS[r] * sb, s1 = sAS[r + 8] * sb;
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                total[i][j][0] = fmaf(s0, acc[i][j][0], total[i][j][0]);
                total[i][j][1] = fmaf(s0, acc[i][j][1], total[i][j][1]);
                total[i][j][2] = fmaf(s1, acc[i][j][2], total[i][j][2]);
                total[i][j][3] = fmaf(s1, acc[i][j][3], total[i][j][3]);
            }
        }
    }
    cp_async_wait<0>();

    // Epilogue: each thread owns (row, 2 adjacent columns) pairs; masked at the M / N edges.
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m0 + wm * WTM + i * 16 + lane / 4 + h * 8;
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const int col = n0 + wn * WTN + j * 8 + (lane % 4) * 2;
                store_pair<OutT>(C, ws, gridDim.y > 1, M, N, row, col, total[i][j][2 * h], total[i][j][2 * h + 1]);
            }
        }
    }
}


}  // namespace bfp8

// One extern "C" symbol per (tile config, output dtype):
//   sm90_gemm_block_fp8_m{BM}n{BN}w{WARPS}s{STAGES}_{bf16|f16|f32}
// Arguments (a, as, b, bs, c, ws, M, N, K, as_stride_m, as_stride_kb, group_m); block WARPS*32
// threads, grid (ceil(M/BM)*ceil(N/BN), split_k) (ws: fp32 [M, N], zeroed, when split_k > 1),
// dynamic shared memory
// STAGES * gemm_stage_bytes<BM, BN>() + 1024 (alignment slack; the launcher raises the
// opt-in limit). build_cuda.rs emits the TMA macro (gemm_sm90_tma.cuh) for wgmma tiles.
#define BLOCKFP8_GEMM_DISPATCH(BM, BN, W, S, OUT_T) \
    bfp8::gemm_block_fp8_body<BM, BN, W, S, OUT_T>(a, as, b, bs, c, ws, M, N, K, as_stride_m, as_stride_kb, group_m);
#define BLOCKFP8_GEMM_INSTANCE_T(BM, BN, W, S, TAG, OUT_T)                                                       \
    extern "C" __global__ void __launch_bounds__(W * 32, 1) sm90_gemm_block_fp8_m##BM##n##BN##w##W##s##S##_##TAG( \
        const uint8_t* a, const float* as, const uint8_t* b, const float* bs, OUT_T* c, float* ws, int M, int N,  \
        int K, int as_stride_m, int as_stride_kb, int group_m) {                                                \
        BLOCKFP8_GEMM_DISPATCH(BM, BN, W, S, OUT_T)                                                             \
    }
#define BLOCKFP8_GEMM_INSTANCE(BM, BN, W, S)                         \
    BLOCKFP8_GEMM_INSTANCE_T(BM, BN, W, S, bf16, __nv_bfloat16)      \
    BLOCKFP8_GEMM_INSTANCE_T(BM, BN, W, S, f16, __half)              \
    BLOCKFP8_GEMM_INSTANCE_T(BM, BN, W, S, f32, float)
