#!/usr/bin/env bash
# ROCm job on a CPU-only runner: build the HIP kernels for gfx942 and gfx950, check the
# resource reports, disassemble, and run the kernels under the wavefront/MFMA emulation.
# This is the README's test command, `cargo test --features rocm`, with Debian's HIP
# library standing in for ROCm (HIP_PATH=/usr).
set -euo pipefail
cd "$(dirname "$0")/.."
bash ci/install-rocm-toolchain.sh
export HIP_PATH=${HIP_PATH:-/usr}
cargo test --features rocm
