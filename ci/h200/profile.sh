#!/usr/bin/env bash
# On the H200 ($OUT set): `ncu --set full` on one GEMM kernel launch of `blockfp8 bench`, then
# its per-SASS-instruction source page (warp-stall samples per instruction) as CSV and the
# details page. Build with BLOCKFP8_NVCC_FLAGS=-lineinfo to map instructions to source lines.
# Usage: [CLI=blockfp8-variant] bash .device-bin/profile.sh M,N,K KERNEL_REGEX TAG [extra bench args]
# e.g.   bash .device-bin/profile.sh 4096,4096,7168 sm90_gemm_block_fp8_m128n256 large_m
set -u
: "${OUT:?set OUT to the results folder}"; mkdir -p "$OUT"  # (a folder the caller named but did not make)
B=.device-bin
mnk=${1:?M,N,K}; kern=${2:?kernel name regex}; tag=${3:?tag}; shift 3
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu on this machine" >&2; exit 1; }
timeout 200 "$NCU" --set full --clock-control none --import-source no --kernel-name "regex:$kern" --launch-count 1 -o "$OUT/rep_$tag" \
  "$B/${CLI:-blockfp8}" bench --backend cuda --mnk "$mnk" --no-check --warmup 1 --repeats 1 --rounds 1 --no-progress "$@" > "$OUT/ncu_$tag.log" 2>&1
echo "ncu rc=$?" >> "$OUT/ncu_$tag.log"
"$NCU" -i "$OUT/rep_$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_$tag.csv" 2>&1 || true
"$NCU" -i "$OUT/rep_$tag.ncu-rep" --page details > "$OUT/details_$tag.txt" 2>&1 || true
rm -f "$OUT/rep_$tag.ncu-rep"
wc -c "$OUT/sass_$tag.csv" "$OUT/details_$tag.txt"
