// Block-scaled W8A8 fp8 GEMM on MFMA: C[M,N] = sum_kb As[m,kb] * Bs[n/128,kb] * (A[m,kb] . B[n,kb])
// A [M,K] fp8 row-major, B [N,K] fp8 row-major (PyTorch Linear), one fp32 scale per row and
// 128-wide K group for A (strides as_stride_m / as_stride_kb), one per 128x128 block for B
// (row-major [ceil(N/128), ceil(K/128)]). Any M, N, K: partial tiles are masked.
//
// One workgroup computes a BM x BN tile with NUM_WARPS waves laid out WM x WN; each wave
// owns (BM/WM) x (BN/WN) made of NK x NK MFMA tiles (NK = 32: v_mfma_f32_32x32x16_fp8_fp8,
// NK = 16: v_mfma_f32_16x16x32_fp8_fp8). Per K tile of BK (64 or 128, dividing the 128-wide
// scale block) A and B are staged global -> registers -> LDS; with STAGES = 2 the LDS is
// double-buffered and the next tile's global loads are in flight while the MFMAs of the
// current tile run (one barrier per K tile); STAGES = 1 uses one buffer and two barriers.
// Every 128 K the MFMA accumulators (exact fp8 products summed in fp32) are folded into the
// fp32 total with As * Bs and reset, as DeepGEMM and AITER do.
#include "blockfp8_hip.h"

namespace bfp8 {

// Waves along N for a BM x BN tile: every wave tile must be a whole number of MFMA tiles;
// among the legal splits take the one reading the fewest fragment bytes (BM/WM + BN/WN).
constexpr int gemm_waves_n(int bm, int bn, int warps, int nk) {
  int best = -1, best_cost = 1 << 30;
  for (int wn = 1; wn <= warps; wn *= 2) {
    int wm = warps / wn;
    if (wm * wn != warps || bn % (wn * nk) != 0 || bm % (wm * nk) != 0) continue;
    int cost = bm / wm + bn / wn;
    if (cost < best_cost) { best_cost = cost; best = wn; }
  }
  return best;
}

template <int BM, int BN, int BK, int GROUP_M, int NUM_WARPS, int STAGES, int NK>
struct GemmLayout {
  static constexpr int THREADS = NUM_WARPS * 64;
  static constexpr int WN = gemm_waves_n(BM, BN, NUM_WARPS, NK);
  static constexpr int WM = WN > 0 ? NUM_WARPS / WN : 1;
  static constexpr int TM = BM / WM / NK;  // MFMA tiles per wave along M
  static constexpr int TN = WN > 0 ? BN / WN / NK : 1;
  static constexpr int KSTEP = NK == 32 ? 16 : 32;  // K of one MFMA
  static constexpr int ACC = NK == 32 ? 16 : 4;     // accumulator floats per lane
  static constexpr int CHUNKS = BK / 8;             // 8-byte LDS chunks per tile row
  static constexpr int ROWS_PER_BANK_ROW = BK >= 128 ? 1 : 128 / BK;
  static constexpr int V16_PER_ROW = BK / 16;
  static constexpr int A_V16 = BM * V16_PER_ROW;
  static constexpr int B_V16 = BN * V16_PER_ROW;
  static constexpr int A_LOADS = (A_V16 + THREADS - 1) / THREADS;
  static constexpr int B_LOADS = (B_V16 + THREADS - 1) / THREADS;
  static constexpr int STAGE_BYTES = (BM + BN) * BK;
  static constexpr int LDS_BYTES = STAGES * STAGE_BYTES;

  static_assert(NK == 16 || NK == 32, "MFMA nonkdim is 16 or 32");
  static_assert(WN > 0, "BLOCK_M x BLOCK_N cannot be split into NUM_WARPS waves of whole MFMA tiles");
  static_assert(BK % KSTEP == 0 && BK % 16 == 0 && 128 % BK == 0, "BLOCK_K must divide 128 and be a multiple of the MFMA K");
  static_assert(STAGES == 1 || STAGES == 2, "STAGES is 1 (single LDS buffer) or 2 (double buffer)");
  static_assert(GROUP_M >= 1, "GROUP_M >= 1");
  static_assert(LDS_BYTES <= 65536, "LDS tiles exceed 64 KiB (gfx942)");

  // XOR swizzle of 8-byte chunks: the 16 rows one ds_read_b64 pass touches land on 16
  // distinct bank pairs, without padding (so 128x128x128 x 2 stages is exactly 64 KiB).
  static BFP8_DEVICE int lds_offset(int row, int chunk) {
    int swz = (row / ROWS_PER_BANK_ROW) % CHUNKS;
    return row * BK + ((chunk ^ swz) << 3);
  }
};

// Triton's GROUP_SIZE_M order: GROUP_M row-tiles share each column-tile sweep (L2 reuse).
template <int GROUP_M>
BFP8_DEVICE void gemm_tile_coords(int pid, int tiles_m, int tiles_n, int& tm, int& tn) {
  int per_group = GROUP_M * tiles_n;
  int group = pid / per_group;
  int first_m = group * GROUP_M;
  int group_rows = tiles_m - first_m < GROUP_M ? tiles_m - first_m : GROUP_M;
  int in_group = pid % per_group;
  tm = first_m + in_group % group_rows;
  tn = in_group / group_rows;
}

// 16 bytes of row `row` (global row index grow < rows) starting at column k, zero beyond K.
BFP8_DEVICE u8x16 load_row16(const uint8_t* base, int grow, int rows, int k, int K, bool vec16) {
  u8x16 v;
  v.lo = 0;
  v.hi = 0;
  if (grow >= rows || k >= K) return v;
  const uint8_t* p = base + (size_t)grow * (size_t)K + k;
  if (vec16) return gload(reinterpret_cast<const u8x16*>(p));
  // Ragged K or unaligned pointers: byte loads, masked per byte.
  uint64_t lo = 0, hi = 0;
  for (int e = 0; e < 8; ++e)
    if (k + e < K) lo |= (uint64_t)gload(p + e) << (8 * e);
  for (int e = 0; e < 8; ++e)
    if (k + 8 + e < K) hi |= (uint64_t)gload(p + 8 + e) << (8 * e);
  v.lo = lo;
  v.hi = hi;
  return v;
}

template <int ACC> struct AccVec;
template <> struct AccVec<16> { typedef f32x16 type; };
template <> struct AccVec<4> { typedef f32x4 type; };

template <int NK> BFP8_DEVICE typename AccVec<NK == 32 ? 16 : 4>::type mfma_fp8(uint64_t a, uint64_t b, const typename AccVec<NK == 32 ? 16 : 4>::type& c);
template <> BFP8_DEVICE f32x16 mfma_fp8<32>(uint64_t a, uint64_t b, const f32x16& c) { return mfma_32x32x16_fp8(a, b, c); }
template <> BFP8_DEVICE f32x4 mfma_fp8<16>(uint64_t a, uint64_t b, const f32x4& c) { return mfma_16x16x32_fp8(a, b, c); }

// Row (within the MFMA tile) of accumulator register r of lane `lane` (the CDNA3/CDNA4 ISA layouts).
template <int NK> BFP8_DEVICE int acc_row(int lane, int r) {
  return NK == 32 ? 8 * (r / 4) + 4 * (lane / 32) + (r % 4) : 4 * (lane / 16) + r;
}

template <int BM, int BN, int BK, int GROUP_M, int NUM_WARPS, int STAGES, int NK, class Out>
BFP8_DEVICE void gemm_block_fp8_impl(const uint8_t* a, const float* a_scales, const uint8_t* b, const float* b_scales,
                                     void* c, int M, int N, int K, int as_stride_m, int as_stride_kb) {
  typedef GemmLayout<BM, BN, BK, GROUP_M, NUM_WARPS, STAGES, NK> L;
  typedef typename AccVec<L::ACC>::type Acc;
  BFP8_LDS_DECL(uint8_t, lds, L::LDS_BYTES);

  const int tid = (int)thread_id();
  const int lane = tid % 64;
  const int wave = tid / 64;
  const int wave_m = wave / L::WN, wave_n = wave % L::WN;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  int tile_m, tile_n;
  gemm_tile_coords<GROUP_M>((int)block_id_x(), tiles_m, tiles_n, tile_m, tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int KB = (K + 127) / 128;
  const int k_tiles = (K + BK - 1) / BK;
  // 16-byte loads need 16-byte aligned rows: K % 16 == 0 and aligned base pointers.
  const bool vec16 = (K % 16 == 0) && (((uintptr_t)a | (uintptr_t)b) % 16 == 0);

  u8x16 ra[L::A_LOADS] = {}, rb[L::B_LOADS] = {};
  auto load_regs = [&](int kt) {
    const int k0 = kt * BK;
#pragma unroll
    for (int j = 0; j < L::A_LOADS; ++j) {
      int idx = tid + j * L::THREADS;
      int row = idx / L::V16_PER_ROW, col = idx % L::V16_PER_ROW;
      if (L::A_V16 % L::THREADS == 0 || idx < L::A_V16) ra[j] = load_row16(a, m0 + row, M, k0 + col * 16, K, vec16);
    }
#pragma unroll
    for (int j = 0; j < L::B_LOADS; ++j) {
      int idx = tid + j * L::THREADS;
      int row = idx / L::V16_PER_ROW, col = idx % L::V16_PER_ROW;
      if (L::B_V16 % L::THREADS == 0 || idx < L::B_V16) rb[j] = load_row16(b, n0 + row, N, k0 + col * 16, K, vec16);
    }
  };
  auto store_lds = [&](int stage) {
    uint8_t* sa = lds + stage * L::STAGE_BYTES;
    uint8_t* sb = sa + BM * BK;
#pragma unroll
    for (int j = 0; j < L::A_LOADS; ++j) {
      int idx = tid + j * L::THREADS;
      int row = idx / L::V16_PER_ROW, col = idx % L::V16_PER_ROW;
      if (L::A_V16 % L::THREADS == 0 || idx < L::A_V16) {
        *reinterpret_cast<uint64_t*>(sa + L::lds_offset(row, 2 * col)) = ra[j].lo;
        *reinterpret_cast<uint64_t*>(sa + L::lds_offset(row, 2 * col + 1)) = ra[j].hi;
      }
    }
#pragma unroll
    for (int j = 0; j < L::B_LOADS; ++j) {
      int idx = tid + j * L::THREADS;
      int row = idx / L::V16_PER_ROW, col = idx % L::V16_PER_ROW;
      if (L::B_V16 % L::THREADS == 0 || idx < L::B_V16) {
        *reinterpret_cast<uint64_t*>(sb + L::lds_offset(row, 2 * col)) = rb[j].lo;
        *reinterpret_cast<uint64_t*>(sb + L::lds_offset(row, 2 * col + 1)) = rb[j].hi;
      }
    }
  };

  Acc acc[L::TM][L::TN];
  Acc total[L::TM][L::TN];
#pragma unroll
  for (int i = 0; i < L::TM; ++i)
#pragma unroll
    for (int j = 0; j < L::TN; ++j) {
      acc[i][j] = Acc{};
      total[i][j] = Acc{};
    }

  // Fragment rows start at multiples of 16, so a lane's swizzle depends on the lane only.
  const int frag_row = lane % NK;    // A row i / B column j this lane feeds
  const int frag_chunk = lane / NK;  // which 8-byte slice of the MFMA's K
  const int frag_swz = (frag_row / L::ROWS_PER_BANK_ROW) % L::CHUNKS;
  auto compute = [&](int stage) {
    const uint8_t* sa = lds + stage * L::STAGE_BYTES + frag_row * BK;
    const uint8_t* sb = sa + BM * BK;
#pragma unroll
    for (int ks = 0; ks < BK / L::KSTEP; ++ks) {
      // Recomputed per step (opaque) rather than hoisted: hoisting every step's address
      // out of the K loop costs dozens of VGPRs.
      int swz = frag_swz;
      opaque(swz);
      const int col = ((ks * (L::KSTEP / 8) + frag_chunk) ^ swz) << 3;
      uint64_t fa[L::TM], fb[L::TN];
#pragma unroll
      for (int i = 0; i < L::TM; ++i)
        fa[i] = *reinterpret_cast<const uint64_t*>(sa + (wave_m * L::TM + i) * NK * BK + col);
#pragma unroll
      for (int j = 0; j < L::TN; ++j)
        fb[j] = *reinterpret_cast<const uint64_t*>(sb + (wave_n * L::TN + j) * NK * BK + col);
#pragma unroll
      for (int i = 0; i < L::TM; ++i)
#pragma unroll
        for (int j = 0; j < L::TN; ++j) acc[i][j] = mfma_fp8<NK>(fa[i], fb[j], acc[i][j]);
    }
  };

  // total += As[m,kb] * Bs[n/128,kb] * acc, then a fresh accumulator for the next K block.
  // Rows >= M and columns >= N have zero products (masked loads), so their scale reads
  // are clamped into range instead of branched on; they are never stored.
  // The scale loads of a K block are issued at its start, before the next tile's A/B loads:
  // loads complete in order (vmcnt), so loaded at the fold they would wait behind that
  // prefetch and then expose their own latency once per K block, which one wave per SIMD
  // (gfx942 at 48-64 KiB of LDS) cannot hide. Tiles whose accumulators already fill the
  // register budget keep the loads at the fold instead of spilling.
  constexpr bool EARLY_SCALES = 2 * L::TM * L::TN * L::ACC + L::TM * L::ACC + L::TN <= 128;
  float as_reg[EARLY_SCALES ? L::TM : 1][L::ACC], bs_reg[EARLY_SCALES ? L::TN : 1];
  auto load_scales = [&](int kb, float (&as)[L::ACC], int i) {
    const float* as_kb = a_scales + (size_t)kb * as_stride_kb;
    int lane_m = m0 + wave_m * L::TM * NK;
    opaque(lane_m);  // keep the 16-32 row offsets out of the K loop's live set
#pragma unroll
    for (int r = 0; r < L::ACC; ++r) {
      int m = lane_m + i * NK + acc_row<NK>(lane, r);
      as[r] = gload(as_kb + (m < M ? m : M - 1) * as_stride_m);
    }
  };
  auto load_bscale = [&](int kb, int j) {
    int n = n0 + wave_n * L::TN * NK + lane % NK + j * NK;
    return gload(b_scales + kb + ((n < N ? n : N - 1) / 128) * KB);
  };
  auto prefetch_scales = [&](int kb) {
    if constexpr (EARLY_SCALES) {
#pragma unroll
      for (int i = 0; i < L::TM; ++i) load_scales(kb, as_reg[i], i);
#pragma unroll
      for (int j = 0; j < L::TN; ++j) bs_reg[j] = load_bscale(kb, j);
    }
  };
  auto fold = [&](int kb) {
#pragma unroll
    for (int i = 0; i < L::TM; ++i) {
      float as[L::ACC];
      if constexpr (EARLY_SCALES) {
#pragma unroll
        for (int r = 0; r < L::ACC; ++r) as[r] = as_reg[i][r];
      } else {
        load_scales(kb, as, i);
      }
#pragma unroll
      for (int j = 0; j < L::TN; ++j) {
        float bs;
        if constexpr (EARLY_SCALES) bs = bs_reg[j];
        else bs = load_bscale(kb, j);
#pragma unroll
        for (int r = 0; r < L::ACC; ++r) total[i][j][r] += as[r] * bs * acc[i][j][r];
        acc[i][j] = Acc{};
      }
    }
  };

  load_regs(0);
  store_lds(0);
  sync_threads();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const bool more = kt + 1 < k_tiles;
    if ((kt * BK) % 128 == 0) prefetch_scales((kt * BK) / 128);  // first tile of a K block
    if (more) load_regs(kt + 1);  // in flight during the MFMAs below
    compute(kt % STAGES);
    if (((kt + 1) * BK) % 128 == 0 || !more) fold((kt * BK) / 128);
    if (more) {
      if (STAGES == 1) sync_threads();  // the single buffer is still being read
      store_lds((kt + 1) % STAGES);
      sync_threads();
    }
  }

  typedef typename Out::storage T;
  T* cout = reinterpret_cast<T*>(c);
#pragma unroll
  for (int i = 0; i < L::TM; ++i)
#pragma unroll
    for (int j = 0; j < L::TN; ++j) {
      int n = n0 + (wave_n * L::TN + j) * NK + lane % NK;
#pragma unroll
      for (int r = 0; r < L::ACC; ++r) {
        int m = m0 + (wave_m * L::TM + i) * NK + acc_row<NK>(lane, r);
        if (m < M && n < N) gstore(cout + (size_t)m * N + n, Out::from_f32(total[i][j][r]));
      }
    }
}

}  // namespace bfp8

// One kernel per config and output type: gemm_block_fp8_<tag>_<out>, tag as in
// src/backend/hip/kernels.rs kernel_tag (e.g. m128n128k128g8w4s2i32).
#define BFP8_GEMM_INSTANCE(tag, out, BM, BN, BK, G, W, S, NK)                                                      \
  BFP8_KERNEL(gemm_block_fp8_##tag##_##out, (W) * 64,                                                               \
              (const uint8_t* a, const float* a_scales, const uint8_t* b, const float* b_scales, void* c, int M, \
               int N, int K, int as_stride_m, int as_stride_kb),                                                  \
              (::bfp8::gemm_block_fp8_impl<BM, BN, BK, G, W, S, NK, ::bfp8::out_##out>(                          \
                  a, a_scales, b, b_scales, c, M, N, K, as_stride_m, as_stride_kb)))
