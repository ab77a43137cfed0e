#!/usr/bin/env bash
# Lint job: clippy and rustdoc with warnings as errors, over the crate with both GPU features
# (every backend's code at once) and over the C ABI crate. Run after ci/cuda-build.sh and
# ci/rocm-build.sh, which install nvcc and the HIP toolchain the build script needs.
set -euo pipefail
cd "$(dirname "$0")/.."
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
cargo clippy --version > /dev/null 2>&1 || rustup component add clippy
start=$(date +%s)
cargo clippy --locked --workspace --all-targets --features cuda,rocm -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --locked --workspace --no-deps --features cuda,rocm
echo "lint: $(( $(date +%s) - start )) s"
