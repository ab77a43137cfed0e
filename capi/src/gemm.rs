//! `blockfp8_gemm` and its plan helpers: C = (A, As) x (W, Ws)^T on raw device pointers,
//! enqueued on the caller's stream through the context's cached plans.

use std::ffi::{c_char, c_void};

use half::{bf16, f16};

use blockfp8::{GemmSpec, OutDtype};

use crate::codes;
use crate::context::{context, Blockfp8Context};
use crate::error::{guard, FfiResult, Failure, BLOCKFP8_ERR_SHAPE};
use crate::weight::{weight, Blockfp8Weight};

fn spec_for(w: &Blockfp8Weight, n: usize, k: usize, out_dtype: i32, a_layout: i32) -> FfiResult<GemmSpec> {
    let pw = &w.w;
    if (n, k) != (pw.n(), pw.k()) {
        return Err(Failure::new(BLOCKFP8_ERR_SHAPE, format!("gemm: N={n} K={k} given, but the weight is {} x {}", pw.n(), pw.k())));
    }
    Ok(GemmSpec { n, k, block: pw.block(), format: pw.format(), out_dtype: codes::out_dtype(out_dtype)?, a_layout: codes::layout(a_layout)?, max_m: 1 })
}

fn mul(what: &str, a: usize, b: usize) -> FfiResult<usize> {
    a.checked_mul(b).ok_or_else(|| Failure::new(BLOCKFP8_ERR_SHAPE, format!("gemm: {what} ({a} x {b}) overflows")))
}

/// Enqueues C [M, N] = A [M, K] (fp8, row-major, scales `a_scales` in `a_layout`) times the
/// weight's transpose, in `out_dtype`, on `stream`. The activations' fp8 flavour is the
/// weight's.
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_gemm(
    ctx: *const Blockfp8Context,
    stream: u64,
    a: *const u8,
    a_scales: *const f32,
    a_layout: i32,
    w: *const Blockfp8Weight,
    out: *mut c_void,
    out_dtype: i32,
    m: usize,
    n: usize,
    k: usize,
) -> i32 {
    guard("blockfp8_gemm", || {
        let c = context(ctx)?;
        let w = weight(w)?;
        for (what, p) in [("A", a as usize), ("activation scales", a_scales as usize), ("output", out as usize)] {
            if p == 0 {
                return Err(Failure::null(what));
            }
        }
        let spec = spec_for(w, n, k, out_dtype, a_layout)?;
        if m == 0 {
            return Err(Failure::new(BLOCKFP8_ERR_SHAPE, "gemm: M must be >= 1"));
        }
        let groups = k.div_ceil(spec.block.1);
        let scales = match spec.a_layout {
            blockfp8::ScaleLayout::RowMajor => mul("activation scales", m, groups)?,
            blockfp8::ScaleLayout::ColumnMajor => mul("activation scales", blockfp8::ScaleLayout::padded_rows(m), groups)?,
        };
        let (a_len, c_len) = (mul("A", m, k)?, mul("C", m, n)?);
        let st = c.stream(stream)?;
        let av = c.ctx.wrap::<u8>(a as u64, a_len)?;
        let sv = c.ctx.wrap::<f32>(a_scales as u64, scales)?;
        let plan = c.plan(spec, m)?;
        let addr = out as u64;
        match spec.out_dtype {
            OutDtype::Bf16 => plan.enqueue(&st, av, sv, &w.w, &mut c.ctx.wrap_mut::<bf16>(addr, c_len)?)?,
            OutDtype::F16 => plan.enqueue(&st, av, sv, &w.w, &mut c.ctx.wrap_mut::<f16>(addr, c_len)?)?,
            OutDtype::F32 => plan.enqueue(&st, av, sv, &w.w, &mut c.ctx.wrap_mut::<f32>(addr, c_len)?)?,
        }
        Ok(())
    })
}

/// Resolves (and allocates the workspace of) the plan that serves up to `max_m` rows with this
/// weight, layout and output, so that later `blockfp8_gemm` calls up to that M
/// allocate nothing (call it before capturing a graph).
///
/// # Safety
/// See the header.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_gemm_reserve(ctx: *const Blockfp8Context, stream: u64, w: *const Blockfp8Weight, a_layout: i32, out_dtype: i32, max_m: usize) -> i32 {
    guard("blockfp8_gemm_reserve", || {
        let c = context(ctx)?;
        let w = weight(w)?;
        let spec = spec_for(w, w.w.n(), w.w.k(), out_dtype, a_layout)?;
        if max_m == 0 {
            return Err(Failure::new(BLOCKFP8_ERR_SHAPE, "gemm reserve: max M must be >= 1"));
        }
        c.stream(stream)?; // checked for the device, though plans serve every stream
        c.reserve(spec, max_m)
    })
}

/// Writes the label of the path a product of this shape takes ("tuned ...", "vendor",
/// "kernel default") into `buf` (NUL-terminated, truncated to `len`); `needed` (if not null)
/// gets the full length including the NUL.
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_gemm_path(
    ctx: *const Blockfp8Context,
    m: usize,
    n: usize,
    k: usize,
    block_n: usize,
    block_k: usize,
    format: i32,
    out_dtype: i32,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> i32 {
    guard("blockfp8_gemm_path", || {
        let c = context(ctx)?;
        let shape = blockfp8::GemmShape { m, n, k, block: (block_n, block_k), format: codes::fp8(format)?, out_dtype: codes::out_dtype(out_dtype)? };
        shape.check_size("gemm path")?;
        let label = c.ctx.path_chooser().choose(&shape).label();
        crate::write_c_str(&label, buf, len, needed)
    })
}
