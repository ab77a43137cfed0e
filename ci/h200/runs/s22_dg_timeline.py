"""Session 22 diagnostic (H200): DeepGEMM's per-CTA timeline, beside ours (s22_d2_timeline.sh).
Copies the built DeepGEMM tree to /tmp/dgt and patches its SM90 1D2D kernel so that, for launches
40 and 41 of every 64, each CTA's thread 0 writes its entry and end (after its last C store is
issued) %globaltimer stamps into a torch buffer whose address is compiled in (a global store:
a printf would be a call, which serializes the kernel's wgmma). Then times each shape with
deepgemm_time.py's method and prints the records as 'DGTL launch m n k cta grid sm t0 t1'.
Usage: python3 s22_dg_timeline.py M,N,K ...   (DeepGEMM built at /tmp/dgb/dg)"""
import pathlib, shutil, sys, os

import torch

buf = torch.zeros(2 * 512 * 16, dtype=torch.int64, device="cuda")
src, dst = pathlib.Path("/tmp/dgb/dg"), pathlib.Path("/tmp/dgt")
if dst.exists():
    shutil.rmtree(dst)
shutil.copytree(src, dst, symlinks=True)
f = dst / "deep_gemm/include/deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh"
s = f.read_text()
entry = "const uint32_t lane_idx = get_lane_idx();"
end = "#else\n    if (blockIdx.x == 0 and threadIdx.x == 0)"
assert s.count(entry) == 1 and s.count(end) == 1
s = s.replace("#pragma once", "#pragma once\n__device__ unsigned int tl_ctas;", 1)
s = s.replace(entry, entry + """
    unsigned long long tl_t0; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(tl_t0));
    const unsigned int tl_idx = threadIdx.x == 0 ? atomicAdd(&tl_ctas, 1u) : 0u;""")
s = s.replace(end, """    if (threadIdx.x == 0 && (tl_idx / gridDim.x) % 64 >= 40 && (tl_idx / gridDim.x) % 64 <= 41 && blockIdx.x < 512) {
        unsigned long long tl_t1; asm volatile("mov.u64 %0, %globaltimer;" : "=l"(tl_t1));
        unsigned int tl_sm; asm volatile("mov.u32 %0, %smid;" : "=r"(tl_sm));
        unsigned long long* r = reinterpret_cast<unsigned long long*>(""" + hex(buf.data_ptr()) + """ull) + ((tl_idx / gridDim.x) % 2 * 512 + blockIdx.x) * 16;
        r[0] = tl_idx / gridDim.x; r[1] = shape_m; r[2] = shape_n; r[3] = shape_k; r[4] = blockIdx.x; r[5] = gridDim.x; r[6] = tl_sm; r[7] = tl_t0; r[8] = tl_t1;
    }
""" + end)
f.write_text(s)
os.environ["DG_JIT_CACHE_DIR"] = "/tmp/dgjit_tl"
shutil.rmtree("/tmp/dgjit_tl", ignore_errors=True)
sys.path.insert(0, str(dst))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import deepgemm_time  # noqa: E402  (imports deep_gemm from /tmp/dgt)

for spec in sys.argv[1:]:
    m, n, k = (int(x) for x in spec.split(","))
    buf.zero_()
    row = deepgemm_time.time_shape(m, n, k)
    print("#", row, flush=True)
    torch.cuda.synchronize()
    for r in buf.view(-1, 16).cpu().tolist():
        if r[1]:
            print("DGTL", *r[:9], flush=True)
