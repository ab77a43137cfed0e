//! The TMA GEMM kernel's `as_load` argument (`bfp8::AsLoad` in cuda/gemm_sm90_tma.cuh) as
//! Rust constants: the launcher builds the argument from them (src/backend/cuda/kernels.rs),
//! and the build checks each against the header by a static_assert in the kernel sources it
//! generates (cuda/build_cuda.rs), so that a change on one side alone stops the build.

/// Activation scales by 4-byte cp.async from the scale warp (any strides).
pub const AS_CP_ASYNC: i32 = 0;
/// Row-major activation scales by TMA.
pub const AS_TMA_ROWS: i32 = 1;
/// Column-major activation scales by TMA.
pub const AS_TMA_COLS: i32 = 2;
/// With a slab: the tile's weight scales by one bulk copy.
pub const AS_BS_BULK: i32 = 4;
/// With a slab: the slab box's K blocks, from this bit up.
pub const AS_SLAB_SHIFT: u32 = 8;
/// K blocks of the one-consumer tiles' activation-scale slab at most (`TmaTile::SLAB_KB`).
pub const SCALE_SLAB_K_BLOCKS: usize = 64;
/// Rows of the TMA GEMM's C store box (`bfp8::C_BOX_ROWS`): a consumer warp's 16 rows.
pub const C_BOX_ROWS: u32 = 16;
/// Rows of the box a store-warp tile's last C goes out in (`bfp8::C_LAST_BOX_ROWS`): the tile's
/// 128 rows.
pub const C_LAST_BOX_ROWS: u32 = 128;
