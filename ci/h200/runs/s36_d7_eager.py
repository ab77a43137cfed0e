"""Session 36, call 7 (H200): the package's eager host time per call with the dispatcher skipped
(blockfp8.w8a8_block_fp8_matmul / per_token_group_quant_fp8 on plain tensors) against the same
calls through the torch ops (torch.ops.blockfp8.*), and their results bit for bit. Host time: the
wall time of 2000 back-to-back eager calls at M=1 N=4096 K=7168 (the GPU work, a few us, queues
behind), the launch queue drained every 200 calls."""
import time

import torch

import blockfp8

dev = torch.device("cuda", 0)
torch.manual_seed(0)
x = torch.randn(1, 7168, device=dev, dtype=torch.bfloat16)
w = torch.randn(4096, 7168, device=dev, dtype=torch.bfloat16) * 0.05
bq, bs = blockfp8.quantize_weight(w)
q, s = blockfp8.per_token_group_quant_fp8(x, 128)
GEMM, QUANT = torch.ops.blockfp8.w8a8_block_fp8_matmul.default, torch.ops.blockfp8.per_token_group_quant_fp8.default


def host_us(fn, n=2000):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for i in range(n):
        fn()
        if i % 200 == 199:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


for rnd in range(2):
    print(f"round {rnd}: gemm package {host_us(lambda: blockfp8.w8a8_block_fp8_matmul(q, bq, s, bs, [128, 128], torch.bfloat16)):.1f} us, "
          f"op {host_us(lambda: GEMM(q, bq, s, bs, [128, 128], torch.bfloat16)):.1f} us; "
          f"quant package {host_us(lambda: blockfp8.per_token_group_quant_fp8(x, 128)):.1f} us, "
          f"op {host_us(lambda: QUANT(x, 128, 1e-10, None, False, False)):.1f} us", flush=True)
a = blockfp8.w8a8_block_fp8_matmul(q, bq, s, bs, [128, 128], torch.bfloat16)
b = GEMM(q, bq, s, bs, [128, 128], torch.bfloat16)
q2, s2 = QUANT(x, 128, 1e-10, None, False, False)
print("gemm equal:", torch.equal(a, b), "quant equal:", torch.equal(q.view(torch.uint8), q2.view(torch.uint8)) and torch.equal(s, s2))
