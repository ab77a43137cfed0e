//! cuBLASLt block-scaled FP8 (CUDA 12.9+, compute capability 9.0): 1x128 activation scales
//! (VEC128_32F) times 128x128 weight scales (BLK128x128_32F).
//!
//! cuBLASLt is column-major, so the row-major C[M, N] = X[M, K] W[N, K]^T is computed as
//! C^T = W * X^T with op TN: cuBLAS "A" := W (K x N column-major, transposed, 128x128 block
//! scales, K-major rows of round_up(L, 4)), "B" := X (K x Mp column-major, M-major VEC128
//! scales with Mp = round_up(M, 4) rows, since M must be a multiple of 4), D = C^T (N x Mp).

use std::ffi::c_void;
use std::mem::size_of;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;

use crate::error::{Error, Result};
use crate::gemm::OutDtype;

/// First cuBLASLt with block-scaled FP8.
pub const MIN_VERSION: usize = 120900;
pub const WORKSPACE_BYTES: usize = 32 << 20;

pub(crate) fn lt_err(call: &str, e: lt::CublasError) -> Error {
    Error::Device { backend: "cuda", call: call.to_string(), reason: format!("{:?}", e.0) }
}

/// Whether libcublasLt can be loaded, and its version.
pub fn library_version() -> std::result::Result<usize, String> {
    // SAFETY: dlopen probe, then a pure query.
    unsafe {
        if !sys::is_culib_present() {
            return Err("libcublasLt could not be loaded".into());
        }
        Ok(sys::cublasLtGetVersion())
    }
}

pub struct LtHandle(pub(crate) sys::cublasLtHandle_t);
unsafe impl Send for LtHandle {}
unsafe impl Sync for LtHandle {}
impl LtHandle {
    pub fn new() -> Result<Self> {
        lt::create_handle().map(LtHandle).map_err(|e| lt_err("cublasLtCreate", e))
    }
}
impl Drop for LtHandle {
    fn drop(&mut self) {
        // SAFETY: created by cublasLtCreate, destroyed once.
        let _ = unsafe { lt::destroy_handle(self.0) };
    }
}

/// Descriptors and the chosen algorithm for one (Mp, N, K, out) problem.
pub struct LtPlan {
    desc: sys::cublasLtMatmulDesc_t,
    a: sys::cublasLtMatrixLayout_t,
    b: sys::cublasLtMatrixLayout_t,
    d: sys::cublasLtMatrixLayout_t,
    algo: sys::cublasLtMatmulAlgo_t,
}
unsafe impl Send for LtPlan {}

impl Drop for LtPlan {
    fn drop(&mut self) {
        // SAFETY: each descriptor was created once by this plan.
        unsafe {
            let _ = lt::destroy_matrix_layout(self.a);
            let _ = lt::destroy_matrix_layout(self.b);
            let _ = lt::destroy_matrix_layout(self.d);
            let _ = lt::destroy_matmul_desc(self.desc);
        }
    }
}

fn out_type(out: OutDtype) -> sys::cudaDataType {
    match out {
        OutDtype::Bf16 => sys::cudaDataType::CUDA_R_16BF,
        OutDtype::F16 => sys::cudaDataType::CUDA_R_16F,
        OutDtype::F32 => sys::cudaDataType::CUDA_R_32F,
    }
}

unsafe fn set_desc<T>(desc: sys::cublasLtMatmulDesc_t, attr: sys::cublasLtMatmulDescAttributes_t, v: &T) -> std::result::Result<(), lt::CublasError> {
    lt::set_matmul_desc_attribute(desc, attr, v as *const T as *const c_void, size_of::<T>())
}

impl LtPlan {
    /// Builds descriptors and asks the heuristic for an algorithm; NOT_SUPPORTED means
    /// cuBLASLt cannot run this shape.
    pub fn new(h: &LtHandle, mp: usize, n: usize, k: usize, out: OutDtype) -> Result<Self> {
        use sys::cublasLtMatmulDescAttributes_t as A;
        let e = |call: &'static str| move |err| lt_err(call, err);
        let desc = lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType::CUDA_R_32F).map_err(e("cublasLtMatmulDescCreate"))?;
        let fp8 = sys::cudaDataType::CUDA_R_8F_E4M3;
        let a = lt::create_matrix_layout(fp8, k as u64, n as u64, k as i64);
        let b = lt::create_matrix_layout(fp8, k as u64, mp as u64, k as i64);
        let d = lt::create_matrix_layout(out_type(out), n as u64, mp as u64, n as i64);
        let (a, b, d) = match (a, b, d) {
            (Ok(a), Ok(b), Ok(d)) => (a, b, d),
            (a, b, d) => {
                // SAFETY: destroy whatever was created.
                unsafe {
                    let _ = lt::destroy_matmul_desc(desc);
                    for l in [a, b, d].into_iter().flatten() {
                        let _ = lt::destroy_matrix_layout(l);
                    }
                }
                return Err(Error::Device { backend: "cuda", call: "cublasLtMatrixLayoutCreate".into(), reason: "failed".into() });
            }
        };
        let mut plan = LtPlan { desc, a, b, d, algo: unsafe { std::mem::zeroed() } };
        // SAFETY: attribute values have the types cuBLASLt documents for them (cublasOperation_t
        // is an int: 1 = CUBLAS_OP_T, 0 = CUBLAS_OP_N).
        unsafe {
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_TRANSA, &1i32).map_err(e("cublasLtMatmulDescSetAttribute(TRANSA)"))?;
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_TRANSB, &0i32).map_err(e("cublasLtMatmulDescSetAttribute(TRANSB)"))?;
            let blk = sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F as i32;
            let vec = sys::cublasLtMatmulMatrixScale_t::CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F as i32;
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &blk).map_err(e("cublasLtMatmulDescSetAttribute(A_SCALE_MODE)"))?;
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &vec).map_err(e("cublasLtMatmulDescSetAttribute(B_SCALE_MODE)"))?;
            // The heuristic wants scale pointers set; any 16-byte aligned placeholder works.
            let placeholder: u64 = 256;
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &placeholder).map_err(e("cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)"))?;
            set_desc(desc, A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &placeholder).map_err(e("cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)"))?;

            plan.algo = best_algo(h, desc, a, b, d).map_err(|(call, err)| lt_err(call, err))?;
        }
        Ok(plan)
    }

    /// Enqueues D = W * X^T on `stream`.
    ///
    /// # Safety
    /// Pointers address live device buffers of the plan's sizes (w: N*K, x: Mp*K bytes,
    /// w_scales: ceil(N/128) * round_up(L, 4) floats, x_scales: L * Mp floats, d: N*Mp
    /// elements, workspace: WORKSPACE_BYTES), scale pointers 16-byte aligned.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run(&self, h: &LtHandle, w: u64, w_scales: u64, x: u64, x_scales: u64, d: u64, workspace: u64, stream: sys::cudaStream_t) -> Result<()> {
        use sys::cublasLtMatmulDescAttributes_t as A;
        set_desc(self.desc, A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scales).map_err(|e| lt_err("cublasLtMatmulDescSetAttribute(A_SCALE_POINTER)", e))?;
        set_desc(self.desc, A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &x_scales).map_err(|e| lt_err("cublasLtMatmulDescSetAttribute(B_SCALE_POINTER)", e))?;
        matmul(h, self.desc, &self.algo, (w, self.a), (x, self.b), (d, self.d), workspace, stream)
    }
}

/// D = op(A) op(B) (alpha 1, beta 0, C aliased to D) for device pointers with their layouts.
///
/// # Safety
/// Live cuBLASLt objects; the pointers address device buffers matching their layouts;
/// `workspace` holds WORKSPACE_BYTES.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn matmul(
    h: &LtHandle,
    desc: sys::cublasLtMatmulDesc_t,
    algo: &sys::cublasLtMatmulAlgo_t,
    a: (u64, sys::cublasLtMatrixLayout_t),
    b: (u64, sys::cublasLtMatrixLayout_t),
    d: (u64, sys::cublasLtMatrixLayout_t),
    workspace: u64,
    stream: sys::cudaStream_t,
) -> Result<()> {
    let (alpha, beta) = (1.0f32, 0.0f32);
    lt::matmul(
        h.0,
        desc,
        &alpha as *const f32 as *const c_void,
        &beta as *const f32 as *const c_void,
        a.0 as *const c_void,
        a.1,
        b.0 as *const c_void,
        b.1,
        d.0 as *const c_void,
        d.1,
        d.0 as *mut c_void,
        d.1,
        algo,
        workspace as *mut c_void,
        WORKSPACE_BYTES,
        stream,
    )
    .map_err(|e| lt_err("cublasLtMatmul", e))
}

/// The heuristic's first algorithm for `desc` with layouts A, B and C = D, within the
/// WORKSPACE_BYTES workspace; on failure, the call that failed and cuBLASLt's status.
///
/// # Safety
/// `h`, `desc` and the layouts are live cuBLASLt objects.
pub(crate) unsafe fn best_algo(
    h: &LtHandle,
    desc: sys::cublasLtMatmulDesc_t,
    a: sys::cublasLtMatrixLayout_t,
    b: sys::cublasLtMatrixLayout_t,
    d: sys::cublasLtMatrixLayout_t,
) -> std::result::Result<sys::cublasLtMatmulAlgo_t, (&'static str, lt::CublasError)> {
    let pref = lt::create_matmul_pref().map_err(|e| ("cublasLtMatmulPreferenceCreate", e))?;
    let ws = WORKSPACE_BYTES;
    let r = lt::set_matmul_pref_attribute(
        pref,
        sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
        &ws as *const usize as *const c_void,
        size_of::<usize>(),
    )
    .map_err(|e| ("cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", e))
    .and_then(|_| lt::get_matmul_algo_heuristic(h.0, desc, a, b, d, d, pref).map_err(|e| ("cublasLtMatmulAlgoGetHeuristic", e)));
    let _ = lt::destroy_matmul_pref(pref);
    r.map(|h| h.algo)
}

/// Weight scales [NB, L] row-major -> rows of round_up(L, 4) (zero padded), as cuBLASLt reads.
pub fn pad_weight_scales(bs: &[f32], nb: usize, l: usize) -> Vec<f32> {
    let l4 = l.div_ceil(4) * 4;
    let mut out = vec![0.0f32; nb * l4];
    for r in 0..nb {
        out[r * l4..r * l4 + l].copy_from_slice(&bs[r * l..r * l + l]);
    }
    out
}
