//! `blockfp8_weight`: a [`PreparedWeight`] behind a handle: copied from device or host memory
//! (converted e4m3fn -> e4m3fnuz on gfx942), or borrowed from the caller's device memory.

use blockfp8::PreparedWeight;

use crate::codes;
use crate::context::{context, Blockfp8Context};
use crate::error::{guard, FfiResult, Failure};

pub struct Blockfp8Weight {
    pub w: PreparedWeight,
    /// Whether the fp8 bytes and scales are the caller's memory.
    pub borrowed: bool,
}

/// What `blockfp8_weight_get_info` fills in.
#[repr(C)]
pub struct Blockfp8WeightInfo {
    pub n: usize,
    pub k: usize,
    pub block_n: usize,
    pub block_k: usize,
    pub fp8_format: i32,
    pub borrowed: i32,
}

/// Borrows a weight handle.
///
/// # Safety
/// `w` must be null or a live handle from `blockfp8_weight_*`.
pub unsafe fn weight<'a>(w: *const Blockfp8Weight) -> FfiResult<&'a Blockfp8Weight> {
    w.as_ref().ok_or_else(|| Failure::null("weight"))
}

/// (fp8 byte count N*K, scale count ceil(N/bn)*ceil(K/bk)), overflow-checked; the crate checks
/// the rest (zero sizes, the 2^31-1 limit).
fn weight_lengths(n: usize, k: usize, bn: usize, bk: usize) -> FfiResult<(usize, usize)> {
    if bn == 0 || bk == 0 {
        return Err(Failure::invalid(format!("block {bn}x{bk} has a zero side")));
    }
    let q = n.checked_mul(k);
    let s = n.div_ceil(bn).checked_mul(k.div_ceil(bk));
    match (q, s) {
        (Some(q), Some(s)) => Ok((q, s)),
        _ => Err(Failure::new(crate::error::BLOCKFP8_ERR_SHAPE, format!("weight {n} x {k} overflows"))),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Source {
    Device,
    Host,
    Borrow,
}

#[allow(clippy::too_many_arguments)]
unsafe fn make_weight(
    op: &'static str,
    source: Source,
    ctx: *const Blockfp8Context,
    stream: u64,
    q: *const u8,
    s: *const f32,
    n: usize,
    k: usize,
    bn: usize,
    bk: usize,
    format: i32,
    out: *mut *mut Blockfp8Weight,
) -> i32 {
    guard(op, || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        *out = std::ptr::null_mut();
        let c = context(ctx)?;
        if q.is_null() || s.is_null() {
            return Err(Failure::null(if q.is_null() { "weight" } else { "weight scales" }));
        }
        let format = codes::fp8(format)?;
        let (nq, ns) = weight_lengths(n, k, bn, bk)?;
        let st = c.stream(stream)?;
        let w = match source {
            Source::Host => {
                let qh = std::slice::from_raw_parts(q, nq);
                let sh = std::slice::from_raw_parts(s, ns);
                c.ctx.prepare_weight(&st, qh, sh, n, k, (bn, bk), format)?
            }
            Source::Device | Source::Borrow => {
                let qv = c.ctx.wrap::<u8>(q as u64, nq)?;
                let sv = c.ctx.wrap::<f32>(s as u64, ns)?;
                if source == Source::Borrow {
                    c.ctx.borrow_weight(&st, qv, sv, n, k, (bn, bk), format)?
                } else {
                    c.ctx.prepare_weight_from_device(&st, qv, sv, n, k, (bn, bk), format)?
                }
            }
        };
        *out = Box::into_raw(Box::new(Blockfp8Weight { w, borrowed: source == Source::Borrow }));
        Ok(())
    })
}

/// A weight copied on the device from device memory (`q`: fp8 [N, K], `s`: f32 scales
/// [ceil(N/bn), ceil(K/bk)], both row-major), converted to e4m3fnuz on gfx942.
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_weight_prepare(ctx: *const Blockfp8Context, stream: u64, q: *const u8, s: *const f32, n: usize, k: usize, block_n: usize, block_k: usize, format: i32, out: *mut *mut Blockfp8Weight) -> i32 {
    make_weight("blockfp8_weight_prepare", Source::Device, ctx, stream, q, s, n, k, block_n, block_k, format, out)
}

/// As `blockfp8_weight_prepare`, from host memory (uploaded; scales checked finite).
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_weight_prepare_host(ctx: *const Blockfp8Context, stream: u64, q: *const u8, s: *const f32, n: usize, k: usize, block_n: usize, block_k: usize, format: i32, out: *mut *mut Blockfp8Weight) -> i32 {
    make_weight("blockfp8_weight_prepare_host", Source::Host, ctx, stream, q, s, n, k, block_n, block_k, format, out)
}

/// A weight over the caller's device memory, not copied; the memory must outlive the handle.
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_weight_borrow(ctx: *const Blockfp8Context, stream: u64, q: *const u8, s: *const f32, n: usize, k: usize, block_n: usize, block_k: usize, format: i32, out: *mut *mut Blockfp8Weight) -> i32 {
    make_weight("blockfp8_weight_borrow", Source::Borrow, ctx, stream, q, s, n, k, block_n, block_k, format, out)
}

/// Frees a weight (null is ignored).
///
/// # Safety
/// `w` null or a live handle, unused afterwards, with no pending work reading it.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_weight_destroy(w: *mut Blockfp8Weight) {
    crate::free_handle(w)
}

/// Describes a weight.
///
/// # Safety
/// `w` a live handle; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn blockfp8_weight_get_info(w: *const Blockfp8Weight, out: *mut Blockfp8WeightInfo) -> i32 {
    guard("blockfp8_weight_get_info", || {
        let w = weight(w)?;
        let out = out.as_mut().ok_or_else(|| Failure::null("out"))?;
        let (bn, bk) = w.w.block();
        *out = Blockfp8WeightInfo { n: w.w.n(), k: w.w.k(), block_n: bn, block_k: bk, fp8_format: codes::fp8_code(w.w.format()), borrowed: w.borrowed as i32 };
        Ok(())
    })
}
