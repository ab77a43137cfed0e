// Hopper (sm_90a) block-scaled FP8 GEMM: TMA loads, a producer warpgroup, and one or two
// consumer warpgroups issuing wgmma (QGMMA) with fp32 promotion per 128-wide K block.
//   C[m, n] = sum_kb As[m, kb] * Bs[n / 128, kb] * sum_{k in kb} A[m, k] * B[n, k]
//
// Roles (threads = 128 per consumer warpgroup, then the producer: two warps, or a warpgroup
// when two consumers take its registers through setmaxnreg):
// - producer: warp 0 issues the TMA copies of the A and B tiles of each 128-wide K block into
//   a STAGES-deep ring, and of the block's activation scales when their layout allows a TMA
//   (AS_TMA below), or of a whole tile's scales with its first stage (AS_SLAB); warp 1 copies
//   the weight scale, and the activation scales of any other layout, with cp.async; on the
//   two-consumer C-buffer tiles warp 2 issues the C stores (STORE_WARP below). Each stage
//   has a `full` mbarrier (TMA bytes + 32 lanes' cp.async arrivals, or TMA bytes alone when the
//   slabs carry every scale) and an `empty` one (one arrival per consumer warp once its wgmmas
//   have read the stage).
// - consumer warpgroup w: 64 rows of the wgmma M side. Per K block: wait `full`, 4 wgmma
//   m64nNk32 into a fresh accumulator, wait for them, release the stage, then
//   total += acc * As * Bs. With two consumer warpgroups the tensor cores run one group's
//   wgmmas while the other promotes.
// - persistent grid: each CTA loops over work items, and the producer fills the ring for the
//   next tile while the consumers store the last one.
// - programmatic dependent launch (the launcher's default): the barrier set-up overlaps the
//   previous kernel's tail, every thread waits for that kernel before any global access, and
//   a CTA lets the next kernel launch once its consumers finish their last K block.
// SWAP (small M): the weight tile is the wgmma M side (64 rows per consumer warpgroup) and the
// BM tokens are its N side (16, 32 or 64), so a handful of tokens does not waste a 64-row MMA,
// and a 64-token tile can read 128 weight rows per A tile with two consumer warpgroups.
// Tiles: BN 32/64/128 lie inside one 128-wide weight-scale block; BN 144 and 192 (two
// consumers of 64x144 / 64x192, 192 the widest accumulators that fit the registers) span two,
// so each stage carries two
// weight scales. BN 256 covers two blocks in two waves of 128 columns: per K block each
// consumer issues, waits for and promotes one wave, then the other, so it holds one 64x128
// accumulator and 64x256 totals (64 + 128 registers, as 96 + 96 at 128x192).
// With 16-bit output, swapped tiles stage C through shared memory of their own; normal tiles
// store it by TMA from a C buffer of their own where the ring leaves room for one
// (TmaTile::C_TMA); two-consumer tiles without room stage it through the A and B tiles of the
// tile's last ring stage, which the consumers release only after C is out (full 128-byte lines
// per store instead of fragments scattered over 8 rows: 6% at M >= 1024 on the H200). The
// two-consumer tiles but 128x144 store a tile's C only once the next tile's first wgmmas are
// issued, so that the tensor cores run through the epilogue (DEFER_C, DEFER_STAGED below).
// Clusters (CL = 2): CTA pairs on vertically adjacent tiles multicast the shared weight tile;
// each consumer warp releases a stage on both CTAs' `empty` barriers.
// Partial tiles: TMA zero-fills rows past M / N and K past the end; stores are masked.
// TMA needs K % 16 == 0 (16-byte row pitch); the launcher routes other K to the mma.sync body.
#pragma once
#include "common.cuh"
#include "wgmma.cuh"

namespace bfp8 {

// A CUtensorMap, passed by value as a __grid_constant__ kernel parameter.
struct alignas(64) TmaDesc {
    uint64_t opaque[16];
};

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra LAB_WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const TmaDesc* map, uint32_t bar, int c_inner, int c_outer) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c_inner), "r"(c_outer)
        : "memory");
}
// The same with an L2 cache policy (policy_evict_first).
__device__ __forceinline__ void tma_load_2d_hint(uint32_t dst, const TmaDesc* map, uint32_t bar, int c_inner, int c_outer, uint64_t policy) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c_inner), "r"(c_outer), "l"(policy)
        : "memory");
}
// An L2 policy under which the lines a copy brings in are the first to be evicted.
__device__ __forceinline__ uint64_t policy_evict_first() {
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(p));
    return p;
}
// A 1-D bulk copy of `bytes` (a multiple of 16) from 16-byte aligned global memory.
__device__ __forceinline__ void bulk_load_1d(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(reinterpret_cast<uint64_t>(src)), "r"(bytes), "r"(bar)
                 : "memory");
}
// TMA store of a box from shared memory at `src` to the tensor at (c_inner, c_outer) (parts
// past the tensor's ends are not written), in this thread's current bulk group.
__device__ __forceinline__ void tma_store_2d(const TmaDesc* map, uint32_t src, int c_inner, int c_outer) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
                 "r"(src), "r"(c_inner), "r"(c_outer)
                 : "memory");
}
// Named barrier `id` (warp-uniform) over `COUNT` threads (whole warps), and its arrive-only
// half: the thread's earlier memory accesses are ordered before those of the threads that then
// pass the barrier, and it goes on without waiting.
template <int COUNT> __device__ __forceinline__ void named_bar_sync(int id) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(COUNT) : "memory"); }
template <int COUNT> __device__ __forceinline__ void named_bar_arrive(int id) { asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(COUNT) : "memory"); }
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until this thread's bulk groups have read their shared-memory sources (so the
// sources may be rewritten).
__device__ __forceinline__ void bulk_wait_read0() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// Waits until this thread's bulk groups are complete (their writes done).
__device__ __forceinline__ void bulk_wait0() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Arrives on `bar` once this thread's earlier cp.async copies have landed (the barrier's
// expected count includes the arrival).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}
// TMA multicast: the box lands at the same shared-memory offset in every CTA of `cta_mask`
// (bit i = cluster rank i) and completes bytes on each one's barrier at offset `bar`.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const TmaDesc* map, uint32_t bar, int c_inner, int c_outer, uint16_t cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c_inner), "r"(c_outer), "h"(cta_mask)
        : "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// This CTA's shared-memory address `addr` as seen in cluster rank `cta`'s shared memory.
__device__ __forceinline__ uint32_t cluster_map(uint32_t addr, uint32_t cta) {
    uint32_t r;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(cta));
    return r;
}
// Arrives on the barrier at offset `bar` in cluster rank `cta`'s shared memory.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t cta) {
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_map(bar, cta)) : "memory");
}
// 16 bytes into another CTA's shared memory (`addr` from cluster_map).
__device__ __forceinline__ void st_cluster_v4(uint32_t addr, float a, float b, float c, float d) {
    asm volatile("st.shared::cluster.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "f"(a), "f"(b), "f"(c), "f"(d) : "memory");
}
// Arrives on the barrier at offset `bar` in cluster rank `cta`, releasing this thread's
// earlier shared-memory reads and writes to the cluster.
__device__ __forceinline__ void mbar_arrive_release_cluster(uint32_t bar, uint32_t cta) {
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_map(bar, cta)) : "memory");
}
// mbar_wait that acquires what the arrivals released at cluster scope.
__device__ __forceinline__ void mbar_wait_acquire_cluster(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\n"
        "LAB_WAIT:\n"
        "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra LAB_WAIT;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// Every thread of every CTA in the cluster (release/acquire: barrier inits become visible).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
template <int REGS> __device__ __forceinline__ void setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS)); }
template <int REGS> __device__ __forceinline__ void setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS)); }

// W = num_warps: 4 per consumer warpgroup, one warpgroup per 64 rows of the wgmma M side, so
// W says which operand is on that side (BM 16/32 tiles always swap; m64n128w8 is swapped).
// CL = cluster size: 2 pairs CTAs on vertically adjacent tiles, which share the weight tile,
// so each loads half of it and multicasts it to both (a quarter less L2 traffic at 128x128;
// on the H200 that gained under 1%, so L2 reads do not limit these tiles).
// KS (with CL = 2, one-consumer normal tiles): the cluster's two CTAs split each tile's K range
// instead, and the second adds its sums into the first's through distributed shared memory
// (no workspace, no second launch): half the K blocks per CTA where a tile's K loop, not the
// SM count, bounds small M.
// Whether a C buffer of BM x BN 16-bit outputs, 1024-aligned after `end`, still fits the shared
// memory (with the 1024 bytes of alignment slack the launch adds).
// Rows of a C store box: a consumer warp's 16 (cuda/launch_abi.rs C_BOX_ROWS), or for the
// CTA's last C on the store-warp tiles the tile's 128 (C_LAST_BOX_ROWS), as DeepGEMM stores a
// tile: 3 TMA stores of 128 x 64 instead of 24 of 16 x 64 on 128x192.
constexpr int C_BOX_ROWS = 16, C_LAST_BOX_ROWS = 128;
constexpr bool c_buffer_fits(int end, int bm, int bn) { return (end + 1023) / 1024 * 1024 + bm * bn * 2 + 1024 <= 227 * 1024; }

template <int BM, int BN, int W, int STAGES, int CL = 1, bool KS = false>
struct TmaTile {
    static constexpr int MC = KS ? 1 : CL;  // CTAs sharing one weight tile by multicast
    static constexpr bool SWAP = W != 4 * BM / 64;
    static constexpr int P_ROWS = SWAP ? BN : BM;  // wgmma M side (64 per consumer warpgroup)
    static constexpr int NWAVES = !SWAP && BN == 256 ? 2 : 1;  // wgmma N-side waves per K block
    static constexpr int WN = SWAP ? BM : BN / NWAVES;          // wgmma N side of one wave
    static constexpr int CONSUMERS = P_ROWS / 64;
    // The producer is two warps; with two consumers it is a whole warpgroup, so that
    // setmaxnreg can move its registers to the consumers. Without the two idle warps a
    // one-consumer tile leaves room for more resident CTAs (H200: M=64 N=18432 K=7168 went
    // from 47-49 to 42 us).
    static constexpr int THREADS = 128 * CONSUMERS + (CONSUMERS == 2 ? 128 : 64);
    // Weight-scale blocks (128 wide) a BN tile can touch: a 192-wide tile starts at a block
    // edge or in a block's middle, so it spans two.
    static constexpr int SB = BN > 128 ? 2 : 1;
    static constexpr int A_BYTES = BM * 128, B_BYTES = BN * 128;
    // Activation scales by TMA (AsLoad below) on the two-consumer normal tiles only: there it
    // gained 1-2% at M >= 1024, while the one-consumer and swapped tiles, whose few K blocks
    // per tile leave the load's latency exposed, lost 4-10% (up to 2.7x at K = 512) on the
    // H200 (2026-12-01).
    static constexpr bool AS_TMA = CONSUMERS == 2 && !SWAP;
    // A stage's activation scales: BM rows of AS_ROW floats (a row-major TMA box holds 4 K
    // blocks of each row; the other ways fill the first BM floats).
    static constexpr int AS_ROW = AS_TMA ? 4 : 1, AS_BYTES = BM * AS_ROW * 4;
    // [A tiles | B tiles | A scales | B scales | full barriers | empty barriers | loads issued]
    static constexpr int OFF_B = STAGES * A_BYTES;
    static constexpr int OFF_AS = OFF_B + STAGES * B_BYTES;
    static constexpr int OFF_BS = OFF_AS + STAGES * AS_BYTES;
    static constexpr int OFF_BAR = (OFF_BS + STAGES * SB * 4 + 7) / 8 * 8;
    // The ring positions the producer has loaded so far (a counter that only grows), for the
    // store warp of the two-consumer tiles (STORE_WARP in the kernel), and at +8 the CTA's
    // last tile origin, which that warp hands to the consumers.
    static constexpr int OFF_LOADS = OFF_BAR + 2 * STAGES * 8, LOADS_BYTES = CONSUMERS == 2 && !SWAP && MC == 1 ? 16 : 0;
    // Swapped tiles stage their 16-bit C through shared memory, one region per consumer warp:
    // BM token rows of 16 weight columns, pitch C_PITCH elements (48 bytes: 16-byte aligned
    // rows, and the fragment writes of one instruction hit distinct banks).
    static constexpr int C_PITCH = 24;
    static constexpr int OFF_C = (OFF_LOADS + LOADS_BYTES + 15) / 16 * 16;
    // The one-consumer deep-ring tiles (one CTA per SM anyway) load a tile's scales once, with
    // the tile's first stage, when the layouts allow: the activation scales as one TMA box of
    // up to SLAB_KB K blocks x BM rows, the weight scales of its K range as one bulk copy.
    // Copied per stage, their latency held up the stages at M = 64-128 (H200, 2026-12-01: the
    // 64x32 tile at M=64 N=4096 K=7168 ran 12.6 us without the per-stage activation-scale
    // copies, 14.0 with; per-stage TMAs 15.8, a per-tile slab of 4-byte cp.async 24.8). Two
    // slabs, so that the producer fills the next tile's while the consumers read this one's.
    // Only where the ring leaves room for both slabs and a C buffer: a deeper ring without the
    // slabs is the other choice (64x64 s12; timing-only builds on the H200: at M=64 N=7168
    // K=18432, where the weights stream from memory, 64x64 without slabs ran 37.6-38.0 us in
    // 10-12 stages against 40.1 for the shipped 6 stages and 40.6 for 8 stages with slabs).
    static constexpr int SLAB_KB = 64;
    // Weight scales of a K range [kb, kb + SLAB_KB) copied from the 16-byte boundary at or
    // below kb: at most SLAB_KB + 3 floats, rounded up to whole 16-byte pieces.
    static constexpr int BS_SLAB = (SLAB_KB + 3 + 3) / 4 * 4;
    static constexpr int C_END = OFF_C + (SWAP ? W * BM * C_PITCH * 2 : 0);
    static constexpr int OFF_SLAB = (C_END + 127) / 128 * 128;  // (a TMA destination)
    static constexpr int AS_SLAB_BYTES = SLAB_KB * BM * 4;
    static constexpr int OFF_BS_SLAB = OFF_SLAB + 2 * AS_SLAB_BYTES;
    static constexpr int SLABS_END = OFF_BS_SLAB + 2 * BS_SLAB * 4;
    static constexpr bool AS_SLAB = CONSUMERS == 1 && !SWAP && STAGES >= 8 && MC == 1 && c_buffer_fits(SLABS_END, BM, BN);
    static constexpr int SLAB_END = AS_SLAB ? SLABS_END : C_END;
    // KS: the second CTA's sums (BM x BN fp32, 16 bytes per consumer thread at a time) and two
    // barriers: `xfull` (its 128 consumer threads have written them) and `xempty` (the first
    // CTA's have read them), each used in one CTA of the pair.
    static constexpr int OFF_XBAR = (SLAB_END + 15) / 16 * 16, OFF_XBUF = OFF_XBAR + 16;
    static constexpr int X_END = KS ? OFF_XBUF + BM * BN * 4 : SLAB_END;
    // Normal tiles whose ring leaves room for it get a C buffer of their own (BM x BN 16-bit
    // outputs): each warp writes its 16 rows there and stores them by TMA, in boxes of 16 rows
    // x C_BOX columns (swizzled rows of 2 * C_BOX bytes), then goes on to the next tile while
    // the TMA writes (the stores no longer hold up the wgmmas, and fill whole sectors; the
    // one-consumer tiles' fragment stores filled half of each, ncu at 128x4096x7168).
    static constexpr int C_BOX = BN % 64 == 0 ? 64 : BN % 32 == 0 ? 32 : 16;
    static constexpr int OFF_CBUF = (X_END + 1023) / 1024 * 1024;  // (the swizzle's atom)
    static constexpr bool C_TMA = !SWAP && c_buffer_fits(X_END, BM, BN);
    static constexpr int SMEM = C_TMA ? OFF_CBUF + BM * BN * 2 : X_END;
    // With 16-bit C, the C-buffer tiles whose C waits for the next tile and goes out through
    // the producer warpgroup's store warp (DEFER_C / STORE_WARP in the kernel), and the last
    // C in boxes of the tile's rows (the launch's second C map): two consumers, not 128x144
    // (which stores at once), not clustered. (cuda/build_cuda.rs Tile::store_warp mirrors it:
    // the launch encodes that map only for these tiles.)
    static constexpr bool STORE_WARP = C_TMA && CONSUMERS == 2 && BN != 144 && CL == 1;
    static_assert(P_ROWS % 64 == 0 && CONSUMERS >= 1 && CONSUMERS <= 2 && W == 4 * CONSUMERS, "one or two consumer warpgroups");
    static_assert(WN == 16 || WN == 32 || WN == 64 || WN == 128 || ((WN == 144 || WN == 192) && !SWAP && CONSUMERS == 2), "wgmma N");
    static_assert((BN <= 128 && 128 % BN == 0) || BN == 144 || BN == 192 || (BN == 256 && NWAVES == 2 && CONSUMERS == 2),
                  "a BN tile lies inside one weight-scale block, or 144 / 192 wide spans two, or 256 wide covers two in waves");
    static_assert(MC == 1 || (MC == 2 && !SWAP && BN % 16 == 0), "multicast pairs normal tiles (each CTA loads BN / 2 weight rows)");
    static_assert(!KS || (CL == 2 && CONSUMERS == 1 && !SWAP), "K-split pairs of one-consumer normal tiles");
};

// How a stage's activation scales arrive (the launcher picks by layout and alignment):
// - AS_CP_ASYNC: 4-byte cp.async per row from the scale warp (any strides);
// - AS_TMA_ROWS: row-major (K-block stride 1, 16-byte row pitch): one TMA box of 4 K blocks x
//   BM rows, the block's scale at column kb % 4;
// - AS_TMA_COLS: column-major (row stride 1, 16-byte K-block pitch): one TMA box of BM rows.
// On AS_SLAB tiles a TMA mode loads the tile's slab instead: the argument then also carries
// AS_BS_BULK (the weight scales by one bulk copy per tile; needs KB % 4 == 0 and a 16-byte
// aligned base) and, from bit AS_SLAB_SHIFT, the box's K blocks (at most SLAB_KB, a multiple
// of 4 for row-major boxes, no wider than the tensor's KB).
enum AsLoad : int { AS_CP_ASYNC = 0, AS_TMA_ROWS = 1, AS_TMA_COLS = 2, AS_MODE_MASK = 3, AS_BS_BULK = 4, AS_SLAB_SHIFT = 8 };

// A ring position is the ring counter g (stage g % S, phase (g / S) & 1) or, in the K loop's
// turns unrolled over the stages, a RingPos: a stage known at compile time, so that the stage
// addresses are constants (as DeepGEMM's, whose K loop is unrolled over its stages).
struct RingPos {
    uint32_t ph;  // the stage's barrier phase
    int s;        // the stage
};
template <int S> __device__ __forceinline__ int ring_stage(RingPos p) { return p.s; }
template <int S> __device__ __forceinline__ uint32_t ring_phase(RingPos p) { return p.ph; }
template <int S> __device__ __forceinline__ RingPos ring_next(RingPos p) { return p.s + 1 < S ? RingPos{p.ph, p.s + 1} : RingPos{p.ph ^ 1u, 0}; }
template <int S> __device__ __forceinline__ uint32_t ring_next(uint32_t g) { return g + 1; }
template <int S> __device__ __forceinline__ int ring_stage(uint32_t g) { return g % S; }
template <int S> __device__ __forceinline__ uint32_t ring_phase(uint32_t g) { return (g / S) & 1; }
// A compile-time int as a value (to pick a generic lambda's instantiation).
template <typename X> struct IsInt { static constexpr bool value = false; };
template <> struct IsInt<int> { static constexpr bool value = true; };
template <int V> struct IntC {
    static constexpr int value = V;
};

// A value the compiler must keep rather than recompute.
__device__ __forceinline__ uint64_t opaque_u64(uint64_t v) {
    asm volatile("" : "+l"(v));
    return v;
}
__device__ __forceinline__ int opaque_i32(int v) {
    asm volatile("" : "+r"(v));
    return v;
}
// Keeps the compiler from moving reads of wgmma accumulator registers above the wait that
// makes them valid (the asm "redefines" them).
template <int R> __device__ __forceinline__ void fence_regs(float* r) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// Whether every 8-output group of a C row starting at a multiple of 8 is 16-byte aligned.
template <typename OutT> __device__ __forceinline__ bool c_rows_vec16(const OutT* C, int N) {
    return N % 8 == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
}
// Stores 8 staged 16-bit outputs (`v`, read from shared memory as 16 bytes) to `dst` =
// C[row, col..), clipped at N: one 16-byte store when `vec` (c_rows_vec16) and the group is
// whole, else element by element (from registers, unrolled: a runtime index into `v` would
// put it in local memory).
template <typename OutT> __device__ __forceinline__ void store_row8(OutT* dst, uint4 v, int col, int N, bool vec) {
    if (vec && col + 8 <= N) {
        *reinterpret_cast<uint4*>(dst) = v;
    } else {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int k = 0; k < 8; ++k) {
            const uint16_t bits = (uint16_t)(w[k / 2] >> (16 * (k % 2)));
            if (col + k < N) *reinterpret_cast<uint16_t*>(dst + k) = bits;
        }
    }
}

// One element of C (the swapped tiles hold C transposed, so pairs are not adjacent in memory);
// with split K it is added to the fp32 workspace.
template <typename OutT>
__device__ __forceinline__ void store_one(OutT* C, float* ws, bool split, int M, int N, int row, int col, float v) {
    if (row >= M || col >= N) return;
    if (split) atomicAdd(ws + (size_t)row * N + col, v);
    else C[(size_t)row * N + col] = from_f32<OutT>(v);
}

// stmatrix .x4 of 16-bit C: four 8x8 fragments, t[0..3] rows 0-7 and 8-15 of one 8-column group
// of a consumer's fragment layout and t[4..7] those of the next group, packed to OutT pairs;
// lane l gives the shared address of row l % 8 of fragment l / 8.
template <typename OutT> __device__ __forceinline__ void stmatrix_x4(uint32_t addr, const float* t) {
    const uint32_t r0 = pack2<OutT>(t[0], t[1]), r1 = pack2<OutT>(t[2], t[3]), r2 = pack2<OutT>(t[4], t[5]), r3 = pack2<OutT>(t[6], t[7]);
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3) : "memory");
}

// Persistent: CTA b takes work items b, b + gridDim.x, ... (item = split * tiles + tile, tiles
// in grouped order, so CTAs running together share A and B tiles in L2). Producer and consumers walk the same sequence of K blocks, so one running
// counter `g` gives every K block its ring stage (g % STAGES) and barrier phase; the producer
// runs ahead into the next tile while the consumers store this one.
template <int BM, int BN, int W, int STAGES, int CL, bool KS, typename OutT>
__device__ __forceinline__ void gemm_block_fp8_tma_body(const TmaDesc* tma_a, const TmaDesc* tma_b, const TmaDesc* tma_as, const TmaDesc* tma_c,
                                                        const TmaDesc* tma_c_last,
                                                        const float* __restrict__ As, const float* __restrict__ Bs, OutT* __restrict__ C,
                                                        float* __restrict__ ws, int M, int N, int K, int as_stride_m, int as_stride_kb,
                                                        int group_m, int splits, int as_load, int c_by_tma) {
    using T = TmaTile<BM, BN, W, STAGES, CL, KS>;
    if constexpr (!T::AS_TMA && !T::AS_SLAB) as_load = AS_CP_ASYNC;  // (the launcher asks only these tiles)
    // Whether this launch's tiles take their scales from per-tile slabs (AS_SLAB; the
    // launcher asks a TMA only when a tile's K range fits the box), and the box's K blocks.
    const bool slab = T::AS_SLAB && (as_load & AS_MODE_MASK) != AS_CP_ASYNC;
    const bool bs_bulk = slab && (as_load & AS_BS_BULK);
    const int slab_kb = as_load >> AS_SLAB_SHIFT;
    as_load &= AS_MODE_MASK;
    extern __shared__ uint8_t smem_raw[];
    // Aligned by offsetting smem_raw itself (not through an integer cast), so the compiler
    // still knows the scale reads below are shared memory: LDS rather than generic LD, which
    // the H200 profile showed stalling every promotion on a long scoreboard.
    uint8_t* smem = smem_raw + ((1024u - (smem_u32(smem_raw) & 1023u)) & 1023u);
    const uint32_t s_base = smem_u32(smem);
    float* sAS = reinterpret_cast<float*>(smem + T::OFF_AS);
    float* sBS = reinterpret_cast<float*>(smem + T::OFF_BS);
    const uint32_t full0 = s_base + T::OFF_BAR, empty0 = full0 + STAGES * 8;

    // With a multicast cluster, work items are pairs of vertically adjacent tiles (rank r takes
    // the tile at 2 * pair row + r; one past the last M tile reads zeros and stores nothing);
    // with KS, single tiles whose K range rank r splits with its peer.
    const uint32_t rank = CL > 1 ? cluster_ctarank() : 0;
    constexpr int MC = T::MC;
    const int num_pid_m = (M + BM * MC - 1) / (BM * MC), num_pid_n = (N + BN - 1) / BN;
    const int in_group = group_m * num_pid_n;
    const int first_item = blockIdx.x / CL, item_step = gridDim.x / CL;
    const int KB = (K + 127) / 128;
    const int work = num_pid_m * num_pid_n * splits;
    const bool split = splits > 1;
    // C by TMA store (T::C_TMA, 16-bit C; the launcher passes a map of C when its layout
    // allows one): the C buffer holds one 16-row piece per consumer warp, each stored as
    // BN / C_BOX boxes.
    constexpr bool TMA_C = T::C_TMA && sizeof(OutT) == 2;
    const bool c_tma = TMA_C && c_by_tma && !split;
    constexpr int C_BOX_BYTES = C_BOX_ROWS * T::C_BOX * 2, C_PIECE_BYTES = C_BOX_ROWS * BN * 2;
    // The TMA stores of the piece at shared address `src`: C rows [row, row + 16), columns from n0.
    auto store_c_piece = [&](uint32_t src, int n0, int row) {
#pragma unroll
        for (int b = 0; b < BN / T::C_BOX; ++b) tma_store_2d(tma_c, src + b * C_BOX_BYTES, n0 + b * T::C_BOX, row);
    };
    // 16-bit C by TMA on the two-consumer tiles waits in `total` until the next tile's first
    // wgmmas are issued, and is stored while they run, so that the tensor cores do not idle
    // through the epilogue (H200: 1.5-2.6% at M >= 1024 with several tiles per CTA). 128x144
    // (1-3.5% slower that way) and the one-consumer tiles (0.5-2.8%) store at once, and so do
    // CTA pairs (CL = 2, tuning builds only), which no GPU run has checked deferred.
    constexpr bool DEFER_C = TMA_C && T::STORE_WARP;
    // STORE_WARP: on the deferred tiles warp 2 of the producer warpgroup (otherwise idle)
    // issues the C stores instead of the consumer warps, whose per-box store loops held them
    // between the next tile's first wgmmas and their wait (named barriers C_FREE and C_FULL
    // over the 8 consumer warps and that warp). H200: 1.3-1.5% faster on 128x256 s3 at
    // 4096x24576x1536 and 4096x7168x2048, level on 128x192 s4; 4% slower on 128x144 s5 at
    // 128x18432x7168, whose C store is not deferred. A CTA's last tile, which no next tile's
    // wgmmas hide, each consumer warp stores itself as soon as its piece is written (H200 ncu,
    // fixed clock: 0.992x cycles at 4096x24576x1536, 0.996x at 4096x7168x2048, level at two
    // 128x192 shapes).
    constexpr bool STORE_WARP = DEFER_C;
    static_assert(!STORE_WARP || T::LOADS_BYTES > 0, "the store warp paces its stores by the producer's loads");
    static_assert(!STORE_WARP || BM == C_LAST_BOX_ROWS, "a store-warp tile's last C goes out in boxes of the tile's rows");
    volatile uint32_t* const loads_issued = reinterpret_cast<volatile uint32_t*>(smem + T::OFF_LOADS);
    constexpr uint32_t ALL_LOADED = ~0u;  // (loads_issued once the producer has loaded its last position)
    // (STORE_WARP) the CTA's last tile's origin (m0, n0), written by the store warp before its
    // last C_FREE arrival: worked out again by the consumers, that item's divisions stood
    // between their last C's writes and its TMA stores.
    volatile int* const last_origin = reinterpret_cast<volatile int*>(smem + T::OFF_LOADS + 8);
    // One pair of barriers per consumer warpgroup (C_FREE + w, C_FULL + w, each over the
    // warpgroup and the store warp): the consumers wait only for the store warp, not for the
    // other warpgroup, and signal C_FULL without waiting, so that their tile change does not
    // bring the two warpgroups' turns on the tensor cores into step.
    constexpr int C_FREE = 2, C_FULL = 2 + T::CONSUMERS, C_SYNC_THREADS = 128 + 32;
    // Staged C (below): warpgroup w arrives on barrier C_STAGED + 2 w + (tile parity) once its
    // wgmmas are done with a tile's last stage, and waits on the other's before writing its C
    // into that stage; two barriers a warpgroup, so that a warpgroup a tile ahead (one-block
    // tiles) never arrives twice on one before the other has waited on it.
    constexpr int C_STAGED = 2 + 2 * T::CONSUMERS;
    constexpr int C_LAST_WRITTEN = C_STAGED + 2 * T::CONSUMERS;  // (both consumer warpgroups have written the CTA's last C)
    static_assert(C_LAST_WRITTEN < 16, "16 named barriers");
    // Work item -> tile origin and K-block range [kb_begin, kb_begin + nkb).
    auto item = [&](int w, int& m0, int& n0, int& kb_begin, int& nkb) {
        const int tiles = num_pid_m * num_pid_n, tile = w % tiles, part = w / tiles;
        const int first_m = (tile / in_group) * group_m;
        const int group_rows = min(num_pid_m - first_m, group_m);
        m0 = ((first_m + (tile % in_group) % group_rows) * MC + (KS ? 0 : rank)) * BM;
        n0 = ((tile % in_group) / group_rows) * BN;
        // (Divided here rather than once up front: a quotient live across the role split
        // spilled in the 128x256 tile.)
        const int kb_per = (KB + splits - 1) / splits;
        kb_begin = part * kb_per;
        nkb = max(0, min(KB, kb_begin + kb_per) - kb_begin);
        if constexpr (KS) {
            // Rank r: the r-th half, rounded up (the second is empty for a 1-block range).
            const int half = (nkb + 1) / 2;
            kb_begin += rank * half;
            nkb = max(0, min(nkb - (int)rank * half, half));
        }
    };

    // Register split (2 consumers): the CTA holds 384 x 168 (launch bound) = 64512 registers;
    // 128 x 72 (producer) + 256 x 216 (consumers) = 64512, or on the 192-wide tiles 128 x 56 +
    // 256 x 224, whose consumers read a K block's scales one block ahead (AHEAD below): at 216
    // they spilled. A larger .inc would never be granted.
    constexpr int PRODUCER_REGS = BN == 192 ? 56 : 72, CONSUMER_REGS = BN == 192 ? 224 : 216;
    static_assert(128 * PRODUCER_REGS + 256 * CONSUMER_REGS == 384 * 168, "the register split adds up to the launch allocation");
    // Warpgroup and warp indices through __shfl_sync, which ptxas knows to be warp-uniform:
    // computed plainly, the role branches look divergent to it and it serializes every wgmma
    // (C7518 "wgmma.mma_async instructions are serialized").
    const int tid = threadIdx.x, lane = tid % 32;
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0), wwarp = __shfl_sync(0xffffffffu, (tid % 128) / 32, 0);
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            // The producer's expect_tx, and the scale warp's lanes unless the slabs carry
            // every scale.
            mbar_init(full0 + 8 * s, bs_bulk ? 1 : 1 + 32);
            // Each consumer warp of every CTA in the cluster releases the stage: the peer's
            // multicast writes this CTA's stage too.
            mbar_init(empty0 + 8 * s, T::CONSUMERS * 4 * MC);
        }
        if constexpr (KS) {
            mbar_init(s_base + T::OFF_XBAR, 128);
            mbar_init(s_base + T::OFF_XBAR + 8, 128);
        }
        if constexpr (STORE_WARP) *loads_issued = 0;
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        // (The maps are parameters, which no earlier kernel writes.)
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tma_a)) : "memory");
        asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tma_b)) : "memory");
        if (as_load != AS_CP_ASYNC) asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tma_as)) : "memory");
    }
    if constexpr (CL > 1) cluster_sync();  // the peer's barriers exist before any remote use
    else __syncthreads();
    // Launched as a programmatic dependent launch, this CTA may have started while the
    // previous kernel on the stream still runs: the set-up above touched only shared memory
    // and parameters, and no thread reads or writes global memory before that kernel has
    // completed (a no-op under a plain launch).
    griddep_wait();

    if (wg == T::CONSUMERS) {
        // Producer: warp 0 issues the TMA copies, warp 1 the scale copies, warp 2 (STORE_WARP)
        // the C stores (the rest of a producer warpgroup only lends its registers to the
        // consumers through setmaxnreg).
        if constexpr (T::CONSUMERS == 2) setmaxnreg_dec<PRODUCER_REGS>();
        // The whole of warp 0 walks the ring (lane 0 issues), so that the stage, coordinates and
        // addresses are warp-uniform: ptxas keeps them in uniform registers and hands them to
        // the TMA without a move loop per copy. (Not on 128x256 s4, where it moved a consumer
        // value into local memory.)
        constexpr bool WARP_PRODUCER = !(BN == 256 && STAGES == 4);
        if (wwarp == 0 && (WARP_PRODUCER || lane == 0)) {
            const uint32_t stage_bytes = T::A_BYTES + T::B_BYTES + (slab ? 0 : as_load == AS_TMA_ROWS ? T::AS_BYTES : as_load == AS_TMA_COLS ? BM * 4 : 0);
            // Slab b was last filled for the tile whose last K block was ring position
            // slab_last_b (~0u: never; two scalars, as an array indexed by parity sits in
            // local memory).
            uint32_t slab_last_0 = ~0u, slab_last_1 = ~0u;
            int tile_n = 0;  // tiles with K blocks so far (the slab parity)
            // Swapped tiles with one row of tiles (M fits the tile: decode) read each weight
            // tile in one CTA only, so it streams through L2 as evict-first lines and does not
            // push out the activations every CTA reads (H200: 0.8-7.5% at M = 1-16). The normal
            // 64-row tiles measured -6% to +3% that way (64x32 slower even with more rows of
            // tiles), so they load as before.
            // (Swapped tiles are never clustered, and the hint sits on the MC == 1 load.)
            const bool stream_b = T::SWAP && num_pid_m == 1;
            uint64_t policy_b = 0;
            if constexpr (T::SWAP) policy_b = policy_evict_first();
            uint32_t g = 0;
            for (int w = first_item; w < work; w += item_step) {
                int m0, n0, kb_begin, nkb;
                item(w, m0, n0, kb_begin, nkb);
                const int buf = tile_n & 1;
                if (slab && nkb > 0) {
                    // The slab is rewritten once its last tile's last stage is released (its
                    // consumers have read every scale of it by then). Within a ring's length
                    // that release has not been waited for by the refills yet; beyond it, it
                    // has (and the barrier may have moved on a phase, so waiting is wrong).
                    const uint32_t last = buf ? slab_last_1 : slab_last_0;
                    if (last != ~0u && g - last <= STAGES) mbar_wait(empty0 + 8 * (last % STAGES), (last / STAGES) & 1);
                    (buf ? slab_last_1 : slab_last_0) = g + nkb - 1;
                    ++tile_n;
                }
                for (int i = 0; i < nkb; ++i, ++g) {
                    const int s = g % STAGES;
                    if (g >= STAGES) mbar_wait(empty0 + 8 * s, ((g / STAGES) - 1) & 1);
                    const uint32_t full = full0 + 8 * s;
                    // The tile's first stage also brings its slabs: the activation scales from
                    // the 16-byte boundary at or below kb_begin for a row-major box (whose inner
                    // coordinate must fall on one), the weight scales from the same boundary
                    // (a bulk copy's source must be aligned). (Loaded in chunks of 8 blocks
                    // with the stages that first need them, the gain was gone: H200, 64x4096x7168
                    // 12.9 us whole, 14.3 in chunks, 14.1 with the per-stage copies.)
                    const bool with_slab = slab && i == 0;
                    const int bs0 = kb_begin & ~3, as0 = as_load == AS_TMA_ROWS ? bs0 : kb_begin;
                    const uint32_t bs_bytes = bs_bulk ? (uint32_t)((kb_begin + nkb + 3) / 4 * 4 - bs0) * 4 : 0;
                    if (lane != 0) continue;  // (lane 0 issues)
                    mbar_arrive_expect_tx(full, stage_bytes + (with_slab ? (uint32_t)slab_kb * BM * 4 + bs_bytes : 0));
                    auto load_slabs = [&] {
                        const uint32_t dst = s_base + T::OFF_SLAB + buf * T::AS_SLAB_BYTES;
                        if (as_load == AS_TMA_ROWS) tma_load_2d(dst, tma_as, full, as0, m0);
                        else tma_load_2d(dst, tma_as, full, m0, as0);
                        if (bs_bulk) bulk_load_1d(s_base + T::OFF_BS_SLAB + buf * T::BS_SLAB * 4, Bs + (size_t)(n0 / 128) * KB + bs0, bs_bytes, full);
                    };
                    const int kb = kb_begin + i, k0 = kb * 128;
                    tma_load_2d(s_base + s * T::A_BYTES, tma_a, full, k0, m0);
                    // (Rows past M and K blocks past the end land as zeros.)
                    const uint32_t as_dst = s_base + T::OFF_AS + s * T::AS_BYTES;
                    if (!slab && as_load == AS_TMA_ROWS) tma_load_2d(as_dst, tma_as, full, kb & ~3, m0);
                    else if (!slab && as_load == AS_TMA_COLS) tma_load_2d(as_dst, tma_as, full, m0, kb);
                    if constexpr (MC == 1) {
                        if (stream_b) tma_load_2d_hint(s_base + T::OFF_B + s * T::B_BYTES, tma_b, full, k0, n0, policy_b);
                        else tma_load_2d(s_base + T::OFF_B + s * T::B_BYTES, tma_b, full, k0, n0);
                    } else {
                        // This CTA's half of the weight tile, to both CTAs (the map's box is BN / 2 rows).
                        constexpr int HALF = BN / 2;
                        tma_load_2d_multicast(s_base + T::OFF_B + s * T::B_BYTES + rank * HALF * 128, tma_b, full, k0, n0 + rank * HALF, 0x3);
                    }
                    // (After the stage's own loads: issued first, the slabs delayed them,
                    // 0.5-1.5% on the H200.)
                    if (with_slab) load_slabs();
                    if constexpr (STORE_WARP) *loads_issued = g + 1;
                }
            }
            if constexpr (STORE_WARP) if (lane == 0) *loads_issued = ALL_LOADED;
            if constexpr (MC > 1) {
                // Stay until both CTAs' consumers released the last STAGES loads: the peer's
                // consumers arrive on this CTA's barriers until then.
                for (int i = 0; i < STAGES; ++i, ++g)
                    if (g >= STAGES) mbar_wait(empty0 + 8 * (g % STAGES), ((g / STAGES) - 1) & 1);
            }
        } else if (STORE_WARP && wwarp == 2 && c_by_tma && splits == 1) {  // (c_tma, spelled so that item() divides by a known 1)
            // C stores (STORE_WARP): once the consumers have written a tile's C into the C
            // buffer (C_FULL), lane 0 issues its TMA stores, one piece (a consumer warp's 16
            // rows) per block of the next tile the consumers release, and frees the buffer
            // (C_FREE) once the stores have read it.
            uint32_t g = 0;  // (after += nkb) the ring position of the next item's first K block
            // Item w's coordinates, or with `known` already those of the item after it, worked
            // out for its wait last turn (so each item's divisions run once).
            int m0 = 0, n0 = 0, kb_begin = 0, nkb = 0;
            bool known = false;
            for (int w = first_item; w < work; w += item_step) {
                if (!known) item(w, m0, n0, kb_begin, nkb);
                known = false;
                if (nkb == 0) continue;  // (as the consumers skip it)
                g += nkb;
                if (w + item_step >= work && lane == 0) {
                    last_origin[0] = m0;
                    last_origin[1] = n0;
                }
#pragma unroll
                for (int c = 0; c < T::CONSUMERS; ++c) named_bar_arrive<C_SYNC_THREADS>(C_FREE + c);
                if (w + item_step >= work) break;  // (the CTA's last tile: its consumers store it)
#pragma unroll
                for (int c = 0; c < T::CONSUMERS; ++c) named_bar_sync<C_SYNC_THREADS>(C_FULL + c);
                // The first piece waits until the consumers have released the next tile's first
                // block (they are in it now): its release lets the producer queue the next
                // loads ahead of the stores. H200: 1.003x over 7 shapes, 1.006-1.007x at
                // N=24576 K=1536 (whose consumers waited for data at 8% of their ncu samples,
                // DeepGEMM's at 1%); all pieces after the second block's release, 0.9995x.
                int m1 = 0, n1 = 0, kb1 = 0, nkb1 = 0;
                if (w + item_step < work) {
                    item(w + item_step, m1, n1, kb1, nkb1);
                    known = true;
                }
                // Piece p goes out once the next tile's block min(p, nkb1 - 1) is released, so
                // that each refill's loads queue behind one piece (8 KB on 128x256) rather than
                // the tile's whole C (H200: 1.008-1.009x at 4096x24576x1536 and 4096x7168x2048).
                // A block's release shows as the producer's load of the position a turn of the
                // ring on (it waited for that release), read from the count of positions it has
                // loaded, which only grows. Waiting on the block's `empty` phase instead hung:
                // while a store issue stalled this warp (the TMA queue full of C), the consumers
                // ran a turn of the ring past the block, the barrier's phase parity came round
                // again, and the wait then needed a release only the tile after next would make,
                // whose C waits for this warp (H200: 128x128 s5 at 128x24576x1536 within 25 s of
                // stress, every time).
#pragma unroll 1
                for (int piece = 0; piece < T::CONSUMERS * 4; ++piece) {
                    if (nkb1 > 0) {
                        const uint32_t gb = g + min(piece, nkb1 - 1);
                        while (*loads_issued < gb + STAGES + 1) __nanosleep(64);
                    }
                    if (lane == 0) store_c_piece(s_base + T::OFF_CBUF + piece * C_PIECE_BYTES, n0, m0 + piece * C_BOX_ROWS);
                }
                if (lane == 0) {
                    bulk_commit();
                    bulk_wait_read0();
                }
                m0 = m1;
                n0 = n1;
                kb_begin = kb1;
                nkb = nkb1;
            }
            if (lane == 0) bulk_wait0();  // (the shared memory outlives the stores)
        } else if (wwarp == 1 && !bs_bulk) {
            // Scales: asynchronous 4-byte copies straight into the stage, whose completion
            // arrives on the stage's `full` barrier (cp.async.mbarrier.arrive.noinc, one arrival
            // per lane), so this warp never waits on a load and runs as far ahead as the ring.
            // (Through registers it waited one L2 round trip per K block: for short K that
            // chain, not bandwidth, set the pace.)
            uint32_t g = 0;
            for (int w = first_item; w < work; w += item_step) {
                int m0, n0, kb_begin, nkb;
                item(w, m0, n0, kb_begin, nkb);
                // Lane b copies weight-scale block n0 / 128 + b (zero past the last block).
                const int sb_block = n0 / 128 + lane;
                const bool sb_in = lane < T::SB && sb_block < (N + 127) / 128;
                const float* bs_row = Bs + (size_t)(sb_in ? sb_block : 0) * KB;
                for (int i = 0; i < nkb; ++i, ++g) {
                    const int s = g % STAGES, kb = kb_begin + i;
                    if (g >= STAGES) mbar_wait(empty0 + 8 * s, ((g / STAGES) - 1) & 1);
                    if (as_load == AS_CP_ASYNC)
#pragma unroll
                        for (int j = 0; j < (BM + 31) / 32; ++j) {
                            const int r = lane + 32 * j;
                            if (r < BM) {
                                const bool in = m0 + r < M;  // rows past M read as zero
                                const float* src = in ? As + (size_t)(m0 + r) * as_stride_m + (size_t)kb * as_stride_kb : As;
                                cp_async4(smem_u32(sAS + s * (T::AS_BYTES / 4) + r), src, in ? 4 : 0);
                            }
                        }
                    if (lane < T::SB) cp_async4(smem_u32(sBS + s * T::SB + lane), sb_in ? bs_row + kb : Bs, sb_in ? 4 : 0);
                    cp_async_mbar_arrive_noinc(full0 + 8 * s);
                }
            }
        }
        return;
    }

    // Consumer warpgroup `wg`: rows [wg * 64, wg * 64 + 64) of the wgmma M side.
    // (Registers: PRODUCER_REGS / CONSUMER_REGS above.)
    if constexpr (T::CONSUMERS == 2) setmaxnreg_inc<CONSUMER_REGS>();
    constexpr int R = T::WN / 2;          // accumulator registers per thread (one wave)
    constexpr int RT = R * T::NWAVES;     // promoted totals per thread
    // Fragment: register 4j + 2h + e holds (row lrow + 8h, col 8j + 2 * (lane % 4) + e).
    const int lrow = wg * 64 + wwarp * 16 + lane / 4;
    const int lcol = 2 * (lane % 4);
    float total[RT], acc[R];

    // This warp is done with ring stage s (on every CTA of the cluster: the peer multicasts into it).
    auto release_stage = [&](int s) {
        __syncwarp();
        if (lane == 0) {
            if constexpr (MC == 1) mbar_arrive(empty0 + 8 * s);
            else
                for (uint32_t c = 0; c < MC; ++c) mbar_arrive_cluster(empty0 + 8 * s, c);
        }
    };
    // wgmma descriptors of ring stage 0: P is the wgmma M side (this warpgroup's 64 rows), Q
    // the N side. A stage or K slice further on only adds its byte offset / 16 to the start
    // address field (bits 0-13; shared memory stays below 256 KiB, so it never carries out).
    // Built per K block instead, the descriptors cost ~30 dependent uniform-datapath
    // instructions between the `full` wait and the first wgmma (17% of the 128x128 tile's
    // warp-stall samples on the H200).
    constexpr int P_STRIDE = (T::SWAP ? T::B_BYTES : T::A_BYTES) / 16, Q_STRIDE = (T::SWAP ? T::A_BYTES : T::B_BYTES) / 16;
    // (Opaque to the compiler, which would otherwise rebuild them inside the loop.)
    const uint64_t desc_p0 = opaque_u64(wgmma_desc_sw128(s_base + (T::SWAP ? T::OFF_B : 0) + wg * 64 * 128));
    const uint64_t desc_q0 = opaque_u64(wgmma_desc_sw128(s_base + (T::SWAP ? 0 : T::OFF_B)));
    // Issues the 4 wgmmas of ring position g, N-side wave v, into `acc` (a fresh accumulator);
    // `landed`: the stage's `full` barrier was already waited on (a second try-wait of a
    // completed phase still costs its latency, right before the wgmmas).
    auto issue = [&](float* acc, auto g, int v, bool landed) {
        const int s = ring_stage<STAGES>(g);
        if (v == 0 && !landed) mbar_wait(full0 + 8 * s, ring_phase<STAGES>(g));
        // Wave v reads weight rows [128 v, 128 v + 128): whole 1024-byte swizzle atoms further on.
        const uint64_t dp = desc_p0 + (uint64_t)(s * P_STRIDE), dq = desc_q0 + (uint64_t)(s * Q_STRIDE + v * T::WN * 128 / 16);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) Wgmma<T::WN>::run(acc, dp + 2 * ks, dq + 2 * ks, ks > 0);
        wgmma_commit();
    };
    // The scales of ring position g, read once per K block. Normal tiles hold rows lrow and
    // lrow + 8: raw = {As[lrow], As[lrow + 8], Bs of each weight-scale block}. Swapped tiles
    // hold token columns: raw[2j + e] = As * Bs of column 8j + lcol + e.
    // AHEAD: read one K block ahead of use (the normal tiles: 64-row, 128x128/144/192/256). Read in
    // the block itself, ptxas placed the reads and the products that need them between the
    // block's wgmmas, whose issue then waited for shared memory (H200 ncu of 128x256: 7% of
    // the stall samples on those products). The H200 A/B: 128x256 +0.6-3%, 64x64 +2%; under
    // ncu's fixed clock 0.981-0.983x the cycles on 128x192 (on 224 registers: at 216 it
    // spilled) and 0.949x on 128x144 with several tiles a CTA (1.011x with one, level timed).
    // The swapped tiles lost 3% that way, so they read in the block.
    constexpr bool AHEAD = !T::SWAP;
    constexpr int NRAW = T::SWAP ? R / 2 : 2 + T::SB;
    // A-scale row r of K block kb sits at [r * as_rs + (kb & as_cmask)] of its stage, or in
    // the tile's slab at [r * slab_kb + j] (row-major box) or [j * BM + r] (column-major),
    // j = lead + kbi (kbi: the block's index in its tile; lead: kb_begin % 4 for a row-major
    // box, else 0); with AS_BS_BULK its weight scale at [kb_begin % 4 + kbi] of the tile's
    // weight-scale slab.
    const bool rows = as_load == AS_TMA_ROWS;
    const int as_rs = slab ? (rows ? slab_kb : 1) : rows ? T::AS_ROW : 1, as_cmask = rows ? 3 : 0;
    const float* slab_as = sAS;  // the current tile's slabs (set per tile below)
    const float* slab_bs = sBS;
    int slab_lead = 0, bs_lead = 0;
    auto scales = [&](auto g, int kb, int kbi, float* raw) {
        const int s = ring_stage<STAGES>(g), j = slab_lead + kbi;
        const float* sa = !slab ? sAS + s * (T::AS_BYTES / 4) + (kb & as_cmask) : slab_as + (rows ? j : j * BM);
        if constexpr (!T::SWAP) {
            raw[0] = sa[lrow * as_rs];
            raw[1] = sa[(lrow + 8) * as_rs];
#pragma unroll
            for (int b = 0; b < T::SB; ++b) raw[2 + b] = bs_bulk ? slab_bs[bs_lead + kbi] : sBS[s * T::SB + b];
        } else {
            const float sb = sBS[s * T::SB];
#pragma unroll
            for (int j = 0; j < R / 4; ++j) {
                raw[2 * j] = sa[(8 * j + lcol) * as_rs] * sb;
                raw[2 * j + 1] = sa[(8 * j + lcol + 1) * as_rs] * sb;
            }
        }
    };
    // Retires ring position g, wave v, from `acc`: wait for its wgmmas, release the stage, then
    // total += acc * As * Bs; `release` = false keeps the stage (for the tile's next wave, or
    // for the staged C below).
    // (Overlapping this promotion with more wgmmas measured slower every way tried: a second
    // accumulator (two-consumer tiles, and alternating on one-consumer tiles), column halves,
    // turn-taking; cuda/EXPERIMENTS.md.)
    // jb: on the 144/192-wide tiles IntC<J0>, J0 the tile's first 8-column group in its second
    // weight-scale block; elsewhere an int the promotion does not need.
    auto retire = [&](float* acc, auto g, const float* raw, auto jb, int v, bool release) {
        // sc[2b + h]: row lrow + 8h times weight-scale block b (normal tiles).
        float sc[T::SWAP ? 1 : 4];
        if constexpr (!T::SWAP) {
#pragma unroll
            for (int b = 0; b < T::SB; ++b) {
                if (T::NWAVES > 1 && b != v) continue;
                sc[2 * b] = raw[0] * raw[2 + b];
                sc[2 * b + 1] = raw[1] * raw[2 + b];
            }
        }
        wgmma_wait0();
        fence_regs<R>(acc);
        if (release) release_stage(ring_stage<STAGES>(g));
        float* tot = total + v * R;
        // J0 (compile time, so no per-column select): groups j >= J0 take the second block.
        auto promote = [&](auto j0) {
            constexpr int J0 = decltype(j0)::value;
#pragma unroll
            for (int j = 0; j < R / 4; ++j) {
                const int h = T::NWAVES > 1 ? 2 * v : j >= J0 ? 2 : 0;
                const float x0 = T::SWAP ? raw[2 * j] : sc[h], x1 = T::SWAP ? raw[2 * j + 1] : sc[h];
                const float y0 = T::SWAP ? raw[2 * j] : sc[h + 1], y1 = T::SWAP ? raw[2 * j + 1] : sc[h + 1];
                tot[4 * j + 0] = fmaf(x0, acc[4 * j + 0], tot[4 * j + 0]);
                tot[4 * j + 1] = fmaf(x1, acc[4 * j + 1], tot[4 * j + 1]);
                tot[4 * j + 2] = fmaf(y0, acc[4 * j + 2], tot[4 * j + 2]);
                tot[4 * j + 3] = fmaf(y1, acc[4 * j + 3], tot[4 * j + 3]);
            }
        };
        if constexpr (!IsInt<decltype(jb)>::value) {
            promote(jb);  // the 144/192-wide tiles: chosen once per tile, outside the K loop
        } else {
            promote(IntC<R / 4>{});
        }
    };

    // Staged C (16-bit outputs of the two-consumer normal tiles): a warp's 16-row piece, in
    // C_PASSES passes of BN / C_PASSES columns with rows C_PITCH bytes apart (whole groups of
    // 8 chunks, for the swizzle), fits its warpgroup's tile of a ring stage (B for warpgroup
    // 0, A for warpgroup 1). One-consumer tiles measured no gain from it (`git show 7641bc1:BENCHMARKS.md`).
    constexpr int C_PASSES = BN > 128 ? 2 : 1;
    constexpr int C_PITCH = (BN / 8 / C_PASSES + 7) / 8 * 8 * 16;
    constexpr bool STAGE_C = !T::SWAP && T::CONSUMERS == 2 && sizeof(OutT) == 2 && 4 * 16 * C_PITCH <= T::A_BYTES &&
                             4 * 16 * C_PITCH <= T::B_BYTES;
    // (C by TMA) this warp's piece of the C buffer.
    uint8_t* const c_piece = smem + (TMA_C ? T::OFF_CBUF : 0) + (wg * 4 + wwarp) * C_PIECE_BYTES;
    uint32_t g = 0;
    int staged_tiles = 0;  // (STAGE_C) tiles whose C went out through a ring stage so far
    // The tile's K blocks i in [i0, nkb - 1) (all but its last) at ring positions g + i,
    // through block(pos, i): up to stage 0 one by one, then (when UNROLL) whole turns of the
    // ring unrolled over the stages (RingPos: constant stage addresses), then the rest one by one.
    auto ring_blocks = [&](auto unroll, int i0, int nkb, auto block) {
        int i = i0;
        if constexpr (decltype(unroll)::value != 0) {
            for (; i + 1 < nkb && ring_stage<STAGES>(g + i) != 0; ++i) block(g + i, i);
            for (; i + STAGES < nkb; i += STAGES) {
                const uint32_t ph = ring_phase<STAGES>(g + i);
#pragma unroll
                for (int st = 0; st < STAGES; ++st) block(RingPos{ph, st}, i + st);
            }
        }
        for (; i + 1 < nkb; ++i) block(g + i, i);
    };
    // C by TMA (c_tma): this warp's piece of tile (m0, n0) from `total` into the C buffer,
    // then out by TMA stores: its own (`own`; always without STORE_WARP) or the store warp's.
    auto store_c_tma = [&](int m0, int n0, bool own) {
        if constexpr (TMA_C) {
            if constexpr (STORE_WARP) {
                named_bar_sync<C_SYNC_THREADS>(C_FREE + wg);  // the previous tile's stores have read the buffer
            } else {
                if (lane == 0) bulk_wait_read0();  // the previous tile's stores have read the piece
                __syncwarp();
            }
            // Fragment (row r = lane / 4 + 8h, 8-column group j) into box j / (C_BOX / 8),
            // 16-byte chunk j % (C_BOX / 8) of its row, at the TMA swizzle's place: the chunk
            // index XOR address bits 7-9 (128-byte rows), 7-8 (64) or 7 (32), so the 8 rows of
            // one store hit distinct banks.
            const int sl = opaque_i32(lane);
            auto swizzle = [](int r) { return T::C_BOX == 64 ? r & 7 : T::C_BOX == 32 ? (r >> 1) & 3 : (r >> 2) & 1; };
            // A store-warp tile's last C (`own`) goes out in BN / C_BOX boxes of the tile's 128
            // rows: a warp's 16 rows at row 64 wg + 16 wwarp of each box (rows 16 apart keep
            // each row's place in the swizzle).
            const bool last_boxes = STORE_WARP && own;
            const uint32_t last_rows = s_base + T::OFF_CBUF + wg * 64 * (2 * T::C_BOX);  // (the warpgroup's)
            if constexpr (DEFER_C) {
                // On the deferred tiles (where it was measured: 0.1-0.9% ahead of 4-byte stores)
                // by stmatrix (stmatrix_x4: groups j and j + 1).
                constexpr int CHUNKS = T::C_BOX / 8;
                const int q = sl / 8, r = sl % 8 + 8 * (q & 1), sw = swizzle(r);
                const uint32_t row_addr = (last_boxes ? last_rows + wwarp * C_BOX_ROWS * (2 * T::C_BOX) : smem_u32(c_piece)) + r * (2 * T::C_BOX);
                const int box_bytes = last_boxes ? C_LAST_BOX_ROWS * T::C_BOX * 2 : C_BOX_BYTES;
#pragma unroll
                for (int j = 0; j < RT / 4; j += 2) {
                    const int c = j % CHUNKS + (q >> 1);
                    stmatrix_x4<OutT>(row_addr + (j / CHUNKS) * box_bytes + ((c ^ sw) * 16), total + 4 * j);
                }
            } else {
#pragma unroll
                for (int j = 0; j < RT / 4; ++j) {
                    constexpr int CHUNKS = T::C_BOX / 8;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int r = sl / 4 + 8 * h;
                        const int off = (j / CHUNKS) * C_BOX_BYTES + r * (2 * T::C_BOX) + ((j % CHUNKS) ^ swizzle(r)) * 16 + (sl % 4) * 4;
                        *reinterpret_cast<uint32_t*>(c_piece + off) = pack2<OutT>(total[4 * j + 2 * h], total[4 * j + 2 * h + 1]);
                    }
                }
            }
            fence_proxy_async_smem();
            if constexpr (STORE_WARP) {
                if (!own) {
                    named_bar_arrive<C_SYNC_THREADS>(C_FULL + wg);  // the store warp issues the stores
                    return;
                }
                // Once both warpgroups have written their rows, one thread stores the tile, at
                // the origin the store warp handed over (m0, n0 are not passed for it).
                named_bar_sync<256>(C_LAST_WRITTEN);
                if (wg == 0 && wwarp == 0 && lane == 0) {
                    const int last_m0 = last_origin[0], last_n0 = last_origin[1];
#pragma unroll
                    for (int b = 0; b < BN / T::C_BOX; ++b)
                        tma_store_2d(tma_c_last, s_base + T::OFF_CBUF + b * C_LAST_BOX_ROWS * T::C_BOX * 2, last_n0 + b * T::C_BOX, last_m0);
                    bulk_commit();
                }
                return;
            }
            __syncwarp();
            if (lane == 0) {
                store_c_piece(smem_u32(c_piece), n0, m0 + wg * 64 + wwarp * C_BOX_ROWS);
                bulk_commit();
            }
        }
    };
    // Staged C (STAGE_C) of tile (m0, n0) through ring stage s, which is released after it.
    // The last stage's A and B tiles (every consumer's wgmmas are done with them after
    // the barrier) hold each warp's 16-row piece of C: warpgroup 0's in the B tile,
    // warpgroup 1's in the A tile, a 192- or 256-wide tile in two passes of half its
    // columns. The fragments go in by stmatrix (four 8x8 fragments an instruction; H200: 0.1-0.4%
    // ahead of 4-byte stores on 128x256 s4), 16-byte chunk c of row r at chunk c ^ (r % 8)
    // (no bank conflicts), and come back as 16-byte pieces of rows, so each warp store
    // writes whole 128-byte lines (fragments stored directly scatter over 8 rows).
    auto store_c_staged = [&](int m0, int n0, int s) {
        if constexpr (STAGE_C) {
            named_bar_sync<256>(C_STAGED + 2 * (1 - wg) + (staged_tiles & 1));  // the other warpgroup is done with the stage
            ++staged_tiles;
            uint8_t* region = smem + (wg == 0 ? T::OFF_B + s * T::B_BYTES : s * T::A_BYTES) + wwarp * 16 * C_PITCH;
            const int row0 = m0 + wg * 64 + wwarp * 16;
            const bool vec = c_rows_vec16(C, N);
            // (Opaque, so that ptxas derives the lane's offsets here, not before the work loop.)
            const int sl = opaque_i32(lane);
#pragma unroll
            for (int p = 0; p < C_PASSES; ++p) {
                constexpr int JP = RT / 4 / C_PASSES, CH = BN / 8 / C_PASSES;  // 8-column groups per pass
                if constexpr (JP % 2 == 0) {
                    // stmatrix_x4: groups jj and jj + 1, as the C-buffer store above.
                    const int q = sl / 8, r = sl % 8 + 8 * (q & 1);
#pragma unroll
                    for (int jj = 0; jj < JP; jj += 2) {
                        const int j = p * JP + jj, c = jj + (q >> 1);
                        const int chunk = (c & ~7) | ((c ^ r) & 7);
                        stmatrix_x4<OutT>(smem_u32(region) + r * C_PITCH + chunk * 16, total + 4 * j);
                    }
                } else {
                    // (144 wide: 9 groups a pass, so 4-byte stores)
#pragma unroll
                    for (int jj = 0; jj < JP; ++jj) {
                        const int j = p * JP + jj;
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int r = sl / 4 + 8 * h;
                            const int chunk = (jj & ~7) | ((jj ^ r) & 7);
                            const uint32_t v = pack2<OutT>(total[4 * j + 2 * h], total[4 * j + 2 * h + 1]);
                            *reinterpret_cast<uint32_t*>(region + r * C_PITCH + chunk * 16 + (sl % 4) * 4) = v;
                        }
                    }
                }
                __syncwarp();
#pragma unroll
                for (int t = 0; t < (16 * CH + 31) / 32; ++t) {
                    const int idx = t * 32 + sl, r = idx / CH, c = idx % CH;
                    if (16 * CH % 32 != 0 && idx >= 16 * CH) continue;  // 144 wide: 9 chunks a row
                    const int chunk = (c & ~7) | ((c ^ r) & 7);
                    const int row = row0 + r, col = n0 + p * (BN / C_PASSES) + 8 * c;
                    if (row >= M || col >= N) continue;
                    store_row8(C + (size_t)row * N + col, *reinterpret_cast<const uint4*>(region + r * C_PITCH + chunk * 16), col, N, vec);
                }
                __syncwarp();  // the next pass overwrites the piece
            }
            release_stage(s);  // after the reads (__syncwarp inside)
        }
    };
    // The same for staged C on the tiles without room for a C buffer (128x256 s4, 128x128 s6):
    // the tile's last stage holds its C until the next tile's first wgmmas are issued (H200:
    // 0.1-1.1% at 128x256 s4, level at 128x128 s6).
    constexpr bool DEFER_STAGED = STAGE_C && !T::C_TMA && BN != 144 && CL == 1;
    // The first K block apart, so that a hook can run after its first wgmmas.
    constexpr bool PEEL = DEFER_C || DEFER_STAGED;
    bool c_pending = false;  // (PEEL) tile (c_m0, c_n0)'s C is in `total` (staged: in ring stage c_s)
    int c_m0 = 0, c_n0 = 0, c_s = 0;
    // (PEEL) Runs right after a tile's first wgmmas are issued: stores the pending tile,
    // then clears the totals for this one.
    auto start_tile = [&] {
        if constexpr (PEEL) {
            if (c_pending) {
                if constexpr (DEFER_C) if (c_tma) store_c_tma(c_m0, c_n0, false);
                if constexpr (DEFER_STAGED) if (!c_tma) store_c_staged(c_m0, c_n0, c_s);
                c_pending = false;
            }
#pragma unroll
            for (int i = 0; i < RT; ++i) total[i] = 0.f;
        }
    };
    auto no_hook = [] {};
    int tile_n = 0;  // tiles with K blocks so far (the slab parity, as the producer counts)
    uint32_t exchanges = 0;  // (KS) tiles whose sums the pair has added so far
    for (int w = first_item; w < work; w += item_step) {
        int m0, n0, kb_begin, nkb;
        item(w, m0, n0, kb_begin, nkb);
        // (KS: a part without K blocks still adds its zeros, so that the pair stays in step.)
        const bool no_blocks = nkb == 0;
        if (no_blocks && !KS) continue;
        if (slab && !no_blocks) {
            const int buf = tile_n++ & 1;
            slab_as = reinterpret_cast<const float*>(smem + T::OFF_SLAB + buf * T::AS_SLAB_BYTES);
            slab_bs = reinterpret_cast<const float*>(smem + T::OFF_BS_SLAB + buf * T::BS_SLAB * 4);
            slab_lead = rows ? kb_begin & 3 : 0;
            bs_lead = kb_begin & 3;
        }
        if constexpr (!PEEL)
#pragma unroll
            for (int i = 0; i < RT; ++i) total[i] = 0.f;
        const int jb = (128 - n0 % 128) / 8;
        // 16-bit C goes out through the tile's last ring stage (below), which this warp
        // keeps until then; split K adds fp32 into the workspace directly.
        const bool staged = STAGE_C && !split && !c_tma;
        float raw[NRAW];
        if (no_blocks) {
        } else if constexpr (AHEAD) {
            // One K block: its waves in turn, the next block waited for and its scales read
            // after the last wave's wgmmas, the stage released after the last wave. (After
            // the first wave instead, a late next block held up the second wave, which does
            // not need it: H200 ncu of 128x256, 3% of the samples on that wait.) The tile's
            // last block goes apart, so that the steady loop has no runtime condition (ptxas
            // reloaded the split flag inside it, between a wave's wgmmas).
            // j0: on the 144/192-wide tiles IntC<J0>, the tile's second-block column group,
            // picked once outside the K loop (one loop per start offset, as DeepGEMM compiles
            // one per offset); elsewhere jb, which the promotion does not need.
            auto k_loop = [&](auto j0) {
                // (kbn: the next block's K-block index, for its scale column.)
                auto k_block = [&](auto gi, int kbn, bool has_next, bool release, auto hook) {
                    float next[NRAW];
#pragma unroll
                    for (int v = 0; v < T::NWAVES; ++v) {
                        issue(acc, gi, v, true);
                        if (v == 0) hook();
                        if (v + 1 == T::NWAVES && has_next) {
                            const auto gn = ring_next<STAGES>(gi);
                            mbar_wait(full0 + 8 * ring_stage<STAGES>(gn), ring_phase<STAGES>(gn));
                            scales(gn, kbn, kbn - kb_begin, next);
                        }
                        retire(acc, gi, raw, j0, v, release && v + 1 == T::NWAVES);
                    }
                    if (has_next)
#pragma unroll
                        for (int r = 0; r < NRAW; ++r) raw[r] = next[r];
                };
                mbar_wait(full0 + 8 * (g % STAGES), (g / STAGES) & 1);  // the tile's first block
                scales(g, kb_begin, 0, raw);
                // (PEEL: the first block apart, its first wave's wgmmas followed by start_tile.)
                if constexpr (PEEL) k_block(g, kb_begin + 1, nkb > 1, nkb > 1 || !staged, start_tile);
                if (!PEEL || nkb > 1) {
                    // 128x144 keeps its steady blocks one by one: its eight loops unrolled over
                    // the ring ran 5% slower at 128x18432x7168.
                    ring_blocks(IntC<BN != 144>{}, PEEL ? 1 : 0, nkb, [&](auto pos, int i) { k_block(pos, kb_begin + i + 1, true, true, no_hook); });
                    k_block(g + nkb - 1, 0, false, !staged, no_hook);
                }
            };
            if constexpr (BN == 192) {
                // A 192-wide tile starts at a block edge (second block from column 128) or in
                // a block's middle (from column 64).
                if (jb == 16) k_loop(IntC<16>{});
                else k_loop(IntC<8>{});
            } else if constexpr (BN == 144) {
                // A 144-wide tile starts 16 t columns into a block (t = tile % 8): its second
                // block starts at group jb = 16 - 2 t.
                switch (jb) {
                    case 16: k_loop(IntC<16>{}); break;
                    case 14: k_loop(IntC<14>{}); break;
                    case 12: k_loop(IntC<12>{}); break;
                    case 10: k_loop(IntC<10>{}); break;
                    case 8: k_loop(IntC<8>{}); break;
                    case 6: k_loop(IntC<6>{}); break;
                    case 4: k_loop(IntC<4>{}); break;
                    default: k_loop(IntC<2>{}); break;
                }
            } else {
                k_loop(jb);
            }
        } else {
            // The swapped tiles: one loop over the tile's blocks, scales read in the block.
            for (int i = 0; i < nkb; ++i) {
                issue(acc, g + i, 0, false);
                scales(g + i, kb_begin + i, i, raw);
                retire(acc, g + i, raw, jb, 0, !(staged && i + 1 == nkb));
            }
        }
        g += nkb;
        // This CTA's last K block is done: under a programmatic dependent launch the next
        // kernel on the stream may launch now and take the SMs as CTAs exit. (Triggered once
        // the producer's last load was issued, it cost 2% at 128x7168x18432 on the H200;
        // left to the CTAs' exit, it gained half as much.)
        if (w + item_step >= work && tid == 0) griddep_launch_dependents();

        if constexpr (KS) {
            // Rank 1's sums go into rank 0's exchange buffer (16 bytes per thread at a time,
            // consecutive threads adjacent), and rank 0 adds them and stores C. The buffer is
            // rewritten once rank 0 has read it (xempty, not awaited before the first tile's);
            // rank 0 signals that only when a next tile follows, so that no arrival reaches
            // a CTA that has left.
            const uint32_t xfull = s_base + T::OFF_XBAR, xempty = xfull + 8;
            const int xoff = T::OFF_XBUF + tid * 16;  // this thread's first 16 bytes; then every 128 * 16
            if (rank != 0) {
                if (exchanges > 0) mbar_wait_acquire_cluster(xempty, (exchanges - 1) & 1);
                const uint32_t remote = cluster_map(s_base + xoff, 0);
#pragma unroll
                for (int i = 0; i < RT / 4; ++i) st_cluster_v4(remote + i * 128 * 16, total[4 * i], total[4 * i + 1], total[4 * i + 2], total[4 * i + 3]);
                mbar_arrive_release_cluster(xfull, 0);
                ++exchanges;
                continue;
            }
            mbar_wait_acquire_cluster(xfull, exchanges & 1);
#pragma unroll
            for (int i = 0; i < RT / 4; ++i) {
                const float4 v = *reinterpret_cast<const float4*>(smem + xoff + i * 128 * 16);
                total[4 * i] += v.x;
                total[4 * i + 1] += v.y;
                total[4 * i + 2] += v.z;
                total[4 * i + 3] += v.w;
            }
            if (w + item_step < work) mbar_arrive_release_cluster(xempty, 1);
            ++exchanges;
        }

        if constexpr (TMA_C) if (c_tma) {
            if constexpr (DEFER_C) {
                c_pending = true;
                c_m0 = m0;
                c_n0 = n0;
            } else {
                store_c_tma(m0, n0, true);
            }
            continue;
        }
        if constexpr (STAGE_C) if (staged) {
            const int s = (g - 1) % STAGES;
            named_bar_arrive<256>(C_STAGED + 2 * wg + (staged_tiles & 1));  // this warpgroup's wgmmas are done with stage s
            if constexpr (DEFER_STAGED) {
                c_pending = true;
                c_m0 = m0;
                c_n0 = n0;
                c_s = s;
            } else {
                store_c_staged(m0, n0, s);
            }
            continue;
        }
        if constexpr (!T::SWAP) {
            const int row = opaque_i32(m0 + lrow), col0 = opaque_i32(n0 + lcol);
#pragma unroll
            for (int j = 0; j < RT / 4; ++j) {
                const int col = col0 + 8 * j;
                store_pair<OutT>(C, ws, split, M, N, row, col, total[4 * j], total[4 * j + 1]);
                store_pair<OutT>(C, ws, split, M, N, row + 8, col, total[4 * j + 2], total[4 * j + 3]);
            }
        } else if (sizeof(OutT) == 2 && !split) {
            // Accumulator row = weight row (C column), accumulator column = token (C row): a
            // warp holds 16 adjacent C columns of BM rows, scattered over lanes. Stored
            // directly that is 2-byte stores, each instruction touching 4 half sectors; staged
            // through shared memory, each row goes out as two 16-byte stores of one sector.
            OutT* cst = reinterpret_cast<OutT*>(smem + T::OFF_C) + (wg * 4 + wwarp) * BM * T::C_PITCH;
            const int wc = lane / 4;
#pragma unroll
            for (int j = 0; j < R / 4; ++j) {
                const int t = 8 * j + lcol;
                cst[t * T::C_PITCH + wc] = from_f32<OutT>(total[4 * j]);
                cst[(t + 1) * T::C_PITCH + wc] = from_f32<OutT>(total[4 * j + 1]);
                cst[t * T::C_PITCH + wc + 8] = from_f32<OutT>(total[4 * j + 2]);
                cst[(t + 1) * T::C_PITCH + wc + 8] = from_f32<OutT>(total[4 * j + 3]);
            }
            __syncwarp();
            const int col0 = n0 + wg * 64 + wwarp * 16;
            const bool vec = c_rows_vec16(C, N);
#pragma unroll
            for (int c = lane; c < 2 * BM; c += 32) {
                const int row = m0 + c / 2, col = col0 + 8 * (c % 2);
                if (row >= M) continue;
                store_row8(C + (size_t)row * N + col, *reinterpret_cast<const uint4*>(cst + (c / 2) * T::C_PITCH + 8 * (c % 2)), col, N, vec);
            }
            __syncwarp();  // the next tile's fragments overwrite the region
        } else {
            // Accumulator row = weight row (C column), accumulator column = token (C row).
            const int col = n0 + lrow;
#pragma unroll
            for (int j = 0; j < R / 4; ++j) {
                const int row = m0 + 8 * j + lcol;
                store_one<OutT>(C, ws, split, M, N, row, col, total[4 * j]);
                store_one<OutT>(C, ws, split, M, N, row + 1, col, total[4 * j + 1]);
                store_one<OutT>(C, ws, split, M, N, row, col + 8, total[4 * j + 2]);
                store_one<OutT>(C, ws, split, M, N, row + 1, col + 8, total[4 * j + 3]);
            }
        }
    }
    if constexpr (PEEL) if (c_pending) {
        if constexpr (DEFER_C) if (c_tma) {
            // (Its origin from last_origin: kept from the loop, it stayed live through every K
            // loop and the 128x192 consumers spilled; DEFER_C is STORE_WARP.)
            store_c_tma(0, 0, true);
        }
        if constexpr (DEFER_STAGED) if (!c_tma) store_c_staged(c_m0, c_n0, c_s);
    }
    // The CTA's shared memory must outlive the stores that read it.
    if constexpr (TMA_C) if (c_tma && lane == 0) bulk_wait0();
}

}  // namespace bfp8

// sm90_gemm_block_fp8_m{BM}n{BN}w{W}s{S}_{out} for TMA tiles: W = 4 * BM / 64 (normal,
// BM 64/128) or W = 4 * BN / 64 otherwise (swapped: BM 16/32, or m64n128w8); block =
// TmaTile::THREADS (W * 32 consumers + 64 or, for W = 8, 128 producer threads), dynamic
// shared memory TmaTile::SMEM + 1024.
// Arguments (tma_a, tma_b, tma_as, tma_c, tma_c_last, as, bs, c, ws, M, N, K, as_stride_m,
// as_stride_kb, group_m, splits, as_load, c_by_tma); tma_as is read only when as_load
// (bfp8::AsLoad) names a TMA, tma_c and tma_c_last (C in boxes of 16 and of 128 rows x
// TmaTile::C_BOX columns) only when c_by_tma != 0 on a TmaTile::C_TMA tile with 16-bit C and
// no split;
// grid (min(tiles * splits, SMs * CTAs per SM)) persistent CTAs, or with clusters CL times
// min(tile pairs * splits, resident clusters) (KS: min(tiles, resident clusters), splits = 1);
// ws as for the mma.sync body.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define BLOCKFP8_TMA_BODY(BM, BN, W, S, CL, KS, OUT_T) \
    bfp8::gemm_block_fp8_tma_body<BM, BN, W, S, CL, KS, OUT_T>(&tma_a, &tma_b, &tma_as, &tma_c, &tma_c_last, as, bs, c, ws, M, N, K, as_stride_m, \
                                                        as_stride_kb, group_m, splits, as_load, c_by_tma);
#else
#define BLOCKFP8_TMA_BODY(BM, BN, W, S, CL, KS, OUT_T) __trap();
#endif
// One TMA GEMM entry point; CL > 1 fixes the cluster shape at compile time (__cluster_dims__),
// so a plain launch forms the clusters and the grid only needs to be a multiple of CL.
#define BLOCKFP8_GEMM_TMA_KERNEL(NAME, BM, BN, W, S, CL, KS, OUT_T, ...)                                                  \
    extern "C" __global__ void __launch_bounds__(bfp8::TmaTile<BM, BN, W, S, CL, KS>::THREADS, 1) __VA_ARGS__ NAME(        \
        const __grid_constant__ bfp8::TmaDesc tma_a, const __grid_constant__ bfp8::TmaDesc tma_b,                        \
        const __grid_constant__ bfp8::TmaDesc tma_as, const __grid_constant__ bfp8::TmaDesc tma_c,                      \
        const __grid_constant__ bfp8::TmaDesc tma_c_last, const float* as,                                              \
        const float* bs, OUT_T* c, float* ws, int M, int N, int K, int as_stride_m, int as_stride_kb, int group_m,      \
        int splits, int as_load, int c_by_tma) {                                                                        \
        static_assert(bfp8::TmaTile<BM, BN, W, S, CL, KS>::CONSUMERS * 4 == W, "num_warps = 4 per consumer warpgroup"); \
        BLOCKFP8_TMA_BODY(BM, BN, W, S, CL, KS, OUT_T)                                                                    \
    }
#define BLOCKFP8_GEMM_TMA_INSTANCE_T(BM, BN, W, S, TAG, OUT_T) \
    BLOCKFP8_GEMM_TMA_KERNEL(sm90_gemm_block_fp8_m##BM##n##BN##w##W##s##S##_##TAG, BM, BN, W, S, 1, false, OUT_T)
// sm90_gemm_block_fp8_m{BM}n{BN}w{W}s{S}c{CL}_{out}: the same tile in clusters of CL CTAs.
#define BLOCKFP8_GEMM_TMA_CLUSTER_INSTANCE_T(BM, BN, W, S, CL, TAG, OUT_T) \
    BLOCKFP8_GEMM_TMA_KERNEL(sm90_gemm_block_fp8_m##BM##n##BN##w##W##s##S##c##CL##_##TAG, BM, BN, W, S, CL, false, OUT_T, __cluster_dims__(CL, 1, 1))
// sm90_gemm_block_fp8_m{BM}n{BN}w{W}s{S}c{CL}k_{out}: clusters of CL CTAs that split each tile's K range (KS).
#define BLOCKFP8_GEMM_TMA_KSPLIT_INSTANCE_T(BM, BN, W, S, CL, TAG, OUT_T) \
    BLOCKFP8_GEMM_TMA_KERNEL(sm90_gemm_block_fp8_m##BM##n##BN##w##W##s##S##c##CL##k_##TAG, BM, BN, W, S, CL, true, OUT_T, __cluster_dims__(CL, 1, 1))
