"""The accuracy check every H200 race script shares: DeepGEMM's calc_diff, and the float64
reference of a block-scaled GEMM (A [M, K] with per-row scales per 128 K, B [N, K] with scales
per 128 x 128 block; K and N need not be multiples of 128)."""


def calc_diff(x, y):
    x, y = x.double(), y.double()
    return float(1 - 2 * (x * y).sum() / (x * x + y * y).sum())


def block_scaled_reference(a, a_s, b, b_s):
    ad = a.double() * a_s.double().repeat_interleave(128, 1)[:, : a.shape[1]]
    bs = b_s.double().repeat_interleave(128, 0)[: b.shape[0]].repeat_interleave(128, 1)[:, : b.shape[1]]
    return ad @ (b.double() * bs).t()
