//! What differs between a real AMD GPU and the emulated one: how a kernel with a packed
//! argument list (`abi`) is launched, and who runs a rocBLAS call. Everything above it (plans,
//! argument packing, workspaces, the chunked rocBLAS path) is the same code on both, so the
//! emulated device exercises the HIP backend's device-API path in CI.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::abi;
use super::kernels::{self, GemmKernel};
use super::rocblas::{self, RocBlas};
use super::runtime::{self, DevicePtr, Function, LaunchConfig, Module};
use super::sys;
use super::vendor_plan::BatchedGemm;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::types::{InputDtype, OutDtype};

/// `quant_per_token_group[_bf16|_f16]`: one kernel per input dtype.
pub(crate) fn quant_tokens_symbol(input: InputDtype) -> &'static str {
    match input {
        InputDtype::F32 => kernels::QUANT_PER_TOKEN_GROUP,
        InputDtype::Bf16 => "quant_per_token_group_bf16",
        InputDtype::F16 => "quant_per_token_group_f16",
    }
}

/// `quant_weight_blocks[_bf16|_f16]`.
pub(crate) fn quant_weight_symbol(input: InputDtype) -> &'static str {
    match input {
        InputDtype::F32 => kernels::QUANT_WEIGHT_BLOCKS,
        InputDtype::Bf16 => "quant_weight_blocks_bf16",
        InputDtype::F16 => "quant_weight_blocks_f16",
    }
}

/// Launches of the HIP kernels and rocBLAS calls on one device.
pub(crate) trait HipLauncher: Send + Sync {
    /// # Safety (for every method)
    /// The packed arguments must address live memory of this device sized for the launch,
    /// and `stream` must be a stream of this device.
    unsafe fn gemm(&self, stream: &Stream, kernel: &GemmKernel, cfg: LaunchConfig, args: &abi::GemmArgs) -> Result<()>;
    unsafe fn scale_reduce(&self, stream: &Stream, out: OutDtype, cfg: LaunchConfig, args: &abi::ScaleReduceArgs) -> Result<()>;
    unsafe fn quant_tokens(&self, stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantTokensArgs) -> Result<()>;
    unsafe fn quant_weight(&self, stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantWeightArgs) -> Result<()>;
    unsafe fn convert_to_fnuz(&self, stream: &Stream, cfg: LaunchConfig, args: &abi::ConvertFnuzArgs) -> Result<()>;
    /// One planned `rocblas_gemm_strided_batched_ex3` (fp8 inputs, f32 output).
    unsafe fn vendor_gemm(&self, stream: &Stream, call: &BatchedGemm, weight: DevicePtr<u8>, act: DevicePtr<u8>, work: DevicePtr<f32>) -> Result<()>;
    /// What runs the vendor calls, for logs.
    fn vendor_name(&self) -> String;
}

/// The HIP runtime and rocBLAS of a real device.
pub(crate) struct RuntimeLauncher {
    pub ordinal: usize,
    pub module: Arc<Module>,
    pub functions: Mutex<HashMap<String, Arc<Function>>>,
    pub vendor: std::result::Result<Arc<RocBlas>, String>,
    /// Made on the first vendor call, re-pointed at the caller's stream on every call.
    pub handle: Mutex<Option<rocblas::Handle>>,
}

impl RuntimeLauncher {
    pub fn function(&self, symbol: &str) -> Result<Arc<Function>> {
        let mut cache = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = cache.get(symbol) {
            return Ok(Arc::clone(f));
        }
        let f = Arc::new(self.module.function(symbol)?);
        cache.insert(symbol.to_string(), Arc::clone(&f));
        Ok(f)
    }

    unsafe fn launch(&self, symbol: &str, stream: &Stream, cfg: LaunchConfig, args: &mut runtime::LaunchArgs<'_>) -> Result<()> {
        self.function(symbol)?.launch_raw(stream.raw() as sys::hipStream_t, self.ordinal, cfg, args)
    }
}

impl HipLauncher for RuntimeLauncher {
    unsafe fn gemm(&self, stream: &Stream, kernel: &GemmKernel, cfg: LaunchConfig, args: &abi::GemmArgs) -> Result<()> {
        self.launch(kernel.symbol, stream, cfg, &mut args.args())
    }
    unsafe fn scale_reduce(&self, stream: &Stream, out: OutDtype, cfg: LaunchConfig, args: &abi::ScaleReduceArgs) -> Result<()> {
        self.launch(kernels::scale_reduce_symbol(out), stream, cfg, &mut args.args())
    }
    unsafe fn quant_tokens(&self, stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantTokensArgs) -> Result<()> {
        self.launch(quant_tokens_symbol(input), stream, cfg, &mut args.args())
    }
    unsafe fn quant_weight(&self, stream: &Stream, input: InputDtype, cfg: LaunchConfig, args: &abi::QuantWeightArgs) -> Result<()> {
        self.launch(quant_weight_symbol(input), stream, cfg, &mut args.args())
    }
    unsafe fn convert_to_fnuz(&self, stream: &Stream, cfg: LaunchConfig, args: &abi::ConvertFnuzArgs) -> Result<()> {
        self.launch(kernels::CONVERT_E4M3FN_TO_FNUZ, stream, cfg, &mut args.args())
    }
    unsafe fn vendor_gemm(&self, stream: &Stream, call: &BatchedGemm, weight: DevicePtr<u8>, act: DevicePtr<u8>, work: DevicePtr<f32>) -> Result<()> {
        let lib = self.vendor.as_ref().map_err(|why| Error::Unsupported { path: "rocm vendor".into(), reason: why.clone() })?;
        let mut slot = self.handle.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            // The caller's stream in the runtime's type, never dropped (it is not ours).
            let st = std::mem::ManuallyDrop::new(runtime::Stream::borrowed(stream.raw() as sys::hipStream_t, self.ordinal));
            *slot = Some(rocblas::Handle::new(Arc::clone(lib), &st)?);
        }
        let handle = slot.as_ref().expect("just made");
        handle.set_stream(stream.raw() as sys::hipStream_t)?;
        handle.gemm_f8_f32(call, weight, act, work)
    }
    fn vendor_name(&self) -> String {
        match &self.vendor {
            Ok(lib) => format!("rocBLAS {}", lib.version()),
            Err(_) => "rocBLAS (unavailable)".into(),
        }
    }
}
