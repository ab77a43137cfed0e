"""Session 42 diagnostic: DeepGEMM's SM90 1D2D kernel without its A and B tile loads (only the
activation scales land; the `full` barrier expects their bytes alone), to set its cycles without
data waits beside the crate's (s41_noab.patch). Patches the built DeepGEMM's JIT header in place
(run after build_deepgemm.sh; then use a fresh DG_JIT_CACHE_DIR, as the cache key does not cover
the header)."""

F = "/tmp/dgb/dg/deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"


def rep(s, a, b):
    assert s.count(a) == 1, a
    return s.replace(a, b)


s = open(F).read()
s = rep(s, "tma_copy(&tensor_map_a, reinterpret_cast<uint64_t*>(&full_barrier),",
        "if (false) tma_copy(&tensor_map_a, reinterpret_cast<uint64_t*>(&full_barrier),")
s = rep(s, "tma_copy(&tensor_map_b, reinterpret_cast<uint64_t*>(&full_barrier),",
        "if (false) tma_copy(&tensor_map_b, reinterpret_cast<uint64_t*>(&full_barrier),")
s = rep(s, "full_barrier.arrive_and_expect_tx(SMEM_A_SIZE_PER_STAGE + SMEM_B_SIZE_PER_STAGE + SMEM_SFA_SIZE_PER_STAGE);",
        "full_barrier.arrive_and_expect_tx(SMEM_SFA_SIZE_PER_STAGE);")
open(F, "w").write(s)
print("patched", F)
