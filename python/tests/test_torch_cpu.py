"""The torch ops on CPU tensors (the CPU backend): results against the float64 reference and
the numpy path, every As layout vLLM produces, the weight cache, torch.compile, opcheck and
bad input."""

import os
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed: the torch ops are tested where it is (the numpy path is tested without it)")

import blockfp8  # noqa: E402
from blockfp8 import numpy_ops, weight_cache  # noqa: E402
from conftest import REPO, RAGGED, calc_diff, cli_gemm, reference_gemm  # noqa: E402

FN, FNUZ = torch.float8_e4m3fn, torch.float8_e4m3fnuz


def u8(t):
    return t.view(torch.uint8).numpy()


def problem(m, n, k, seed=0, x_dtype=torch.bfloat16, fp8=FN):
    g = torch.Generator().manual_seed(seed)
    x = (torch.randn(m, k, generator=g) * 2).to(x_dtype)
    w = (torch.randn(n, k, generator=g) * 0.05).to(torch.bfloat16)
    xq, xs = blockfp8.per_token_group_quant_fp8(x, 128, dtype=fp8)
    wq, ws = blockfp8.quantize_weight(w, dtype=fp8)
    return x, w, xq, xs, wq, ws


@pytest.mark.parametrize("m,n,k", RAGGED)
def test_gemm_matches_float64_reference_and_the_numpy_path(m, n, k):
    _, _, xq, xs, wq, ws = problem(m, n, k, seed=m * 3 + n)
    ref = reference_gemm(u8(xq), xs.numpy(), u8(wq), ws.numpy())
    for dtype, np_dtype in ((torch.float32, np.float32), (torch.float16, np.float16)):
        y = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], dtype)
        assert y.dtype == dtype and y.shape == (m, n)
        assert calc_diff(ref, y.float().numpy()) < (1e-6 if dtype == torch.float32 else 1e-5)
        np.testing.assert_array_equal(y.numpy(), numpy_ops.w8a8_block_fp8_matmul(u8(xq), u8(wq), xs.numpy(), ws.numpy(), [128, 128], np_dtype))
    y32 = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    assert torch.equal(blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16), y32.to(torch.bfloat16))


def test_default_output_dtype_is_float16_like_vllm():
    _, _, xq, xs, wq, ws = problem(3, 129, 200)
    assert blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128]).dtype == torch.float16


@pytest.mark.parametrize("m", [3, 8])
def test_every_activation_scale_layout_gives_the_same_bits(m):
    """Row-major; ours column-major (padded view, no copy); vLLM's column-major (storage [G, M],
    copied into the padded layout when M % 4 != 0); a strided row-major view (copied)."""
    _, _, xq, xs, wq, ws = problem(m, 200, 300, seed=m)
    want = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    _, ours = blockfp8.per_token_group_quant_fp8(problem(m, 200, 300, seed=m)[0], 128, column_major_scales=True)
    assert ours.stride() == (1, (m + 3) // 4 * 4)
    vllm = torch.empty((xs.shape[1], m)).permute(1, 0)  # vLLM: torch.empty((G, M)).permute(-1, -2)
    vllm.copy_(xs)
    wide = torch.empty((m, 8))
    wide[:, :3] = xs
    for scales in (xs, ours, vllm, wide[:, :3]):
        assert torch.equal(scales, xs)
        assert torch.equal(blockfp8.w8a8_block_fp8_matmul(xq, wq, scales, ws, [128, 128], torch.float32), want)


def test_batch_dims_and_empty_batch():
    _, _, xq, xs, wq, ws = problem(6, 129, 200)
    flat = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    batched = blockfp8.w8a8_block_fp8_matmul(xq.view(2, 3, 200), wq, xs.view(2, 3, 2), ws, [128, 128], torch.float32)
    assert batched.shape == (2, 3, 129) and torch.equal(batched.view(6, 129), flat)
    empty = blockfp8.w8a8_block_fp8_matmul(xq[:0], wq, xs[:0], ws, [128, 128], torch.bfloat16)
    assert empty.shape == (0, 129)
    q0, s0 = blockfp8.per_token_group_quant_fp8(torch.zeros(0, 256), 128)
    assert q0.shape == (0, 256) and s0.shape == (0, 2)


def test_quantizers_match_the_numpy_path_bit_for_bit():
    x = torch.randn(5, 300) * 3
    for kw in ({}, {"column_major_scales": True}, {"use_ue8m0": True}, {"dtype": FNUZ}):
        q, s = blockfp8.per_token_group_quant_fp8(x, 128, **kw)
        np_kw = dict(kw, dtype="e4m3fnuz") if "dtype" in kw else kw
        qn, sn = numpy_ops.per_token_group_quant_fp8(x.numpy(), 128, **np_kw)
        assert q.dtype == kw.get("dtype", FN)
        np.testing.assert_array_equal(u8(q), qn)
        np.testing.assert_array_equal(s.numpy(), sn)
    w = torch.randn(200, 300) * 0.1
    q, s = blockfp8.quantize_weight(w)
    qn, sn = numpy_ops.quantize_weight(w.numpy())
    np.testing.assert_array_equal(u8(q), qn)
    np.testing.assert_array_equal(s.numpy(), sn)
    # bf16 input quantizes as its f32 value
    wb = w.to(torch.bfloat16)
    assert torch.equal(blockfp8.quantize_weight(wb)[0].view(torch.uint8), blockfp8.quantize_weight(wb.float())[0].view(torch.uint8))


def test_fnuz_normalization_matches_the_crate_and_computes_the_same_product():
    _, _, xq, xs, wq, ws = problem(4, 129, 200, seed=11)
    wq[0, :8] = torch.tensor([-0.0] * 8).to(FN)  # 0x80 bytes, as checkpoints have
    w2, s2, _ = blockfp8.normalize_e4m3fn_to_e4m3fnuz(wq, ws)
    qn, sn, _ = numpy_ops.normalize_e4m3fn_to_e4m3fnuz(u8(wq), ws.numpy())
    assert w2.dtype == FNUZ and u8(wq)[0, 0] == 0x80
    np.testing.assert_array_equal(u8(w2), qn)
    np.testing.assert_array_equal(s2.numpy(), sn)
    # The fnuz GEMM of the converted weight with fnuz activations (same scales doubled by
    # the conversion) equals the e4m3fn GEMM: x = q * s is preserved exactly.
    x = torch.randn(4, 200)
    aq, as_ = blockfp8.per_token_group_quant_fp8(x, 128, dtype=FN)
    a2, as2, _ = blockfp8.normalize_e4m3fn_to_e4m3fnuz(aq, as_)
    y_fn = blockfp8.w8a8_block_fp8_matmul(aq, wq, as_, ws, [128, 128], torch.float32)
    y_fnuz = blockfp8.w8a8_block_fp8_matmul(a2, w2, as2, s2, [128, 128], torch.float32)
    assert torch.equal(y_fn, y_fnuz)


def test_weight_cache_prepares_once_and_notices_in_place_writes():
    weight_cache.clear()
    _, _, xq, xs, wq, ws = problem(3, 129, 200, seed=5)
    before = weight_cache.info()
    y1 = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    y2 = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    after = weight_cache.info()
    assert torch.equal(y1, y2)
    assert (after["misses"] - before["misses"], after["hits"] - before["hits"]) == (1, 1)
    ws.mul_(2)  # in place: the version counter moves
    y3 = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    assert weight_cache.info()["invalidated"] == after["invalidated"] + 1
    assert torch.equal(y3, 2 * y1)


def test_inference_mode_tensors_work_without_version_counters():
    with torch.inference_mode():
        _, _, xq, xs, wq, ws = problem(3, 129, 200, seed=12)
        y = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
        assert torch.equal(y, blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32))
    want = reference_gemm(u8(xq), xs.numpy(), u8(wq), ws.numpy())
    assert calc_diff(want, y.numpy()) < 1e-6


def test_prepare_weight_pins_and_the_cache_evicts_least_recent(monkeypatch):
    weight_cache.clear()
    monkeypatch.setenv("BLOCKFP8_WEIGHT_CACHE_SIZE", "2")
    _, _, xq, xs, wq, ws = problem(3, 129, 200, seed=6)
    pinned = blockfp8.prepare_weight(wq, ws, [128, 128])
    assert pinned.pinned and not pinned.copied
    y = pinned.matmul(xq, xs, torch.float32)
    assert torch.equal(y, blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32))
    others = [problem(3, 129, 200, seed=20 + i)[4:] for i in range(3)]
    for oq, os_ in others:
        blockfp8.w8a8_block_fp8_matmul(xq, oq, xs, os_, [128, 128])
    info = weight_cache.info()
    assert info["entries"] == 2 and info["pinned"] == 1 and info["evicted"] == 2
    pinned.reserve(64, torch.bfloat16)
    pinned.release()
    assert weight_cache.info()["pinned"] == 0


def test_torch_compile_fullgraph_equals_eager():
    from deepseek_mlp_loader import load_example

    mlp_mod = load_example()
    torch.manual_seed(0)
    mlp = mlp_mod.BlockFP8MLP.from_bf16(*mlp_mod.random_bf16_weights(hidden=256, inter=320, device="cpu"))
    x = torch.randn(5, 256, dtype=torch.bfloat16)
    eager = mlp(x)
    compiled = torch.compile(mlp, fullgraph=True, backend="aot_eager")(x)
    assert torch.equal(eager, compiled)


def test_eager_calls_skip_the_dispatcher_but_modes_and_subclasses_still_see_the_ops():
    # Eager calls on plain tensors run the ops' implementations directly (torch_ops._plain_eager:
    # the dispatcher's host cost); the results are the op's, bit for bit, weights held as
    # nn.Parameter included, and a dispatch mode (what FakeTensorMode, make_fx and profilers use)
    # still sees both ops.
    from torch.utils._python_dispatch import TorchDispatchMode

    x, _, xq, xs, wq, ws = problem(33, 200, 384, seed=5)
    eager = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.bfloat16)
    assert torch.equal(eager, torch.ops.blockfp8.w8a8_block_fp8_matmul.default(xq, wq, xs, ws, [128, 128], torch.bfloat16))
    param = torch.nn.Parameter(wq, requires_grad=False)
    assert torch.equal(blockfp8.w8a8_block_fp8_matmul(xq, param, xs, ws, [128, 128], torch.bfloat16), eager)
    q_op, s_op = torch.ops.blockfp8.per_token_group_quant_fp8.default(x, 128, 1e-10, None, False, False)
    assert np.array_equal(u8(xq), u8(q_op)) and torch.equal(xs, s_op)

    seen = []

    class Recorder(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    with Recorder():
        q2, s2 = blockfp8.per_token_group_quant_fp8(x, 128)
        y = blockfp8.w8a8_block_fp8_matmul(q2, param, s2, ws, [128, 128], torch.bfloat16)
    assert "blockfp8.per_token_group_quant_fp8.default" in seen and "blockfp8.w8a8_block_fp8_matmul.default" in seen, seen
    assert torch.equal(y, eager)
    # Scales that need autograd go through the op too (no gradient formula: backward is refused
    # there rather than silently skipped).
    ws_grad = ws.clone().requires_grad_(True)
    seen.clear()
    with Recorder():
        blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws_grad, [128, 128], torch.bfloat16)
    assert "blockfp8.w8a8_block_fp8_matmul.default" in seen, seen


def test_opcheck_of_the_custom_ops():
    _, _, xq, xs, wq, ws = problem(3, 129, 200)
    # test_schema compares fp8 inputs with arithmetic torch lacks for fp8 on the CPU.
    utils = ("test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.blockfp8.w8a8_block_fp8_matmul.default, (xq, wq, xs, ws, [128, 128], torch.bfloat16), test_utils=utils)
    x = torch.randn(5, 256, dtype=torch.bfloat16)
    torch.library.opcheck(torch.ops.blockfp8.per_token_group_quant_fp8.default, (x, 128, 1e-10, None, True, False))
    torch.library.opcheck(torch.ops.blockfp8.quantize_weight.default, (torch.randn(129, 200), None))


def test_bad_input_raises_clear_errors():
    _, _, xq, xs, wq, ws = problem(3, 129, 200)
    mm = blockfp8.w8a8_block_fp8_matmul
    with pytest.raises(blockfp8.ShapeError, match="K differs"):
        mm(xq, wq[:, :128].contiguous(), xs, ws, [128, 128])
    with pytest.raises(blockfp8.ShapeError, match="As must be"):
        mm(xq, wq, xs[:2], ws, [128, 128])
    with pytest.raises(blockfp8.DtypeError, match="float32"):
        mm(xq, wq, xs.half(), ws, [128, 128])
    with pytest.raises(blockfp8.DtypeError, match="float8"):
        mm(xq.view(torch.uint8), wq, xs, ws, [128, 128])
    with pytest.raises(blockfp8.LayoutError, match="contiguous"):
        big = torch.zeros(3, 400, dtype=FN)
        mm(big[:, :200], wq, xs, ws, [128, 128])
    with pytest.raises(blockfp8.DtypeError, match="normalize_e4m3fn_to_e4m3fnuz"):
        mm(xq.view(torch.uint8).view(FNUZ), wq, xs, ws, [128, 128])
    with pytest.raises(blockfp8.InvalidArgumentError, match="block_size"):
        mm(xq, wq, xs, ws, [128])
    # a weight that is not a tensor: torch's own argument error, naming the argument
    with pytest.raises(RuntimeError, match="for argument 'B'"):
        mm(xq, u8(wq), xs, ws, [128, 128])
    with pytest.raises(blockfp8.InvalidArgumentError, match="eps"):
        blockfp8.per_token_group_quant_fp8(torch.randn(2, 128), 128, eps=1e-4)
    with pytest.raises(blockfp8.ShapeError, match="2-D"):
        blockfp8.per_token_group_quant_fp8(torch.randn(2, 2, 128), 128, column_major_scales=True)
    with pytest.raises(blockfp8.DtypeError):
        blockfp8.per_token_group_quant_fp8(torch.randn(2, 128).to(torch.float64), 128)
    with pytest.raises(blockfp8.NonFiniteError):
        blockfp8.per_token_group_quant_fp8(torch.tensor([[float("nan")] * 128]), 128)
    # the fake implementation checks too: bad shapes fail at trace time (dynamo wraps the error)
    with pytest.raises(Exception, match="As must be A.shape"):
        torch.compile(lambda a: mm(a, wq, xs[:2], ws, [128, 128]), fullgraph=True, backend="aot_eager")(xq)


@pytest.mark.skipif(blockfp8._lib.backend_compiled(blockfp8._lib.BACKEND_CUDA), reason="this library has the cuda backend")
def test_a_gpu_device_without_its_backend_is_a_clear_error():
    from blockfp8._torch_util import context_for

    with pytest.raises(blockfp8.DeviceError, match="built without the cuda backend"):
        context_for(torch.device("cuda", 0))


def test_config_dir_is_seen_by_the_package(tmp_path):
    """A tuned file in $BLOCKFP8_CONFIG_DIR for this CPU is picked up, as by the crate."""
    name = blockfp8.device_info("cpu")["config_name"]
    (tmp_path / f"N=256,K=512,device_name={name},dtype=fp8_w8a8,block_shape=[128,128].json").write_text(
        '{"16": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 32, "BLOCK_SIZE_K": 128, "GROUP_SIZE_M": 1, "num_warps": 4, "num_stages": 2}}'
    )
    code = "import blockfp8; print(blockfp8.gemm_path(16, 256, 512)); print(blockfp8.gemm_path(16, 256, 1024))"
    env = dict(os.environ, BLOCKFP8_CONFIG_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=str(tmp_path)).stdout.split("\n")
    assert out[0].startswith("tuned") and "16" in out[0], out
    assert out[1] == "kernel default", out


def test_package_imports_and_computes_without_torch(tmp_path):
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "import numpy as np, blockfp8\n"
        "q, s = blockfp8.per_token_group_quant_fp8(np.ones((2, 128), np.float32), 128)\n"
        "w, ws = blockfp8.quantize_weight(np.ones((128, 128), np.float32))\n"
        "y = blockfp8.w8a8_block_fp8_matmul(q, w, s, ws, [128, 128], np.float32)\n"
        "assert y.shape == (2, 128) and np.allclose(y, 128.0), y\n"
        "try:\n    blockfp8.prepare_weight(w, ws)\nexcept blockfp8.DtypeError as e:\n    print('ok', e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0 and out.stdout.startswith("ok"), out.stderr


@pytest.mark.parametrize("m,n,k", [(3, 129, 200), (17, 2112, 200)])
def test_torch_gemm_equals_the_crate_cli_bit_for_bit(tmp_path, m, n, k):
    _, _, xq, xs, wq, ws = problem(m, n, k, seed=9)
    ours = blockfp8.w8a8_block_fp8_matmul(xq, wq, xs, ws, [128, 128], torch.float32)
    np.testing.assert_array_equal(ours.numpy(), cli_gemm(tmp_path, u8(xq), xs.numpy(), u8(wq), ws.numpy()))


def test_example_runs_against_its_bf16_reference():
    out = subprocess.run([sys.executable, os.path.join(REPO, "python", "examples", "deepseek_mlp.py"), "--device", "cpu", "--hidden", "512", "--inter", "384", "--tokens", "7"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "calc_diff" in out.stdout
