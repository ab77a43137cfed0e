// GEMM instantiations: build_cuda.rs writes gemm_instances_<part>.inc into OUT_DIR (the
// configs the shipped files name, the default set, or the full tuning set) and compiles
// this file once per part with -DBLOCKFP8_GEMM_PART=<part>, so parts build in parallel.
#include "gemm_block_fp8.cuh"
#include "gemm_sm90_tma.cuh"

#define BLOCKFP8_STR2(x) #x
#define BLOCKFP8_STR(x) BLOCKFP8_STR2(x)
#include BLOCKFP8_STR(gemm_instances_ BLOCKFP8_GEMM_PART.inc)
