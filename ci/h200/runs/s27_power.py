"""Session 27 diagnostic (H200): DeepGEMM in a long loop of one shape, for clock and power
sampling beside the crate's long `blockfp8 bench` of the same shape (s27_d3_race.sh).
Usage: python3 s27_power.py M,N,K ITERS   (DeepGEMM on PYTHONPATH, ci/h200 on sys.path)"""
import sys
import torch
sys.path.insert(0, "ci/h200")
import deepgemm_time as dt

m, n, k = (int(x) for x in sys.argv[1].split(","))
iters = int(sys.argv[2])
first, _ = dt.problem(m, n, k, seed=1)
sets = [first] + [tuple(t.clone() for t in first) for _ in range(3)]
for p in sets:
    dt.run(p)
torch.cuda.synchronize()
start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
start.record()
for _ in range(iters):
    for p in sets:
        dt.run(p)
end.record()
torch.cuda.synchronize()
print(f"deepgemm {m}x{n}x{k}: {start.elapsed_time(end) * 1000 / (iters * len(sets)):.2f} us per GEMM over {iters * len(sets)} eager launches")
