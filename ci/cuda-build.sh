#!/usr/bin/env bash
# CUDA job on a CPU-only runner: compile the sm_90a kernels with nvcc from PyPI and build the
# crate and its test binaries with `--features cuda`; GPU tests skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
start=$(date +%s)
cargo build --locked --features cuda
echo "cargo build --features cuda: $(( $(date +%s) - start )) s"
cargo test --locked --features cuda --no-run
