#!/usr/bin/env bash
# Builds one test binary of the crate in the current folder without running it, and prints its
# path, which cargo names on stderr ("Executable tests/<test>.rs (<path>)"). Cargo's output still
# goes to stderr, through a file of its own: `tee /dev/stderr` reopens, and truncates, a log
# that stderr is redirected to.
# Usage: bash ci/h200/test_binary.sh FEATURES TEST   (stage.sh, stage_variant.sh)
set -euo pipefail
features=${1:?usage: test_binary.sh FEATURES TEST}
test=${2:?usage: test_binary.sh FEATURES TEST}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --release --features "$features" --test "$test" --no-run 2>&1 | tee "$log" >&2
path=$(sed -n "s|.*Executable tests/$test.rs (\\(.*\\))|\\1|p" "$log" | tail -1)
[ -n "$path" ] || { echo "test_binary: cargo named no binary for tests/$test.rs" >&2; exit 1; }
echo "$path"
