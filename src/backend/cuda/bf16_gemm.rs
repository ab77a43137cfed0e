//! The benchmark's baseline without fp8: a dense bf16 x bf16 -> bf16 cuBLASLt GEMM (fp32
//! compute) of the dequantized inputs. Dequantization happens on the host; only the GEMM is
//! timed, over rotating input copies like the fp8 paths.
//!
//! cudarc's safe `Matmul<bf16>` needs its `f16` feature (not enabled here), re-plans (layouts
//! plus the heuristic query) on every call, which would put host latency between the timed
//! launches, and panics on some failures; so this uses the `result` layer and plans once.
//!
//! Row-major C[M, N] = A[M, K] B[N, K]^T is column-major C^T[N, M] = B A^T: cuBLAS "A" := B
//! (K x N column-major, transposed), "B" := A (K x M column-major), D = C^T with ld N.

use std::ffi::c_void;
use std::mem::size_of;

use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use cudarc::driver::{result, CudaSlice};
use half::bf16;
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;

use super::runtime::{ptr, DriverResultExt};
use super::cublaslt::{self, lt_err, LtHandle};
use super::{gemm_launch, CudaBackend};
use crate::backend::TimingOptions;
use crate::error::{Error, Result};
use crate::gemm::{GemmProblem, Output};

const PATH: &str = "cuda bf16 cuBLASLt";
/// Hopper's recommended cuBLASLt workspace (as for the fp8 path).
const WORKSPACE_BYTES: usize = cublaslt::WORKSPACE_BYTES;

fn unsupported(reason: impl Into<String>) -> Error {
    Error::Unsupported { path: PATH.into(), reason: reason.into() }
}

/// The dequantized inputs rounded to bf16, row-major: A[m, k] * As[m, k / block_k] as
/// [M, K] and B[n, k] * Bs[n / block_n, k / block_k] as [N, K]. Each product is formed in f32
/// and rounded to nearest even, as PyTorch's `(x.float() * s).bfloat16()` does. `p` must be
/// validated.
pub fn dequantize_bf16(p: &GemmProblem) -> (Vec<bf16>, Vec<bf16>) {
    let s = p.shape;
    let (bn, bk) = s.block;
    let kb = s.k_blocks();
    let lut = s.format.decode_table();
    let mut a = vec![bf16::ZERO; s.m * s.k];
    a.par_chunks_mut(s.k).enumerate().for_each(|(m, row)| {
        for (k, v) in row.iter_mut().enumerate() {
            *v = bf16::from_f32(lut[p.a[m * s.k + k] as usize] * p.a_scale(m, k / bk));
        }
    });
    let mut b = vec![bf16::ZERO; s.n * s.k];
    b.par_chunks_mut(s.k).enumerate().for_each(|(n, row)| {
        let scales = &p.b_scales[(n / bn) * kb..(n / bn + 1) * kb];
        for (k, v) in row.iter_mut().enumerate() {
            *v = bf16::from_f32(lut[p.b[n * s.k + k] as usize] * scales[k / bk]);
        }
    });
    (a, b)
}

/// Descriptors and the heuristic's algorithm for one (M, N, K), destroyed on drop.
struct Plan {
    desc: sys::cublasLtMatmulDesc_t,
    layouts: Vec<sys::cublasLtMatrixLayout_t>,
    algo: Option<sys::cublasLtMatmulAlgo_t>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: each descriptor was created once by this plan.
        unsafe {
            for l in self.layouts.drain(..) {
                let _ = lt::destroy_matrix_layout(l);
            }
            let _ = lt::destroy_matmul_desc(self.desc);
        }
    }
}

impl Plan {
    /// TN bf16 GEMM D[N, M] = B[K, N]^T A[K, M] (column-major), fp32 compute and scaling.
    /// No algorithm for the shape is `Error::Unsupported`.
    fn new(h: &LtHandle, m: usize, n: usize, k: usize) -> Result<Self> {
        use sys::cublasLtMatmulDescAttributes_t as A;
        let desc = lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType::CUDA_R_32F).map_err(|e| lt_err("cublasLtMatmulDescCreate", e))?;
        let mut plan = Plan { desc, layouts: Vec::with_capacity(3), algo: None };
        let t = sys::cudaDataType::CUDA_R_16BF;
        for (rows, cols, ld) in [(k, n, k), (k, m, k), (n, m, n)] {
            let l = lt::create_matrix_layout(t, rows as u64, cols as u64, ld as i64).map_err(|e| lt_err("cublasLtMatrixLayoutCreate", e))?;
            plan.layouts.push(l);
        }
        let (a, b, d) = (plan.layouts[0], plan.layouts[1], plan.layouts[2]);
        // SAFETY: attribute values have the types cuBLASLt documents (cublasOperation_t is an
        // int: 1 = CUBLAS_OP_T, 0 = CUBLAS_OP_N; the workspace limit is a size_t).
        unsafe {
            for (attr, op, call) in [(A::CUBLASLT_MATMUL_DESC_TRANSA, 1i32, "cublasLtMatmulDescSetAttribute(TRANSA)"), (A::CUBLASLT_MATMUL_DESC_TRANSB, 0i32, "cublasLtMatmulDescSetAttribute(TRANSB)")] {
                lt::set_matmul_desc_attribute(desc, attr, &op as *const i32 as *const c_void, size_of::<i32>()).map_err(|e| lt_err(call, e))?;
            }
            plan.algo = Some(match cublaslt::best_algo(h, desc, a, b, d) {
                Ok(algo) => algo,
                Err((_, lt::CublasError(sys::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED))) => return Err(unsupported(format!("cuBLASLt has no bf16 algorithm for M={m} N={n} K={k}"))),
                Err((call, e)) => return Err(lt_err(call, e)),
            });
        }
        Ok(plan)
    }

    /// Enqueues D = B^T A on `stream`.
    ///
    /// # Safety
    /// `a` ([M, K] bf16), `b` ([N, K] bf16), `c` ([M, N] bf16) and `workspace`
    /// (WORKSPACE_BYTES) address live device buffers of the plan's sizes.
    unsafe fn run(&self, h: &LtHandle, a: u64, b: u64, c: u64, workspace: u64, stream: sys::cudaStream_t) -> Result<()> {
        let algo = self.algo.as_ref().ok_or_else(|| unsupported("no algorithm planned"))?;
        let l = &self.layouts;
        cublaslt::matmul(h, self.desc, algo, (b, l[0]), (a, l[1]), (c, l[2]), workspace, stream)
    }
}

/// One rotating input set on the device (bf16 bit patterns as u16: cudarc knows no bf16
/// without its `f16` feature).
struct Set {
    a: CudaSlice<u16>,
    b: CudaSlice<u16>,
    c: CudaSlice<u16>,
}

/// Times the bf16 GEMM of `p`'s dequantized inputs (see the module docs): one checked run with
/// C poisoned first (its output is returned), then warm-up and `t.repeats` passes over input
/// copies totalling at least `t.rotate_bytes`. `p` must be validated.
pub(crate) fn time(be: &CudaBackend, p: &GemmProblem, t: &TimingOptions) -> Result<(Vec<f64>, Output)> {
    match cublaslt::library_version() {
        Err(why) => return Err(unsupported(why)),
        Ok(v) if v < 110000 => return Err(unsupported(format!("cuBLASLt {v} predates CUDA 11 (no bf16 GEMM)"))),
        Ok(_) => {}
    }
    let s = p.shape;
    let (m, n, k) = (s.m, s.n, s.k);
    let gpu = &be.gpu;
    gpu.ctx.bind_to_thread().dev("cuCtxSetCurrent")?;
    // A handle of this path's own: the fp8 path's may be absent on devices it cannot serve,
    // while bf16 runs on any tensor-core GPU.
    let handle = LtHandle::new()?;
    let plan = Plan::new(&handle, m, n, k)?;
    let (a_host, b_host) = dequantize_bf16(p);
    let st = &gpu.stream;
    let first = Set { a: gpu.upload(a_host.reinterpret_cast())?, b: gpu.upload(b_host.reinterpret_cast())?, c: gpu.zeros::<u16>(m * n)? };
    drop((a_host, b_host));
    let workspace = gpu.zeros::<u8>(WORKSPACE_BYTES)?;
    let ws = ptr(&workspace, st);
    let run = |set: &Set| {
        // SAFETY: the set's buffers hold [M, K], [N, K] and [M, N] bf16; workspace of WORKSPACE_BYTES.
        unsafe { plan.run(&handle, ptr(&set.a, st), ptr(&set.b, st), ptr(&set.c, st), ws, st.cu_stream() as _) }
    };

    // Checked run: 0xFFFF is a bf16 NaN, so an element the GEMM did not write shows.
    // SAFETY: C is a live allocation of M*N bf16.
    unsafe { result::memset_d8_async(ptr(&first.c, st), 0xFF, m * n * 2, st.cu_stream()) }.dev("cuMemsetD8Async")?;
    run(&first)?;
    gpu.sync()?;
    let out = Output::Bf16(gpu.download(&first.c)?.into_iter().map(bf16::from_bits).collect());

    let set_bytes = 2 * (m * k + n * k + m * n);
    let copies = t.copies(set_bytes, 32);
    let mut sets = vec![first];
    for _ in 1..copies {
        let d = &sets[0];
        let copy = Set { a: st.clone_dtod(&d.a).dev("cuMemcpyDtoD")?, b: st.clone_dtod(&d.b).dev("cuMemcpyDtoD")?, c: gpu.zeros::<u16>(m * n)? };
        sets.push(copy);
    }
    let times = gemm_launch::time_rotating(gpu, copies, t, |i| run(&sets[i]))?;
    Ok((times, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::Fp8Format;
    use crate::gemm::{ActScales, GemmShape, OutDtype};
    use crate::quant::ScaleLayout;

    /// Every element equals decode(byte) * its block's scale rounded to bf16, for both
    /// activation layouts and ragged M, N, K (partial scale blocks).
    #[test]
    fn dequantization_applies_the_right_scale_to_every_element() {
        let (m, n, k) = (5, 130, 300);
        let f = Fp8Format::E4m3fn;
        let shape = GemmShape { m, n, k, block: (128, 128), format: f, out_dtype: OutDtype::Bf16 };
        let a: Vec<u8> = (0..m * k).map(|i| (i * 37 % 251) as u8 & 0xEF).collect();
        let b: Vec<u8> = (0..n * k).map(|i| (i * 53 % 241) as u8 & 0xEF).collect();
        let kb = k.div_ceil(128);
        let b_scales: Vec<f32> = (0..n.div_ceil(128) * kb).map(|i| 0.01 + i as f32 * 0.37).collect();
        for layout in [ScaleLayout::RowMajor, ScaleLayout::ColumnMajor] {
            let a_scales: Vec<f32> = (0..layout.scale_count(m, kb)).map(|i| 0.003 * (1 + i) as f32).collect();
            let p = GemmProblem { shape, a: &a, a_scales: ActScales { data: &a_scales, layout }, b: &b, b_scales: &b_scales };
            p.validate().unwrap();
            let (sm, sk) = layout.strides(m, kb);
            let (da, db) = dequantize_bf16(&p);
            for r in 0..m {
                for c in 0..k {
                    let want = bf16::from_f32(f.decode(a[r * k + c]) * a_scales[r * sm + (c / 128) * sk]);
                    assert_eq!(da[r * k + c].to_bits(), want.to_bits(), "A[{r},{c}] {layout:?}");
                }
            }
            for r in 0..n {
                for c in 0..k {
                    let want = bf16::from_f32(f.decode(b[r * k + c]) * b_scales[(r / 128) * kb + c / 128]);
                    assert_eq!(db[r * k + c].to_bits(), want.to_bits(), "B[{r},{c}]");
                }
            }
        }
    }
}
