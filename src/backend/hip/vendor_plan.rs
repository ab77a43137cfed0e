//! Planning of the rocBLAS block-scaled path, with no GPU involved.
//!
//! rocBLAS FP8 has scalar alpha/beta only, so the path computes one unscaled fp32 product
//! per 128-wide K block and applies the scales itself:
//!
//! ```text
//! for each chunk of `rows` rows starting at m0 (fp32 workspace bounded in size):
//!   partial[kb][i][n] = sum_{k in K block kb} A[m0+i, k] * B[n, k]    (rocBLAS, batched over kb)
//!   C[m0+i, n] = sum_kb As[m0+i, kb] * Bs[n/128, kb] * partial[kb][i][n]  (scale_reduce kernel)
//! ```
//!
//! rocBLAS is column-major; the row-major `partial[kb]` ([rows, N], leading dim N) is the
//! column-major N x rows matrix `B · A_chunk^T`. So each call computes column-major
//! D (N x rows) = op(Aᵣ) · op(Bᵣ) with
//! - rocBLAS "A" := the weight, stored row-major [N, K] = column-major K x N (lda = K),
//!   `transpose`; batch kb starts 128 elements further along K (stride_a = 128);
//! - rocBLAS "B" := the activation chunk, row-major [rows, K] = column-major K x rows
//!   (ldb = K), `none`; stride_b = 128 likewise;
//! - D at workspace + kb * rows * N, ldd = N, stride_d = rows * N.
//!
//! Every batch must have the same k, so the full K blocks go in one strided-batched call
//! (k = 128) and a partial last block (K % 128 != 0) in a second call with batch 1 and
//! k = K % 128, whose operands and output start where batch `K / 128` would have. That
//! keeps the strides consistent and needs no zero-padded copies of A and B.

use crate::error::{Error, Result};
use crate::quant::ScaleLayout;

/// The K width of one scale block (the GPU paths support (128, 128) blocks only).
pub const K_BLOCK: usize = 128;
/// Weight rows per scale block.
pub const N_BLOCK: usize = 128;
/// Default bound on the fp32 workspace of per-K-block products.
pub const DEFAULT_WORKSPACE_BYTES: usize = 256 << 20;
/// Threads per workgroup of `scale_reduce_<out>` (hip/README.md ABI).
pub const REDUCE_THREADS: u32 = super::kernels::AUX_THREADS;

/// `rocblas_operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Op {
    None = 111,
    Transpose = 112,
}

/// Where one rocBLAS operand lives: element offset from its buffer's base, leading
/// dimension, and the stride between consecutive batches (elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub offset: usize,
    pub ld: i32,
    pub stride: i64,
}

/// One `rocblas_gemm_strided_batched_ex3` call (alpha = 1, beta = 0, C = D).
/// Operand "a" indexes the weight buffer, "b" the activation buffer, "d" the workspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchedGemm {
    pub trans_a: Op,
    pub trans_b: Op,
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub a: Operand,
    pub b: Operand,
    pub d: Operand,
    pub batch_count: i32,
}

/// Number of elements a column-major operand of `rows` x `cols` (as stored) spans.
fn span(op: &Operand, rows: i32, cols: i32, batches: i32) -> usize {
    if rows == 0 || cols == 0 || batches == 0 {
        return op.offset;
    }
    op.offset + (batches as usize - 1) * op.stride as usize + (cols as usize - 1) * op.ld as usize + rows as usize
}

impl BatchedGemm {
    /// Stored (rows, cols) of operand A: op(A) is m x k.
    fn a_stored(&self) -> (i32, i32) {
        match self.trans_a {
            Op::None => (self.m, self.k),
            Op::Transpose => (self.k, self.m),
        }
    }
    fn b_stored(&self) -> (i32, i32) {
        match self.trans_b {
            Op::None => (self.k, self.n),
            Op::Transpose => (self.n, self.k),
        }
    }
    /// One past the last element of each buffer the call reads or writes: (a, b, d).
    pub fn extents(&self) -> (usize, usize, usize) {
        let (ar, ac) = self.a_stored();
        let (br, bc) = self.b_stored();
        (span(&self.a, ar, ac, self.batch_count), span(&self.b, br, bc, self.batch_count), span(&self.d, self.m, self.n, self.batch_count))
    }
    /// rocBLAS's own argument rules (column-major leading dimensions cover the rows).
    pub fn check_leading_dims(&self) -> std::result::Result<(), String> {
        let (ar, _) = self.a_stored();
        let (br, _) = self.b_stored();
        if self.a.ld < ar.max(1) || self.b.ld < br.max(1) || self.d.ld < self.m.max(1) {
            return Err(format!("leading dimensions too small: {self:?}"));
        }
        Ok(())
    }
}

/// One `scale_reduce_<out>` launch (hip/README.md ABI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleReduce {
    pub m0: i32,
    pub rows: i32,
    pub n: i32,
    pub kb: i32,
    pub batch_stride: i64,
    pub as_stride_m: i32,
    pub as_stride_kb: i32,
    pub grid_x: u32,
}

/// The work for rows m0 .. m0 + rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkPlan {
    pub m0: usize,
    pub rows: usize,
    /// The full-K-block call, then the partial-block call, whichever exist.
    pub gemms: Vec<BatchedGemm>,
    pub reduce: ScaleReduce,
}

/// (as_stride_m, as_stride_kb) of activation scales: row-major [M, KB] or column-major
/// (M-major, `padded_m` rows per K block).
pub fn act_scale_strides(m: usize, k_blocks: usize, layout: ScaleLayout) -> (i32, i32) {
    let (sm, sk) = layout.strides(m, k_blocks);
    (sm as i32, sk as i32)
}

/// The whole vendor-path plan for one problem shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VendorPlan {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// ceil(K / 128): K blocks, batches per chunk.
    pub k_blocks: usize,
    /// floor(K / 128): blocks of the full-width call.
    pub full_blocks: usize,
    /// K % 128: width of the trailing partial block (0 if none).
    pub tail_k: usize,
    /// Rows per chunk (the last chunk may be shorter).
    pub chunk_rows: usize,
    /// fp32 elements of workspace needed: k_blocks * chunk_rows * N.
    pub workspace_elems: usize,
    pub as_strides: (i32, i32),
}

impl VendorPlan {
    /// Plans an M x N x K product with a workspace of at most `workspace_bytes` (at least one
    /// row is always planned, even when a single row's products exceed the budget).
    pub fn new(m: usize, n: usize, k: usize, layout: ScaleLayout, workspace_bytes: usize) -> Result<Self> {
        const OP: &str = "rocblas plan";
        if m == 0 || n == 0 || k == 0 {
            return Err(Error::shape(OP, format!("M, N and K must be >= 1, got M={m} N={n} K={k}")));
        }
        let limit = i32::MAX as usize;
        if n > limit || k > limit || m.checked_mul(n).is_none_or(|mn| mn > limit) {
            return Err(Error::shape(OP, format!("M={m} N={n} K={k} exceed rocBLAS's 32-bit sizes")));
        }
        let k_blocks = k.div_ceil(K_BLOCK);
        let row_bytes = k_blocks * n * 4;
        let budget_rows = workspace_bytes / row_bytes;
        let chunk_rows = if budget_rows >= m {
            m
        } else if budget_rows >= 32 {
            // Whole multiples of 32 keep rocBLAS on its efficient tiles.
            budget_rows / 32 * 32
        } else {
            budget_rows.max(1)
        };
        Ok(VendorPlan {
            m,
            n,
            k,
            k_blocks,
            full_blocks: k / K_BLOCK,
            tail_k: k % K_BLOCK,
            chunk_rows,
            workspace_elems: k_blocks * chunk_rows * n,
            as_strides: act_scale_strides(m, k_blocks, layout),
        })
    }

    pub fn chunk_count(&self) -> usize {
        self.m.div_ceil(self.chunk_rows)
    }

    /// The calls for chunk `index` (0-based); `None` past the last chunk.
    pub fn chunk(&self, index: usize) -> Option<ChunkPlan> {
        if index >= self.chunk_count() {
            return None;
        }
        let m0 = index * self.chunk_rows;
        let rows = self.chunk_rows.min(self.m - m0);
        let (n, k) = (self.n as i32, self.k as i32);
        let batch_stride = (rows * self.n) as i64;
        let call = |first_block: usize, width: usize, batches: usize| BatchedGemm {
            trans_a: Op::Transpose,
            trans_b: Op::None,
            m: n,
            n: rows as i32,
            k: width as i32,
            a: Operand { offset: first_block * K_BLOCK, ld: k, stride: K_BLOCK as i64 },
            b: Operand { offset: m0 * self.k + first_block * K_BLOCK, ld: k, stride: K_BLOCK as i64 },
            d: Operand { offset: first_block * rows * self.n, ld: n, stride: batch_stride },
            batch_count: batches as i32,
        };
        let mut gemms = Vec::with_capacity(2);
        if self.full_blocks > 0 {
            gemms.push(call(0, K_BLOCK, self.full_blocks));
        }
        if self.tail_k > 0 {
            gemms.push(call(self.full_blocks, self.tail_k, 1));
        }
        let reduce = ScaleReduce {
            m0: m0 as i32,
            rows: rows as i32,
            n,
            kb: self.k_blocks as i32,
            batch_stride,
            as_stride_m: self.as_strides.0,
            as_stride_kb: self.as_strides.1,
            grid_x: (rows * self.n).div_ceil(REDUCE_THREADS as usize) as u32,
        };
        Some(ChunkPlan { m0, rows, gemms, reduce })
    }

    pub fn chunks(&self) -> impl Iterator<Item = ChunkPlan> + '_ {
        (0..self.chunk_count()).filter_map(|i| self.chunk(i))
    }

    /// Checks every call stays inside the weight (N*K), activation (M*K) and workspace
    /// buffers; run before handing device pointers to rocBLAS.
    pub fn check_bounds(&self) -> std::result::Result<(), String> {
        for chunk in self.chunks() {
            for g in &chunk.gemms {
                g.check_leading_dims()?;
                let (a, b, d) = g.extents();
                if a > self.n * self.k || b > self.m * self.k || d > self.workspace_elems {
                    return Err(format!("chunk at row {} reaches past a buffer: weight {a}/{}, activations {b}/{}, workspace {d}/{}", chunk.m0, self.n * self.k, self.m * self.k, self.workspace_elems));
                }
            }
            let r = &chunk.reduce;
            if r.kb as usize * r.batch_stride as usize > self.workspace_elems {
                return Err(format!("reduce at row {} reads past the workspace", chunk.m0));
            }
        }
        Ok(())
    }
}

/// CPU model of the planned calls: what rocBLAS and `scale_reduce` compute, by their
/// documented semantics, in f64. Used to prove the mapping without a GPU.
pub mod simulate {
    use super::*;

    /// Column-major strided-batched D = op(A) op(B) (alpha 1, beta 0) on element buffers.
    pub fn strided_batched_gemm(g: &BatchedGemm, a: &[f64], b: &[f64], d: &mut [f64]) -> std::result::Result<(), String> {
        g.check_leading_dims()?;
        let (ea, eb, ed) = g.extents();
        if ea > a.len() || eb > b.len() || ed > d.len() {
            return Err(format!("out of bounds: a {ea}/{}, b {eb}/{}, d {ed}/{}", a.len(), b.len(), d.len()));
        }
        let at = |batch: usize, i: usize, p: usize| {
            let base = g.a.offset + batch * g.a.stride as usize;
            match g.trans_a {
                Op::None => a[base + p * g.a.ld as usize + i],
                Op::Transpose => a[base + i * g.a.ld as usize + p],
            }
        };
        let bt = |batch: usize, p: usize, j: usize| {
            let base = g.b.offset + batch * g.b.stride as usize;
            match g.trans_b {
                Op::None => b[base + j * g.b.ld as usize + p],
                Op::Transpose => b[base + p * g.b.ld as usize + j],
            }
        };
        for batch in 0..g.batch_count as usize {
            for j in 0..g.n as usize {
                for i in 0..g.m as usize {
                    let s: f64 = (0..g.k as usize).map(|p| at(batch, i, p) * bt(batch, p, j)).sum();
                    d[g.d.offset + batch * g.d.stride as usize + j * g.d.ld as usize + i] = s;
                }
            }
        }
        Ok(())
    }

    /// `scale_reduce` as the ABI states it; `c` is row-major [M, N].
    pub fn scale_reduce(r: &ScaleReduce, partial: &[f64], a_scales: &[f32], b_scales: &[f32], c: &mut [f64]) {
        let (n, kb) = (r.n as usize, r.kb as usize);
        for i in 0..r.rows as usize {
            let m = r.m0 as usize + i;
            for col in 0..n {
                let mut acc = 0.0;
                for b in 0..kb {
                    let a_s = a_scales[m * r.as_stride_m as usize + b * r.as_stride_kb as usize] as f64;
                    let b_s = b_scales[(col / N_BLOCK) * kb + b] as f64;
                    acc += a_s * b_s * partial[b * r.batch_stride as usize + i * n + col];
                }
                c[m * n + col] = acc;
            }
        }
    }

    /// Runs a whole plan: `a` = decoded activations [M, K], `b` = decoded weights [N, K].
    pub fn run(plan: &VendorPlan, a: &[f64], a_scales: &[f32], b: &[f64], b_scales: &[f32]) -> std::result::Result<Vec<f64>, String> {
        let mut c = vec![f64::NAN; plan.m * plan.n];
        let mut work = vec![f64::NAN; plan.workspace_elems];
        for chunk in plan.chunks() {
            work.iter_mut().for_each(|w| *w = f64::NAN);
            for g in &chunk.gemms {
                strided_batched_gemm(g, b, a, &mut work)?;
            }
            scale_reduce(&chunk.reduce, &work, a_scales, b_scales, &mut c);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunking_respects_the_budget() {
        // K = 7168 -> 56 blocks; N = 600 -> 134400 bytes per row; 256 MiB -> 1997 rows,
        // rounded down to 1984 (62 x 32).
        let p = VendorPlan::new(4096, 600, 7168, ScaleLayout::RowMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
        assert_eq!((p.k_blocks, p.full_blocks, p.tail_k), (56, 56, 0));
        assert_eq!(p.chunk_rows, 1984);
        assert!(p.workspace_elems * 4 <= DEFAULT_WORKSPACE_BYTES);
        assert_eq!(p.chunk_count(), 3);
        let last = p.chunk(2).unwrap();
        assert!(p.chunk(3).is_none());
        assert_eq!((last.m0, last.rows), (3968, 128));
        assert_eq!(last.gemms.len(), 1);
        assert!(p.check_bounds().is_ok());
        // A small problem fits in one chunk.
        let small = VendorPlan::new(17, 129, 200, ScaleLayout::ColumnMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
        assert_eq!((small.chunk_rows, small.chunk_count(), small.tail_k), (17, 1, 72));
        assert_eq!(small.as_strides, (1, 20));
    }

    #[test]
    fn one_row_minimum_when_a_row_exceeds_the_budget() {
        let p = VendorPlan::new(3, 1024, 1024, ScaleLayout::RowMajor, 1000).unwrap();
        assert_eq!(p.chunk_rows, 1);
        assert_eq!(p.chunk_count(), 3);
        assert!(p.check_bounds().is_ok());
    }

    #[test]
    fn call_layout_for_a_ragged_k() {
        let p = VendorPlan::new(5, 256, 300, ScaleLayout::RowMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
        let c = p.chunk(0).unwrap();
        assert_eq!(c.gemms.len(), 2);
        let (full, tail) = (c.gemms[0], c.gemms[1]);
        assert_eq!((full.m, full.n, full.k, full.batch_count), (256, 5, 128, 2));
        assert_eq!((full.trans_a, full.trans_b), (Op::Transpose, Op::None));
        assert_eq!((full.a.ld, full.b.ld, full.d.ld), (300, 300, 256));
        assert_eq!((full.a.stride, full.b.stride, full.d.stride), (128, 128, 5 * 256));
        assert_eq!((tail.k, tail.batch_count), (44, 1));
        assert_eq!((tail.a.offset, tail.b.offset, tail.d.offset), (256, 256, 2 * 5 * 256));
        assert_eq!(c.reduce.grid_x, (5 * 256u32).div_ceil(256));
        // K smaller than one block: only the tail call.
        let tiny = VendorPlan::new(2, 3, 100, ScaleLayout::RowMajor, DEFAULT_WORKSPACE_BYTES).unwrap();
        assert_eq!(tiny.chunk(0).unwrap().gemms.len(), 1);
        assert_eq!(tiny.chunk(0).unwrap().gemms[0].k, 100);
    }

    #[test]
    fn bad_sizes_are_errors() {
        assert!(VendorPlan::new(0, 1, 1, ScaleLayout::RowMajor, 1 << 20).is_err());
        assert!(VendorPlan::new(1 << 20, 1 << 12, 128, ScaleLayout::RowMajor, 1 << 20).is_err());
    }
}
