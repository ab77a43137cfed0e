"""Session 41 diagnostic: DeepGEMM's SM90 1D2D kernel with a timeline per CTA, for comparison with
the crate's (s40_edges.patch). Patches the built DeepGEMM's JIT header in place (run after
build_deepgemm.sh; set DG_JIT_CACHE_DIR to a fresh folder), then, with --run M,N,K, launches the
GEMM three times; math thread 0 of each CTA prints one line per launch:
DGS cta sm tiles, then its 16 slots (below; SM clock cycles but for the globaltimer pair)."""
import sys

F = "/tmp/dgb/dg/deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"


def patch():
    s = open(F).read()
    if "DGS" in s:
        return

    def rep(a, b):
        nonlocal s
        assert s.count(a) == 1, a
        s = s.replace(a, b)

    clk = "[]{ uint32_t t; asm volatile(\"mov.u32 %0, %%clock;\" : \"=r\"(t)); return t; }()"
    gt = "[]{ uint32_t t; asm volatile(\"mov.u32 %0, %%globaltimer_lo;\" : \"=r\"(t)); return t; }()"
    # Stamps go to a global buffer by volatile stores (held in registers or a local array, they
    # slowed DeepGEMM's K loop by a third: call 2), slot [16 * cta + i]: 0 entry, 1 + 2t / 2 + 2t
    # tile t's K loop start / end (t < 6), 13 after the last tile's stores issued, 14 / 15
    # globaltimer at entry / end; math thread 0 prints its CTA's slots at the end.
    rep("template <uint32_t SHAPE_M, uint32_t SHAPE_N, uint32_t SHAPE_K,\n          uint32_t kNumGroups,",
        "__device__ uint32_t dg_buf[16 * 160];\n"
        f"__device__ __forceinline__ void dg_stamp(int i) {{ if (threadIdx.x == 0) *(volatile uint32_t*)&dg_buf[16 * blockIdx.x + i] = {clk}; }}\n"
        f"__device__ __forceinline__ void dg_gstamp(int i) {{ if (threadIdx.x == 0) *(volatile uint32_t*)&dg_buf[16 * blockIdx.x + i] = {gt}; }}\n"
        "template <uint32_t SHAPE_M, uint32_t SHAPE_N, uint32_t SHAPE_K,\n          uint32_t kNumGroups,")
    rep("    // Shared memory\n    static constexpr bool kMustUseUniformedScaleB",
        "    dg_stamp(0); dg_gstamp(14);\n"
        "    // Shared memory\n    static constexpr bool kMustUseUniformedScaleB")
    rep("        // Persistently schedule over blocks\n        while (scheduler.get_next_block(m_block_idx, n_block_idx)) {\n            // Decide",
        "        int dg_n = 0;\n"
        "        // Persistently schedule over blocks\n        while (scheduler.get_next_block(m_block_idx, n_block_idx)) {\n            // Decide")
    rep("            // Skip useless computations\n",
        "            if (dg_n < 6) dg_stamp(1 + 2 * dg_n);\n            // Skip useless computations\n")
    rep("            // TMA checks\n",
        "            if (dg_n < 6) dg_stamp(2 + 2 * dg_n);\n            ++dg_n;\n            // TMA checks\n")
    rep("                cute::tma_store_arrive();\n            }\n            __syncwarp();\n        }\n",
        "                cute::tma_store_arrive();\n            }\n"
        "            __syncwarp();\n        }\n"
        "        dg_stamp(13); dg_gstamp(15);\n"
        "        if (threadIdx.x == 0) {\n"
        "            const volatile uint32_t* b = dg_buf + 16 * blockIdx.x;\n"
        "            uint32_t smid; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(smid));\n"
        "            printf(\"DGS %u %u %d %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u %u\\n\", blockIdx.x, smid, dg_n,\n"
        "                   b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);\n"
        "        }\n")
    open(F, "w").write(s)


def run(mnk):
    import torch
    import deep_gemm  # noqa: F401
    sys.path.insert(0, "ci/h200")
    import deepgemm_time as dt
    m, n, k = (int(x) for x in mnk.split(","))
    first, _ = dt.problem(m, n, k, seed=1)
    for _ in range(3):
        dt.run(first)
        torch.cuda.synchronize()


if __name__ == "__main__":
    if sys.argv[1] == "--patch":
        patch()
    else:
        run(sys.argv[2])
