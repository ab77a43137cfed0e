//! CUDA backend tests. The tests that need an NVIDIA GPU are `#[ignore]`d (a plain
//! `cargo test --features cuda` lists them as ignored); on a GPU machine run them with
//! `-- --include-ignored --skip anchor_benchmark` (ci/gpu-tests.sh does); without a GPU they
//! then fail, saying so. The availability test checks the typed error either way. On a GPU:
//! quantization bit-exact against the CPU reference, GEMM against the float64 reference (calc_diff) on the anchor and ragged shapes
//! for the kernel and cuBLASLt paths (the backend poisons C with NaN before every run), every
//! compiled config, and bad input rejected before any launch.
//!
//! The benchmark (`cargo test --release --features cuda --test cuda -- --ignored anchor_benchmark
//! --nocapture`) prints the anchor table; BLOCKFP8_BENCH_OUT names a file to write it to.
#![cfg(feature = "cuda")]

mod common;

#[allow(unused_imports)]
use blockfp8::HostOps;
use blockfp8::backend::cuda::{bench, bf16_gemm, kernels, CudaBackend};
use blockfp8::backend::TimingOptions;
use blockfp8::config::KernelConfig;
use blockfp8::gemm::{ActScales, GemmPath, GemmProblem, GemmShape, OutDtype};
use blockfp8::quant::{quantize_per_token_group, quantize_weight_blocks};
use blockfp8::{Backend, Error, Fp8Format, ScaleLayout, TokenQuantOptions};
use common::{assert_output_close, calc_diff_bound, random_activations, random_quantized_problem_with, random_weights, reference_gemm_f64, QuantizedProblem};

const FN: Fp8Format = Fp8Format::E4m3fn;

const NEEDS_GPU: &str = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)";

/// Device 0, or a failure that says why: the tests that call this are `#[ignore]`d, so a
/// plain `cargo test` lists them as ignored instead of passing them without a GPU, and one
/// run with `--include-ignored` where there is no GPU fails instead of claiming coverage.
fn gpu() -> CudaBackend {
    CudaBackend::new(0).unwrap_or_else(|e| panic!("this test {NEEDS_GPU}; no usable NVIDIA GPU here: {e}"))
}

#[test]
fn open_reports_device_or_typed_unavailability() {
    match CudaBackend::new(0) {
        Ok(b) => {
            let d = b.device();
            assert_eq!(d.fp8, FN);
            assert!(d.arch.starts_with("sm_"), "arch {}", d.arch);
            assert!(d.compute_units > 0);
            assert!(!d.name.is_empty());
            assert!(!d.config_name().contains(' '), "config name {}", d.config_name());
            assert!(!blockfp8::backend::cuda::devices().is_empty());
        }
        Err(Error::BackendUnavailable { backend, reason }) => {
            assert_eq!(backend, "cuda");
            assert!(!reason.is_empty());
            assert!(blockfp8::backend::cuda::devices().is_empty());
        }
        Err(other) => panic!("expected BackendUnavailable without a GPU, got {other}"),
    }
    // An ordinal past the last device is unavailable everywhere.
    assert!(matches!(CudaBackend::new(1000), Err(Error::BackendUnavailable { .. })));
}

#[test]
fn build_embeds_kernels_and_report() {
    assert!(!kernels::CUBINS.is_empty());
    assert!(kernels::find_gemm(&kernels::default_config(), OutDtype::Bf16).is_ok());
    for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
        assert!(kernels::find_gemm(&kernels::default_config(), out).is_ok(), "{out:?}");
    }
    assert!(CudaBackend::resource_report().contains("spill"), "ptxas -v report missing");
    let mut bad = kernels::default_config();
    bad.block_k = 64;
    assert!(kernels::find_gemm(&bad, OutDtype::Bf16).unwrap_err().contains("BLOCK_SIZE_K"));
}

/// Kernel-selection rules, checked without a GPU (they run in the CPU-only CI job).
#[test]
fn shipped_hopper_configs_are_compiled_and_selection_rules_hold() {
    use blockfp8::config::{embedded_configs, ConfigTable};
    let shape = bf16_shape;
    let sm90a = kernels::built_archs() == ["sm_90a"];
    // Every kernel entry of a shipped NVIDIA file names a compiled tile, for every output dtype
    // (otherwise the planner would silently fall back to the vendor path).
    let mut checked = 0;
    for (name, text) in embedded_configs().iter().filter(|(n, _)| n.contains("device_name=NVIDIA")) {
        let table = ConfigTable::parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (m, cfg) in table.entries.iter().filter(|(_, c)| !c.prefers_vendor()) {
            for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
                let inst = kernels::find_gemm(cfg, out).unwrap_or_else(|e| panic!("{name} M={m}: {e}"));
                assert!(["tma", "tma_swap", "mma"].contains(&inst.body), "{name} M={m}: body {}", inst.body);
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "no shipped NVIDIA kernel entries found");
    // K % 16 != 0 (no TMA row pitch) takes the mma.sync tile; small M takes a swapped TMA tile.
    assert_eq!(kernels::body(&kernels::heuristic_config(&shape(64, 576, 200), 132)), Some("mma"));
    if sm90a {
        assert_eq!(kernels::body(&kernels::heuristic_config(&shape(8, 4096, 7168), 132)), Some("tma_swap"));
        assert_eq!(kernels::body(&kernels::heuristic_config(&shape(4096, 4096, 7168), 132)), Some("tma"));
        // M 33-128: a deeper ring when the tiles fit on the SMs at once, else 4 stages (M=128:
        // 128 tiles of 64x64 at N=4096, more than three quarters of the SMs: 11; 64 at N=2048:
        // 8; 224 at N=7168: 4; M=64: 128 of 32x64 at N=4096: 8); M <= 32: 8 where the tiles
        // in the rule's K splits leave each SM one work item (N=2112: 33 tiles in 4 splits),
        // else 4 (N=4096: 64 tiles in 3 splits, 192 items).
        let tile = |m, n| {
            let c = kernels::heuristic_config(&shape(m, n, 7168), 132);
            (c.block_m, c.block_n, c.num_stages)
        };
        assert_eq!(tile(128, 4096), (64, 64, Some(11)));
        assert_eq!(tile(128, 2048), (64, 64, Some(8)));
        assert_eq!(tile(128, 7168), (64, 64, Some(4)));
        assert_eq!(tile(64, 4096), (32, 64, Some(8)));
        assert_eq!(tile(64, 18432), (32, 64, Some(4)));
        assert_eq!(tile(32, 4096), (32, 64, Some(4)));
        assert_eq!(tile(32, 2112), (32, 64, Some(8)));
        assert_eq!(tile(8, 2112), (16, 64, Some(8)));
        assert_eq!(tile(8, 4096), (16, 64, Some(4)));
        // Large M: the widest tile that finishes in the fewest whole waves of 132 SMs: N=4096
        // in 128x256 (M=1024: 128 tiles, one wave; 128x192 would take two), N=18432 at M=1024
        // in 128x192 (768 tiles, 6 waves; 128x256 makes 576, 5 waves of wider tiles).
        let wide = |m, n| {
            let c = kernels::heuristic_config(&shape(m, n, 7168), 132);
            (c.block_m, c.block_n)
        };
        assert_eq!(wide(1024, 4096), (128, 256));
        assert_eq!(wide(4096, 4096), (128, 256));
        assert_eq!(wide(1024, 18432), (128, 192));
        // 600 x 512: 5 x 4 tiles of 128x128 against 5 x 2 of 128x256, one wave either way.
        assert_eq!(wide(600, 512), (128, 128));
        assert!(kernels::candidate_configs().iter().all(|c| kernels::body(c).is_some()));
        // num_warps says which operand takes the wgmma M side: 4 per 64 rows of BM (normal)
        // or of BN (swapped), e.g. m64n128w4 vs m64n128w8 (tuning builds compile both).
        for c in kernels::candidate_configs() {
            let (normal, swapped) = (c.num_warps == 4 * c.block_m / 64, c.num_warps == 4 * c.block_n / 64);
            match kernels::body(&c) {
                Some("tma") => assert!(normal, "{}", c.short()),
                Some("tma_swap") => assert!(swapped && !normal, "{}", c.short()),
                _ => {}
            }
        }
    }
    // Split K: none when the tiles fill the SMs, at most 8 and each split >= 4 K blocks
    // otherwise, an explicit SPLIT_K clamped to the K blocks.
    let big = kernels::default_config();
    assert_eq!(kernels::split_k(&big, &shape(4096, 4096, 7168), 132), 1);
    let small = kernels::heuristic_config(&shape(8, 4096, 7168), 132);
    let s = kernels::split_k(&small, &shape(8, 4096, 7168), 132);
    assert!((2..=8).contains(&s) && 56 / s >= 4, "split {s}");
    assert_eq!(kernels::split_k(&big.with_split_k(64), &shape(8, 4096, 512), 132), 4);
    if kernels::uses_wgmma(&big) {
        // 56 tiles of 128x128, 144 K blocks, 132 SMs: 3 splits (168 items) would start a
        // second wave; 2 make one wave of 72 blocks.
        assert_eq!(kernels::split_k(&big, &shape(128, 7168, 18432), 132), 2);
        // 128 tiles of 64x64 nearly fill the SMs: no split (2 would make 256 items).
        let mid = kernels::heuristic_config(&shape(128, 4096, 7168), 132);
        assert_eq!((mid.block_m, mid.block_n, kernels::split_k(&mid, &shape(128, 4096, 7168), 132)), (64, 64, 1));
        // A split pays for its workspace and conversion (kernels::split_k's SPLIT_COST): few
        // 64x64 tiles of short K stay whole, long K still splits (the H200 measured both).
        let rule = |m, n, k| kernels::split_k(&kernels::heuristic_config(&shape(m, n, k), 132), &shape(m, n, k), 132);
        assert_eq!([rule(100, 512, 1024), rule(256, 1024, 1024), rule(256, 1024, 4096), rule(256, 512, 4096), rule(100, 1024, 4096)], [1, 1, 1, 4, 4]);
        // Swapped tiles stream weights: 112 tiles split in 2, so that every SM streams.
        let few = kernels::heuristic_config(&shape(8, 7168, 18432), 132);
        assert_eq!((kernels::body(&few), kernels::split_k(&few, &shape(8, 7168, 18432), 132)), (Some("tma_swap"), 2));
        // The tuner also times a config unsplit and at half the rule's splits (at 16x7168x2048
        // the fastest tile in the rule's 2 splits ran 1.15x slower than 16x64 s8 unsplit on the
        // H200); not where the rule keeps it whole, the config pins its split, or a K-split
        // pair splits on chip.
        let alts = |c: &KernelConfig, m, n, k| kernels::split_alternatives(c, &shape(m, n, k), 132);
        assert_eq!((kernels::split_k(&few, &shape(16, 7168, 2048), 132), alts(&few, 16, 7168, 2048)), (2, vec![1]));
        assert_eq!((rule(256, 512, 4096), alts(&kernels::heuristic_config(&shape(256, 512, 4096), 132), 256, 512, 4096)), (4, vec![1, 2]));
        assert!(alts(&big, 4096, 4096, 7168).is_empty());
        assert!(alts(&few.with_split_k(2), 16, 7168, 2048).is_empty());
        let mut pair = few.clone();
        pair.extra.insert("blockfp8_cluster".into(), 2.into());
        pair.extra.insert("blockfp8_cluster_splits_k".into(), true.into());
        assert!(alts(&pair, 16, 7168, 2048).is_empty());
    }
    // Persistent grids: the fewest CTAs that keep the wave count (512 tiles: 4 waves on 128,
    // not 132); no more CTAs than work; an exact multiple stays whole.
    assert_eq!(kernels::persistent_ctas(512, 132), 128);
    assert_eq!(kernels::persistent_ctas(896, 132), 128);
    assert_eq!(kernels::persistent_ctas(100, 132), 100);
    assert_eq!(kernels::persistent_ctas(264, 132), 132);
    assert_eq!(kernels::persistent_ctas(133, 132), 67);
    assert_eq!(kernels::persistent_ctas(5, 0), 1);
}

#[test]
fn activation_scales_load_by_tma_when_layout_and_alignment_allow() {
    use kernels::{scale_load, ScaleLoad};
    // Row-major [M, KB] (strides (row, K block) = (pitch, 1)): a TMA box per stage when the
    // pitch is a multiple of 16 bytes (KB = 56 for K = 7168, or a padded pitch).
    assert_eq!(scale_load(0x1000, 64, 56, (56, 1)), ScaleLoad::TmaRows);
    assert_eq!(scale_load(0x1000, 64, 10, (12, 1)), ScaleLoad::TmaRows);
    assert_eq!(scale_load(0x1000, 64, 10, (10, 1)), ScaleLoad::CpAsync);
    // Column-major [KB, M] (vLLM's CUTLASS layout): the M pitch decides.
    assert_eq!(scale_load(0x1000, 40, 5, (1, 40)), ScaleLoad::TmaCols);
    assert_eq!(scale_load(0x1000, 33, 5, (1, 36)), ScaleLoad::TmaCols);
    assert_eq!(scale_load(0x1000, 33, 5, (1, 33)), ScaleLoad::CpAsync);
    // A base off 16 bytes, strides with no unit side, a single scale: cp.async.
    assert_eq!(scale_load(0x1004, 64, 56, (56, 1)), ScaleLoad::CpAsync);
    assert_eq!(scale_load(0x1000, 64, 56, (112, 2)), ScaleLoad::CpAsync);
    assert_eq!(scale_load(0x1000, 1, 1, (1, 1)), ScaleLoad::CpAsync);
}

#[test]
fn c_goes_out_by_tma_store_only_where_the_tile_and_layout_allow() {
    use kernels::c_store_box;
    // A tile with a C buffer (boxes of 64 columns), 16-bit C, unsplit, rows on 16 bytes.
    assert_eq!(c_store_box(64, OutDtype::Bf16, 1, 4096, 0x1000), Some(64));
    assert_eq!(c_store_box(16, OutDtype::F16, 1, 200, 0x1000), Some(16));
    // No buffer; fp32 C; a K split (fp32 sums into the workspace); a row pitch or base off
    // 16 bytes (N = 1100 bf16 rows are 2200 bytes): the warps store C themselves.
    assert_eq!(c_store_box(0, OutDtype::Bf16, 1, 4096, 0x1000), None);
    assert_eq!(c_store_box(64, OutDtype::F32, 1, 4096, 0x1000), None);
    assert_eq!(c_store_box(64, OutDtype::Bf16, 2, 4096, 0x1000), None);
    assert_eq!(c_store_box(64, OutDtype::Bf16, 1, 1100, 0x1000), None);
    assert_eq!(c_store_box(64, OutDtype::Bf16, 1, 4096, 0x1008), None);
    // Every compiled tile with a C buffer has boxes that divide its width.
    for inst in kernels::GEMM_INSTANCES.iter().filter(|i| i.c_box > 0) {
        assert!(inst.block_n % inst.c_box == 0 && [16, 32, 64].contains(&inst.c_box), "{}", inst.symbol);
    }
    // The launch encodes the last-C map (boxes of the tile's 128 rows) only for the store-warp
    // tiles: two-consumer C-buffer tiles, not 128x144, unclustered.
    for inst in kernels::GEMM_INSTANCES.iter().filter(|i| i.store_warp) {
        assert!(inst.c_box > 0 && inst.block_m == 128 && inst.num_warps == 8 && inst.block_n != 144 && inst.cluster == 1, "{}", inst.symbol);
    }
    if kernels::GEMM_INSTANCES.iter().any(|i| i.body == "tma") {
        // (sm_90a builds: the default set compiles these tiles)
        let store_warp = |sym: &str| kernels::GEMM_INSTANCES.iter().find(|i| i.symbol == sym).map(|i| i.store_warp);
        assert_eq!(store_warp("sm90_gemm_block_fp8_m128n192w8s4_bf16"), Some(true));
        assert_eq!(store_warp("sm90_gemm_block_fp8_m128n256w8s3_bf16"), Some(true));
        assert_eq!(store_warp("sm90_gemm_block_fp8_m128n256w8s4_bf16"), Some(false));
        assert_eq!(store_warp("sm90_gemm_block_fp8_m64n64w4s8_bf16"), Some(false));
    }
}

#[test]
fn one_consumer_tiles_take_their_scales_per_tile_when_the_range_fits_a_box() {
    use kernels::{scale_load_arg, scale_slab_k_blocks, ScaleLoad};
    // K = 7168 (56 blocks): the whole range in one box; split in 2, 28 blocks each.
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 56, 1), Some(56));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaCols, 56, 2), Some(28));
    // A row-major box is whole 16-byte pieces from a 16-byte boundary (K = 1536: 12 blocks;
    // 3 splits of 4; 2 of 6, the second from block 6, so a box of blocks 4-11), never wider
    // than the tensor: 10 blocks in a padded pitch of 12 go stage by stage.
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 12, 1), Some(12));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 12, 3), Some(4));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 12, 2), Some(12));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 56, 4), Some(20));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaCols, 56, 4), Some(14));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 10, 1), None);
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaCols, 10, 1), Some(10));
    // Past 64 blocks per part (K = 16384 unsplit; row-major 62 blocks in parts that do not
    // start on a 16-byte boundary), or scales that only cp.async can read.
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaCols, 128, 1), None);
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaCols, 128, 2), Some(64));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 124, 2), None);
    assert_eq!(scale_slab_k_blocks(ScaleLoad::TmaRows, 128, 2), Some(64));
    assert_eq!(scale_slab_k_blocks(ScaleLoad::CpAsync, 56, 1), None);
    // The kernel argument: mode, bulk weight scales (aligned base, KB % 4 == 0), box width.
    assert_eq!(scale_load_arg(ScaleLoad::TmaCols, None, 0x1000, 56), 2);
    assert_eq!(scale_load_arg(ScaleLoad::TmaRows, Some(56), 0x1000, 56), 1 | 4 | 56 << 8);
    assert_eq!(scale_load_arg(ScaleLoad::TmaCols, Some(10), 0x1000, 10), 2 | 10 << 8);
    assert_eq!(scale_load_arg(ScaleLoad::TmaCols, Some(12), 0x1008, 12), 2 | 12 << 8);
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn token_quantization_is_bit_exact() {
    let be = gpu();
    let cases = [(1, 128), (3, 200), (17, 7168), (100, 1280), (5, 129), (64, 512), (333, 7168)];
    for (i, &(m, k)) in cases.iter().enumerate() {
        let x = random_activations(m, k, 10 + i as u64);
        for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
            for ue8m0 in [false, true] {
                for fp8_max in [None, Some(224.0)] {
                    let mut o = TokenQuantOptions::new(FN);
                    o.layout = layout;
                    o.ue8m0 = ue8m0;
                    o.fp8_max = fp8_max;
                    let want = quantize_per_token_group(&x, m, k, &o).unwrap();
                    let got = be.quantize_tokens(&x, m, k, &o).unwrap();
                    let what = format!("M={m} K={k} {layout:?} ue8m0={ue8m0} max={fp8_max:?}");
                    assert_eq!(got.scales.len(), want.scales.len(), "{what}");
                    let bad_s = got.scales.iter().zip(&want.scales).position(|(a, b)| a.to_bits() != b.to_bits());
                    assert!(bad_s.is_none(), "{what}: scale #{:?} {:?} vs {:?}", bad_s, bad_s.map(|j| got.scales[j]), bad_s.map(|j| want.scales[j]));
                    let bad_q = got.q.iter().zip(&want.q).position(|(a, b)| a != b);
                    assert!(bad_q.is_none(), "{what}: byte #{:?}", bad_q);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn weight_quantization_is_bit_exact() {
    let be = gpu();
    for (i, &(n, k)) in [(129, 200), (256, 7168), (576, 1280), (1, 1)].iter().enumerate() {
        let w = random_weights(n, k, 50 + i as u64);
        let want = quantize_weight_blocks(&w, n, k, (128, 128), FN).unwrap();
        let got = be.quantize_weight(&w, n, k, (128, 128), FN).unwrap();
        assert_eq!(got.scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), want.scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), "N={n} K={k} scales");
        assert!(got.q == want.q, "N={n} K={k} bytes differ");
    }
}

/// The rows the reference is computed for: all when M is small, else 64 first + 64 last.
fn check_rows(m: usize) -> Vec<usize> {
    if m <= 256 {
        (0..m).collect()
    } else {
        (0..64).chain(m - 64..m).collect()
    }
}

/// The problem restricted to `rows` (row-major scales), for a cheaper CPU reference.
fn row_subset(q: &QuantizedProblem, rows: &[usize]) -> (Vec<u8>, Vec<f32>) {
    let (k, kb) = (q.shape.k, q.shape.k_blocks());
    let a = rows.iter().flat_map(|&r| q.a[r * k..(r + 1) * k].iter().copied()).collect();
    let s = rows.iter().flat_map(|&r| q.a_scales[r * kb..(r + 1) * kb].iter().copied()).collect();
    (a, s)
}

fn bf16_shape(m: usize, n: usize, k: usize) -> GemmShape {
    GemmShape { m, n, k, block: (128, 128), format: FN, out_dtype: OutDtype::Bf16 }
}

/// Runs `paths` on the problem and compares the selected rows with the f64 reference.
fn check_gemm(be: &CudaBackend, q: &QuantizedProblem, out: OutDtype, paths: &[GemmPath]) {
    let p = q.problem_with_out(out);
    let rows = check_rows(q.shape.m);
    let reference = if rows.len() == q.shape.m || q.a_layout == ScaleLayout::ColumnMajor {
        assert_eq!(rows.len(), q.shape.m, "row subsets need row-major scales");
        reference_gemm_f64(&p)
    } else {
        let (a, s) = row_subset(q, &rows);
        let mut shape = p.shape;
        shape.m = rows.len();
        reference_gemm_f64(&GemmProblem { shape, a: &a, a_scales: ActScales { data: &s, layout: ScaleLayout::RowMajor }, b: &q.b, b_scales: &q.b_scales })
    };
    let n = q.shape.n;
    for path in paths {
        let what = format!("M={} N={} K={} {:?} out={} {}", q.shape.m, n, q.shape.k, q.a_layout, out.name(), path.label());
        let got = be.gemm(&p, path).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(got.len(), q.shape.m * n, "{what}");
        let full = got.to_f64();
        let picked: Vec<f64> = rows.iter().flat_map(|&r| full[r * n..(r + 1) * n].iter().copied()).collect();
        let sub = blockfp8::gemm::Output::from_f32(out, picked.iter().map(|&v| v as f32).collect());
        // Hopper's fp8 tensor cores (wgmma, and cuBLASLt, which uses them) accumulate with
        // fewer bits than fp32 inside each 128-K block (seen: 8.4e-8 at M=1 N=576 K=1280 f32
        // out, identical for both), so those paths get the 16-bit bound for f32 output; the
        // mma.sync body (exact f16 products) is held to the f32 bound.
        let fp8_tensor_cores = match path {
            GemmPath::Vendor => true,
            GemmPath::Tuned(c) => kernels::uses_wgmma(c),
            GemmPath::KernelDefault => kernels::uses_wgmma(&kernels::heuristic_config(&q.shape, 132)),
        };
        let bound = if fp8_tensor_cores { calc_diff_bound(OutDtype::Bf16) } else { calc_diff_bound(out) };
        assert_output_close(&sub, out, &reference, bound, &what);
        if let Some(i) = full.iter().position(|v| !v.is_finite()) {
            panic!("{what}: element {i} not written or not finite ({})", full[i]);
        }
    }
}

/// Whether the build compiles `cfg` with fp16 C (the tuning build's extra tiles have bf16 C only).
fn has_f16(cfg: &KernelConfig) -> bool {
    kernels::find_gemm(cfg, OutDtype::F16).is_ok()
}

fn paths_for(be: &CudaBackend, shape: &GemmShape) -> Vec<GemmPath> {
    let mut v = vec![GemmPath::KernelDefault, GemmPath::Tuned(kernels::default_config())];
    match be.supports(shape, &GemmPath::Vendor) {
        Ok(()) => v.push(GemmPath::Vendor),
        Err(why) => eprintln!("vendor path skipped for M={} N={} K={}: {why}", shape.m, shape.n, shape.k),
    }
    v
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn gemm_anchor_shapes_match_reference() {
    let be = gpu();
    for (i, &(m, n, k, _, _)) in bench::ANCHORS.iter().enumerate() {
        let q = random_quantized_problem_with(m, n, k, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 100 + i as u64);
        let paths = paths_for(&be, &q.shape);
        assert!(paths.contains(&GemmPath::Vendor), "cuBLASLt should serve anchor shape {m}x{n}x{k} on the H200");
        check_gemm(&be, &q, OutDtype::Bf16, &paths);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn gemm_ragged_shapes_match_reference() {
    let be = gpu();
    let mut seed = 500;
    for m in [1, 3, 17, 100, 1000] {
        for n in [576, 2112, 129] {
            for k in [1280, 200] {
                seed += 1;
                let layout = if seed % 2 == 0 { ScaleLayout::ColumnMajor } else { ScaleLayout::RowMajor };
                let layout = if m > 256 { ScaleLayout::RowMajor } else { layout };
                let q = random_quantized_problem_with(m, n, k, FN, layout, (128, 128), OutDtype::Bf16, seed);
                let paths = paths_for(&be, &q.shape);
                if n == 129 || k == 200 {
                    assert!(!paths.contains(&GemmPath::Vendor), "cuBLASLt cannot serve N={n} K={k}");
                }
                check_gemm(&be, &q, OutDtype::Bf16, &paths);
                if m == 17 || m == 1 {
                    check_gemm(&be, &q, OutDtype::F16, &paths);
                    check_gemm(&be, &q, OutDtype::F32, &paths);
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn two_consumer_tiles_are_correct_over_several_tiles_per_cta() {
    let be = gpu();
    // More 128-row tiles than SMs (N = 2400: 13 tiles of 192, 17 of 144, 10 of 256, 19 of 128;
    // M = 2100: 17 rows of tiles), so that persistent CTAs take a second tile, whose first K
    // block sits at another ring stage (K = 1280: 10 blocks, 1536: 12) and whose C buffer the
    // previous tile's stores may still be reading. A tile's C is stored during the next tile's
    // first block (DEFER_C / DEFER_STAGED in cuda/gemm_sm90_tma.cuh), the last tile's after the
    // loop; K = 128 makes that first block also the tile's last, and fp16 C takes the same paths.
    let configs: Vec<KernelConfig> = be.candidate_configs().into_iter().filter(|c| c.block_m == 128 && c.num_warps == 8).collect();
    let with_f16: Vec<GemmPath> = configs.iter().filter(|c| has_f16(c)).cloned().map(GemmPath::Tuned).collect();
    assert!(with_f16.len() >= 3, "the default build compiles 128x128, 128x192 and 128x256, fp16 C included");
    let all: Vec<GemmPath> = configs.into_iter().map(GemmPath::Tuned).collect();
    for (i, (k, out)) in [(1280usize, OutDtype::Bf16), (1536, OutDtype::Bf16), (128, OutDtype::Bf16), (1280, OutDtype::F16)].into_iter().enumerate() {
        let q = random_quantized_problem_with(2100, 2400, k, FN, ScaleLayout::RowMajor, (128, 128), out, 950 + i as u64);
        check_gemm(&be, &q, out, if out == OutDtype::Bf16 { &all } else { &with_f16 });
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn two_consumer_tiles_finish_under_back_to_back_launches() {
    let be = gpu();
    // Short K and a wide C (M = 256, N = 24576, K = 1536: 2-3 tiles per persistent CTA), launched
    // hundreds of times back to back: the C stores then queue on the TMA and stall the store
    // warp (STORE_WARP in cuda/gemm_sm90_tma.cuh) while the consumers run on through the ring.
    // Its pacing once waited on a block's `empty` phase, which such a lapped ring made wait
    // forever: 128x128 s5 (compiled in every build for this test) hung within 25 s on the H200,
    // every time. A hang fails this test by the runner's timeout; every two-consumer tile of
    // the build runs, the shipped store-warp tiles (128x192 s4, 128x256 s3) included.
    let configs: Vec<KernelConfig> = be.candidate_configs().into_iter().filter(|c| c.block_m == 128 && c.num_warps == 8 && c.cluster() <= 1).collect();
    let s5 = configs.iter().any(|c| c.block_n == 128 && c.num_stages == Some(5));
    assert!(configs.len() >= 5 && s5, "the default build compiles 128x128 s5 / s6, 128x192 and two 128x256 tiles");
    let q = random_quantized_problem_with(256, 24576, 1536, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 960);
    let p = q.problem();
    let t = TimingOptions { warmup: 3, repeats: 100, ..Default::default() };
    for cfg in &configs {
        let path = GemmPath::Tuned(cfg.clone());
        let times = be.time_gemm(&p, &path, &t).unwrap_or_else(|e| panic!("{}: {e}", cfg.short()));
        assert_eq!(times.len(), t.repeats, "{}", cfg.short());
    }
    check_gemm(&be, &q, OutDtype::Bf16, &configs.into_iter().map(GemmPath::Tuned).collect::<Vec<_>>());
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn every_compiled_config_is_correct() {
    let be = gpu();
    // TMA tiles (K % 16 == 0, partial tiles on every side), the mma.sync fallback (K = 200),
    // a single token, column-major scales, three 128-row tiles (clusters of two pair the
    // first two and leave the third's partner past M), every start offset of 144-wide tiles,
    // and activation scales loaded by TMA: row-major boxes of 4 K blocks (K = 1536: 12 blocks,
    // split K starts parts mid-box) and column-major rows (M = 33 padded to a 36-row pitch),
    // or a tile's whole range in one slab (the one-consumer deep-ring tiles).
    let shapes = [
        (77, 200, 1536, ScaleLayout::RowMajor),
        (33, 328, 512, ScaleLayout::ColumnMajor),
        (77, 200, 1280, ScaleLayout::RowMajor),
        (130, 576, 200, ScaleLayout::RowMajor),
        (1, 129, 384, ScaleLayout::RowMajor),
        (40, 320, 640, ScaleLayout::ColumnMajor),
        (300, 456, 896, ScaleLayout::RowMajor),
        // 144-wide tiles start 0, 16, ..., 112 columns into a weight-scale block: N = 1160
        // reaches all eight (and ends in a partial tile).
        (33, 1160, 256, ScaleLayout::RowMajor),
        // More 64-row tiles than SMs, so that a CTA's next tile refills a scale slab
        // (TmaTile::AS_SLAB) while the ring still holds its last: 8 K blocks (the producer
        // waits for the slab's release) and 18 (more than the ring: it need not; M <= 256, as
        // column-major scales get the full reference).
        (600, 1100, 1024, ScaleLayout::RowMajor),
        (200, 2400, 2304, ScaleLayout::ColumnMajor),
    ];
    let problems: Vec<QuantizedProblem> = shapes
        .iter()
        .enumerate()
        .map(|(i, &(m, n, k, layout))| random_quantized_problem_with(m, n, k, FN, layout, (128, 128), OutDtype::Bf16, 900 + i as u64))
        .collect();
    let configs = be.candidate_configs();
    assert!(!configs.is_empty());
    for q in &problems {
        let paths: Vec<GemmPath> = configs.iter().cloned().map(GemmPath::Tuned).collect();
        check_gemm(&be, q, OutDtype::Bf16, &paths);
    }
    // fp16 C from the normal TMA tiles (one consumer warpgroup per 64 rows), which store 16-bit
    // C by TMA where they have a C buffer (N = 200, 328, 576: rows on 16 bytes; N = 129: the
    // warps store it). Every tile the default build compiles has fp16 C; the tuning build's
    // extra tiles have bf16 C only.
    let normal: Vec<GemmPath> = configs.iter().filter(|c| kernels::body(c) == Some("tma") && has_f16(c)).cloned().map(GemmPath::Tuned).collect();
    assert!(normal.iter().any(|p| matches!(p, GemmPath::Tuned(c) if c.block_m == 64)) && normal.iter().any(|p| matches!(p, GemmPath::Tuned(c) if c.block_m == 128)));
    for q in &problems[..5] {
        check_gemm(&be, q, OutDtype::F16, &normal);
    }
    // Split K (fp32 atomics + conversion kernel), uneven splits and parts without K blocks
    // included (K = 640 in 4 splits is 3 parts), every output dtype; the widest tile too
    // (two wgmma waves of 128 columns).
    let wide = kernels::heuristic_config(&bf16_shape(4096, 4096, 7168), 132);
    let split_cfgs = [kernels::default_config(), kernels::heuristic_config(&problems[0].shape, 132), kernels::heuristic_config(&problems[2].shape, 132), wide];
    let splits_of = |c: &KernelConfig| [3u32, 4].map(|s| GemmPath::Tuned(c.with_split_k(s)));
    let split_paths: Vec<GemmPath> = split_cfgs.iter().flat_map(splits_of).collect();
    // Clusters (tuning builds; bf16 only there) with split K too.
    let cluster_paths: Vec<GemmPath> = configs.iter().filter(|c| c.cluster() > 1 && !c.cluster_splits_k()).take(2).flat_map(splits_of).collect();
    for q in &problems {
        for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
            check_gemm(&be, q, out, &split_paths);
        }
        check_gemm(&be, q, OutDtype::Bf16, &cluster_paths);
    }
}

/// Pairs of CTAs that split each tile's K range and add the second's sums into the first's
/// through distributed shared memory (`blockfp8_cluster_splits_k`).
#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn k_split_pairs_match_reference() {
    let be = gpu();
    let configs: Vec<KernelConfig> = be.candidate_configs().into_iter().filter(|c| c.cluster_splits_k()).collect();
    assert!(!configs.is_empty(), "the build compiles K-split pairs (shipped configs name them; the tuning build has them all)");
    for c in &configs {
        assert_eq!(kernels::split_k(c, &bf16_shape(64, 128, 7168), 132), 1, "{}: a pair takes no workspace split besides", c.short());
    }
    // K = 128: the second CTA has no K block and adds zeros; K = 2304 (18 blocks) and 1152
    // (9: halves of 5 and 4, the second starting mid-box for row-major slabs); M = 600 N = 1100:
    // more tiles than pairs, so that a pair's second tile waits for its exchange buffer; partial
    // tiles on both sides; column-major scales (M = 200 padded to a 16-byte pitch).
    let cases = [
        (64, 4096, 2304, ScaleLayout::RowMajor, OutDtype::Bf16),
        (77, 200, 128, ScaleLayout::RowMajor, OutDtype::Bf16),
        (130, 328, 1152, ScaleLayout::RowMajor, OutDtype::Bf16),
        (600, 1100, 1024, ScaleLayout::RowMajor, OutDtype::Bf16),
        (200, 2400, 2304, ScaleLayout::ColumnMajor, OutDtype::Bf16),
        (130, 328, 1152, ScaleLayout::RowMajor, OutDtype::F16),
        (130, 328, 1152, ScaleLayout::RowMajor, OutDtype::F32),
    ];
    for (i, &(m, n, k, layout, out)) in cases.iter().enumerate() {
        let q = random_quantized_problem_with(m, n, k, FN, layout, (128, 128), out, 970 + i as u64);
        let paths: Vec<GemmPath> = configs.iter().filter(|c| kernels::find_gemm(c, out).is_ok()).cloned().map(GemmPath::Tuned).collect();
        assert!(!paths.is_empty() || out != OutDtype::Bf16);
        check_gemm(&be, &q, out, &paths);
    }
}

/// Split K on buffers a caller keeps (as a replayed graph does): every launch must find its
/// workspace ready (zeroed again for the atomics) and give the product, not a sum of launches.
#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn split_k_relaunches_on_one_workspace_match_reference() {
    let be = gpu();
    let q = random_quantized_problem_with(300, 456, 896, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 77);
    let p = q.problem();
    let reference = reference_gemm_f64(&p);
    let cfgs = [
        kernels::default_config(),
        kernels::heuristic_config(&bf16_shape(8, 4096, 7168), 132),
        kernels::heuristic_config(&bf16_shape(4096, 4096, 7168), 132),
        kernels::unaligned_k_config(),
    ];
    for cfg in &cfgs {
        for splits in [2u32, 4] {
            let path = GemmPath::Tuned(cfg.with_split_k(splits));
            let what = format!("{} split {splits}", cfg.short());
            let outs = be.gemm_relaunched(&p, &path, 3).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(outs.len(), 3, "{what}");
            for (i, o) in outs.iter().enumerate() {
                assert!(o.to_f64().iter().all(|v| v.is_finite()), "{what}, launch {i}: an element was not written");
                assert_output_close(o, OutDtype::Bf16, &reference, calc_diff_bound(OutDtype::Bf16), &format!("{what}, launch {i}"));
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn bad_input_is_rejected_before_launch() {
    let be = gpu();
    // M = 6: column-major scales need round_up(6, 4) = 8 rows, so a layout mix-up shows.
    let q = random_quantized_problem_with(6, 256, 256, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 7);
    let good = q.problem();
    // Mismatched A length.
    let short_a = &q.a[..q.a.len() - 1];
    let mut p = good;
    p.a = short_a;
    assert!(matches!(be.gemm(&p, &GemmPath::KernelDefault), Err(Error::Shape { .. })));
    // Wrong activation scale count (column-major needs padded rows).
    let mut p = good;
    p.a_scales = ActScales { data: &q.a_scales, layout: ScaleLayout::ColumnMajor };
    assert!(matches!(be.gemm(&p, &GemmPath::Vendor), Err(Error::Shape { .. })));
    // Wrong weight scale count.
    let mut p = good;
    p.b_scales = &q.b_scales[1..];
    assert!(matches!(be.gemm(&p, &GemmPath::Tuned(kernels::default_config())), Err(Error::Shape { .. })));
    // Sizes that overflow 32-bit indexing, with no data behind them.
    let mut p = good;
    p.shape.m = 1 << 20;
    p.shape.k = 1 << 12;
    let e = be.gemm(&p, &GemmPath::KernelDefault).unwrap_err();
    assert!(e.to_string().contains("2^31"), "{e}");
    let e = be.quantize_tokens(&[], 1 << 20, 1 << 12, &TokenQuantOptions::new(FN)).unwrap_err();
    assert!(matches!(e, Error::Shape { .. }), "{e}");
    // Unsupported block, flavour, group, and NaN scales.
    let mut p = good;
    p.shape.block = (64, 128);
    assert!(be.gemm(&p, &GemmPath::KernelDefault).is_err());
    let mut p = good;
    p.shape.format = Fp8Format::E4m3fnuz;
    assert!(matches!(be.gemm(&p, &GemmPath::KernelDefault), Err(Error::Unsupported { .. })));
    let mut o = TokenQuantOptions::new(FN);
    o.group = 64;
    assert!(matches!(be.quantize_tokens(&[0.0; 64], 1, 64, &o), Err(Error::Unsupported { .. })));
    assert!(matches!(be.quantize_tokens(&[f32::NAN; 128], 1, 128, &TokenQuantOptions::new(FN)), Err(Error::NonFinite { .. })));
    let mut nan_scales = q.b_scales.clone();
    nan_scales[0] = f32::NAN;
    let mut p = good;
    p.b_scales = &nan_scales;
    assert!(matches!(be.gemm(&p, &GemmPath::KernelDefault), Err(Error::NonFinite { .. })));
    // An uncompiled config is refused with a reason.
    let mut cfg = kernels::default_config();
    cfg.block_m = 48;
    assert!(matches!(be.gemm(&good, &GemmPath::Tuned(cfg)), Err(Error::Unsupported { .. })));
    // And the good problem still runs.
    assert!(be.gemm(&good, &GemmPath::KernelDefault).is_ok());
}

/// The ideal bf16 GEMM of `p`'s dequantized inputs at `rows`: the bf16 values from
/// `dequantize_bf16`, products and sums in f64 (exact products of 8-bit significands), the
/// result rounded to bf16. What cuBLASLt with fp32 accumulation should return.
fn ideal_bf16_gemm(p: &GemmProblem, rows: &[usize]) -> Vec<f64> {
    let (n, k) = (p.shape.n, p.shape.k);
    let (a, b) = bf16_gemm::dequantize_bf16(p);
    rows.iter()
        .flat_map(|&r| {
            let (a, b) = (&a, &b);
            (0..n).map(move |c| {
                let dot: f64 = a[r * k..(r + 1) * k].iter().zip(&b[c * k..(c + 1) * k]).map(|(x, y)| x.to_f64() * y.to_f64()).sum();
                half::bf16::from_f64(dot).to_f64()
            })
        })
        .collect()
}

/// Bound on calc_diff between the bf16 GEMM of the dequantized inputs and the exact (f64)
/// block-scaled product. bf16 keeps 8 significant bits: one rounding leaves an error of rms
/// ulp / sqrt(12), about 2^-7 / sqrt(12) / 1.5 = 1.5e-3 of the value. Each product term
/// carries two such roundings (sqrt(2) * 1.5e-3 = 2.1e-3 of random sign, which stays that
/// relative size in a sum of random-sign terms), the output one more; calc_diff ~
/// |err|^2 / (2 |c|^2) ~ (4.5e-6 + 2.3e-6) / 2 = 3.4e-6. The CPU emulation below measures
/// 3.2e-6 to 4.8e-6 on these shapes. 1e-4 leaves 20x margin, yet is 6x below the error of
/// fp8-level (4-bit) inputs, about 6e-4, and far below a wrong scale index or a missed
/// transpose (1e-2 and above).
const BF16_INPUTS_BOUND: f64 = 1e-4;

/// Shapes for the bf16 baseline: anchors (aligned), and ragged M, N, K (odd leading
/// dimensions, partial scale blocks, M = 1) in both activation-scale layouts.
const BF16_SHAPES: [(usize, usize, usize); 6] = [(8, 4096, 7168), (64, 24576, 1536), (1000, 576, 1280), (1, 2112, 1280), (3, 129, 200), (17, 576, 200)];

/// Case `i` of BF16_SHAPES: column-major activation scales on every other small-M case
/// (row subsets of the reference need row-major ones).
fn bf16_case(i: usize, out: OutDtype) -> QuantizedProblem {
    let (m, n, k) = BF16_SHAPES[i];
    let layout = if m > 256 || i % 2 == 1 { ScaleLayout::RowMajor } else { ScaleLayout::ColumnMajor };
    random_quantized_problem_with(m, n, k, FN, layout, (128, 128), out, 300 + i as u64)
}

/// Without a GPU: the error BF16_INPUTS_BOUND allows for is the error bf16 rounding makes. The
/// ideal bf16 GEMM (CPU emulation) lies within 3x of the predicted 3.4e-6 from the exact
/// product, so the model behind the bound holds (seeded data: no flakiness).
#[test]
fn bf16_baseline_error_is_what_bf16_rounding_predicts() {
    // The shapes whose full reference is cheap on a CPU.
    for (i, &(m, n, k)) in BF16_SHAPES.iter().enumerate().filter(|(_, s)| s.0 * s.1 * s.2 <= 300_000_000) {
        let q = bf16_case(i, OutDtype::Bf16);
        let p = q.problem();
        let rows: Vec<usize> = (0..m).collect();
        let d = blockfp8::gemm::calc_diff(&ideal_bf16_gemm(&p, &rows), &reference_gemm_f64(&p));
        eprintln!("M={m} N={n} K={k}: ideal bf16 GEMM of the dequantized inputs, calc_diff {d:.2e} against the exact product");
        assert!(d > 1.1e-6 && d < 1.0e-5, "M={m} N={n} K={k}: calc_diff {d:e}, predicted 3.4e-6");
    }
}

/// The bf16 cuBLASLt baseline of the benchmark: its output matches the exact block-scaled
/// product within what bf16 input rounding explains, and the ideal bf16 GEMM of the same
/// dequantized inputs within the bf16-output bound (so the GEMM itself adds only fp32
/// accumulation error); C is poisoned with NaN before the checked run; timings are positive.
#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn bf16_vendor_gemm_matches_reference() {
    let be = gpu();
    let t = TimingOptions { warmup: 1, repeats: 3, rotate_bytes: 64 << 20, ..Default::default() };
    for (i, &(m, n, k)) in BF16_SHAPES.iter().enumerate() {
        // f32 output asked for: the baseline still answers in bf16.
        let q = bf16_case(i, OutDtype::F32);
        let p = q.problem();
        let what = format!("bf16 cuBLASLt M={m} N={n} K={k} {:?}", q.a_layout);
        let (times, out) = be.time_bf16_vendor_gemm(&p, &t).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(times.len(), t.repeats, "{what}");
        assert!(times.iter().all(|&s| s > 0.0 && s.is_finite()), "{what}: {times:?}");
        assert!(matches!(out, blockfp8::Output::Bf16(_)), "{what}: output dtype {:?}", out.dtype());
        assert_eq!(out.len(), m * n, "{what}");
        let full = out.to_f64();
        if let Some(j) = full.iter().position(|v| !v.is_finite()) {
            panic!("{what}: element {j} not written or not finite ({})", full[j]);
        }
        let rows = check_rows(m);
        let got: Vec<f64> = rows.iter().flat_map(|&r| full[r * n..(r + 1) * n].iter().copied()).collect();
        let exact = if rows.len() == m {
            reference_gemm_f64(&p)
        } else {
            let (a, s) = row_subset(&q, &rows);
            let shape = GemmShape { m: rows.len(), ..p.shape };
            reference_gemm_f64(&GemmProblem { shape, a: &a, a_scales: ActScales { data: &s, layout: ScaleLayout::RowMajor }, b: &q.b, b_scales: &q.b_scales })
        };
        common::assert_calc_diff_below(&got, &exact, BF16_INPUTS_BOUND, &format!("{what} vs exact product"));
        common::assert_calc_diff_below(&got, &ideal_bf16_gemm(&p, &rows), calc_diff_bound(OutDtype::Bf16), &format!("{what} vs ideal bf16 GEMM"));
    }
    // Bad input is refused before any device work.
    let q = random_quantized_problem_with(6, 256, 256, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 8);
    let mut p = q.problem();
    p.b_scales = &q.b_scales[1..];
    assert!(matches!(be.time_bf16_vendor_gemm(&p, &t), Err(Error::Shape { .. })));
}

/// Graph timing must replay every rotating launch: a per-launch time below what the H200 can
/// physically do (dense fp8 peak, HBM peak) would mean the captured pass lost work. Graph and
/// eager times of a 50 us kernel, where host launch cost is hidden, must also agree.
#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn graph_timing_replays_every_launch() {
    use blockfp8::backend::Launches;
    let be = gpu();
    const FP8_PEAK_FLOPS: f64 = 1.979e15; // H100/H200 SXM dense fp8
    const HBM_PEAK_BYTES: f64 = 4.8e12; // H200
    let q = random_quantized_problem_with(1024, 4096, 7168, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 31);
    let p = q.problem();
    let floor = 2.0 * 1024.0 * 4096.0 * 7168.0 / FP8_PEAK_FLOPS;
    for path in paths_for(&be, &p.shape) {
        let mut medians = Vec::new();
        for launches in [Launches::Graph, Launches::Eager] {
            let t = TimingOptions { warmup: 2, repeats: 5, rotate_bytes: 256 << 20, launches };
            let what = format!("{} {launches:?}", path.label());
            let times = be.time_gemm(&p, &path, &t).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(times.len(), t.repeats, "{what}");
            assert!(times.iter().all(|&s| s.is_finite() && s >= floor), "{what}: {times:?} s per launch, physical floor {floor:e} s");
            medians.push(blockfp8::tune::median(&times).expect("finite positive samples"));
        }
        let ratio = medians[0] / medians[1];
        assert!((0.75..1.33).contains(&ratio), "{}: graph {:e} s vs eager {:e} s per launch", path.label(), medians[0], medians[1]);
    }
    // Quantization: the graph of a memory-bound kernel cannot beat HBM either.
    let (m, k) = (16384, 7168);
    let t = TimingOptions { warmup: 2, repeats: 5, ..Default::default() };
    let times = be.time_quantize_tokens(m, k, true, &TokenQuantOptions::new(FN), &t).unwrap();
    let bytes = (m * k * 3 + 4 * m * k / 128) as f64;
    assert!(times.iter().all(|&s| s.is_finite() && s >= bytes / HBM_PEAK_BYTES), "quantization {times:?} s per launch");
    // The stream is usable for ordinary work after capture.
    check_gemm(&be, &q, OutDtype::Bf16, &[GemmPath::KernelDefault]);
}

/// Not a test: the anchor table. It needs a GPU and minutes, so the GPU test runs
/// (`--include-ignored`) skip it by name (`--skip anchor_benchmark`).
#[test]
#[ignore = "benchmark: needs an NVIDIA GPU, run with --ignored anchor_benchmark"]
fn anchor_benchmark() {
    // RUST_LOG=debug lists every swept config's time.
    let _ = env_logger::builder().is_test(true).try_init();
    let be = gpu();
    let sweep = std::env::var("BLOCKFP8_BENCH_SWEEP").map(|v| v != "0").unwrap_or(true);
    // BLOCKFP8_BENCH_SHAPES=MxNxK,... picks anchor rows (all by default).
    let wanted: Option<Vec<String>> = std::env::var("BLOCKFP8_BENCH_SHAPES").ok().map(|v| v.split(',').map(str::to_owned).collect());
    let shapes: Vec<_> = bench::ANCHORS.iter().copied().filter(|&(m, n, k, ..)| wanted.as_ref().is_none_or(|w| w.contains(&format!("{m}x{n}x{k}")))).collect();
    let layout = match std::env::var("BLOCKFP8_BENCH_SCALES").as_deref() {
        Ok("column") => ScaleLayout::ColumnMajor,
        _ => ScaleLayout::RowMajor,
    };
    // BLOCKFP8_BENCH_LAUNCHES=eager times host launches instead of graph replays.
    let launches = std::env::var("BLOCKFP8_BENCH_LAUNCHES").map(|v| v.parse().unwrap()).unwrap_or_default();
    let table = bench::run(&be, &shapes, sweep, layout, launches).unwrap();
    println!("{table}");
    if let Ok(path) = std::env::var("BLOCKFP8_BENCH_OUT") {
        std::fs::write(path, &table).unwrap();
    }
}

/// BlockScaledGemm on the CUDA backend: a tuned file is followed, no file goes to cuBLASLt,
/// and a shape cuBLASLt cannot serve (N = 129) falls back to the kernel default; each result
/// matches the reference.
#[test]
#[ignore = "needs an NVIDIA GPU (run with --include-ignored on a GPU machine)"]
fn planner_follows_tuned_files_and_falls_back() {
    use blockfp8::config::{dense_file_name, ConfigTable, Library};
    use blockfp8::BlockScaledGemm;
    use std::sync::Arc;
    let be = gpu();
    let dir = tempfile::tempdir().unwrap();
    let mut tuned = kernels::heuristic_config(&GemmShape { m: 17, n: 576, k: 1280, block: (128, 128), format: FN, out_dtype: OutDtype::Bf16 }, 132);
    tuned.group_m = 4;
    let table = ConfigTable::from_entries(vec![(16, tuned.clone())]).unwrap();
    std::fs::write(dir.path().join(dense_file_name(576, 1280, &be.device().name, "fp8_w8a8", (128, 128))), table.to_json()).unwrap();
    let lib = Arc::new(Library::new(vec![dir.path().to_path_buf()], false, false));
    let be: Arc<dyn Backend> = Arc::new(be);
    let gemm = BlockScaledGemm::new(be.clone(), lib);
    for (n, k, want) in [(576, 1280, GemmPath::Tuned(tuned.clone())), (2112, 1280, GemmPath::Vendor), (129, 1280, GemmPath::KernelDefault)] {
        let q = random_quantized_problem_with(17, n, k, FN, ScaleLayout::RowMajor, (128, 128), OutDtype::Bf16, 77 + n as u64);
        let p = q.problem();
        assert_eq!(gemm.plan(&p.shape), want, "N={n} K={k}");
        let out = gemm.run(&p).unwrap();
        assert_output_close(&out, OutDtype::Bf16, &reference_gemm_f64(&p), calc_diff_bound(OutDtype::Bf16), &format!("planned N={n} K={k}"));
    }
}
