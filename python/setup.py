"""Builds the native library (crate blockfp8-capi) with cargo and ships it inside the package.

Backend: $BLOCKFP8_BACKEND = cpu | cuda | rocm, else detected: `cuda` where nvcc is found
($BLOCKFP8_NVCC, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin), `rocm` where hipcc or ROCm is
found (PATH, $ROCM_PATH, /opt/rocm), `cpu` otherwise. The choice and its reason are printed.
$BLOCKFP8_CARGO_PROFILE picks the cargo profile (default release; CI uses dev to reuse its
test build). $BLOCKFP8_PREBUILT_LIB=/path/to/libblockfp8_capi.so ships that file instead and
runs no cargo (machines without a Rust toolchain).
"""

import json
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LIB_FILE = {"darwin": "libblockfp8_capi.dylib", "win32": "blockfp8_capi.dll"}.get(sys.platform, "libblockfp8_capi.so")


def log(msg):
    print(f"blockfp8 build: {msg}", file=sys.stderr, flush=True)


def detect_backend():
    forced = os.environ.get("BLOCKFP8_BACKEND", "").strip().lower()
    if forced:
        if forced not in ("cpu", "cuda", "rocm"):
            raise SystemExit(f"BLOCKFP8_BACKEND={forced!r}: expected cpu, cuda or rocm")
        return forced, "BLOCKFP8_BACKEND"
    nvcc = [os.environ.get("BLOCKFP8_NVCC"), shutil.which("nvcc"), os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "nvcc"), "/usr/local/cuda/bin/nvcc"]
    for p in nvcc:
        if p and os.path.exists(p):
            return "cuda", f"nvcc at {p}"
    rocm = [shutil.which("hipcc"), os.path.join(os.environ.get("ROCM_PATH", "/opt/rocm"), "bin", "hipcc"), "/opt/rocm"]
    for p in rocm:
        if p and os.path.exists(p):
            return "rocm", f"ROCm at {p}"
    return "cpu", "no nvcc or ROCm found"


def cargo_build(backend):
    profile = os.environ.get("BLOCKFP8_CARGO_PROFILE", "release")
    cargo = os.environ.get("CARGO") or shutil.which("cargo")
    if not cargo:
        raise SystemExit("blockfp8 build: cargo not found. Install Rust (https://rustup.rs), or set BLOCKFP8_PREBUILT_LIB=/path/to/libblockfp8_capi.so")
    cmd = [cargo, "build", "-p", "blockfp8-capi", "--profile", profile]
    if backend != "cpu":
        cmd += ["--features", backend]
    log(f"{' '.join(cmd)} (in {ROOT})")
    subprocess.check_call(cmd, cwd=ROOT)
    target = os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")
    lib = os.path.join(target, "debug" if profile in ("dev", "test") else profile, LIB_FILE)
    if not os.path.exists(lib):
        raise SystemExit(f"blockfp8 build: cargo succeeded but {lib} is missing")
    return lib, " ".join(cmd[1:])


class BuildNative(build_py):
    def run(self):
        super().run()
        prebuilt = os.environ.get("BLOCKFP8_PREBUILT_LIB")
        if prebuilt and not os.path.isabs(prebuilt) and not os.path.isfile(prebuilt):
            prebuilt = os.path.join(ROOT, prebuilt)  # relative to the repository root
        if prebuilt:
            if not os.path.isfile(prebuilt):
                raise SystemExit(f"BLOCKFP8_PREBUILT_LIB={prebuilt}: no such file")
            lib, info = prebuilt, {"source": "prebuilt", "path": os.path.abspath(prebuilt)}
            log(f"shipping the prebuilt library {prebuilt} (no cargo)")
        else:
            backend, why = detect_backend()
            log(f"backend {backend} ({why}); set BLOCKFP8_BACKEND=cpu|cuda|rocm to choose")
            lib, command = cargo_build(backend)
            info = {"source": "cargo", "backend": backend, "reason": why, "command": command}
        dest = os.path.join(self.build_lib, "blockfp8", "_lib")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(lib, os.path.join(dest, LIB_FILE))
        with open(os.path.join(self.build_lib, "blockfp8", "_build_info.json"), "w") as f:
            json.dump(info, f, indent=1)


class BinaryDistribution(Distribution):
    """The wheel carries a native library: platform-specific."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildNative}, distclass=BinaryDistribution)
