"""The torch ops on a GPU (CUDA, or HIP under ROCm torch): the anchor and ragged shapes against a
float64 reference and against the crate's own Rust path bit for bit, torch.compile(fullgraph=True)
of the MLP example, CUDA/HIP graph capture and replay, and no host synchronization inside the ops
(torch.cuda.set_sync_debug_mode("error")). Skipped without a GPU or a GPU build of the library."""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import blockfp8  # noqa: E402
from blockfp8 import _lib  # noqa: E402
from blockfp8._torch_util import device_fp8_dtype  # noqa: E402
from conftest import calc_diff, cli_gemm  # noqa: E402

if not torch.cuda.is_available():
    pytest.skip("no GPU visible to torch: the GPU tests run on the H200 (ci/h200/python_package.sh)", allow_module_level=True)
_gpu_backend = _lib.BACKEND_ROCM if torch.version.hip else _lib.BACKEND_CUDA
if not _lib.backend_compiled(_gpu_backend):
    pytest.skip(f"the installed library ({_lib.version()}) has no {_lib.BACKEND_NAMES[_gpu_backend]} backend", allow_module_level=True)

DEV = torch.device("cuda", 0)
FP8 = device_fp8_dtype(DEV)  # float8_e4m3fnuz on gfx942, float8_e4m3fn elsewhere
FP8_NAME = "e4m3fnuz" if FP8 == torch.float8_e4m3fnuz else "e4m3fn"

ANCHORS = [
    (8, 4096, 7168), (8, 7168, 18432), (8, 18432, 7168),
    (64, 4096, 7168), (64, 7168, 18432), (64, 18432, 7168), (64, 24576, 1536), (64, 32768, 512), (64, 7168, 16384),
    (128, 4096, 7168), (128, 7168, 18432), (128, 18432, 7168),
    (1024, 4096, 7168), (1024, 18432, 7168), (2048, 4096, 7168), (4096, 4096, 7168),
]
RAGGED = [(m, n, k) for m in (1, 3, 17, 100, 1000) for n in (576, 2112, 129) for k in (1280, 200)]


def problem(m, n, k, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    x = torch.randn(m, k, device=DEV, generator=g, dtype=torch.bfloat16)
    w = torch.randn(n, k, device=DEV, generator=g, dtype=torch.bfloat16) * 0.05
    xq, xs = blockfp8.per_token_group_quant_fp8(x, 128)
    wq, ws = blockfp8.quantize_weight(w)
    return x, w, xq, xs, wq, ws


def dequant(q, s, block):
    r, c = q.shape
    full = s.double().repeat_interleave(block[0], 0)[:r].repeat_interleave(block[1], 1)[:, :c]
    return q.double() * full


def u8(t):
    return t.view(torch.uint8).cpu().numpy()


@pytest.mark.parametrize("m,n,k", ANCHORS + RAGGED)
def test_gemm_against_float64_and_the_crates_rust_path(tmp_path, m, n, k):
    _, _, xq, xs, wq, ws = problem(m, n, k, seed=m + n + k)
    y = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16)
    ref = dequant(xq, xs, (1, 128)) @ dequant(wq, ws, (128, 128)).t()
    d = calc_diff(ref.cpu().numpy(), y.float().cpu().numpy())
    assert d < 1e-5, f"calc_diff {d}"
    rust = cli_gemm(tmp_path, u8(xq), xs.cpu().numpy(), u8(wq), ws.cpu().numpy(), fp8=FP8_NAME, out_dtype="bf16", backend=_lib.BACKEND_NAMES[_gpu_backend])
    np.testing.assert_array_equal(y.view(torch.int16).cpu().numpy().view(np.uint16), rust)


@pytest.mark.parametrize("m,n,k", [(3, 2112, 1280), (64, 4096, 7168), (100, 576, 200)])
def test_column_major_scales_give_the_row_major_bits(m, n, k):
    x, _, xq, xs, wq, ws = problem(m, n, k, seed=3)
    _, xs_col = blockfp8.per_token_group_quant_fp8(x, 128, column_major_scales=True)
    assert torch.equal(xs_col, xs)
    vllm_col = torch.empty((xs.shape[1], m), device=DEV).permute(1, 0)
    vllm_col.copy_(xs)
    want = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16)
    for scales in (xs_col, vllm_col):
        assert torch.equal(blockfp8.w8a8_block_fp8_matmul(xq, wq, scales, ws, [128, 128], torch.bfloat16), want)


def test_device_quantizers_equal_the_cpu_reference():
    x = torch.randn(37, 7168, device=DEV, dtype=torch.bfloat16) * 3
    q, s = blockfp8.per_token_group_quant_fp8(x, 128)
    qc, sc = blockfp8.per_token_group_quant_fp8(x.cpu(), 128, dtype=FP8)
    assert torch.equal(q.view(torch.uint8).cpu(), qc.view(torch.uint8)) and torch.equal(s.cpu(), sc)
    w = torch.randn(2112, 7168, device=DEV, dtype=torch.bfloat16) * 0.05
    wq, ws = blockfp8.quantize_weight(w)
    wqc, wsc = blockfp8.quantize_weight(w.cpu(), dtype=FP8)
    assert torch.equal(wq.view(torch.uint8).cpu(), wqc.view(torch.uint8)) and torch.equal(ws.cpu(), wsc)


def test_ops_run_on_the_current_stream():
    _, _, xq, xs, wq, ws = problem(64, 4096, 7168, seed=5)
    want = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16)
    side = torch.cuda.Stream(DEV)
    side.wait_stream(torch.cuda.current_stream(DEV))
    with torch.cuda.stream(side):
        got = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16)
    side.synchronize()
    assert torch.equal(got, want)


def _mlp():
    from deepseek_mlp_loader import load_example

    mod = load_example()
    w1, w2 = mod.random_bf16_weights(7168, 2048, DEV)
    return mod, mod.BlockFP8MLP.from_bf16(w1, w2), (w1, w2)


def test_torch_compile_fullgraph_of_the_mlp_example():
    mod, mlp, (w1, w2) = _mlp()
    x = torch.randn(64, 7168, device=DEV, dtype=torch.bfloat16)
    eager = mlp(x)
    compiled = torch.compile(mlp, fullgraph=True)(x)
    # inductor fuses SiLU * up in f32 (eager rounds SiLU to bf16 first), and those bf16 ulps
    # flip some fp8 roundings of the down projection's input: close, not identical
    assert calc_diff(eager.float().cpu().numpy(), compiled.float().cpu().numpy()) < 1e-3
    assert mod.calc_diff(compiled, mod.reference_mlp(x, w1, w2)) < 5e-3


def test_cuda_graph_capture_and_replay_with_new_inputs():
    _, mlp, _ = _mlp()
    static_x = torch.randn(16, 7168, device=DEV, dtype=torch.bfloat16)
    mlp(static_x)  # prepares and caches the weights and plans outside the capture
    s = torch.cuda.Stream(DEV)
    s.wait_stream(torch.cuda.current_stream(DEV))
    with torch.cuda.stream(s):
        mlp(static_x)
    torch.cuda.current_stream(DEV).wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = mlp(static_x)
    for seed in range(3):
        x = torch.randn(16, 7168, device=DEV, dtype=torch.bfloat16, generator=torch.Generator(device=DEV).manual_seed(seed))
        static_x.copy_(x)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(static_y, mlp(x))


def test_no_host_synchronization_inside_the_ops():
    _, _, xq, xs, wq, ws = problem(8, 4096, 7168, seed=8)
    x = torch.randn(8, 7168, device=DEV, dtype=torch.bfloat16)
    # Warm up: the weight prepared and both layouts' plans resolved (those allocate, once).
    for column_major in (False, True):
        q, s = blockfp8.per_token_group_quant_fp8(x, 128, column_major_scales=column_major)
        blockfp8.w8a8_block_fp8_matmul(q, wq, s, ws, [128, 128], torch.bfloat16)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for _ in range(3):
            q, s = blockfp8.per_token_group_quant_fp8(x, 128)
            blockfp8.w8a8_block_fp8_matmul(q, wq, s, ws, [128, 128], torch.bfloat16)
            q, s = blockfp8.per_token_group_quant_fp8(x, 128, column_major_scales=True)
            blockfp8.w8a8_block_fp8_matmul(q, wq, s, ws, [128, 128], torch.bfloat16)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_tensors_of_two_devices_are_refused():
    _, _, xq, xs, wq, ws = problem(3, 129, 200)
    with pytest.raises(blockfp8.DeviceError, match="different devices"):
        blockfp8.w8a8_block_fp8_matmul(xq, wq.cpu(), xs, ws, [128, 128])
