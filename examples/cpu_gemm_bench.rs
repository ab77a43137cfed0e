//! GFLOPS of the CPU backend's block-scaled GEMM.
//!
//! `cargo run --release --example cpu_gemm_bench -- [M,N,K ...] [--configs]`
//! Default shapes: 128x4096x7168 and 1024x4096x7168. `--configs` times every CPU config.

use std::time::Instant;

use blockfp8::backend::cpu::gemm_f32;
use blockfp8::gemm::{ActScales, GemmProblem, GemmShape, OutDtype};
use blockfp8::quant::{quantize_per_token_group, quantize_weight_blocks, ScaleLayout, TokenQuantOptions};
use blockfp8::Fp8Format;

fn pseudo_random(len: usize, seed: u64) -> Vec<f32> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        })
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let all_configs = args.iter().any(|a| a == "--configs");
    let mut shapes: Vec<(usize, usize, usize)> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(|a| {
            let v: Vec<usize> = a.split(',').map(|x| x.parse().expect("M,N,K")).collect();
            (v[0], v[1], v[2])
        })
        .collect();
    if shapes.is_empty() {
        shapes = vec![(128, 4096, 7168), (1024, 4096, 7168)];
    }
    let tiles: Vec<(usize, usize)> = if all_configs {
        [8, 16, 32, 64].iter().flat_map(|&bm| [32, 64, 128, 256].map(move |bn| (bm, bn))).collect()
    } else {
        vec![(32, 128)]
    };
    println!("threads: {}", rayon::current_num_threads());
    println!("{:>6} {:>6} {:>6} {:>4} {:>4} {:>10} {:>8}", "M", "N", "K", "BM", "BN", "ms", "GFLOPS");
    for (m, n, k) in shapes {
        let format = Fp8Format::E4m3fn;
        let t = Instant::now();
        let xa = quantize_per_token_group(&pseudo_random(m * k, 1), m, k, &TokenQuantOptions::new(format)).unwrap();
        let wb = quantize_weight_blocks(&pseudo_random(n * k, 2), n, k, (128, 128), format).unwrap();
        println!("quantize A [{m},{k}] + B [{n},{k}]: {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
        let p = GemmProblem {
            shape: GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::Bf16 },
            a: &xa.q,
            a_scales: ActScales { data: &xa.scales, layout: ScaleLayout::RowMajor },
            b: &wb.q,
            b_scales: &wb.scales,
        };
        p.validate().unwrap();
        for &(bm, bn) in &tiles {
            std::hint::black_box(gemm_f32(&p, bm, bn)); // warm-up
            let repeats = 3;
            let mut best = f64::MAX;
            for _ in 0..repeats {
                let t = Instant::now();
                std::hint::black_box(gemm_f32(&p, bm, bn));
                best = best.min(t.elapsed().as_secs_f64());
            }
            println!("{m:>6} {n:>6} {k:>6} {bm:>4} {bn:>4} {:>10.1} {:>8.1}", best * 1e3, p.shape.flops() / best / 1e9);
        }
    }
}
