#!/usr/bin/env bash
# GPU job on a machine with an AMD or NVIDIA GPU (self-hosted runner): the full test suite
# with the GPU tests included, then the side-by-side benchmark. Usage: ci/gpu-tests.sh rocm|cuda
#
# Tests that need a GPU are #[ignore]d, so that a plain `cargo test` lists them as ignored
# instead of counting them as passed; --include-ignored runs them here, where they fail if
# the GPU cannot be opened. Skipped by name: the anchor benchmark (not a test; minutes) and
# the tuner test's child process (run only by its parent test).
set -euo pipefail
cd "$(dirname "$0")/.."
backend=${1:?usage: ci/gpu-tests.sh rocm|cuda}
cargo run --locked --release --features "$backend" -- info
cargo test --locked --release --features "$backend" -- --include-ignored --skip anchor_benchmark --skip child_slow_tune
cargo run --locked --release --features "$backend" -- bench --backend "$backend"
