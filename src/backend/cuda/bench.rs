//! H200 benchmark core: on the anchor shapes, the vendor path (cuBLASLt), the kernel's
//! default path, every compiled kernel config (best reported) and a dense bf16 cuBLASLt GEMM of
//! the dequantized inputs (the no-fp8 baseline), timed in one run; and the
//! token-quantization bandwidth. Inputs are random fp8 bytes (no NaN patterns) with random
//! positive scales; the kernel's best and cuBLASLt are cross-checked with calc_diff.

use std::fmt::Write as _;

use crate::backend::{Backend, HostOps, Launches, TimingOptions};
use crate::config::KernelConfig;
use crate::error::Result;
use crate::formats::Fp8Format;
use crate::gemm::{calc_diff, ActScales, GemmPath, GemmProblem, GemmShape, OutDtype};
use crate::quant::{ScaleLayout, TokenQuantOptions};

use super::runtime::{arg, ptr};
use super::CudaBackend;

/// The anchor shapes (M, N, K), with the "vLLM Triton, best of sweep" and cuBLASLt
/// microseconds measured for them on the H200 (BENCHMARKS.md), for reference.
pub const ANCHORS: [(usize, usize, usize, f64, f64); 16] = [
    (8, 4096, 7168, 21.5, 20.8),
    (8, 7168, 18432, 60.9, 51.3),
    (8, 18432, 7168, 43.2, 60.3),
    (64, 4096, 7168, 24.7, 26.7),
    (64, 7168, 18432, 70.0, 60.8),
    (64, 18432, 7168, 52.7, 60.2),
    (64, 24576, 1536, 15.4, 20.8),
    (64, 32768, 512, 8.9, 13.3),
    (64, 7168, 16384, 61.1, 53.9),
    (128, 4096, 7168, 27.6, 27.9),
    (128, 7168, 18432, 81.8, 61.5),
    (128, 18432, 7168, 86.2, 59.7),
    (1024, 4096, 7168, 88.6, 52.9),
    (1024, 18432, 7168, 417.1, 219.6),
    (2048, 4096, 7168, 176.9, 104.3),
    (4096, 4096, 7168, 350.6, 204.5),
];

/// Copy bandwidth measured on the H200 alongside the anchor figures, for the bytes floor.
pub const COPY_BW: f64 = 4.25e12;

struct Owned {
    shape: GemmShape,
    a: Vec<u8>,
    a_scales: Vec<f32>,
    a_layout: ScaleLayout,
    b: Vec<u8>,
    b_scales: Vec<f32>,
}

impl Owned {
    fn random(m: usize, n: usize, k: usize, seed: u64, a_layout: ScaleLayout) -> Self {
        let mut s = seed | 1;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        // Bytes with exponent field <= 13 and not NaN: values up to about +-160.
        let mut fp8 = |len: usize| -> Vec<u8> { (0..len).map(|_| (next() >> 56) as u8 & 0xEF).collect() };
        let a = fp8(m * k);
        let b = fp8(n * k);
        let shape = GemmShape { m, n, k, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16 };
        let mut s2 = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut scale = move || {
            s2 ^= s2 << 13;
            s2 ^= s2 >> 7;
            s2 ^= s2 << 17;
            1e-3 * (1.0 + (s2 >> 40) as f32 / (1u64 << 24) as f32)
        };
        let kb = shape.k_blocks();
        let row_major: Vec<f32> = (0..m * kb).map(|_| scale()).collect();
        let b_scales = (0..shape.n_blocks() * kb).map(|_| scale()).collect();
        // The same activation scales, placed by the requested layout's strides.
        let (row_stride, group_stride) = a_layout.strides(m, kb);
        let mut a_scales = vec![0.0f32; a_layout.scale_count(m, kb)];
        for (i, &x) in row_major.iter().enumerate() {
            a_scales[(i / kb) * row_stride + (i % kb) * group_stride] = x;
        }
        Owned { shape, a, a_scales, a_layout, b, b_scales }
    }
    fn problem(&self) -> GemmProblem<'_> {
        GemmProblem {
            shape: self.shape,
            a: &self.a,
            a_scales: ActScales { data: &self.a_scales, layout: self.a_layout },
            b: &self.b,
            b_scales: &self.b_scales,
        }
    }
}

/// The bytes floor measured: the fastest of a few grid sizes of `cuda/traffic_floor.cu`, which
/// reads A and B once and writes C's bytes with no math, timed over rotating copies like the
/// GEMMs, launch included. Returns microseconds and the CTAs per SM that gave them.
fn measured_floor_us(be: &CudaBackend, owned: &Owned, t: &TimingOptions) -> Result<(f64, u32)> {
    let s = owned.shape;
    let c_bytes = s.m * s.n * s.out_dtype.bytes();
    let copies = t.copies(owned.a.len() + owned.b.len() + c_bytes, 32);
    let gpu = &be.gpu;
    let mut sets = Vec::with_capacity(copies);
    for _ in 0..copies {
        sets.push((gpu.upload(&owned.a)?, gpu.upload(&owned.b)?, gpu.zeros::<u8>(c_bytes)?));
    }
    let f = be.function(super::kernels::TRAFFIC_FLOOR_MODULE, super::kernels::TRAFFIC_FLOOR_SYMBOL, 0)?;
    let st = &gpu.stream;
    let vecs = |bytes: usize| (bytes / 16) as i64;
    let (na, nb, nc) = (vecs(owned.a.len()), vecs(owned.b.len()), vecs(c_bytes));
    let mut best = (f64::INFINITY, 0);
    for per_sm in [1u32, 2, 4, 8] {
        let grid = be.device.compute_units.max(1) * per_sm;
        let times = super::gemm_launch::time_rotating(gpu, copies, t, |i| {
            let (a, b, c) = (ptr(&sets[i].0, st), ptr(&sets[i].1, st), ptr(&sets[i].2, st));
            let mut args = [arg(&a), arg(&na), arg(&b), arg(&nb), arg(&c), arg(&nc)];
            // SAFETY: matches sm90_traffic_floor(const uint4*, long long, const uint4*, long
            // long, uint4*, long long); each count is its buffer's length in whole 16-byte vectors.
            unsafe { gpu.launch(&f, (grid, 1, 1), (256, 1, 1), 0, &mut args) }
        })?;
        let us = median(times) * 1e6;
        if us < best.0 {
            best = (us, per_sm);
        }
    }
    Ok(best)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs the GEMM table and the quantization table; returns them as Markdown.
/// `a_layout`: the activation-scale layout the kernel reads (cuBLASLt always gets its own
/// M-major copy).
pub fn run(be: &CudaBackend, shapes: &[(usize, usize, usize, f64, f64)], sweep: bool, a_layout: ScaleLayout, launches: Launches) -> Result<String> {
    let t = TimingOptions { launches, ..TimingOptions::default() };
    let mut out = String::new();
    let dev = be.device();
    let _ = writeln!(out, "device: {} ({}, {} SMs); timing: median of {} repeats, each a pass over rotating input copies >= 256 MiB ({:?} launches), CUDA events; kernel activation scales {a_layout:?}", dev.name, dev.arch, dev.compute_units, t.repeats, t.launches);
    let _ = writeln!(out, "\n| M | N | K | floor us | measured floor us | cuBLASLt us (TFLOPS) | bf16 cuBLASLt us (TFLOPS) | kernel default us (cfg) | kernel best us (cfg, TFLOPS) | best/cuBLASLt | anchors: vLLM best / cuBLASLt us | calc_diff best vs cuBLASLt |");
    let _ = writeln!(out, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    let candidates: Vec<KernelConfig> = if sweep { be.candidate_configs() } else { Vec::new() };
    for (i, &(m, n, k, vllm_best, lt_anchor)) in shapes.iter().enumerate() {
        let owned = Owned::random(m, n, k, 1000 + i as u64, a_layout);
        let p = owned.problem();
        let floor = p.shape.min_bytes() / COPY_BW * 1e6;
        let (measured_floor, floor_per_sm) = measured_floor_us(be, &owned, &t)?;
        let tflops = |us: f64| p.shape.flops() / (us * 1e-6) / 1e12;
        let vendor = match be.supports(&p.shape, &GemmPath::Vendor) {
            Ok(()) => Some(median(be.time_gemm(&p, &GemmPath::Vendor, &t)?) * 1e6),
            Err(why) => {
                log::warn!("vendor path unavailable for {m}x{n}x{k}: {why}");
                None
            }
        };
        // The bf16 GEMM of the dequantized inputs; its output is not checked here (tests/cuda.rs does).
        let bf16_txt = match be.time_bf16_vendor_gemm(&p, &t) {
            Ok((times, _)) => {
                let us = median(times) * 1e6;
                format!("{us:.1} ({:.0})", tflops(us))
            }
            Err(crate::Error::Unsupported { reason, .. }) => {
                log::warn!("bf16 cuBLASLt unavailable for {m}x{n}x{k}: {reason}");
                "-".into()
            }
            Err(e) => return Err(e),
        };
        let sms = dev.compute_units;
        let default_cfg = super::kernels::heuristic_config(&p.shape, sms);
        let label = |c: &KernelConfig| format!("{} split{}{}", c.short(), super::kernels::split_k(c, &p.shape, sms), if super::kernels::uses_wgmma(c) { " wgmma" } else { " mma.sync" });
        let default_us = median(be.time_gemm(&p, &GemmPath::KernelDefault, &t)?) * 1e6;
        let mut best = (default_us, default_cfg.clone());
        for cfg in &candidates {
            let path = GemmPath::Tuned(cfg.clone());
            if be.supports(&p.shape, &path).is_err() {
                continue;
            }
            let quick = TimingOptions { warmup: 1, repeats: 5, ..t.clone() };
            let us = median(be.time_gemm(&p, &path, &quick)?) * 1e6;
            log::debug!("{m}x{n}x{k} {}: {us:.1} us", label(cfg));
            if us < best.0 {
                best = (us, cfg.clone());
            }
        }
        // Explicit K splits for the winner (the automatic choice is what the sweep timed).
        if sweep {
            let quick = TimingOptions { warmup: 1, repeats: 5, ..t.clone() };
            for splits in 1u32..=8 {
                let cfg = best.1.with_split_k(splits);
                let us = median(be.time_gemm(&p, &GemmPath::Tuned(cfg.clone()), &quick)?) * 1e6;
                if us < best.0 {
                    best = (us, cfg);
                }
            }
        }
        // Re-time the winner with the full repeat count.
        // (A quick-timing winner that re-times slower than the default loses to it.)
        if best.1 != default_cfg {
            best.0 = median(be.time_gemm(&p, &GemmPath::Tuned(best.1.clone()), &t)?) * 1e6;
            if best.0 > default_us {
                best = (default_us, default_cfg.clone());
            }
        }
        let diff = match vendor {
            Some(_) => {
                let a = be.gemm(&p, &GemmPath::Tuned(best.1.clone()))?.to_f64();
                let b = be.gemm(&p, &GemmPath::Vendor)?.to_f64();
                format!("{:.1e}", calc_diff(&a, &b))
            }
            None => "-".into(),
        };
        let (v_txt, ratio) = match vendor {
            Some(v) => (format!("{v:.1} ({:.0})", tflops(v)), format!("{:.2}x", v / best.0)),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            out,
            "| {m} | {n} | {k} | {floor:.1} | {measured_floor:.1} ({floor_per_sm}/SM) | {v_txt} | {bf16_txt} | {default_us:.1} ({}) | {:.1} ({}, {:.0}) | {ratio} | {vllm_best} / {lt_anchor} | {diff} |",
            label(&default_cfg),
            best.0,
            label(&best.1),
            tflops(best.0)
        );
        eprintln!("done {m}x{n}x{k}");
    }

    let _ = writeln!(out, "\n| quantization M x K | input | scales | us | TB/s (bytes read + written) |");
    let _ = writeln!(out, "|---|---|---|--:|--:|");
    for &(m, k) in &[(4096usize, 7168usize), (16384, 7168), (65536, 7168)] {
        for (bf16_in, layout) in [(true, ScaleLayout::RowMajor), (true, ScaleLayout::ColumnMajor), (false, ScaleLayout::RowMajor)] {
            let mut opts = TokenQuantOptions::new(Fp8Format::E4m3fn);
            opts.layout = layout;
            let us = median(be.time_quantize_tokens(m, k, bf16_in, &opts, &t)?) * 1e6;
            let bytes = (m * k * if bf16_in { 2 } else { 4 } + m * k + 4 * m * k.div_ceil(128)) as f64;
            let _ = writeln!(out, "| {m} x {k} | {} | {layout:?} | {us:.1} | {:.2} |", if bf16_in { "bf16" } else { "f32" }, bytes / (us * 1e-6) / 1e12);
        }
    }
    Ok(out)
}
