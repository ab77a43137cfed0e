//! AMD backend (feature `rocm`): kernels from `hip/`, rocBLAS default path, via hip-runtime-sys.

pub mod emulator;
pub mod kernels;

use crate::device::Device;
use crate::error::{Error, Result};

pub struct HipBackend {}

impl HipBackend {
    pub fn new(ordinal: usize) -> Result<Self> {
        let _ = ordinal;
        Err(Error::BackendUnavailable { backend: "rocm", reason: "not implemented yet".into() })
    }
}

pub fn devices() -> Vec<Device> {
    Vec::new()
}

impl crate::backend::Backend for HipBackend {
    fn kind(&self) -> crate::backend::BackendKind { unimplemented!() }
    fn device(&self) -> &Device { unimplemented!() }
    fn quantize_tokens(&self, _: &[f32], _: usize, _: usize, _: &crate::quant::TokenQuantOptions) -> Result<crate::quant::QuantizedTokens> { unimplemented!() }
    fn quantize_weight(&self, _: &[f32], _: usize, _: usize, _: (usize, usize), _: crate::formats::Fp8Format) -> Result<crate::quant::QuantizedWeight> { unimplemented!() }
    fn supports(&self, _: &crate::gemm::GemmShape, _: &crate::gemm::GemmPath) -> std::result::Result<(), String> { unimplemented!() }
    fn gemm(&self, _: &crate::gemm::GemmProblem, _: &crate::gemm::GemmPath) -> Result<crate::gemm::Output> { unimplemented!() }
    fn time_gemm(&self, _: &crate::gemm::GemmProblem, _: &crate::gemm::GemmPath, _: &crate::backend::TimingOptions) -> Result<Vec<f64>> { unimplemented!() }
    fn candidate_configs(&self) -> Vec<crate::config::KernelConfig> { unimplemented!() }
    fn default_config(&self) -> crate::config::KernelConfig { unimplemented!() }
}
