#!/usr/bin/env bash
# HIP device compiler and HIP runtime library for building `--features rocm` on a machine
# without ROCm: Debian's clang-22/lld-22 compile gfx942 and gfx950 code objects,
# llvm-22 gives llvm-objdump/llvm-readelf for the disassembly tests, and libamdhip64-dev
# gives the HIP headers and libamdhip64.so that hip-runtime-sys links (HIP_PATH=/usr).
# On a ROCm machine none of this is needed: hipcc and /opt/rocm are found instead.
set -euo pipefail
need=()
for p in clang-22 lld-22 llvm-22 libamdhip64-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
clang-22 --version | head -1
