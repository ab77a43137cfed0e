//! The device-resident API, one test body per behaviour run on every backend present: the CPU,
//! the HIP backend on its emulated gfx942/gfx950 devices (feature `rocm`), CUDA and real HIP
//! devices where the machine has them. Each test prints which backends it ran and which it
//! skipped; `BLOCKFP8_REQUIRE_BACKENDS=cuda,rocm` turns a missing backend into a failure (the
//! GPU runners set it, so GPU coverage is never claimed without running).

mod common;

use std::sync::Arc;

use blockfp8::backend::{self, Backend};
use blockfp8::config::Library;
use blockfp8::gemm::calc_diff;
use blockfp8::{BackendKind, BlockScaledGemm, Context, DeviceElem, Error, Fp8Format, GemmSpec, OutDtype, Output, ScaleLayout, TokenQuantOptions};
use common::{random_activations, random_quantized_problem, random_weights, reference_gemm_f64};
use half::{bf16, f16};

/// Every backend this build and machine have, with a cost class (emulated devices run small
/// shapes only: every work-item is a fiber).
fn backends() -> Vec<(Arc<dyn Backend>, bool)> {
    let mut out: Vec<(Arc<dyn Backend>, bool)> = vec![(backend::open(BackendKind::Cpu, 0).unwrap(), false)];
    let mut skipped = Vec::new();
    for (kind, ordinals, emulated) in [(BackendKind::HipEmulator, 2, true), (BackendKind::Cuda, 1, false), (BackendKind::Rocm, 1, false)] {
        for ordinal in 0..ordinals {
            match backend::open(kind, ordinal) {
                Ok(b) => out.push((b, emulated)),
                Err(e) => skipped.push(format!("{}:{ordinal} ({e})", kind.name())),
            }
        }
    }
    let ran: Vec<String> = out.iter().map(|(b, _)| format!("{} {}", b.id(), b.device().arch)).collect();
    eprintln!("device_api backends run: {}; skipped: {}", ran.join(", "), if skipped.is_empty() { "none".into() } else { skipped.join("; ") });
    if let Ok(required) = std::env::var("BLOCKFP8_REQUIRE_BACKENDS") {
        for want in required.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            assert!(out.iter().any(|(b, _)| b.kind().name() == want), "BLOCKFP8_REQUIRE_BACKENDS lists {want}, which is not present: {skipped:?}");
        }
    }
    out
}

/// A context with no tuned files (every shape takes the no-file default path) and one with the
/// shipped files: both must agree with the host API through the same library.
fn context(be: &Arc<dyn Backend>, library: &Arc<Library>) -> Context {
    Context::new(Arc::clone(be), Arc::clone(library))
}

fn output_bits(out: &Output) -> Vec<u32> {
    match out {
        Output::Bf16(v) => v.iter().map(|x| x.to_bits() as u32).collect(),
        Output::F16(v) => v.iter().map(|x| x.to_bits() as u32).collect(),
        Output::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
    }
}

fn device_output<T: DeviceElem>(ctx: &Context, stream: &blockfp8::Stream, plan: &blockfp8::GemmPlan, qp: &common::QuantizedProblem, wrap: impl Fn(Vec<T>) -> Output) -> Output {
    let s = qp.shape;
    let weight = ctx.prepare_weight(stream, &qp.b, &qp.b_scales, s.n, s.k, s.block, s.format).unwrap();
    let a = ctx.upload(stream, &qp.a).unwrap();
    let a_s = ctx.upload(stream, &qp.a_scales).unwrap();
    let mut c = ctx.alloc::<T>(s.m * s.n).unwrap();
    plan.enqueue(stream, a.view(), a_s.view(), &weight, &mut c.view_mut()).unwrap();
    wrap(ctx.download(stream, c.view()).unwrap())
}

#[test]
fn device_api_equals_host_api_bit_for_bit() {
    let library = Arc::new(Library::from_env());
    for (be, emulated) in backends() {
        let ctx = context(&be, &library);
        let host = BlockScaledGemm::new(Arc::clone(&be), Arc::clone(&library));
        let stream = ctx.new_stream().unwrap();
        let format = be.device().fp8;
        let ms: &[usize] = if emulated { &[1, 3, 17] } else { &[1, 3, 17, 100, 1000] };
        let ns: &[usize] = if emulated { &[129, 576] } else { &[576, 2112, 129] };
        for &n in ns {
            for &k in &[1280usize, 200] {
                for &m in ms {
                    // The CPU reference is slow at M = 1000 with wide N; the GPUs run it all.
                    if be.kind() == BackendKind::Cpu && m == 1000 && n != 129 {
                        continue;
                    }
                    for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
                        let mut qp = random_quantized_problem(m, n, k, format, layout, (m * 31 + n * 7 + k) as u64);
                        let reference = reference_gemm_f64(&qp.problem());
                        for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
                            qp.shape.out_dtype = out;
                            let what = format!("{} M={m} N={n} K={k} {layout:?} {}", be.id(), out.name());
                            let spec = GemmSpec { n, k, block: (128, 128), format, out_dtype: out, a_layout: layout, max_m: m };
                            let plan = ctx.gemm_plan(spec).unwrap();
                            let dev = match out {
                                OutDtype::Bf16 => device_output::<bf16>(&ctx, &stream, &plan, &qp, Output::Bf16),
                                OutDtype::F16 => device_output::<f16>(&ctx, &stream, &plan, &qp, Output::F16),
                                OutDtype::F32 => device_output::<f32>(&ctx, &stream, &plan, &qp, Output::F32),
                            };
                            let host_out = host.run(&qp.problem()).unwrap();
                            assert_eq!(output_bits(&dev), output_bits(&host_out), "{what}: device and host API differ ({})", plan.path_for(m).label());
                            let diff = calc_diff(&dev.to_f64(), &reference);
                            assert!(diff < 1e-5, "{what}: calc_diff {diff:e} against the float64 reference");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn quantize_then_gemm_on_the_device_equals_the_cpu_reference_path() {
    let library = Arc::new(Library::new(vec![], false, false));
    let cpu = backend::open(BackendKind::Cpu, 0).unwrap();
    for (be, emulated) in backends() {
        let ctx = context(&be, &library);
        let stream = ctx.new_stream().unwrap();
        let format = be.device().fp8;
        let shapes: &[(usize, usize, usize)] = if emulated { &[(3, 129, 200), (17, 256, 384)] } else { &[(3, 576, 1280), (100, 2112, 200), (1, 129, 7168)] };
        for &(m, n, k) in shapes {
            for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
                for ue8m0 in [false, true] {
                    let what = format!("{} M={m} N={n} K={k} {layout:?} ue8m0={ue8m0}", be.id());
                    // bf16 inputs, as an engine holds them; the reference quantizes the same values.
                    let x: Vec<bf16> = random_activations(m, k, 5).into_iter().map(bf16::from_f32).collect();
                    let w: Vec<bf16> = random_weights(n, k, 6).into_iter().map(bf16::from_f32).collect();
                    let (xf, wf): (Vec<f32>, Vec<f32>) = (x.iter().map(|v| v.to_f32()).collect(), w.iter().map(|v| v.to_f32()).collect());
                    let opts = TokenQuantOptions { layout, ue8m0, ..TokenQuantOptions::new(format) };
                    let want_x = blockfp8::quant::quantize_per_token_group(&xf, m, k, &opts).unwrap();
                    let want_w = blockfp8::quant::quantize_weight_blocks(&wf, n, k, (128, 128), format).unwrap();

                    let x_dev = ctx.upload(&stream, &x).unwrap();
                    let w_dev = ctx.upload(&stream, &w).unwrap();
                    let weight = ctx.quantize_weight(&stream, w_dev.view(), n, k).unwrap();
                    let mut xq = ctx.alloc::<u8>(m * k).unwrap();
                    let mut xs = ctx.alloc::<f32>(layout.scale_count(m, k.div_ceil(128))).unwrap();
                    ctx.quantize_tokens(&stream, x_dev.view(), m, k, &opts, &mut xq.view_mut(), &mut xs.view_mut()).unwrap();
                    let plan = ctx.gemm_plan(GemmSpec { n, k, block: (128, 128), format, out_dtype: OutDtype::F32, a_layout: layout, max_m: m }).unwrap();
                    let mut y = ctx.alloc::<f32>(m * n).unwrap();
                    plan.enqueue(&stream, xq.view(), xs.view(), &weight, &mut y.view_mut()).unwrap();

                    assert_eq!(ctx.download(&stream, xq.view()).unwrap(), want_x.q, "{what}: activation bytes");
                    let got_s = ctx.download(&stream, xs.view()).unwrap();
                    for row in 0..m {
                        for g in 0..k.div_ceil(128) {
                            let (sm, sg) = layout.strides(m, k.div_ceil(128));
                            assert_eq!(got_s[row * sm + g * sg].to_bits(), want_x.scale(row, g).to_bits(), "{what}: activation scale ({row}, {g})");
                        }
                    }
                    assert_eq!(ctx.download(&stream, weight.q()).unwrap(), want_w.q, "{what}: weight bytes");
                    assert_eq!(ctx.download(&stream, weight.scales()).unwrap(), want_w.scales, "{what}: weight scales");
                    // The same quantized data through the CPU backend's host path.
                    let p = blockfp8::GemmProblem {
                        shape: blockfp8::GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::F32 },
                        a: &want_x.q,
                        a_scales: blockfp8::ActScales { data: &want_x.scales, layout },
                        b: &want_w.q,
                        b_scales: &want_w.scales,
                    };
                    let want_y = BlockScaledGemm::new(Arc::clone(&cpu), Arc::clone(&library)).run(&p).unwrap().to_f64();
                    let got_y: Vec<f64> = ctx.download(&stream, y.view()).unwrap().into_iter().map(f64::from).collect();
                    let diff = calc_diff(&got_y, &want_y);
                    assert!(diff < 1e-6, "{what}: GEMM calc_diff {diff:e} against the CPU path");
                    if be.kind() == BackendKind::Cpu {
                        assert_eq!(got_y, want_y, "{what}: the CPU device path is the CPU reference");
                    }
                }
            }
        }
    }
}

/// Kernels enqueued back to back on one stream see each other's writes: R quantizations into
/// the same activation buffers, each followed by a GEMM that reads them (read after write), and
/// a short GEMM into the C that a long one has just written (write after write). On CUDA the
/// TMA GEMM is a programmatic dependent launch, whose CTAs may start before the kernel ahead
/// of it has finished; a GEMM that read too early would see the previous round's activations
/// (or the zeros of a fresh buffer), and one that wrote too early would be overwritten.
#[test]
fn back_to_back_kernels_on_one_stream_see_each_others_writes() {
    let library = Arc::new(Library::new(vec![], false, false));
    let cpu = BlockScaledGemm::new(backend::open(BackendKind::Cpu, 0).unwrap(), Arc::clone(&library));
    for (be, emulated) in backends() {
        // The kernel default, so that every backend runs its own GEMM kernel (no vendor BLAS).
        let ctx = Context::with_default_path(Arc::clone(&be), Arc::clone(&library), blockfp8::DefaultPath::Kernel);
        let stream = ctx.new_stream().unwrap();
        let format = be.device().fp8;
        let (m, n, k_long, k_short, rounds) = if emulated { (5, 129, 384, 128, 2) } else { (64, 4096, 7168, 256, 4) };
        let opts = TokenQuantOptions::new(format);
        let spec = |k| GemmSpec { n, k, block: (128, 128), format, out_dtype: OutDtype::F32, a_layout: opts.layout, max_m: m };
        let quantized_weight = |k, seed| {
            let w: Vec<bf16> = random_weights(n, k, seed).into_iter().map(bf16::from_f32).collect();
            let want = blockfp8::quant::quantize_weight_blocks(&w.iter().map(|v| v.to_f32()).collect::<Vec<_>>(), n, k, (128, 128), format).unwrap();
            (ctx.quantize_weight(&stream, ctx.upload(&stream, &w).unwrap().view(), n, k).unwrap(), want)
        };
        let activations = |k, seed| {
            let x: Vec<bf16> = random_activations(m, k, seed).into_iter().map(bf16::from_f32).collect();
            let want = blockfp8::quant::quantize_per_token_group(&x.iter().map(|v| v.to_f32()).collect::<Vec<_>>(), m, k, &opts).unwrap();
            (ctx.upload(&stream, &x).unwrap(), want)
        };
        let cpu_gemm = |x: &blockfp8::QuantizedTokens, w: &blockfp8::QuantizedWeight, k| {
            let p = blockfp8::GemmProblem {
                shape: blockfp8::GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::F32 },
                a: &x.q,
                a_scales: blockfp8::ActScales { data: &x.scales, layout: opts.layout },
                b: &w.q,
                b_scales: &w.scales,
            };
            cpu.run(&p).unwrap().to_f64()
        };
        let (weight_long, want_w_long) = quantized_weight(k_long, 11);
        let (weight_short, want_w_short) = quantized_weight(k_short, 12);
        let (plan_long, plan_short) = (ctx.gemm_plan(spec(k_long)).unwrap(), ctx.gemm_plan(spec(k_short)).unwrap());
        // Every upload first, so that the chain below is kernels only.
        let xs: Vec<_> = (0..rounds).map(|r| activations(k_long, 100 + r as u64)).collect();
        let (x_short, want_x_short) = activations(k_short, 200);
        let mut xq = ctx.alloc::<u8>(m * k_long).unwrap();
        let mut xscale = ctx.alloc::<f32>(opts.layout.scale_count(m, k_long.div_ceil(128))).unwrap();
        let mut xq_short = ctx.alloc::<u8>(m * k_short).unwrap();
        let mut xscale_short = ctx.alloc::<f32>(opts.layout.scale_count(m, k_short.div_ceil(128))).unwrap();
        let mut ys: Vec<_> = (0..rounds).map(|_| ctx.alloc::<f32>(m * n).unwrap()).collect();
        let mut y_shared = ctx.alloc::<f32>(m * n).unwrap();
        ctx.quantize_tokens(&stream, x_short.view(), m, k_short, &opts, &mut xq_short.view_mut(), &mut xscale_short.view_mut()).unwrap();
        for ((x, _), y) in xs.iter().zip(ys.iter_mut()) {
            ctx.quantize_tokens(&stream, x.view(), m, k_long, &opts, &mut xq.view_mut(), &mut xscale.view_mut()).unwrap();
            plan_long.enqueue(&stream, xq.view(), xscale.view(), &weight_long, &mut y.view_mut()).unwrap();
        }
        plan_long.enqueue(&stream, xq.view(), xscale.view(), &weight_long, &mut y_shared.view_mut()).unwrap();
        plan_short.enqueue(&stream, xq_short.view(), xscale_short.view(), &weight_short, &mut y_shared.view_mut()).unwrap();

        let what = format!("{} M={m} N={n} K={k_long} ({})", be.id(), plan_long.path_for(m).label());
        for (r, ((_, want_x), y)) in xs.iter().zip(&ys).enumerate() {
            let got: Vec<f64> = ctx.download(&stream, y.view()).unwrap().into_iter().map(f64::from).collect();
            let diff = calc_diff(&got, &cpu_gemm(want_x, &want_w_long, k_long));
            assert!(diff < 1e-6, "{what}: round {r}: GEMM after the quantization, calc_diff {diff:e} against the CPU path");
        }
        let got: Vec<f64> = ctx.download(&stream, y_shared.view()).unwrap().into_iter().map(f64::from).collect();
        let diff = calc_diff(&got, &cpu_gemm(&want_x_short, &want_w_short, k_short));
        assert!(diff < 1e-6, "{what}: K={k_short} GEMM after the K={k_long} one into the same C: calc_diff {diff:e} against the CPU path");
    }
}

#[test]
fn an_ocp_weight_is_converted_on_devices_that_read_fnuz() {
    let library = Arc::new(Library::new(vec![], false, false));
    for (be, _) in backends() {
        if be.device().fp8 != Fp8Format::E4m3fnuz {
            continue;
        }
        let ctx = context(&be, &library);
        let stream = ctx.new_stream().unwrap();
        let (n, k) = (200, 300);
        let w = blockfp8::quant::quantize_weight_blocks(&random_weights(n, k, 9), n, k, (128, 128), Fp8Format::E4m3fn).unwrap();
        let mut want = w.clone();
        want.convert_to_fnuz().unwrap();
        let prepared = ctx.prepare_weight(&stream, &w.q, &w.scales, n, k, (128, 128), Fp8Format::E4m3fn).unwrap();
        assert_eq!(prepared.format(), Fp8Format::E4m3fnuz);
        assert_eq!(ctx.download(&stream, prepared.q()).unwrap(), want.q, "{}: converted bytes", be.id());
        assert_eq!(ctx.download(&stream, prepared.scales()).unwrap(), want.scales, "{}: doubled scales", be.id());
    }
}

/// Every bad argument gets a typed error before any launch, and the output keeps its sentinel.
#[test]
fn bad_input_through_the_device_api_is_rejected_before_any_launch() {
    let library = Arc::new(Library::new(vec![], false, false));
    let present = backends();
    for (be, _) in &present {
        let ctx = context(be, &library);
        let stream = ctx.new_stream().unwrap();
        let format = be.device().fp8;
        let (m, n, k) = (5, 256, 256);
        let qp = random_quantized_problem(m, n, k, format, ScaleLayout::RowMajor, 3);
        let spec = GemmSpec { n, k, block: (128, 128), format, out_dtype: OutDtype::F32, a_layout: ScaleLayout::RowMajor, max_m: 64 };
        let plan = ctx.gemm_plan(spec).unwrap();
        let weight = ctx.prepare_weight(&stream, &qp.b, &qp.b_scales, n, k, (128, 128), format).unwrap();
        let a = ctx.upload(&stream, &qp.a).unwrap();
        let a_s = ctx.upload(&stream, &qp.a_scales).unwrap();
        let sentinel = vec![-7.0f32; m * n + 64];
        let mut c = ctx.upload(&stream, &sentinel).unwrap();
        let untouched = |c: &blockfp8::DeviceBuffer<f32>, what: &str| assert_eq!(ctx.download(&stream, c.view()).unwrap(), sentinel, "{}: {what} wrote the output", be.id());
        let who = be.id();

        // Too-short output.
        let e = plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c.slice_mut(0..m * n - 1).unwrap()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: short output: {e}");
        untouched(&c, "short output");
        // Wrong scale length (one scale missing), and the column-major length under a row-major plan.
        let e = plan.enqueue(&stream, a.view(), a_s.slice(0..a_s.len() - 1).unwrap(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: short scales: {e}");
        let cm = ctx.alloc::<f32>(ScaleLayout::ColumnMajor.scale_count(m, 2)).unwrap();
        let e = plan.enqueue(&stream, a.view(), cm.view(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: column-major scales for a row-major plan: {e}");
        untouched(&c, "bad scales");
        // A ragged A (not a multiple of K).
        let e = plan.enqueue(&stream, a.slice(0..m * k - 1).unwrap(), a_s.view(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: ragged A: {e}");
        // Output of the wrong element type.
        let mut c16 = ctx.alloc::<bf16>(m * n).unwrap();
        let e = plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c16.view_mut()).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { .. }), "{who}: bf16 output for an f32 plan: {e}");
        // Misaligned output (GPU backends need 16 bytes; the CPU takes any address).
        if be.alignment() > 4 {
            let e = plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c.slice_mut(1..m * n + 1).unwrap()).unwrap_err();
            assert!(matches!(e, Error::Misaligned { .. }), "{who}: misaligned output: {e}");
            untouched(&c, "misaligned output");
        }
        // A weight of another shape, and a weight prepared in another fp8 flavour.
        let other = random_quantized_problem(m, n + 128, k, format, ScaleLayout::RowMajor, 4);
        let w2 = ctx.prepare_weight(&stream, &other.b, &other.b_scales, n + 128, k, (128, 128), format).unwrap();
        let e = plan.enqueue(&stream, a.view(), a_s.view(), &w2, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: weight of another N: {e}");
        if be.kind() == BackendKind::Cpu {
            let fnuz = ctx.prepare_weight(&stream, &qp.b, &qp.b_scales, n, k, (128, 128), Fp8Format::E4m3fnuz).unwrap();
            let e = plan.enqueue(&stream, a.view(), a_s.view(), &fnuz, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{who}: weight of another format: {e}");
        } else {
            let other_format = if format == Fp8Format::E4m3fn { Fp8Format::E4m3fnuz } else { Fp8Format::E4m3fn };
            let e = ctx.gemm_plan(GemmSpec { format: other_format, ..spec }).unwrap_err();
            assert!(matches!(e, Error::InvalidArgument { .. }), "{who}: plan in the flavour the device does not read: {e}");
        }
        // M beyond what the workspace was sized for is refused only where it needs more.
        untouched(&c, "bad weights");
        // Tensors and streams of another device.
        for (other_be, _) in &present {
            if other_be.id() == be.id() {
                continue;
            }
            let octx = context(other_be, &library);
            let ostream = octx.new_stream().unwrap();
            let oa = octx.upload(&ostream, &qp.a).unwrap();
            let e = plan.enqueue(&stream, oa.view(), a_s.view(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
            assert!(matches!(e, Error::WrongDevice { .. }), "{who}: A on {}: {e}", other_be.id());
            let e = plan.enqueue(&ostream, a.view(), a_s.view(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
            assert!(matches!(e, Error::WrongDevice { .. }), "{who}: stream of {}: {e}", other_be.id());
            let ow = octx.prepare_weight(&ostream, &qp.b, &qp.b_scales, n, k, (128, 128), other_be.device().fp8).unwrap();
            let e = plan.enqueue(&stream, a.view(), a_s.view(), &ow, &mut c.slice_mut(0..m * n).unwrap()).unwrap_err();
            assert!(matches!(e, Error::WrongDevice { .. }), "{who}: weight on {}: {e}", other_be.id());
        }
        untouched(&c, "another device's tensors");
        // Bad weights at preparation: wrong scale count, NaN scale.
        let e = ctx.prepare_weight(&stream, &qp.b, &qp.b_scales[1..], n, k, (128, 128), format).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: short weight scales: {e}");
        let mut nan = qp.b_scales.clone();
        nan[2] = f32::NAN;
        let e = ctx.prepare_weight(&stream, &qp.b, &nan, n, k, (128, 128), format).unwrap_err();
        assert!(matches!(e, Error::NonFinite { .. }), "{who}: NaN weight scale: {e}");
        // Bad quantization arguments.
        let x = ctx.alloc::<f32>(m * k).unwrap();
        let mut q = ctx.alloc::<u8>(m * k).unwrap();
        let mut s = ctx.alloc::<f32>(m * 2 - 1).unwrap();
        let e = ctx.quantize_tokens(&stream, x.view(), m, k, &TokenQuantOptions::new(format), &mut q.view_mut(), &mut s.view_mut()).unwrap_err();
        assert!(matches!(e, Error::Shape { .. }), "{who}: short scale output: {e}");
        // And a good call still works after all of that.
        plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c.slice_mut(0..m * n).unwrap()).unwrap();
        let got: Vec<f64> = ctx.download(&stream, c.slice(0..m * n).unwrap()).unwrap().into_iter().map(f64::from).collect();
        assert!(calc_diff(&got, &reference_gemm_f64(&qp.problem())) < 1e-5, "{who}: the good call");
    }
}

/// A plan's workspace is sized at planning; a larger M that needs more is refused until
/// `reserve` grows it, and then runs.
#[test]
fn workspace_grows_only_by_an_explicit_reserve() {
    let library = Arc::new(Library::new(vec![], false, false));
    for (be, emulated) in backends() {
        let ctx = context(&be, &library);
        let stream = ctx.new_stream().unwrap();
        let format = be.device().fp8;
        let (n, k) = (256, if emulated { 256 } else { 2048 });
        let spec = GemmSpec { n, k, block: (128, 128), format, out_dtype: OutDtype::F32, a_layout: ScaleLayout::RowMajor, max_m: 1 };
        let plan = ctx.gemm_plan(spec).unwrap();
        let m = 48;
        let qp = random_quantized_problem(m, n, k, format, ScaleLayout::RowMajor, 8);
        let weight = ctx.prepare_weight(&stream, &qp.b, &qp.b_scales, n, k, (128, 128), format).unwrap();
        let (a, a_s) = (ctx.upload(&stream, &qp.a).unwrap(), ctx.upload(&stream, &qp.a_scales).unwrap());
        let mut c = ctx.alloc::<f32>(m * n).unwrap();
        let first = plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c.view_mut());
        if let Err(e) = &first {
            assert!(e.to_string().contains("reserve"), "{}: {e}", be.id());
            plan.reserve(&stream, m).unwrap();
            plan.enqueue(&stream, a.view(), a_s.view(), &weight, &mut c.view_mut()).unwrap();
        }
        let got: Vec<f64> = ctx.download(&stream, c.view()).unwrap().into_iter().map(f64::from).collect();
        assert!(calc_diff(&got, &reference_gemm_f64(&qp.problem())) < 1e-5, "{}: M={m} after max_m=1", be.id());
    }
}

/// The HIP backend's chunked rocBLAS path through the device API, on the emulated gfx942
/// device: a workspace bound small enough that M runs in several chunks, every output dtype,
/// both scale layouts, against the float64 reference. (gfx950 has no rocBLAS FP8: its no-file
/// default is the kernel.)
#[cfg(feature = "rocm")]
#[test]
fn emulated_rocblas_path_runs_in_chunks_on_gfx942_only() {
    use blockfp8::backend::hip::EmulatedHip;
    use blockfp8::DefaultPath;
    let library = Arc::new(Library::new(vec![], false, false));
    let gfx950 = Context::with_default_path(Arc::new(EmulatedHip::new(1).unwrap()), Arc::clone(&library), DefaultPath::Vendor);
    let spec950 = GemmSpec { n: 256, k: 512, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: OutDtype::Bf16, a_layout: ScaleLayout::RowMajor, max_m: 8 };
    assert_eq!(gfx950.gemm_plan(spec950).unwrap().path_for(8), &blockfp8::GemmPath::KernelDefault, "gfx950 has no rocBLAS FP8");

    // The no-file default switch: `kernel` takes the kernel where rocBLAS would serve.
    let kernel_default = Context::with_default_path(Arc::new(EmulatedHip::new(0).unwrap()), Arc::clone(&library), DefaultPath::Kernel);
    let spec942 = GemmSpec { format: Fp8Format::E4m3fnuz, ..spec950 };
    assert_eq!(kernel_default.gemm_plan(spec942).unwrap().path_for(8), &blockfp8::GemmPath::KernelDefault);
    assert_eq!("kernel".parse::<DefaultPath>().unwrap(), DefaultPath::Kernel);
    assert_eq!("vendor".parse::<DefaultPath>().unwrap(), DefaultPath::Vendor);
    assert!("rocblas".parse::<DefaultPath>().unwrap_err().to_string().contains("BLOCKFP8_DEFAULT_PATH"));

    let (m, n, k) = (37, 256, 640);
    let mut emu = EmulatedHip::new(0).unwrap();
    // Partial products of one chunk are kb * rows * N floats: 5 * 8 * 256 * 4 bytes holds 8 rows.
    let bound = 5 * 8 * 256 * 4;
    emu.set_workspace_bytes(bound);
    let chunks = blockfp8::backend::hip::vendor_plan::VendorPlan::new(m, n, k, ScaleLayout::RowMajor, bound).unwrap().chunk_count();
    assert!(chunks > 1, "the bound must split M={m} into chunks (got {chunks})");
    let ctx = Context::with_default_path(Arc::new(emu), library, DefaultPath::Vendor);
    let stream = ctx.new_stream().unwrap();
    for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
        let qp = random_quantized_problem(m, n, k, Fp8Format::E4m3fnuz, layout, 77);
        let reference = reference_gemm_f64(&qp.problem());
        for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
            let mut q = qp.clone();
            q.shape.out_dtype = out;
            let plan = ctx.gemm_plan(GemmSpec { n, k, block: (128, 128), format: Fp8Format::E4m3fnuz, out_dtype: out, a_layout: layout, max_m: m }).unwrap();
            assert_eq!(plan.path_for(m), &blockfp8::GemmPath::Vendor, "no file: the rocBLAS default");
            let got = match out {
                OutDtype::Bf16 => device_output::<bf16>(&ctx, &stream, &plan, &q, Output::Bf16),
                OutDtype::F16 => device_output::<f16>(&ctx, &stream, &plan, &q, Output::F16),
                OutDtype::F32 => device_output::<f32>(&ctx, &stream, &plan, &q, Output::F32),
            };
            let diff = calc_diff(&got.to_f64(), &reference);
            assert!(diff < 1e-5, "{layout:?} {}: calc_diff {diff:e}", out.name());
        }
    }
}

/// A plan sized for a large M still serves a small M whose K split needs a workspace the
/// largest M does not (the split applies only while the tiles cannot fill the device): the
/// workspace is the most any M up to max_m needs. On the emulated gfx942 device (304 CUs), the
/// kernel default at N=256 splits K below M ~ 9728 and not at 16384.
#[cfg(feature = "rocm")]
#[test]
fn a_plan_for_large_m_has_the_workspace_small_m_splits_need() {
    use blockfp8::backend::hip::EmulatedHip;
    use blockfp8::DefaultPath;
    let ctx = Context::with_default_path(Arc::new(EmulatedHip::new(0).unwrap()), Arc::new(Library::new(vec![], false, false)), DefaultPath::Kernel);
    let stream = ctx.new_stream().unwrap();
    let (m, n, k) = (4, 256, 2048);
    let plan = ctx.gemm_plan(GemmSpec { n, k, block: (128, 128), format: Fp8Format::E4m3fnuz, out_dtype: OutDtype::F32, a_layout: ScaleLayout::RowMajor, max_m: 16384 }).unwrap();
    let qp = random_quantized_problem(m, n, k, Fp8Format::E4m3fnuz, ScaleLayout::RowMajor, 21);
    let got = device_output::<f32>(&ctx, &stream, &plan, &qp, Output::F32);
    let diff = calc_diff(&got.to_f64(), &reference_gemm_f64(&qp.problem()));
    assert!(diff < 1e-5, "calc_diff {diff:e}");
}
