//! The kernel ABI of TEAM.md as the runtime side sees it: symbol names and what a GEMM
//! instantiation looks like. INTERIM: hipkern's `kernels.rs` (code objects embedded by
//! build.rs, the compiled GEMM instantiations) replaces the index functions below when it
//! lands in this branch; until then this build embeds no code object, and `HipBackend::new`
//! says so.

use crate::config::KernelConfig;
use crate::gemm::OutDtype;

pub const QUANT_PER_TOKEN_GROUP: &str = "quant_per_token_group";
pub const QUANT_WEIGHT_BLOCKS: &str = "quant_weight_blocks";
pub const CONVERT_E4M3FN_TO_FNUZ: &str = "convert_e4m3fn_to_fnuz";

/// `scale_reduce_<out>`.
pub fn scale_reduce_symbol(out: OutDtype) -> &'static str {
    match out {
        OutDtype::Bf16 => "scale_reduce_bf16",
        OutDtype::F16 => "scale_reduce_f16",
        OutDtype::F32 => "scale_reduce_f32",
    }
}

/// One compiled GEMM instantiation.
#[derive(Clone, Debug, PartialEq)]
pub struct GemmKernel {
    pub config: KernelConfig,
    pub out: OutDtype,
    pub symbol: String,
    pub threads: u32,
    pub block_m: u32,
    pub block_n: u32,
}

/// Code object for `arch`, as embedded by the build.
pub fn code_object(_arch: &str) -> Option<&'static [u8]> {
    None
}

/// Architectures this build embeds code objects for.
pub fn embedded_archs() -> Vec<&'static str> {
    Vec::new()
}

pub fn gemm_kernels() -> Vec<GemmKernel> {
    Vec::new()
}

pub fn find_gemm(cfg: &KernelConfig, out: OutDtype) -> Option<GemmKernel> {
    gemm_kernels().into_iter().find(|k| &k.config == cfg && k.out == out)
}

pub fn default_gemm_config() -> KernelConfig {
    KernelConfig::vllm_default((128, 128))
}
