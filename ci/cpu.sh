#!/usr/bin/env bash
# CPU job: the crate with no GPU backend (the CPU reference backend only).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --locked
