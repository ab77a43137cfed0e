// Block-scaled W8A8 fp8 GEMM on MFMA: C[M,N] = sum_kb As[m,kb] * Bs[n/128,kb] * (A[m,kb] . B[n,kb])
// A [M,K] fp8 row-major, B [N,K] fp8 row-major (PyTorch Linear), one fp32 scale per row and
// 128-wide K group for A (strides as_stride_m / as_stride_kb), one per 128x128 block for B
// (row-major [ceil(N/128), ceil(K/128)]). Any M, N, K. Tiles are taken in GROUP_M order
// (`group_m`, a runtime argument: it changes the order, not the kernel).
// Split K (small M): grid (tiles, k_splits); workspace = k_splits*M*N fp32 partials then
// one uint32 counter per tile, zero before the first launch (the kernel leaves them zero);
// workspace is unused (may be null) when k_splits == 1.
//
// One workgroup computes a BM x BN tile with W waves laid out WM x WN; each wave owns
// (BM/WM) x (BN/WN) made of NK x NK MFMA tiles (NK = 32: v_mfma_f32_32x32x16_fp8_fp8,
// NK = 16: v_mfma_f32_16x16x32_fp8_fp8). Design points (hip/README.md has the measurements):
// - Operand roles: the MFMA's first operand is B (rows = N), its second is A, so a lane's
//   accumulators share one A row (one A scale per lane and K block, a vector load) and an
//   MFMA tile's N columns lie in one 128-wide weight block (its scale is wave-uniform: a
//   scalar load). The fold total += acc * (As * Bs) is one packed FMA per two floats.
// - K is permuted inside each 128-wide block (the dot product does not care): lane group g
//   of an MFMA reads bytes [g*S, (g+1)*S) of the block (S = 64 for 32x32, 32 for 16x16)
//   across the block's K steps, so its fragments are 16-byte LDS reads.
// - Global loads are buffer loads: a resource descriptor whose base steps along K (scalar
//   work) and loop-invariant 32-bit lane offsets; rows beyond M or N read zero (offset past
//   num_records). Only the last K tile can hold columns beyond K: it is peeled and masks
//   them, so the main loop has no branch and no per-byte path.
// - One LDS buffer with register prefetch (Triton's num_stages = 2 on AMD): tile it+1 is
//   loaded into registers while tile it is multiplied from LDS; 16-byte chunks are XOR
//   swizzled by row so that 16-byte reads and writes are free of bank conflicts.
// - Rows whose start is not 16-byte aligned (K % 16 != 0, or unaligned A/B) take a second
//   loop built from aligned dword loads and v_alignbyte (still no byte loads).
// - The epilogue stores four consecutive outputs per instruction where N allows.
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

template <int BM, int BN, int BK, int W, int NK>
struct GemmLayout {
  static constexpr int THREADS = W * 64;
  static constexpr int WN = gemm_waves_n(BM, BN, W, NK);
  static constexpr int WM = WN > 0 ? W / WN : 1;
  static constexpr int TM = BM / WM / NK;  // MFMA tiles per wave along M
  static constexpr int TN = WN > 0 ? BN / WN / NK : 1;
  static constexpr int ACC = NK == 32 ? 16 : 4;  // accumulator floats per lane
  static constexpr int LG = 64 / NK;              // lane groups along the MFMA's K
  static constexpr int CPL = 128 / LG / 16;       // 16-byte chunks a lane reads per 128-K block
  static constexpr int SUB = BK / 128;            // 128-wide scale blocks per K tile
  static constexpr int CR = BK / 16;              // 16-byte chunks per tile row
  static constexpr int RPP = THREADS / CR;        // tile rows one pass of the workgroup loads
  static constexpr int A_CH = BM * CR, B_CH = BN * CR;
  static constexpr int A_LOADS = (A_CH + THREADS - 1) / THREADS;
  static constexpr int B_LOADS = (B_CH + THREADS - 1) / THREADS;
  static constexpr int LDS_BYTES = (BM + BN) * BK;

  static_assert(NK == 16 || NK == 32, "MFMA nonkdim is 16 or 32");
  static_assert(WN > 0, "BLOCK_M x BLOCK_N cannot be split into W waves of whole MFMA tiles");
  static_assert(BK == 128 || BK == 256, "BLOCK_K is 128 or 256 (whole scale blocks)");
  static_assert(THREADS % CR == 0 && (A_LOADS == 1 || RPP % 8 == 0) && (B_LOADS == 1 || RPP % 8 == 0),
                "a thread's load passes must keep its swizzle");
  static_assert(A_CH % THREADS == 0 || A_CH < THREADS, "A tile chunks must fill whole passes");
  static_assert(B_CH % THREADS == 0 || B_CH < THREADS, "B tile chunks must fill whole passes");
  static_assert(LDS_BYTES <= 65536, "LDS tile exceeds 64 KiB (gfx942)");

  // Byte offset of 16-byte chunk `ch` of tile row `row`: chunks XOR-swizzled by row % 8, so
  // the 8 rows of one 16-byte access phase hit 8 distinct bank groups.
  static BFP8_DEVICE int lds_offset(int row, int ch) { return row * BK + ((ch ^ (row & 7)) << 4); }
};

template <int ACC> struct AccVec;
template <> struct AccVec<16> { typedef f32x16 type; };
template <> struct AccVec<4> { typedef f32x4 type; };

template <int NK> BFP8_DEVICE typename AccVec<NK == 32 ? 16 : 4>::type mfma_fp8(uint64_t a, uint64_t b, const typename AccVec<NK == 32 ? 16 : 4>::type& c);
template <> BFP8_DEVICE f32x16 mfma_fp8<32>(uint64_t a, uint64_t b, const f32x16& c) { return mfma_32x32x16_fp8(a, b, c); }
template <> BFP8_DEVICE f32x4 mfma_fp8<16>(uint64_t a, uint64_t b, const f32x4& c) { return mfma_16x16x32_fp8(a, b, c); }

BFP8_DEVICE uint64_t lo64(const u32x4& v) { return (uint64_t)v.x | ((uint64_t)v.y << 32); }
BFP8_DEVICE uint64_t hi64(const u32x4& v) { return (uint64_t)v.z | ((uint64_t)v.w << 32); }

// Keeps the first `valid` bytes of a 16-byte chunk (valid may be <= 0 or >= 16).
BFP8_DEVICE void mask_chunk(u32x4& v, int valid) {
  auto keep = [](int n) -> uint32_t { return n >= 4 ? 0xffffffffu : (n <= 0 ? 0u : (1u << (8 * n)) - 1u); };
  v.x &= keep(valid);
  v.y &= keep(valid - 4);
  v.z &= keep(valid - 8);
  v.w &= keep(valid - 12);
}

// Triton's GROUP_SIZE_M order: group_m row-tiles share each column-tile sweep (L2 reuse).
BFP8_DEVICE void gemm_tile_coords(int pid, int tiles_m, int tiles_n, int group_m, int& tm, int& tn) {
  const int g = group_m < 1 ? 1 : group_m;
  int per_group = g * tiles_n;
  int group = pid / per_group;
  int first_m = group * g;
  int group_rows = tiles_m - first_m < g ? tiles_m - first_m : g;
  int in_group = pid % per_group;
  tm = first_m + in_group % group_rows;
  tn = in_group / group_rows;
}

// Converts and stores 4 consecutive outputs of row m starting at column n.
template <class Out>
BFP8_DEVICE void store4(typename Out::storage* row, int n, int N, bool vec, float v0, float v1, float v2, float v3) {
  typedef typename Out::storage T;
  if (vec && n + 3 < N) {
    if constexpr (sizeof(T) == 2) {
      uint64_t w = (uint64_t)Out::from_f32(v0) | ((uint64_t)Out::from_f32(v1) << 16) |
                   ((uint64_t)Out::from_f32(v2) << 32) | ((uint64_t)Out::from_f32(v3) << 48);
      gstore(reinterpret_cast<uint64_t*>(row + n), w);
    } else {
      u32x4 w;
      w.x = float_bits(v0);
      w.y = float_bits(v1);
      w.z = float_bits(v2);
      w.w = float_bits(v3);
      gstore(reinterpret_cast<u32x4*>(row + n), w);
    }
    return;
  }
  const float v[4] = {v0, v1, v2, v3};
  for (int e = 0; e < 4; ++e)
    if (n + e < N) gstore(row + n + e, Out::from_f32(v[e]));
}

template <int BM, int BN, int BK, int W, int NK, class Out>
BFP8_DEVICE void gemm_block_fp8_impl(const uint8_t* a, const float* a_scales, const uint8_t* b, const float* b_scales,
                                     void* c, int M, int N, int K, int as_stride_m, int as_stride_kb, int group_m,
                                     int k_splits, void* workspace) {
  typedef GemmLayout<BM, BN, BK, W, NK> L;
  typedef typename AccVec<L::ACC>::type Acc;
  BFP8_LDS_DECL(uint8_t, lds, L::LDS_BYTES);

  const int tid = (int)thread_id();
  const int lane = tid & 63;
  const int wave = uniform(tid >> 6);
  const int wave_m = wave / L::WN, wave_n = wave % L::WN;
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  int tile_m, tile_n;
  gemm_tile_coords((int)block_id_x(), tiles_m, tiles_n, group_m, tile_m, tile_n);
  const int m0 = tile_m * BM, n0 = tile_n * BN;
  const int KB = (K + 127) / 128;
  const int NB = (N + 127) / 128;
  const int iters = (K + BK - 1) / BK;
  // Split K: workgroup row block_id_y() of k_splits takes K tiles [it_begin, it_end).
  const int splits = k_splits < 1 ? 1 : (k_splits > iters ? iters : k_splits);
  const int split = (int)block_id_y();
  const int it_begin = (int)((long long)split * iters / splits), it_end = (int)((long long)(split + 1) * iters / splits);
  const bool aligned = K % 16 == 0 && (((uintptr_t)a | (uintptr_t)b) % 16) == 0;

  // ---- global -> LDS copy: thread tid moves chunk `ch` of rows row_a + j*RPP (A), row_b + j*RPP (B).
  const int ch = tid % L::CR;
  const int row_a = (L::A_CH < L::THREADS ? tid % L::A_CH : tid) / L::CR;
  const int row_b = (L::B_CH < L::THREADS ? tid % L::B_CH : tid) / L::CR;
  const int lds_a = L::lds_offset(row_a, ch);
  const int lds_b = BM * BK + L::lds_offset(row_b, ch);
  u32x4 ra[L::A_LOADS], rb[L::B_LOADS];
  auto store_lds = [&]() {
#pragma unroll
    for (int j = 0; j < L::A_LOADS; ++j) *reinterpret_cast<u32x4*>(lds + lds_a + j * L::RPP * BK) = ra[j];
#pragma unroll
    for (int j = 0; j < L::B_LOADS; ++j) *reinterpret_cast<u32x4*>(lds + lds_b + j * L::RPP * BK) = rb[j];
  };

  // ---- LDS -> fragments: lane reads row lane % NK of each MFMA tile, chunks g*CPL + c.
  const int frow = lane % NK, fgroup = lane / NK;
  int fa_off[L::CPL], fb_off[L::CPL];
#pragma unroll
  for (int cc = 0; cc < L::CPL; ++cc) {
    const int part = frow * BK + (((fgroup * L::CPL + cc) ^ (frow & 7)) << 4);
    fa_off[cc] = part + wave_m * L::TM * NK * BK;
    fb_off[cc] = BM * BK + part + wave_n * L::TN * NK * BK;
  }

  // ---- scales: lane's A rows (vector buffer loads, rows past M read 0 or padding, never
  // stored) and the waves' weight blocks (scalar loads, clamped into range).
  uint32_t as_off[L::TM];
#pragma unroll
  for (int i = 0; i < L::TM; ++i) as_off[i] = (uint32_t)((m0 + (wave_m * L::TM + i) * NK + frow) * as_stride_m) * 4u;
  const uint32_t as_bytes = (uint32_t)((M - 1) * as_stride_m + (KB - 1) * as_stride_kb + 1) * 4u;
  int bs_row[L::TN];
#pragma unroll
  for (int j = 0; j < L::TN; ++j) {
    const int nb = (n0 + (wave_n * L::TN + j) * NK) >> 7;
    bs_row[j] = (nb < NB ? nb : NB - 1) * KB;
  }

  Acc total[L::TM][L::TN];
#pragma unroll
  for (int i = 0; i < L::TM; ++i)
#pragma unroll
    for (int j = 0; j < L::TN; ++j) total[i][j] = Acc{};

  // Scales of K tile `it`, loaded before the tile's prefetch so that waiting for them at
  // the fold (vmcnt counts loads in order) does not wait for the prefetch too.
  struct Scales {
    float as[L::SUB][L::TM], bs[L::SUB][L::TN];
  };
  auto load_scales = [&](int it, bool last) {
    Scales sc;
#pragma unroll
    for (int sb = 0; sb < L::SUB; ++sb) {
      int kb = it * L::SUB + sb;
      if (L::SUB > 1 && last && kb >= KB) kb = KB - 1;  // a sub-block past K: never folded
      const Rsrc r = make_rsrc(a_scales + (size_t)kb * as_stride_kb, as_bytes - (uint32_t)(kb * as_stride_kb) * 4u);
#pragma unroll
      for (int i = 0; i < L::TM; ++i) sc.as[sb][i] = bits_float(buf_load_b32(r, as_off[i]));
#pragma unroll
      for (int j = 0; j < L::TN; ++j) sc.bs[sb][j] = sload(b_scales + bs_row[j] + kb);
    }
    return sc;
  };
  // The MFMAs and fold of one 128-wide K block (sub-block sb of the tile in LDS).
  auto compute_block = [&](int sb, const Scales& sc) {
    Acc acc[L::TM][L::TN];
#pragma unroll
    for (int cc = 0; cc < L::CPL; ++cc) {
      u32x4 fa[L::TM], fb[L::TN];
#pragma unroll
      for (int i = 0; i < L::TM; ++i) fa[i] = *reinterpret_cast<const u32x4*>(lds + fa_off[cc] + i * NK * BK + sb * 128);
#pragma unroll
      for (int j = 0; j < L::TN; ++j) fb[j] = *reinterpret_cast<const u32x4*>(lds + fb_off[cc] + j * NK * BK + sb * 128);
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int i = 0; i < L::TM; ++i)
#pragma unroll
          for (int j = 0; j < L::TN; ++j) {
            const uint64_t bop = h ? hi64(fb[j]) : lo64(fb[j]);
            const uint64_t aop = h ? hi64(fa[i]) : lo64(fa[i]);
            acc[i][j] = mfma_fp8<NK>(bop, aop, (cc == 0 && h == 0) ? Acc{} : acc[i][j]);
          }
    }
#pragma unroll
    for (int i = 0; i < L::TM; ++i)
#pragma unroll
      for (int j = 0; j < L::TN; ++j) fma_acc(total[i][j], acc[i][j], sc.as[sb][i] * sc.bs[sb][j]);
  };
  // All sub-blocks of K tile `it` (in LDS); in the last tile some may lie past K.
  auto compute_tile = [&](int it, bool last, const Scales& sc) {
#pragma unroll
    for (int sb = 0; sb < L::SUB; ++sb)
      if (L::SUB == 1 || !last || it * L::SUB + sb < KB) compute_block(sb, sc);
  };

  if (aligned) {
    // Loop-invariant lane offsets of this thread's chunks, relative to the K tile's start.
    uint32_t va[L::A_LOADS], vb[L::B_LOADS];
#pragma unroll
    for (int j = 0; j < L::A_LOADS; ++j) va[j] = (uint32_t)((m0 + row_a + j * L::RPP) * K + ch * 16);
#pragma unroll
    for (int j = 0; j < L::B_LOADS; ++j) vb[j] = (uint32_t)((n0 + row_b + j * L::RPP) * K + ch * 16);
    const uint32_t a_bytes = (uint32_t)M * (uint32_t)K, b_bytes = (uint32_t)N * (uint32_t)K;
    // Tile `it` into registers; `tail`: columns at or past K read zero.
    auto load = [&](int it, bool tail) {
      const int k0 = it * BK;
      const Rsrc ar = make_rsrc(a + k0, a_bytes - (uint32_t)k0), br = make_rsrc(b + k0, b_bytes - (uint32_t)k0);
      const int valid = K - k0 - ch * 16;
      const uint32_t oob = tail && valid <= 0 ? 0x80000000u : 0u;
#pragma unroll
      for (int j = 0; j < L::A_LOADS; ++j) ra[j] = buf_load_b128(ar, va[j] | oob);
#pragma unroll
      for (int j = 0; j < L::B_LOADS; ++j) rb[j] = buf_load_b128(br, vb[j] | oob);
    };
    load(it_begin, it_begin == iters - 1);
    int it = it_begin;
    // Main loop: tile it multiplies while tile it+1 loads; none of these is the last K
    // tile, so no masks.
    for (; it + 2 < it_end; ++it) {
      store_lds();
      sync_threads();
      const Scales sc = load_scales(it, false);
      load(it + 1, false);
      compute_tile(it, false, sc);
      sync_threads();
    }
    if (it + 1 < it_end) {  // peeled: the range's last tile loads, masked if it is K's last
      store_lds();
      sync_threads();
      const Scales sc = load_scales(it, false);
      load(it + 1, it + 1 == iters - 1);
      compute_tile(it, false, sc);
      sync_threads();
      ++it;
    }
    store_lds();
    sync_threads();
    compute_tile(it, it == iters - 1, load_scales(it, it == iters - 1));
  } else {
    // Unaligned rows: each 16-byte chunk is assembled from five aligned dword loads with
    // v_alignbyte; the descriptor starts at the dword holding the tile's first byte and
    // ends at the dword holding the tensor's last one (the same dword, so the same page).
    const uint32_t da = (uint32_t)((uintptr_t)a & 3), db = (uint32_t)((uintptr_t)b & 3);
    const uint32_t a_bytes = (uint32_t)M * (uint32_t)K, b_bytes = (uint32_t)N * (uint32_t)K;
    auto chunk = [&](const Rsrc& r, uint32_t pos, int valid) {
      const uint32_t base = pos & ~3u, s = pos & 3u;
      uint32_t w[5];
#pragma unroll
      for (int d = 0; d < 5; ++d) w[d] = buf_load_b32(r, base + 4u * d);
      u32x4 v;
      v.x = alignbyte(w[1], w[0], s);
      v.y = alignbyte(w[2], w[1], s);
      v.z = alignbyte(w[3], w[2], s);
      v.w = alignbyte(w[4], w[3], s);
      mask_chunk(v, valid);
      return v;
    };
    for (int it = it_begin; it < it_end; ++it) {
      const int k0 = it * BK;
      const Rsrc ar = make_rsrc(a + k0 - da, (a_bytes - (uint32_t)k0 + da + 3u) & ~3u);
      const Rsrc br = make_rsrc(b + k0 - db, (b_bytes - (uint32_t)k0 + db + 3u) & ~3u);
      const int valid = K - k0 - ch * 16;
#pragma unroll
      for (int j = 0; j < L::A_LOADS; ++j) {
        ra[j] = chunk(ar, da + (uint32_t)((m0 + row_a + j * L::RPP) * K + ch * 16), valid);
      }
#pragma unroll
      for (int j = 0; j < L::B_LOADS; ++j) {
        rb[j] = chunk(br, db + (uint32_t)((n0 + row_b + j * L::RPP) * K + ch * 16), valid);
      }
      const Scales sc = load_scales(it, it + 1 == iters);
      if (it > it_begin) sync_threads();  // the previous tile's fragments are read
      store_lds();
      sync_threads();
      compute_tile(it, it + 1 == iters, sc);
    }
  }

  // ---- split K: each split stores its fp32 partial tile to workspace[split][M][N]; the
  // split that arrives last at the tile's counter sums all partials in split order (the
  // result does not depend on arrival order), writes C and resets the counter.
  if (splits > 1) {
    float* part = reinterpret_cast<float*>(workspace);
    const size_t plane = (size_t)M * (size_t)N;
#pragma unroll
    for (int i = 0; i < L::TM; ++i) {
      const int m = m0 + (wave_m * L::TM + i) * NK + frow;
      if (m >= M) continue;
#pragma unroll
      for (int j = 0; j < L::TN; ++j) {
        const int nb = n0 + (wave_n * L::TN + j) * NK;
#pragma unroll
        for (int q = 0; q < L::ACC / 4; ++q) {
          const int n = nb + (NK == 32 ? 8 * q + 4 * fgroup : 4 * fgroup);
          const Acc& t = total[i][j];
          store4<out_f32>(part + split * plane + (size_t)m * N, n, N, N % 4 == 0 && (uintptr_t)workspace % 16 == 0, t[4 * q], t[4 * q + 1], t[4 * q + 2], t[4 * q + 3]);
        }
      }
    }
    uint32_t* counters = reinterpret_cast<uint32_t*>(part + (size_t)splits * plane);
    // The flag reuses the tile buffer (free once every wave passes the barrier), so split K
    // costs no LDS and no occupancy.
    uint32_t* arrived = reinterpret_cast<uint32_t*>(lds);
    fence_release_agent();
    sync_threads();
    if (tid == 0) arrived[0] = atomic_add_agent(counters + block_id_x(), 1u);
    sync_threads();
    if ((int)arrived[0] != splits - 1) return;
    fence_acquire_agent();
    if (tid == 0) counters[block_id_x()] = 0u;  // ready for the next launch
#pragma unroll
    for (int i = 0; i < L::TM; ++i)
#pragma unroll
      for (int j = 0; j < L::TN; ++j) {
        const int m = m0 + (wave_m * L::TM + i) * NK + frow;
        const int nb = n0 + (wave_n * L::TN + j) * NK;
#pragma unroll
        for (int q = 0; q < L::ACC / 4; ++q) {
          const int n = nb + (NK == 32 ? 8 * q + 4 * fgroup : 4 * fgroup);
          float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          if (m < M)
            for (int sp = 0; sp < splits; ++sp)
              for (int e = 0; e < 4; ++e)
                if (n + e < N) v[e] += gload(part + sp * plane + (size_t)m * N + n + e);
          for (int e = 0; e < 4; ++e) total[i][j][4 * q + e] = v[e];
        }
      }
  }

  // ---- epilogue: lane holds row m of each MFMA tile and groups of 4 consecutive columns.
  typedef typename Out::storage T;
  T* cout = reinterpret_cast<T*>(c);
  // 4-wide stores need N % 4 == 0 and a C aligned for them (any hipMalloc'd C is).
  const bool vec = N % 4 == 0 && (uintptr_t)c % 16 == 0;
#pragma unroll
  for (int i = 0; i < L::TM; ++i) {
    const int m = m0 + (wave_m * L::TM + i) * NK + frow;
    if (m >= M) continue;
    T* row = cout + (size_t)m * (size_t)N;
#pragma unroll
    for (int j = 0; j < L::TN; ++j) {
      const int nb = n0 + (wave_n * L::TN + j) * NK;
#pragma unroll
      for (int q = 0; q < L::ACC / 4; ++q) {
        const int n = nb + (NK == 32 ? 8 * q + 4 * fgroup : 4 * fgroup);
        const Acc& t = total[i][j];
        store4<Out>(row, n, N, vec, t[4 * q], t[4 * q + 1], t[4 * q + 2], t[4 * q + 3]);
      }
    }
  }
}

}  // namespace bfp8

// One kernel per tile shape and output type: gemm_block_fp8_<tag>_<out>, tag as in
// src/backend/hip/kernels.rs kernel_tag (e.g. m128n128k128w4s2i32).
#define BFP8_GEMM_INSTANCE(tag, out, BM, BN, BK, W, NK)                                                             \
  BFP8_KERNEL(gemm_block_fp8_##tag##_##out, (W) * 64,                                                               \
              (const uint8_t* a, const float* a_scales, const uint8_t* b, const float* b_scales, void* c, int M, \
               int N, int K, int as_stride_m, int as_stride_kb, int group_m, int k_splits, void* workspace),       \
              (::bfp8::gemm_block_fp8_impl<BM, BN, BK, W, NK, ::bfp8::out_##out>(                                \
                  a, a_scales, b, b_scales, c, M, N, K, as_stride_m, as_stride_kb, group_m, k_splits, workspace)))
