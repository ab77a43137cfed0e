//! The CPU backend: the reference every GPU backend is tested against, and the default on
//! machines without a GPU. Multi-threaded with rayon.

use crate::backend::{Backend, BackendKind, TimingOptions};
use crate::config::KernelConfig;
use crate::device::Device;
use crate::error::Result;
use crate::formats::Fp8Format;
use crate::gemm::{GemmPath, GemmProblem, GemmShape, Output};
use crate::quant::{QuantizedTokens, QuantizedWeight, TokenQuantOptions};

pub struct CpuBackend {
    device: Device,
}

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend { device: Device::cpu() }
    }
}

impl Default for CpuBackend {
    fn default() -> Self {
        Self::new()
    }
}

impl Backend for CpuBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Cpu
    }
    fn device(&self) -> &Device {
        &self.device
    }
    fn quantize_tokens(&self, x: &[f32], m: usize, k: usize, opts: &TokenQuantOptions) -> Result<QuantizedTokens> {
        crate::quant::quantize_per_token_group(x, m, k, opts)
    }
    fn quantize_weight(&self, w: &[f32], n: usize, k: usize, block: (usize, usize), format: Fp8Format) -> Result<QuantizedWeight> {
        crate::quant::quantize_weight_blocks(w, n, k, block, format)
    }
    fn supports(&self, shape: &GemmShape, path: &GemmPath) -> std::result::Result<(), String> {
        let _ = (shape, path);
        todo!("H1")
    }
    fn gemm(&self, p: &GemmProblem, path: &GemmPath) -> Result<Output> {
        let _ = (p, path);
        todo!("H1")
    }
    fn time_gemm(&self, p: &GemmProblem, path: &GemmPath, opts: &TimingOptions) -> Result<Vec<f64>> {
        let _ = (p, path, opts);
        todo!("H1")
    }
    fn candidate_configs(&self) -> Vec<KernelConfig> {
        todo!("H1")
    }
    fn default_config(&self) -> KernelConfig {
        todo!("H1")
    }
}
