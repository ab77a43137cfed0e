#!/usr/bin/env bash
# Session 22, call 1 (H200): where our one-consumer tiles lose to DeepGEMM at N = 4096.
# The shipped tiles (64x32 s12 at M = 64, 64x64 s8 at M = 128) forced through a config folder
# at K = 1792-7168 and N = 2048 / 4096, beside DeepGEMM on the same shapes (its heuristic
# picks the same tiles; DG_PRINT_CONFIGS shows it): a fit of time against K blocks separates
# the fixed cost (launch, first loads, epilogue) from the per-block cost of the ring.
# Row-major and column-major activation scales; GROUP_SIZE_M 1 at M = 128.
set -u
B=.device-bin
here=$B
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv > "$OUT/gpu.txt"
shapes=""
for m in 64 128; do for k in 1792 3584 5376 7168; do shapes="$shapes $m,4096,$k"; done; shapes="$shapes $m,2048,7168"; done
args=(); for s in $shapes; do args+=(--mnk "$s"); done
( bash .peers/build_deepgemm.sh > "$OUT/deepgemm_build.log" 2>&1 \
  && export PYTHONPATH=/tmp/dgb/dg:${PYTHONPATH:-} \
  && { for s in $shapes; do python3 "$here/deepgemm_time.py" --warm "$s" & done; wait; } > "$OUT/deepgemm_warm.log" 2>&1 ) &
dg=$!
for lay in row-major column-major; do
  timeout 200 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --scale-layout $lay --config-dir $B/cfg_kslope "${args[@]}" > "$OUT/crate_$lay.json" 2> "$OUT/crate_$lay.err"
  echo "bench $lay rc=$?"
done
timeout 120 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope_g1 --mnk 128,4096,7168 --mnk 128,2048,7168 > "$OUT/crate_g1.json" 2> "$OUT/crate_g1.err"
wait $dg
PYTHONPATH=/tmp/dgb/dg DG_PRINT_CONFIGS=1 timeout 200 python3 "$here/deepgemm_time.py" --json "$OUT/deepgemm.json" "${args[@]}" > "$OUT/deepgemm.log" 2>&1
echo "deepgemm rc=$?"
# Second pass of ours, to see the spread between calls of one kind.
timeout 200 $B/blockfp8 bench --backend cuda --no-progress --no-check --json --config-dir $B/cfg_kslope "${args[@]}" > "$OUT/crate_row2.json" 2> "$OUT/crate_row2.err"
cd "$OUT" && tar czf r.tgz *.json *.log *.err gpu.txt && ls
