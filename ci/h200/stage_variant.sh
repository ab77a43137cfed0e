#!/usr/bin/env bash
# Run on the CPU machine: builds the crate at a commit, with a patch applied or none, in a
# temporary git worktree (the checkout is left as it is), and stages what an A/B device call
# carries in .devx/NAME (git-ignored), each file stripped and xz-compressed to fit a carry:
#   blockfp8.xz              the CLI (default build, `--features cuda`)
#   libblockfp8_capi.so.xz   the C ABI library (`race.sh` and `paired_ab.sh` read it)
#   cuda.xz, device_api.xz   the cuda and device_api test binaries (`tests.sh` runs them)
# A device script unpacks what it needs (`xz -dkf .devx/NAME/blockfp8.xz`).
# Several variants share one build folder (target/variant unless CARGO_TARGET_DIR is set), so
# only the first builds the dependencies: on the 2-core CPU machine the first takes about 6.5
# minutes, each one after it 3-4.5 (its kernels and the crate).
# Usage: [REV=HEAD] bash ci/h200/stage_variant.sh NAME [PATCH]
#   bash ci/h200/stage_variant.sh base
#   git show 70640cf:ci/h200/runs/s44_l20_nextitem.patch > /tmp/l20.patch
#   bash ci/h200/stage_variant.sh l20 /tmp/l20.patch
set -euo pipefail
name=${1:?usage: [REV=HEAD] bash ci/h200/stage_variant.sh NAME [PATCH]}
patch=${2:-}
rev=${REV:-HEAD}
case $name in */* | .* | "") echo "stage_variant: NAME must be a plain folder name, not '$name'" >&2; exit 2 ;; esac
[ -z "$patch" ] || [ -f "$patch" ] || { echo "stage_variant: no patch file '$patch'" >&2; exit 2; }
[ -z "$patch" ] || patch=$(realpath "$patch")
cd "$(dirname "$0")/../.."
root=$(pwd)
git rev-parse --verify -q "$rev^{commit}" > /dev/null || { echo "stage_variant: '$rev' names no commit" >&2; exit 2; }
export BLOCKFP8_NVCC=${BLOCKFP8_NVCC:-$(bash ci/install-nvcc.sh)}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$root/target/variant}

tree=$(mktemp -d "${TMPDIR:-/tmp}/blockfp8-variant.XXXXXX")
trap 'git -C "$root" worktree remove --force "$tree" 2> /dev/null || rm -rf "$tree"' EXIT
git worktree add -q --detach "$tree" "$rev"
if [ -n "$patch" ]; then
    # Checked first, so that a patch that does not apply stops here and stages nothing.
    git -C "$tree" apply --check "$patch"
    git -C "$tree" apply "$patch"
fi

cd "$tree"
echo "stage_variant: $name = $(git rev-parse --short HEAD)${patch:+ + $patch}, building in $CARGO_TARGET_DIR" >&2
test_binary() { bash "$root/ci/h200/test_binary.sh" cuda "$1"; }
cuda_tests=$(test_binary cuda)
device_api_tests=$(test_binary device_api)
cargo build --release --features cuda --bin blockfp8
cargo build --release -p blockfp8-capi --features cuda

out=$root/.devx/$name
rm -rf "$out" && mkdir -p "$out"
strip -o "$out/blockfp8" "$CARGO_TARGET_DIR/release/blockfp8"
strip -o "$out/libblockfp8_capi.so" "$CARGO_TARGET_DIR/release/libblockfp8_capi.so"
strip -o "$out/cuda" "$cuda_tests"
strip -o "$out/device_api" "$device_api_tests"
xz -T2 -6 "$out"/*
printf "%s%s\n" "$(git rev-parse HEAD)" "${patch:+ + $(basename "$patch")}" > "$out/SOURCE"
ls -l "$out"
