#!/usr/bin/env bash
# CUDA job on a CPU-only runner: compile the sm_90a kernels with nvcc from PyPI, build the crate
# and its test binaries with `--features cuda`, and run the CUDA suite (GPU tests skip without
# a GPU and say why).
set -euo pipefail
cd "$(dirname "$0")/.."
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
start=$(date +%s)
cargo build --locked --features cuda
echo "cargo build --features cuda: $(( $(date +%s) - start )) s"
cargo test --locked --features cuda --no-run
# The CUDA suite runs too: without a GPU its device tests print why they skip, and the
# checks that need none (embedded kernels, shipped configs compiled, selection rules) run.
cargo test --locked --features cuda --test cuda
