"""Session 41 diagnostic: DeepGEMM's SM90 1D2D kernel with a timeline per CTA, for comparison with
the crate's (s40_edges.patch). Patches the built DeepGEMM's JIT header in place (run after
build_deepgemm.sh; set DG_JIT_CACHE_DIR to a fresh folder), then, with --run M,N,K, launches the
GEMM three times; math thread 0 of each CTA prints one line per launch:
DGS cta sm entry k-loop-start/end pairs ... stored-after-last-tile globaltimer-entry globaltimer-end
(SM clock cycles; the pairs per tile, the last 'stored' after the last tile's TMA store issue)."""
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
    rep("    // Shared memory\n    static constexpr bool kMustUseUniformedScaleB",
        f"    const uint32_t dg_entry = {clk}, dg_gt0 = {gt};\n"
        "    // Shared memory\n    static constexpr bool kMustUseUniformedScaleB")
    rep("        // Persistently schedule over blocks\n        while (scheduler.get_next_block(m_block_idx, n_block_idx)) {\n            // Decide",
        "        uint32_t dg_t[16]; int dg_n = 0; uint32_t dg_stored = 0;\n"
        "        // Persistently schedule over blocks\n        while (scheduler.get_next_block(m_block_idx, n_block_idx)) {\n            // Decide")
    rep("            // Skip useless computations\n",
        f"            if (threadIdx.x == 0 and dg_n < 16) dg_t[dg_n++] = {clk};\n            // Skip useless computations\n")
    rep("            // TMA checks\n",
        f"            if (threadIdx.x == 0 and dg_n < 16) dg_t[dg_n++] = {clk};\n            // TMA checks\n")
    rep("                cute::tma_store_arrive();\n            }\n            __syncwarp();\n        }\n",
        "                cute::tma_store_arrive();\n            }\n"
        f"            if (threadIdx.x == 0) dg_stored = {clk};\n"
        "            __syncwarp();\n        }\n"
        "        if (threadIdx.x == 0) {\n"
        f"            const uint32_t gt1 = {gt};\n"
        "            uint32_t smid; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(smid));\n"
        "            printf(\"DGS %u %u %u %d %u %u %u %u %u %u %u %u %u %u %u\\n\", blockIdx.x, smid, dg_entry, dg_n,\n"
        "                   dg_n > 0 ? dg_t[0] : 0u, dg_n > 1 ? dg_t[1] : 0u, dg_n > 2 ? dg_t[2] : 0u, dg_n > 3 ? dg_t[3] : 0u,\n"
        "                   dg_n > 4 ? dg_t[4] : 0u, dg_n > 5 ? dg_t[5] : 0u, dg_n > 6 ? dg_t[6] : 0u, dg_n > 7 ? dg_t[7] : 0u,\n"
        "                   dg_stored, dg_gt0, gt1);\n"
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
