//! Weights resident on the device, prepared once: fp8 [N, K] and one f32 scale per 128x128
//! block, in the device's fp8 flavour, plus the per-weight layouts the chosen kernels want
//! (cuBLASLt's padded scales). Built by the [`Context`](crate::Context)'s `prepare_weight*`
//! and `quantize_weight` methods.
#![warn(missing_docs)]

use crate::formats::Fp8Format;
use crate::memory::{DeviceBuffer, DeviceView};
use crate::types::DeviceId;

/// A weight resident on its device in the form the chosen kernels read (see the module doc).
pub struct PreparedWeight {
    pub(crate) n: usize,
    pub(crate) k: usize,
    pub(crate) block: (usize, usize),
    pub(crate) format: Fp8Format,
    pub(crate) q: DeviceBuffer<u8>,
    pub(crate) scales: DeviceBuffer<f32>,
    pub(crate) vendor_scales: Option<DeviceBuffer<f32>>,
}

impl std::fmt::Debug for PreparedWeight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PreparedWeight({} x {}, {:?} blocks, {:?}, on {})", self.n, self.k, self.block, self.format, self.device())
    }
}

impl PreparedWeight {
    /// Rows (output columns of the product).
    pub fn n(&self) -> usize {
        self.n
    }
    /// The reduction length.
    pub fn k(&self) -> usize {
        self.k
    }
    /// The scale block (block_n, block_k).
    pub fn block(&self) -> (usize, usize) {
        self.block
    }
    /// The fp8 flavour the bytes hold (the device's own).
    pub fn format(&self) -> Fp8Format {
        self.format
    }
    /// The device the weight lives on.
    pub fn device(&self) -> DeviceId {
        self.q.device()
    }
    /// The fp8 bytes, row-major [N, K].
    pub fn q(&self) -> DeviceView<'_, u8> {
        self.q.view()
    }
    /// The block scales, row-major [ceil(N/block_n), ceil(K/block_k)].
    pub fn scales(&self) -> DeviceView<'_, f32> {
        self.scales.view()
    }
    /// The vendor layout's scales' address, 0 where the backend needs none.
    pub(crate) fn vendor_scales_addr(&self) -> u64 {
        self.vendor_scales.as_ref().map_or(0, |b| b.addr())
    }
}
