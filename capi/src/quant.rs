//! Quantization on raw pointers: activations per token group, weights per 128x128 block (into
//! the caller's buffers), and the host-side e4m3fn -> e4m3fnuz checkpoint conversion.

use std::ffi::c_void;

use half::{bf16, f16};

use blockfp8::backend::QuantWeightArgs;
use blockfp8::{BackendKind, Error, InputDtype, QuantInput, TokenQuantOptions};

use crate::codes;
use crate::context::{context, Blockfp8Context};
use crate::error::{guard, FfiResult, Failure};

/// Enqueues token quantization of x [M, K] (bf16/f16/f32) into q (fp8 [M, K]) and s (`s_len`
/// f32 in `layout`: [M, ceil(K/group)] or [ceil(K/group), round_up(M, 4)]).
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_quantize_tokens(
    ctx: *const Blockfp8Context,
    stream: u64,
    x: *const c_void,
    x_dtype: i32,
    m: usize,
    k: usize,
    group: usize,
    format: i32,
    fp8_max: f32,
    layout: i32,
    ue8m0: i32,
    q: *mut u8,
    s: *mut f32,
    s_len: usize,
) -> i32 {
    guard("blockfp8_quantize_tokens", || {
        let c = context(ctx)?;
        for (what, p) in [("x", x as usize), ("q", q as usize), ("s", s as usize)] {
            if p == 0 {
                return Err(Failure::null(what));
            }
        }
        let opts = TokenQuantOptions {
            group,
            format: codes::fp8(format)?,
            fp8_max: if fp8_max == 0.0 { None } else { Some(fp8_max) },
            layout: codes::layout(layout)?,
            ue8m0: ue8m0 != 0,
        };
        let elems = m.checked_mul(k).ok_or_else(|| Failure::new(crate::error::BLOCKFP8_ERR_SHAPE, format!("M*K = {m}*{k} overflows")))?;
        let st = c.stream(stream)?;
        let mut qv = c.ctx.wrap_mut::<u8>(q as u64, elems)?;
        let mut sv = c.ctx.wrap_mut::<f32>(s as u64, s_len)?;
        let addr = x as u64;
        match codes::input_dtype(x_dtype)? {
            InputDtype::Bf16 => c.ctx.quantize_tokens(&st, c.ctx.wrap::<bf16>(addr, elems)?, m, k, &opts, &mut qv, &mut sv)?,
            InputDtype::F16 => c.ctx.quantize_tokens(&st, c.ctx.wrap::<f16>(addr, elems)?, m, k, &opts, &mut qv, &mut sv)?,
            InputDtype::F32 => c.ctx.quantize_tokens(&st, c.ctx.wrap::<f32>(addr, elems)?, m, k, &opts, &mut qv, &mut sv)?,
        }
        Ok(())
    })
}

#[allow(clippy::too_many_arguments)]
fn weight_quant<T: QuantInput>(c: &Blockfp8Context, stream: u64, w: u64, n: usize, k: usize, format: i32, q: u64, s: u64) -> FfiResult {
    const OP: &str = "quantize_weight";
    let format = codes::fp8(format)?;
    let elems = n.checked_mul(k).filter(|e| *e <= i32::MAX as usize && n > 0 && k > 0).ok_or_else(|| Error::shape(OP, format!("N*K = {n}*{k} must be in 1 ..= 2^31-1")))?;
    if c.ctx.backend().kind() != BackendKind::Cpu && format != c.ctx.fp8() {
        return Err(Error::invalid(OP, format!("{format:?} requested but {} computes in {:?}", c.ctx.device().name, c.ctx.fp8())).into());
    }
    let st = c.stream(stream)?;
    // SAFETY: the header's contract for w, q and s (sizes N*K, N*K and ceil(N/128)*ceil(K/128)).
    let (wv, qv, sv) = unsafe { (c.ctx.wrap::<T>(w, elems)?, c.ctx.wrap_mut::<u8>(q, elems)?, c.ctx.wrap_mut::<f32>(s, n.div_ceil(128) * k.div_ceil(128))?) };
    let align = c.ctx.backend().alignment() as u64;
    for (what, addr) in [("weight", wv.addr()), ("q", qv.addr()), ("s", sv.addr())] {
        if addr % align != 0 {
            return Err(Error::Misaligned { op: OP, what: what.into(), addr, align: align as usize }.into());
        }
    }
    let args = QuantWeightArgs { w: wv.addr(), input: T::INPUT, n, k, q: qv.addr(), s: sv.addr(), format };
    // SAFETY: devices (wrap), sizes and alignment checked above: what Context::quantize_weight
    // checks before the same call, with the caller's buffers as the outputs.
    unsafe { Ok(c.ctx.backend().enqueue_quantize_weight(&st, &args)?) }
}

/// Enqueues 128x128 block quantization of w [N, K] (bf16/f16/f32) into the caller's q (fp8
/// [N, K]) and s (f32 [ceil(N/128), ceil(K/128)]).
///
/// # Safety
/// See the header.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn blockfp8_quantize_weight(ctx: *const Blockfp8Context, stream: u64, w: *const c_void, w_dtype: i32, n: usize, k: usize, format: i32, q: *mut u8, s: *mut f32) -> i32 {
    guard("blockfp8_quantize_weight", || {
        let c = context(ctx)?;
        for (what, p) in [("w", w as usize), ("q", q as usize), ("s", s as usize)] {
            if p == 0 {
                return Err(Failure::null(what));
            }
        }
        let (w, q, s) = (w as u64, q as u64, s as u64);
        match codes::input_dtype(w_dtype)? {
            InputDtype::Bf16 => weight_quant::<bf16>(c, stream, w, n, k, format, q, s),
            InputDtype::F16 => weight_quant::<f16>(c, stream, w, n, k, format, q, s),
            InputDtype::F32 => weight_quant::<f32>(c, stream, w, n, k, format, q, s),
        }
    })
}

/// Converts an e4m3fn weight and its f32 scales in host memory, in place, to e4m3fnuz with
/// identical dequantized values (0x80 -> 0x00, scales x2). Nothing changes on error.
///
/// # Safety
/// `q` must address `q_len` writable bytes and `s` `s_len` writable floats (either may be null
/// when its length is 0).
#[no_mangle]
pub unsafe extern "C" fn blockfp8_convert_e4m3fn_to_fnuz_host(q: *mut u8, q_len: usize, s: *mut f32, s_len: usize) -> i32 {
    guard("blockfp8_convert_e4m3fn_to_fnuz_host", || {
        let qs: &mut [u8] = if q_len == 0 { &mut [] } else { std::slice::from_raw_parts_mut(q.as_mut().ok_or_else(|| Failure::null("q"))?, q_len) };
        let ss: &mut [f32] = if s_len == 0 { &mut [] } else { std::slice::from_raw_parts_mut(s.as_mut().ok_or_else(|| Failure::null("s"))?, s_len) };
        Ok(blockfp8::formats::convert_e4m3fn_to_fnuz(qs, ss)?)
    })
}

