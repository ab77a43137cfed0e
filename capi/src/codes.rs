//! The integer codes of the header's enums, checked on the way in (a C caller can pass any
//! int, so Rust enums never cross the boundary).

use blockfp8::{BackendKind, Fp8Format, InputDtype, OutDtype, ScaleLayout};

use crate::error::{FfiResult, Failure};

pub const BACKEND_CPU: i32 = 0;
pub const BACKEND_CUDA: i32 = 1;
pub const BACKEND_ROCM: i32 = 2;

pub const FP8_E4M3FN: i32 = 0;
pub const FP8_E4M3FNUZ: i32 = 1;

pub const DTYPE_BF16: i32 = 0;
pub const DTYPE_F16: i32 = 1;
pub const DTYPE_F32: i32 = 2;

pub const LAYOUT_ROW_MAJOR: i32 = 0;
pub const LAYOUT_COLUMN_MAJOR: i32 = 1;

pub fn backend(code: i32) -> FfiResult<BackendKind> {
    match code {
        BACKEND_CPU => Ok(BackendKind::Cpu),
        BACKEND_CUDA => Ok(BackendKind::Cuda),
        BACKEND_ROCM => Ok(BackendKind::Rocm),
        _ => Err(Failure::invalid(format!("backend code {code} (expected 0 = cpu, 1 = cuda, 2 = rocm)"))),
    }
}

pub fn backend_code(kind: BackendKind) -> i32 {
    match kind {
        BackendKind::Cpu => BACKEND_CPU,
        BackendKind::Cuda => BACKEND_CUDA,
        BackendKind::Rocm | BackendKind::HipEmulator => BACKEND_ROCM,
    }
}

pub fn fp8(code: i32) -> FfiResult<Fp8Format> {
    match code {
        FP8_E4M3FN => Ok(Fp8Format::E4m3fn),
        FP8_E4M3FNUZ => Ok(Fp8Format::E4m3fnuz),
        _ => Err(Failure::invalid(format!("fp8 format code {code} (expected 0 = e4m3fn, 1 = e4m3fnuz)"))),
    }
}

pub fn fp8_code(f: Fp8Format) -> i32 {
    match f {
        Fp8Format::E4m3fn => FP8_E4M3FN,
        Fp8Format::E4m3fnuz => FP8_E4M3FNUZ,
    }
}

pub fn out_dtype(code: i32) -> FfiResult<OutDtype> {
    match code {
        DTYPE_BF16 => Ok(OutDtype::Bf16),
        DTYPE_F16 => Ok(OutDtype::F16),
        DTYPE_F32 => Ok(OutDtype::F32),
        _ => Err(Failure::invalid(format!("dtype code {code} (expected 0 = bf16, 1 = f16, 2 = f32)"))),
    }
}

pub fn input_dtype(code: i32) -> FfiResult<InputDtype> {
    Ok(match out_dtype(code)? {
        OutDtype::Bf16 => InputDtype::Bf16,
        OutDtype::F16 => InputDtype::F16,
        OutDtype::F32 => InputDtype::F32,
    })
}

pub fn layout(code: i32) -> FfiResult<ScaleLayout> {
    match code {
        LAYOUT_ROW_MAJOR => Ok(ScaleLayout::RowMajor),
        LAYOUT_COLUMN_MAJOR => Ok(ScaleLayout::ColumnMajor),
        _ => Err(Failure::invalid(format!("scale layout code {code} (expected 0 = row-major, 1 = column-major)"))),
    }
}
