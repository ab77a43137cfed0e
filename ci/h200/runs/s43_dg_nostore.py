"""Session 43 diagnostic: DeepGEMM's SM90 1D2D kernel without its C stores (the TMA store of D is
skipped; the STSM writes into shared memory stay), applied after s42_dg_noab.py, to set the cost
of its C writes beside the crate's (s43_v11_nostores.patch). Use a fresh DG_JIT_CACHE_DIR."""

F = "/tmp/dgb/dg/deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"
s = open(F).read()
a = "cute::SM90_TMA_STORE_2D::copy(&tensor_map_d, smem_ptr,"
assert s.count(a) == 1, a
s = s.replace(a, "if (false) cute::SM90_TMA_STORE_2D::copy(&tensor_map_d, smem_ptr,")
open(F, "w").write(s)
print("patched", F)
