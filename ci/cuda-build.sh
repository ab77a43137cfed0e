#!/usr/bin/env bash
# CUDA job on a CPU-only runner: compile the sm_90a kernels with nvcc from PyPI, build the crate
# and its test binaries with `--features cuda`, and run the CUDA suite's checks that need no
# GPU. The GPU tests are #[ignore]d and show as ignored here; ci/gpu-tests.sh runs them.
set -euo pipefail
cd "$(dirname "$0")/.."
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
start=$(date +%s)
cargo build --locked --features cuda
echo "cargo build --features cuda: $(( $(date +%s) - start )) s"
cargo test --locked --features cuda --no-run
# The checks that need no GPU (embedded kernels, shipped configs compiled, selection rules).
cargo test --locked --features cuda --test cuda
