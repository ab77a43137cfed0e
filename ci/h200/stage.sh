#!/usr/bin/env bash
# Run on the CPU machine (the H200 machine has no Rust toolchain): builds what the device
# scripts run and stages it in .device-bin/ (git-ignored), which travels with the working
# tree to the device machine:
#   cuda-default  the cuda test binary of the default build (what users get);
#   cuda-full     the same of the tuning build (--features cuda,tuning-full: every candidate tile);
#   blockfp8      the CLI of the default build (stripped);
#   device_api    the device-API test binary, cuda_decode_step its example (default build);
#   *.cubin       the default build's kernels, for SASS dumps (cuda/device_run.sh);
#   the scripts of ci/h200/ and cuda/device_run.sh.
#   libblockfp8_capi.so, wheels/  the C ABI library (cuda build) and pytest wheels, for
#                 python_package.sh (target `python`, also part of `all`).
#   configs-base/ with BASE_CONFIGS_REV=REV: the configs folder of commit REV, which race.sh
#                 then races beside the shipped files.
# Usage: [BASE_CONFIGS_REV=REV] bash ci/h200/stage.sh [default|full|python|all]   (default: all)
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
B=.device-bin
mkdir -p $B
test_binary() { bash ci/h200/test_binary.sh "$1" "${2:-cuda}"; }
if [ "$what" = full ] || [ "$what" = all ]; then
    strip -o $B/cuda-full "$(test_binary cuda,tuning-full)"
fi
if [ "$what" = default ] || [ "$what" = all ]; then
    strip -o $B/cuda-default "$(test_binary cuda)"
    strip -o $B/device_api "$(test_binary cuda device_api)"
    cargo build --release --features cuda --bin blockfp8 --example cuda_decode_step
    strip -o $B/blockfp8 target/release/blockfp8
    strip -o $B/cuda_decode_step target/release/examples/cuda_decode_step
    # The newest kernels are the default build's just made (the newest build folder may be
    # another feature set's, without kernels).
    cp "$(dirname "$(ls -t target/release/build/blockfp8-*/out/gemm_block_fp8_0_sm_90a.cubin | head -1)")"/*.cubin $B/
fi
if [ "$what" = python ] || [ "$what" = all ]; then
    cargo build --release -p blockfp8-capi --features cuda
    [ -f $B/blockfp8 ] || { cargo build --release --features cuda --bin blockfp8 && strip -o $B/blockfp8 target/release/blockfp8; }
    strip -o $B/libblockfp8_capi.so target/release/libblockfp8_capi.so
    mkdir -p $B/wheels && python3 -m pip download -q -d $B/wheels pytest
fi
# (A later `stage.sh python` keeps it; staging the default build without the variable drops it.)
if [ -n "${BASE_CONFIGS_REV:-}" ]; then
    rm -rf $B/configs-base && mkdir -p $B/configs-base
    git archive "$BASE_CONFIGS_REV" configs | tar -x -C $B/configs-base --strip-components=1
elif [ "$what" = default ] || [ "$what" = all ]; then
    rm -rf $B/configs-base
fi
cp ci/h200/*.sh ci/h200/*.py cuda/device_run.sh $B/
ls -l $B
