#!/usr/bin/env bash
# GPU job on a machine with an AMD or NVIDIA GPU (self-hosted runner): the full test suite
# on the device, then the side-by-side benchmark. Usage: ci/gpu-tests.sh rocm|cuda
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:?usage: ci/gpu-tests.sh rocm|cuda}
cargo test --locked --release --features "$backend"
cargo run --locked --release --features "$backend" -- info
cargo run --locked --release --features "$backend" -- bench --backend "$backend"
