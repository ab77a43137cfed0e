#!/usr/bin/env bash
# nvcc 13.0 from PyPI wheels: compiles sm_90a cubins on a machine with no CUDA install and no
# GPU (the H200 driver runs CUDA 13.0, so the major version matches). Prints the nvcc path.
set -euo pipefail
py=${PYTHON:-python3}
"$py" -m pip install -q --disable-pip-version-check \
    nvidia-cuda-nvcc==13.0.88 nvidia-cuda-runtime==13.0.96 "nvidia-cuda-crt==13.0.*" \
    "nvidia-nvvm==13.0.*" nvidia-cuda-cccl >&2
root=$("$py" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')
echo "$root/bin/nvcc"
