#!/usr/bin/env bash
# The Python package laid out by hand for PYTHONPATH (as its wheel would, without pip): python/
# blockfp8's modules and LIB as its native library, in DIR (emptied first) or a new temporary
# folder. Prints the folder. Run from the repository root.
# Usage: site=$(bash ci/h200/package_site.sh LIB [DIR])
set -eu
lib=${1:?the C ABI library (libblockfp8_capi.so)}
[ -f "$lib" ] || { echo "no library at $lib" >&2; exit 2; }
if [ -n "${2:-}" ]; then dir=$2; rm -rf "$dir"; else dir=$(mktemp -d); fi
mkdir -p "$dir/blockfp8/_lib"
cp python/blockfp8/*.py "$dir/blockfp8/"
cp "$lib" "$dir/blockfp8/_lib/libblockfp8_capi.so"
echo "{\"source\": \"prebuilt $lib (laid out by package_site.sh)\"}" > "$dir/blockfp8/_build_info.json"
echo "$dir"
