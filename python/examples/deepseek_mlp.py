"""A DeepSeek-V3-style MLP block (gate_up -> SiLU(gate) * up -> down) on blockfp8, with block-FP8
weights quantized from bf16, against the same block computed in bf16.

    python python/examples/deepseek_mlp.py                       # CPU, small
    python python/examples/deepseek_mlp.py --device cuda --hidden 7168 --inter 18432 --tokens 64 --compile

Each linear layer is what vLLM's Fp8LinearMethod does for block-quantized checkpoints: quantize the
activations per token in groups of 128 (`per_token_group_quant_fp8`), then the block-scaled GEMM
(`w8a8_block_fp8_matmul`) with the weight and its 128x128 scales.
"""

import argparse
import sys

import torch
import torch.nn.functional as F

import blockfp8


class BlockFP8Linear(torch.nn.Module):
    """y = x @ W^T with W stored as fp8 [N, K] and one f32 scale per 128x128 block."""

    def __init__(self, weight, weight_scale_inv, out_dtype=torch.bfloat16):
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("weight_scale_inv", weight_scale_inv)
        self.out_dtype = out_dtype

    @classmethod
    def from_bf16(cls, w):
        q, s = blockfp8.quantize_weight(w)  # on w's device, in its fp8 flavour (e4m3fnuz on gfx942)
        return cls(q, s)

    def forward(self, x):
        xq, xs = blockfp8.per_token_group_quant_fp8(x, 128, dtype=self.weight.dtype)
        return blockfp8.w8a8_block_fp8_matmul(xq, self.weight, xs, self.weight_scale_inv, [128, 128], self.out_dtype)


class BlockFP8MLP(torch.nn.Module):
    def __init__(self, gate_up, down):
        super().__init__()
        self.gate_up_proj = gate_up
        self.down_proj = down

    @classmethod
    def from_bf16(cls, w_gate_up, w_down):
        return cls(BlockFP8Linear.from_bf16(w_gate_up), BlockFP8Linear.from_bf16(w_down))

    def forward(self, x):
        gate, up = self.gate_up_proj(x).chunk(2, dim=-1)
        return self.down_proj(F.silu(gate) * up)


def reference_mlp(x, w_gate_up, w_down):
    """The same block in bf16 (what the fp8 model approximates)."""
    gate, up = (x @ w_gate_up.t()).chunk(2, dim=-1)
    return (F.silu(gate) * up) @ w_down.t()


def random_bf16_weights(hidden, inter, device, seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    w_gate_up = (torch.randn(2 * inter, hidden, generator=g) / hidden**0.5).to(torch.bfloat16).to(device)
    w_down = (torch.randn(hidden, inter, generator=g) / inter**0.5).to(torch.bfloat16).to(device)
    return w_gate_up, w_down


def calc_diff(x, y):
    x, y = x.double(), y.double()
    return float(1 - 2 * (x * y).sum() / (x * x + y * y).sum())


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--hidden", type=int, default=1024, help="DeepSeek-V3: 7168")
    p.add_argument("--inter", type=int, default=512, help="DeepSeek-V3: 18432 (dense layers), 2048 (an expert)")
    p.add_argument("--tokens", type=int, default=16)
    p.add_argument("--compile", action="store_true", help="also run torch.compile(fullgraph=True) and compare with eager")
    p.add_argument("--max-diff", type=float, default=5e-3, help="fail above this calc_diff against bf16 (two layers of fp8 rounding give about 2e-3 on random data)")
    a = p.parse_args(argv)
    device = torch.device(a.device)
    w_gate_up, w_down = random_bf16_weights(a.hidden, a.inter, device)
    mlp = BlockFP8MLP.from_bf16(w_gate_up, w_down)
    x = torch.randn(a.tokens, a.hidden, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16).to(device)
    y = mlp(x)
    ref = reference_mlp(x, w_gate_up, w_down)
    diff = calc_diff(y, ref)
    print(f"device {blockfp8.device_info(str(device))['name']}: MLP {a.hidden} -> 2x{a.inter} -> {a.hidden}, {a.tokens} tokens: calc_diff vs bf16 = {diff:.2e}")
    ok = diff < a.max_diff
    if a.compile:
        yc = torch.compile(mlp, fullgraph=True)(x)
        same = torch.equal(yc, y)
        print(f"torch.compile(fullgraph=True): {'bit-identical to eager' if same else 'DIFFERS from eager'}")
        ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
