//! The HIP runtime layer, the rocBLAS loader and the rocBLAS-path planning (feature `rocm`).
//!
//! On a machine without an AMD GPU (this one) the runtime's real answers are asserted:
//! no devices, `BackendUnavailable` with the HIP error, rocBLAS "not found". The planning is
//! proven by executing the planned rocBLAS calls and the reduce step on the CPU. Tests
//! that need a GPU are `#[ignore]`d: run them with `--include-ignored` on a GPU machine,
//! where they fail (saying so) if the GPU cannot be opened.
#![cfg(feature = "rocm")]

mod common;

#[allow(unused_imports)]
use blockfp8::HostOps;
use blockfp8::backend::hip::rocblas::{self, RocBlas};
use blockfp8::backend::hip::vendor_plan::{simulate, VendorPlan, DEFAULT_WORKSPACE_BYTES};
use blockfp8::backend::hip::{arch, runtime, HipBackend};
use blockfp8::backend::{self, Backend, BackendKind, TimingOptions};
use blockfp8::gemm::{calc_diff, ActScales, GemmPath, GemmProblem, GemmShape, OutDtype};
use blockfp8::{Error, Fp8Format, ScaleLayout};
use common::{decode_fp8_f64, reference_gemm_f64, Rng};

fn gpu_count() -> usize {
    runtime::result::device_count().unwrap_or(0)
}


// ---- real behaviour of the runtime on this machine ------------------------------------

#[test]
fn device_enumeration_matches_the_runtime() {
    let (status, n) = runtime::result::device_count_status();
    let listed = blockfp8::backend::hip::devices();
    if n == 0 {
        assert!(listed.is_empty(), "no HIP device, yet listed {listed:?}");
        // The crate-wide list then holds no ROCm device and ends with the CPU.
        let all = backend::devices();
        assert!(all.iter().all(|d| d.backend != BackendKind::Rocm), "{all:?}");
        assert_eq!(all.last().map(|d| d.backend), Some(BackendKind::Cpu));
        // The documented answer of a GPU-less machine: hipErrorNoDevice.
        assert_eq!(status, 100, "hipGetDeviceCount status");
        let text = runtime::status_text(status);
        assert!(text.contains("hipErrorNoDevice") && text.contains("100"), "{text}");
    } else {
        assert_eq!(listed.len(), n);
        for d in &listed {
            assert!(arch::is_gfx_name(&d.arch), "{d:?}");
            assert!(d.compute_units > 0, "{d:?}");
        }
    }
}

/// Ordinals the runtime does not list are BackendUnavailable: on a machine without an AMD
/// GPU every ordinal, with HIP's own "no device" answer; on a GPU machine those past the last.
#[test]
fn open_without_a_device_is_backend_unavailable() {
    let count = gpu_count();
    if count > 0 {
        for ordinal in [count, count + 3] {
            match backend::open(BackendKind::Rocm, ordinal) {
                Err(Error::BackendUnavailable { backend, reason }) => {
                    assert_eq!(backend, "rocm");
                    assert!(reason.contains(&format!("device ordinal {ordinal} out of range")), "reason: {reason}");
                }
                Err(other) => panic!("expected BackendUnavailable, got {other}"),
                Ok(_) => panic!("opened ROCm device {ordinal} of {count}"),
            }
        }
        return;
    }
    for ordinal in [0, 3] {
        match backend::open(BackendKind::Rocm, ordinal) {
            Err(Error::BackendUnavailable { backend, reason }) => {
                assert_eq!(backend, "rocm");
                assert!(reason.contains("hipErrorNoDevice") && reason.contains("hipGetDeviceCount"), "reason: {reason}");
            }
            Err(other) => panic!("expected BackendUnavailable, got {other}"),
            Ok(_) => panic!("opened a ROCm backend without a device"),
        }
    }
    let msg = HipBackend::new(0).err().expect("no device").to_string();
    assert!(msg.starts_with("backend rocm unavailable: "), "{msg}");
}

#[test]
fn status_codes_beyond_the_bindings_are_read_as_integers() {
    // 1054 is hipErrorTbd (the last code HIP 5.4 knows); 123456 no HIP version defines. Both
    // go through integer declarations, never the bindings' enum, and come back as text.
    for code in [1, 1054, 123_456, -7] {
        let text = runtime::status_text(code);
        assert!(text.contains(&code.to_string()), "{code}: {text}");
    }
    let e = runtime::result::check("hipFake", 2).unwrap_err();
    match e {
        Error::Device { backend, call, reason } => {
            assert_eq!((backend, call.as_str()), ("rocm", "hipFake"));
            assert!(reason.contains("hipErrorOutOfMemory") && reason.contains("(2)"), "{reason}");
        }
        other => panic!("{other}"),
    }
}

/// Device calls on an ordinal the runtime does not list (0 on a machine without an AMD GPU,
/// the one past the last elsewhere) fail with the HIP call's name.
#[test]
fn device_calls_without_a_device_fail_with_the_call_name() {
    let missing = gpu_count();
    match runtime::DeviceBuffer::<f32>::alloc(missing, 16) {
        Err(Error::Device { backend: "rocm", call, reason }) => {
            assert!(call.starts_with("hip"), "{call}");
            assert!(!reason.is_empty());
        }
        Err(other) => panic!("expected a Device error, got {other}"),
        Ok(_) => panic!("allocated device memory without a device"),
    }
    assert!(matches!(runtime::Stream::new(missing), Err(Error::Device { backend: "rocm", .. })));
}

#[test]
fn module_loading_refuses_non_code_objects_before_the_runtime() {
    let err = runtime::Module::load(0, "junk", std::borrow::Cow::Borrowed(b"definitely not an ELF file, long enough to be read")).err().unwrap();
    match err {
        Error::InvalidArgument { what, .. } => assert!(what.contains("junk") && what.contains("not a code object"), "{what}"),
        other => panic!("expected InvalidArgument, got {other}"),
    }
}

/// A HIP-capable clang: `BLOCKFP8_HIP_CLANG`, Debian's clang-22 (ci/install-rocm-toolchain.sh),
/// or ROCm's own. A `--features rocm` build needs one, so not finding one is a failure.
fn hip_clang() -> String {
    let rocm = ["ROCM_PATH", "HIP_PATH"].iter().filter_map(|v| std::env::var(v).ok()).map(|r| format!("{r}/llvm/bin/clang"));
    let candidates: Vec<String> = std::env::var("BLOCKFP8_HIP_CLANG").into_iter().chain(["clang-22".to_string()]).chain(rocm).chain(["/opt/rocm/llvm/bin/clang".to_string()]).collect();
    candidates
        .iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .cloned()
        .unwrap_or_else(|| panic!("no HIP-capable clang among {candidates:?}: run `bash ci/install-rocm-toolchain.sh` or set BLOCKFP8_HIP_CLANG"))
}

/// Compiles a one-line kernel with a real HIP clang and checks that the arch read from the
/// code object's header is the one it was built for, and that a code object for another
/// architecture is refused with both names.
#[test]
fn code_object_arch_from_real_clang_output() {
    let clang = hip_clang();
    let clang = clang.as_str();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.hip");
    std::fs::write(&src, "extern \"C\" __attribute__((global)) void k(float* x) { x[__builtin_amdgcn_workitem_id_x()] = 1.0f; }\n").unwrap();
    for target in ["gfx942", "gfx950", "gfx942:sramecc+:xnack-"] {
        let out = dir.path().join("k.co");
        let st = std::process::Command::new(clang)
            .args(["-x", "hip", "-nogpuinc", "-nogpulib", "--cuda-device-only", "--no-gpu-bundle-output", "-O3"])
            .arg(format!("--offload-arch={target}"))
            .arg(&src)
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success(), "{clang} failed for {target}");
        let image = std::fs::read(&out).unwrap();
        let base = arch::base_arch(target);
        assert_eq!(arch::inspect_code_object(&image), Ok(arch::ImageKind::Elf { arch: Some(base.to_string()), mach: if base == "gfx942" { 0x4c } else { 0x4f } }));
        assert!(arch::check_code_object_for(&image, base).is_ok());
        let other = if base == "gfx942" { "gfx950" } else { "gfx942" };
        let why = arch::check_code_object_for(&image, other).unwrap_err();
        assert!(why.contains(base) && why.contains(other), "{why}");
    }
}

// ---- the embedded code objects and the path decision, without a GPU -----------------

fn contains_symbol(image: &[u8], name: &str) -> bool {
    let mut needle = name.as_bytes().to_vec();
    needle.push(0);
    image.windows(needle.len()).any(|w| w == needle.as_slice())
}

#[test]
fn embedded_code_objects_carry_every_kernel_the_backend_launches() {
    use blockfp8::backend::hip::{code_object_for, kernel_for, kernels};
    let archs = kernels::compiled_archs();
    // build.rs fails when no architecture compiles, so an empty list is a bug.
    assert!(!archs.is_empty(), "this build embedded no code object");
    for gfx in archs {
        let image = code_object_for(gfx).unwrap();
        // The header names the arch it was built for; the other arch is refused.
        assert_eq!(arch::inspect_code_object(image).unwrap(), arch::ImageKind::Elf { arch: Some(gfx.to_string()), mach: if gfx == "gfx942" { 0x4c } else { 0x4f } });
        let other = if gfx == "gfx942" { "gfx950" } else { "gfx942" };
        assert!(arch::check_code_object_for(image, other).unwrap_err().contains(other));
        let mut symbols = vec![kernels::QUANT_PER_TOKEN_GROUP, kernels::QUANT_WEIGHT_BLOCKS];
        for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
            symbols.push(kernels::scale_reduce_symbol(out));
            let shape = GemmShape { m: 1, n: 1, k: 1, block: (128, 128), format: Fp8Format::E4m3fn, out_dtype: out };
            symbols.push(kernel_for(&shape, &GemmPath::KernelDefault).unwrap().symbol);
        }
        for sym in symbols {
            assert!(contains_symbol(image, sym), "{gfx} code object lacks {sym}");
        }
        assert!(!contains_symbol(image, "gemm_block_fp8_no_such_kernel_bf16"));
    }
    let err = code_object_for("gfx1100").unwrap_err();
    assert!(err.contains("gfx1100") && err.contains("BLOCKFP8_HIP_ARCHS"), "{err}");
}

#[test]
fn non_amd_architecture_strings_are_refused() {
    use blockfp8::backend::hip::code_object_for;
    for bad in ["sm_90a", "x86_64", "", ":gfx942", "GFX942"] {
        let err = code_object_for(bad).unwrap_err();
        assert!(err.contains("not an AMD gfx architecture"), "{bad}: {err}");
    }
    // HIP's full target string selects the same code object as the bare arch.
    if blockfp8::backend::hip::kernels::compiled_archs().contains(&"gfx942") {
        assert_eq!(code_object_for("gfx942:sramecc+:xnack-").unwrap(), code_object_for("gfx942").unwrap());
    }
}

#[test]
fn path_support_reasons() {
    use blockfp8::backend::hip::check_support;
    use blockfp8::Device;
    let mi300x = Device {
        backend: BackendKind::Rocm,
        ordinal: 0,
        name: "AMD Instinct MI300X".into(),
        arch: "gfx942".into(),
        fp8: Fp8Format::E4m3fnuz,
        compute_units: 304,
        pci_id: Some(0x74a1),
    };
    let shape = GemmShape { m: 17, n: 576, k: 7168, block: (128, 128), format: Fp8Format::E4m3fnuz, out_dtype: OutDtype::Bf16 };
    let ws = DEFAULT_WORKSPACE_BYTES;
    assert_eq!(check_support(&mi300x, Ok(()), ws, &shape, &GemmPath::Vendor), Ok(()));
    assert_eq!(check_support(&mi300x, Err("rocBLAS not found (tried ...)"), ws, &shape, &GemmPath::Vendor), Err("rocBLAS not found (tried ...)".to_string()));
    let bad_block = GemmShape { block: (1, 128), ..shape };
    assert!(check_support(&mi300x, Ok(()), ws, &bad_block, &GemmPath::Vendor).unwrap_err().contains("(128, 128)"));
    let ocp = GemmShape { format: Fp8Format::E4m3fn, ..shape };
    let why = check_support(&mi300x, Ok(()), ws, &ocp, &GemmPath::KernelDefault).unwrap_err();
    assert!(why.contains("E4m3fn") && why.contains("E4m3fnuz"), "{why}");
    let mut odd = blockfp8::config::KernelConfig::vllm_default((128, 128));
    odd.block_m = 48;
    let why = check_support(&mi300x, Ok(()), ws, &shape, &GemmPath::Tuned(odd)).unwrap_err();
    assert!(why.contains("not compiled"), "{why}");
    if !blockfp8::backend::hip::kernels::compiled_archs().is_empty() {
        assert_eq!(check_support(&mi300x, Err("x"), ws, &shape, &GemmPath::KernelDefault), Ok(()));
    }
}

/// The C parameter types of kernel `token` as `hip/<file>` declares it (`BFP8_KERNEL(token,
/// threads, (params), ...)`), with every `T*` as "pointer".
fn hip_params(file: &str, token: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hip").join(file);
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).replace("\\\n", " ");
    let start = src.find(&format!("BFP8_KERNEL({token},")).unwrap_or_else(|| panic!("{file}: no BFP8_KERNEL({token}, ...)"));
    // The macro's top-level arguments: name, threads, (params), (call).
    let mut args = Vec::new();
    let (mut depth, mut from) = (0, start + "BFP8_KERNEL(".len());
    for (i, ch) in src[from..].char_indices().map(|(i, c)| (i + from, c)).collect::<Vec<_>>() {
        match ch {
            '(' => depth += 1,
            ')' if depth == 0 => {
                args.push(&src[from..i]);
                break;
            }
            ')' => depth -= 1,
            ',' if depth == 0 => {
                args.push(&src[from..i]);
                from = i + 1;
            }
            _ => {}
        }
    }
    let params = args[2].trim();
    let (open, end) = (0, params.len() - 1);
    assert!(params.starts_with('(') && params.ends_with(')'), "{file}: {params}");
    params[open + 1..end]
        .split(',')
        .map(|p| {
            let p = p.split_whitespace().collect::<Vec<_>>().join(" ");
            if p.contains('*') {
                "pointer".to_string()
            } else {
                let words: Vec<&str> = p.split(' ').filter(|w| *w != "const").collect();
                words[..words.len() - 1].join(" ")
            }
        })
        .collect()
}

#[test]
fn launch_argument_lists_match_the_kernel_sources() {
    use blockfp8::backend::hip::abi::*;
    use blockfp8::backend::hip::runtime::DevicePtr;
    use blockfp8::backend::hip::vendor_plan::ScaleReduce;
    let gemm = GemmArgs { a: DevicePtr::null(), a_scales: DevicePtr::null(), b: DevicePtr::null(), b_scales: DevicePtr::null(), c: DevicePtr::null(), m: 1, n: 1, k: 1, as_stride_m: 1, as_stride_kb: 1 };
    let plan = ScaleReduce { m0: 0, rows: 1, n: 1, kb: 1, batch_stride: 1, as_stride_m: 1, as_stride_kb: 1, grid_x: 1 };
    let reduce = ScaleReduceArgs { partial: DevicePtr::null(), a_scales: DevicePtr::null(), b_scales: DevicePtr::null(), c: DevicePtr::null(), plan };
    let quant = QuantTokensArgs { x: DevicePtr::null(), q: DevicePtr::null(), s: DevicePtr::null(), m: 1, k: 1, fp8_max: 1.0, s_stride_m: 1, s_stride_g: 1, ue8m0: 0 };
    let weight = QuantWeightArgs { w: DevicePtr::null(), q: DevicePtr::null(), s: DevicePtr::null(), n: 1, k: 1 };
    let convert = ConvertFnuzArgs { w: DevicePtr::null(), n_bytes: 1, s: DevicePtr::null(), n_scales: 1 };
    let cases = [
        ("gemm_block_fp8.hip", "gemm_block_fp8_##tag##_##out", gemm.args().c_types().to_vec()),
        ("scale_reduce.hip", "scale_reduce_##out", reduce.args().c_types().to_vec()),
        ("quant_per_token_group.hip", "quant_per_token_group", quant.args().c_types().to_vec()),
        ("quant_weight_blocks.hip", "quant_weight_blocks", weight.args().c_types().to_vec()),
        ("convert_fnuz.hip", "convert_e4m3fn_to_fnuz", convert.args().c_types().to_vec()),
    ];
    for (file, token, ours) in cases {
        let theirs = hip_params(file, token);
        assert_eq!(ours, theirs, "{token}: launch arguments vs hip/{file}");
    }
    // The parser itself reads types, not names (a kernel's list as hip/README.md gives it).
    assert_eq!(hip_params("scale_reduce.hip", "scale_reduce_##out")[1], "long long");
}

// ---- rocBLAS loading ------------------------------------------------------------------

#[test]
fn rocblas_missing_library_is_reported_as_not_found() {
    let err = RocBlas::load(&["/nonexistent/librocblas.so.4".to_string()]).err().expect("must not load");
    assert!(err.starts_with("rocBLAS not found"), "{err}");
    assert!(err.contains("/nonexistent/librocblas.so.4"), "{err}");
}

#[test]
fn a_library_without_rocblas_symbols_is_refused_by_name() {
    // libm is a real shared library on every Linux machine and has none of rocBLAS's symbols.
    let err = RocBlas::load(&["libm.so.6".to_string()]).err().expect("libm is not rocBLAS");
    assert!(err.contains("libm.so.6") && err.contains("missing rocblas_"), "{err}");
}

#[test]
fn rocblas_on_this_machine() {
    match RocBlas::shared() {
        Err(why) => {
            // What the vendor path reports here; every candidate name is listed.
            assert!(why.starts_with("rocBLAS not found") || why.contains("not a usable rocBLAS"), "{why}");
            if std::env::var(rocblas::LIBRARY_ENV).is_err() {
                assert!(why.contains("librocblas.so"), "{why}");
            }
            println!("rocBLAS unavailable here: {why}");
        }
        Ok(lib) => {
            println!("rocBLAS {} at {}", lib.version(), lib.path());
            assert!(rocblas::parse_version(lib.version()).is_some(), "version {:?}", lib.version());
            // The decision is made from the library and the arch; gfx950 never has FP8.
            assert!(lib.fp8_unavailable("gfx950").is_some());
        }
    }
}

// ---- the rocBLAS block-scaled path, executed on the CPU --------------------------------

/// A problem with random fp8 bytes (no NaN patterns) and random positive scales.
struct RawProblem {
    shape: GemmShape,
    a: Vec<u8>,
    a_scales: Vec<f32>,
    layout: ScaleLayout,
    b: Vec<u8>,
    b_scales: Vec<f32>,
}

impl RawProblem {
    fn new(m: usize, n: usize, k: usize, format: Fp8Format, layout: ScaleLayout, seed: u64) -> Self {
        let mut rng = Rng::new(seed);
        let shape = GemmShape { m, n, k, block: (128, 128), format, out_dtype: OutDtype::F32 };
        let mut byte = || loop {
            let b = rng.byte();
            if !decode_fp8_f64(format, b).is_nan() {
                return b;
            }
        };
        let a: Vec<u8> = (0..m * k).map(|_| byte()).collect();
        let b: Vec<u8> = (0..n * k).map(|_| byte()).collect();
        let mut rng = Rng::new(seed ^ 0xabcdef);
        let a_scales = (0..GemmProblem::a_scales_len(&shape, layout)).map(|_| rng.range(0.01, 2.0) as f32).collect();
        let b_scales = (0..shape.n_blocks() * shape.k_blocks()).map(|_| rng.range(0.01, 2.0) as f32).collect();
        RawProblem { shape, a, a_scales, layout, b, b_scales }
    }
    fn problem(&self) -> GemmProblem<'_> {
        GemmProblem { shape: self.shape, a: &self.a, a_scales: ActScales { data: &self.a_scales, layout: self.layout }, b: &self.b, b_scales: &self.b_scales }
    }
    fn simulate(&self, plan: &VendorPlan) -> Result<Vec<f64>, String> {
        let f = self.shape.format;
        let a: Vec<f64> = self.a.iter().map(|&x| decode_fp8_f64(f, x)).collect();
        let b: Vec<f64> = self.b.iter().map(|&x| decode_fp8_f64(f, x)).collect();
        simulate::run(plan, &a, &self.a_scales, &b, &self.b_scales)
    }
}

#[test]
fn planned_rocblas_calls_compute_the_block_scaled_product() {
    let mut cases = 0;
    for &m in &[1usize, 17, 100] {
        for &n in &[576usize, 129] {
            for &k in &[1280usize, 200] {
                for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
                    // A small budget forces several chunks (and a short last one) for M = 100.
                    for budget in [DEFAULT_WORKSPACE_BYTES, 40 * k.div_ceil(128) * n * 4] {
                        let raw = RawProblem::new(m, n, k, Fp8Format::E4m3fnuz, layout, (m * 1_000_003 + n * 1009 + k) as u64);
                        let p = raw.problem();
                        p.validate().unwrap();
                        let plan = VendorPlan::new(m, n, k, layout, budget).unwrap();
                        plan.check_bounds().unwrap();
                        if m == 100 && budget < DEFAULT_WORKSPACE_BYTES {
                            assert_eq!((plan.chunk_rows, plan.chunk_count()), (32, 4));
                        }
                        let got = raw.simulate(&plan).unwrap();
                        let want = reference_gemm_f64(&p);
                        let diff = calc_diff(&got, &want);
                        let max_rel = got.iter().zip(&want).map(|(g, w)| (g - w).abs() / w.abs().max(1e-3)).fold(0.0, f64::max);
                        assert!(diff < 1e-12 && max_rel < 1e-9, "M={m} N={n} K={k} {layout:?} budget {budget}: calc_diff {diff:e}, max rel {max_rel:e}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert_eq!(cases, 48);
}

#[test]
fn the_simulation_detects_a_wrong_mapping() {
    // The check above can fail: the same problem with a deliberately wrong plan differs.
    let raw = RawProblem::new(17, 129, 300, Fp8Format::E4m3fnuz, ScaleLayout::RowMajor, 5);
    let want = reference_gemm_f64(&raw.problem());
    let good = VendorPlan::new(17, 129, 300, ScaleLayout::RowMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
    assert!(calc_diff(&raw.simulate(&good).unwrap(), &want) < 1e-12);

    // Operands swapped between weight and activations: refused as out of bounds or wrong.
    let run_with = |mutate: &dyn Fn(&mut blockfp8::backend::hip::vendor_plan::BatchedGemm)| -> Result<Vec<f64>, String> {
        let f = raw.shape.format;
        let a: Vec<f64> = raw.a.iter().map(|&x| decode_fp8_f64(f, x)).collect();
        let b: Vec<f64> = raw.b.iter().map(|&x| decode_fp8_f64(f, x)).collect();
        let chunk = good.chunk(0).unwrap();
        let mut work = vec![0.0; good.workspace_elems];
        for g in &chunk.gemms {
            let mut g = *g;
            mutate(&mut g);
            simulate::strided_batched_gemm(&g, &b, &a, &mut work)?;
        }
        let mut c = vec![0.0; raw.shape.m * raw.shape.n];
        simulate::scale_reduce(&chunk.reduce, &work, &raw.a_scales, &raw.b_scales, &mut c);
        Ok(c)
    };
    assert!(calc_diff(&run_with(&|_| {}).unwrap(), &want) < 1e-12);
    // Batches not advancing along K: every batch multiplies the first K block.
    let d = calc_diff(&run_with(&|g| g.a.stride = 0).unwrap(), &want);
    assert!(d > 1e-3, "stride_a = 0 went unnoticed ({d:e})");
    // Weight not transposed: reads the weight as K x N with the wrong leading dimension.
    match run_with(&|g| g.trans_a = blockfp8::backend::hip::vendor_plan::Op::None) {
        Ok(c) => assert!(calc_diff(&c, &want) > 1e-3),
        Err(why) => assert!(why.contains("leading") || why.contains("out of bounds"), "{why}"),
    }
}

/// The planned rocBLAS products (computed on the CPU, rounded to fp32 as rocBLAS writes
/// them) folded by hipkern's real `scale_reduce` kernel source, run under the emulator,
/// with the launch arguments the plan gives: the plan and the kernel agree on the layout.
#[test]
fn planned_partials_through_the_emulated_scale_reduce_kernel() {
    use blockfp8::backend::hip::emulator::{self, Arch, ScaleReduceArgs};
    for arch in Arch::ALL {
        for (m, n, k, layout) in [(100, 129, 200, ScaleLayout::ColumnMajor), (17, 576, 1280, ScaleLayout::RowMajor)] {
            let raw = RawProblem::new(m, n, k, arch.fp8(), layout, 77);
            let want = reference_gemm_f64(&raw.problem());
            let f = raw.shape.format;
            let a: Vec<f64> = raw.a.iter().map(|&x| decode_fp8_f64(f, x)).collect();
            let b: Vec<f64> = raw.b.iter().map(|&x| decode_fp8_f64(f, x)).collect();
            // Several chunks for M = 100.
            let plan = VendorPlan::new(m, n, k, layout, 40 * k.div_ceil(128) * n * 4).unwrap();
            let mut c = vec![f64::NAN; m * n];
            for chunk in plan.chunks() {
                let mut work = vec![0.0f64; plan.workspace_elems];
                for g in &chunk.gemms {
                    simulate::strided_batched_gemm(g, &b, &a, &mut work).unwrap();
                }
                let work32: Vec<f32> = work.iter().map(|&v| v as f32).collect();
                let r = chunk.reduce;
                let args = ScaleReduceArgs {
                    partial: &work32,
                    batch_stride: r.batch_stride as usize,
                    a_scales: &raw.a_scales,
                    as_stride_m: r.as_stride_m as usize,
                    as_stride_kb: r.as_stride_kb as usize,
                    b_scales: &raw.b_scales,
                    m0: r.m0 as usize,
                    rows: r.rows as usize,
                    m,
                    n: r.n as usize,
                    kb: r.kb as usize,
                };
                let out = emulator::scale_reduce(arch, OutDtype::F32, &args).unwrap().to_f64();
                for i in chunk.m0..chunk.m0 + chunk.rows {
                    c[i * n..(i + 1) * n].copy_from_slice(&out[i * n..(i + 1) * n]);
                }
            }
            common::assert_calc_diff_below(&c, &want, 1e-9, &format!("{} M={m} N={n} K={k} {layout:?}", arch.name()));
        }
    }
}

/// The vendor path's plan for the DeepSeek-V3 weight shapes: rocBLAS calls, chunks and
/// workspace (printed for BENCHMARKS.md; planned sizes, not measurements). Asserts the
/// workspace bound and that each chunk issues at most two rocBLAS calls and one reduce.
#[test]
fn deepseek_v3_shapes_stay_within_the_workspace_bound() {
    let shapes = [(576, 7168), (2112, 7168), (24576, 7168), (32768, 512), (7168, 16384), (7168, 18432), (36864, 7168), (4608, 7168), (7168, 2304), (7168, 256)];
    println!("| N | K | M | K blocks | chunk rows | chunks | rocBLAS calls | workspace MiB |");
    for (n, k) in shapes {
        for m in [1usize, 64, 4096, 16384] {
            let plan = VendorPlan::new(m, n, k, ScaleLayout::RowMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
            assert!(plan.workspace_elems * 4 <= DEFAULT_WORKSPACE_BYTES, "N={n} K={k} M={m}");
            plan.check_bounds().unwrap();
            let calls: usize = plan.chunks().map(|c| c.gemms.len()).sum();
            assert!(calls <= 2 * plan.chunk_count());
            assert_eq!(plan.chunks().map(|c| c.rows).sum::<usize>(), m);
            println!("| {n} | {k} | {m} | {} | {} | {} | {calls} | {:.1} |", plan.k_blocks, plan.chunk_rows, plan.chunk_count(), (plan.workspace_elems * 4) as f64 / (1 << 20) as f64);
        }
    }
}

// ---- GPU tests: #[ignore]d, run with --include-ignored where an AMD GPU exists ---------

/// Device 0, or a failure that says why: these tests are `#[ignore]`d, so a plain `cargo
/// test` lists them as ignored instead of passing them without a GPU, and a run with
/// `--include-ignored` where there is no GPU fails instead of claiming coverage.
fn gpu_backend() -> HipBackend {
    HipBackend::new(0).unwrap_or_else(|e| panic!("this test needs an AMD GPU (run with --include-ignored on a GPU machine); opening HIP device 0: {e}"))
}

#[test]
#[ignore = "needs an AMD GPU (run with --include-ignored on a GPU machine)"]
fn gpu_gemm_paths_match_the_cpu_reference() {
    let be = gpu_backend();
    let format = be.device().fp8;
    for &m in &[1usize, 17, 100] {
        for &n in &[576usize, 129] {
            for &k in &[1280usize, 200] {
                for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
                    let q = common::random_quantized_problem(m, n, k, format, layout, (m + n + k) as u64);
                    for out in [OutDtype::Bf16, OutDtype::F16, OutDtype::F32] {
                        let p = q.problem_with_out(out);
                        let want = reference_gemm_f64(&p);
                        for path in [GemmPath::KernelDefault, GemmPath::Vendor] {
                            if let Err(why) = be.supports(&p.shape, &path) {
                                println!("M={m} N={n} K={k} {out:?}: {} not run: {why}", path.label());
                                continue;
                            }
                            let got = be.gemm(&p, &path).unwrap();
                            common::assert_output_close(&got, out, &want, 1e-5, &format!("{} M={m} N={n} K={k} {layout:?} {out:?}", path.label()));
                        }
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs an AMD GPU whose rocBLAS serves the FP8 path, e.g. gfx942 with ROCm 6 (run with --include-ignored)"]
fn gpu_vendor_path_with_a_small_workspace() {
    let mut be = gpu_backend();
    let q = common::random_quantized_problem(100, 576, 1280, be.device().fp8, ScaleLayout::ColumnMajor, 9);
    if let Err(why) = be.supports(&q.shape, &GemmPath::Vendor) {
        panic!("this test needs the rocBLAS FP8 path, which this device cannot run: {why}");
    }
    be.set_workspace_bytes(40 * 10 * 576 * 4); // 4 chunks of 32 rows
    let got = be.gemm(&q.problem(), &GemmPath::Vendor).unwrap();
    common::assert_output_close(&got, OutDtype::F32, &reference_gemm_f64(&q.problem()), 1e-5, "chunked vendor path");
}

#[test]
#[ignore = "needs an AMD GPU (run with --include-ignored on a GPU machine)"]
fn gpu_quantizers_match_the_cpu() {
    let be = gpu_backend();
    let format = be.device().fp8;
    let x = common::random_activations(17, 200, 3);
    for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
        let mut opts = blockfp8::TokenQuantOptions::new(format);
        opts.layout = layout;
        let got = be.quantize_tokens(&x, 17, 200, &opts).unwrap();
        let want = blockfp8::quant::quantize_per_token_group(&x, 17, 200, &opts).unwrap();
        assert_eq!(got, want, "{layout:?}");
    }
    let w = common::random_weights(129, 200, 4);
    let got = be.quantize_weight(&w, 129, 200, (128, 128), format).unwrap();
    assert_eq!(got, blockfp8::quant::quantize_weight_blocks(&w, 129, 200, (128, 128), format).unwrap());
}

#[test]
#[ignore = "needs an AMD GPU (run with --include-ignored on a GPU machine)"]
fn gpu_fnuz_conversion_matches_the_cpu() {
    let be = gpu_backend();
    let w = common::random_weights(300, 520, 8);
    let ocp = blockfp8::quant::quantize_weight_blocks(&w, 300, 520, (128, 128), Fp8Format::E4m3fn).unwrap();
    let (mut gpu, mut cpu) = (ocp.clone(), ocp);
    be.convert_weight_to_fnuz(&mut gpu).unwrap();
    cpu.convert_to_fnuz().unwrap();
    assert_eq!(gpu, cpu);
    assert!(be.convert_weight_to_fnuz(&mut gpu).is_err(), "already fnuz");
}

#[test]
#[ignore = "needs an AMD GPU (run with --include-ignored on a GPU machine)"]
fn gpu_timing_reports_one_positive_time_per_repeat() {
    let be = gpu_backend();
    let q = common::random_quantized_problem(64, 576, 1280, be.device().fp8, ScaleLayout::RowMajor, 1);
    let t = be.time_gemm(&q.problem(), &GemmPath::KernelDefault, &TimingOptions { warmup: 1, repeats: 4, rotate_bytes: 1 << 20, ..Default::default() }).unwrap();
    assert_eq!(t.len(), 4);
    assert!(t.iter().all(|&s| s > 0.0 && s < 1.0), "{t:?}");
}

#[test]
#[ignore = "needs an AMD GPU (run with --include-ignored on a GPU machine)"]
fn gpu_refuses_bad_blocks_and_foreign_fp8() {
    let be = gpu_backend();
    let mut shape = GemmShape { m: 4, n: 128, k: 128, block: (64, 128), format: be.device().fp8, out_dtype: OutDtype::F32 };
    assert!(be.supports(&shape, &GemmPath::KernelDefault).unwrap_err().contains("(128, 128)"));
    shape.block = (128, 128);
    shape.format = if shape.format == Fp8Format::E4m3fn { Fp8Format::E4m3fnuz } else { Fp8Format::E4m3fn };
    assert!(be.supports(&shape, &GemmPath::KernelDefault).is_err());
}

#[test]
fn cluster_configs_are_refused_on_amd() {
    use blockfp8::backend::hip::{kernel_for, kernels};
    let shape = GemmShape { m: 256, n: 256, k: 256, block: (128, 128), format: Fp8Format::E4m3fnuz, out_dtype: OutDtype::Bf16 };
    let plain = kernels::default_gemm_config();
    if !kernels::compiled_archs().is_empty() {
        assert!(kernel_for(&shape, &GemmPath::Tuned(plain.clone())).is_ok());
    }
    // The same tile asking for CUDA's clusters of two must not run silently without them.
    let mut pair = plain;
    pair.extra.insert(blockfp8::config::CLUSTER_KEY.into(), 2.into());
    let err = kernel_for(&shape, &GemmPath::Tuned(pair)).unwrap_err();
    assert!(err.contains("clusters exist only on the CUDA"), "{err}");
}
