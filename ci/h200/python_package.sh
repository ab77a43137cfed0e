#!/usr/bin/env bash
# The Python package on the H200 machine (torch installed; no Rust toolchain; no network):
# installs it from a prebuilt native library, runs its pytest suite (GPU tests included), and
# races its GEMM inside PyTorch against vLLM's Triton kernel, DeepGEMM and torch's cuBLASLt
# block-scaled scaled_mm on the 16 anchor shapes (ci/h200/python_race.py). Results in $OUT.
#
# Staged beforehand on the CPU machine, from the repository root (git-ignored folders):
#   bash ci/h200/stage.sh python    # .device-bin/: libblockfp8_capi.so (cargo build --release -p
#                                   # blockfp8-capi --features cuda), blockfp8 (the CLI), wheels/ (pytest)
#   cp -r <the peers folder> .peers # vLLM's kernel + launcher, DeepGEMM's source (never committed)
# and carried: .device-bin, .peers. Run it from the repository root (the device call's folder).
#
# Inputs (environment):
#   OUT                     results folder (required)
#   BLOCKFP8_PREBUILT_LIB   the library to install (default .device-bin/libblockfp8_capi.so)
#   BLOCKFP8_CLI            the crate's CLI, for the bit-for-bit tests and its bench (default .device-bin/blockfp8)
#   PEERS                   the peers folder (default .peers)
#   STEPS                   any of "install test race" (default all three; the machine keeps the
#                           install between calls, so a 10-minute call can run one step each)
#   PYTEST_ARGS             extra pytest arguments (e.g. -k "not anchor")
set -uo pipefail
# From the repository root, whether run as ci/h200/python_package.sh or as a staged copy.
[ -f python/setup.py ] || cd "$(dirname "$0")/../.." || exit 2
[ -f python/setup.py ] || { echo "run from the repository root"; exit 2; }
: "${OUT:?set OUT to the results folder}"
mkdir -p "$OUT"
py=${PYTHON:-python3}
lib=${BLOCKFP8_PREBUILT_LIB:-.device-bin/libblockfp8_capi.so}
export BLOCKFP8_CLI=${BLOCKFP8_CLI:-$PWD/.device-bin/blockfp8}
peers=${PEERS:-.peers}
steps=${STEPS:-install test race}
status=0

has_step() { [[ " $steps " == *" $1 "* ]]; }

{ date -u; nvidia-smi || true; "$py" -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0))"; } > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

if has_step install; then
    [ -f "$lib" ] || { echo "no prebuilt library at $lib (see the staging steps at the top of $0)"; exit 2; }
    lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")  # setup.py runs in python/
    echo "== pip install of the package with the prebuilt library $lib"
    if ! BLOCKFP8_PREBUILT_LIB="$lib" "$py" -m pip install --no-build-isolation --no-deps --no-index --force-reinstall ./python > "$OUT/pip_install.log" 2>&1; then
        # An image without setuptools/pip: lay the package out by hand, as the wheel would.
        echo "pip install failed (see pip_install.log); installing by copy into /tmp/blockfp8_site"
        bash ci/h200/package_site.sh "$lib" /tmp/blockfp8_site > /dev/null
    fi
fi
[ -d /tmp/blockfp8_site ] && export PYTHONPATH=/tmp/blockfp8_site${PYTHONPATH:+:$PYTHONPATH}
# Run from the repository root: `blockfp8` must come from the installed package, not python/.
"$py" -c "import blockfp8, torch; print('blockfp8', blockfp8.native_version(), blockfp8.build_info()); print(blockfp8.device_info('cuda' if torch.cuda.is_available() else 'cpu'))" > "$OUT/import.txt" 2>&1 || { cat "$OUT/import.txt"; echo "import failed"; exit 3; }
cat "$OUT/import.txt"

if has_step test; then
    if ! "$py" -c "import pytest" 2>/dev/null; then
        "$py" -m pip install --no-index --find-links .device-bin/wheels pytest > "$OUT/pytest_install.log" 2>&1 || echo "pytest not installable (stage .device-bin/wheels)"
    fi
    echo "== pytest python/tests"
    # shellcheck disable=SC2086
    "$py" -m pytest python/tests -v -rs -p no:cacheprovider --junitxml="$OUT/pytest.xml" ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest.log" | tail -40
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

if has_step race; then
    if [ -f "$peers/build_deepgemm.sh" ]; then
        echo "== DeepGEMM build and JIT warm-up (one nvcc compile per shape, in parallel)"
        if bash "$peers/build_deepgemm.sh" > "$OUT/deepgemm_build.log" 2>&1; then
            export PYTHONPATH=/tmp/dgb/dg${PYTHONPATH:+:$PYTHONPATH}
            for i in $(seq 0 15); do PYTHONPATH=$PYTHONPATH "$py" "$peers/deepgemm_bench.py" --warm "$i" > "$OUT/deepgemm_warm_$i.log" 2>&1 & done
            wait
        else
            echo "DeepGEMM build failed (deepgemm_build.log): racing without it"
        fi
    else
        echo "no peers folder at $peers: racing without vLLM's kernel and DeepGEMM"
    fi
    echo "== race"
    "$py" ci/h200/python_race.py --out "$OUT" --peers "$peers" --cli "$BLOCKFP8_CLI" 2> "$OUT/race.log" || { status=1; tail -20 "$OUT/race.log"; }
fi
exit $status
